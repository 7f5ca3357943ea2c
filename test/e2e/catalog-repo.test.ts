// The platform catalog repository workflow end to end, on examples/dbaas-catalog: its 16 bundle
// directories built into a real loopback registry (docker-registry 2.8; pxc-operator's through
// `kplane catalog bundle build/push`), then, each as a real `kplane catalog ...` process:
// init/add-operator/add-bundle, generate (rendered catalogs equal the committed ones; only changed
// templates re-rendered; bad templates and images fail without touching catalog.yaml), validate,
// test (text and JUnit reports; candidate-only findings are warnings), render --platform, and
// serve, with a @grpc/grpc-js client calling every api.Registry method on the served catalogs.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import type { KubeObject } from '../../src/apimachinery/types.js';
import { buildBundleImage, buildCatalogImage, pushImage } from '../../src/catalog/oci/index.js';
import { serveCatalog, type ServedCatalog } from '../support/catalog-serve.js';
import { startRegistry, type RunningRegistry } from '../support/registry.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const example = join(root, 'examples', 'dbaas-catalog');
const kplane = join(root, 'bin', 'kplane.js');
const PROD = 'registry.dbaas.example';
const OPERATORS = ['cloud-provider-operator', 'monitoring-operator', 'pg-operator', 'psmdb-operator', 'pxc-operator'];

interface Result {
  code: number | null;
  stdout: string;
  stderr: string;
}

let cacheDir = '';

