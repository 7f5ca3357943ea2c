// A pod's "container": a server answering as agnhost's `netexec` does (test/images/agnhost/netexec),
// so that tests written for real clusters (which run agnhost pods) work against simulated pods.
// HTTP: / ("NOW: <time>"), /hostname and /hostName (the pod's name, the container's hostname),
// /clientip (the client's "ip:port"), /echo?msg=&code=, /healthz (200), /header?key=, /redirect,
// /dial (dial.ts: requests from the pod to another address, as a packet from the pod would go);
// anything else is Go's "404 page not found". UDP: "hostname", "echo <msg>" and "clientip",
// lower-cased and trimmed as netexec reads them; other datagrams get no answer.
import { createSocket, type Socket } from 'node:dgram';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { dialHandler, type PodNetwork } from './dial.js';

export type { PodNetwork, PodRoute } from './dial.js';

export interface NetexecServer {
  readonly address: string;
  readonly port: number;
  readonly protocol: 'TCP' | 'UDP';
  close(): Promise<void>;
}

function text(res: ServerResponse, code: number, body: string): void {
  res.writeHead(code, { 'Content-Type': 'text/plain; charset=utf-8', 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
}

/** Go's time.Time String(), closely enough: "2006-01-02 15:04:05.999999999 +0000 UTC". */
function goNow(): string {
  return new Date().toISOString().replace('T', ' ').replace('Z', ' +0000 UTC');
}

function handle(hostname: string, network: PodNetwork, req: IncomingMessage, res: ServerResponse): void {
  const url = new URL(req.url ?? '/', 'http://pod');
  const q = url.searchParams;
  switch (url.pathname) {
    case '/dial':
      return dialHandler(network, req, res);
    case '/':
      return text(res, 200, `NOW: ${goNow()}`);
    case '/hostname':
    case '/hostName':
      return text(res, 200, hostname);
    case '/clientip':
      return text(res, 200, `${req.socket.remoteAddress ?? ''}:${req.socket.remotePort ?? 0}`);
    case '/healthz':
      return text(res, 200, '');
    case '/header': {
      const key = q.get('key') ?? '';
      const v = req.headers[key.toLowerCase()];
      return text(res, 200, Array.isArray(v) ? v.join(',') : (v ?? ''));
    }
    case '/echo': {
      const msg = q.get('msg') ?? '';
      const code = q.get('code') ?? '';
      if (code !== '') {
        const n = Number(code);
        if (!/^-?\d+$/.test(code)) return text(res, 200, `argument 'code' must be an integer or empty, got ${JSON.stringify(code)}\n`);
        return text(res, n >= 100 && n <= 999 ? n : 500, msg);
      }
      return text(res, 200, msg);
    }
    case '/redirect': {
      const location = q.get('location') ?? '';
      const code = Number(q.get('code') || 302);
      res.writeHead(Number.isInteger(code) && code >= 300 && code < 400 ? code : 302, { Location: location });
      res.end();
      return;
    }
    default:
      return text(res, 404, '404 page not found\n');
  }
}

/**
 * An HTTP netexec on address:port; resolves once it listens. `network` is how the pod's own
 * requests (/dial) leave it: from `address`, and by default straight to the address dialed.
 */
export function startHttp(address: string, port: number, hostname: string, network: PodNetwork = { podIP: address }): Promise<NetexecServer> {
  const srv: Server = createServer((req, res) => handle(hostname, network, req, res));
  srv.keepAliveTimeout = 5000;
  return new Promise((resolve, reject) => {
    srv.once('error', reject);
    srv.listen({ host: address, port, exclusive: true }, () => {
      srv.off('error', reject);
      srv.on('error', () => {});
      resolve({
        address,
        port,
        protocol: 'TCP',
        close: () =>
          new Promise<void>((done) => {
            srv.close(() => done());
            srv.closeAllConnections();
          }),
      });
    });
  });
}

/** A UDP netexec on address:port. */
export function startUdp(address: string, port: number, hostname: string): Promise<NetexecServer> {
  const sock: Socket = createSocket({ type: 'udp4' });
  sock.on('message', (buf, rinfo) => {
    const got = buf.toString('utf8').trim().toLowerCase();
    let answer: string | undefined;
    if (got === 'hostname') answer = hostname;
    else if (got.startsWith('echo ')) answer = got.slice(5);
    else if (got === 'clientip') answer = `${rinfo.address}:${rinfo.port}`;
    if (answer !== undefined) sock.send(answer, rinfo.port, rinfo.address);
  });
  return new Promise((resolve, reject) => {
    sock.once('error', reject);
    sock.bind({ address, port, exclusive: true }, () => {
      sock.off('error', reject);
      sock.on('error', () => {});
      resolve({ address, port, protocol: 'UDP', close: () => new Promise<void>((done) => sock.close(() => done())) });
    });
  });
}
