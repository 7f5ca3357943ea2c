// What a user hands the kit before any test runs: the capability file, the driver module and the
// kubeconfig. Each bad one is a CcmTestConfigError naming the file and the field or the missing part.
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { KubeClient } from '../client/index.js';
import { CcmTestConfigError, parseCapabilityFile } from './capability-file.js';
import { connectCluster } from './cluster.js';
import { loadDriver, withCapabilityFile } from './driver-loader.js';
import type { CcmTestDriver } from './types.js';

let dir = '';
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'kplane-ccm-inputs-'));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

const F = '/cfg/ccm-testdriver.yaml';
const rejects = (text: string, message: string | RegExp): void =>
  assert.throws(
    () => parseCapabilityFile(text, F),
    (e: unknown) => {
      assert.ok(e instanceof CcmTestConfigError, String(e));
      if (typeof message === 'string') assert.equal(e.message, message);
      else assert.match(e.message, message);
      return true;
    },
  );

describe('capability file', () => {
  it('reads driver, config, capabilities and Go-duration timeouts', () => {
    const f = parseCapabilityFile(
      'driver: ./my-driver.ts\nconfig:\n  adminURL: http://127.0.0.1:1\n  region: r1\ncapabilities: [lb.tcp, dataPlane]\ntimeouts:\n  lbCreate: 5m\n  proxyLag: 1m30s\n  nodeDeletion: 500ms\n',
      F,
    );
    assert.deepEqual(f, {
      path: F,
      driver: './my-driver.ts',
      config: { adminURL: 'http://127.0.0.1:1', region: 'r1' },
      capabilities: ['lb.tcp', 'dataPlane'],
      timeouts: { lbCreateMs: 300_000, proxyLagMs: 90_000, nodeDeletionMs: 500 },
    });
    assert.deepEqual(parseCapabilityFile('', F), { path: F, config: {}, timeouts: {} });
  });

  it('names the file and the field of every problem', () => {
    rejects(
      'capabilities: [lb.tcp, lb.teleport]\n',
      /^\/cfg\/ccm-testdriver\.yaml: capabilities\[1\]: unknown capability "lb\.teleport"; known: lb\.tcp, lb\.udp, .*, dataPlane, podDial$/,
    );
    rejects('timeouts:\n  lbCreate: 300000\n', '/cfg/ccm-testdriver.yaml: timeouts.lbCreate: 300000 is not a duration; use e.g. 5m');
    rejects('timeouts:\n  lbLag: "120"\n', '/cfg/ccm-testdriver.yaml: timeouts.lbLag: "120" is not a duration; use e.g. 5m');
    rejects('timeouts:\n  lbCreate: -5m\n', '/cfg/ccm-testdriver.yaml: timeouts.lbCreate: must be above 0, got "-5m"');
    rejects(
      'timeouts:\n  lbCreateMs: 5m\n',
      '/cfg/ccm-testdriver.yaml: timeouts.lbCreateMs: unknown timeout; known: lbCreate, lbLag, lbPropagation, nodeDeletion, proxyLag (values are Go durations, e.g. 5m)',
    );
    rejects('drivers: fake\n', '/cfg/ccm-testdriver.yaml: unknown field "drivers"; known: driver, config, capabilities, timeouts');
    rejects('capabilities: lb.tcp\n', '/cfg/ccm-testdriver.yaml: capabilities: must be a list, e.g. [lb.tcp, dataPlane], got "lb.tcp"');
    rejects('config: [a]\n', '/cfg/ccm-testdriver.yaml: config: must be a map, got ["a"]');
    rejects('driver: a\ndriver: b\n', /^\/cfg\/ccm-testdriver\.yaml: not valid YAML: .*/);
    rejects('- a\n', '/cfg/ccm-testdriver.yaml: must be a YAML map with driver, config, capabilities, timeouts');
  });

  it("replaces the driver's capabilities and overlays its timeouts, leaving the driver as it was", () => {
    const d: CcmTestDriver = {
      name: 'd',
      capabilities: new Set(['lb.tcp', 'lb.udp']),
      timeouts: { lbCreateMs: 1, lbLagMs: 2, lbPropagationMs: 3, nodeDeletionMs: 4, proxyLagMs: 5 },
      testExternalIP: '127.5.0.250',
    };
    const seen = withCapabilityFile(d, { capabilities: ['lb.tcp'], timeouts: { lbLagMs: 20 } });
    // Everything else the driver offers is kept (svc/externalip probes only the driver's address).
    assert.equal(seen.testExternalIP, '127.5.0.250');
    assert.deepEqual([...seen.capabilities], ['lb.tcp']);
    assert.deepEqual(seen.timeouts, { lbCreateMs: 1, lbLagMs: 20, lbPropagationMs: 3, nodeDeletionMs: 4, proxyLagMs: 5 });
    assert.deepEqual([...d.capabilities], ['lb.tcp', 'lb.udp']);
    assert.equal(withCapabilityFile(d, { timeouts: {} }).capabilities, d.capabilities);
  });
});

