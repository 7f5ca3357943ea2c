// netexec's /dial (agnhost test/images/agnhost/netexec): the pod makes `tries` requests to
// host:port over http or udp, one after the other, and answers 200 with
// {"errors":[...],"responses":[...]}: an error string per failed try, and the bodies of the
// successful ones, listed only when the last try gave a non-empty answer (netexec's quirk, kept).
// Bad parameters are 400 with netexec's own messages. A request leaves the pod as a packet from it
// would: from the pod's IP, and to a cluster IP through the service proxy of the pod's node
// (`PodNetwork.route`), so internalTrafficPolicy Local sees that node's endpoints only; anything
// else (a load balancer ingress, a node port, another pod) is dialed as it is.
import dgram from 'node:dgram';
import { lookup } from 'node:dns/promises';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import net from 'node:net';

/** Where the node's service proxy sends a connection from the pod: an endpoint, a REJECT, a DROP, or not its business. */
export type PodRoute = { readonly ip: string; readonly port: number } | 'reject' | 'drop' | undefined;

/** How a pod's own connections leave it. */
export interface PodNetwork {
  /** The pod's IP: every socket of a dial is bound to it. */
  readonly podIP: string;
  /** A cluster IP's answer from the pod's node proxy; undefined (or no function): dial the address itself. */
  route?(protocol: 'TCP' | 'UDP', ip: string, port: number): PodRoute;
}

/** netexec's per-request timeouts: the HTTP client's Timeout and the UDP read deadline. */
const DIAL_TIMEOUT_MS = 5000;
const UDP_READ_BYTES = 2048;
const MAX_REDIRECTS = 10;
const INT64_MAX = 9223372036854775807n;

/** Go's well-known ports that net.LookupPort knows without /etc/services (net/lookup.go). */
const SERVICES: Record<string, Record<string, number>> = {
  tcp: {
    domain: 53,
    ftp: 21,
    ftps: 990,
    gopher: 70,
    http: 80,
    https: 443,
    imap2: 143,
    imap3: 220,
    imaps: 993,
    pop3: 110,
    pop3s: 995,
    smtp: 25,
    submissions: 465,
    ssh: 22,
    telnet: 23,
  },
  udp: { domain: 53 },
};

const ERRNO_TEXT: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset by peer',
  EHOSTUNREACH: 'no route to host',
  ENETUNREACH: 'network is unreachable',
  EADDRNOTAVAIL: 'cannot assign requested address',
  EADDRINUSE: 'address already in use',
  ETIMEDOUT: 'connection timed out',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
};
const errnoText = (e: unknown): string => {
  const code = (e as NodeJS.ErrnoException | undefined)?.code ?? '';
  return ERRNO_TEXT[code] ?? (e instanceof Error ? e.message : String(e));
};

