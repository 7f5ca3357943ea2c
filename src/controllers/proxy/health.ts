// kube-proxy's two health servers (pkg/proxy/healthcheck): the proxier's `/healthz` and `/livez`
// (port 10256 by default) and one server per `externalTrafficPolicy: Local` LoadBalancer Service
// on its healthCheckNodePort, answering 200 only while the node has a local ready endpoint.
import http from 'node:http';

/** Go's time.Time.String() for a UTC time (without the monotonic part): `2006-01-02 15:04:05.999999999 +0000 UTC`. */
export function goTimeString(d: Date): string {
  const p = (n: number, w = 2): string => String(n).padStart(w, '0');
  const ms = d.getUTCMilliseconds();
  const frac = ms ? `.${p(ms, 3).replace(/0+$/, '')}` : '';
  return `${d.getUTCFullYear()}-${p(d.getUTCMonth() + 1)}-${p(d.getUTCDate())} ${p(d.getUTCHours())}:${p(d.getUTCMinutes())}:${p(d.getUTCSeconds())}${frac} +0000 UTC`;
}

function listen(server: http.Server, host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host, port, exclusive: true }, () => {
      server.off('error', reject);
      server.on('error', () => {});
      resolve();
    });
  });
}

function close(server: http.Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

const JSON_HEADERS = { 'content-type': 'application/json', 'x-content-type-options': 'nosniff' };

/** proxier_health.go: healthy once synced; `/healthz` also needs the node to be eligible. */
export class ProxierHealthServer {
  private readonly server: http.Server;
  lastUpdated: Date | undefined;
  /** False while the Node is being deleted or carries the ToBeDeletedByClusterAutoscaler taint. */
  nodeEligible = true;

  constructor() {
    this.server = http.createServer((req, res) => {
      const path = (req.url ?? '/').split('?')[0];
      const now = new Date();
      const healthy = this.lastUpdated !== undefined;
      const last = goTimeString(healthy ? now : new Date(0));
      const cur = goTimeString(now);
      if (path === '/healthz') {
        const ok = healthy && this.nodeEligible;
        res.writeHead(ok ? 200 : 503, JSON_HEADERS);
        res.end(`{"lastUpdated": ${JSON.stringify(ok ? cur : last)},"currentTime": ${JSON.stringify(cur)}, "nodeEligible": ${this.nodeEligible}}`);
      } else if (path === '/livez') {
        res.writeHead(healthy ? 200 : 503, JSON_HEADERS);
        res.end(`{"lastUpdated": ${JSON.stringify(last)},"currentTime": ${JSON.stringify(cur)}}`);
      } else {
        res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8', 'x-content-type-options': 'nosniff' });
        res.end('404 page not found\n');
      }
    });
  }

  listen(host: string, port: number): Promise<void> {
    return listen(this.server, host, port);
  }

  close(): Promise<void> {
    return close(this.server);
  }
}

/** service_health.go's hcHandler: any path; 200 with a local endpoint, else 503. */
export class ServiceHealthServer {
  private readonly server: http.Server;
  localEndpoints = 0;

  constructor(
    readonly namespace: string,
    readonly name: string,
    readonly port: number,
  ) {
    this.server = http.createServer((_req, res) => {
      const n = this.localEndpoints;
      res.writeHead(n > 0 ? 200 : 503, { ...JSON_HEADERS, 'x-load-balancing-endpoint-weight': String(n) });
      res.end(
        `{\n\t"service": {\n\t\t"namespace": ${JSON.stringify(this.namespace)},\n\t\t"name": ${JSON.stringify(this.name)}\n\t},\n\t"localEndpoints": ${n},\n\t"serviceProxyHealthy": true\n}`,
      );
    });
  }

  listen(host: string): Promise<void> {
    return listen(this.server, host, this.port);
  }

  close(): Promise<void> {
    return close(this.server);
  }
}
