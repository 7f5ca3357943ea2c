// kplane as a user gets it: `npm pack` (prepack builds dist/), the tarball installed into an empty
// project, then used from plain JavaScript, from strict TypeScript against the shipped .d.ts, and
// through the installed `kplane` bin. No tsx and no src/ on the way: the consumer runs dist/.
//
// better-sqlite3: its install script downloads a prebuilt binding from GitHub and, when it cannot
// (CI has no internet), compiles SQLite (minutes on a 2-core machine; over 6.5 minutes, unfinished,
// under this machine's load). That script is better-sqlite3's, not ours, so the consumer installs
// with --ignore-scripts, pins better-sqlite3 to the version the repository has installed, and gets
// the binding the repository's own `npm install` produced for this same node, platform and version
// (node_modules/better-sqlite3/build/Release/better_sqlite3.node). Without that file it runs
// better-sqlite3's install script after all. The other skipped scripts are checks (protobufjs); the
// kplane package has none.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { loadKubeconfig } from '../../src/client/index.js';
import { NODE_FLAGS } from '../../src/runtime/node-flags.js';
import { RawClient } from '../support/https.js';
import { repoRoot, type RunResult } from '../support/tools.js';

const require = createRequire(import.meta.url);
const npm = 'npm';

/**
 * The consumer's environment: nothing of the outer `npm test` (npm_* variables would steer the
 * nested npm) and no kplane-source condition (that is how this repository runs its own source).
 */
function consumerEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.toLowerCase().startsWith('npm_')) env[k] = v;
  const nodeOptions = (process.env.NODE_OPTIONS ?? '').split(/\s+/).filter((o) => o !== '' && o !== '--conditions=kplane-source');
  env.NODE_OPTIONS = nodeOptions.join(' ');
  return env;
}

/** Runs cmd with exactly `env` (test/support's run() adds the test process's own environment). */
function run(cmd: string, args: readonly string[], opts: { cwd?: string; env: NodeJS.ProcessEnv; timeoutMs?: number }): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: opts.cwd ?? repoRoot, env: opts.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const timeoutMs = opts.timeoutMs ?? 60_000;
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${cmd} ${args.join(' ')} timed out after ${timeoutMs} ms\nstdout: ${stdout}\nstderr: ${stderr}`));
    }, timeoutMs);
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

function ok(r: RunResult, what: string): RunResult {
  assert.equal(r.code, 0, `${what} failed (${r.code})\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
  return r;
}

function versionOf(pkg: string): string {
  return (JSON.parse(readFileSync(require.resolve(`${pkg}/package.json`), 'utf8')) as { version: string }).version;
}

/** Non-TypeScript files under src/ outside testdata/: what the build copies into dist/. */
function assets(dir: string, out: string[] = []): string[] {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) {
      if (e.name !== 'testdata') assets(p, out);
    } else if (!e.name.endsWith('.ts') && !e.name.endsWith('.md') && !e.name.startsWith('.')) out.push(relative(join(repoRoot, 'src'), p));
  }
  return out;
}

const CONSUMER_MJS = `
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createControlPlane, core, sqlite } from 'kplane';
import { createHttpsClient } from 'kplane/client';
import { Manager, runControllers } from 'kplane/controllers';
import { convertToModel, parseBlobs, validateModel } from 'kplane/catalog';
import { openMemoryStorage } from 'kplane/storage';
import { newKubeFeatureGate } from 'kplane/featuregate';
import { createCertificateAuthority, issueCertificate } from 'kplane/webhook';

const dataDir = mkdtempSync(join(tmpdir(), 'kplane-consumer-mjs-'));
// A library user's own feature, next to kplane's.
const featureGates = newKubeFeatureGate();
featureGates.add({ MyFeature: { default: false, preRelease: 'ALPHA' } });
featureGates.set('MyFeature=true,WatchList=false');
const cp = await createControlPlane({ storage: sqlite({ dir: dataDir }), apis: [core()], dataDir, port: 0, featureGates });
await cp.start();
try {
  const client = createHttpsClient(cp.kubeconfigPath);
  const configmaps = { group: '', version: 'v1', resource: 'configmaps' };
  await client.create(configmaps, 'default', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'hello' }, data: { greeting: 'hi' } });
  const read = await client.get(configmaps, 'default', 'hello');
  await client.close();
  const model = convertToModel(parseBlobs([
    '{"schema":"olm.package","name":"p","defaultChannel":"stable"}',
    '{"schema":"olm.channel","package":"p","name":"stable","entries":[{"name":"p.v1.0.0"}]}',
    '{"schema":"olm.bundle","package":"p","name":"p.v1.0.0","image":"example.com/p:1.0.0","properties":[{"type":"olm.package","value":{"packageName":"p","version":"1.0.0"}}]}',
  ].join('\\n')));
  console.log(JSON.stringify({
    greeting: read.data.greeting,
    packages: [...model.keys()],
    valid: validateModel(model) === undefined,
    exports: [typeof Manager, typeof runControllers, typeof openMemoryStorage],
    features: featureGates.toString(),
    webhook: (() => {
      const ca = createCertificateAuthority({ commonName: 'consumer-ca' });
      return issueCertificate(ca, { commonName: 'hook', hosts: ['127.0.0.1'], usage: 'server' }).certPem.startsWith('-----BEGIN CERTIFICATE-----');
    })(),
  }));
} finally {
  await cp.stop();
  rmSync(dataDir, { recursive: true, force: true });
}
`;

