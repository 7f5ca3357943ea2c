// What every long-running kplane command (controller-manager, cloud-controller-manager, node-sim)
// does around its work: an optional Prometheus endpoint, and a clean stop on SIGINT/SIGTERM.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';
import type { Logger } from '../golang/klog.js';
import { sendMetrics } from '../server/promhttp.js';

/**
 * `--metrics-port` / `--metrics-bind-address`: plain HTTP `/metrics` (loopback by default, like a
 * Prometheus scrape target behind the node's firewall). No port, no server. A bad port throws.
 */
export async function serveMetrics(registry: Registry, port: string | undefined, bindAddress = '127.0.0.1'): Promise<{ server?: Server; note: string }> {
  if (port === undefined) return { note: '' };
  const n = Number(port);
  if (!/^\d+$/.test(port) || n > 65535) throw new Error(`--metrics-port must be a port number, got "${port}"`);
  const server = createServer((req, res) => {
    if ((req.url ?? '').split('?')[0] !== '/metrics') {
      res.writeHead(404).end('not found\n');
      return;
    }
    registry.metrics().then(
      (body) => sendMetrics(req, res, body, registry.contentType),
      (e: unknown) => res.writeHead(500).end(String(e)),
    );
  });
  await new Promise<void>((ok, bad) => {
    server.once('error', bad);
    server.listen(n, bindAddress, () => ok());
  });
  const a = server.address() as AddressInfo;
  return { server, note: `, metrics on http://${a.family === 'IPv6' ? `[${a.address}]` : a.address}:${a.port}/metrics` };
}

/**
 * SIGINT and SIGTERM run `shutdown` once, then exit 0 (1 when it failed). When `done` is given, its
 * end also ends the process: 0 when it resolves, 1 (logging `failure`) when it rejects.
 */
export function stopOnSignals(log: Logger, shutdown: () => Promise<unknown>, done?: { promise: Promise<unknown>; failure: string }): void {
  let stopping = false;
  const stop = (sig: string): void => {
    if (stopping) return;
    stopping = true;
    log.info('Received signal, shutting down', 'signal', sig);
    shutdown().then(
      () => process.exit(0),
      (e: unknown) => {
        log.error(e, 'Shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
  done?.promise.then(
    () => {
      if (!stopping) process.exit(0);
    },
    (e: unknown) => {
      log.error(e, done.failure);
      process.exit(1);
    },
  );
}
