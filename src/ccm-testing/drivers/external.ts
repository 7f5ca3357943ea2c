// An ExternalClient on this process's own sockets: what the ginkgo process is in k/k's e2e tests (a
// client outside the cluster dialing load balancer ingresses, node ports and external IPs). Used by
// the `loopback` driver, and by any driver whose test host can route to the cloud's addresses.
import dgram from 'node:dgram';
import http from 'node:http';
import net from 'node:net';
import type { ExternalClient, ProbeResult } from '../types.js';

const DEFAULT_TIMEOUT_MS = 2000;

/** 'timeout' | 'refused' | 'reset' | the error's own message. */
function errorKind(e: unknown): string {
  const code = (e as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'ECONNREFUSED') return 'refused';
  if (code === 'ECONNRESET' || code === 'EPIPE') return 'reset';
  if (code === 'ETIMEDOUT' || (e as Error | undefined)?.message === 'timeout') return 'timeout';
  return e instanceof Error ? e.message : String(e);
}

export interface LocalExternalClientOptions {
  /** Bind probes to this source address (default: the kernel's choice, 127.0.0.1 on loopback). */
  readonly localAddress?: string;
}

/** Probes from this process: one fresh connection per HTTP request (no keep-alive, as k/k's). */
export function localExternalClient(opts: LocalExternalClientOptions = {}): ExternalClient {
  const local = opts.localAddress;
  return {
    httpGet(host, port, path, o): Promise<ProbeResult> {
      const timeoutMs = o?.timeoutMs ?? DEFAULT_TIMEOUT_MS;
      return new Promise((resolve) => {
        const req = http.get({ host, port, path, agent: false, timeout: timeoutMs, ...(local ? { localAddress: local } : {}) }, (res) => {
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (c: string) => {
            body += c;
          });
          res.on('end', () => resolve({ ok: (res.statusCode ?? 0) < 400, status: res.statusCode ?? 0, body }));
          res.on('error', (e) => resolve({ ok: false, error: errorKind(e) }));
        });
        req.on('timeout', () => req.destroy(new Error('timeout')));
        req.on('error', (e) => resolve({ ok: false, error: errorKind(e) }));
      });
    },
    udpExchange(host, port, payload, o): Promise<ProbeResult> {
      const timeoutMs = o?.timeoutMs ?? DEFAULT_TIMEOUT_MS;
      return new Promise((resolve) => {
        const s = dgram.createSocket(net.isIPv6(host) ? 'udp6' : 'udp4');
        let done = false;
        const finish = (r: ProbeResult): void => {
          if (done) return;
          done = true;
          clearTimeout(timer);
          s.close();
          resolve(r);
        };
        const timer = setTimeout(() => finish({ ok: false, error: 'timeout' }), timeoutMs);
        s.on('message', (m) => finish({ ok: true, body: m.toString('utf8') }));
        // A refused datagram comes back as an ICMP error on a connected socket.
        s.on('error', (e) => finish({ ok: false, error: errorKind(e) }));
        s.bind({ port: 0, ...(local ? { address: local } : {}) }, () => {
          s.connect(port, host, () => s.send(payload));
        });
      });
    },
    tcpConnect(host, port, o): Promise<ProbeResult> {
      const timeoutMs = o?.timeoutMs ?? DEFAULT_TIMEOUT_MS;
      return new Promise((resolve) => {
        const s = net.connect({ host, port, timeout: timeoutMs, ...(local ? { localAddress: local } : {}) });
        s.once('connect', () => {
          s.destroy();
          resolve({ ok: true });
        });
        s.once('timeout', () => {
          s.destroy();
          resolve({ ok: false, error: 'timeout' });
        });
        s.once('error', (e) => resolve({ ok: false, error: errorKind(e) }));
      });
    },
    sourceIPs: () => [local ?? '127.0.0.1'],
  };
}
