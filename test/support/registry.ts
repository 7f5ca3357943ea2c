// Starts Debian's docker-registry (distribution 2.8) on a free loopback port for the catalog image
// tests: plain HTTP, a throw-away storage directory, and optionally basic auth (htpasswd, bcrypt) or
// token auth (a small token issuer on loopback signing RS256 JWTs with a self-made certificate).
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { createHash, createPublicKey, generateKeyPairSync, randomBytes, sign } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, get as httpGet } from 'node:http';
import { get as httpsGet } from 'node:https';
import type { Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import forge from 'node-forge';
import { run, tools } from './tools.js';

export type RegistryAuth = 'none' | 'basic' | 'token';

export interface StartRegistryOptions {
  readonly auth?: RegistryAuth;
  /** Users for basic and token auth (default { tester: 'secret' }). */
  readonly users?: Readonly<Record<string, string>>;
  /** Token auth: OAuth2 refresh tokens (docker's "identitytoken") the issuer accepts, each for a user. */
  readonly identityTokens?: Readonly<Record<string, string>>;
  /** Token auth: anonymous callers get pull access (default false: anonymous gets no access). */
  readonly anonymousPull?: boolean;
  readonly startTimeoutMs?: number;
  /** Serve HTTPS with a self-made certificate for 127.0.0.1 (its CA is `caFile`). */
  readonly tls?: boolean;
  /** Internal: how many times a start lost its port to another process. */
  readonly attempt?: number;
}

export interface AccessLogEntry {
  readonly method: string;
  readonly path: string;
  readonly status: number;
}

export interface RunningRegistry {
  /** 127.0.0.1:PORT */
  readonly host: string;
  /** The registry's storage root (filesystem driver), e.g. to corrupt a blob on purpose. */
  readonly storageDir: string;
  readonly users: Readonly<Record<string, string>>;
  /** With `tls`: the PEM file of the certificate the registry serves (self-signed: it is its own CA). */
  readonly caFile?: string;
  /**
   * Requests the registry served so far, from its access log (the token issuer's are not counted).
   * The log is written after each response, so this first sends a marker request and waits for its
   * line: every request answered before the call is then in the list.
   */
  requests(): Promise<AccessLogEntry[]>;
  /** The path of a stored blob's data file. */
  blobPath(digest: string): string;
  stop(): Promise<void>;
}

export async function startRegistry(opts: StartRegistryOptions = {}): Promise<RunningRegistry> {
  if (!existsSync(tools.registry)) throw new Error(`docker-registry not found at ${tools.registry}; run: bash scripts/install-tools.sh`);
  const auth = opts.auth ?? 'none';
  const users = opts.users ?? { tester: 'secret' };
  const dir = await mkdtemp(join(tmpdir(), 'kplane-registry-'));
  const storageDir = join(dir, 'storage');
  const port = await freePort();
  const host = `127.0.0.1:${port}`;
  let tokenServer: Server | undefined;

  const config: string[] = [
    'version: 0.1',
    'log:',
    '  level: error',
    '  formatter: text',
    'storage:',
    '  filesystem:',
    `    rootdirectory: ${JSON.stringify(storageDir)}`,
    '  delete:',
    '    enabled: true',
    'http:',
    `  addr: ${host}`,
    '  secret: kplane-test-secret',
    'health:',
    '  storagedriver:',
    '    enabled: false',
  ];
  if (auth === 'basic') {
    const htpasswd = join(dir, 'htpasswd');
    const lines: string[] = [];
    for (const [user, password] of Object.entries(users)) {
      const r = await run(tools.htpasswd, ['-nbB', user, password]);
      if (r.code !== 0) throw new Error(`htpasswd failed: ${r.stderr}`);
      lines.push(r.stdout.trim());
    }
    await writeFile(htpasswd, lines.join('\n') + '\n');
    config.push('auth:', '  htpasswd:', '    realm: kplane-test', `    path: ${JSON.stringify(htpasswd)}`);
  } else if (auth === 'token') {
    const issuer = await startTokenIssuer(users, opts.identityTokens ?? {}, opts.anonymousPull ?? false);
    tokenServer = issuer.server;
    const bundle = join(dir, 'token-ca.crt');
    await writeFile(bundle, issuer.certPem);
    config.push(
      'auth:',
      '  token:',
      `    realm: ${JSON.stringify(issuer.realm)}`,
      `    service: ${JSON.stringify(TOKEN_SERVICE)}`,
      `    issuer: ${JSON.stringify(TOKEN_ISSUER)}`,
      `    rootcertbundle: ${JSON.stringify(bundle)}`,
    );
  }
  let caFile: string | undefined;
  if (opts.tls) {
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const keyPem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    caFile = join(dir, 'registry.crt');
    await writeFile(caFile, selfSignedCert(keyPem, publicKey.export({ type: 'spki', format: 'pem' }).toString(), '127.0.0.1'));
    await writeFile(join(dir, 'registry.key'), keyPem);
    const httpAt = config.indexOf('http:');
    config.splice(httpAt + 1, 0, '  tls:', `    certificate: ${JSON.stringify(caFile)}`, `    key: ${JSON.stringify(join(dir, 'registry.key'))}`);
  }
  const configPath = join(dir, 'config.yml');
  await writeFile(configPath, config.join('\n') + '\n');

  const child: ChildProcess = spawn(tools.registry, ['serve', configPath], { stdio: ['ignore', 'pipe', 'pipe'] });
  const access: AccessLogEntry[] = [];
  const seenMarkers = new Set<string>();
  let markers = 0;
  let pending = '';
  // The access log (combined log format) goes to stdout: `127.0.0.1 - - [...] "GET /v2/ HTTP/1.1" 401 87 ...`.
  child.stdout?.setEncoding('utf8').on('data', (d: string) => {
    pending += d;
    const lines = pending.split('\n');
    pending = lines.pop() ?? '';
    for (const line of lines) {
      const m = /"([A-Z]+) (\S+) HTTP\/[\d.]+" (\d{3})/.exec(line);
      if (m && line.includes(MARKER_AGENT)) seenMarkers.add(m[2]!);
      else if (m && !line.includes(PROBE_AGENT)) access.push({ method: m[1]!, path: m[2]!, status: Number(m[3]) });
    }
  });
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (d: string) => {
    stderr = (stderr + d).slice(-4_000);
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));

  const cleanup = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 3_000);
      await exited;
      clearTimeout(timer);
    }
    if (tokenServer) await new Promise<void>((resolve) => tokenServer.close(() => resolve()));
    await rm(dir, { recursive: true, force: true });
  };

  const deadline = Date.now() + (opts.startTimeoutMs ?? 15_000);
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      await cleanup();
      // The free port was taken between our probe and the registry's listen: try another one.
      if (/address already in use/.test(stderr) && (opts.attempt ?? 0) < 3) return startRegistry({ ...opts, attempt: (opts.attempt ?? 0) + 1 });
      throw new Error(`docker-registry exited during start (${child.exitCode ?? child.signalCode}): ${stderr}`);
    }
    try {
      const status = await probe(`${opts.tls ? 'https' : 'http'}://${host}/v2/`, caFile, PROBE_AGENT);
      if (status === 200 || status === 401) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await cleanup();
      throw new Error(`docker-registry did not answer on ${host} in time: ${stderr}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }

  return {
    host,
    storageDir,
    users,
    ...(caFile ? { caFile } : {}),
    requests: async () => {
      const marker = `/v2/_kplane_log_marker_${++markers}`;
      await probe(`${opts.tls ? 'https' : 'http'}://${host}${marker}`, caFile, MARKER_AGENT);
      for (const until = Date.now() + 5_000; !seenMarkers.has(marker); ) {
        if (Date.now() > until) throw new Error(`registry access log did not show ${marker}`);
        await new Promise((r) => setTimeout(r, 10));
      }
      return [...access];
    },
    blobPath: (digest: string) => {
      const [alg, hex] = digest.split(':') as [string, string];
      return join(storageDir, 'docker', 'registry', 'v2', 'blobs', alg, hex.slice(0, 2), hex, 'data');
    },
    stop: cleanup,
  };
}

