// listJSON and getJSON write the same bytes as the encoder they replaced (kept below as the
// reference): stored values spliced with their resourceVersion, other items re-serialised.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { configMapsResource } from './core/configmaps/index.js';
import type { KubeList, KubeObject } from '../apimachinery/types.js';
import { MemoryStorage } from '../storage/memory/memory-storage.js';
import type { KV } from '../storage/storage.js';
import { configMapStrategy } from './core/configmaps/strategy.js';
import { GenericStore, type ListOptions, type VersionConverter } from './store.js';

const PREFIX = '/registry/configmaps/';
const RAW_PREFIX = Buffer.from('{"kind":"ConfigMap","apiVersion":"v1","metadata":{');

/**
 * Served form differs from the stored one for objects labelled `convert` (as a CR whose schema
 * defaults a field, or a served version other than the storage version): those must be
 * re-serialised, the others are served as stored.
 */
const converter: VersionConverter = {
  toStorage: (obj) => obj,
  fromStorage: (obj) => (obj.metadata?.labels?.['convert'] ? { ...obj, data: { ...(obj['data'] as object), defaulted: 'yes ✓' } } : obj),
};

function setup(withConverter: boolean, conv: VersionConverter = converter) {
  const storage = new MemoryStorage();
  const store = new GenericStore({
    descriptor: configMapsResource,
    strategy: configMapStrategy,
    storage,
    keyPrefix: PREFIX,
    ...(withConverter ? { converter: conv } : {}),
  });
  return { storage, store };
}

const cm = (name: string, data: Record<string, string>, labels?: Record<string, string>): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, ...(labels ? { labels } : {}) },
  data,
});

async function fill(store: GenericStore, storage: MemoryStorage): Promise<void> {
  await store.create('ns', cm('a-plain', { k: 'v' }, { app: 'x' }));
  await store.create('ns', cm('b-utf8', { text: 'héllo 日本語 🎉 \u2028 "quoted" \\ back', lone: '\ud800' }, { app: 'x' }));
  await store.create('ns', cm('c-converted', { k: 'v' }, { convert: 'yes', app: 'y' }));
  await store.create('ns', cm('d-big', { payload: 'ж'.repeat(3000) + 'x'.repeat(2000) }));
  // Another key order (an older layout): parsed and re-serialised.
  await storage.create(
    `${PREFIX}ns/e-other-order`,
    Buffer.from('{"data":{"x":"ÿ"},"metadata":{"name":"e-other-order","namespace":"ns","labels":{"app":"x"}},"kind":"ConfigMap","apiVersion":"v1"}'),
  );
  // Empty metadata in the storage layout (no comma after the spliced resourceVersion).
  await storage.create(`${PREFIX}ns/f-empty-meta`, Buffer.from('{"kind":"ConfigMap","apiVersion":"v1","metadata":{},"data":{"a":"b"}}'));
  for (let i = 0; i < 20; i++)
    await store.create('ns', cm(`g-${String(i).padStart(2, '0')}`, { i: String(i), s: 'ü'.repeat(i * 7) }, { app: i % 2 ? 'x' : 'y' }));
  await store.create('other', cm('z-elsewhere', { k: 'v' }));
}

/** The list encoder store.ts had before (parts per item and one Buffer.concat), on the same items. */
async function referenceListJSON(
  store: GenericStore,
  storage: MemoryStorage,
  withConverter: boolean,
  ns: string | undefined,
  opts: ListOptions,
): Promise<Buffer> {
  const list = await store.list(ns, opts);
  const parts: Buffer[] = [Buffer.from(`{"kind":"ConfigMapList","apiVersion":"v1","metadata":${JSON.stringify(list.metadata)},"items":[`)];
  for (let i = 0; i < list.items.length; i++) {
    if (i > 0) parts.push(Buffer.from(','));
    const item = list.items[i]!;
    // (f-empty-meta's object names nothing: its key does.)
    const kv = (await storage.get(item.metadata?.name ? `${PREFIX}${item.metadata.namespace}/${item.metadata.name}` : `${PREFIX}ns/f-empty-meta`)) as KV;
    const v = Buffer.from(kv.value.buffer, kv.value.byteOffset, kv.value.byteLength);
    const servedAsStored = !withConverter || !item.metadata?.labels?.['convert'];
    if (servedAsStored && v.length > RAW_PREFIX.length + 1 && v.compare(RAW_PREFIX, 0, RAW_PREFIX.length, 0, RAW_PREFIX.length) === 0) {
      parts.push(RAW_PREFIX, Buffer.from(`"resourceVersion":"${kv.modRevision}"${v[RAW_PREFIX.length] === 0x7d ? '' : ','}`), v.subarray(RAW_PREFIX.length));
    } else {
      parts.push(Buffer.from(JSON.stringify(item)));
    }
  }
  parts.push(Buffer.from(']}'));
  return Buffer.concat(parts);
}

