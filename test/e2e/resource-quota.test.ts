// ResourceQuota through real clients: kubectl 1.20 and 1.33 create a quota and read it back with
// `get` (upstream's REQUEST/LIMIT columns) and `describe` (used/hard kept current by the quota
// controller as ConfigMaps and custom resources come and go); a create over the quota is upstream's
// 403; creates racing at the limit store exactly the limit; bad quotas are 422s with upstream's paths.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { resourceQuotaController } from '../../src/controllers/index.js';
import { crdObject, waitServed } from '../support/crd.js';
import { eventually } from '../support/eventually.js';
import { adminCredentials, RawClient } from '../support/https.js';
import { KUBECTLS, kubectlSession } from '../support/kubectl.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { ensureTools } from '../support/tools.js';

ensureTools();

interface Quota {
  metadata: { name: string; resourceVersion: string };
  status?: { hard?: Record<string, string>; used?: Record<string, string> };
}

interface StatusBody {
  code: number;
  reason: string;
  message: string;
  details?: { causes?: { field: string; message: string }[] };
}

describe('ResourceQuota', () => {
  let server: TestServer;
  let raw: RawClient;
  let dir: string;
  const send = async (method: string, path: string, body?: unknown) => {
    const r = await raw.request({ method, path, ...(body ? { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) } : {}) });
    return { status: r.status, body: r.json<Record<string, unknown>>() };
  };
  const quota = async (ns: string, name: string): Promise<Quota> =>
    (await send('GET', `/api/v1/namespaces/${ns}/resourcequotas/${name}`)).body as unknown as Quota;
  /** Waits until the controller shows `used` for the quota. */
  const usedBecomes = (ns: string, name: string, want: Record<string, string>) =>
    eventually(10_000, `${ns}/${name} used ${JSON.stringify(want)}`, async () => {
      const q = await quota(ns, name);
      return Object.entries(want).every(([k, v]) => q.status?.used?.[k] === v) ? q : undefined;
    });
  const configMap = (ns: string, name: string) => send('POST', `/api/v1/namespaces/${ns}/configmaps`, { metadata: { name } });

  before(async () => {
    server = await startTestServer({ storage: 'memory', controllers: [resourceQuotaController()] });
    raw = new RawClient(server.url, adminCredentials(server.dataDir));
    dir = await mkdtemp(join(tmpdir(), 'kplane-quota-'));
    const crd = crdObject({ group: 'example.com', plural: 'widgets', kind: 'Widget', spec: { type: 'object', properties: { size: { type: 'integer' } } } });
    assert.equal((await send('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', crd)).status, 201);
    await waitServed(raw, '/apis/example.com/v1/widgets');
  });
  after(async () => {
    raw?.close();
    await server?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  for (const { name: version, bin } of KUBECTLS) {
    it(`kubectl ${version}: create quota, get and describe it as used changes, 403 over the quota`, async () => {
      const kc = kubectlSession(bin, server.kubeconfig, join(dir, version));
      const ns = `quota-${version.replace('.', '-')}`;
      await kc.ok(['create', 'namespace', ns]);
      await kc.ok(['create', 'quota', 'objects', '-n', ns, '--hard=count/configmaps=2,count/widgets.example.com=1,secrets=5']);
      await usedBecomes(ns, 'objects', { 'count/configmaps': '0', 'count/widgets.example.com': '0', secrets: '0' });
      const q = await quota(ns, 'objects');
      assert.deepEqual(q.status?.hard, { 'count/configmaps': '2', 'count/widgets.example.com': '1', secrets: '5' });

      // Two ConfigMaps fit; the third is refused with upstream's message, and nothing is stored.
      await kc.ok(['create', 'configmap', 'a', '-n', ns]);
      await kc.ok(['create', 'configmap', 'b', '-n', ns]);
      const over = await kc.k(['create', 'configmap', 'c', '-n', ns]);
      assert.notEqual(over.code, 0);
      assert.match(
        over.stderr,
        // 1.20 prints the Status as "Error from server (Forbidden): …", 1.33 as "error: failed to create configmap: …"
        /configmaps "c" is forbidden: exceeded quota: objects, requested: count\/configmaps=1, used: count\/configmaps=2, limited: count\/configmaps=2/,
      );
      assert.equal((await send('GET', `/api/v1/namespaces/${ns}/configmaps/c`)).status, 404);

      const get = await kc.ok(['get', 'quota', '-n', ns]);
      assert.match(get, /^NAME\s+AGE\s+REQUEST\s+LIMIT\n/);
      assert.match(get, /objects\s+\S+\s+count\/configmaps: 2\/2, count\/widgets\.example\.com: 0\/1, secrets: 0\/5\s*\n/);

      let described = await kc.ok(['describe', 'quota', 'objects', '-n', ns]);
      assert.match(described, /Resource\s+Used\s+Hard\n/);
      assert.match(described, /count\/configmaps\s+2\s+2\n/);

      // A deletion gives the quota back (the controller recounts), and the next create fits.
      await kc.ok(['delete', 'configmap', 'a', '-n', ns]);
      await usedBecomes(ns, 'objects', { 'count/configmaps': '1' });
      await kc.ok(['create', 'configmap', 'c', '-n', ns]);
      described = await kc.ok(['describe', 'quota', 'objects', '-n', ns]);
      assert.match(described, /count\/configmaps\s+2\s+2\n/);

      // Custom resources count under count/<resource>.<group>.
      const widget = (n: string) => `apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: ${n}}\nspec: {size: 1}\n`;
      await kc.ok(['create', '-n', ns, '-f', await kc.file('w1.yaml', widget('w1'))]);
      const w2 = await kc.k(['create', '-n', ns, '-f', await kc.file('w2.yaml', widget('w2'))]);
      assert.notEqual(w2.code, 0);
      assert.match(
        w2.stderr,
        /widgets\.example\.com "w2" is forbidden: exceeded quota: objects, requested: count\/widgets\.example\.com=1, used: count\/widgets\.example\.com=1, limited: count\/widgets\.example\.com=1/,
      );
      described = await kc.ok(['describe', 'quota', 'objects', '-n', ns]);
      assert.match(described, /count\/widgets\.example\.com\s+1\s+1\n/);
      await kc.ok(['delete', 'widget', 'w1', '-n', ns]);
      await usedBecomes(ns, 'objects', { 'count/widgets.example.com': '0' });
      await kc.ok(['create', '-n', ns, '-f', await kc.file('w2.yaml', widget('w2'))]);

      // Raising the hard limit is picked up by the controller.
      await kc.ok(['patch', 'quota', 'objects', '-n', ns, '--type=merge', '-p', '{"spec":{"hard":{"count/configmaps":"3"}}}']);
      await eventually(10_000, 'status.hard follows spec.hard', async () =>
        (await quota(ns, 'objects')).status?.hard?.['count/configmaps'] === '3' ? true : undefined,
      );
      await kc.ok(['create', 'configmap', 'd', '-n', ns]);
    });
  }

  it('creates racing at the limit store exactly the limit', async () => {
    const ns = 'quota-race';
    const limit = 5;
    assert.equal((await send('POST', '/api/v1/namespaces', { metadata: { name: ns } })).status, 201);
    const created = await send('POST', `/api/v1/namespaces/${ns}/resourcequotas`, {
      metadata: { name: 'cm' },
      spec: { hard: { 'count/configmaps': String(limit) } },
    });
    assert.equal(created.status, 201);
    await usedBecomes(ns, 'cm', { 'count/configmaps': '0' });
    const answers = await Promise.all(Array.from({ length: limit + 10 }, (_, i) => configMap(ns, `cm-${i}`)));
    const statuses = answers.map((a) => a.status);
    assert.equal(statuses.filter((s) => s === 201).length, limit, `answers: ${statuses.join(',')}`);
    assert.equal(statuses.filter((s) => s === 403).length, 10, `answers: ${statuses.join(',')}`);
    for (const a of answers.filter((x) => x.status === 403))
      assert.match(String(a.body.message), /exceeded quota: cm, requested: count\/configmaps=1, used: count\/configmaps=5, limited: count\/configmaps=5$/);
    const list = await send('GET', `/api/v1/namespaces/${ns}/configmaps`);
    assert.equal((list.body.items as unknown[]).length, limit);
    assert.equal((await quota(ns, 'cm')).status?.used?.['count/configmaps'], String(limit));
  });

  it('without the quota controller: a quota without status is not enforced, one whose usage is not known refuses (status unknown for quota)', async () => {
    // A second control plane without controllers: nothing writes the quotas' status but the test.
    const bare = await startTestServer({ storage: 'memory' });
    const bareRaw = new RawClient(bare.url, adminCredentials(bare.dataDir));
    try {
      const call = async (method: string, path: string, body?: unknown) => {
        const r = await bareRaw.request({ method, path, ...(body ? { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) } : {}) });
        return { status: r.status, body: r.json<Record<string, unknown>>() };
      };
      const ns = 'quota-unknown';
      assert.equal((await call('POST', '/api/v1/namespaces', { metadata: { name: ns } })).status, 201);
      const created = await call('POST', `/api/v1/namespaces/${ns}/resourcequotas`, { metadata: { name: 'q' }, spec: { hard: { 'count/configmaps': '0' } } });
      assert.equal(created.status, 201);
      // As upstream: the quota applies once status.hard names the resource.
      assert.equal((await call('POST', `/api/v1/namespaces/${ns}/configmaps`, { metadata: { name: 'before' } })).status, 201);
      const q = created.body as unknown as Quota;
      const put = await call('PUT', `/api/v1/namespaces/${ns}/resourcequotas/q/status`, { ...q, status: { hard: { 'count/configmaps': '0' } } });
      assert.equal(put.status, 200, JSON.stringify(put.body));
      const r = await call('POST', `/api/v1/namespaces/${ns}/configmaps`, { metadata: { name: 'x' } });
      assert.equal(r.status, 403);
      assert.equal(r.body.message, 'configmaps "x" is forbidden: status unknown for quota: q, resources: count/configmaps');
    } finally {
      bareRaw.close();
      await bare.stop();
    }
  });

  it('bad quotas are 422s with upstream field paths', async () => {
    const ns = 'quota-bad';
    assert.equal((await send('POST', '/api/v1/namespaces', { metadata: { name: ns } })).status, 201);
    const bad = async (spec: unknown): Promise<StatusBody> => {
      const r = await send('POST', `/api/v1/namespaces/${ns}/resourcequotas`, { metadata: { name: 'bad' }, spec });
      assert.equal(r.status, 422, JSON.stringify(r.body));
      return r.body as unknown as StatusBody;
    };
    const causes = (b: StatusBody) => b.details?.causes?.map((c) => `${c.field}: ${c.message}`);

    let b = await bad({ hard: { 'count/configmaps': '-1' } });
    assert.deepEqual(causes(b), ['spec.hard[count/configmaps]: Invalid value: "-1": must be greater than or equal to 0']);
    b = await bad({ hard: { 'count/configmaps': '1500m' } });
    assert.deepEqual(causes(b), ['spec.hard[count/configmaps]: Invalid value: "1500m": must be an integer']);
    b = await bad({ hard: { widgets: '1' } });
    assert.deepEqual(causes(b), [
      'spec.hard[widgets]: Invalid value: "widgets": must be a standard resource type or fully qualified',
      'spec.hard[widgets]: Invalid value: "widgets": must be a standard resource for quota',
    ]);
    b = await bad({ hard: { configmaps: '1' }, scopes: ['BestEffort'] });
    assert.deepEqual(causes(b), ['spec.scopes: Invalid value: ["BestEffort"]: unsupported scope applied to resource']);
    b = await bad({ hard: { 'count/configmaps': '1' }, scopes: ['Sometimes'] });
    assert.deepEqual(causes(b), ['spec.scopes: Invalid value: ["Sometimes"]: unsupported scope']);
    b = await bad({ hard: { 'count/configmaps': '1' }, scopeSelector: { matchExpressions: [{ scopeName: 'PriorityClass', operator: 'In' }] } });
    assert.deepEqual(causes(b), [
      "spec.scopeSelector.matchExpressions.values: Required value: must be at least one value when `operator` is 'In' or 'NotIn' for scope selector",
    ]);
    assert.match(b.message, /^ResourceQuota "bad" is invalid: spec\.scopeSelector\.matchExpressions\.values: Required value/);

    // A quantity that does not parse is the decoder's 400, before validation.
    const r = await send('POST', `/api/v1/namespaces/${ns}/resourcequotas`, { metadata: { name: 'bad' }, spec: { hard: { 'count/configmaps': 'lots' } } });
    assert.equal(r.status, 400);
    assert.match(String(r.body.message), /quantities must match the regular expression/);
  });
});
