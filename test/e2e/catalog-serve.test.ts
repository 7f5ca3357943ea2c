// `kplane catalog serve` as a real process, driven by a real @grpc/grpc-js client: every api.Registry
// call with upstream's expectations (operator-registry pkg/server/server_test.go, over its test
// catalogs in src/catalog/serve/testdata), the error texts and codes opm gives, the experimental
// custom-schema endpoint, grpc.health.v1, server reflection (v1alpha and v1), the cache dir and
// start-up failures.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync, appendFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { serveCatalog, type ServedCatalog } from '../support/catalog-serve.js';
import { eventually } from '../support/eventually.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const testdata = join(root, 'src/catalog/serve/testdata');
const kplane = join(root, 'bin/kplane.js');

type Served = ServedCatalog;
const serve = (dir: string, ...flags: string[]): Promise<Served> => serveCatalog(dir, 0, ...flags);

async function stop(s: Served): Promise<number | null> {
  s.proc.kill('SIGTERM');
  return s.exited;
}

const protoDef = protoLoader.loadSync([join(root, 'src/catalog/api/registry.proto'), join(root, 'src/catalog/api/health.proto')], {
  keepCase: true,
  longs: String,
  enums: String,
  defaults: true,
  oneofs: true,
});
const require = createRequire(import.meta.url);
const reflectionProtos = join(dirname(require.resolve('@grpc/reflection/package.json')), 'build/proto');
const reflectionDef = protoLoader.loadSync(
  [join(reflectionProtos, 'grpc/reflection/v1alpha/reflection.proto'), join(reflectionProtos, 'grpc/reflection/v1/reflection.proto')],
  { keepCase: true, defaults: true, includeDirs: [reflectionProtos] },
);
// The loaded packages are untyped constructors; indexing them by name is what grpc-js offers.
type Ctor = new (address: string, creds: grpc.ChannelCredentials) => grpc.Client;
const pkgs = [grpc.loadPackageDefinition(protoDef), grpc.loadPackageDefinition(reflectionDef)];
function ctor(path: string): Ctor {
  for (const pkg of pkgs) {
    let cur: unknown = pkg;
    for (const part of path.split('.')) cur = (cur as Record<string, unknown> | undefined)?.[part];
    if (cur) return cur as Ctor;
  }
  throw new Error(`no service ${path}`);
}

type Msg = Record<string, unknown>;
interface CallError {
  code: number;
  details: string;
}

class Client {
  private readonly clients = new Map<string, grpc.Client>();
  constructor(private readonly port: number) {}

  private client(service: string): grpc.Client {
    let c = this.clients.get(service);
    if (!c) this.clients.set(service, (c = new (ctor(service))(`127.0.0.1:${this.port}`, grpc.credentials.createInsecure())));
    return c;
  }

  unary(service: string, method: string, req: Msg, options: grpc.CallOptions = {}): Promise<Msg> {
    type Call = (req: Msg, md: grpc.Metadata, options: grpc.CallOptions, cb: (err: grpc.ServiceError | null, out: Msg) => void) => void;
    const c = this.client(service) as unknown as Record<string, Call>;
    return new Promise((resolve, reject) => c[method]!.call(c, req, new grpc.Metadata(), options, (err, out) => (err ? reject(err) : resolve(out))));
  }

  stream(service: string, method: string, req: Msg, metadata?: grpc.Metadata, cancelFirst = false): Promise<Msg[]> {
    const c = this.client(service) as unknown as Record<string, (req: Msg, md?: grpc.Metadata) => grpc.ClientReadableStream<Msg>>;
    const call = c[method]!.call(c, req, metadata ?? new grpc.Metadata());
    if (cancelFirst) call.cancel();
    return new Promise((resolve, reject) => {
      const out: Msg[] = [];
      call.on('data', (d: Msg) => out.push(d));
      call.on('error', reject);
      call.on('end', () => resolve(out));
    });
  }

  /** One request on the bidirectional reflection stream. */
  reflect(service: string, req: Msg): Promise<Msg> {
    const c = this.client(service) as unknown as Record<string, () => grpc.ClientDuplexStream<Msg, Msg>>;
    const call = c.ServerReflectionInfo!.call(c);
    return new Promise((resolve, reject) => {
      call.on('data', (d: Msg) => {
        resolve(d);
        call.end();
      });
      call.on('error', reject);
      call.write(req);
    });
  }

  close(): void {
    for (const c of this.clients.values()) c.close();
  }
}

