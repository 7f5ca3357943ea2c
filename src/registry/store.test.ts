import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { configMapsResource } from './core/configmaps/index.js';
import { namespacesResource } from './core/namespaces/index.js';
import { StatusError } from '../apimachinery/errors.js';
import type { KubeObject } from '../apimachinery/types.js';
import { MemoryStorage } from '../storage/memory/memory-storage.js';
import { configMapStrategy } from './core/configmaps/strategy.js';
import { namespaceStrategy } from './core/namespaces/strategy.js';
import { GenericStore, type ApiWatchEvent } from './store.js';

function stores() {
  const storage = new MemoryStorage();
  const cms = new GenericStore({ descriptor: configMapsResource, strategy: configMapStrategy, storage, keyPrefix: '/registry/configmaps/' });
  const nss = new GenericStore({ descriptor: namespacesResource, strategy: namespaceStrategy, storage, keyPrefix: '/registry/namespaces/' });
  return { storage, cms, nss };
}

const cm = (name: string, data: Record<string, string> = { a: 'b' }, labels?: Record<string, string>): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, ...(labels ? { labels } : {}) },
  data,
});

async function rejectsWith(p: Promise<unknown>, code: number, reason: string, message?: RegExp): Promise<StatusError> {
  try {
    await p;
  } catch (e) {
    assert.ok(e instanceof StatusError, `expected StatusError, got ${String(e)}`);
    assert.equal(e.code, code, e.message);
    assert.equal(e.reason, reason);
    if (message) assert.match(e.message, message);
    return e;
  }
  assert.fail('expected a rejection');
}

