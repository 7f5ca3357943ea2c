// `kplane ccm-test` in process (the command's function, as main calls it) against a real kplane
// over HTTPS from a kubeconfig, with a driver module and a capability file on disk and a few
// in-test tests: --list is stable, progress lines and exit codes, JUnit read back by a JUnit
// parser (junit2json), and bad input refused with exit 2 before any test runs. The real process
// (`kplane ccm-test env up`, `ccm-test`, `env down`) is test/e2e/ccm-test-env.test.ts.
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parse, type TestSuites } from 'junit2json';
import { startTestServer, type TestServer } from '../../test/support/server.js';
import type { CcmTestCase } from '../ccm-testing/index.js';
import { cloud } from '../controlplane/cloud-module.js';
import { defaultModules } from '../controlplane/modules.js';
import { ccmTest } from './ccm-test.js';

let server: TestServer;
let dir = '';
let caps = '';
let ran: string[] = [];

const DRIVER = `// An in-test driver: capabilities from the capability file, config echoed into its name.
export default async (ctx) => ({
  name: 'in-test-' + ctx.config.zone,
  capabilities: new Set(['lb.tcp', 'lb.udp', 'dataPlane']),
  timeouts: { lbCreateMs: 1000, lbLagMs: 1000, lbPropagationMs: 1000, nodeDeletionMs: 1000, proxyLagMs: 1000 },
  externalClient: { httpGet: async () => ({ ok: true }), udpExchange: async () => ({ ok: true }), tcpConnect: async () => ({ ok: true }), sourceIPs: () => [] },
});
`;

const half = (name: string, fail?: string) => async () => {
  ran.push(name);
  if (fail) throw new Error(fail);
};
const TESTS: CcmTestCase[] = [
  {
    id: 'lb/finalizer',
    upstream: '[sig-network] LoadBalancers [Feature:LoadBalancer] should handle load balancer cleanup finalizer for service',
    source: 'k/k test/e2e/network/loadbalancer.go',
    labels: ['Feature:LoadBalancer'],
    needs: { capabilities: ['lb.tcp'] },
    controlPlane: half('lb/finalizer:cp'),
    dataPlane: half('lb/finalizer:dp'),
  },
  {
    id: 'lb/type-and-ports-udp',
    upstream: '[sig-network] LoadBalancers [Feature:LoadBalancer] should be able to change the type and ports of a UDP service',
    source: 'k/k test/e2e/network/loadbalancer.go',
    labels: ['Feature:LoadBalancer'],
    needs: { capabilities: ['lb.udp'] },
    controlPlane: half('udp:cp', 'load balancer for ns/udp kept port 80 after the Service moved to 81 <&>'),
  },
  {
    id: 'nodes/deleted-when-instance-gone',
    upstream: "[sig-cloud-provider] [Feature:CloudProvider] [Disruptive] Nodes should be deleted on API server if it doesn't exist in the cloud provider",
    source: 'k/k test/e2e/cloud/nodes.go',
    needs: { capabilities: [], infra: ['nodes'], minNodes: 2, disruptive: true },
    controlPlane: half('nodes:cp'),
  },
];

const run = async (args: string[]): Promise<{ code: number; out: string; err: string }> => {
  let out = '';
  let err = '';
  const code = await ccmTest(args, { out: (s) => (out += s), err: (s) => (err += s), tests: TESTS });
  return { code, out, err };
};

before(async () => {
  server = await startTestServer({ storage: 'memory', apis: [...defaultModules(), cloud()] });
  dir = await mkdtemp(join(tmpdir(), 'kplane-ccm-cli-'));
  await writeFile(join(dir, 'my-driver.mjs'), DRIVER);
  caps = join(dir, 'ccm-testdriver.yaml');
  // The provider claims less than the driver could: no data plane.
  await writeFile(caps, 'driver: ./my-driver.mjs\nconfig:\n  zone: z1\ncapabilities: [lb.tcp, lb.udp]\ntimeouts:\n  lbCreate: 30s\n');
});
after(async () => {
  await server.stop();
  await rm(dir, { recursive: true, force: true });
});

