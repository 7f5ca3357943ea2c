import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import http2 from 'node:http2';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { isStatusError } from '../../apimachinery/errors.js';
import { createCertificateAuthority, ensurePki, issueCertificate } from '../certs.js';
import type { CertAndKey, Pki } from '../certs.js';
import { writeAdminKubeconfig, writeTokenKubeconfig } from '../kubeconfig.js';
import { createAuthenticator, loadTokenFile, parseTokenFile } from './authentication.js';
import type { Authenticator, AuthenticatableRequest } from './authentication.js';

async function hasKubectl(): Promise<boolean> {
  try {
    await promisify(execFile)('kubectl', ['version', '--client']);
    return true;
  } catch {
    return false;
  }
}
const kubectlAvailable = await hasKubectl();

const TOKEN_CSV = `
s3cret-token,alice,uid-alice,"devs,ops"
 other-token, bob,uid-bob
`;

interface Answer {
  status: number;
  body: unknown;
}

/** Answers every request with the authenticated user, or the Status the authenticator threw. */
function whoami(authenticate: Authenticator) {
  return (req: AuthenticatableRequest, res: ServerResponse | http2.Http2ServerResponse): void => {
    let status = 200;
    let body: unknown;
    try {
      body = authenticate(req);
    } catch (e) {
      if (!isStatusError(e)) throw e;
      status = e.code;
      body = e.status;
    }
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
}

function listen(server: https.Server | http2.Http2SecureServer): Promise<number> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));
}

function getHttps(port: number, ca: string, opts: { cert?: CertAndKey; token?: string }): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = https.request(
      {
        host: '127.0.0.1',
        port,
        path: '/whoami',
        ca,
        ...(opts.cert ? { cert: opts.cert.certPem, key: opts.cert.keyPem } : {}),
        headers: opts.token ? { authorization: `Bearer ${opts.token}` } : {},
        agent: false,
      },
      (res: IncomingMessage) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

function getHttp2(port: number, ca: string, opts: { cert?: CertAndKey; token?: string }): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const session = http2.connect(`https://127.0.0.1:${port}`, {
      ca,
      ...(opts.cert ? { cert: opts.cert.certPem, key: opts.cert.keyPem } : {}),
    });
    session.on('error', reject);
    const stream = session.request({ ':path': '/whoami', ...(opts.token ? { authorization: `Bearer ${opts.token}` } : {}) });
    let status = 0;
    let text = '';
    stream.setEncoding('utf8');
    stream.on('response', (headers) => (status = Number(headers[':status'])));
    stream.on('data', (d: string) => (text += d));
    stream.on('end', () => {
      session.close();
      resolve({ status, body: JSON.parse(text) });
    });
    stream.on('error', reject);
    stream.end();
  });
}

const UNAUTHORIZED_BODY = {
  kind: 'Status',
  apiVersion: 'v1',
  metadata: {},
  status: 'Failure',
  message: 'Unauthorized',
  reason: 'Unauthorized',
  code: 401,
};