async function rejectsWith(p: Promise<unknown>, code: grpc.status, details: string | RegExp): Promise<void> {
  await assert.rejects(p, (err: CallError) => {
    assert.equal(err.code, code, `code ${grpc.status[err.code]} (${err.details})`);
    if (typeof details === 'string') assert.equal(err.details, details);
    else assert.match(err.details, details);
    return true;
  });
}

const R = 'api.Registry';
const entryKey = (e: Msg): string => `${String(e.packageName)}|${String(e.channelName)}|${String(e.bundleName)}|${String(e.replaces)}`;
const sortedEntries = (es: Msg[]): string[] => es.map(entryKey).sort();
const gvkKey = (g: Msg): string => `${String(g.group)}/${String(g.version)}/${String(g.kind)}/${String(g.plural)}`;
const propKey = (p: Msg): string => `${String(p.type)}=${String(p.value)}`;

interface ExpectedBundle {
  csvName: string;
  packageName: string;
  channelName: string;
  csvJson: string;
  object: string[];
  bundlePath: string;
  providedApis: Msg[];
  requiredApis: Msg[];
  version: string;
  skipRange: string;
  dependencies: Msg[];
  properties: Msg[];
  replaces: string;
  skips: string[];
  deprecation: Msg | null;
}

/** upstream's EqualBundles: lists compared as multisets (plural ignored), everything else exactly. */
function assertBundle(actual: Msg, expected: ExpectedBundle): void {
  const gvks = (l: unknown) => (l as Msg[]).map((g) => gvkKey({ ...g, plural: '' })).sort();
  const props = (l: unknown) => (l as Msg[]).map(propKey).sort();
  assert.deepEqual(gvks(actual.providedApis), gvks(expected.providedApis), 'providedApis');
  assert.deepEqual(gvks(actual.requiredApis), gvks(expected.requiredApis), 'requiredApis');
  assert.deepEqual(props(actual.dependencies), props(expected.dependencies), 'dependencies');
  assert.deepEqual(props(actual.properties), props(expected.properties), 'properties');
  assert.deepEqual([...(actual.object as string[])].sort(), [...expected.object].sort(), 'objects');
  for (const k of ['csvName', 'packageName', 'channelName', 'csvJson', 'bundlePath', 'version', 'skipRange', 'replaces', 'skips', 'deprecation'] as const) {
    assert.deepEqual(actual[k], expected[k], k);
  }
}

const etcdManifests = JSON.parse(readFileSync(join(testdata, 'expected/etcdoperator.v0.9.2.json'), 'utf8')) as { csvJson: string; object: string[] };
const gvk = (kind: string): Msg => ({ group: 'etcd.database.coreos.com', version: 'v1beta2', kind, plural: '' });
const etcdGVK = (kind: string): string => `{"group":"etcd.database.coreos.com","kind":"${kind}","version":"v1beta2"}`;

/** upstream's etcdoperatorV0_9_2(channel, addSkipsReplaces, addExtraProperties=true, includeManifests) */
function etcdoperatorV0_9_2(channel: string, addSkipsReplaces: boolean, manifests: 'all' | 'none'): ExpectedBundle {
  return {
    csvName: 'etcdoperator.v0.9.2',
    packageName: 'etcd',
    channelName: channel,
    bundlePath: 'fake/etcd-operator:v0.9.2',
    dependencies: [{ type: 'olm.gvk', value: etcdGVK('EtcdCluster') }],
    properties: [
      { type: 'olm.package', value: '{"packageName":"etcd","version":"0.9.2"}' },
      { type: 'olm.gvk', value: etcdGVK('EtcdCluster') },
      { type: 'olm.gvk', value: etcdGVK('EtcdRestore') },
      { type: 'olm.gvk', value: etcdGVK('EtcdBackup') },
      { type: 'olm.label', value: '{"label":"testlabel"}' },
      { type: 'olm.label', value: '{"label":"testlabel1"}' },
      { type: 'other', value: '{"its":"notdefined"}' },
      { type: 'olm.gvk.required', value: etcdGVK('EtcdCluster') },
    ],
    providedApis: [gvk('EtcdCluster'), gvk('EtcdBackup'), gvk('EtcdRestore')],
    requiredApis: [gvk('EtcdCluster')],
    version: '0.9.2',
    skipRange: '< 0.6.0',
    replaces: addSkipsReplaces ? 'etcdoperator.v0.9.0' : '',
    skips: addSkipsReplaces ? ['etcdoperator.v0.9.1'] : [],
    csvJson: manifests === 'all' ? etcdManifests.csvJson : '',
    object: manifests === 'all' ? etcdManifests.object : [],
    deprecation: null,
  };
}

