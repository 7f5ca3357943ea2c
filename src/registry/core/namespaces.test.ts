import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { namespacesResource } from '../../api/resources.js';
import { StatusError } from '../../apimachinery/errors.js';
import type { KubeObject } from '../../apimachinery/types.js';
import { MemoryStorage } from '../../storage/memory/memory-storage.js';
import { GenericStore } from '../store.js';
import { namespaceStrategy } from './namespaces.js';

type Namespace = KubeObject & { spec?: { finalizers?: unknown[] }; status?: { phase?: string; conditions?: unknown[] } };

function store(): GenericStore {
  return new GenericStore({ descriptor: namespacesResource, strategy: namespaceStrategy, storage: new MemoryStorage(), keyPrefix: '/registry/namespaces/' });
}

const ns = (name: string, extra: Partial<Namespace> = {}): Namespace => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name }, ...extra });

/** The 422's message and causes, as upstream's StatusError carries them. */
async function invalid(p: Promise<unknown>): Promise<{ message: string; causes: { field?: string; message?: string }[] }> {
  try {
    await p;
  } catch (e) {
    assert.ok(e instanceof StatusError, `expected StatusError, got ${String(e)}`);
    assert.equal(e.code, 422, e.message);
    return { message: e.message, causes: (e.status.details?.causes ?? []).map((c) => ({ field: c.field, message: c.message })) };
  }
  assert.fail('expected a 422');
}

const NEITHER = 'name is neither a standard finalizer name nor is it fully qualified';

describe('namespaces: spec.finalizers (ValidateNamespace, ValidateNamespaceFinalizeUpdate)', () => {
  it('create refuses an unqualified non-standard name at spec.finalizers (no index, as upstream)', async () => {
    const s = store();
    const err = await invalid(s.create(undefined, ns('a', { spec: { finalizers: ['foo'] } })));
    assert.equal(err.message, `Namespace "a" is invalid: spec.finalizers: Invalid value: "foo": ${NEITHER}`);
    const bad = await invalid(s.create(undefined, ns('b', { spec: { finalizers: ['a/b/c'] } })));
    assert.equal(bad.causes.length, 1);
    assert.equal(bad.causes[0]!.field, 'spec.finalizers');
    assert.match(bad.causes[0]!.message!, /^Invalid value: "a\/b\/c": a qualified name must consist of/);
    // Qualified and standard names are fine; kubernetes is added when missing.
    const ok = (await s.create(undefined, ns('c', { spec: { finalizers: ['example.com/x'] } }))).object as Namespace;
    assert.deepEqual(ok.spec, { finalizers: ['example.com/x', 'kubernetes'] });
  });

  it('/finalize checks each name at spec.finalizers[i]', async () => {
    const s = store();
    await s.create(undefined, ns('a'));
    const err = await invalid(s.update(undefined, 'a', (cur) => ({ ...cur!, spec: { finalizers: ['kubernetes', 'foo', ''] } }), { subresource: 'finalize' }));
    assert.deepEqual(err.causes, [
      { field: 'spec.finalizers[1]', message: `Invalid value: "foo": ${NEITHER}` },
      { field: 'spec.finalizers[2]', message: 'Invalid value: "": name part must be non-empty' },
      err.causes[2]!, // the qualified-name regex message for ""
      { field: 'spec.finalizers[2]', message: `Invalid value: "": ${NEITHER}` },
    ]);
    assert.match(err.causes[2]!.message!, /^Invalid value: "": name part must consist of/);
    const ok = (await s.update(undefined, 'a', (cur) => ({ ...cur!, spec: { finalizers: ['kubernetes', 'example.com/x'] } }), { subresource: 'finalize' })).object as Namespace;
    assert.deepEqual(ok.spec, { finalizers: ['kubernetes', 'example.com/x'] });
  });
});

describe('namespaces: /status phase (ValidateNamespaceStatusUpdate)', () => {
  const withPhase = (phase: string | undefined) => (cur: KubeObject | undefined) => ({ ...cur!, status: phase === undefined ? {} : { phase } });

  it('without deletionTimestamp the phase may only be Active (status.Phase, capital P as upstream)', async () => {
    const s = store();
    await s.create(undefined, ns('a'));
    const term = await invalid(s.update(undefined, 'a', withPhase('Terminating'), { subresource: 'status' }));
    assert.equal(term.message, 'Namespace "a" is invalid: status.Phase: Invalid value: "Terminating": may only be \'Active\' if `deletionTimestamp` is empty');
    const bogus = await invalid(s.update(undefined, 'a', withPhase('Bogus'), { subresource: 'status' }));
    assert.deepEqual(bogus.causes, [{ field: 'status.Phase', message: 'Invalid value: "Bogus": may only be \'Active\' if `deletionTimestamp` is empty' }]);
  });

  it('a status without a phase is defaulted to Active (SetDefaults_NamespaceStatus)', async () => {
    const s = store();
    await s.create(undefined, ns('a'));
    const out = (await s.update(undefined, 'a', withPhase(undefined), { subresource: 'status' })).object as Namespace;
    assert.equal(out.status?.phase, 'Active');
  });

  it('with deletionTimestamp the phase may only be Terminating', async () => {
    const s = store();
    await s.create(undefined, ns('a'));
    await s.delete(undefined, 'a');
    const active = await invalid(s.update(undefined, 'a', withPhase('Active'), { subresource: 'status' }));
    assert.deepEqual(active.causes, [{ field: 'status.Phase', message: 'Invalid value: "Active": may only be \'Terminating\' if `deletionTimestamp` is not empty' }]);
    const out = (await s.update(undefined, 'a', (cur) => ({ ...cur!, status: { phase: 'Terminating', conditions: [{ type: 'X', status: 'True' }] } }), { subresource: 'status' })).object as Namespace;
    assert.deepEqual(out.status, { phase: 'Terminating', conditions: [{ type: 'X', status: 'True' }] });
  });
});