describe('listJSON bytes', () => {
  for (const withConverter of [false, true]) {
    it(`are the reference encoder's, ${withConverter ? 'with' : 'without'} a converter`, async () => {
      const { store, storage } = setup(withConverter);
      await fill(store, storage);
      const cases: ListOptions[] = [
        {},
        { labelSelector: 'app=x' },
        { labelSelector: 'app=nothing' },
        { fieldSelector: 'metadata.name=b-utf8' },
        { limit: 1 },
        { limit: 5 },
        { limit: 5, labelSelector: 'app=x' },
      ];
      for (const opts of cases) {
        const want = await referenceListJSON(store, storage, withConverter, 'ns', opts);
        const got = await store.listJSON('ns', opts);
        assert.equal(got.toString('utf8'), want.toString('utf8'), JSON.stringify(opts));
        assert.ok(got.equals(want), JSON.stringify(opts));
        // Every page of a paged list, too.
        if (opts.limit) {
          let cont = (JSON.parse(got.toString('utf8')) as KubeList).metadata.continue;
          while (cont) {
            const o = { ...opts, continue: cont };
            const page = await store.listJSON('ns', o);
            assert.ok(page.equals(await referenceListJSON(store, storage, withConverter, 'ns', o)), JSON.stringify(o));
            cont = (JSON.parse(page.toString('utf8')) as KubeList).metadata.continue;
          }
        }
      }
      assert.ok((await store.listJSON('empty')).equals(await referenceListJSON(store, storage, withConverter, 'empty', {})));
      // Across namespaces.
      const all = await store.listJSON(undefined);
      assert.ok(all.equals(await referenceListJSON(store, storage, withConverter, undefined, {})));
      assert.equal((JSON.parse(all.toString('utf8')) as { items: unknown[] }).items.length, 27);
    });
  }

  it('fill every byte of a longer, dirty buffer from alloc and answer its start', async () => {
    const { store, storage } = setup(true);
    await fill(store, storage);
    const want = await store.listJSON('ns');
    const dirty = Buffer.alloc(want.length + 4096, 0xff);
    let asked = 0;
    const got = await store.listJSON('ns', {}, (size) => {
      asked = size;
      return dirty;
    });
    assert.equal(asked, want.length);
    assert.ok(got.equals(want));
    assert.equal(got.buffer, dirty.buffer);
    assert.equal(got.byteOffset, dirty.byteOffset);
    // An exact fit is answered as it is.
    const exact = Buffer.alloc(want.length, 0xff);
    assert.equal(await store.listJSON('ns', {}, () => exact), exact);
    assert.ok(exact.equals(want));
  });

  it('listJSONChunks yields the same bytes in chunks, each the start of a buffer it took', async () => {
    for (const withConverter of [false, true]) {
      const { store, storage } = setup(withConverter);
      await fill(store, storage);
      for (const opts of [{}, { labelSelector: 'app=x' }, { limit: 5 }, { labelSelector: 'app=nothing' }] as ListOptions[]) {
        const want = await referenceListJSON(store, storage, withConverter, 'ns', opts);
        // 1 byte: every item in a chunk of its own; 300: a few per chunk; 1 MiB: one chunk.
        for (const chunkBytes of [1, 300, 1 << 20]) {
          const taken: Buffer[] = [];
          const chunks = await store.listJSONChunks('ns', opts, chunkBytes, (size) => {
            // Dirty memory, as reused buffers are.
            const b = Buffer.alloc(size + 17, 0xff);
            taken.push(b);
            return b;
          });
          const parts: Buffer[] = [];
          for (let r = chunks.next(); !r.done; r = chunks.next()) {
            assert.equal(r.value.taken, taken[parts.length], 'the chunk is in the buffer taken for it');
            assert.equal(r.value.bytes.buffer, r.value.taken.buffer);
            assert.equal(r.value.bytes.byteOffset, r.value.taken.byteOffset);
            parts.push(r.value.bytes);
          }
          assert.equal(parts.length, taken.length);
          if (chunkBytes === 1 << 20) assert.equal(parts.length, 1);
          assert.equal(Buffer.concat(parts).toString('utf8'), want.toString('utf8'), `${JSON.stringify(opts)} in ${chunkBytes}-byte chunks`);
        }
      }
      await assert.rejects(store.listJSONChunks('ns', { limit: -1, continue: 'garbage' }), /continue|limit/);
    }
  });

  it('an item re-serialised in a chunk keeps an int64 past 2^53 exactly, as the one-buffer list does', async () => {
    const storage = new MemoryStorage();
    const big: VersionConverter = {
      toStorage: (obj) => obj,
      fromStorage: (obj) => ({ ...obj, data: { ...(obj['data'] as object) }, size: 9223372036854775807n }),
    };
    const store = new GenericStore({ descriptor: configMapsResource, strategy: configMapStrategy, storage, keyPrefix: PREFIX, converter: big });
    await store.create('ns', cm('big-int', { k: 'v' }));
    const whole = (await store.listJSON('ns', {})).toString('utf8');
    assert.match(whole, /"size":9223372036854775807\b/);
    const chunks = await store.listJSONChunks('ns', {}, 1, (size) => Buffer.alloc(size));
    const parts: Buffer[] = [];
    for (let r = chunks.next(); !r.done; r = chunks.next()) parts.push(r.value.bytes);
    assert.equal(Buffer.concat(parts).toString('utf8'), whole);
  });

  it('getJSON is the stored bytes spliced plus a newline, or the decoded object', async () => {
    for (const withConverter of [false, true]) {
      const { store, storage } = setup(withConverter);
      await fill(store, storage);
      const list = await store.list('ns');
      for (const item of list.items) {
        const name = item.metadata?.name ?? 'f-empty-meta';
        const got = await store.getJSON('ns', name);
        const ref = await referenceListJSON(store, storage, withConverter, 'ns', { fieldSelector: `metadata.name=${item.metadata?.name ?? ''}` });
        const head = Buffer.from(`{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"${list.metadata.resourceVersion}"},"items":[`);
        const refItem = ref.subarray(head.length, ref.length - 2);
        if ('json' in got) {
          assert.ok(Buffer.concat([refItem, Buffer.from('\n')]).equals(got.json), name);
        } else {
          assert.equal(JSON.stringify(got.object), refItem.toString('utf8'), name);
          assert.ok(name === 'e-other-order' || (withConverter && name === 'c-converted'), `${name} is served as stored`);
        }
      }
    }
  });
});