describe('catalog serve: upstream server tests (simple catalog built from manifests/)', () => {
  let served: Served;
  let c: Client;
  before(async () => {
    served = await serve(join(testdata, 'simple'));
    c = new Client(served.port);
  });
  after(async () => {
    c.close();
    assert.equal(await stop(served), 0);
    assert.match(served.stderr(), /level=info msg="shutting down server"/);
  });

  it('logs where it serves, like opm (logrus text format)', () => {
    assert.match(served.stderr(), /^time="[^"]+" level=info msg="serving registry" address="127\.0\.0\.1:\d+" configs=\S+ port=\d+$/m);
  });

  it('ListPackages streams every package', async () => {
    const names = (await c.stream(R, 'ListPackages', {})).map((p) => p.name);
    assert.deepEqual([...names].sort(), ['etcd', 'prometheus', 'strimzi-kafka-operator']);
  });

  it('GetPackage: channels with their heads, default channel', async () => {
    const pkg = await c.unary(R, 'GetPackage', { name: 'etcd' });
    assert.deepEqual(pkg, {
      name: 'etcd',
      channels: [
        { name: 'alpha', csvName: 'etcdoperator.v0.9.2', deprecation: null },
        { name: 'beta', csvName: 'etcdoperator.v0.9.0', deprecation: null },
        { name: 'stable', csvName: 'etcdoperator.v0.9.2', deprecation: null },
      ],
      defaultChannelName: 'alpha',
      deprecation: null,
    });
  });

  it('GetBundle: the full bundle without replaces and skips (csvJson and objects byte for byte)', async () => {
    const b = await c.unary(R, 'GetBundle', { pkgName: 'etcd', channelName: 'alpha', csvName: 'etcdoperator.v0.9.2' });
    assertBundle(b, etcdoperatorV0_9_2('alpha', false, 'all'));
  });

  it('GetBundleForChannel: the channel head', async () => {
    const b = await c.unary(R, 'GetBundleForChannel', { pkgName: 'etcd', channelName: 'alpha' });
    assertBundle(b, etcdoperatorV0_9_2('alpha', false, 'all'));
  });

  it('GetChannelEntriesThatReplace', async () => {
    const es = await c.stream(R, 'GetChannelEntriesThatReplace', { csvName: 'etcdoperator.v0.6.1' });
    assert.deepEqual(sortedEntries(es), [
      'etcd|alpha|etcdoperator.v0.9.0|etcdoperator.v0.6.1',
      'etcd|beta|etcdoperator.v0.9.0|etcdoperator.v0.6.1',
      'etcd|stable|etcdoperator.v0.9.0|etcdoperator.v0.6.1',
    ]);
  });

  it('GetBundleThatReplaces: by replaces, and by skips (a synthetic 0.9.1 that is no bundle)', async () => {
    for (const csvName of ['etcdoperator.v0.9.0', 'etcdoperator.v0.9.1']) {
      const b = await c.unary(R, 'GetBundleThatReplaces', { csvName, pkgName: 'etcd', channelName: 'alpha' });
      assertBundle(b, etcdoperatorV0_9_2('alpha', false, 'all'));
    }
  });

  it('GetChannelEntriesThatProvide: every bundle providing the GVK, one entry per replaces and skip', async () => {
    const es = await c.stream(R, 'GetChannelEntriesThatProvide', { group: 'etcd.database.coreos.com', version: 'v1beta2', kind: 'EtcdCluster' });
    assert.deepEqual(sortedEntries(es), [
      'etcd|alpha|etcdoperator.v0.6.1|',
      'etcd|alpha|etcdoperator.v0.9.0|etcdoperator.v0.6.1',
      'etcd|alpha|etcdoperator.v0.9.2|etcdoperator.v0.9.0',
      'etcd|alpha|etcdoperator.v0.9.2|etcdoperator.v0.9.1',
      'etcd|beta|etcdoperator.v0.6.1|',
      'etcd|beta|etcdoperator.v0.9.0|etcdoperator.v0.6.1',
      'etcd|stable|etcdoperator.v0.6.1|',
      'etcd|stable|etcdoperator.v0.9.0|etcdoperator.v0.6.1',
      'etcd|stable|etcdoperator.v0.9.2|etcdoperator.v0.9.0',
      'etcd|stable|etcdoperator.v0.9.2|etcdoperator.v0.9.1',
    ]);
  });

  it('GetLatestChannelEntriesThatProvide: channel heads only, skips outside the channel left out', async () => {
    const es = await c.stream(R, 'GetLatestChannelEntriesThatProvide', { group: 'etcd.database.coreos.com', version: 'v1beta2', kind: 'EtcdCluster' });
    assert.deepEqual(sortedEntries(es), [
      'etcd|alpha|etcdoperator.v0.9.2|etcdoperator.v0.9.0',
      'etcd|beta|etcdoperator.v0.9.0|etcdoperator.v0.6.1',
      'etcd|stable|etcdoperator.v0.9.2|etcdoperator.v0.9.0',
    ]);
  });

  it('GetDefaultBundleThatProvides: the default channel head of the providing package', async () => {
    const b = await c.unary(R, 'GetDefaultBundleThatProvides', { group: 'etcd.database.coreos.com', version: 'v1beta2', kind: 'EtcdCluster' });
    assertBundle(b, etcdoperatorV0_9_2('alpha', false, 'all'));
  });

  it('ListBundles: one per bundle and channel, with replaces and skips, manifests dropped when there is an image', async () => {
    const bundles = await c.stream(R, 'ListBundles', {});
    assert.deepEqual(
      bundles.map((b) => b.csvName).sort(),
      [
        'etcdoperator.v0.6.1',
        'prometheusoperator.0.22.2',
        'strimzi-cluster-operator.v0.11.0',
        'strimzi-cluster-operator.v0.11.1',
        'strimzi-cluster-operator.v0.12.2',
        'etcdoperator.v0.9.0',
        'prometheusoperator.0.15.0',
        'prometheusoperator.0.14.0',
        'etcdoperator.v0.6.1',
        'etcdoperator.v0.6.1',
        'etcdoperator.v0.9.0',
        'strimzi-cluster-operator.v0.12.1',
        'strimzi-cluster-operator.v0.11.0',
        'etcdoperator.v0.9.2',
        'etcdoperator.v0.9.2',
        'strimzi-cluster-operator.v0.11.1',
        'strimzi-cluster-operator.v0.11.0',
        'strimzi-cluster-operator.v0.12.1',
        'strimzi-cluster-operator.v0.11.1',
        'etcdoperator.v0.9.0',
      ].sort(),
    );
    const etcd = bundles.filter((b) => b.csvName === 'etcdoperator.v0.9.2');
    assert.deepEqual(etcd.map((b) => b.channelName).sort(), ['alpha', 'stable']);
    for (const b of etcd) assertBundle(b, etcdoperatorV0_9_2(b.channelName as string, true, 'none'));
    // opm streams in bundle-key order: channel, then package, then name
    const keys = bundles.map((b) => `${String(b.channelName)}\u0000${String(b.packageName)}\u0000${String(b.csvName)}`);
    assert.deepEqual(keys, [...keys].sort());
    // a bundle without an image keeps its manifests
    const noImage = bundles.find((b) => b.csvName === 'etcdoperator.v0.9.0')!;
    assert.equal(noImage.bundlePath, '');
    assert.ok((noImage.csvJson as string).includes('"name":"etcdoperator.v0.9.0"'));
    assert.ok((noImage.object as string[]).length > 0);
  });

  it('answers opm error texts with status UNKNOWN (plain Go errors through grpc-go)', async () => {
    const U = grpc.status.UNKNOWN;
    await rejectsWith(c.unary(R, 'GetPackage', { name: 'nope' }), U, 'package "nope" not found');
    await rejectsWith(c.unary(R, 'GetBundle', { pkgName: 'nope', channelName: 'alpha', csvName: 'x' }), U, 'package "nope" not found');
    await rejectsWith(c.unary(R, 'GetBundle', { pkgName: 'etcd', channelName: 'nope', csvName: 'x' }), U, 'package "etcd", channel "nope" not found');
    await rejectsWith(
      c.unary(R, 'GetBundle', { pkgName: 'etcd', channelName: 'alpha', csvName: 'etcdoperator.v9' }),
      U,
      'package "etcd", channel "alpha", bundle "etcdoperator.v9" not found',
    );
    await rejectsWith(c.unary(R, 'GetBundleForChannel', { pkgName: 'nope', channelName: 'alpha' }), U, 'package "nope" not found');
    await rejectsWith(c.unary(R, 'GetBundleForChannel', { pkgName: 'etcd', channelName: 'nope' }), U, 'package "etcd", channel "nope" not found');
    // GetBundleThatReplaces does not quote the package name when it is unknown (as opm)
    await rejectsWith(c.unary(R, 'GetBundleThatReplaces', { csvName: 'x', pkgName: 'nope', channelName: 'alpha' }), U, 'package nope not found');
    await rejectsWith(
      c.unary(R, 'GetBundleThatReplaces', { csvName: 'x', pkgName: 'etcd', channelName: 'nope' }),
      U,
      'package "etcd", channel "nope" not found',
    );
    await rejectsWith(
      c.unary(R, 'GetBundleThatReplaces', { csvName: 'etcdoperator.v0.9.2', pkgName: 'etcd', channelName: 'alpha' }),
      U,
      'no entry found for package "etcd", channel "alpha"',
    );
    await rejectsWith(c.stream(R, 'GetChannelEntriesThatReplace', { csvName: 'nothing' }), U, 'no channel entries found that replace nothing');
    const g = { group: 'g.example.com', version: 'v1', kind: 'Nothing' };
    const providing = 'found that provide group:"g.example.com" version:"v1" kind:"Nothing"';
    await rejectsWith(c.stream(R, 'GetChannelEntriesThatProvide', g), U, `no channel entries ${providing}`);
    await rejectsWith(c.stream(R, 'GetLatestChannelEntriesThatProvide', g), U, `no channel entries ${providing}`);
    await rejectsWith(c.unary(R, 'GetDefaultBundleThatProvides', g), U, `no channel entries ${providing}`);
  });

  it('GetDefaultBundleThatProvides: no entry when only non-default channels provide', async () => {
    // strimzi's KafkaBridge arrived in 0.12: the heads of alpha and beta provide it, the default (stable) does not
    const g = { group: 'kafka.strimzi.io', version: 'v1alpha1', kind: 'KafkaBridge' };
    const latest = await c.stream(R, 'GetLatestChannelEntriesThatProvide', g);
    assert.deepEqual([...new Set(latest.map((e) => e.channelName))].sort(), ['alpha', 'beta']);
    await rejectsWith(
      c.unary(R, 'GetDefaultBundleThatProvides', g),
      grpc.status.UNKNOWN,
      'no entry found that provides group:"kafka.strimzi.io" version:"v1alpha1" kind:"KafkaBridge"',
    );
  });

  it('grpc.health.v1.Health: SERVING; Watch is unimplemented, as opm', async () => {
    assert.deepEqual(await c.unary('grpc.health.v1.Health', 'Check', { service: '' }), { status: 'SERVING' });
    assert.deepEqual(await c.unary('grpc.health.v1.Health', 'Check', { service: 'api.Registry' }), { status: 'SERVING' });
    await rejectsWith(c.stream('grpc.health.v1.Health', 'Watch', { service: '' }), grpc.status.UNIMPLEMENTED, 'method Watch not implemented');
  });

  it('server reflection (v1alpha, which grpcurl and OLM tooling use, and v1) lists the services', async () => {
    const expected = [
      'api.ExperimentalRegistry',
      'api.Registry',
      'grpc.health.v1.Health',
      'grpc.reflection.v1.ServerReflection',
      'grpc.reflection.v1alpha.ServerReflection',
    ];
    for (const v of ['grpc.reflection.v1alpha.ServerReflection', 'grpc.reflection.v1.ServerReflection']) {
      const res = await c.reflect(v, { list_services: '*' });
      const services = ((res.list_services_response as Msg).service as Msg[]).map((s) => s.name as string).sort();
      assert.deepEqual(services, expected, v);
    }
    const file = await c.reflect('grpc.reflection.v1alpha.ServerReflection', { file_containing_symbol: 'api.Registry' });
    assert.ok(((file.file_descriptor_response as Msg).file_descriptor_proto as Buffer[]).length > 0);
  });
  it('logs each call as opm does: started call, finished call with code and time (errors at level error)', async () => {
    await c.unary(R, 'GetPackage', { name: 'prometheus' });
    await rejectsWith(c.unary(R, 'GetPackage', { name: 'logged-missing' }), grpc.status.UNKNOWN, 'package "logged-missing" not found');
    // the server writes its log once per event-loop turn: wait for the lines to arrive
    const errorLine =
      'level=error msg="finished call" grpc.code=Unknown grpc.component=server grpc.error="rpc error: code = Unknown desc = package \\"logged-missing\\" not found"';
    await eventually(10_000, 'the error call logged', async () => (served.stderr().includes(errorLine) ? true : undefined));
    const lines = served.stderr().split('\n');
    assert.ok(
      lines.some((l) =>
        /level=info msg="started call" .*grpc\.method=GetPackage grpc\.method_type=unary grpc\.service=api\.Registry .*peer\.address="127\.0\.0\.1:\d+" protocol=grpc/.test(
          l,
        ),
      ),
    );
    assert.ok(lines.some((l) => /level=info msg="finished call" grpc\.code=OK .*grpc\.method=GetPackage .*grpc\.time_ms=[\d.]+ /.test(l)));
  });
  it("logs a call's deadline as grpc.request.deadline (RFC 3339), as go-grpc-middleware does", async () => {
    const deadline = new Date(Date.now() + 3_600_000);
    await c.unary(R, 'GetPackage', { name: 'etcd' }, { deadline });
    const stamp = new Date(Math.floor(deadline.getTime() / 1000) * 1000).toISOString().replace('.000Z', 'Z');
    // the client sends the time left (grpc-timeout), so the server's deadline may differ by a second
    const stamps = [
      stamp,
      new Date(Date.parse(stamp) - 1000).toISOString().replace('.000Z', 'Z'),
      new Date(Date.parse(stamp) + 1000).toISOString().replace('.000Z', 'Z'),
    ];
    await eventually(10_000, 'the call with a deadline logged', async () =>
      served
        .stderr()
        .split('\n')
        .some((l) => l.includes('msg="finished call"') && stamps.some((s) => l.includes(`grpc.request.deadline="${s}"`)))
        ? true
        : undefined,
    );
    const started = served
      .stderr()
      .split('\n')
      .filter((l) => l.includes('msg="started call"') && l.includes('grpc.request.deadline='));
    assert.ok(started.length > 0, 'the started line carries the deadline too');
  });
});