describe('GenericStore', () => {
  it('create fills uid, creationTimestamp and resourceVersion; a second create is AlreadyExists', async () => {
    const { cms } = stores();
    const { object } = await cms.create('ns', cm('one'));
    assert.match(object.metadata!.uid!, /^[0-9a-f-]{36}$/);
    assert.match(object.metadata!.creationTimestamp!, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    assert.equal(object.metadata!.namespace, 'ns');
    assert.ok(Number(object.metadata!.resourceVersion) > 0);
    await rejectsWith(cms.create('ns', cm('one')), 409, 'AlreadyExists', /^configmaps "one" already exists$/);
  });

  it('generateName gets a 5-character suffix; invalid names are 422 with field causes', async () => {
    const { cms } = stores();
    const { object } = await cms.create('ns', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { generateName: 'gen-' } });
    assert.match(object.metadata!.name!, /^gen-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
    const err = await rejectsWith(
      cms.create('ns', cm('Bad_Name')),
      422,
      'Invalid',
      /^ConfigMap "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain/,
    );
    assert.equal(err.status.details?.causes?.[0]?.field, 'metadata.name');
  });

  it('update with a stale resourceVersion is a Conflict; without one it applies (unconditional)', async () => {
    const { cms } = stores();
    const created = (await cms.create('ns', cm('u'))).object;
    const rv = created.metadata!.resourceVersion!;
    await cms.update('ns', 'u', () => ({ ...cm('u', { a: 'c' }), metadata: { name: 'u', resourceVersion: rv } }));
    await rejectsWith(
      cms.update('ns', 'u', () => ({ ...cm('u', { a: 'd' }), metadata: { name: 'u', resourceVersion: rv } })),
      409,
      'Conflict',
      /^Operation cannot be fulfilled on configmaps "u": the object has been modified; please apply your changes to the latest version and try again$/,
    );
    const r = await cms.update('ns', 'u', () => cm('u', { a: 'e' }));
    assert.deepEqual(r.object.data, { a: 'e' });
    assert.equal(r.object.metadata!.uid, created.metadata!.uid);
  });

  it('a write that lands between the read and the swap: a patch is applied again to the fresh object, a pinned PUT is a Conflict', async () => {
    const { cms } = stores();
    await cms.create('ns', cm('race', { a: '1' }));
    // A patch's update function carries the resourceVersion it was applied to (GuaranteedUpdate re-runs it).
    let calls = 0;
    const r = await cms.update('ns', 'race', async (cur) => {
      calls++;
      if (calls === 1) await cms.update('ns', 'race', (c) => ({ ...c!, data: { ...(c!.data as object), b: 'other writer' } }));
      return { ...cur!, data: { ...(cur!.data as object), a: '2' } };
    });
    assert.equal(calls, 2);
    assert.deepEqual(r.object.data, { a: '2', b: 'other writer' });
    // A PUT's body is the same on every attempt: the fresh object's resourceVersion differs.
    const before = (await cms.get('ns', 'race')).metadata!.resourceVersion!;
    let puts = 0;
    await rejectsWith(
      cms.update('ns', 'race', async () => {
        puts++;
        if (puts === 1) await cms.update('ns', 'race', (c) => ({ ...c!, data: { a: 'third' } }));
        return { ...cm('race', { a: 'mine' }), metadata: { name: 'race', resourceVersion: before } };
      }),
      409,
      'Conflict',
    );
    assert.equal(puts, 2);
    assert.deepEqual((await cms.get('ns', 'race')).data, { a: 'third' });
  });

  it('an update that changes nothing writes nothing (same resourceVersion)', async () => {
    const { cms } = stores();
    const created = (await cms.create('ns', cm('same'))).object;
    const r = await cms.update('ns', 'same', (cur) => cur!);
    assert.equal(r.object.metadata!.resourceVersion, created.metadata!.resourceVersion);
  });

  it('finalizers: delete sets deletionTimestamp; removing the last finalizer removes the object', async () => {
    const { cms } = stores();
    await cms.create('ns', { ...cm('f'), metadata: { name: 'f', finalizers: ['example.com/hold'] } });
    const del = await cms.delete('ns', 'f');
    assert.equal(del.deleted, false);
    assert.ok(del.object.metadata!.deletionTimestamp);
    const again = await cms.delete('ns', 'f');
    assert.equal(again.deleted, false);
    assert.equal(again.object.metadata!.resourceVersion, del.object.metadata!.resourceVersion);
    await cms.update('ns', 'f', (cur) => ({ ...cur!, metadata: { ...cur!.metadata, finalizers: [] } }));
    await rejectsWith(cms.get('ns', 'f'), 404, 'NotFound', /^configmaps "f" not found$/);
  });

  it('delete preconditions on uid and resourceVersion', async () => {
    const { cms } = stores();
    await cms.create('ns', cm('p'));
    await rejectsWith(
      cms.delete('ns', 'p', { preconditions: { uid: 'nope' } }),
      409,
      'Conflict',
      /^Operation cannot be fulfilled on ConfigMap "p": the UID in the precondition \(nope\) does not match the UID in record/,
    );
    await rejectsWith(cms.delete('ns', 'p', { propagationPolicy: 'Sideways' }), 422, 'Invalid', /propagationPolicy: Unsupported value: "Sideways"/);
    assert.equal((await cms.delete('ns', 'p', { propagationPolicy: 'Background' })).deleted, true);
  });

  it('delete admission (opts.validate) runs after the preconditions, on a copy of the object as read; a second time before a removal', async () => {
    const { storage, cms } = stores();
    const seen: KubeObject[] = [];
    const validate = (old: KubeObject): void => {
      seen.push(old);
      if (old.metadata?.labels?.['deny'] === 'yes') throw new StatusError({ reason: 'Forbidden', code: 403, message: 'denied' });
    };
    await rejectsWith(cms.delete('ns', 'missing', { validate }), 404, 'NotFound');
    const denied = (await cms.create('ns', cm('denied', { a: 'b' }, { deny: 'yes' }))).object;
    await rejectsWith(cms.delete('ns', 'denied', { validate, preconditions: { uid: 'nope' } }), 409, 'Conflict');
    assert.equal(seen.length, 0);
    await rejectsWith(cms.delete('ns', 'denied', { validate }), 403, 'Forbidden');
    assert.equal(seen.length, 1);
    assert.deepEqual(seen[0], denied);
    assert.notEqual(seen[0], await cms.get('ns', 'denied'));
    // Finalizers: one check, the update; without: one, the removal; a finalizer dropped by the
    // options: the update's check and the removal's (updateForGracefulDeletionAndFinalizers, then Storage.Delete).
    seen.length = 0;
    await cms.create('ns', { ...cm('held'), metadata: { name: 'held', finalizers: ['example.com/hold'] } });
    await cms.create('ns', cm('plain'));
    await cms.create('ns', { ...cm('orphaned'), metadata: { name: 'orphaned', finalizers: ['orphan'] } });
    const gcs = new GenericStore({
      descriptor: configMapsResource,
      strategy: configMapStrategy,
      storage,
      keyPrefix: '/registry/configmaps/',
      garbageCollection: true,
    });
    assert.equal((await cms.delete('ns', 'held', { validate })).deleted, false);
    assert.equal(seen.length, 1);
    assert.equal((await cms.delete('ns', 'plain', { validate })).deleted, true);
    assert.equal(seen.length, 2);
    assert.equal((await gcs.delete('ns', 'orphaned', { validate, propagationPolicy: 'Background' })).deleted, true);
    assert.deepEqual(
      seen.slice(2).map((o) => o.metadata?.name),
      ['orphaned', 'orphaned'],
    );
  });

  it('a DELETE of an object its finalizers hold marks it deleting once: grace period 0, generation bumped once; repeats write nothing', async () => {
    // A kind with a generation (as custom resources have): markAsDeleting bumps it on the first DELETE.
    const strategy = { ...configMapStrategy, prepareForCreate: (o: KubeObject) => void (o.metadata!.generation = 1) };
    const gens = new GenericStore({ descriptor: configMapsResource, strategy, storage: new MemoryStorage(), keyPrefix: '/registry/configmaps/' });
    await gens.create('ns', { ...cm('g'), metadata: { name: 'g', finalizers: ['example.com/hold'] } });
    const first = await gens.delete('ns', 'g');
    assert.equal(first.object.metadata?.deletionGracePeriodSeconds, 0);
    assert.equal(first.object.metadata?.generation, 2);
    assert.ok(first.object.metadata?.deletionTimestamp);
    const again = await gens.delete('ns', 'g');
    assert.deepEqual(again.object, first.object);
  });

  it('deletecollection: each item deleted with the request options and admission; answers the list as read; a limit is one page', async () => {
    const { cms } = stores();
    for (const n of ['c1', 'c2', 'c3']) await cms.create('ns', cm(n, { a: 'b' }, { set: 'x' }));
    await cms.create('ns', { ...cm('c4', { a: 'b' }, { set: 'x' }), metadata: { name: 'c4', labels: { set: 'x' }, finalizers: ['example.com/hold'] } });
    await cms.create('ns', cm('other'));
    // A precondition of the request applies to every item (upstream copies the options to each delete).
    await rejectsWith(cms.deleteCollection('ns', { labelSelector: 'set=x' }, { preconditions: { resourceVersion: '999999' } }), 409, 'Conflict');
    const seen: string[] = [];
    const paged = await cms.deleteCollection('ns', { labelSelector: 'set=x', limit: 1 }, { validate: (o) => void seen.push(o.metadata?.name ?? '') });
    assert.deepEqual(
      paged.items.map((i) => i.metadata?.name),
      ['c1'],
    );
    assert.ok(paged.metadata.continue);
    const out = await cms.deleteCollection('ns', { labelSelector: 'set=x' }, { validate: (o) => void seen.push(o.metadata?.name ?? '') });
    assert.deepEqual(
      out.items.map((i) => i.metadata?.name),
      ['c2', 'c3', 'c4'],
    );
    assert.equal(out.items[2]!.metadata?.deletionTimestamp, undefined, 'the items as listed, before their deletion');
    assert.deepEqual([...seen].sort(), ['c1', 'c2', 'c3', 'c4']);
    assert.deepEqual(
      (await cms.list('ns')).items.map((i) => i.metadata?.name),
      ['c4', 'other'],
    );
  });

  it('dry-run create and delete store nothing', async () => {
    const { cms } = stores();
    await cms.create('ns', cm('dry'), { dryRun: true });
    await rejectsWith(cms.get('ns', 'dry'), 404, 'NotFound');
    await cms.create('ns', cm('keep'));
    await cms.delete('ns', 'keep', { dryRun: true });
    assert.ok(await cms.get('ns', 'keep'));
  });

  it('list: selectors, limit/continue paging across one revision, unsupported field label', async () => {
    const { cms } = stores();
    for (let i = 0; i < 7; i++) await cms.create('ns', cm(`c${i}`, { i: String(i) }, { parity: i % 2 ? 'odd' : 'even' }));
    await cms.create('other', cm('elsewhere'));
    const odd = await cms.list('ns', { labelSelector: 'parity=odd' });
    assert.deepEqual(
      odd.items.map((o) => o.metadata!.name),
      ['c1', 'c3', 'c5'],
    );
    assert.deepEqual(
      (await cms.list('ns', { fieldSelector: 'metadata.name=c4' })).items.map((o) => o.metadata!.name),
      ['c4'],
    );
    const page1 = await cms.list('ns', { limit: 3 });
    assert.equal(page1.items.length, 3);
    assert.equal(page1.metadata.remainingItemCount, 4);
    await cms.create('ns', cm('c9')); // after the first page: not part of this paged list
    const page2 = await cms.list('ns', { limit: 3, continue: page1.metadata.continue! });
    const page3 = await cms.list('ns', { limit: 3, continue: page2.metadata.continue! });
    assert.deepEqual(
      [...page1.items, ...page2.items, ...page3.items].map((o) => o.metadata!.name),
      ['c0', 'c1', 'c2', 'c3', 'c4', 'c5', 'c6'],
    );
    assert.equal(page3.metadata.continue, undefined);
    assert.equal(page2.metadata.resourceVersion, page1.metadata.resourceVersion);
    await rejectsWith(
      cms.list('ns', { fieldSelector: 'spec.x=y' }),
      400,
      'BadRequest',
      /^"spec.x" is not a known field selector: only "metadata.name", "metadata.namespace"$/,
    );
    await rejectsWith(cms.list('ns', { continue: 'garbage!' }), 400, 'BadRequest', /continue key is not valid/);
  });

  it('listJSON splices stored bytes into the same list that list() returns', async () => {
    const { cms, storage } = stores();
    await cms.create('ns', cm('j1', { a: '1' }, { app: 'x' }));
    await cms.create('ns', { ...cm('j2'), metadata: {} }).catch(() => undefined);
    await cms.create('ns', cm('j3', { quote: 'a "quoted" value, \u00e9 and \u2028' }));
    // A value written in another key order (an older layout) takes the parse-and-serialise path.
    await storage.create(
      '/registry/configmaps/ns/j4',
      Buffer.from('{"data":{"x":"y"},"metadata":{"name":"j4","namespace":"ns"},"kind":"ConfigMap","apiVersion":"v1"}'),
    );
    for (const opts of [{}, { labelSelector: 'app=x' }, { limit: 2 }]) {
      const viaObjects = await cms.list('ns', opts);
      const viaBytes = JSON.parse((await cms.listJSON('ns', opts)).toString('utf8')) as typeof viaObjects;
      assert.deepEqual(viaBytes, JSON.parse(JSON.stringify(viaObjects)), JSON.stringify(opts));
    }
    const all = JSON.parse((await cms.listJSON('ns')).toString('utf8')) as { items: KubeObject[] };
    assert.deepEqual(
      all.items.map((o) => o.metadata!.name),
      ['j1', 'j3', 'j4'],
    );
    assert.ok(all.items.every((o) => Number(o.metadata!.resourceVersion) > 0));
  });

  it('getJSON splices the stored bytes into the object get() returns, or hands back the object', async () => {
    const { cms, storage } = stores();
    await cms.create('ns', cm('g1', { quote: 'a "quoted" value, \u00e9 and \u2028' }, { app: 'x' }));
    await storage.create(
      '/registry/configmaps/ns/g2',
      Buffer.from('{"data":{"x":"y"},"metadata":{"name":"g2","namespace":"ns"},"kind":"ConfigMap","apiVersion":"v1"}'),
    );
    const spliced = await cms.getJSON('ns', 'g1');
    assert.ok('json' in spliced, 'a value in the storage layout is sent as stored');
    assert.equal(spliced.json.at(-1), 0x0a, 'ends in a newline, as the JSON encoder writes it');
    assert.deepEqual(JSON.parse(spliced.json.toString('utf8')), JSON.parse(JSON.stringify(await cms.get('ns', 'g1'))));
    const decoded = await cms.getJSON('ns', 'g2');
    assert.ok('object' in decoded, 'another key order takes the decode path');
    assert.deepEqual(decoded.object, await cms.get('ns', 'g2'));
    await rejectsWith(cms.getJSON('ns', 'missing'), 404, 'NotFound', /configmaps "missing" not found/);
  });

  it("create's json() is the stored bytes with the resourceVersion spliced in; object decodes the same", async () => {
    const { cms } = stores();
    const out = await cms.create('ns', cm('c1', { quote: 'a "quoted" value, \u00e9 and \u2028' }, { app: 'x' }));
    const json = out.json?.();
    assert.ok(json, 'a created value in the storage layout is answered as stored');
    assert.equal(json.at(-1), 0x0a);
    const got = await cms.getJSON('ns', 'c1');
    assert.ok('json' in got);
    assert.deepEqual(json, got.json, 'the create answer is byte for byte what a GET answers');
    assert.deepEqual(JSON.parse(json.toString('utf8')), JSON.parse(JSON.stringify(out.object)));
    assert.equal(out.object, out.object, 'decoded once');
    const dry = await cms.create('ns', cm('c2'), { dryRun: true });
    assert.equal(dry.json, undefined, 'a dry run has no stored bytes');
  });

  it('list with resourceVersionMatch=Exact reads an older revision', async () => {
    const { cms } = stores();
    const a = (await cms.create('ns', cm('a'))).object;
    await cms.create('ns', cm('b'));
    const old = await cms.list('ns', { resourceVersion: a.metadata!.resourceVersion!, resourceVersionMatch: 'Exact' });
    assert.deepEqual(
      old.items.map((o) => o.metadata!.name),
      ['a'],
    );
    await rejectsWith(
      cms.list('ns', { resourceVersionMatch: 'Exact' }),
      422,
      'Invalid',
      /^ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided$/,
    );
    await rejectsWith(
      cms.list('ns', { resourceVersion: '0', resourceVersionMatch: 'Exact' }),
      422,
      'Invalid',
      /resourceVersionMatch: Forbidden: resourceVersionMatch "exact" is forbidden for resourceVersion "0"/,
    );
    await rejectsWith(
      cms.list('ns', { resourceVersion: '1', resourceVersionMatch: 'Sometimes' }),
      422,
      'Invalid',
      /resourceVersionMatch: Unsupported value: "Sometimes": supported values: "Exact", "NotOlderThan", ""/,
    );
  });

  it('continue token of a compacted revision is 410 Expired', async () => {
    const { cms, storage } = stores();
    for (let i = 0; i < 4; i++) await cms.create('ns', cm(`x${i}`));
    const page = await cms.list('ns', { limit: 2 });
    for (let i = 0; i < 4; i++) await cms.update('ns', `x${i}`, () => cm(`x${i}`, { v: 'new' }));
    await storage.compact(await storage.currentRevision());
    const err = await rejectsWith(
      cms.list('ns', { limit: 2, continue: page.metadata.continue! }),
      410,
      'Expired',
      /The provided continue parameter is too old/,
    );
    // As etcd3's handleCompactedErrorForPaging: the offered token reads the rest at the latest revision (-1).
    const offered = JSON.parse(Buffer.from(err.status.metadata.continue!, 'base64url').toString()) as { rv: number };
    assert.equal(offered.rv, -1);
    await cms.update('ns', 'x3', () => cm('x3', { v: 'newer' }));
    const rest = await cms.list('ns', { limit: 2, continue: err.status.metadata.continue! });
    assert.deepEqual(
      rest.items.map((o) => o.metadata!.name),
      ['x2', 'x3'],
    );
    assert.deepEqual((rest.items[1] as { data?: unknown }).data, { v: 'newer' });
    assert.equal(rest.metadata.resourceVersion, String(await storage.currentRevision()));
  });

  it('watch: initial state, then events; a label selector turns transitions into ADDED/DELETED', async () => {
    const { cms } = stores();
    await cms.create('ns', cm('w0', { a: '0' }, { app: 'x' }));
    const ctrl = new AbortController();
    const events: ApiWatchEvent[] = [];
    const done = (async () => {
      for await (const ev of cms.watch('ns', { labelSelector: 'app=x', signal: ctrl.signal })) {
        events.push(ev);
        if (events.length === 4) ctrl.abort();
      }
    })();
    await new Promise((r) => setTimeout(r, 20));
    await cms.update('ns', 'w0', () => cm('w0', { a: '1' }, { app: 'x' }));
    await cms.update('ns', 'w0', () => cm('w0', { a: '2' }, { app: 'y' })); // leaves the selection
    await cms.create('ns', cm('w1', {}, { app: 'x' }));
    await done;
    assert.deepEqual(
      events.map((e) => `${e.type} ${e.object.metadata!.name}`),
      ['ADDED w0', 'MODIFIED w0', 'DELETED w0', 'ADDED w1'],
    );
    const rvs = events.map((e) => Number(e.object.metadata!.resourceVersion));
    assert.deepEqual(
      [...rvs].sort((a, b) => a - b),
      rvs,
    );
  });

  it('namespaces: deletion turns into Terminating with the kubernetes finalizer; finalize removes it', async () => {
    const { nss } = stores();
    const created = (await nss.create(undefined, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team' } })).object;
    assert.deepEqual((created as { spec?: unknown }).spec, { finalizers: ['kubernetes'] });
    assert.equal(created.metadata!.labels!['kubernetes.io/metadata.name'], 'team');
    const del = await nss.delete(undefined, 'team');
    assert.equal(del.deleted, false);
    assert.equal((del.object as { status?: { phase?: string } }).status?.phase, 'Terminating');
    await nss.update(undefined, 'team', (cur) => ({ ...cur!, spec: { finalizers: [] } }), { subresource: 'finalize' });
    await rejectsWith(nss.get(undefined, 'team'), 404, 'NotFound');
  });
});
