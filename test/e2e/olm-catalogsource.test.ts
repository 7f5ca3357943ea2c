// OLM's catalog APIs on kplane (issue 27, first step): a CatalogSource of sourceType grpc pointing
// at a real `kplane catalog serve` process, applied with kubectl 1.33; its status.connectionState as
// OLM writes it (READY, TRANSIENT_FAILURE when the catalog server goes away, not READY with a
// message when the address answers garbage); `kubectl get packagemanifests` (1.33 and 1.20) with
// the package server's CATALOG column, labels and channels; the global catalog namespace; bad
// CatalogSources answered 422.
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { buildCatalogImage, pushImage } from '../../src/catalog/oci/index.js';
import { defaultModules } from '../../src/controlplane/modules.js';
import { olm } from '../../src/controlplane/olm-module.js';
import { eventually } from '../support/eventually.js';
import { adminCredentials, RawClient } from '../support/https.js';
import { kubectlSession, type KubectlSession } from '../support/kubectl.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { run, tools } from '../support/tools.js';
import { kplaneProcesses } from '../support/kplane-process.js';
import { startRegistry, type RunningRegistry } from '../support/registry.js';
import { serveCatalog, stopCatalog, type ServedCatalog } from '../support/catalog-serve.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const catalogDir = join(root, 'src/catalog/serve/testdata/simple');

const catalogSource = (name: string, namespace: string, address: string, extra = ''): string =>
  [
    'apiVersion: operators.coreos.com/v1alpha1',
    'kind: CatalogSource',
    'metadata:',
    `  name: ${name}`,
    `  namespace: ${namespace}`,
    'spec:',
    '  sourceType: grpc',
    `  address: "${address}"`,
    '  displayName: Simple Operators',
    '  publisher: kplane tests',
    extra,
    '',
  ].join('\n');