function kp(args: string[], cwd: string): Promise<Result> {
  return new Promise((resolve) => {
    const p = spawn(process.execPath, [kplane, 'catalog', ...args], {
      cwd,
      env: { ...process.env, KPLANE_CACHE_DIR: cacheDir },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    p.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    p.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

async function ok(args: string[], cwd: string): Promise<Result> {
  const r = await kp(args, cwd);
  assert.equal(r.code, 0, `kplane catalog ${args.join(' ')} exited ${r.code}\nstdout:\n${r.stdout}\nstderr:\n${r.stderr}`);
  return r;
}

/** Every bundle directory: [operator, version, dir] */
function bundleDirs(): [string, string, string][] {
  const out: [string, string, string][] = [];
  for (const op of readdirSync(join(example, 'bundles')).sort()) {
    for (const v of readdirSync(join(example, 'bundles', op)).sort()) out.push([op, v, join(example, 'bundles', op, v)]);
  }
  return out;
}

// ---- gRPC -----------------------------------------------------------------------------------

type Msg = Record<string, unknown>;
const protoDef = protoLoader.loadSync([join(root, 'src/catalog/api/registry.proto')], {
  keepCase: true,
  longs: String,
  enums: String,
  defaults: true,
  oneofs: true,
});
type Ctor = new (address: string, creds: grpc.ChannelCredentials) => grpc.Client;
const RegistryClient = (grpc.loadPackageDefinition(protoDef) as unknown as { api: { Registry: Ctor } }).api.Registry;

class Registry {
  private readonly c: grpc.Client;
  constructor(port: number) {
    this.c = new RegistryClient(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
  }
  unary(method: string, req: Msg): Promise<Msg> {
    const c = this.c as unknown as Record<string, (req: Msg, cb: (err: grpc.ServiceError | null, out: Msg) => void) => void>;
    return new Promise((resolve, reject) => c[method]!.call(c, req, (err, out) => (err ? reject(err) : resolve(out))));
  }
  stream(method: string, req: Msg): Promise<Msg[]> {
    const c = this.c as unknown as Record<string, (req: Msg) => grpc.ClientReadableStream<Msg>>;
    const call = c[method]!.call(c, req);
    return new Promise((resolve, reject) => {
      const out: Msg[] = [];
      call.on('data', (d: Msg) => out.push(d));
      call.on('error', reject);
      call.on('end', () => resolve(out));
    });
  }
  close(): void {
    this.c.close();
  }
}

type Served = ServedCatalog;
const serve = (dir: string): Promise<Served> => serveCatalog(dir);

// operator-registry generate_dockerfile_test.go's Scratch/Success/WithExtraLabels, for IndexDir "configs"
const SCRATCH_DOCKERFILE = `# The builder image is expected to contain
# /bin/opm (with serve subcommand)
FROM foo as builder

# Copy FBC root into image at /configs and pre-populate serve cache
ADD configs /configs
RUN ["/bin/opm", "serve", "/configs", "--cache-dir=/tmp/cache", "--cache-only"]

FROM scratch
# OLMv0 CatalogSources that use binary-less images must set:
# spec:
#   grpcPodConfig:
#     extractContent:
#       catalogDir: /configs
#       cacheDir: /tmp/cache

COPY --from=builder /configs /configs
COPY --from=builder /tmp/cache /tmp/cache

# Set FBC-specific label for the location of the FBC root directory
# in the image
LABEL operators.operatorframework.io.index.configs.v1=/configs

# Set other custom labels
LABEL "key1"="value1"
LABEL "key2"="value2"
`;

const LEGACY_CYCLE = `---
defaultChannel: stable
name: legacy-operator
schema: olm.package
---
entries:
- name: legacy-operator.v1.0.0
  replaces: legacy-operator.v1.1.0
- name: legacy-operator.v1.1.0
  replaces: legacy-operator.v1.0.0
name: stable
package: legacy-operator
schema: olm.channel
---
image: registry.dbaas.example/bundles/legacy-operator-bundle:v1.0.0
name: legacy-operator.v1.0.0
package: legacy-operator
properties:
- type: olm.package
  value:
    packageName: legacy-operator
    version: 1.0.0
schema: olm.bundle
---
image: registry.dbaas.example/bundles/legacy-operator-bundle:v1.1.0
name: legacy-operator.v1.1.0
package: legacy-operator
properties:
- type: olm.package
  value:
    packageName: legacy-operator
    version: 1.1.0
schema: olm.bundle
`;

// ---- the workflow ---------------------------------------------------------------------------

describe('catalog repository workflow on examples/dbaas-catalog', { timeout: 600_000 }, () => {
  let registry: RunningRegistry;
  let work = '';
  let repo = '';
  let mirror: string[] = [];

  before(async () => {
    work = mkdtempSync(join(tmpdir(), 'kplane-catalog-repo-'));
    cacheDir = join(work, 'cache');
    registry = await startRegistry();
    mirror = ['--mirror', `${PROD}=${registry.host}`, '--progress', 'none'];
    const layoutDir = join(work, 'layout');
    for (const [op, v, dir] of bundleDirs()) {
      const ref = `${registry.host}/bundles/${op}-bundle:v${v}`;
      if (op === 'pxc-operator') {
        // the CLI path: build into the local image store, then push from it
        await ok(['bundle', 'build', dir, '--tag', ref, '--progress', 'none'], work);
        await ok(['bundle', 'push', ref, '--progress', 'none'], work);
      } else {
        buildBundleImage(dir, { layoutDir, tag: ref });
        await pushImage({ layoutDir, tag: ref }, ref);
      }
    }
    // bad bundles: psmdb-operator 1.2.0 again under another name, once with build metadata added
    // to its version and once with the same version; and a catalog image where a bundle belongs
    for (const [tag, name, version] of [
      ['v1.2.0-rebuild', 'psmdb-operator.v1.2.0-rebuild', '1.2.0+rebuild.1'],
      ['v1.2.0-copy', 'psmdb-operator.v1.2.0-copy', '1.2.0'],
    ] as const) {
      const dir = join(work, 'bad-bundles', tag);
      cpSync(join(example, 'bundles/psmdb-operator/1.2.0'), dir, { recursive: true });
      const csv = join(dir, 'manifests/psmdb-operator.clusterserviceversion.yaml');
      writeFileSync(
        csv,
        readFileSync(csv, 'utf8')
          .replace('name: psmdb-operator.v1.2.0', `name: ${name}`)
          .replace(/^ {2}version: 1\.2\.0$/m, `  version: ${version}`),
      );
      const ref = `${registry.host}/bundles/psmdb-operator-bundle:${tag}`;
      buildBundleImage(dir, { layoutDir, tag: ref });
      await pushImage({ layoutDir, tag: ref }, ref);
    }
    const notBundle = `${registry.host}/bundles/not-a-bundle:v1`;
    buildCatalogImage(join(example, 'catalog'), { layoutDir, tag: notBundle });
    await pushImage({ layoutDir, tag: notBundle }, notBundle);
    // the repository under test: the example without its rendered catalogs
    repo = join(work, 'dbaas-catalog');
    cpSync(example, repo, { recursive: true, filter: (src) => !src.includes(`${join(example, 'bundles')}`) });
    for (const op of OPERATORS) rmSync(join(repo, 'catalog', op, 'catalog.yaml'));
  });

  after(async () => {
    await registry?.stop();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it('init, add-operator and add-bundle lay out a new repository', async () => {
    const fresh = join(work, 'fresh');
    const init = await ok(['init', fresh], work);
    assert.match(init.stdout, /created catalog\/\.indexignore/);
    for (const f of ['catalog/.indexignore', 'catalog/README.md', 'catalog.Dockerfile', '.github/workflows/catalog.yaml'])
      assert.ok(existsSync(join(fresh, f)), f);
    assert.match(readFileSync(join(fresh, 'catalog.Dockerfile'), 'utf8'), /^LABEL operators\.operatorframework\.io\.index\.configs\.v1=\/configs$/m);
    assert.match(readFileSync(join(fresh, '.github/workflows/catalog.yaml'), 'utf8'), /kplane catalog test --junit/);
    const exists = await kp(['generate', 'dockerfile', 'catalog'], fresh);
    assert.equal(exists.code, 1);
    assert.equal(exists.stderr, 'kplane catalog generate dockerfile: path "catalog.Dockerfile": file already exists\n');
    mkdirSync(join(work, 'df', 'configs'), { recursive: true });
    await ok(['generate', 'dockerfile', 'configs/', '-i', 'scratch', '-b', 'foo', '-l', 'key2=value2', '-l', 'key1=value1'], join(work, 'df'));
    assert.equal(readFileSync(join(work, 'df', 'configs.Dockerfile'), 'utf8'), SCRATCH_DOCKERFILE);
    await ok(['add-operator', 'pg-operator', '--image', `${PROD}/bundles/pg-operator-bundle:v2.3.0`, '--channel', 'stable', '--owner', 'dave'], fresh);
    await ok(['add-bundle', 'pg-operator', '--image', `${PROD}/bundles/pg-operator-bundle:v2.4.0`, '--channel', 'candidate', '--channel', 'stable'], fresh);
    const dup = await kp(['add-bundle', 'pg-operator', '--image', `${PROD}/bundles/pg-operator-bundle:v2.4.0`, '--channel', 'stable'], fresh);
    assert.equal(dup.code, 1);
    assert.match(dup.stderr, /image registry\.dbaas\.example\/bundles\/pg-operator-bundle:v2\.4\.0 is already in Stable/);
    const again = await kp(['add-operator', 'pg-operator', '--image', 'x/y:z'], fresh);
    assert.equal(again.code, 1);
    assert.match(again.stderr, /operator "pg-operator" already exists/);
    // the new operator renders and validates from the registry
    const gen = await ok(['generate', ...mirror], fresh);
    assert.match(gen.stderr, /\[1\/1\] pg-operator: wrote catalog\/pg-operator\/catalog\.yaml: 2 bundles, 2 channels/);
    assert.match(gen.stderr, /catalog\/ is valid: 1 packages, 2 channels, 2 bundles/);
    await ok(['validate', join(fresh, 'catalog')], work);
  });

  it('generate renders every template into the committed catalog.yaml, then only what changed', async () => {
    const r = await ok(['generate', ...mirror], repo);
    for (const [i, op] of OPERATORS.entries()) assert.match(r.stderr, new RegExp(`\\[${i + 1}/5\\] ${op}: wrote catalog/${op}/catalog\\.yaml`));
    assert.match(r.stderr, /catalog\/ is valid: 5 packages, 16 channels, 16 bundles/);
    for (const op of OPERATORS) {
      assert.equal(readFileSync(join(repo, 'catalog', op, 'catalog.yaml'), 'utf8'), readFileSync(join(example, 'catalog', op, 'catalog.yaml'), 'utf8'), op);
    }
    const again = await ok(['generate', ...mirror], repo);
    assert.equal(again.stderr.match(/: unchanged/g)?.length, 5, again.stderr);
    // promote pg-operator 2.4.1 to stable: only pg-operator renders again
    await ok(['add-bundle', 'pg-operator', '--image', `${PROD}/bundles/pg-operator-bundle:v2.4.1`, '--channel', 'stable'], repo);
    const promoted = await ok(['generate', ...mirror], repo);
    assert.equal(promoted.stderr.match(/: unchanged/g)?.length, 4, promoted.stderr);
    assert.match(promoted.stderr, /\[3\/5\] pg-operator: wrote catalog\/pg-operator\/catalog\.yaml/);
    assert.match(
      readFileSync(join(repo, 'catalog/pg-operator/catalog.yaml'), 'utf8'),
      /- name: pg-operator\.v2\.4\.1\n {2}replaces: pg-operator\.v2\.3\.0\n {2}skips:\n {2}- pg-operator\.v2\.4\.0\nname: stable-v2\n/,
    );
    // a hand edit of catalog.yaml is noticed and rendered over
    writeFileSync(join(repo, 'catalog/pg-operator/catalog.yaml'), '# edited\n' + readFileSync(join(repo, 'catalog/pg-operator/catalog.yaml'), 'utf8'));
    const healed = await ok(['generate', '--operator', 'pg-operator', ...mirror], repo);
    assert.match(healed.stderr, /\[1\/1\] pg-operator: wrote/);
    assert.doesNotMatch(readFileSync(join(repo, 'catalog/pg-operator/catalog.yaml'), 'utf8'), /# edited/);
  });

  it('generate --legacy renders with the opm v1.23-v1.26 algorithm; switching modes renders everything again', async () => {
    const legacy = await ok(['generate', '--legacy', ...mirror], repo);
    assert.equal(legacy.stderr.match(/: unchanged/g), null, legacy.stderr);
    assert.match(legacy.stderr, /catalog\/ is valid: 5 packages, 16 channels, 16 bundles/);
    assert.equal((await ok(['generate', '--legacy', ...mirror], repo)).stderr.match(/: unchanged/g)?.length, 5);
    const back = await ok(['generate', ...mirror], repo);
    assert.equal(back.stderr.match(/: unchanged/g), null, back.stderr);
    for (const op of OPERATORS.filter((x) => x !== 'pg-operator')) {
      assert.equal(readFileSync(join(repo, 'catalog', op, 'catalog.yaml'), 'utf8'), readFileSync(join(example, 'catalog', op, 'catalog.yaml'), 'utf8'), op);
    }
  });

  it('bad templates and images fail with a clear message and leave catalog.yaml as it was', async () => {
    const veneer = join(repo, 'catalog/psmdb-operator/veneer.yaml');
    const catalog = join(repo, 'catalog/psmdb-operator/catalog.yaml');
    const good = readFileSync(veneer, 'utf8');
    const before = readFileSync(catalog, 'utf8');
    const withImage = (image: string): string =>
      good.replace(
        '  - Image: registry.dbaas.example/bundles/psmdb-operator-bundle:v2.0.0',
        `  - Image: registry.dbaas.example/bundles/psmdb-operator-bundle:v2.0.0\n  - Image: ${PROD}/bundles/${image}`,
      );
    const cases: [string, RegExp][] = [
      [good + 'Bogus: true\n', /psmdb-operator: render: unable to read file: error unmarshaling JSON: while decoding JSON: json: unknown field "Bogus"/],
      [
        good.replace('Schema: olm.semver', 'Schema: olm.template.basic'),
        /psmdb-operator: render: unable to read file: readFile: input file has unknown schema, should be "olm\.semver"/,
      ],
      [
        good.replace('psmdb-operator-bundle:v2.0.0', 'psmdb-operator-bundle:v9.9.9'),
        /failed to pull image "registry\.dbaas\.example\/bundles\/psmdb-operator-bundle:v9\.9\.9".*not found/,
      ],
      // versions that differ only in build metadata, and the same version twice
      [
        withImage('psmdb-operator-bundle:v1.2.0-rebuild'),
        /psmdb-operator: render: unable to post-process bundle info: encountered bundle versions which differ only by build metadata, which cannot be ordered: bundle version "1\.2\.0\+rebuild\.1" cannot be compared to "1\.2\.0"/,
      ],
      [
        withImage('psmdb-operator-bundle:v1.2.0-copy'),
        /psmdb-operator: render: unable to post-process bundle info: encountered bundle versions which differ only by build metadata, which cannot be ordered: bundle version "1\.2\.0" cannot be compared to "1\.2\.0"/,
      ],
      // an image that is not a bundle
      [
        withImage('not-a-bundle:v1'),
        /psmdb-operator: render reference "registry\.dbaas\.example\/bundles\/not-a-bundle:v1": cannot render declarative config image: not allowed/,
      ],
      // a bundle of another package in the template
      [
        good.replace(
          '  - Image: registry.dbaas.example/bundles/psmdb-operator-bundle:v2.0.0',
          '  - Image: registry.dbaas.example/bundles/psmdb-operator-bundle:v2.0.0\n  - Image: ' + `${PROD}/bundles/pxc-operator-bundle:v1.0.0`,
        ),
        /psmdb-operator: render: unable to post-process bundle info: bundle "pxc-operator" does not belong to this package: "psmdb-operator"/,
      ],
    ];
    for (const [text, want] of cases) {
      writeFileSync(veneer, text);
      const r = await kp(['generate', ...mirror], repo);
      assert.equal(r.code, 1, r.stderr);
      assert.match(r.stderr, want);
      assert.match(r.stderr, /\[4\/5\] psmdb-operator: FAILED/);
      assert.equal(readFileSync(catalog, 'utf8'), before, 'catalog.yaml untouched');
      assert.deepEqual(readdirSync(join(repo, 'catalog/psmdb-operator')).sort(), ['OWNERS', 'catalog.yaml', 'veneer.yaml'], 'no temporary files left');
    }
    writeFileSync(veneer, good);
    // the failed runs kept the record of the last good render: the restored template is that one
    const r = await ok(['generate', ...mirror], repo);
    assert.match(r.stderr, /\[4\/5\] psmdb-operator: unchanged/);
    const forced = await ok(['generate', '--force', '--operator', 'psmdb-operator', ...mirror], repo);
    assert.match(forced.stderr, /\[1\/1\] psmdb-operator: rendered \(catalog\.yaml already up to date\)/);
    // a hand-written catalog with a replaces cycle (no template): the tree validation fails with opm's tree
    const legacy = join(repo, 'catalog/legacy-operator');
    mkdirSync(legacy);
    writeFileSync(join(legacy, 'catalog.yaml'), LEGACY_CYCLE);
    try {
      const cyc = await kp(['generate', ...mirror], repo);
      assert.equal(cyc.code, 1);
      assert.match(
        cyc.stderr,
        /kplane catalog generate: invalid index:\n└── invalid package "legacy-operator":\n {4}└── invalid channel "stable":\n {8}└── no channel head found in graph\n/,
      );
    } finally {
      rmSync(legacy, { recursive: true });
    }
  });

  it('validate and test pass, with reports per layer; candidate-only findings are warnings', async () => {
    await ok(['validate', 'catalog'], repo);
    const r = await ok(['test', ...mirror, '--junit', 'reports/junit.xml', '--report-dir', 'reports'], repo);
    assert.match(r.stdout, /^sanity: 20 passed, 0 failed, 0 warnings, 0 skipped/m);
    assert.match(r.stdout, /^integration: 3 passed, 0 failed/m);
    assert.match(r.stdout, /^interoperability: 9 passed, 0 failed, 1 warnings/m);
    assert.match(
      r.stdout,
      /WARN {2}psmdb-operator: requirements satisfiable in each channel kind\n {8}warning: bundle psmdb-operator\.v2\.0\.0 \(candidate-v2\) requires package logging-operator >=1\.0\.0, which is not in the catalog/,
    );
    assert.match(
      r.stdout,
      /PASS {2}platform platforms\/platformx\.yaml: channel heads install together\n {8}platform platformx installs: pxc-operator pxc-operator\.v1\.2\.0 \(stable-v1\), psmdb-operator psmdb-operator\.v1\.1\.0 \(stable-v1\), monitoring-operator monitoring-operator\.v1\.2\.0 \(fast-v1\), cloud-provider-operator cloud-provider-operator\.v0\.2\.0 \(stable-v0\)/,
    );
    const junit = readFileSync(join(repo, 'reports/junit.xml'), 'utf8');
    assert.match(junit, /<testsuites name="kplane catalog test" tests="33" failures="0" errors="0" skipped="0"/);
    for (const layer of ['sanity', 'integration', 'interoperability']) {
      assert.match(junit, new RegExp(`<testsuite name="${layer}"`));
      assert.ok(existsSync(join(repo, 'reports', `${layer}.txt`)) && existsSync(join(repo, 'reports', `${layer}.xml`)), layer);
    }
    assert.match(junit, /<system-out>warning: bundle psmdb-operator\.v2\.0\.0/);
    // --platform names the platforms to check instead of every platforms/*.yaml
    const one = await ok(['test', ...mirror, '--platform', 'platforms/platformy.yaml'], repo);
    assert.match(
      one.stdout,
      /PASS {2}platform platforms\/platformy\.yaml: channel heads install together\n {8}platform platformy installs: pg-operator pg-operator\.v2\.4\.1 \(stable-v2\), monitoring-operator monitoring-operator\.v1\.1\.0 \(stable-v1\)/,
    );
    assert.doesNotMatch(one.stdout, /platformx/);
    assert.match(one.stdout, /PASS {2}platform platforms\/platformy\.yaml: branch catalog validates/);
  });

  it('test fails on an undeclared shared API and on platforms whose heads do not install together', async () => {
    const interop = join(repo, 'interop.yaml');
    const saved = readFileSync(interop, 'utf8');
    writeFileSync(interop, 'sharedAPIs: []\n');
    writeFileSync(join(repo, 'platforms/broken.yaml'), 'schema: kplane.platform\nname: broken\noperators:\n- package: pxc-operator\n  channel: stable\n');
    try {
      const r = await kp(['test', ...mirror, '--junit', 'reports/junit.xml'], repo);
      assert.equal(r.code, 1, r.stdout + r.stderr);
      assert.match(
        r.stdout,
        /FAIL {2}API monitoring\.coreos\.com\/ServiceMonitor \(monitoring-operator, pg-operator\)\n {8}error: monitoring\.coreos\.com\/ServiceMonitor is provided by packages monitoring-operator, pg-operator; declare it in interop\.yaml/,
      );
      assert.match(
        r.stdout,
        /FAIL {2}platform platforms\/broken\.yaml: channel heads install together\n(.*\n)* {8}error: pxc-operator head pxc-operator\.v1\.2\.0 \(stable-v1\) requires package monitoring-operator >=1\.0\.0 <2\.0\.0, which is not part of platform broken/,
      );
      assert.match(r.stdout, /requires API cloud\.dbaas\.example\.com\/v1alpha1\/BackupLocation, which no operator of platform broken provides/);
      // and platformy, whose two operators both ship ServiceMonitor, no longer installs
      assert.match(
        r.stdout,
        /FAIL {2}platform platforms\/platformy\.yaml: channel heads install together\n(.*\n)* {8}error: monitoring\.coreos\.com\/ServiceMonitor is provided by pg-operator \(stable-v2\) and monitoring-operator \(stable-v1\)/,
      );
      assert.match(r.stdout, /^FAIL: 3 failed, 1 warnings$/m);
      const junit = readFileSync(join(repo, 'reports/junit.xml'), 'utf8');
      assert.match(junit, /failures="3"/);
      assert.match(junit, /<failure message="error: monitoring\.coreos\.com\/ServiceMonitor is provided by packages/);
    } finally {
      writeFileSync(interop, saved);
      rmSync(join(repo, 'platforms/broken.yaml'));
    }
  });

  it('render --platform makes the smaller catalog of a platform branch', async () => {
    const r = await ok(['render', 'catalog', '--platform', 'platforms/platformx.yaml', '-o', 'yaml'], repo);
    const dir = join(work, 'platformx', 'catalog');
    cpSync(join(repo, 'catalog', '.indexignore'), join(dir, '.indexignore'));
    writeFileSync(join(dir, 'catalog.yaml'), r.stdout);
    await ok(['validate', dir], work);
    const pkgs = [...r.stdout.matchAll(/^name: (\S+)\nschema: olm\.package$/gm)].map((m) => m[1]);
    assert.deepEqual(pkgs, ['cloud-provider-operator', 'monitoring-operator', 'psmdb-operator', 'pxc-operator']);
    const channels = [...r.stdout.matchAll(/^name: (\S+)\npackage: (\S+)\nschema: olm\.channel$/gm)].map((m) => `${m[2]}/${m[1]}`);
    assert.deepEqual(channels, ['cloud-provider-operator/stable-v0', 'monitoring-operator/fast-v1', 'psmdb-operator/stable-v1', 'pxc-operator/stable-v1']);
    assert.match(r.stdout, /^defaultChannel: fast-v1\ndescription: .*\nname: monitoring-operator$/m);
    const bad = await kp(['render', 'catalog', '--platform', 'platforms/nope.yaml'], repo);
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /platforms\/nope\.yaml: no such file/);
  });

  it('serve: every api.Registry method over the generated catalog and the platform catalog', async () => {
    const s = await serve(join(repo, 'catalog'));
    const c = new Registry(s.port);
    try {
      const pkgs = (await c.stream('ListPackages', {})).map((p) => p.name).sort();
      assert.deepEqual(pkgs, OPERATORS);
      const pkg = await c.unary('GetPackage', { name: 'pxc-operator' });
      assert.equal(pkg.defaultChannelName, 'stable-v1');
      assert.deepEqual((pkg.channels as Msg[]).map((ch) => `${String(ch.name)}=${String(ch.csvName)}`).sort(), [
        'candidate-v1=pxc-operator.v1.3.0-rc.1',
        'fast-v1=pxc-operator.v1.2.0',
        'stable-v1=pxc-operator.v1.2.0',
      ]);
      const b = await c.unary('GetBundle', { pkgName: 'pxc-operator', channelName: 'stable-v1', csvName: 'pxc-operator.v1.1.0' });
      assert.equal(b.version, '1.1.0');
      assert.equal(b.bundlePath, `${PROD}/bundles/pxc-operator-bundle:v1.1.0`);
      assert.equal((JSON.parse(b.csvJson as string) as KubeObject).metadata?.name, 'pxc-operator.v1.1.0');
      assert.deepEqual(
        (b.dependencies as Msg[]).map((d) => `${String(d.type)}=${String(d.value)}`),
        ['olm.package={"packageName":"monitoring-operator","version":">=1.0.0 <2.0.0"}'],
      );
      const head = await c.unary('GetBundleForChannel', { pkgName: 'pxc-operator', channelName: 'stable-v1' });
      assert.equal(head.csvName, 'pxc-operator.v1.2.0');
      assert.deepEqual(
        (head.requiredApis as Msg[]).map((g) => `${String(g.group)}/${String(g.version)}/${String(g.kind)}`),
        ['cloud.dbaas.example.com/v1alpha1/BackupLocation'],
      );
      const replacing = await c.stream('GetChannelEntriesThatReplace', { csvName: 'pxc-operator.v1.1.0' });
      const replacingKeys = replacing.map((e) => `${String(e.channelName)}:${String(e.bundleName)}`);
      for (const want of ['candidate-v1:pxc-operator.v1.2.0', 'fast-v1:pxc-operator.v1.2.0', 'stable-v1:pxc-operator.v1.2.0'])
        assert.ok(replacingKeys.includes(want), `${want} in ${replacingKeys.join(', ')}`);
      // entries that skip v1.1.0 come too (candidate-v1's v1.3.0-rc.1), with their own replaces
      assert.ok(replacingKeys.includes('candidate-v1:pxc-operator.v1.3.0-rc.1'), replacingKeys.join(', '));
      assert.ok(replacing.every((e) => e.packageName === 'pxc-operator'));
      const next = await c.unary('GetBundleThatReplaces', { csvName: 'pxc-operator.v1.1.0', pkgName: 'pxc-operator', channelName: 'stable-v1' });
      assert.equal(next.csvName, 'pxc-operator.v1.2.0');
      const gvk = { group: 'cloud.dbaas.example.com', version: 'v1alpha1', kind: 'BackupLocation', plural: 'backuplocations' };
      const providers = await c.stream('GetChannelEntriesThatProvide', gvk);
      assert.deepEqual([...new Set(providers.map((e) => `${String(e.channelName)}:${String(e.bundleName)}`))].sort(), [
        'candidate-v0:cloud-provider-operator.v0.1.0',
        'candidate-v0:cloud-provider-operator.v0.2.0',
        'fast-v0:cloud-provider-operator.v0.2.0',
        'stable-v0:cloud-provider-operator.v0.1.0',
        'stable-v0:cloud-provider-operator.v0.2.0',
      ]);
      const latest = await c.stream('GetLatestChannelEntriesThatProvide', gvk);
      assert.deepEqual(latest.map((e) => `${String(e.channelName)}:${String(e.bundleName)}`).sort(), [
        'candidate-v0:cloud-provider-operator.v0.2.0',
        'fast-v0:cloud-provider-operator.v0.2.0',
        'stable-v0:cloud-provider-operator.v0.2.0',
      ]);
      const def = await c.unary('GetDefaultBundleThatProvides', gvk);
      assert.deepEqual([def.packageName, def.channelName, def.csvName], ['cloud-provider-operator', 'stable-v0', 'cloud-provider-operator.v0.2.0']);
      const all = await c.stream('ListBundles', {});
      assert.equal(new Set(all.map((x) => x.csvName)).size, 16);
      // ListBundles carries the upgrade edges (GetBundle, as opm's, does not)
      const listed = all.find((x) => x.csvName === 'pxc-operator.v1.2.0' && x.channelName === 'stable-v1')!;
      assert.deepEqual([listed.replaces, listed.skips], ['pxc-operator.v1.1.0', ['pxc-operator.v1.0.0']]);
      // as opm: an unknown package is an UNKNOWN error naming it
      await assert.rejects(
        c.unary('GetPackage', { name: 'logging-operator' }),
        (err: grpc.ServiceError) => err.code === grpc.status.UNKNOWN && err.details === 'package "logging-operator" not found',
      );
    } finally {
      c.close();
      s.proc.kill('SIGTERM');
      await s.exited;
    }
    const p = await serve(join(work, 'platformx', 'catalog'));
    const pc = new Registry(p.port);
    try {
      assert.deepEqual((await pc.stream('ListPackages', {})).map((x) => x.name).sort(), [
        'cloud-provider-operator',
        'monitoring-operator',
        'psmdb-operator',
        'pxc-operator',
      ]);
      assert.equal((await pc.unary('GetPackage', { name: 'monitoring-operator' })).defaultChannelName, 'fast-v1');
      assert.equal((await pc.unary('GetBundleForChannel', { pkgName: 'monitoring-operator', channelName: 'fast-v1' })).csvName, 'monitoring-operator.v1.2.0');
    } finally {
      pc.close();
      p.proc.kill('SIGTERM');
      await p.exited;
    }
  });
});
