// core/v1 Event validation as upstream's legacyValidateEvent (the only rules core/v1 writes get),
// its name rule and its garbage-collection policy, driven through a store.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { eventsResource } from './index.js';
import { StatusError } from '../../../apimachinery/errors.js';
import type { KubeObject } from '../../../apimachinery/types.js';
import { MemoryStorage } from '../../../storage/memory/memory-storage.js';
import { GenericStore } from '../../store.js';
import { coreEventStrategy } from './strategy.js';

function store(garbageCollection = false): GenericStore {
  return new GenericStore({
    descriptor: eventsResource,
    strategy: coreEventStrategy,
    storage: new MemoryStorage(),
    keyPrefix: '/registry/events/',
    garbageCollection,
  });
}

/** An old-style (no eventTime) event about a pod in `ns`, with `extra` merged in. */
const event = (name: string, ns: string, extra: Record<string, unknown> = {}): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Event',
  metadata: { name },
  involvedObject: { kind: 'Pod', namespace: ns, name: 'p', apiVersion: 'v1' },
  reason: 'Started',
  message: 'started',
  type: 'Normal',
  source: { component: 'kubelet' },
  count: 1,
  ...extra,
});

async function invalidMessage(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (e) {
    assert.ok(e instanceof StatusError, `expected StatusError, got ${String(e)}`);
    assert.equal(e.code, 422, e.message);
    return e.message;
  }
  assert.fail('expected a 422');
}

describe('core/v1 Event validation', () => {
  it('accepts any type: upstream has no type check for core/v1, on create or update', async () => {
    const s = store();
    await s.create('ns', event('e', 'ns', { type: 'Bogus' }));
    const { object } = await s.update('ns', 'e', (cur) => ({ ...cur!, type: 'Other' }));
    assert.equal((object as { type?: string }).type, 'Other');
  });

  it('names need only be path segments, not DNS subdomains', async () => {
    const s = store();
    const { object } = await s.create('ns', event('Pod_X.1A2B', 'ns'));
    assert.equal(object.metadata?.name, 'Pod_X.1A2B');
    assert.equal(await invalidMessage(s.create('ns', event('..', 'ns'))), `Event ".." is invalid: metadata.name: Invalid value: "..": may not be '..'`);
  });

  it('without eventTime an empty involvedObject.namespace is allowed only in "default"', async () => {
    const s = store();
    await s.create('default', event('ok', ''));
    assert.equal(
      await invalidMessage(s.create('foo', event('e', ''))),
      'Event "e" is invalid: involvedObject.namespace: Invalid value: "": does not match event.namespace',
    );
    assert.equal(
      await invalidMessage(s.create('foo', event('e', 'bar'))),
      'Event "e" is invalid: involvedObject.namespace: Invalid value: "bar": does not match event.namespace',
    );
    // The same rule on update.
    await s.create('foo', event('u', 'foo'));
    assert.equal(
      await invalidMessage(s.update('foo', 'u', (cur) => ({ ...cur!, involvedObject: { kind: 'Pod', name: 'p' } }))),
      'Event "u" is invalid: involvedObject.namespace: Invalid value: "": does not match event.namespace',
    );
  });

  it('with eventTime: reportingComponent, reportingInstance, action and reason required, core/v1 field names', async () => {
    const s = store();
    const msg = await invalidMessage(s.create('foo', event('e', '', { eventTime: '2025-01-02T03:04:05.000001Z', reason: '' })));
    assert.equal(
      msg,
      'Event "e" is invalid: [' +
        [
          'involvedObject.namespace: Invalid value: "": does not match event.namespace',
          'reportingComponent: Required value',
          'reportingComponent: Invalid value: "": name part must be non-empty',
          `reportingComponent: Invalid value: "": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`,
          'reportingInstance: Required value',
          'action: Required value',
          'reason: Required value',
        ].join(', ') +
        ']',
    );
    // kube-system (and default) may leave involvedObject.namespace empty when eventTime is set.
    const full = { eventTime: '2025-01-02T03:04:05.000001Z', reportingComponent: 'kubelet', reportingInstance: 'node-1', action: 'Start' };
    await s.create('kube-system', event('sys', '', full));
  });

  it('with eventTime: 128-byte limits and a 1024-byte message, as upstream words them', async () => {
    const s = store();
    const full = { eventTime: '2025-01-02T03:04:05Z', reportingComponent: 'kubelet', reportingInstance: 'node-1', action: 'Start' };
    await s.create(
      'ns',
      event('at-limit', 'ns', { ...full, action: 'a'.repeat(128), reason: 'r'.repeat(128), reportingInstance: 'i'.repeat(128), message: 'm'.repeat(1024) }),
    );
    const msg = await invalidMessage(
      s.create(
        'ns',
        event('e', 'ns', { ...full, action: 'a'.repeat(129), reason: 'r'.repeat(129), reportingInstance: 'i'.repeat(129), message: 'é'.repeat(513) }),
      ),
    );
    assert.equal(
      msg,
      'Event "e" is invalid: [' +
        [
          'reportingInstance: Invalid value: "": can have at most 128 characters',
          'action: Invalid value: "": can have at most 128 characters',
          'reason: Invalid value: "": can have at most 128 characters',
          'message: Invalid value: "": can have at most 1024 characters',
        ].join(', ') +
        ']',
    );
  });

  it('DELETE adds no garbage-collector finalizers, whatever the propagationPolicy', async () => {
    for (const opts of [{ propagationPolicy: 'Foreground' as const }, { propagationPolicy: 'Orphan' as const }, { orphanDependents: true }]) {
      const s = store(true);
      await s.create('ns', event('e', 'ns'));
      const r = await s.delete('ns', 'e', opts);
      assert.equal(r.deleted, true, JSON.stringify(opts));
      await assert.rejects(s.get('ns', 'e'), { code: 404 });
    }
  });
});
