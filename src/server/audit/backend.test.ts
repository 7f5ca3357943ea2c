import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
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
    (existsSync(path) ? readFileSync(path, 'utf8') : '')
      .split('\n')
      .filter(Boolean)
      .map((l) => {
        const e = JSON.parse(l) as { auditID: string; stage: string };
        return `${e.auditID} ${e.stage}`;
      });

  it('groups the events of one event-loop turn in one write, in order; RequestReceived waits for it', async () => {
    const path = join(dir, 'audit.log');
    const b = createLogBackend({ path, mode: 'blocking' }, new AuditMetrics(undefined), () => {});
    const a = b.processEvent(event('a', 'RequestReceived'));
    const c = b.processEvent(event('c', 'RequestReceived'));
    // Nothing is written before the end of the turn, and the requests wait for that write.
    assert.ok(a instanceof Promise && c instanceof Promise);
    let settled = false;
    void a.then(() => (settled = true));
    await Promise.resolve();
    assert.equal(settled, false);
    assert.deepEqual(lines(path), []);
    assert.equal(await a, true);
    assert.equal(await c, true);
    assert.deepEqual(lines(path), ['a RequestReceived', 'c RequestReceived']);
    // The answer has gone out already: nothing waits for ResponseComplete.
    assert.equal(b.processEvent(event('a', 'ResponseComplete')), true);
    const d = b.processEvent(event('d', 'RequestReceived'));
    assert.equal(b.processEvent(event('c', 'ResponseComplete')), true);
    assert.equal(await d, true);
    assert.deepEqual(lines(path), ['a RequestReceived', 'c RequestReceived', 'a ResponseComplete', 'd RequestReceived', 'c ResponseComplete']);
    void b.processEvent(event('d', 'ResponseComplete'));
    await b.shutdown();
    assert.equal(lines(path).at(-1), 'd ResponseComplete');
  });

  it('writes a waiting ResponseComplete at the end of the event loop turn', async () => {
    const path = join(dir, 'turn.log');
    const b = createLogBackend({ path, mode: 'blocking' }, new AuditMetrics(undefined), () => {});
    await b.processEvent(event('c', 'RequestReceived'));
    void b.processEvent(event('c', 'ResponseComplete'));
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(lines(path), ['c RequestReceived', 'c ResponseComplete']);
    await b.shutdown();
  });

  it('a failed write lets the requests go on in blocking mode and fails them in blocking-strict', async () => {
    // A plain file where the log's directory should be: every write fails (ENOTDIR).
    const plain = join(dir, 'plain');
    writeFileSync(plain, '');
    for (const [mode, want] of [
      ['blocking', true],
      ['blocking-strict', false],
    ] as const) {
      const errors: string[] = [];
      const b = createLogBackend({ path: join(plain, 'audit.log'), mode }, new AuditMetrics(undefined), (m) => errors.push(m));
      const answers = await Promise.all([b.processEvent(event('e', 'RequestReceived')), b.processEvent(event('f', 'RequestReceived'))]);
      assert.deepEqual(answers, [want, want], mode);
      assert.match(errors[0] ?? '', /Error in audit plugin 'log' affecting 2 audit events/);
      await b.shutdown().catch(() => undefined);
    }
  });
});
