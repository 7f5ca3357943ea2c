// `kplane node-sim` against `kplane serve --modules cloud` (issue 25), both as child processes, with
// kubectl 1.33: Nodes registered and Ready with loopback InternalIPs, Pods scheduled (pods/binding)
// and served by netexec-compatible servers on their pod IPs, the EndpointSlice controller's slices
// (ready, then terminating while the pod drains, then gone), and a node-sim restart that re-adopts
// its Nodes and serves the same pods again.
import assert from 'node:assert/strict';
import { createSocket } from 'node:dgram';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { eventually } from '../support/eventually.js';
import { kplaneProcesses, type KplaneProcess } from '../support/kplane-process.js';
import { kubectlSession, type KubectlSession } from '../support/kubectl.js';
import { tools } from '../support/tools.js';

const SERVING = /kplane is serving on (https:\/\/127\.0\.0\.1:\d+)/;
const SIM_STARTED = /kplane node-sim started: .*\n/;

const processes = kplaneProcesses({ startTimeoutMs: 120_000 });
let dir: string;
let kubeconfig: string;
let kubectl: KubectlSession;
let sim: KplaneProcess;

async function startSim(): Promise<KplaneProcess> {
  return processes.start(['node-sim', '--kubeconfig', kubeconfig, '--nodes', '3', '--heartbeat-interval', '2s'], SIM_STARTED);
}

async function httpGet(url: string): Promise<string> {
  const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
  return res.text();
}

function udp(ip: string, port: number, msg: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = createSocket('udp4');
    const timer = setTimeout(() => {
      s.close();
      reject(new Error('no UDP answer'));
    }, 2000);
    s.once('message', (m) => {
      clearTimeout(timer);
      s.close();
      resolve(m.toString());
    });
    s.send(msg, port, ip);
  });
}

interface Slice {
  endpoints?: { addresses: string[]; conditions: { ready?: boolean; serving?: boolean; terminating?: boolean }; targetRef?: { name?: string } }[] | null;
  ports?: { port?: number }[] | null;
}

async function slices(): Promise<Slice[]> {
  const out = await kubectl.ok(['get', 'endpointslices', '-l', 'kubernetes.io/service-name=web', '-o', 'json']);
  return (JSON.parse(out) as { items: Slice[] }).items;
}

const podIP = async (name: string): Promise<string> => (await kubectl.ok(['get', 'pod', name, '-o', 'jsonpath={.status.podIP}'])).trim();

const podManifest = (name: string): string =>
  JSON.stringify({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, labels: { app: 'web' } },
    spec: {
      terminationGracePeriodSeconds: 4,
      containers: [
        {
          name: 'agnhost',
          image: 'registry.k8s.io/e2e-test-images/agnhost:2.53',
          args: ['netexec', '--http-port=8080', '--udp-port=8081'],
          ports: [
            { name: 'http', containerPort: 8080 },
            { name: 'udp', containerPort: 8081, protocol: 'UDP' },
          ],
          readinessProbe: { httpGet: { path: '/healthz', port: 'http' }, periodSeconds: 1 },
        },
      ],
    },
  });

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'kplane-node-sim-'));
  const server = await processes.start(['serve', '--data-dir', join(dir, 'data'), '--secure-port', '0', '--modules', 'cloud'], SERVING);
  void server;
  kubeconfig = join(dir, 'data', 'admin.kubeconfig');
  kubectl = kubectlSession(tools.kubectl, kubeconfig, dir);
  sim = await startSim();
});