describe('catalog serve: deprecations (upstream validFS)', () => {
  let served: Served;
  let c: Client;
  before(async () => {
    served = await serve(join(testdata, 'deprecations'));
    c = new Client(served.port);
  });
  after(async () => {
    c.close();
    await stop(served);
  });

  it('ListPackages', async () => {
    assert.deepEqual(
      (await c.stream(R, 'ListPackages', {})).map((p) => p.name),
      ['cockroachdb'],
    );
  });

  it('GetPackage carries package and channel deprecations', async () => {
    assert.deepEqual(await c.unary(R, 'GetPackage', { name: 'cockroachdb' }), {
      name: 'cockroachdb',
      channels: [
        {
          name: 'stable-5.x',
          csvName: 'cockroachdb.v5.0.4',
          deprecation: { message: "channel stable-5.x is no longer supported.  Please switch to channel 'stable-6.x'.\n" },
        },
        { name: 'stable-v6.x', csvName: 'cockroachdb.v6.0.0', deprecation: null },
      ],
      defaultChannelName: 'stable-v6.x',
      deprecation: { message: "package cockroachdb is end of life.  Please use 'nouveau-cockroachdb' package for support.\n" },
    });
  });

  it('GetBundle: a bundle from an image only (no manifests)', async () => {
    const b = await c.unary(R, 'GetBundle', { pkgName: 'cockroachdb', channelName: 'stable-5.x', csvName: 'cockroachdb.v5.0.4' });
    assertBundle(b, {
      csvName: 'cockroachdb.v5.0.4',
      packageName: 'cockroachdb',
      channelName: 'stable-5.x',
      csvJson: '',
      object: [],
      bundlePath: 'quay.io/openshift-community-operators/cockroachdb@sha256:f42337e7b85a46d83c94694638e2312e10ca16a03542399a65ba783c94a32b63',
      requiredApis: [],
      version: '5.0.4',
      skipRange: '',
      dependencies: [],
      providedApis: [{ group: 'charts.operatorhub.io', version: 'v1alpha1', kind: 'Cockroachdb', plural: '' }],
      properties: [
        { type: 'olm.gvk', value: '{"group":"charts.operatorhub.io","kind":"Cockroachdb","version":"v1alpha1"}' },
        { type: 'olm.package', value: '{"packageName":"cockroachdb","version":"5.0.4"}' },
      ],
      replaces: '',
      skips: [],
      deprecation: null,
    });
  });

  it('a deprecated bundle carries its deprecation', async () => {
    const b = await c.unary(R, 'GetBundle', { pkgName: 'cockroachdb', channelName: 'stable-5.x', csvName: 'cockroachdb.v5.0.3' });
    assert.deepEqual(b.deprecation, { message: 'cockroachdb.v5.0.3 is deprecated. Uninstall and install cockroachdb.v5.0.4 for support.\n' });
  });

  it('GetChannelEntriesThatReplace', async () => {
    assert.deepEqual(sortedEntries(await c.stream(R, 'GetChannelEntriesThatReplace', { csvName: 'cockroachdb.v5.0.3' })), [
      'cockroachdb|stable-5.x|cockroachdb.v5.0.4|cockroachdb.v5.0.3',
    ]);
  });
});

