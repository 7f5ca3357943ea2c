// `kplane serve --etcd-compaction-interval`: history is compacted by time, on SQLite as on etcd, as
// kube-apiserver compacts etcd. Upstream's conformance test "should support continue listing from
// the last key if the original version has been compacted away, though the list is inconsistent"
// (test/e2e/apimachinery/chunking.go), driven here with @kubernetes/client-node against a quiet
// server (with ConfigMaps where upstream lists PodTemplates, which kplane does not serve), plus
// kubectl 1.33 for the text a user reads and a watch from the compacted revision.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import * as k8s from '@kubernetes/client-node';
import { startEtcd, type RunningEtcd } from '../support/etcd.js';
import { kplaneProcesses } from '../support/kplane-process.js';
import { kubectlSession } from '../support/kubectl.js';
import { ensureTools, run, tools } from '../support/tools.js';

// storage.errInconsistentContinue / inconsistentContinue of k8s.io/apiserver's etcd3 store.
const INCONSISTENT_CONTINUE =
  'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.';

const TOTAL = 40;
const LIMIT = TOTAL / 10;

function statusOf(e: unknown): Record<string, unknown> {
  assert.ok(e instanceof k8s.ApiException, `expected ApiException, got ${String(e)}`);
  const raw: unknown = (e as k8s.ApiException<unknown>).body;
  return (typeof raw === 'string' ? JSON.parse(raw) : raw) as Record<string, unknown>;
}