describe('authentication over real TLS', () => {
  let dir: string;
  let pki: Pki;
  let foreignClient: CertAndKey;
  let sameCaNoCn: CertAndKey;
  const servers: { close(): unknown }[] = [];
  const ports: Record<'https' | 'http2' | 'anonymous', number> = { https: 0, http2: 0, anonymous: 0 };

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kplane-authn-'));
    pki = await ensurePki(dir, {});
    const otherCa = createCertificateAuthority({ commonName: 'someone-else' });
    foreignClient = issueCertificate(otherCa, { commonName: 'kplane-admin', organizations: ['system:masters'], usage: 'client' });
    const caKeyPem = await readFile(pki.paths.caKey, 'utf8');
    sameCaNoCn = issueCertificate({ certPem: pki.caCertPem, keyPem: caKeyPem }, { commonName: '', usage: 'client' });

    const tokens = (await loadTokenFile(await writeTokens(dir))).tokens;
    const tls = { key: pki.servingKeyPem, cert: pki.servingCertPem, ca: [pki.caCertPem], requestCert: true, rejectUnauthorized: false };
    const h1 = https.createServer(tls, whoami(createAuthenticator({ tokens })));
    const h2 = http2.createSecureServer({ ...tls, allowHTTP1: true }, whoami(createAuthenticator({ tokens })));
    const anon = https.createServer(tls, whoami(createAuthenticator({ tokens, anonymous: true })));
    servers.push(h1, h2, anon);
    ports.https = await listen(h1);
    ports.http2 = await listen(h2);
    ports.anonymous = await listen(anon);
  });

  after(async () => {
    for (const s of servers) s.close();
    await rm(dir, { recursive: true, force: true });
  });

  async function writeTokens(d: string): Promise<string> {
    const path = join(d, 'tokens.csv');
    await writeFile(path, TOKEN_CSV);
    return path;
  }

  for (const [protocol, get] of [
    ['https', getHttps],
    ['http2', getHttp2],
  ] as const) {
    describe(protocol, () => {
      const port = (): number => ports[protocol];

      it('authenticates the admin client certificate as CN with O groups', async () => {
        const a = await get(port(), pki.caCertPem, { cert: { certPem: pki.adminCertPem, keyPem: pki.adminKeyPem } });
        assert.deepEqual(a, { status: 200, body: { name: 'kplane-admin', groups: ['system:masters', 'system:authenticated'] } });
      });

      it('authenticates a bearer token from the token file', async () => {
        const a = await get(port(), pki.caCertPem, { token: 's3cret-token' });
        assert.deepEqual(a, { status: 200, body: { name: 'alice', uid: 'uid-alice', groups: ['devs', 'ops', 'system:authenticated'] } });
      });

      it('answers 401 Unauthorized without credentials', async () => {
        assert.deepEqual(await get(port(), pki.caCertPem, {}), { status: 401, body: UNAUTHORIZED_BODY });
      });

      it('answers 401 for a certificate from another CA', async () => {
        assert.deepEqual(await get(port(), pki.caCertPem, { cert: foreignClient }), { status: 401, body: UNAUTHORIZED_BODY });
      });

      it('answers 401 for an unknown token', async () => {
        assert.deepEqual(await get(port(), pki.caCertPem, { token: 'nope' }), { status: 401, body: UNAUTHORIZED_BODY });
      });

      it('serves a good token even beside a foreign certificate', async () => {
        const a = await get(port(), pki.caCertPem, { cert: foreignClient, token: 'other-token' });
        assert.equal(a.status, 200);
        assert.deepEqual(a.body, { name: 'bob', uid: 'uid-bob', groups: ['system:authenticated'] });
      });

      it('does not authenticate a verified certificate without CN', async () => {
        assert.deepEqual(await get(port(), pki.caCertPem, { cert: sameCaNoCn }), { status: 401, body: UNAUTHORIZED_BODY });
      });
    });
  }

  describe('anonymous auth', () => {
    it('makes a request without credentials system:anonymous', async () => {
      const a = await getHttps(ports.anonymous, pki.caCertPem, {});
      assert.deepEqual(a, { status: 200, body: { name: 'system:anonymous', groups: ['system:unauthenticated'] } });
    });

    it('still rejects bad credentials instead of falling back', async () => {
      assert.equal((await getHttps(ports.anonymous, pki.caCertPem, { token: 'nope' })).status, 401);
      assert.equal((await getHttps(ports.anonymous, pki.caCertPem, { cert: foreignClient })).status, 401);
    });
  });

  describe('kubectl with the written kubeconfigs', { skip: !kubectlAvailable && 'kubectl not installed' }, () => {
    it('reaches the server as kplane-admin with the admin kubeconfig', async () => {
      const path = await writeAdminKubeconfig(join(dir, 'admin.kubeconfig'), { server: `https://127.0.0.1:${ports.https}`, pki });
      const { stdout } = await promisify(execFile)('kubectl', ['--kubeconfig', path, 'get', '--raw', '/whoami']);
      assert.equal((JSON.parse(stdout) as { name: string }).name, 'kplane-admin');
    });

    it('reaches the server as the token user with a token kubeconfig', async () => {
      const path = await writeTokenKubeconfig(join(dir, 'alice.kubeconfig'), {
        server: `https://localhost:${ports.http2}`,
        caCertPem: pki.caCertPem,
        token: 's3cret-token',
      });
      const { stdout } = await promisify(execFile)('kubectl', ['--kubeconfig', path, 'get', '--raw', '/whoami']);
      assert.equal((JSON.parse(stdout) as { name: string }).name, 'alice');
    });
  });
});

describe('parseTokenFile', () => {
  it('reads kube token CSV: quoted group lists, leading spaces, BOM', () => {
    const { tokens, warnings } = parseTokenFile('\uFEFF' + TOKEN_CSV + 't3,carol,,"a, b,"\n');
    assert.deepEqual(warnings, []);
    assert.deepEqual(tokens.get('s3cret-token'), { name: 'alice', uid: 'uid-alice', groups: ['devs', 'ops'] });
    assert.deepEqual(tokens.get('other-token'), { name: 'bob', uid: 'uid-bob', groups: [] });
    assert.deepEqual(tokens.get('t3'), { name: 'carol', groups: ['a', 'b'] });
  });

  it('rejects records with fewer than 3 columns', () => {
    assert.throws(() => parseTokenFile('tok,user\n', 'x.csv'), /token file 'x.csv' must have at least 3 columns \(token, user name, user uid\), found 2/);
  });

  it('skips empty tokens and lets a duplicate override, with warnings', () => {
    const { tokens, warnings } = parseTokenFile(',nobody,1\ntok,first,1\ntok,second,2\n', 'x.csv');
    assert.equal(tokens.get('tok')?.name, 'second');
    assert.equal(tokens.size, 1);
    assert.deepEqual(warnings, [
      "empty token has been found in token file 'x.csv', record number '1'",
      "duplicate token has been found in token file 'x.csv', record number '3'",
    ]);
  });

  it('handles CRLF and escaped quotes', () => {
    const { tokens } = parseTokenFile('tok,"say ""hi""",u1,"g1,g2"\r\ntok2,x,u2\r\n');
    assert.deepEqual(tokens.get('tok'), { name: 'say "hi"', uid: 'u1', groups: ['g1', 'g2'] });
    assert.equal(tokens.get('tok2')?.name, 'x');
  });
});