describe('catalog serve: ExperimentalListPackageCustomSchemas (upstream customSchemaFS)', () => {
  const X = 'api.ExperimentalRegistry';
  const M = 'ExperimentalListPackageCustomSchemas';
  let served: Served;
  let c: Client;
  const ack = (): grpc.Metadata => {
    const md = new grpc.Metadata();
    md.set('x-acknowledge-experimental', 'true');
    return md;
  };
  /** google.protobuf.Struct → plain JSON */
  const plain = (s: Msg): Msg => {
    const val = (v: Msg): unknown =>
      v.kind === 'structValue' ? plain(v.structValue as Msg) : v.kind === 'listValue' ? ((v.listValue as Msg).values as Msg[]).map(val) : v[v.kind as string];
    return Object.fromEntries(Object.entries(s.fields as Record<string, Msg>).map(([k, v]) => [k, val(v)]));
  };
  before(async () => {
    served = await serve(join(testdata, 'custom-schemas'));
    c = new Client(served.port);
  });
  after(async () => {
    c.close();
    await stop(served);
  });

  it('lists the blobs of a schema and package', async () => {
    const out = (await c.stream(X, M, { schema: 'custom.operator.io', packageName: 'testpkg' }, ack())).map(plain);
    assert.equal(out.length, 2);
    for (const r of out) {
      assert.equal(r.schema, 'custom.operator.io');
      assert.equal(r.package, 'testpkg');
    }
    assert.deepEqual(out.map((r) => r.name).sort(), ['another-custom-resource', 'my-custom-resource']);
    assert.deepEqual(out.find((r) => r.name === 'another-custom-resource')!.data, { key: 'value' });
  });

  it('nothing for an unknown package', async () => {
    assert.deepEqual(await c.stream(X, M, { schema: 'custom.operator.io', packageName: 'nonexistent' }, ack()), []);
  });

  it('InvalidArgument without a schema, or with an invalid one', async () => {
    await rejectsWith(c.stream(X, M, {}, ack()), grpc.status.INVALID_ARGUMENT, 'schema is required');
    await rejectsWith(
      c.stream(X, M, { schema: '../etc', packageName: '' }, ack()),
      grpc.status.INVALID_ARGUMENT,
      'invalid custom schema query: invalid schema "../etc": must match ^[a-zA-Z0-9][a-zA-Z0-9._-]*$',
    );
  });

  it('package-less blobs under an empty package name', async () => {
    const out = (await c.stream(X, M, { schema: 'custom.packageless', packageName: '' }, ack())).map(plain);
    assert.equal(out.length, 1);
    assert.equal(out[0]!.schema, 'custom.packageless');
    assert.equal(out[0]!.name, 'global-config');
  });

  it('an empty stream without the x-acknowledge-experimental header', async () => {
    assert.deepEqual(await c.stream(X, M, { schema: 'custom.operator.io', packageName: 'testpkg' }), []);
  });

  it('CANCELLED when the caller cancels', async () => {
    await rejectsWith(c.stream(X, M, { schema: 'custom.operator.io', packageName: 'testpkg' }, ack(), true), grpc.status.CANCELLED, /./);
  });
});