after(async () => {
  processes.killAll();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('kplane node-sim', { timeout: 240_000, concurrency: false }, () => {
  it('registers 3 Ready nodes with 127.2.x InternalIPs, pod CIDRs and node Leases', async () => {
    const out = await eventually(30_000, '3 Ready nodes', async () => {
      const o = await kubectl.ok(['get', 'nodes', '-o', 'wide']);
      return (o.match(/ Ready /g) ?? []).length === 3 ? o : undefined;
    });
    for (const [i, name] of ['sim-0', 'sim-1', 'sim-2'].entries()) {
      assert.match(out, new RegExp(`^${name}\\s+Ready\\s+<none>\\s+\\S+\\s+v1\\.33\\.0\\s+127\\.2\\.0\\.${i + 1}\\s`, 'm'));
    }
    assert.equal((await kubectl.ok(['get', 'node', 'sim-2', '-o', 'jsonpath={.spec.podCIDR}'])).trim(), '127.3.2.0/24');
    const leases = await kubectl.ok(['get', 'leases', '-n', 'kube-node-lease', '-o', 'jsonpath={.items[*].spec.holderIdentity}']);
    assert.deepEqual(leases.trim().split(' ').sort(), ['sim-0', 'sim-1', 'sim-2']);
  });

  it('schedules pods round-robin, runs them (Running, ready) and their servers answer as netexec', async () => {
    for (const n of ['web-0', 'web-1', 'web-2']) await kubectl.ok(['apply', '-f', await kubectl.file(`${n}.json`, podManifest(n))]);
    await kubectl.ok(['create', 'service', 'clusterip', 'web', '--tcp=80:8080']);
    // `kubectl create service` selects app=web.
    const wide = await eventually(30_000, 'pods running', async () => {
      const o = await kubectl.ok(['get', 'pods', '-o', 'wide']);
      return (o.match(/1\/1\s+Running/g) ?? []).length === 3 ? o : undefined;
    });
    const nodes = [...wide.matchAll(/\s(sim-\d)\s/g)].map((m) => m[1]).sort();
    assert.deepEqual(nodes, ['sim-0', 'sim-1', 'sim-2']);
    const ip = await podIP('web-1');
    assert.match(ip, /^127\.3\.[0-2]\.\d+$/);
    assert.equal(await httpGet(`http://${ip}:8080/hostname`), 'web-1');
    assert.equal(await httpGet(`http://${ip}:8080/echo?msg=hello`), 'hello');
    assert.match(await httpGet(`http://${ip}:8080/clientip`), /^127\.0\.0\.1:\d+$/);
    assert.equal(await udp(ip, 8081, 'hostname'), 'web-1');
    assert.equal(await udp(ip, 8081, 'echo Hi There'), 'hi there');
  });

  it('pods/binding: a bound pod cannot be bound again (409), a bad target is a 422', async () => {
    const node = (await kubectl.ok(['get', 'pod', 'web-1', '-o', 'jsonpath={.spec.nodeName}'])).trim();
    const bind = async (target: object): Promise<{ code: number | null; message: string }> => {
      const f = await kubectl.file('binding.json', JSON.stringify({ apiVersion: 'v1', kind: 'Binding', metadata: { name: 'web-1' }, target }));
      const r = await kubectl.k(['create', '--raw', '/api/v1/namespaces/default/pods/web-1/binding', '-f', f]);
      return { code: r.code, message: r.stderr.trim() };
    };
    const again = await bind({ kind: 'Node', name: 'sim-0' });
    assert.notEqual(again.code, 0);
    assert.match(again.message, new RegExp(`Operation cannot be fulfilled on pods/binding "web-1": pod web-1 is already assigned to node "${node}"`));
    const bad = await bind({ kind: 'Pod', name: '' });
    assert.equal(
      bad.message,
      'The Binding "web-1" is invalid: \n* target.kind: Unsupported value: "Pod": supported values: "Node", "<empty>"\n* target.name: Required value',
    );
  });

  it('the EndpointSlice controller lists the pod IPs ready', async () => {
    const ips = (await Promise.all(['web-0', 'web-1', 'web-2'].map(podIP))).sort();
    await eventually(30_000, 'slice with 3 ready endpoints', async () => {
      const s = await slices();
      const ready = s.flatMap((x) => (x.endpoints ?? []).filter((e) => e.conditions.ready).map((e) => e.addresses[0]));
      return JSON.stringify(ready.sort()) === JSON.stringify(ips) ? true : undefined;
    });
    const table = await kubectl.ok(['get', 'endpointslices']);
    assert.match(table, /^web-\S+\s+IPv4\s+8080\s+127\.3\./m);
  });

  it('the Endpoints controller mirrors them into core/v1 Endpoints (kubectl get endpoints, describe svc)', async () => {
    const ips = (await Promise.all(['web-0', 'web-1', 'web-2'].map(podIP))).sort();
    const want = ips.map((ip) => `${ip}:8080`).join(',');
    await eventually(30_000, 'Endpoints web with the 3 pod IPs', async () => {
      const o = await kubectl.k(['get', 'endpoints', 'web', '-o', 'jsonpath={.subsets[*].addresses[*].ip}']);
      return o.code === 0 && o.stdout.trim().split(' ').sort().join(',') === ips.join(',') ? true : undefined;
    });
    const ep = await kubectl.ok(['get', 'endpoints', 'web']);
    assert.match(ep, new RegExp(`^web\\s+${want.replace(/\./g, '\\.')}\\s`, 'm'));
    const describe = await kubectl.ok(['describe', 'svc', 'web']);
    const line = /^Endpoints:\s+(\S+)$/m.exec(describe)?.[1] ?? describe;
    assert.equal(line.split(',').sort().join(','), want);
  });

  it('each node plays kube-proxy: NodePorts on every node IP, the cluster IP, /healthz on 10256', async () => {
    await kubectl.ok(['create', 'service', 'nodeport', 'webnp', '--tcp=80:8080']);
    await kubectl.ok(['set', 'selector', 'service', 'webnp', 'app=web']);
    const nodePort = Number((await kubectl.ok(['get', 'svc', 'webnp', '-o', 'jsonpath={.spec.ports[0].nodePort}'])).trim());
    const clusterIP = (await kubectl.ok(['get', 'svc', 'web', '-o', 'jsonpath={.spec.clusterIP}'])).trim();
    const pods = ['web-0', 'web-1', 'web-2'];
    for (const nodeIP of ['127.2.0.1', '127.2.0.2', '127.2.0.3']) {
      const seen = await eventually(30_000, `NodePort ${nodePort} on ${nodeIP}`, async () => {
        const name = await httpGet(`http://${nodeIP}:${nodePort}/hostname`).catch(() => '');
        return pods.includes(name) ? name : undefined;
      });
      assert.ok(pods.includes(seen));
    }
    const viaClusterIP = await eventually(30_000, `ClusterIP ${clusterIP}:80`, async () => {
      const name = await httpGet(`http://${clusterIP}:80/hostname`).catch(() => '');
      return pods.includes(name) ? name : undefined;
    });
    assert.ok(pods.includes(viaClusterIP));
    const health = await fetch('http://127.2.0.2:10256/healthz', { signal: AbortSignal.timeout(2000) });
    assert.equal(health.status, 200);
    assert.match(await health.text(), /"lastUpdated"/);
  });

  it("a pod's netexec /dial: from the pod's IP, to a cluster IP through its own node's proxy, with netexec's answers", async () => {
    const at = async (pod: string): Promise<{ ip: string; node: string }> => {
      const [ip, node] = (await kubectl.ok(['get', 'pod', pod, '-o', 'jsonpath={.status.podIP} {.spec.nodeName}'])).trim().split(' ');
      return { ip: ip ?? '', node: node ?? '' };
    };
    // A client pod off sim-0 (whose proxy owns the shared cluster IP listeners).
    const pods = await Promise.all(['web-0', 'web-1', 'web-2'].map(async (name) => ({ name, ...(await at(name)) })));
    const client = pods.find((p) => p.node !== 'sim-0')!;
    const other = pods.find((p) => p !== client)!;
    const dial = async (q: string): Promise<{ status: number; body: string }> => {
      const res = await fetch(`http://${client.ip}:8080/dial?${q}`, { signal: AbortSignal.timeout(20_000) });
      return { status: res.status, body: await res.text() };
    };
    const clusterIP = (await kubectl.ok(['get', 'svc', 'web', '-o', 'jsonpath={.spec.clusterIP}'])).trim();

    // internalTrafficPolicy Local: the client's node has one endpoint, the client itself.
    await kubectl.ok(['patch', 'svc', 'web', '-p', '{"spec":{"internalTrafficPolicy":"Local"}}']);
    try {
      const local = await eventually(10_000, 'the cluster IP from the pod reaching only its own node', async () => {
        const r = await dial(`request=hostname&protocol=http&host=${clusterIP}&port=80&tries=6`);
        return r.body === JSON.stringify({ responses: Array(6).fill(client.name) }) ? r : undefined;
      });
      assert.equal(local.status, 200);
    } finally {
      await kubectl.ok(['patch', 'svc', 'web', '-p', '{"spec":{"internalTrafficPolicy":"Cluster"}}']);
    }
    // The address seen by the other pod is the client pod's own.
    const seen = await dial(`request=clientip&host=${other.ip}&port=8080`);
    assert.match(seen.body, new RegExp(`^\\{"responses":\\["${client.ip.replace(/\./g, '\\.')}:\\d+"\\]\\}$`));
    assert.deepEqual(JSON.parse((await dial(`request=hostname&protocol=udp&host=${other.ip}&port=8081`)).body), { responses: [other.name] });

    // A Service without endpoints is REJECTed; a closed port refuses; only the errors are listed.
    await kubectl.ok(['create', 'service', 'clusterip', 'empty', '--tcp=80:8080']);
    const emptyIP = (await kubectl.ok(['get', 'svc', 'empty', '-o', 'jsonpath={.spec.clusterIP}'])).trim();
    const refused = (h: string): string => `Get "http://${h}/hostname": dial tcp ${h}: connect: connection refused`;
    await eventually(10_000, 'the empty Service rejected', async () => {
      const r = await dial(`request=hostname&host=${emptyIP}&port=80&tries=2`);
      return r.body === JSON.stringify({ errors: [refused(`${emptyIP}:80`), refused(`${emptyIP}:80`)] }) ? true : undefined;
    });
    assert.deepEqual(JSON.parse((await dial(`request=hostname&host=${other.ip}&port=9`)).body), { errors: [refused(`${other.ip}:9`)] });

    // Bad parameters: 400 with netexec's messages.
    for (const [q, msg] of [
      ['host=x&port=1', 'request parameter not specified. <nil>'],
      ['request=hostname&tries=x', 'tries parameter is invalid. strconv.Atoi: parsing "x": invalid syntax'],
      ['request=hostname&protocol=tcp&host=127.0.0.1&port=80', 'unsupported protocol. tcp'],
      ['request=hostname&host=127.0.0.1&port=abc', 'host and/or port param are invalid. lookup tcp/abc: unknown port'],
      ['request=hostname&host=127.0.0.1&port=70000', 'host and/or port param are invalid. address 70000: invalid port'],
    ]) {
      assert.deepEqual(await dial(q!), { status: 400, body: `${msg}\n` }, q);
    }
  });

  it('a deleted pod is terminating (serving) while it drains, then gone; its server stops', async () => {
    const ip = await podIP('web-0');
    await kubectl.ok(['delete', 'pod', 'web-0', '--wait=false']);
    await eventually(10_000, 'web-0 terminating and serving', async () => {
      const e = (await slices()).flatMap((x) => x.endpoints ?? []).find((x) => x.targetRef?.name === 'web-0');
      return e && e.conditions.terminating && e.conditions.serving && !e.conditions.ready ? true : undefined;
    });
    // Still answering during the grace period.
    assert.equal(await httpGet(`http://${ip}:8080/hostname`), 'web-0');
    await eventually(30_000, 'web-0 gone', async () => {
      const s = await slices();
      return s.flatMap((x) => x.endpoints ?? []).some((x) => x.targetRef?.name === 'web-0') ? undefined : true;
    });
    await eventually(10_000, 'pod web-0 deleted', async () => ((await kubectl.k(['get', 'pod', 'web-0'])).code !== 0 ? true : undefined));
    await assert.rejects(httpGet(`http://${ip}:8080/hostname`));
  });

  it('node-sim killed and restarted: the same nodes and pods, serving again on the same IPs', async () => {
    const ips = await Promise.all(['web-1', 'web-2'].map(podIP));
    sim.child.kill('SIGKILL');
    await sim.exited;
    await assert.rejects(httpGet(`http://${ips[0]}:8080/hostname`));
    sim = await startSim();
    await eventually(30_000, 'pods serving again', async () => {
      const got = await Promise.all(ips.map((ip) => httpGet(`http://${ip}:8080/hostname`).catch(() => '')));
      return got.join(',') === 'web-1,web-2' ? true : undefined;
    });
    assert.deepEqual(await Promise.all(['web-1', 'web-2'].map(podIP)), ips);
    const nodes = await kubectl.ok(['get', 'nodes', '-o', 'name']);
    assert.deepEqual(nodes.trim().split('\n'), ['node/sim-0', 'node/sim-1', 'node/sim-2']);
  });
});