describe('OLM CatalogSource and PackageManifest', { timeout: 300_000 }, () => {
  let server: TestServer;
  let raw: RawClient;
  let kc: KubectlSession;
  let kc120: KubectlSession;
  let dir: string;
  let catalog: ServedCatalog | undefined;
  let globalCatalog: ServedCatalog | undefined;
  let garbage: Server | undefined;

  before(async () => {
    catalog = await serveCatalog(catalogDir);
    server = await startTestServer({
      storage: 'memory',
      apis: [...defaultModules(), olm({ initialBackoffMs: 100, maxBackoffMs: 1000, log: () => {} })],
    });
    raw = new RawClient(server.url, adminCredentials(server.dataDir));
    dir = await mkdtemp(join(tmpdir(), 'kplane-olm-'));
    kc = kubectlSession(tools.kubectl, server.kubeconfig, dir);
    kc120 = kubectlSession(tools.kubectl120, server.kubeconfig, join(dir, '120'));
  });

  after(async () => {
    await stopCatalog(catalog);
    await stopCatalog(globalCatalog);
    garbage?.close();
    raw?.close();
    await server?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const state = async (name: string, namespace = 'default'): Promise<Record<string, unknown>> => {
    const out = await kc.ok(['get', 'catalogsource', name, '-n', namespace, '-o', 'json']);
    return (JSON.parse(out) as { status?: Record<string, unknown> }).status ?? {};
  };
  const observed = (s: Record<string, unknown>): string | undefined => (s.connectionState as { lastObservedState?: string } | undefined)?.lastObservedState;

  it('connects a CatalogSource at an address: READY, with the connection as OLM reports it', async () => {
    const address = `127.0.0.1:${catalog!.port}`;
    const out = await kc.ok(['apply', '-f', await kc.file('cs.yaml', catalogSource('simple', 'default', address))]);
    assert.match(out, /catalogsource.operators.coreos.com\/simple created/);
    const status = await eventually(30_000, 'the CatalogSource to be READY', async () => {
      const s = await state('simple');
      return observed(s) === 'READY' ? s : undefined;
    });
    const conn = status.connectionState as Record<string, string>;
    assert.equal(conn.address, address);
    assert.match(conn.lastConnect ?? '', /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    assert.equal(status.message, undefined);

    const table = await kc.ok(['get', 'catalogsources', '-n', 'default']);
    assert.match(table, /^NAME\s+DISPLAY\s+TYPE\s+PUBLISHER\s+AGE\n/);
    assert.match(table, /^simple\s+Simple Operators\s+grpc\s+kplane tests\s+\S+\n/m);
  });

  it("lists the catalog's packages with kubectl get packagemanifests (1.33 and 1.20)", async () => {
    for (const session of [kc, kc120]) {
      const out = await eventually(30_000, 'the packages to be listed', async () => {
        const r = await session.k(['get', 'packagemanifests', '-n', 'default']);
        return r.code === 0 && r.stdout.includes('strimzi-kafka-operator') ? r.stdout : undefined;
      });
      const lines = out.trimEnd().split('\n');
      assert.match(lines[0]!, /^NAME\s+CATALOG\s+AGE$/);
      assert.deepEqual(
        lines.slice(1).map((l) => l.split(/\s{2,}/).slice(0, 2)),
        [
          ['etcd', 'Simple Operators'],
          ['prometheus', 'Simple Operators'],
          ['strimzi-kafka-operator', 'Simple Operators'],
        ],
      );
    }
  });

  it('shows a package with its channels, default channel and current CSVs (-o yaml)', async () => {
    const yaml = await kc.ok(['get', 'packagemanifest', 'etcd', '-n', 'default', '-o', 'yaml']);
    assert.match(yaml, /^kind: PackageManifest$/m);
    assert.match(yaml, /^apiVersion: packages.operators.coreos.com\/v1$/m);
    assert.match(yaml, /^ {2}defaultChannel: alpha$/m);
    assert.match(yaml, /currentCSV: etcdoperator.v0.9.2/);
    assert.match(yaml, /currentCSVDesc:/);

    const pm = JSON.parse(await kc.ok(['get', 'packagemanifest', 'etcd', '-n', 'default', '-o', 'json'])) as {
      metadata: { namespace: string; labels: Record<string, string> };
      status: Record<string, unknown> & {
        channels: { name: string; currentCSV: string; currentCSVDesc: Record<string, unknown>; entries?: { name: string }[] }[];
      };
    };
    assert.equal(pm.metadata.namespace, 'default');
    assert.equal(pm.metadata.labels.catalog, 'simple');
    assert.equal(pm.metadata.labels['catalog-namespace'], 'default');
    assert.equal(pm.metadata.labels['operatorframework.io/arch.amd64'], 'supported');
    assert.equal(pm.metadata.labels['operatorframework.io/os.linux'], 'supported');
    assert.equal(pm.status.catalogSource, 'simple');
    assert.equal(pm.status.catalogSourceNamespace, 'default');
    assert.equal(pm.status.catalogSourceDisplayName, 'Simple Operators');
    assert.equal(pm.status.catalogSourcePublisher, 'kplane tests');
    assert.equal(pm.status.packageName, 'etcd');
    assert.deepEqual(
      pm.status.channels.map((c) => [c.name, c.currentCSV]),
      [
        ['alpha', 'etcdoperator.v0.9.2'],
        ['beta', 'etcdoperator.v0.9.0'],
        ['stable', 'etcdoperator.v0.9.2'],
      ],
    );
    const alpha = pm.status.channels[0]!;
    assert.equal(alpha.currentCSVDesc.version, '0.9.2');
    assert.equal(typeof alpha.currentCSVDesc.displayName, 'string');
    assert.equal(alpha.currentCSVDesc.icon, undefined, 'icons are stripped, as the package server does');
    assert.deepEqual(alpha.entries?.map((e) => e.name).sort(), ['etcdoperator.v0.6.1', 'etcdoperator.v0.9.0', 'etcdoperator.v0.9.2']);

    // Label selectors, and a package that is not there.
    const selected = await kc.ok(['get', 'packagemanifests', '-n', 'default', '-l', 'catalog=simple', '-o', 'name']);
    assert.equal(selected.trim().split('\n').length, 3);
    const missing = await kc.k(['get', 'packagemanifest', 'nope', '-n', 'default']);
    assert.notEqual(missing.code, 0);
    assert.match(missing.stderr, /packagemanifests.packages.operators.coreos.com "nope" not found/);
    // Read-only.
    const post = await raw.request({
      method: 'POST',
      path: '/apis/packages.operators.coreos.com/v1/namespaces/default/packagemanifests',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ apiVersion: 'packages.operators.coreos.com/v1', kind: 'PackageManifest', metadata: { name: 'x' } }),
    });
    assert.equal(post.status, 405);
  });

  it('re-applies a changed CatalogSource (kubectl 1.20 and 1.33) and shows the new display name', async () => {
    const address = `127.0.0.1:${catalog!.port}`;
    for (const [session, name] of [
      [kc120, 'Renamed Operators'],
      [kc, 'Simple Operators'],
    ] as const) {
      const yaml = catalogSource('simple', 'default', address).replace('Simple Operators', name);
      const out = await session.ok(['apply', '-f', await session.file('cs-renamed.yaml', yaml)]);
      assert.match(out, /catalogsource.operators.coreos.com\/simple configured/);
      await eventually(30_000, `the packages under ${name}`, async () => {
        const r = await kc.ok(['get', 'packagemanifests', '-n', 'default', '-o', 'jsonpath={.items[*].status.catalogSourceDisplayName}']);
        return r === [name, name, name].join(' ') ? true : undefined;
      });
    }
    const cs = JSON.parse(await kc.ok(['get', 'catsrc', 'simple', '-n', 'default', '-o', 'json'])) as { metadata: { generation: number } };
    assert.equal(cs.metadata.generation, 3);
  });

  it("shows the global catalog namespace's packages in every namespace", async () => {
    await kc.ok(['create', 'namespace', 'olm']);
    await kc.ok(['create', 'namespace', 'team-a']);
    // A watch in team-a (from now on) sees the global catalog's packages arrive.
    const abort = new AbortController();
    const client = server.cp.loopbackClient();
    const pmGVR = { group: 'packages.operators.coreos.com', version: 'v1', resource: 'packagemanifests' };
    const listed = await client.list(pmGVR, 'team-a');
    assert.equal(listed.items.length, 0);
    const added: string[] = [];
    const watching = (async () => {
      for await (const ev of client.watch(pmGVR, 'team-a', { signal: abort.signal, resourceVersion: listed.metadata?.resourceVersion ?? '' })) {
        added.push(`${ev.type} ${ev.object.metadata?.namespace}/${ev.object.metadata?.name}`);
        if (added.length === 3) break;
      }
    })();
    globalCatalog = await serveCatalog(catalogDir);
    await kc.ok(['apply', '-f', await kc.file('global.yaml', catalogSource('global', 'olm', `127.0.0.1:${globalCatalog.port}`))]);
    const out = await eventually(30_000, 'the global packages in team-a', async () => {
      const r = await kc.k(['get', 'packagemanifests', '-n', 'team-a', '-o', 'json']);
      const items = r.code === 0 ? (JSON.parse(r.stdout) as { items: { metadata: { namespace: string; labels: Record<string, string> } }[] }).items : [];
      return items.length === 3 ? items : undefined;
    });
    await watching;
    abort.abort();
    assert.deepEqual(added.sort(), ['ADDED team-a/etcd', 'ADDED team-a/prometheus', 'ADDED team-a/strimzi-kafka-operator']);
    for (const item of out) {
      assert.equal(item.metadata.namespace, 'team-a');
      assert.equal(item.metadata.labels['catalog-namespace'], 'olm');
    }
    // A namespace's own catalog comes first where both have a package (the provider's Get takes the first).
    const own = await kc.ok(['get', 'packagemanifests', '-n', 'default', '-o', 'jsonpath={.items[*].metadata.labels.catalog}']);
    assert.equal(own, 'simple simple simple');
    // All namespaces: each package in its CatalogSource's namespace.
    const all = await kc.ok(['get', 'packagemanifests', '-A', '-o', 'custom-columns=NS:.metadata.namespace,NAME:.metadata.name', '--no-headers']);
    assert.deepEqual(
      all
        .trim()
        .split('\n')
        .map((l) => l.split(/\s+/).join('/')),
      ['default/etcd', 'default/prometheus', 'default/strimzi-kafka-operator', 'olm/etcd', 'olm/prometheus', 'olm/strimzi-kafka-operator'],
    );
  });

  it('reports TRANSIENT_FAILURE when the catalog server stops, and READY again when it is back', async () => {
    const port = catalog!.port;
    await stopCatalog(catalog);
    await eventually(30_000, 'TRANSIENT_FAILURE', async () => (observed(await state('simple')) === 'TRANSIENT_FAILURE' ? true : undefined));
    const s = await eventually(30_000, 'a message', async () => {
      const st = await state('simple');
      return typeof st.message === 'string' ? st : undefined;
    });
    assert.match(s.message as string, new RegExp(`failed to connect to registry server at 127.0.0.1:${port}: rpc error: code = Unavailable`));
    assert.equal(s.reason, 'RegistryServerError');
    // Its packages are gone (the package server drops a failed catalog's packages); the global ones stay.
    const pms = await eventually(30_000, 'the packages of the failed catalog to go', async () => {
      const r = await kc.ok(['get', 'packagemanifests', '-n', 'default', '-o', 'jsonpath={.items[*].metadata.labels.catalog}']);
      return r.split(' ').every((c) => c === 'global') ? r : undefined;
    });
    assert.equal(pms.split(' ').length, 3);

    catalog = await serveCatalog(catalogDir, port);
    const back = await eventually(60_000, 'READY again', async () => {
      const st = await state('simple');
      return observed(st) === 'READY' ? st : undefined;
    });
    assert.equal(back.message, undefined);
  });

  it('an address that answers garbage (HTTP/1) is not READY and says why', async () => {
    garbage = createServer((_req, res) => res.end('not a registry'));
    await new Promise<void>((r) => garbage!.listen(0, '127.0.0.1', r));
    const address = `127.0.0.1:${(garbage.address() as AddressInfo).port}`;
    await kc.ok(['apply', '-f', await kc.file('garbage.yaml', catalogSource('garbage', 'default', address))]);
    const s = await eventually(30_000, 'a failure with a message', async () => {
      const st = await state('garbage');
      return typeof st.message === 'string' && observed(st) ? st : undefined;
    });
    assert.notEqual(observed(s), 'READY');
    assert.match(s.message as string, new RegExp(`failed to connect to registry server at ${address}`));
    const pms = await kc.ok(['get', 'packagemanifests', '-n', 'default', '-l', 'catalog=garbage', '-o', 'name']);
    assert.equal(pms.trim(), '');
  });

  it('refuses an invalid CatalogSource with 422', async () => {
    const bad =
      'apiVersion: operators.coreos.com/v1alpha1\nkind: CatalogSource\nmetadata: {name: bad, namespace: default}\nspec: {priority: high, address: 5}\n';
    const r = await kc.k(['apply', '-f', await kc.file('bad.yaml', bad)]);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /The CatalogSource "bad" is invalid/);
    assert.match(r.stderr, /spec.sourceType: Required value/);
    assert.match(r.stderr, /spec.priority: Invalid value: "string": spec.priority in body must be of type integer: "string"/);
    const res = await raw.request({
      method: 'POST',
      path: '/apis/operators.coreos.com/v1alpha1/namespaces/default/catalogsources',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ apiVersion: 'operators.coreos.com/v1alpha1', kind: 'CatalogSource', metadata: { name: 'nospec' } }),
    });
    assert.equal(res.status, 422);
    const st = res.json<{ reason: string; details: { causes: { field: string; reason: string }[] } }>();
    assert.equal(st.reason, 'Invalid');
    assert.deepEqual(
      st.details.causes.map((c) => [c.field, c.reason]),
      [['spec', 'FieldValueRequired']],
    );
    // A sourceType kplane does not serve is accepted and explained in the status.
    await kc.ok([
      'apply',
      '-f',
      await kc.file(
        'cm.yaml',
        'apiVersion: operators.coreos.com/v1alpha1\nkind: CatalogSource\nmetadata: {name: cm, namespace: default}\nspec: {sourceType: configmap, configMap: x}\n',
      ),
    ]);
    const s = await eventually(30_000, 'a spec error', async () => {
      const st2 = await state('cm');
      return st2.reason ? st2 : undefined;
    });
    assert.equal(s.reason, 'SpecInvalidError');
    assert.equal(s.message, 'sourcetype configmap is not served by kplane: use sourcetype grpc with spec.address');
    await kc.ok([
      'apply',
      '-f',
      await kc.file(
        'none.yaml',
        'apiVersion: operators.coreos.com/v1alpha1\nkind: CatalogSource\nmetadata: {name: none, namespace: default}\nspec: {sourceType: grpc}\n',
      ),
    ]);
    const none = await eventually(30_000, 'a spec error', async () => {
      const st2 = await state('none');
      return st2.reason ? st2 : undefined;
    });
    assert.equal(none.message, 'image and address unset: at least one must be set for sourcetype: grpc');
  });
});

