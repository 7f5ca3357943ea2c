// The loopback cloud's admin interface over HTTP (what a test kit's infrastructure actions call;
// loopback addresses only). JSON in and out:
//   GET    /instances                   all instances, and the cursor of their state
//   GET    /instances?watch=CURSOR[&timeoutSeconds=N][&follower=ID]
//                                        a long poll: all instances once they differ from CURSOR
//                                        (at once if they do already), or after N s (default 30, at
//                                        most 60); how node-sim follows the cloud
//   PUT    /followers/<id>              body {"nodes": ["sim-0", ...]}: the instances a machine
//                                        agent runs; while it polls they show "followedBy": ID
//   GET    /instances/<name>            one
//   PUT    /instances/<name>            create or bring back, running; body {"address": "127.2.0.9"} optional
//   POST   /instances/<name>/shutdown   stop it (its Node gets the shutdown taint; LBs skip it)
//   POST   /instances/<name>/start      start it again
//   DELETE /instances/<name>            delete it (its Node is deleted by the node lifecycle controller)
//   GET    /loadbalancers               every load balancer, its address, ports and node health
// Errors are {"error": "..."} with 400, 404 or 405.
import http from 'node:http';
import { CloudAdminError, type Instance, type LoopbackCloud } from './cloud.js';

function send(res: http.ServerResponse, code: number, body: unknown): void {
  res.writeHead(code, { 'content-type': 'application/json' });
  res.end(`${JSON.stringify(body)}\n`);
}

async function readBody(req: http.IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of req as AsyncIterable<Buffer>) {
    size += c.length;
    if (size > 65_536) throw new CloudAdminError(413, 'request body too large');
    chunks.push(c);
  }
  const text = Buffer.concat(chunks).toString('utf8').trim();
  if (!text) return {};
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    throw new CloudAdminError(400, 'request body is not JSON');
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new CloudAdminError(400, 'request body must be a JSON object');
  return v as Record<string, unknown>;
}

const view = (cloud: LoopbackCloud, inst: Instance): Instance & { followedBy?: string } => {
  const by = cloud.followedBy(inst.name);
  return by ? { ...inst, followedBy: by } : inst;
};

async function watch(cloud: LoopbackCloud, q: URLSearchParams, req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
  const t = q.get('timeoutSeconds') ?? '30';
  if (!/^\d+$/.test(t) || Number(t) > 60)
    throw new CloudAdminError(400, `timeoutSeconds must be a whole number of seconds from 0 to 60, got ${JSON.stringify(t)}`);
  const gone = new AbortController();
  res.once('close', () => gone.abort());
  req.socket.setTimeout(0);
  const r = await cloud.watchInstances(q.get('watch') ?? '', Number(t) * 1000, gone.signal, q.get('follower') ?? undefined);
  if (!gone.signal.aborted) send(res, 200, { cursor: r.cursor, instances: r.instances.map((i) => view(cloud, i)) });
}

async function handle(cloud: LoopbackCloud, req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
  const [path = '/', query = ''] = (req.url ?? '/').split('?');
  const q = new URLSearchParams(query);
  const parts = path.split('/').filter(Boolean).map(decodeURIComponent);
  const method = req.method ?? 'GET';
  const notAllowed = (): never => {
    throw new CloudAdminError(405, `method ${method} is not allowed on ${path}`);
  };
  if (parts[0] === 'instances') {
    if (parts.length === 1) {
      if (method !== 'GET') return notAllowed();
      if (q.has('watch')) return watch(cloud, q, req, res);
      return send(res, 200, { cursor: cloud.instancesCursor, instances: cloud.listInstances().map((i) => view(cloud, i)) });
    }
    const name = parts[1] as string;
    if (parts.length === 2) {
      if (method === 'GET') {
        const inst = cloud.getInstance(name);
        if (!inst) throw new CloudAdminError(404, `instance ${JSON.stringify(name)} not found`);
        return send(res, 200, view(cloud, inst));
      }
      if (method === 'PUT') {
        const body = await readBody(req);
        if (body.address !== undefined && typeof body.address !== 'string') throw new CloudAdminError(400, 'address must be a string');
        return send(res, 200, cloud.createInstance(name, body.address));
      }
      if (method === 'DELETE') return send(res, 200, cloud.deleteInstance(name));
      return notAllowed();
    }
    if (parts.length === 3 && (parts[2] === 'shutdown' || parts[2] === 'start')) {
      if (method !== 'POST') return notAllowed();
      return send(res, 200, parts[2] === 'shutdown' ? cloud.shutdownInstance(name) : cloud.startInstance(name));
    }
  }
  if (parts.length === 2 && parts[0] === 'followers') {
    if (method !== 'PUT') return notAllowed();
    const nodes = (await readBody(req)).nodes;
    if (!Array.isArray(nodes) || !nodes.every((n) => typeof n === 'string')) throw new CloudAdminError(400, 'nodes must be a list of instance names');
    cloud.registerFollower(parts[1] as string, nodes);
    return send(res, 200, { follower: parts[1], nodes: nodes.length });
  }
  if (parts.length === 1 && parts[0] === 'loadbalancers') return method === 'GET' ? send(res, 200, { loadBalancers: cloud.listLoadBalancers() }) : notAllowed();
  throw new CloudAdminError(404, `no such path ${path}`);
}

/** Serves the admin interface on host:port (port 0 picks one); `url` is where it listens. */
export async function serveCloudAdmin(cloud: LoopbackCloud, host = '127.0.0.1', port = 0): Promise<{ url: string; close(): Promise<void> }> {
  if (!host.startsWith('127.')) throw new Error(`the loopback cloud's admin interface listens on 127.0.0.0/8 only, not ${host}`);
  const server = http.createServer((req, res) => {
    handle(cloud, req, res).catch((e: unknown) => {
      if (e instanceof CloudAdminError) send(res, e.code, { error: e.message });
      else send(res, 500, { error: e instanceof Error ? e.message : String(e) });
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const addr = server.address();
  const bound = typeof addr === 'object' && addr ? addr.port : port;
  return {
    url: `http://${host}:${bound}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