describe('driver module', () => {
  const ctx = { client: {} as KubeClient, config: { zone: 'z1' } };
  const load = async (source: string, name = `d${Math.random().toString(36).slice(2)}.mjs`): Promise<CcmTestDriver> => {
    await writeFile(join(dir, name), source);
    return loadDriver({ spec: `./${name}`, baseDir: dir, context: ctx, drivers: {} });
  };
  const loadFails = async (source: string, message: RegExp): Promise<void> => {
    await assert.rejects(load(source), (e: unknown) => {
      assert.ok(e instanceof CcmTestConfigError, String(e));
      assert.match(e.message, message);
      return true;
    });
  };

  it('takes a default-exported factory (given the context), a `driver` object, or a TypeScript module', async () => {
    const fromFactory = await load("export default async (ctx) => ({ name: 'f-' + ctx.config.zone, capabilities: new Set(['lb.tcp']), timeouts: {} });");
    assert.equal(fromFactory.name, 'f-z1');
    const fromObject = await load("export const driver = { name: 'obj', capabilities: ['lb.udp'], nodes: { deleteInstance() {}, instanceExists() {} } };");
    assert.deepEqual([fromObject.name, [...fromObject.capabilities], typeof fromObject.nodes?.deleteInstance], ['obj', ['lb.udp'], 'function']);
    const ts = await load(
      "import type { CcmTestDriver } from 'kplane/ccm-testing';\nexport function createDriver(): CcmTestDriver {\n  return { name: 'ts', capabilities: new Set(['dataPlane'] as const), timeouts: {} as CcmTestDriver['timeouts'] };\n}\n",
      'ts-driver.ts',
    );
    assert.equal(ts.name, 'ts');
  });

  it('names what a module lacks', async () => {
    await loadFails(
      'export const notADriver = 1;',
      /^driver module \/.*\.mjs: exports no CcmTestDriver: expected a default export or `driver` or `createDriver`, a driver object or a factory \(ctx\) => Promise<CcmTestDriver>; it exports notADriver$/,
    );
    await loadFails(
      'export default { capabilities: new Set(), nodes: { deleteInstance() {} }, externalClient: { httpGet() {} } };',
      /\(export default\): not a CcmTestDriver: missing or wrong name \(a non-empty string\), nodes\.instanceExists\(\) \(a function\), externalClient\.udpExchange\(\) \(a function\), externalClient\.tcpConnect\(\) \(a function\), externalClient\.sourceIPs\(\) \(a function\)$/,
    );
    await loadFails(
      "export default () => ({ name: 'x', capabilities: new Set(['lb.warp']) });",
      /\(export default\), what the factory returned: driver capabilities\[0\]: unknown capability "lb\.warp"; known: lb\.tcp/,
    );
    await loadFails(
      "export default async () => { throw new Error('no credentials for the cloud'); };",
      /\(export default\): the factory failed: no credentials for the cloud$/,
    );
    await loadFails('export default {', /^driver module \/.*\.mjs: cannot be loaded: /);
    await assert.rejects(
      loadDriver({
        spec: 'gce',
        baseDir: dir,
        context: ctx,
        drivers: { fake: async () => ({}) as CcmTestDriver, loopback: async () => ({}) as CcmTestDriver },
      }),
      { message: 'unknown driver "gce": built in: fake, loopback; or give a module path, e.g. ./my-driver.ts' },
    );
  });
});

describe('kubeconfig', () => {
  it('an unreachable cluster is named with its URL and the error', async () => {
    // A port that was free a moment ago: nothing listens there.
    const srv = createServer();
    await new Promise<void>((ok) => srv.listen(0, '127.0.0.1', ok));
    const { port } = srv.address() as { port: number };
    await new Promise((ok) => srv.close(ok));
    const kc = join(dir, 'kc');
    await writeFile(
      kc,
      `apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "https://127.0.0.1:${port}"}}]\nusers: [{name: u, user: {token: t}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n`,
    );
    await assert.rejects(connectCluster(kc, { timeoutMs: 5_000 }), (e: unknown) => {
      assert.ok(e instanceof CcmTestConfigError);
      assert.match(e.message, new RegExp(`^cannot reach the cluster at https://127\\.0\\.0\\.1:${port} \\(kubeconfig ${kc}\\): .*ECONNREFUSED`));
      return true;
    });
    await assert.rejects(connectCluster(join(dir, 'missing')), { message: new RegExp(`^kubeconfig ${dir}/missing: ENOENT`) });
  });
});
