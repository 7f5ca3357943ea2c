// `kplane ccm-test env up` as a user runs it (a real process that starts kplane serve, the
// cloud-controller-manager with the loopback cloud and node-sim in the background), then the kit
// with the built-in loopback driver from the capability file it wrote, a focused run that proves
// the environment end to end (a load balancer test with its data plane, and upgrade/control-plane:
// the driver restarts serve with other flags through the env's pid files), JUnit read back, and
// `env down`. The kit and `down` run in process: one real process of the command is enough to
// prove main's wiring, and each costs seconds in CI. Addresses sit in .236.x ranges to stay clear
// of other tests' node-sims and load balancers on this machine.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parse } from 'junit2json';
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
  it('up starts the environment and writes a capability file the built-in driver runs the kit with, upgrade included; down stops it', async () => {
    const up = await kplane([
      'ccm-test',
      'env',
      'up',
      '--dir',
      dir,
      '--nodes',
      '2',
      '--node-cidr',
      '127.2.236.0/24',
      '--pod-cidr',
      '127.3.236.0/23',
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

    // The kit against it with the built-in loopback driver from the capability file env up wrote
    // (in process: the command's wiring through main is what env up's process proved): a control-
    // plane upgrade (the driver restarts serve with other flags) and one load balancer test with its
    // data plane, JUnit read back.
    assert.match(driverFile, /^ {2}envDir: ".*"\n/m);
    const junit = join(dir, 'junit.xml');
    let log = '';
    const code = await ccmTest(
      [
        ...['--kubeconfig', join(dir, 'kubeconfig'), '--capabilities', join(dir, 'ccm-testdriver.yaml')],
        ...['--focus', 'upgrade/control-plane', '--focus', 'lb/affinity-cluster', '--junit', junit],
      ],
      { out: (s) => (log += s), err: (s) => (log += s) },
    );
    assert.equal(code, 0, log);
    const parsed = await parse(await readFile(junit, 'utf8'));
    assert.ok(parsed && 'testsuite' in parsed, 'a <testsuites> document');
    const cases = parsed.testsuite?.[0]?.testcase ?? [];
    assert.deepEqual(
      cases.map((c) => [
        /\[([a-z/-]+)\] \[(\w+)\]$/
          .exec(c.name ?? '')
          ?.slice(1)
          .join(' '),
        c.status,
      ]),
      [
        ['lb/affinity-cluster controlPlane', 'passed'],
        ['lb/affinity-cluster dataPlane', 'passed'],
        ['upgrade/control-plane controlPlane', 'passed'],
        ['upgrade/control-plane dataPlane', 'passed'],
      ],
      log,
    );
    // The upgrades were real: serve is another process, started with the upgrade's flag, on the
    // same port; CCM and node-sim are the ones env up started.
    const now = await Promise.all(PARTS.map(async (p) => Number(await readFile(join(dir, `${p}.pid`), 'utf8'))));
    assert.notEqual(now[0], started[0]);
    assert.deepEqual(now.slice(1), started.slice(1));
    assert.ok(readFileSync(`/proc/${now[0]}/cmdline`, 'utf8').split('\0').includes('--max-requests-inflight'), 'restarted with the upgrade flag');
    const serving = (await readFile(join(dir, 'serve.log'), 'utf8')).match(/kplane is serving on \S+/g) ?? [];
    assert.deepEqual(serving, [serving[0], serving[0], serving[0]], 'started once by env up, restarted once per half, same address');
    started.splice(0, started.length, ...now);

    let out = '';
    const down = await ccmTestEnv(['down', '--dir', dir], { out: (s) => (out += s), err: (s) => (out += s) });
    assert.equal(down, 0, out);
    assert.match(out, /^stopped node-sim \(pid \d+\)\nstopped cloud-controller-manager \(pid \d+\)\nstopped serve \(pid \d+\)\n$/);
    for (const pid of started) assert.ok(!alive(pid), `pid ${pid} stopped`);
    assert.equal(await ccmTestEnv(['down', '--dir', dir], { out: () => {}, err: () => {} }), 1, 'nothing left to stop');
  });
});