/** http.Error: the message and a newline, text/plain, nosniff. */
function httpError(res: ServerResponse, code: number, message: string): void {
  const body = `${message}\n`;
  res.writeHead(code, { 'Content-Type': 'text/plain; charset=utf-8', 'X-Content-Type-Options': 'nosniff', 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
}

/** Go's %q of a string, closely enough (strconv.Quote). */
const goQuote = (s: string): string => JSON.stringify(s);

/** encoding/json's string: as JSON.stringify, plus HTML-safe escapes of <, >, & and U+2028/9. */
const goJSONString = (s: string): string => JSON.stringify(s).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);

/** strconv.Atoi, with its error text. */
function atoi(s: string): { n: number } | { error: string } {
  if (!/^[+-]?\d+$/.test(s)) return { error: `strconv.Atoi: parsing ${goQuote(s)}: invalid syntax` };
  const big = BigInt(s);
  if (big > INT64_MAX || big < -INT64_MAX - 1n) return { error: `strconv.Atoi: parsing ${goQuote(s)}: value out of range` };
  return { n: Number(big) };
}

interface Target {
  /** The address as Go's net.Addr String() writes it (what error messages name). */
  readonly display: string;
  readonly ip: string;
  readonly port: number;
}

/** net.ResolveTCPAddr / ResolveUDPAddr of JoinHostPort(host, port). */
async function resolveAddr(network: 'tcp' | 'udp', host: string, portText: string, podIP: string): Promise<Target | { error: string }> {
  let port: number;
  if (portText === '') port = 0;
  else if (/^[+-]?\d+$/.test(portText)) port = Number(portText);
  else {
    const known = SERVICES[network]?.[portText.toLowerCase()];
    if (known === undefined) return { error: `lookup ${network}/${portText}: unknown port` };
    port = known;
  }
  if (!(port >= 0 && port <= 65535)) return { error: `address ${portText}: invalid port` };
  let ip: string;
  if (host === '') ip = '';
  else if (net.isIP(host)) ip = host;
  else {
    try {
      ip = (await lookup(host, { family: 4 })).address;
    } catch {
      return { error: `lookup ${host}: no such host` };
    }
  }
  const display = ip === '' ? `:${port}` : net.isIPv6(ip) ? `[${ip}]:${port}` : `${ip}:${port}`;
  // The unspecified address dials the pod itself.
  return { display, ip: ip === '' ? podIP : ip, port };
}

/** Where the packets of a connection to `t` really go. */
function routeOf(network: PodNetwork, protocol: 'TCP' | 'UDP', t: Target): PodRoute {
  return network.route?.(protocol, t.ip, t.port) ?? { ip: t.ip, port: t.port };
}

const localAddressFor = (network: PodNetwork, ip: string): { localAddress?: string } =>
  net.isIPv4(ip) && net.isIPv4(network.podIP) ? { localAddress: network.podIP } : {};

/** Runs `fn` once if `signal` aborts; returns the remover (many tries must not pile up listeners). */
function onAbort(signal: AbortSignal, fn: () => void): () => void {
  signal.addEventListener('abort', fn, { once: true });
  return () => signal.removeEventListener('abort', fn);
}

const sleep = (ms: number, signal: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    const off = onAbort(signal, () => {
      clearTimeout(t);
      resolve();
    });
    const t = setTimeout(() => {
      off();
      resolve();
    }, ms);
  });

class DialError extends Error {}

/** One GET of http://<target>/<request> as Go's http.Client with a 5 s Timeout: redirects followed, the body whatever the status. */
async function dialHTTP(network: PodNetwork, request: string, first: Target, signal: AbortSignal): Promise<string> {
  const deadline = Date.now() + DIAL_TIMEOUT_MS;
  let url = `http://${first.display}/${request}`;
  let target: Target = first;
  for (let hop = 0; ; hop++) {
    const r = await getOnce(network, url, target, deadline, signal);
    if (typeof r === 'string') return r;
    if (hop >= MAX_REDIRECTS) throw new DialError(`Get ${goQuote(r.location)}: stopped after ${MAX_REDIRECTS} redirects`);
    let next: URL;
    try {
      next = new URL(r.location, url);
    } catch {
      throw new DialError(`Get ${goQuote(url)}: failed to parse Location header ${goQuote(r.location)}`);
    }
    if (next.protocol !== 'http:') throw new DialError(`Get ${goQuote(next.href)}: unsupported protocol scheme ${goQuote(next.protocol.replace(/:$/, ''))}`);
    const host = next.hostname.replace(/^\[|\]$/g, '');
    const resolved = await resolveAddr('tcp', host, next.port || '80', network.podIP);
    if ('error' in resolved) throw new DialError(`Get ${goQuote(next.href)}: dial tcp: ${resolved.error}`);
    url = next.href;
    target = resolved;
  }
}

