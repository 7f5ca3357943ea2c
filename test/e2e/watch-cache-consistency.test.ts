// The watch cache self-check as an operator meets it: a server whose cache misses an object (a
// store whose watch drops it, as the etcd 3.4 progress bug once made a cache do) reports it in
// apiserver_storage_consistency_checks_total, a klog error line and a failing /readyz, and lists
// are answered by storage meanwhile. kubectl 1.33 reads the endpoints.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createKlog } from '../../src/golang/klog.js';
import { MemoryStorage } from '../../src/storage/memory/memory-storage.js';
import type { StorageFactory, WatchOptions } from '../../src/storage/storage.js';
import { eventually } from '../support/eventually.js';
import { kubectlSession, type KubectlSession } from '../support/kubectl.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { ensureTools, tools } from '../support/tools.js';

/** Memory storage whose watches never deliver events of keys containing `lost`. */
class LosingStorage extends MemoryStorage {
  override watch(prefix: string, opts: WatchOptions): ReturnType<MemoryStorage['watch']> {
    const channel = super.watch(prefix, opts);
    const next = channel.next.bind(channel);
    channel.next = async () => {
      for (;;) {
        const r = await next();
        if (r.done || r.value.type === 'progress' || !r.value.kv.key.includes('lost')) return r;
      }
    };
    return channel;
  }
}

describe('watch cache self-check', { timeout: 90_000 }, () => {
  let server: TestServer;
  let kc: KubectlSession;
  const lines: string[] = [];

  before(async () => {
    ensureTools();
    const storage: StorageFactory = { name: 'memory', open: () => Promise.resolve(new LosingStorage()) };
    const log = createKlog({ write: (line: string) => lines.push(line) });
    server = await startTestServer({ storage, watchCacheConsistencyCheckIntervalMs: 200, log });
    kc = kubectlSession(tools.kubectl, server.kubeconfig, server.dataDir);
  });
  after(async () => {
    await server?.stop();
  });

  it('a healthy cache passes: checks counted as success, /readyz ok', async () => {
    await kc.ok(['create', 'configmap', 'fine']);
    const metrics = await eventually(10_000, 'a successful configmaps check', async () => {
      const text = await kc.ok(['get', '--raw', '/metrics']);
      return /apiserver_storage_consistency_checks_total\{group="",resource="configmaps",status="success"\} [1-9]/.test(text) ? text : undefined;
    });
    assert.doesNotMatch(metrics, /apiserver_storage_consistency_checks_total\{[^}]*status="failure"\}/);
    assert.match(await kc.ok(['get', '--raw', '/readyz?verbose']), /\[\+\]watch-cache-consistency ok/);
  });

  it('a cache that missed an object: failure counted, an error line, /readyz fails, lists from storage', async () => {
    await kc.ok(['create', 'configmap', 'lost-one']);
    const readyz = await eventually(10_000, '/readyz failing', async () => {
      const r = await kc.k(['get', '--raw', '/readyz?verbose']);
      return r.code !== 0 ? r.stderr + r.stdout : undefined;
    });
    assert.match(readyz, /\[-\]watch-cache-consistency failed/);
    assert.match(readyz, /readyz check failed/);
    // Liveness is untouched: restarting is the operator's call.
    await kc.ok(['get', '--raw', '/livez']);
    const metrics = await kc.ok(['get', '--raw', '/metrics']);
    assert.match(metrics, /apiserver_storage_consistency_checks_total\{group="",resource="configmaps",status="failure"\} [1-9]/);
    assert.match(metrics, /# HELP apiserver_storage_consistency_checks_total Counter for status of consistency checks between etcd and watch cache/);
    const failed = lines.find((l) => l.includes('"Cache consistency check failed"'));
    assert.ok(failed, `no error line in:\n${lines.join('')}`);
    assert.match(failed, /^E\d{4} /);
    assert.match(
      failed,
      / group="" resource="configmaps" resourceVersion="\d+" storageDigest="[0-9a-f]{16}" cacheDigest="[0-9a-f]{16}" diffDetail="index=\d+ cache=.* storage=\/registry\/configmaps\/default\/lost-one@\d+"/,
    );
    // The cache is passed over: lists come from storage, which has the object.
    const names = await kc.ok(['get', 'configmaps', '-o', 'jsonpath={.items[*].metadata.name}']);
    assert.match(names, /\blost-one\b/);
  });
});
