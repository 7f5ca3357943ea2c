// events.k8s.io/v1 Event validation as upstream's ValidateEventCreate/ValidateEventUpdate: the
// internal (core) Event is checked, so errors name core's fields (involvedObject, message, count...).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { eventsResource } from '../../core/events/index.js';
import { eventsV1EventsResource } from './index.js';
import { StatusError } from '../../../apimachinery/errors.js';
import type { KubeObject } from '../../../apimachinery/types.js';
import { MemoryStorage } from '../../../storage/memory/memory-storage.js';
import { coreEventStrategy } from '../../core/events/strategy.js';
import { GenericStore } from '../../store.js';
import { eventsV1Converter, eventsV1Strategy } from './strategy.js';

function stores(garbageCollection = false): { v1: GenericStore; core: GenericStore } {
  const storage = new MemoryStorage();
  const keyPrefix = '/registry/events/';
  return {
    v1: new GenericStore({
      descriptor: eventsV1EventsResource,
      strategy: eventsV1Strategy,
      storage,
      keyPrefix,
      converter: eventsV1Converter,
      garbageCollection,
    }),
    core: new GenericStore({ descriptor: eventsResource, strategy: coreEventStrategy, storage, keyPrefix, garbageCollection }),
  };
}

/** A valid events.k8s.io/v1 event in `ns`, with `extra` merged in. */
const event = (name: string, ns: string, extra: Record<string, unknown> = {}): KubeObject => ({
  apiVersion: 'events.k8s.io/v1',
  kind: 'Event',
  metadata: { name },
  eventTime: '2025-03-04T05:06:07.123456Z',
  reportingController: 'example.com/ctl',
  reportingInstance: 'ctl-1',
  action: 'Sync',
  reason: 'Synced',
  regarding: { kind: 'ConfigMap', namespace: ns, name: 'cm', apiVersion: 'v1' },
  note: 'synced',
  type: 'Normal',
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

const list = (name: string, msgs: string[]): string => `Event.events.k8s.io "${name}" is invalid: ${msgs.length === 1 ? msgs[0] : `[${msgs.join(', ')}]`}`;

describe('events.k8s.io/v1 Event create', () => {
  it('requires eventTime and a Normal/Warning type, with upstream messages', async () => {
    const { v1 } = stores();
    assert.equal(await invalidMessage(v1.create('ns', event('a', 'ns', { eventTime: undefined }))), list('a', ['eventTime: Required value']));
    assert.equal(await invalidMessage(v1.create('ns', event('b', 'ns', { type: 'Bogus' }))), list('b', ['type: Invalid value: "": has invalid value: Bogus']));
    assert.equal(await invalidMessage(v1.create('ns', event('c', 'ns', { type: undefined }))), list('c', ['type: Invalid value: "": has invalid value: ']));
    await v1.create('ns', event('ok', 'ns', { type: 'Warning' }));
  });

  it('without eventTime the legacy rules apply too, under core field names', async () => {
    const { v1 } = stores();
    assert.equal(
      await invalidMessage(v1.create('foo', event('e', '', { eventTime: null }))),
      list('e', ['involvedObject.namespace: Invalid value: "": does not match event.namespace', 'eventTime: Required value']),
    );
  });

  it('deprecated fields must be unset (named as core names them)', async () => {
    const { v1 } = stores();
    const msg = await invalidMessage(
      v1.create(
        'ns',
        event('e', 'ns', {
          deprecatedSource: { host: 'h' },
          deprecatedFirstTimestamp: '2025-03-04T05:06:07Z',
          deprecatedLastTimestamp: '2025-03-04T05:06:08Z',
          deprecatedCount: 3,
        }),
      ),
    );
    assert.equal(
      msg,
      list('e', [
        'firstTimestamp: Invalid value: "": needs to be unset',
        'lastTimestamp: Invalid value: "": needs to be unset',
        'count: Invalid value: "": needs to be unset',
        'source: Invalid value: "": needs to be unset',
      ]),
    );
    // Zero values (what client-go sends for unset deprecated fields) are fine.
    await v1.create('ns', event('zero', 'ns', { deprecatedSource: {}, deprecatedFirstTimestamp: null, deprecatedLastTimestamp: null, deprecatedCount: 0 }));
  });

  it('a series needs count >= 2 and lastObservedTime', async () => {
    const { v1 } = stores();
    assert.equal(
      await invalidMessage(v1.create('ns', event('e', 'ns', { series: { count: 1 } }))),
      list('e', ['series.count: Invalid value: "": should be at least 2', 'series.lastObservedTime: Required value']),
    );
    await v1.create('ns', event('ok', 'ns', { series: { count: 2, lastObservedTime: '2025-03-04T05:06:09.000001Z' } }));
  });

  it('action, reason, reportingInstance required and limited; note at most 1024 bytes; reportingController a qualified name', async () => {
    const { v1 } = stores();
    assert.equal(
      await invalidMessage(v1.create('ns', event('e', 'ns', { action: '', reason: '', reportingInstance: '', reportingController: 'a/b/c' }))),
      list('e', [
        `reportingController: Invalid value: "a/b/c": a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`,
        'reportingInstance: Required value',
        'action: Required value',
        'reason: Required value',
      ]),
    );
    assert.equal(
      await invalidMessage(
        v1.create('ns', event('f', 'ns', { action: 'a'.repeat(129), reason: 'r'.repeat(129), reportingInstance: 'i'.repeat(129), note: 'n'.repeat(1025) })),
      ),
      list('f', [
        'reportingInstance: Invalid value: "": can have at most 128 characters',
        'action: Invalid value: "": can have at most 128 characters',
        'reason: Invalid value: "": can have at most 128 characters',
        'message: Invalid value: "": can have at most 1024 characters',
      ]),
    );
  });

  it('a regarding namespace that differs is reported as involvedObject.namespace', async () => {
    const { v1 } = stores();
    assert.equal(
      await invalidMessage(v1.create('ns', event('e', 'other', { eventTime: null, type: 'Normal' }))),
      list('e', ['involvedObject.namespace: Invalid value: "other": does not match event.namespace', 'eventTime: Required value']),
    );
  });

  it('names are DNS subdomains here, path segments through core/v1', async () => {
    const { v1, core } = stores();
    assert.match(
      await invalidMessage(v1.create('ns', event('Bad_Name', 'ns'))),
      /^Event\.events\.k8s\.io "Bad_Name" is invalid: metadata\.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain/,
    );
    const coreEvent = { apiVersion: 'v1', kind: 'Event', metadata: { name: 'Bad_Name' }, involvedObject: { namespace: 'ns' }, reason: 'R' };
    await core.create('ns', coreEvent);
  });

  it('DELETE adds no garbage-collector finalizers', async () => {
    const { v1 } = stores(true);
    await v1.create('ns', event('e', 'ns'));
    assert.equal((await v1.delete('ns', 'e', { propagationPolicy: 'Foreground' })).deleted, true);
  });
});

describe('events.k8s.io/v1 Event update', () => {
  it('nearly every field is immutable, with upstream values and core field names', async () => {
    const { v1 } = stores();
    await v1.create('ns', event('e', 'ns', { related: { kind: 'Pod', name: 'p' } }));
    const msg = await invalidMessage(
      v1.update('ns', 'e', (cur) => ({
        ...cur!,
        regarding: { kind: 'ConfigMap', namespace: 'ns', name: 'other', apiVersion: 'v1' },
        reason: 'Changed',
        note: 'changed',
        type: 'Warning',
        eventTime: '2025-03-04T05:06:08Z',
        action: 'Other',
        related: undefined,
        reportingController: 'example.com/other',
        reportingInstance: 'ctl-2',
      })),
    );
    assert.equal(
      msg,
      list('e', [
        'involvedObject: Invalid value: core.ObjectReference{Kind:"ConfigMap", Namespace:"ns", Name:"other", UID:"", APIVersion:"v1", ResourceVersion:"", FieldPath:""}: field is immutable',
        'reason: Invalid value: "Changed": field is immutable',
        'message: Invalid value: "changed": field is immutable',
        // Upstream checks reason twice.
        'reason: Invalid value: "Changed": field is immutable',
        'type: Invalid value: "Warning": field is immutable',
        'eventTime: Invalid value: 2025-03-04 05:06:08 +0000 UTC: field is immutable',
        'action: Invalid value: "Other": field is immutable',
        'related: Invalid value: "null": field is immutable',
        'reportingController: Invalid value: "example.com/other": field is immutable',
        'reportingInstance: Invalid value: "ctl-2": field is immutable',
      ]),
    );
  });

  it('an event written through core/v1 cannot have its note, count, source or timestamps changed here', async () => {
    const { v1, core } = stores();
    await core.create('ns', {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: 'old' },
      involvedObject: { kind: 'Pod', namespace: 'ns', name: 'p' },
      reason: 'Started',
      message: 'started',
      source: { component: 'kubelet' },
      count: 1,
      firstTimestamp: '2025-03-04T05:06:07Z',
    });
    const msg = await invalidMessage(
      v1.update('ns', 'old', (cur) => ({
        ...cur!,
        note: 'changed',
        deprecatedCount: 2,
        deprecatedSource: { component: 'kubelet', host: 'node-1' },
        deprecatedFirstTimestamp: '2025-03-04T05:06:07.5Z',
        deprecatedLastTimestamp: '2025-03-04T05:06:09Z',
      })),
    );
    assert.equal(
      msg,
      list('old', [
        'message: Invalid value: "changed": field is immutable',
        'source: Invalid value: core.EventSource{Component:"kubelet", Host:"node-1"}: field is immutable',
        'firstTimestamp: Invalid value: 2025-03-04 05:06:07.5 +0000 UTC: field is immutable',
        'lastTimestamp: Invalid value: 2025-03-04 05:06:09 +0000 UTC: field is immutable',
        'count: Invalid value: 2: field is immutable',
      ]),
    );
    // Metadata may still change, and the same instant written another way is no change.
    const { object } = await v1.update('ns', 'old', (cur) => ({
      ...cur!,
      metadata: { ...cur!.metadata, labels: { a: 'b' } },
      deprecatedFirstTimestamp: '2025-03-04T06:06:07+01:00',
    }));
    assert.deepEqual(object.metadata?.labels, { a: 'b' });
  });

  it('eventTime tolerates sub-microsecond changes; a changed series is validated', async () => {
    const { v1 } = stores();
    await v1.create('ns', event('e', 'ns', { eventTime: '2025-03-04T05:06:07.123456Z' }));
    await v1.update('ns', 'e', (cur) => ({ ...cur!, eventTime: '2025-03-04T05:06:07.123456789Z' }));
    assert.equal(
      await invalidMessage(v1.update('ns', 'e', (cur) => ({ ...cur!, eventTime: '2025-03-04T05:06:07.123457Z' }))),
      list('e', ['eventTime: Invalid value: 2025-03-04 05:06:07.123457 +0000 UTC: field is immutable']),
    );
    assert.equal(
      await invalidMessage(v1.update('ns', 'e', (cur) => ({ ...cur!, series: { count: 1, lastObservedTime: '2025-03-04T05:06:09Z' } }))),
      list('e', ['series.count: Invalid value: "": should be at least 2']),
    );
    await v1.update('ns', 'e', (cur) => ({ ...cur!, series: { count: 2, lastObservedTime: '2025-03-04T05:06:09Z' } }));
  });
});