describe('kplane serve --modules=olm --global-catalog-namespace', { timeout: 300_000 }, () => {
  const procs = kplaneProcesses({ startTimeoutMs: 120_000 });
  let dir = '';
  let catalog: ServedCatalog | undefined;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kplane-olm-cli-'));
  });
  after(async () => {
    procs.killAll();
    await stopCatalog(catalog);
    await rm(dir, { recursive: true, force: true });
  });

  it('refuses a global catalog namespace that is not a DNS label, naming the flag', async () => {
    const r = await run(
      process.execPath,
      [
        '--import',
        'tsx',
        join(root, 'src/cli/main.ts'),
        'serve',
        '--data-dir',
        join(dir, 'bad'),
        '--secure-port',
        '0',
        '--modules=olm',
        '--global-catalog-namespace',
        'Not_A_Label',
      ],
      {
        timeoutMs: 60_000,
      },
    );
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /^kplane: invalid argument "Not_A_Label" for "--global-catalog-namespace" flag: /);
  });

  it("serves the OLM APIs, and the given namespace's catalogs in every namespace", async () => {
    catalog = await serveCatalog(catalogDir);
    const dataDir = join(dir, 'data');
    const server = await procs.start(
      ['serve', '--data-dir', dataDir, '--secure-port', '0', '--controllers=false', '--modules=olm', '--global-catalog-namespace=shared'],
      /^kplane is serving on \S+/m,
    );
    const kc = kubectlSession(tools.kubectl, join(dataDir, 'admin.kubeconfig'), dir);
    const resources = await kc.ok(['api-resources', '--api-group=operators.coreos.com', '-o', 'name']);
    assert.deepEqual(resources.trim().split('\n').sort(), [
      'catalogsources.operators.coreos.com',
      'clusterserviceversions.operators.coreos.com',
      'installplans.operators.coreos.com',
      'operatorgroups.operators.coreos.com',
      'subscriptions.operators.coreos.com',
    ]);
    await kc.ok(['create', 'namespace', 'shared']);
    await kc.ok(['apply', '-f', await kc.file('shared.yaml', catalogSource('shared', 'shared', `127.0.0.1:${catalog.port}`))]);
    const out = await eventually(60_000, 'the shared catalog in default', async () => {
      const r = await kc.k(['get', 'packagemanifests', '-n', 'default', '-o', 'name']);
      return r.code === 0 && r.stdout.trim().split('\n').length === 3 ? r.stdout : undefined;
    });
    assert.match(out, /packagemanifest.packages.operators.coreos.com\/etcd/);
    server.child.kill('SIGTERM');
    await server.exited;
  });
});

