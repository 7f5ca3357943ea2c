// Event updates through @kubernetes/client-node, as upstream's ValidateEventUpdate
// (pkg/apis/core/validation/events.go) and its conformance tests have them:
// - events.k8s.io/v1: everything but the series and metadata is immutable (involvedObject, reason,
//   message, source, firstTimestamp, lastTimestamp, count, type, eventTime to the microsecond,
//   action, related, reportingController, reportingInstance). The 422 names the internal core
//   Event's fields (`message`, not `note`; `involvedObject`, not `regarding`), since upstream
//   validates the internal object. Upstream's conformance test "should ensure that an event can
//   be fetched, patched, deleted, and listed" patches the series (it patched the note until the
//   note became immutable, kubernetes#108047) and then updates it.
// - core/v1 keeps the legacy rules only: the message (and any other field) may change, as the
//   conformance test "should manage the lifecycle of an event" does with a patch of `message`.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import * as k8s from '@kubernetes/client-node';
import { startTestServer, type TestServer } from '../support/server.js';

const NS = 'events-update';
let server: TestServer;
let core: k8s.CoreV1Api;
let eventsV1: k8s.EventsV1Api;

before(async () => {
  server = await startTestServer({ storage: 'memory' });
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(server.kubeconfig);
  core = kc.makeApiClient(k8s.CoreV1Api);
  eventsV1 = kc.makeApiClient(k8s.EventsV1Api);
  await core.createNamespace({ body: { metadata: { name: NS } } });
});
after(async () => {
  await server?.stop();
});

const SMP = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.StrategicMergePatch);
const MERGE = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch);
// MicroTime travels as a string (client-node types it Date but leaves the wire text alone).
const micro = (s: string): Date => s as unknown as Date;

/** The Status of a rejected call, as client-node's ApiException carries it. */
interface StatusBody {
  code?: number;
  reason?: string;
  message?: string;
  details?: { causes?: { field?: string; message?: string }[] };
}
function status(e: unknown): StatusBody {
  const body = (e as { body?: unknown }).body;
  return (typeof body === 'string' ? JSON.parse(body) : body) as StatusBody;
}

describe('events.k8s.io/v1 Event updates', () => {
  const name = 'event-test';

  before(async () => {
    // newTestEvent of upstream's test/e2e/instrumentation/events.go.
    await eventsV1.createNamespacedEvent({
      namespace: NS,
      body: {
        metadata: { name, labels: { 'testevent-constant': 'true' } },
        regarding: { namespace: NS },
        eventTime: micro('2017-09-19T13:49:16.000000Z'),
        note: `This is ${name}`,
        action: 'Do',
        reason: 'Test',
        type: 'Normal',
        reportingController: 'test-controller',
        reportingInstance: 'test-node',
      },
    });
  });

  it('a strategic merge patch of the series and an update of it succeed (the conformance test)', async () => {
    const patched = await eventsV1.patchNamespacedEvent(
      { name, namespace: NS, body: { series: { count: 2, lastObservedTime: '2017-09-19T13:49:11.000000Z' } } },
      SMP,
    );
    assert.equal(patched.series?.count, 2);
    const got = await eventsV1.readNamespacedEvent({ name, namespace: NS });
    got.series = { count: 100, lastObservedTime: micro('2017-09-19T13:49:16.000000Z') };
    const updated = await eventsV1.replaceNamespacedEvent({ name, namespace: NS, body: got });
    assert.equal(updated.series?.count, 100);
    assert.equal(updated.note, `This is ${name}`);
  });

  it('a series with count < 2 is refused with upstream text', async () => {
    await assert.rejects(eventsV1.patchNamespacedEvent({ name, namespace: NS, body: { series: { count: 1 } } }, MERGE), (e: unknown) => {
      const s = status(e);
      assert.equal(s.code, 422);
      assert.match(s.message ?? '', /series\.count: Invalid value: "": should be at least 2/);
      return true;
    });
  });

  it('the note is immutable: 422 naming the core field `message`', async () => {
    await assert.rejects(eventsV1.patchNamespacedEvent({ name, namespace: NS, body: { note: 'This is a test event - patched' } }, SMP), (e: unknown) => {
      const s = status(e);
      assert.equal(s.code, 422);
      assert.equal(s.reason, 'Invalid');
      assert.equal(s.message, `Event.events.k8s.io "${name}" is invalid: message: Invalid value: "This is a test event - patched": field is immutable`);
      assert.deepEqual(
        s.details?.causes?.map((c) => c.field),
        ['message'],
      );
      return true;
    });
  });

  it('each immutable field is refused under its core name', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ reason: 'Other' }, 'reason: Invalid value: "Other": field is immutable'],
      [{ type: 'Warning' }, 'type: Invalid value: "Warning": field is immutable'],
      [{ action: 'Undo' }, 'action: Invalid value: "Undo": field is immutable'],
      [{ reportingController: 'other-controller' }, 'reportingController: Invalid value: "other-controller": field is immutable'],
      [{ reportingInstance: 'other-node' }, 'reportingInstance: Invalid value: "other-node": field is immutable'],
      [{ eventTime: '2017-09-19T13:49:17.000000Z' }, 'eventTime: Invalid value: 2017-09-19 13:49:17 +0000 UTC: field is immutable'],
      [
        { regarding: { namespace: NS, name: 'x' } },
        `involvedObject: Invalid value: core.ObjectReference{Kind:"", Namespace:"${NS}", Name:"x", UID:"", APIVersion:"", ResourceVersion:"", FieldPath:""}: field is immutable`,
      ],
    ];
    for (const [body, text] of cases) {
      await assert.rejects(eventsV1.patchNamespacedEvent({ name, namespace: NS, body }, MERGE), (e: unknown) => {
        const s = status(e);
        assert.equal(s.code, 422, JSON.stringify(body));
        assert.ok(s.message?.includes(text), `${JSON.stringify(body)}: ${s.message}`);
        return true;
      });
    }
  });

  it('the same eventTime written in another zone is no change', async () => {
    const patched = await eventsV1.patchNamespacedEvent({ name, namespace: NS, body: { eventTime: '2017-09-19T15:49:16.000000+02:00' } }, MERGE);
    assert.equal(patched.metadata?.name, name);
  });
});

describe('core/v1 Event updates', () => {
  const name = 'event-test-core';

  it('the message may change (the conformance test patches it), and so may the reason', async () => {
    await core.createNamespacedEvent({
      namespace: NS,
      body: {
        metadata: { name, labels: { 'testevent-constant': 'true' } },
        message: 'This is a test event',
        reason: 'Test',
        type: 'Normal',
        count: 1,
        involvedObject: { namespace: NS },
      },
    });
    const patched = await core.patchNamespacedEvent({ name, namespace: NS, body: { message: 'This is a test event - patched' } }, SMP);
    assert.equal(patched.message, 'This is a test event - patched');
    const got = await core.readNamespacedEvent({ name, namespace: NS });
    got.reason = 'Changed';
    got.count = 2;
    const updated = await core.replaceNamespacedEvent({ name, namespace: NS, body: got });
    assert.equal(updated.reason, 'Changed');
    assert.equal(updated.count, 2);
  });
});