/** The readiness probes' user agent: their access-log lines are not the test's requests. */
const PROBE_AGENT = 'kplane-registry-readiness-probe';
const MARKER_AGENT = 'kplane-registry-log-marker';
const TOKEN_SERVICE = 'kplane-test-registry';
const TOKEN_ISSUER = 'kplane-test-token-issuer';

interface TokenIssuer {
  readonly server: Server;
  readonly realm: string;
  readonly certPem: string;
}

/**
 * A docker token server (https://distribution.github.io/distribution/spec/auth/token/): GET
 * /token?service=..&scope=repository:NAME:ACTIONS with optional basic auth answers
 * { token, access_token, expires_in, issued_at }. Known users get what they ask for; anonymous
 * callers get pull when `anonymousPull`, else nothing (the registry then answers 401).
 */
async function startTokenIssuer(
  users: Readonly<Record<string, string>>,
  identityTokens: Readonly<Record<string, string>>,
  anonymousPull: boolean,
): Promise<TokenIssuer> {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const certPem = selfSignedCert(privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(), publicKey.export({ type: 'spki', format: 'pem' }).toString());
  const kid = libtrustKeyId(publicKey.export({ type: 'spki', format: 'der' }));
  const server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8').on('data', (d: string) => (body += d));
    req.on('end', () => answer(req.method ?? 'GET', req.url ?? '/', req.headers.authorization ?? '', body, res));
  });
  const deny = (res: ServerResponse, why: string): void => {
    res.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ details: why }));
  };
  const answer = (method: string, rawUrl: string, authz: string, body: string, res: ServerResponse): void => {
    const url = new URL(rawUrl, 'http://token');
    if (url.pathname !== '/token') {
      res.writeHead(404).end();
      return;
    }
    let subject = '';
    // GET with optional basic auth (the docker token flow), or POST with a refresh token (OAuth2,
    // what clients holding an identity token do).
    const params = method === 'POST' ? new URLSearchParams(body) : url.searchParams;
    if (method === 'POST') {
      if (params.get('grant_type') !== 'refresh_token') return deny(res, 'unsupported grant_type');
      const user = identityTokens[params.get('refresh_token') ?? ''];
      if (user === undefined) return deny(res, 'invalid refresh token');
      subject = user;
    } else if (authz.startsWith('Basic ')) {
      const [user, ...rest] = Buffer.from(authz.slice(6), 'base64').toString().split(':');
      if (user === undefined || users[user] === undefined || users[user] !== rest.join(':')) return deny(res, 'invalid username or password');
      subject = user;
    }
    const access: { type: string; name: string; actions: string[] }[] = [];
    for (const scope of params.getAll('scope')) {
      for (const one of scope.split(' ')) {
        const parts = one.split(':');
        if (parts.length < 3) continue;
        const actions = parts.pop()!.split(',');
        const [type, ...name] = parts;
        const granted = subject ? actions : anonymousPull ? actions.filter((a) => a === 'pull') : [];
        access.push({ type: type!, name: name.join(':'), actions: granted });
      }
    }
    const now = Math.floor(Date.now() / 1000);
    const claims = {
      iss: TOKEN_ISSUER,
      sub: subject,
      aud: params.get('service') ?? TOKEN_SERVICE,
      exp: now + 300,
      nbf: now - 10,
      iat: now,
      jti: randomBytes(8).toString('hex'),
      access,
    };
    const header = { typ: 'JWT', alg: 'RS256', kid };
    const input = `${b64url(JSON.stringify(header))}.${b64url(JSON.stringify(claims))}`;
    const token = `${input}.${b64url(sign('sha256', Buffer.from(input), privateKey))}`;
    const reply =
      method === 'POST'
        ? { access_token: token, expires_in: 300, issued_at: new Date().toISOString() }
        : { token, access_token: token, expires_in: 300, issued_at: new Date().toISOString() };
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(reply));
  };
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { server, realm: `http://127.0.0.1:${port}/token`, certPem };
}