for (const backend of ['sqlite', 'etcd'] as const) {
  describe(`kplane serve --storage ${backend} --etcd-compaction-interval 1s`, { timeout: 300_000 }, () => {
    const procs = kplaneProcesses();
    let dir: string;
    let etcd: RunningEtcd | undefined;
    let kubeconfig: string;
    let core: k8s.CoreV1Api;
    let kc: k8s.KubeConfig;
    const NS = 'chunking';

    before(async () => {
      ensureTools();
      dir = await mkdtemp(join(tmpdir(), `kplane-compaction-${backend}-`));
      const storageArgs = backend === 'etcd' ? ['--storage', 'etcd', '--etcd-servers', (etcd = await startEtcd()).endpoint] : [];
      // Without the controllers nothing writes on its own: only the compactor moves the revision.
      await procs.start(
        ['serve', '--data-dir', dir, '--secure-port', '0', '--controllers=false', '--etcd-compaction-interval', '1s', ...storageArgs],
        /kplane is serving on https:\/\/\S+/,
      );
      kubeconfig = join(dir, 'admin.kubeconfig');
      kc = new k8s.KubeConfig();
      kc.loadFromFile(kubeconfig);
      core = kc.makeApiClient(k8s.CoreV1Api);
      await core.createNamespace({ body: { metadata: { name: NS } } });
      for (let i = 0; i < TOTAL; i++) {
        await core.createNamespacedConfigMap({
          namespace: NS,
          body: { metadata: { name: `template-${String(i).padStart(4, '0')}` }, data: { i: String(i) } },
        });
      }
    });

    after(async () => {
      procs.killAll();
      await etcd?.stop();
      await rm(dir, { recursive: true, force: true });
    });

    it('a continue token expires once its revision is compacted: 410 Expired with an inconsistent continue token', async () => {
      const first = await core.listNamespacedConfigMap({ namespace: NS, limit: LIMIT });
      const firstToken = first.metadata?._continue;
      const firstRV = first.metadata?.resourceVersion;
      assert.ok(firstToken, 'the first page has a continue token');
      assert.equal(first.items.length, LIMIT);

      // As chunking.go: retry the second page until the token expires (upstream polls every 20 s
      // for two compaction intervals; here the interval is 1 s and the loop only guards against a hang).
      let expired: Record<string, unknown> | undefined;
      for (const deadline = Date.now() + 60_000; expired === undefined && Date.now() < deadline; ) {
        try {
          await core.listNamespacedConfigMap({ namespace: NS, limit: LIMIT, _continue: firstToken });
          await new Promise((r) => setTimeout(r, 200));
        } catch (e) {
          expired = statusOf(e);
        }
      }
      assert.ok(expired, 'the continue token never expired');
      assert.equal(expired.kind, 'Status');
      assert.equal(expired.status, 'Failure');
      assert.equal(expired.code, 410);
      assert.equal(expired.reason, 'Expired');
      assert.equal(expired.message, INCONSISTENT_CONTINUE);
      const inconsistentToken = (expired.metadata as { continue?: string } | undefined)?.continue;
      assert.ok(inconsistentToken, 'the 410 offers a continue token');

      // The offered token lists the rest at the latest revision, page by page, without a gap.
      const second = await core.listNamespacedConfigMap({ namespace: NS, limit: LIMIT, _continue: inconsistentToken });
      assert.notEqual(second.metadata?.resourceVersion, firstRV);
      assert.equal(second.items.length, LIMIT);
      assert.ok(second.metadata?._continue, 'more pages follow');
      const names: (string | undefined)[] = [...first.items, ...second.items].map((t) => t.metadata?.name);
      let token: string | undefined = second.metadata?._continue;
      while (token) {
        const page = await core.listNamespacedConfigMap({ namespace: NS, limit: LIMIT, _continue: token });
        names.push(...page.items.map((t) => t.metadata?.name));
        token = page.metadata?._continue;
      }
      assert.deepEqual(
        names,
        Array.from({ length: TOTAL }, (_, i) => `template-${String(i).padStart(4, '0')}`),
      );

      // What kubectl 1.33 shows for the expired token.
      const kdir = await mkdtemp(join(tmpdir(), 'kplane-compaction-kubectl-'));
      try {
        const r = await kubectlSession(tools.kubectl, kubeconfig, kdir).k([
          'get',
          '--raw',
          `/api/v1/namespaces/${NS}/configmaps?limit=${LIMIT}&continue=${encodeURIComponent(firstToken)}`,
        ]);
        assert.equal(r.code, 1, r.stdout);
        assert.equal(r.stderr.trim(), `Error from server (Expired): ${INCONSISTENT_CONTINUE}`);
      } finally {
        await rm(kdir, { recursive: true, force: true });
      }
    });

    it('a watch from a compacted resourceVersion gets an ERROR event, 410 "too old resource version"; a recent one resumes', async () => {
      const old = await core.listNamespacedConfigMap({ namespace: NS });
      const oldRV = old.metadata!.resourceVersion!;
      // Wait (as a client would retry) until a list at that revision is expired, i.e. compacted.
      for (const deadline = Date.now() + 60_000; Date.now() < deadline; ) {
        const r = await core.listNamespacedConfigMap({ namespace: NS, resourceVersion: oldRV, resourceVersionMatch: 'Exact' }).catch(statusOf);
        if ('code' in r && r.code === 410) break;
        await new Promise((res) => setTimeout(res, 200));
      }
      const events: { type: string; obj: Record<string, unknown> }[] = [];
      const ended = new Promise<unknown>((resolve) => {
        void new k8s.Watch(kc).watch(
          `/api/v1/namespaces/${NS}/configmaps`,
          // A watch that wrongly starts would otherwise wait for events for ever.
          { resourceVersion: oldRV, timeoutSeconds: 30 },
          (type: string, obj: Record<string, unknown>) => events.push({ type, obj }),
          resolve,
        );
      });
      assert.equal(await ended, null, 'the server ends the watch after the ERROR event');
      assert.equal(events.length, 1, JSON.stringify(events));
      assert.equal(events[0]!.type, 'ERROR');
      const st = events[0]!.obj;
      assert.equal(st.kind, 'Status');
      assert.equal(st.status, 'Failure');
      assert.equal(st.code, 410);
      assert.equal(st.reason, 'Expired');
      assert.match(String(st.message), new RegExp(`^too old resource version: ${oldRV} \\(\\d+\\)$`));

      // A watch from a fresh list's revision still resumes: compaction keeps the last interval.
      const fresh = await core.listNamespacedConfigMap({ namespace: NS });
      const seen: string[] = [];
      const controller = await new k8s.Watch(kc).watch(
        `/api/v1/namespaces/${NS}/configmaps`,
        { resourceVersion: fresh.metadata!.resourceVersion! },
        (type: string, obj: k8s.V1ConfigMap) => seen.push(`${type} ${obj.metadata?.name}`),
        () => undefined,
      );
      try {
        await core.createNamespacedConfigMap({
          namespace: NS,
          body: { metadata: { name: 'after-compaction' } },
        });
        for (const deadline = Date.now() + 10_000; seen.length === 0 && Date.now() < deadline; ) await new Promise((r) => setTimeout(r, 25));
        assert.deepEqual(seen, ['ADDED after-compaction']);
      } finally {
        controller.abort();
      }
    });
  });
}

describe('kplane serve --etcd-compaction-interval: bad values', () => {
  for (const [value, message] of [
    ['5', /^kplane: invalid argument "5" for "--etcd-compaction-interval" flag: time: missing unit in duration "5"$/m],
    ['-1s', /^kplane: --etcd-compaction-interval can not be negative value$/m],
  ] as const) {
    it(`refuses ${value}`, async () => {
      const r = await run(
        process.execPath,
        ['--import', 'tsx', 'src/cli/main.ts', 'serve', '--data-dir', '/nonexistent/never-created', `--etcd-compaction-interval=${value}`],
        {
          timeoutMs: 30_000,
        },
      );
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, message);
    });
  }
});