describe('catalog serve: cache dir and start-up failures', () => {
  let tmp: string;
  before(() => {
    tmp = mkdtempSync(join(tmpdir(), 'kplane-serve-'));
  });
  after(() => rmSync(tmp, { recursive: true, force: true }));

  const run = (...args: string[]) => spawnSync(process.execPath, [kplane, 'catalog', 'serve', ...args], { encoding: 'utf8', timeout: 60_000 });

  it('--cache-only builds the cache and exits; serving from it enforces its integrity', async () => {
    const configs = join(tmp, 'configs');
    cpSync(join(testdata, 'deprecations'), configs, { recursive: true });
    const cacheDir = join(tmp, 'cache');
    const built = run(configs, '--cache-dir', cacheDir, '--cache-only');
    assert.equal(built.status, 0, built.stderr);
    assert.match(built.stderr, /level=info msg="building cache"/);
    assert.ok(readFileSync(join(cacheDir, 'digest'), 'utf8').length > 0);
    assert.ok(readFileSync(join(cacheDir, 'cache', 'cockroachdb_stable-5.x_cockroachdb.v5.0.4.json'), 'utf8').includes('"csvName":"cockroachdb.v5.0.4"'));

    const served = await serve(configs, '--cache-dir', cacheDir);
    const c = new Client(served.port);
    try {
      assert.match(served.stderr(), /msg="found existing cache contents"/);
      assert.doesNotMatch(served.stderr(), /building cache/);
      const b = await c.unary(R, 'GetBundleForChannel', { pkgName: 'cockroachdb', channelName: 'stable-v6.x' });
      assert.equal(b.csvName, 'cockroachdb.v6.0.0');
      assert.equal(b.skipRange, '<6.0.0');
      assert.equal((await c.stream(R, 'ListBundles', {})).length, 3);
      await rejectsWith(c.unary(R, 'GetPackage', { name: 'nope' }), grpc.status.UNKNOWN, 'package "nope" not found');
    } finally {
      c.close();
      await stop(served);
    }

    // a changed catalog invalidates the cache: refused when integrity is enforced, rebuilt when not
    appendFileSync(join(configs, 'deprecations.yaml'), '\n');
    const refused = run(configs, '--cache-dir', cacheDir, '--port', '0');
    assert.equal(refused.status, 1);
    assert.match(
      refused.stderr,
      /level=fatal msg="integrity check failed: cache requires rebuild: cache reports digest as \\"[0-9a-f]+\\", but computed digest is \\"[0-9a-f]+\\""/,
    );
    const rebuilt = run(configs, '--cache-dir', cacheDir, '--cache-only');
    assert.equal(rebuilt.status, 0, rebuilt.stderr);
    assert.match(rebuilt.stderr, /building cache/);
  });

  it('refuses a cache dir with foreign contents, and --cache-enforce-integrity without --cache-dir', () => {
    const foreign = join(tmp, 'foreign');
    cpSync(join(testdata, 'deprecations'), foreign, { recursive: true });
    const r = run(join(testdata, 'deprecations'), '--cache-dir', foreign, '--cache-only');
    assert.equal(r.status, 1);
    assert.match(r.stderr, /level=fatal msg="cache directory has unexpected contents: cockroachdb.json,deprecations.yaml"/);
    // serving with a cache dir enforces integrity by default: an empty one is not a cache yet
    const empty = join(tmp, 'empty-cache');
    const n = run(join(testdata, 'deprecations'), '--cache-dir', empty, '--port', '0');
    assert.equal(n.status, 1);
    assert.match(n.stderr, new RegExp(`level=fatal msg="integrity check failed: read existing cache digest: open ${empty}/digest: no such file or directory"`));
    const e = run(join(testdata, 'deprecations'), '--cache-enforce-integrity');
    assert.equal(e.status, 1);
    assert.match(e.stderr, /level=fatal msg="--cache-dir must be specified with --cache-enforce-integrity"/);
  });

  it('an invalid catalog fails start-up with the error, no stack trace', () => {
    const bad = join(tmp, 'bad');
    cpSync(join(testdata, 'deprecations'), bad, { recursive: true });
    // a channel entry replaced by two bundles' worth of heads: 5.0.3 is no longer replaced by 5.0.4
    const text = readFileSync(join(bad, 'cockroachdb.json'), 'utf8').replace('"replaces": "cockroachdb.v5.0.3"', '"replaces": ""');
    writeFileSync(join(bad, 'cockroachdb.json'), text);
    const r = run(bad, '--port', '0');
    assert.equal(r.status, 1);
    assert.match(
      r.stderr,
      /level=fatal msg="failed to load or rebuild cache: failed to rebuild cache: build package index: process package \\"cockroachdb\\": /,
    );
    assert.match(r.stderr, /multiple channel heads found in graph: cockroachdb.v5.0.3, cockroachdb.v5.0.4/);
    assert.doesNotMatch(r.stderr, /\n\s+at /);
    const termination = join(tmp, 'termination-log');
    const missing = run(join(tmp, 'does-not-exist'), '--port', '0', '-t', termination);
    assert.equal(missing.status, 1);
    const why = `failed to load or rebuild cache: failed to rebuild cache: stat ${join(tmp, 'does-not-exist')}: no such file or directory`;
    assert.match(missing.stderr, new RegExp(`level=fatal msg="${why}"`));
    assert.doesNotMatch(missing.stderr, /\n\s+at /);
    assert.equal(readFileSync(termination, 'utf8'), `${why}\n`, 'the termination log holds the fatal error');
  });

  it("a port in use: opm's listen error, no other output", async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const port = (blocker.address() as AddressInfo).port;
    try {
      const r = run(join(testdata, 'deprecations'), '--port', String(port), '--log-calls=false');
      assert.equal(r.status, 1);
      assert.equal(r.stderr.replace(/^time="[^"]+" /, ''), `level=fatal msg="failed to listen: listen tcp 127.0.0.1:${port}: bind: address already in use"\n`);
    } finally {
      blocker.close();
    }
  });

  it('usage errors: no directory, a bad port', () => {
    const none = run();
    assert.equal(none.status, 1);
    assert.match(none.stderr, /accepts 1 arg\(s\), received 0/);
    const port = run(join(testdata, 'deprecations'), '--port', 'http');
    assert.equal(port.status, 1);
    assert.match(port.stderr, /invalid port/);
  });
});