function b64url(s: string | Buffer): string {
  return Buffer.from(s).toString('base64url');
}

/** docker/libtrust's key id: base32 of the first 240 bits of sha256(SPKI DER), in groups of four joined by ':'. */
function libtrustKeyId(spkiDer: Buffer): string {
  const digest = createHash('sha256').update(spkiDer).digest().subarray(0, 30);
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  let bits = 0;
  let value = 0;
  let out = '';
  for (const byte of digest) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += alphabet[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
    value &= (1 << bits) - 1;
  }
  return out.match(/.{4}/g)!.join(':');
}

/** A GET with node:https/http (fetch cannot be given a CA per request); resolves to the status. */
function probe(url: string, ca: string | undefined, agent: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const get = url.startsWith('https:') ? httpsGet : httpGet;
    const req = get(url, { headers: { 'user-agent': agent }, timeout: 1_000, ...(ca ? { ca: readFileSync(ca) } : {}) }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
  });
}

function selfSignedCert(privateKeyPem: string, publicKeyPem: string, ip?: string): string {
  const cert = forge.pki.createCertificate();
  cert.publicKey = forge.pki.publicKeyFromPem(publicKeyPem);
  cert.serialNumber = '01';
  cert.validity.notBefore = new Date(Date.now() - 60_000);
  cert.validity.notAfter = new Date(Date.now() + 24 * 3600_000);
  const subject = [{ name: 'commonName', value: 'kplane test token issuer' }];
  cert.setSubject(subject);
  cert.setIssuer(subject);
  cert.setExtensions([
    { name: 'basicConstraints', cA: true },
    { name: 'keyUsage', keyCertSign: true, digitalSignature: true, keyEncipherment: true },
    ...(ip
      ? [
          { name: 'subjectAltName', altNames: [{ type: 7, ip }] },
          { name: 'extKeyUsage', serverAuth: true },
        ]
      : []),
  ]);
  cert.sign(forge.pki.privateKeyFromPem(privateKeyPem), forge.md.sha256.create());
  // createPublicKey checks that forge wrote a certificate node can read back.
  createPublicKey(forge.pki.certificateToPem(cert));
  return forge.pki.certificateToPem(cert);
}

async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const { port } = srv.address() as AddressInfo;
  await new Promise<void>((resolve) => srv.close(() => resolve()));
  return port;
}
