import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { AuditMetrics, createLogBackend } from './backend.js';
import type { AuditEvent } from './event.js';

const event = (auditID: string, stage: AuditEvent['stage']): AuditEvent => ({
  level: 'Metadata',
  auditID,
  stage,
  requestURI: '/api/v1/namespaces/default/configmaps',
  verb: 'create',
  user: { name: 'alice', groups: [] },
  impersonatedUser: undefined,
  sourceIPs: ['127.0.0.1'],
  userAgent: 'test',
  objectRef: undefined,
  responseStatus: stage === 'ResponseComplete' ? { code: 201 } : undefined,
  requestObject: undefined,
  responseObject: undefined,
  requestReceivedTimestamp: 1_700_000_000_000_000,
  stageTimestamp: 1_700_000_000_000_000,
  annotations: undefined,
});

describe('the blocking log backend', () => {
  let dir = '';
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kplane-audit-backend-'));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  // Read synchronously: an await would let the end of the event loop's turn come first.
  const lines = (path: string): string[] =>
    readFileSync(path, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => {
        const e = JSON.parse(l) as { auditID: string; stage: string };
        return `${e.auditID} ${e.stage}`;
      });

  it('writes RequestReceived before returning; ResponseComplete with the next write, in order; all at shutdown', async () => {
    const path = join(dir, 'audit.log');
    const b = createLogBackend({ path, mode: 'blocking' }, new AuditMetrics(undefined), () => {});
    assert.equal(b.processEvent(event('a', 'RequestReceived')), true);
    assert.deepEqual(lines(path), ['a RequestReceived']);
    assert.equal(b.processEvent(event('a', 'ResponseComplete')), true);
    // The answer has gone out already: its line waits for the next write.
    assert.deepEqual(lines(path), ['a RequestReceived']);
    b.processEvent(event('b', 'RequestReceived'));
    assert.deepEqual(lines(path), ['a RequestReceived', 'a ResponseComplete', 'b RequestReceived']);
    b.processEvent(event('b', 'ResponseComplete'));
    await b.shutdown();
    assert.deepEqual(lines(path), ['a RequestReceived', 'a ResponseComplete', 'b RequestReceived', 'b ResponseComplete']);
  });

  it('writes a waiting ResponseComplete at the end of the event loop turn', async () => {
    const path = join(dir, 'turn.log');
    const b = createLogBackend({ path, mode: 'blocking' }, new AuditMetrics(undefined), () => {});
    b.processEvent(event('c', 'RequestReceived'));
    b.processEvent(event('c', 'ResponseComplete'));
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(lines(path), ['c RequestReceived', 'c ResponseComplete']);
    await b.shutdown();
  });
});