const CONSUMER_TS = `
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createControlPlane, core, memory, type ControlPlane, type KubeObject } from 'kplane';
import { createHttpsClient, isStatusError, type GVR, type KubeClient } from 'kplane/client';
import { controllerFactory, type Reconciler } from 'kplane/controllers';
import { parseBlobs, type DeclarativeConfig } from 'kplane/catalog';
import type { Storage } from 'kplane/storage';
import type { AdmissionResponse, AdmissionReview } from 'kplane/webhook';

interface ConfigMap extends KubeObject {
  data?: Record<string, string>;
}

const configmaps: GVR = { group: '', version: 'v1', resource: 'configmaps' };
const dataDir = mkdtempSync(join(tmpdir(), 'kplane-consumer-ts-'));
const cp: ControlPlane = await createControlPlane({ storage: memory(), apis: [core()], dataDir, port: 0 });
await cp.start();
try {
  const client: KubeClient = createHttpsClient(cp.kubeconfigPath);
  await client.create<ConfigMap>(configmaps, 'default', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'typed' }, data: { greeting: 'hello' } });
  const read: ConfigMap = await client.get<ConfigMap>(configmaps, 'default', 'typed');
  const missing = await client.get(configmaps, 'default', 'absent').then(() => 'found', (e: unknown) => (isStatusError(e) ? e.status.reason ?? '' : 'other'));
  await client.close();
  const storage: Storage = cp.storage;
  const reconciler: Reconciler = { reconcile: async () => ({}) };
  const cfg: DeclarativeConfig = parseBlobs('');
  const review: AdmissionReview<ConfigMap> = { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview' };
  const answer: AdmissionResponse = { uid: 'u', allowed: review.request === undefined };
  console.log(JSON.stringify({ allowed: answer.allowed, greeting: read.data?.greeting ?? '', missing, storage: typeof storage.get, reconciler: typeof reconciler.reconcile, factory: typeof controllerFactory, bundles: cfg.bundles.length }));
} finally {
  await cp.stop();
  rmSync(dataDir, { recursive: true, force: true });
}
`;

/** The first ```lang block of README.md after the text `after`: the README's snippets, run as written. */
function readmeBlock(after: string, lang: string): string {
  const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8');
  const at = readme.indexOf(after);
  assert.ok(at >= 0, `README.md has "${after}"`);
  const open = readme.indexOf(`\n\`\`\`${lang}\n`, at);
  assert.ok(open >= 0, `a \`\`\`${lang} block after "${after}"`);
  const start = open + lang.length + 5;
  return readme.slice(start, readme.indexOf('\n```\n', start) + 1);
}