describe('OLM CatalogSource with spec.image', { timeout: 300_000 }, () => {
  let server: TestServer;
  let kc: KubectlSession;
  let dir: string;
  let registry: RunningRegistry;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kplane-olm-image-'));
    registry = await startRegistry();
    server = await startTestServer({
      storage: 'memory',
      apis: [...defaultModules(), olm({ initialBackoffMs: 100, maxBackoffMs: 1000, imageCacheDir: join(dir, 'cache'), pullRetryMs: 200, log: () => {} })],
    });
    kc = kubectlSession(tools.kubectl, server.kubeconfig, dir);
  });
  after(async () => {
    await server?.stop();
    await registry?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  /** Builds a catalog image of `catalogDir` and pushes it as `ref`. */
  async function publish(catalogDir: string, ref: string, layout: string): Promise<string> {
    buildCatalogImage(catalogDir, { layoutDir: join(dir, layout), tag: 'latest' });
    return (await pushImage(`oci:${join(dir, layout)}:latest`, ref, { cacheDir: join(dir, 'cache') })).digest;
  }

  const status = async (name: string): Promise<Record<string, unknown>> =>
    (JSON.parse(await kc.ok(['get', 'catalogsource', name, '-n', 'default', '-o', 'json'])) as { status?: Record<string, unknown> }).status ?? {};

  it('pulls the catalog image, serves it in process, and polls the tag for a new digest', async () => {
    const ref = `${registry.host}/catalogs/simple:latest`;
    await publish(catalogDir, ref, 'layout-v1');
    const spec = `spec:\n  sourceType: grpc\n  image: ${ref}\n  displayName: Image Catalog\n  updateStrategy:\n    registryPoll:\n      interval: 500ms\n`;
    await kc.ok([
      'apply',
      '-f',
      await kc.file('image.yaml', `apiVersion: operators.coreos.com/v1alpha1\nkind: CatalogSource\nmetadata: {name: image, namespace: default}\n${spec}`),
    ]);
    const ready = await eventually(60_000, 'the image catalog READY', async () => {
      const s = await status('image');
      return (s.connectionState as { lastObservedState?: string } | undefined)?.lastObservedState === 'READY' ? s : undefined;
    });
    assert.match((ready.connectionState as { address: string }).address, /^127\.0\.0\.1:\d+$/);
    assert.equal((ready.registryService as { protocol: string }).protocol, 'grpc');
    assert.match(String(ready.latestImageRegistryPoll), /^\d{4}-\d\d-\d\dT/);
    const names = await eventually(30_000, "the image catalog's packages", async () => {
      const r = await kc.ok(['get', 'packagemanifests', '-n', 'default', '-l', 'catalog=image', '-o', 'name']);
      return r.trim().split('\n').length === 3 ? r : undefined;
    });
    assert.match(names, /packagemanifest.packages.operators.coreos.com\/etcd/);

    // A new catalog under the same tag (only etcd left): the next poll serves it.
    const smaller = join(dir, 'smaller');
    await mkdir(smaller);
    const text = await readFile(join(catalogDir, 'catalog.json'), 'utf8');
    const blobs: Record<string, unknown>[] = [];
    const decoder = /\{[\s\S]*?\n\}/g;
    for (const m of text.match(decoder) ?? []) blobs.push(JSON.parse(m) as Record<string, unknown>);
    const etcdOnly = blobs.filter((b) => b.name === 'etcd' || b.package === 'etcd');
    await writeFile(join(smaller, 'catalog.json'), etcdOnly.map((b) => JSON.stringify(b, null, 2)).join('\n'));
    await publish(smaller, ref, 'layout-v2');
    const after = await eventually(60_000, 'the new digest served', async () => {
      const r = await kc.ok(['get', 'packagemanifests', '-n', 'default', '-l', 'catalog=image', '-o', 'name']);
      return r.trim() === 'packagemanifest.packages.operators.coreos.com/etcd' ? r : undefined;
    });
    assert.ok(after);
  });

  it('says why when the image cannot be pulled', async () => {
    const ref = `${registry.host}/catalogs/missing:v1`;
    await kc.ok([
      'apply',
      '-f',
      await kc.file(
        'missing.yaml',
        `apiVersion: operators.coreos.com/v1alpha1\nkind: CatalogSource\nmetadata: {name: missing, namespace: default}\nspec: {sourceType: grpc, image: "${ref}"}\n`,
      ),
    ]);
    const s = await eventually(60_000, 'a pull error', async () => {
      const st = await status('missing');
      return typeof st.message === 'string' ? st : undefined;
    });
    assert.equal(s.reason, 'RegistryServerError');
    assert.match(s.message as string, new RegExp(`^couldn't ensure registry server - failed to pull catalog image ${ref.replace(/[.]/g, '\\.')}: `));
  });
});
