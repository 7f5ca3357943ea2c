// `kplane ccm-test env up` as a user runs it (a real process that starts kplane serve, the
// cloud-controller-manager with the loopback cloud and node-sim in the background), then
// `kplane ccm-test --list` against what it wrote and `env down` (both in process: one real
// process of the command is enough to prove main's wiring, and each costs seconds in CI). Addresses sit in .236.x ranges to stay clear of other
// tests' node-sims and load balancers on this machine.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ccmTest } from '../../src/cli/ccm-test.js';
import { ccmTestEnv } from '../../src/cli/ccm-test-env.js';
import { repoRoot, run } from '../support/tools.js';

const kplane = (args: string[]) =>
  run(process.execPath, ['--import', 'tsx', join(repoRoot, 'src/cli/main.ts'), ...args], {
    timeoutMs: 240_000,
    env: { NODE_OPTIONS: '--conditions=kplane-source' },
  });

const PARTS = ['serve', 'cloud-controller-manager', 'node-sim'];
let dir = '';
/** Running, and not a zombie left to a parent that does not reap (its cmdline is empty then). */
const alive = (pid: number): boolean => {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').length > 0;
  } catch {
    return false;
  }
};

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'kplane-ccm-env-'));
});
after(async () => {
  // Whatever a failed test left running is stopped by the command under test's own `down`.
  if (dir && PARTS.some((p) => existsSync(join(dir, `${p}.pid`)))) await ccmTestEnv(['down', '--dir', dir], { out: () => {}, err: () => {} });
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('kplane ccm-test env', () => {
  it('up starts the environment and writes a kubeconfig and a capability file the kit runs with; down stops it', async () => {
    const up = await kplane([
      'ccm-test',
      'env',
      'up',
      '--dir',
      dir,
      '--nodes',
      '1',
      '--node-cidr',
      '127.2.236.0/24',
      '--pod-cidr',
      '127.3.236.0/24',
      '--ingress-cidr',
      '127.4.236.0/24',
      '--service-cluster-ip-range',
      '127.1.236.0/24',
    ]);
    assert.equal(up.code, 0, `${up.stdout}${up.stderr}`);
    assert.match(up.stdout, /^Environment up in .*\n {2}kplane serve {13}https:\/\/127\.0\.0\.1:\d+ \(pid \d+\)\n/);
    assert.match(up.stdout, /Run the kit: {2}kplane ccm-test --kubeconfig .*\/kubeconfig --capabilities .*\/ccm-testdriver\.yaml\n/);
    const driverFile = await readFile(join(dir, 'ccm-testdriver.yaml'), 'utf8');
    assert.match(driverFile, /^driver: loopback\nconfig:\n {2}adminURL: http:\/\/127\.0\.0\.1:\d+\n/m);
    const started = await Promise.all(PARTS.map(async (p) => Number(await readFile(join(dir, `${p}.pid`), 'utf8'))));
    for (const pid of started) assert.ok(alive(pid), `pid ${pid} is running`);

    // The kit against it, as a user types it; the probe driver asserts the written admin URL
    // reaches the loopback cloud, which knows the node-sim's instances once the CCM saw their Nodes.
    await writeFile(
      join(dir, 'probe-driver.mjs'),
      `export default async (ctx) => {
  const url = ctx.config.adminURL;
  for (let i = 0; ; i++) {
    const body = await (await fetch(url + '/instances')).json();
    if (body.instances.length === 1) break;
    if (i > 300) throw new Error('the loopback cloud at ' + url + ' knows ' + JSON.stringify(body));
    await new Promise((r) => setTimeout(r, 100));
  }
  return { name: 'probe', capabilities: new Set() };
};
`,
    );
    // In process: the command's wiring through main is what env up's process proved.
    let listed = '';
    const code = await ccmTest(
      ['--kubeconfig', join(dir, 'kubeconfig'), '--capabilities', join(dir, 'ccm-testdriver.yaml'), '--driver', join(dir, 'probe-driver.mjs'), '--list'],
      { out: (s) => (listed += s), err: (s) => (listed += s) },
    );
    assert.equal(code, 0, listed);
    assert.match(listed, /^ID +NEEDS +CONTROL PLANE +DATA PLANE\n/);

    let out = '';
    const down = await ccmTestEnv(['down', '--dir', dir], { out: (s) => (out += s), err: (s) => (out += s) });
    assert.equal(down, 0, out);
    assert.match(out, /^stopped node-sim \(pid \d+\)\nstopped cloud-controller-manager \(pid \d+\)\nstopped serve \(pid \d+\)\n$/);
    for (const pid of started) assert.ok(!alive(pid), `pid ${pid} stopped`);
    assert.equal(await ccmTestEnv(['down', '--dir', dir], { out: () => {}, err: () => {} }), 1, 'nothing left to stop');
  });
});