describe('kplane ccm-test', () => {
  it('--list shows each test, what it needs and per half whether it runs or why not, the same every time', async () => {
    const first = await run(['--kubeconfig', server.kubeconfig, '--capabilities', caps, '--list']);
    assert.equal(first.code, 0, first.err);
    assert.equal(
      first.out,
      [
        'ID                                NEEDS                            CONTROL PLANE                                                                         DATA PLANE',
        'lb/finalizer                      lb.tcp                           runs                                                                                  skip (missing capability dataPlane)',
        'lb/type-and-ports-udp             lb.udp                           runs                                                                                  -',
        'nodes/deleted-when-instance-gone  infra:nodes,nodes>=2,disruptive  skip (driver has no nodes infra; needs 2 ready schedulable nodes, the cluster has 0)  -',
        '',
      ].join('\n'),
    );
    assert.deepEqual(ran, []);
    const again = await run(['--kubeconfig', server.kubeconfig, '--capabilities', caps, '--list']);
    assert.equal(again.out, first.out);
    const skipped = await run(['--kubeconfig', server.kubeconfig, '--capabilities', caps, '--list', '--skip', 'nodes/']);
    assert.deepEqual(
      skipped.out.split('\n').map((l) => l.split(' ')[0]),
      ['ID', 'lb/finalizer', 'lb/type-and-ports-udp', ''],
    );
  });

  it('runs, prints a line as each half ends, exits 1 on a failure and writes JUnit that a JUnit parser reads', async () => {
    ran = [];
    const junit = join(dir, 'out.xml');
    const r = await run(['--kubeconfig', server.kubeconfig, '--capabilities', caps, '--junit', junit]);
    assert.equal(r.code, 1, r.err);
    assert.deepEqual(ran, ['lb/finalizer:cp', 'udp:cp']);
    const lines = r.out.split('\n');
    assert.match(lines[0]!, /^Running the CCM test kit with driver in-test-z1 against https:\/\/127\.0\.0\.1:\d+$/);
    assert.match(lines[1]!, /^PASS lb\/finalizer \[controlPlane\] \d+\.\d{3}s$/);
    assert.match(lines[2]!, /^FAIL lb\/type-and-ports-udp \[controlPlane\] \d+\.\d{3}s$/);
    assert.equal(lines[3], '    load balancer for ns/udp kept port 80 after the Service moved to 81 <&>');
    assert.equal(lines[4], 'SKIP lb/finalizer [dataPlane]: missing capability dataPlane');
    assert.equal(
      lines[5],
      'SKIP nodes/deleted-when-instance-gone [controlPlane]: driver has no nodes infra; needs 2 ready schedulable nodes, the cluster has 0',
    );
    assert.match(lines[6]!, /^Ran 4 test halves in \d+\.\d{3}s: 1 passed, 1 failed, 2 skipped$/);

    const parsed = await parse(await readFile(junit, 'utf8'));
    assert.ok(parsed && 'testsuite' in parsed, 'a <testsuites> document');
    const report: TestSuites = parsed;
    assert.deepEqual([report.tests, report.failures, report.errors, report.disabled], [4, 1, 0, 2]);
    const suite = report.testsuite?.[0];
    assert.deepEqual([suite?.name, suite?.tests, suite?.failures, suite?.skipped, report.testsuite?.length], ['kplane ccm-test', 4, 1, 2, 1]);
    assert.match(suite?.timestamp ?? '', /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d$/);
    const cases = suite?.testcase ?? [];
    assert.deepEqual(
      cases.map((c) => [c.name, c.status, c.classname]),
      [
        [`[It] ${TESTS[0]!.upstream} [lb/finalizer] [controlPlane]`, 'passed', 'kplane ccm-test'],
        [`[It] ${TESTS[1]!.upstream} [lb/type-and-ports-udp] [controlPlane]`, 'failed', 'kplane ccm-test'],
        [`[It] ${TESTS[0]!.upstream} [lb/finalizer] [dataPlane]`, 'skipped', 'kplane ccm-test'],
        [`[It] ${TESTS[2]!.upstream} [nodes/deleted-when-instance-gone] [controlPlane]`, 'skipped', 'kplane ccm-test'],
      ],
    );
    assert.equal(typeof cases[0]!.time, 'number');
    assert.deepEqual(cases[1]!.failure?.[0], {
      message: 'load balancer for ns/udp kept port 80 after the Service moved to 81 <&>',
      type: 'failed',
      inner: 'load balancer for ns/udp kept port 80 after the Service moved to 81 <&>\nupstream: k/k test/e2e/network/loadbalancer.go',
    });
    assert.deepEqual(cases[2]!.skipped, [{ message: 'skipped - missing capability dataPlane' }]);
  });

  it('exits 0 when nothing failed; --driver overrides the file and --focus selects', async () => {
    ran = [];
    await writeFile(join(dir, 'other-driver.mjs'), DRIVER.replace("'in-test-'", "'other-'"));
    const r = await run(['--kubeconfig', server.kubeconfig, '--capabilities', caps, '--driver', join(dir, 'other-driver.mjs'), '--focus', 'finalizer']);
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /with driver other-z1 /);
    assert.deepEqual(ran, ['lb/finalizer:cp']);
  });

  it('refuses bad usage and bad input with exit 2 before any test runs', async () => {
    ran = [];
    const bad = async (args: string[], err: string | RegExp): Promise<void> => {
      const r = await run(args);
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.out}${r.err}`);
      if (typeof err === 'string') assert.equal(r.err, err);
      else assert.match(r.err, err);
    };
    const kc = ['--kubeconfig', server.kubeconfig];
    await bad(['--capabilities', caps], 'kplane ccm-test: --kubeconfig FILE is required (the cluster under test)\n');
    await bad([...kc], 'kplane ccm-test: no driver: give --driver NAME|PATH, or driver: in the capability file (--capabilities FILE)\n');
    await bad([...kc, '--capabilities', caps, '--parallel', '0'], 'kplane ccm-test: --parallel must be a positive integer, got "0"\n');
    await bad([...kc, '--nope'], /^kplane ccm-test: Unknown option '--nope'/);
    const badCaps = join(dir, 'bad.yaml');
    await writeFile(badCaps, 'driver: ./my-driver.mjs\ncapabilities: [lb.tcp, lb.quantum]\n');
    await bad([...kc, '--capabilities', badCaps], new RegExp(`^kplane ccm-test: ${badCaps}: capabilities\\[1\\]: unknown capability "lb\\.quantum"; known: `));
    await writeFile(badCaps, 'driver: ./my-driver.mjs\ntimeouts: {lbCreate: 300000}\n');
    await bad([...kc, '--capabilities', badCaps], `kplane ccm-test: ${badCaps}: timeouts.lbCreate: 300000 is not a duration; use e.g. 5m\n`);
    await writeFile(join(dir, 'empty.mjs'), 'export const helper = () => 1;\n');
    await bad([...kc, '--driver', join(dir, 'empty.mjs')], /^kplane ccm-test: driver module .*empty\.mjs: exports no CcmTestDriver: .*; it exports helper\n$/);
    await bad(['--kubeconfig', join(dir, 'nowhere'), '--capabilities', caps], new RegExp(`^kplane ccm-test: kubeconfig ${dir}/nowhere: ENOENT`));
    assert.deepEqual(ran, []);
  });
});