/** One request: the body, or where a redirect points. */
function getOnce(network: PodNetwork, url: string, t: Target, deadline: number, signal: AbortSignal): Promise<string | { location: string }> {
  const fail = (inner: string): DialError => new DialError(`Get ${goQuote(url)}: ${inner}`);
  const headersTimeout = 'context deadline exceeded (Client.Timeout exceeded while awaiting headers)';
  const route = routeOf(network, 'TCP', t);
  if (route === 'reject') return Promise.reject(fail(`dial tcp ${t.display}: connect: connection refused`));
  if (route === 'drop') {
    return sleep(deadline - Date.now(), signal).then(() => {
      throw fail(`dial tcp ${t.display}: i/o timeout (Client.Timeout exceeded while awaiting headers)`);
    });
  }
  if (!route) return Promise.reject(fail('no route'));
  if (route.port === 0) return Promise.reject(fail(`dial tcp ${t.display}: connect: connection refused`));
  const path = url.slice(url.indexOf('/', 'http://'.length)).replace(/ /g, '%20') || '/';
  const hostHeader = url.slice('http://'.length).split('/')[0] ?? '';
  return new Promise((resolve, reject) => {
    let connected = false;
    let local = '';
    let gotHeaders = false;
    let settled = false;
    let off = (): void => {};
    let timer: NodeJS.Timeout | undefined = undefined;
    const done = (v: string | { location: string } | DialError): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      off();
      if (v instanceof DialError) reject(v);
      else resolve(v);
    };
    let req: http.ClientRequest;
    try {
      req = http.request({
        host: route.ip,
        port: route.port,
        path,
        method: 'GET',
        agent: false,
        headers: { Host: hostHeader, 'User-Agent': 'Go-http-client/1.1' },
        ...localAddressFor(network, route.ip),
      });
    } catch (e) {
      done(new DialError(`parse ${goQuote(url)}: ${e instanceof Error ? e.message : String(e)}`));
      return;
    }
    timer = setTimeout(
      () => {
        req.destroy();
        if (!connected) done(fail(`dial tcp ${t.display}: i/o timeout (Client.Timeout exceeded while awaiting headers)`));
        else if (!gotHeaders) done(fail(headersTimeout));
        else done(new DialError('context deadline exceeded (Client.Timeout or context cancellation while reading body)'));
      },
      Math.max(0, deadline - Date.now()),
    );
    off = onAbort(signal, () => {
      req.destroy();
      done(fail('context canceled'));
    });
    req.on('socket', (s) => {
      s.once('connect', () => {
        connected = true;
        local = `${s.localAddress ?? ''}:${s.localPort ?? 0}`;
      });
    });
    req.on('error', (e) => {
      const code = (e as NodeJS.ErrnoException).code;
      // A reset comes after the handshake (the peer accepted, then reset): Go meets it reading.
      if (code === 'ECONNRESET' && e.message !== 'socket hang up') {
        const s = req.socket;
        const from = local || (s?.localAddress ? `${s.localAddress}:${s.localPort ?? 0}` : `${network.podIP}:0`);
        done(fail(`read tcp ${from}->${t.display}: read: connection reset by peer`));
      } else if (!connected && code !== 'ECONNRESET') done(fail(`dial tcp ${t.display}: connect: ${errnoText(e)}`));
      else done(fail('EOF'));
    });
    req.on('response', (res: IncomingMessage) => {
      gotHeaders = true;
      const status = res.statusCode ?? 0;
      const location = res.headers.location;
      if ([301, 302, 303, 307, 308].includes(status) && location) {
        res.resume();
        res.on('end', () => done({ location }));
        res.on('error', () => done({ location }));
        return;
      }
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => done(Buffer.concat(chunks).toString('utf8')));
      res.on('error', (e) => done(new DialError(`read tcp ${local}->${t.display}: read: ${errnoText(e)}`)));
    });
    req.end();
  });
}