describe('the packed tarball, installed into an empty project', { timeout: 1_200_000 }, () => {
  const work = mkdtempSync(join(tmpdir(), 'kplane-package-'));
  const consumer = join(work, 'consumer');
  const env = consumerEnv();
  let files: string[] = [];
  let serving: ChildProcess | undefined;

  before(async () => {
    // prepack builds dist/ from scratch, so the tarball holds what src/ holds now.
    const started = Date.now();
    const packed = ok(await run(npm, ['pack', '--json', '--pack-destination', work], { env, timeoutMs: 600_000 }), 'npm pack');
    const [info] = JSON.parse(packed.stdout.slice(packed.stdout.indexOf('['))) as {
      filename: string;
      size: number;
      unpackedSize: number;
      entryCount: number;
      files: { path: string }[];
    }[];
    assert.ok(info);
    files = info.files.map((f) => f.path);
    const tarball = join(work, info.filename);
    console.log(`# npm pack: ${info.filename} ${info.size} bytes (${info.unpackedSize} unpacked), ${info.entryCount} files, in ${Date.now() - started} ms`);

    const installStarted = Date.now();
    mkdirSync(consumer);
    ok(await run(npm, ['init', '-y'], { cwd: consumer, env }), 'npm init');
    const pkg = JSON.parse(readFileSync(join(consumer, 'package.json'), 'utf8')) as Record<string, unknown>;
    writeFileSync(join(consumer, 'package.json'), JSON.stringify({ ...pkg, type: 'module' }, null, 2));
    const deps = [tarball, `better-sqlite3@${versionOf('better-sqlite3')}`, `@types/node@${versionOf('@types/node')}`];
    ok(
      await run(npm, ['install', ...deps, '--prefer-offline', '--ignore-scripts', '--no-audit', '--no-fund'], { cwd: consumer, env, timeoutMs: 600_000 }),
      'npm install',
    );
    const binding = join(dirname(require.resolve('better-sqlite3/package.json')), 'build', 'Release', 'better_sqlite3.node');
    const target = join(consumer, 'node_modules', 'better-sqlite3', 'build', 'Release');
    if (existsSync(binding)) {
      mkdirSync(target, { recursive: true });
      copyFileSync(binding, join(target, 'better_sqlite3.node'));
    } else {
      ok(await run(npm, ['rebuild', 'better-sqlite3', '--foreground-scripts'], { cwd: consumer, env, timeoutMs: 900_000 }), 'npm rebuild better-sqlite3');
    }
    console.log(`# npm install of the tarball: ${Date.now() - installStarted} ms`);
  });

  after(async () => {
    if (serving && serving.exitCode === null) {
      serving.kill('SIGKILL');
      await new Promise((r) => serving!.once('exit', r));
    }
    rmSync(work, { recursive: true, force: true });
  });

  it('holds dist/, bin/, the non-test sources and nothing else', () => {
    const top = new Set(files.map((f) => f.split('/')[0]));
    assert.deepEqual([...top].sort(), ['README.md', 'bin', 'dist', 'package.json', 'src']);
    assert.deepEqual(
      files.filter((f) => /\.test\.ts$|\.test-support\.ts$|\/testdata\/|\/bench-[^/]*$|\/conformance\//.test(f)),
      [],
    );
    assert.deepEqual(
      files.filter((f) => f.startsWith('src/') && !f.endsWith('.ts')),
      [],
    );
    assert.deepEqual(
      files.filter((f) => f.split('/').some((part) => part.startsWith('.'))),
      [],
      'no dotfiles (dist/.build-stamp stays home)',
    );
    // Every export's target and every asset the code reads from disk next to itself.
    const manifest = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as {
      exports: Record<string, string | Record<string, string>>;
      bin: Record<string, string>;
    };
    const targets = Object.values(manifest.exports).flatMap((e) =>
      typeof e === 'string'
        ? [e]
        : Object.entries(e)
            .filter(([c]) => c !== 'kplane-source')
            .map(([, t]) => t),
    );
    for (const t of [...targets, ...Object.values(manifest.bin), 'dist/cli/main.js'])
      assert.ok(files.includes(t.replace(/^\.\//, '')), `${t} is in the tarball`);
    for (const a of assets(join(repoRoot, 'src'))) assert.ok(files.includes(`dist/${a}`), `dist/${a} is in the tarball`);
  });

  it('a plain .mjs imports kplane and its subpaths, serves on SQLite, creates and reads a ConfigMap', async () => {
    writeFileSync(join(consumer, 'app.mjs'), CONSUMER_MJS);
    const r = ok(await run(process.execPath, ['app.mjs'], { cwd: consumer, env, timeoutMs: 120_000 }), 'node app.mjs');
    assert.deepEqual(JSON.parse(r.stdout.trim()), {
      greeting: 'hi',
      packages: ['p'],
      valid: true,
      exports: ['function', 'function', 'function'],
      features: 'MyFeature=true,WatchList=false',
      webhook: true,
    });
    assert.doesNotMatch(r.stderr, /tsx|Unknown file extension/);
  });

  it('a strict NodeNext .ts typechecks against the shipped .d.ts (skipLibCheck off), compiles and runs', async () => {
    writeFileSync(join(consumer, 'app.ts'), CONSUMER_TS);
    writeFileSync(
      join(consumer, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          strict: true,
          skipLibCheck: false,
          types: ['node'],
          outDir: 'out',
        },
        files: ['app.ts'],
      }),
    );
    ok(await run(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', 'tsconfig.json'], { cwd: consumer, env, timeoutMs: 300_000 }), 'tsc');
    const r = ok(await run(process.execPath, ['out/app.js'], { cwd: consumer, env, timeoutMs: 120_000 }), 'node out/app.js');
    assert.deepEqual(JSON.parse(r.stdout.trim()), {
      allowed: true,
      greeting: 'hello',
      missing: 'NotFound',
      storage: 'function',
      reconciler: 'function',
      factory: 'function',
      bundles: 0,
    });
  });

  it("README's JavaScript snippet runs as the README says: saved as app.mjs, node app.mjs", async () => {
    const dir = join(consumer, 'readme-js');
    mkdirSync(dir);
    writeFileSync(join(dir, 'app.mjs'), readmeBlock('From plain JavaScript', 'js'));
    const r = ok(await run(process.execPath, ['app.mjs'], { cwd: dir, env, timeoutMs: 120_000 }), 'node app.mjs');
    assert.match(r.stdout, /^serving on https:\/\/127\.0\.0\.1:\d+; kubeconfig at \S+\/readme-js\/data\/admin\.kubeconfig$/m);
    assert.match(r.stdout, /^\{ greeting: 'hi' \}$/m);
  });

  it("README's TypeScript snippet compiles and runs with the README's commands (demo.ts, tsc, node demo.js)", async () => {
    const dir = join(consumer, 'readme-ts');
    mkdirSync(dir);
    writeFileSync(join(dir, 'demo.ts'), readmeBlock('From TypeScript the same code', 'ts'));
    const commands = readmeBlock('`node demo.ts` fails', 'sh').trim().split('\n');
    assert.deepEqual(commands, ['npm install --save-dev typescript @types/node', 'npx tsc demo.ts --module nodenext --target es2022 --strict', 'node demo.js']);
    // The install as written, with this repository's versions pinned and npm's cache first (no network in CI).
    ok(
      await run(
        npm,
        [
          'install',
          '--save-dev',
          `typescript@${versionOf('typescript')}`,
          `@types/node@${versionOf('@types/node')}`,
          '--prefer-offline',
          '--no-audit',
          '--no-fund',
        ],
        { cwd: dir, env, timeoutMs: 300_000 },
      ),
      commands[0]!,
    );
    ok(await run('sh', ['-c', commands[1]!], { cwd: dir, env, timeoutMs: 300_000 }), commands[1]!);
    const r = ok(await run('sh', ['-c', commands[2]!], { cwd: dir, env, timeoutMs: 120_000 }), commands[2]!);
    assert.equal(r.stdout, 'hello\n');
  });

  it('the installed kplane bin serves: ready, and answers with the admin kubeconfig, protobuf too', async () => {
    const bin = join(consumer, 'node_modules', '.bin', 'kplane');
    ok(await run(bin, ['--help'], { cwd: consumer, env }), 'kplane --help');
    const dataDir = join(consumer, 'data');
    const child = spawn(bin, ['serve', '--secure-port', '0', '--data-dir', dataDir], { cwd: consumer, env, stdio: ['ignore', 'pipe', 'pipe'] });
    serving = child;
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr = (stderr + d).slice(-4000)));
    const url = await new Promise<string>((resolve, reject) => {
      let out = '';
      const timer = setTimeout(() => reject(new Error(`kplane serve printed no URL in 120 s: ${stderr}`)), 120_000);
      child.stdout.setEncoding('utf8').on('data', (d: string) => {
        out += d;
        const m = /^kplane is serving on (https:\/\/\S+) /m.exec(out);
        if (m) {
          clearTimeout(timer);
          resolve(m[1]!);
        }
      });
      child.once('exit', (code, sig) => {
        clearTimeout(timer);
        reject(new Error(`kplane serve exited (${code ?? sig}): ${stderr}`));
      });
    });
    // The shebang's node flags reach the process npm's bin link starts (Linux: /proc).
    if (existsSync(`/proc/${child.pid}/cmdline`)) {
      const argv = readFileSync(`/proc/${child.pid}/cmdline`, 'utf8').split('\0');
      for (const f of NODE_FLAGS) assert.ok(argv.includes(f), `${f} in ${argv.join(' ')}`);
    }
    const cfg = loadKubeconfig(join(dataDir, 'admin.kubeconfig'));
    assert.equal(cfg.server, url);
    const client = new RawClient(url, { ca: cfg.caPem!, cert: cfg.certPem!, key: cfg.keyPem! });
    try {
      let ready = await client.request({ path: '/readyz' });
      for (let i = 0; i < 100 && !(ready.status === 200 && ready.text() === 'ok'); i++) {
        await new Promise((r) => setTimeout(r, 100));
        ready = await client.request({ path: '/readyz' });
      }
      assert.equal(ready.text(), 'ok');
      const ns = await client.request({ path: '/api/v1/namespaces/default' });
      assert.equal(ns.status, 200, ns.text());
      assert.equal(ns.json<{ metadata: { name: string } }>().metadata.name, 'default');
      // Protobuf answers need the .proto files the build copied beside the JavaScript.
      const pb = await client.request({ path: '/api/v1/namespaces', headers: { accept: 'application/vnd.kubernetes.protobuf' } });
      assert.equal(pb.status, 200, pb.text());
      assert.equal(pb.headers['content-type'], 'application/vnd.kubernetes.protobuf');
      assert.deepEqual([...pb.body.subarray(0, 4)], [0x6b, 0x38, 0x73, 0x00]);
    } finally {
      client.agent.destroy();
    }
    child.kill('SIGTERM');
    const code = await new Promise<number | null>((r) => (child.exitCode !== null ? r(child.exitCode) : child.once('exit', (c) => r(c))));
    assert.equal(code, 0, stderr);
  });

  // The README's quick start in this repository (dist/ is fresh from the pack above, so npm start's
  // prestart only checks it): `npm start` with the flags the README gives for another port, the
  // data under a fresh directory's .kplane, then the README's "In another terminal" block as written.
  it("README's quick start: npm start prints how to use it, and the README's kubectl commands work", async () => {
    const home = join(work, 'quick-start');
    mkdirSync(home);
    const child = spawn(npm, ['start', '--', '--secure-port', '0', '--data-dir', join(home, '.kplane')], {
      cwd: repoRoot,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let out = '';
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr = (stderr + d).slice(-4000)));
    try {
      const printed = await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`npm start printed no instructions in 300 s: ${out}${stderr}`)), 300_000);
        child.stdout.setEncoding('utf8').on('data', (d: string) => {
          out += d;
          if (/^To use it: .*$/m.test(out)) {
            clearTimeout(timer);
            resolve(out);
          }
        });
        child.once('exit', (code, sig) => {
          clearTimeout(timer);
          reject(new Error(`npm start exited (${code ?? sig}): ${out}${stderr}`));
        });
      });
      const data = join(home, '.kplane');
      assert.match(
        printed,
        new RegExp(`^kplane is serving on https://127\\.0\\.0\\.1:\\d+ \\(storage: sqlite, data: ${data.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\)$`, 'm'),
      );
      assert.ok(printed.includes(`To use it: export KUBECONFIG=${join(data, 'admin.kubeconfig')} && kubectl get namespaces`), printed);
      const block = readmeBlock('In another terminal:', 'sh');
      assert.match(block, /^export KUBECONFIG=\$PWD\/\.kplane\/admin\.kubeconfig$/m);
      const tools = join(repoRoot, '.tools', 'bin');
      const r = ok(
        await run('bash', ['-ec', block], { cwd: home, env: { ...env, PATH: `${tools}:${env.PATH ?? ''}` }, timeoutMs: 120_000 }),
        'the README block',
      );
      assert.match(r.stdout, /^default +Active /m);
      assert.match(r.stdout, /^configmap\/hello created$/m);
      assert.match(r.stdout, /^ {2}greeting: hi$/m);
    } finally {
      if (child.pid !== undefined && child.exitCode === null) process.kill(-child.pid, 'SIGTERM');
      await new Promise((r) => (child.exitCode !== null || child.signalCode !== null ? r(undefined) : child.once('exit', r)));
    }
  });
});