/** A converter that defaults a top-level `filled` on read when it is missing, as a CR schema default would. */
const defaulting: VersionConverter = {
  toStorage: (obj) => obj,
  fromStorage: (obj) => (Object.hasOwn(obj, 'filled') ? obj : { ...obj, filled: 'default' }),
};

describe('create answers (decided on the object in hand, not on a parse of the stored bytes)', () => {
  for (const [what, obj] of [
    ['served as stored', { ...cm('as-stored', { k: 'v' }), filled: 'x' }],
    ['defaulted on read', cm('defaulted', { k: 'v' })],
    // in memory `filled` is present (undefined); in the stored JSON it is absent, so a read defaults it
    ['an undefined property the read defaults', { ...cm('undef', { k: 'v' }), filled: undefined }],
  ] as const) {
    it(`${what}: the create's JSON is what a GET serves`, async () => {
      const storage = new MemoryStorage();
      const store = new GenericStore({ descriptor: configMapsResource, strategy: configMapStrategy, storage, keyPrefix: PREFIX, converter: defaulting });
      const created = await store.create('ns', obj);
      const answer = created.json?.();
      const got = await store.getJSON('ns', obj.metadata!.name!);
      const getBytes = 'json' in got ? got.json.toString() : JSON.stringify(got.object) + '\n';
      const createBytes = answer ? Buffer.concat(Array.isArray(answer) ? answer : [answer]).toString() : JSON.stringify(created.object);
      assert.deepEqual(JSON.parse(createBytes), JSON.parse(getBytes));
      assert.equal((JSON.parse(createBytes) as { filled?: string }).filled, what === 'served as stored' ? 'x' : 'default');
    });
  }
});

describe('update answers (the stored bytes spliced, as a GET serves them)', () => {
  for (const withConverter of [false, true]) {
    it(`${withConverter ? 'with a defaulting converter' : 'without a converter'}: the update's JSON is what a GET serves, and what its object says`, async () => {
      const { storage, store } = setup(withConverter, defaulting);
      await store.create('ns', cm('u', { k: 'v' }));
      // Stored without `filled`: the defaulting converter adds it on every read.
      const updated = await store.update('ns', 'u', (cur) => {
        const { filled: _filled, ...rest } = cur as KubeObject & { filled?: string };
        return { ...rest, data: { k: 'changed', big: 'x'.repeat(100) } };
      });
      const answer = updated.json?.();
      const got = await store.getJSON('ns', 'u');
      const getBytes = 'json' in got ? got.json.toString() : JSON.stringify(got.object) + '\n';
      if (withConverter) {
        // Read back through the converter the stored object is not served as it is: no bytes to splice.
        assert.equal(answer, undefined);
        assert.equal((updated.object as { filled?: string }).filled, 'default');
      } else {
        assert.ok(answer, 'an object served as stored is answered with its stored bytes');
        assert.equal(answer.toString(), getBytes);
      }
      // The same object (the spliced bytes carry resourceVersion first in metadata, a decoded object last).
      assert.deepEqual(JSON.parse(JSON.stringify(updated.object)), JSON.parse(getBytes));
      assert.equal(updated.object.metadata?.resourceVersion, String(await storage.currentRevision()));
    });
  }
});