/** One datagram and one answer within 5 s, from a socket of its own (netexec's dialUDP). */
function dialUDP(network: PodNetwork, request: string, t: Target, signal: AbortSignal): Promise<string> {
  const route = routeOf(network, 'UDP', t);
  return new Promise((resolve, reject) => {
    const sock = dgram.createSocket(net.isIPv6(t.ip) ? 'udp6' : 'udp4');
    let local = '';
    let settled = false;
    const readFailed = (why: string): DialError => new DialError(`reading from udp connection failed. err:'${why}'`);
    const finish = (v: string | DialError): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      off();
      try {
        sock.close();
      } catch {
        // already closed
      }
      if (v instanceof DialError) reject(v);
      else resolve(v);
    };
    const timer = setTimeout(() => finish(readFailed(`read udp ${local}->${t.display}: i/o timeout`)), DIAL_TIMEOUT_MS);
    const off = onAbort(signal, () => finish(readFailed('context canceled')));
    sock.on('message', (m) => {
      const got = m.subarray(0, UDP_READ_BYTES);
      finish(got.length === 0 ? readFailed('<nil>') : got.toString('utf8'));
    });
    sock.on('error', (e) => finish(readFailed(`read udp ${local}->${t.display}: read: ${errnoText(e)}`)));
    const bindTo = localAddressFor(network, t.ip).localAddress;
    sock.bind({ port: 0, ...(bindTo ? { address: bindTo } : {}) }, () => {
      const a = sock.address();
      local = `${a.address}:${a.port}`;
      if (route === 'drop') return; // nothing answers: the read deadline passes
      if (route === 'reject') {
        finish(readFailed(`read udp ${local}->${t.display}: read: connection refused`));
        return;
      }
      if (!route || route.port === 0) {
        finish(new DialError(`udp dial failed. err:dial udp ${t.display}: connect: connection refused`));
        return;
      }
      sock.connect(route.port, route.ip, (err?: Error) => {
        if (err) {
          finish(new DialError(`udp dial failed. err:dial udp ${t.display}: ${errnoText(err)}`));
          return;
        }
        sock.send(request, (e) => {
          if (e) finish(new DialError(`udp connection write failed. err:write udp ${local}->${t.display}: write: ${errnoText(e)}`));
        });
      });
    });
  });
}

/** GET /dial?host=&port=&request=&protocol=http|udp&tries=N */
export function dialHandler(network: PodNetwork, req: IncomingMessage, res: ServerResponse): void {
  const q = new URL(req.url ?? '/', 'http://pod').searchParams;
  const host = q.get('host') ?? '';
  const port = q.get('port') ?? '';
  const request = q.get('request') ?? '';
  const protocol = q.get('protocol') ?? '';
  const tryParam = q.get('tries') ?? '';
  let tries = 1;
  if (tryParam.length > 0) {
    const t = atoi(tryParam);
    if ('error' in t) return httpError(res, 400, `tries parameter is invalid. ${t.error}`);
    tries = t.n;
  }
  if (request.length === 0) return httpError(res, 400, 'request parameter not specified. <nil>');
  const proto = protocol.toLowerCase();
  if (proto !== '' && proto !== 'http' && proto !== 'udp' && proto !== 'sctp') return httpError(res, 400, `unsupported protocol. ${protocol}`);
  const abort = new AbortController();
  // The caller gave up: the remaining tries are not made (netexec would make them all).
  res.on('close', () => abort.abort());
  void (async () => {
    const target = await resolveAddr(proto === 'udp' ? 'udp' : 'tcp', host, port, network.podIP);
    if ('error' in target) return httpError(res, 400, `host and/or port param are invalid. ${target.error}`);
    const errors: string[] = [];
    const responses: string[] = [];
    let response = '';
    for (let i = 0; i < tries && !abort.signal.aborted; i++) {
      try {
        if (proto === 'sctp') throw new DialError(`sctp dial failed. err:dial sctp ${target.display}: protocol not supported`);
        response = proto === 'udp' ? await dialUDP(network, request, target, abort.signal) : await dialHTTP(network, request, target, abort.signal);
        responses.push(response);
      } catch (e) {
        response = '';
        errors.push(e instanceof Error ? e.message : String(e));
      }
    }
    if (abort.signal.aborted) return;
    // A Go map marshals with sorted keys: "errors" before "responses".
    const parts: string[] = [];
    if (errors.length > 0) parts.push(`"errors":[${errors.map(goJSONString).join(',')}]`);
    if (response.length > 0) parts.push(`"responses":[${responses.map(goJSONString).join(',')}]`);
    const body = `{${parts.join(',')}}`;
    res.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8', 'Content-Length': Buffer.byteLength(body) });
    res.end(body);
  })().catch((e: unknown) => {
    if (!res.headersSent) httpError(res, 500, e instanceof Error ? e.message : String(e));
  });
}
