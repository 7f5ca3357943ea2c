// The PackageManifest storage: the package server's namespace views (own catalogs first, the
// global namespace's in every namespace) and watches that start from a recent revision.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KubeObject } from '../../apimachinery/types.js';
import { ExpiredError } from '../../storage/storage.js';
import { packageManifests, type PackageManifestSource } from './packagemanifests.js';

function source(): PackageManifestSource & { set(items: KubeObject[]): void } {
  let items: KubeObject[] = [];
  const listeners = new Set<() => void>();
  return {
    manifests: () => items,
    subscribe(l) {
      listeners.add(l);
      return () => listeners.delete(l);
    },
    set(next) {
      items = next;
      for (const l of listeners) l();
    },
  };
}

const pm = (namespace: string, name: string, catalog: string): KubeObject => ({
  apiVersion: 'packages.operators.coreos.com/v1',
  kind: 'PackageManifest',
  metadata: { namespace, name, labels: { catalog } },
});

const P = '/registry/packages.operators.coreos.com/packagemanifests/';
const decode = (v: Uint8Array): KubeObject => JSON.parse(new TextDecoder().decode(v)) as KubeObject;

describe('PackageManifest storage', () => {
  it("shows a namespace its own packages first, then the global namespace's, in that namespace", async () => {
    const src = source();
    const storage = packageManifests(src, { globalNamespace: 'olm' }).storage!;
    src.set([pm('olm', 'etcd', 'global'), pm('olm', 'kafka', 'global'), pm('team', 'etcd', 'own'), pm('other', 'x', 'other')]);
    const team = await storage.list(`${P}team/`);
    assert.deepEqual(
      team.items.map((kv) => [kv.key, decode(kv.value).metadata?.namespace, decode(kv.value).metadata?.labels?.catalog]),
      [
        [`${P}team/etcd`, 'team', 'own'],
        [`${P}team/kafka`, 'team', 'global'],
      ],
    );
    assert.equal(decode((await storage.get(`${P}team/kafka`))!.value).metadata?.namespace, 'team');
    assert.equal(await storage.get(`${P}team/x`), undefined);
    const all = await storage.list(P);
    assert.deepEqual(
      all.items.map((kv) => kv.key),
      [`${P}olm/etcd`, `${P}olm/kafka`, `${P}other/x`, `${P}team/etcd`],
    );
    const page = await storage.list(P, { limit: 3 });
    assert.equal(page.more, true);
    assert.equal(page.remaining, 1);
    const rest = await storage.list(P, { startKey: `${P}other/x\x00` });
    assert.deepEqual(
      rest.items.map((kv) => kv.key),
      [`${P}team/etcd`],
    );
    await assert.rejects(storage.create(`${P}a/b`, new Uint8Array()));
  });

  it('watches from a recent revision without missing a change, and expires older ones', async () => {
    const src = source();
    const storage = packageManifests(src, { globalNamespace: 'olm' }).storage!;
    const before = await storage.currentRevision();
    src.set([pm('olm', 'etcd', 'global')]);
    const abort = new AbortController();
    const it = storage.watch(`${P}team/`, { afterRevision: before, signal: abort.signal })[Symbol.asyncIterator]();
    const first = await it.next();
    assert.equal(first.done, false);
    assert.equal(first.value.type, 'put');
    assert.equal((first.value as { kv: { key: string } }).kv.key, `${P}team/etcd`);
    src.set([]);
    const second = await it.next();
    assert.equal((second.value as { type: string }).type, 'delete');
    abort.abort();
    assert.equal((await it.next()).done, true);

    for (let i = 0; i < 70; i++) src.set([pm('olm', `p${i}`, 'global')]);
    const old = storage.watch(`${P}team/`, { afterRevision: before, signal: new AbortController().signal })[Symbol.asyncIterator]();
    await assert.rejects(old.next(), ExpiredError);
  });
});
