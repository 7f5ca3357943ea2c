// The data plane of bench/scenarios/dataplane.ts, in a child process of its own (the load
// generator gets the other core): an HTTP backend on a pod address, a node proxy's NodePort
// listener and a loopback load balancer's listener, chained as the loopback cloud chains them
// (LB → nodeIP:nodePort → pod), with the same forwarding classes and routes' shapes. Prints one
// JSON line with the addresses, then runs until its parent disconnects or it is killed.
import http from 'node:http';
import { Picker, type Route, TcpListener } from '../src/controllers/proxy/forward.js';

const POD = { ip: '127.3.251.1', port: 18200 };
const NODE = { ip: '127.2.251.1', port: 31200 };
const LB = { ip: '127.4.251.1', port: 18201 };

function route(backend: { ip: string; port: number }, source: (client: string) => string): Route {
  const picker = new Picker();
  picker.set([backend], undefined);
  return { pick: (c) => picker.pick(c), has: (b) => picker.has(b), source };
}

const body = Buffer.from('bench-pod 127.3.251.1\n');
const pod = http.createServer((_req, res) => {
  res.writeHead(200, { 'content-type': 'text/plain', 'content-length': body.length });
  res.end(body);
});
pod.keepAliveTimeout = 60_000;
await new Promise<void>((r) => pod.listen(POD.port, POD.ip, r));
// ETP Cluster: the node proxy masquerades to the node's address; the LB sends from the client's
// own (ipMode VIP, as the loopback cloud's LBRoute does).
const nodePort = await TcpListener.listen(
  NODE.ip,
  NODE.port,
  route(POD, () => NODE.ip),
);
const lb = await TcpListener.listen(
  LB.ip,
  LB.port,
  route(NODE, (client) => client),
);
process.stdout.write(`${JSON.stringify({ pod: POD, nodePort: NODE, lb: LB })}\n`);
const stop = (): void => {
  void Promise.all([nodePort.close(true), lb.close(true)]).then(() => process.exit(0));
};
process.on('SIGTERM', stop);
process.stdin.on('end', stop);
process.stdin.resume();
