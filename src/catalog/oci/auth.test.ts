import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { after, test } from 'node:test';
import { credentialsFor, parseChallenge, parseCreds } from './auth.js';

const work = mkdtempSync(join(tmpdir(), 'kplane-auth-'));
after(() => rmSync(work, { recursive: true, force: true }));

function authFile(name: string, doc: unknown): string {
  const p = join(work, name);
  writeFileSync(p, JSON.stringify(doc));
  return p;
}

test('WWW-Authenticate challenges as distribution and Docker Hub send them', () => {
  assert.deepEqual(parseChallenge('Bearer realm="https://auth.docker.io/token",service="registry.docker.io",scope="repository:library/busybox:pull"'), {
    scheme: 'bearer',
    params: { realm: 'https://auth.docker.io/token', service: 'registry.docker.io', scope: 'repository:library/busybox:pull' },
  });
  assert.deepEqual(parseChallenge('Basic realm="kplane-test"'), { scheme: 'basic', params: { realm: 'kplane-test' } });
  assert.deepEqual(parseChallenge('Bearer realm="a\\"b", error=insufficient_scope'), {
    scheme: 'bearer',
    params: { realm: 'a"b', error: 'insufficient_scope' },
  });
  assert.deepEqual(parseCreds('u:p:w'), { username: 'u', password: 'p:w' });
  assert.deepEqual(parseCreds('u'), { username: 'u', password: '' });
});

test('credentials from docker config.json / auth.json entries', () => {
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  const file = authFile('config.json', {
    auths: {
      'quay.io': { auth: b64('quser:qpass') },
      'https://index.docker.io/v1/': { auth: b64('huser:hpass') },
      'https://r.example.com': { username: 'ruser', password: 'rpass' },
      'tok.example.com': { identitytoken: 'refresh-me' },
    },
  });
  assert.deepEqual(credentialsFor('quay.io', { authFile: file }), { username: 'quser', password: 'qpass' });
  assert.deepEqual(credentialsFor('docker.io', { authFile: file }), { username: 'huser', password: 'hpass' });
  assert.deepEqual(credentialsFor('r.example.com', { authFile: file }), { username: 'ruser', password: 'rpass' });
  assert.deepEqual(credentialsFor('tok.example.com', { authFile: file }), { identityToken: 'refresh-me' });
  assert.equal(credentialsFor('other.io', { authFile: file }), undefined);
  assert.deepEqual(
    credentialsFor('quay.io', { authFile: file, credentials: { username: 'flag', password: 'x' } }),
    { username: 'flag', password: 'x' },
    'flags win',
  );
  assert.throws(() => credentialsFor('quay.io', { authFile: writeBad() }), /is not valid JSON/);
  assert.throws(() => credentialsFor('quay.io', { authFile: join(work, 'missing.json') }), /cannot read the registry auth file/);
});

function writeBad(): string {
  const p = join(work, 'bad.json');
  writeFileSync(p, '{not json');
  return p;
}

test('credential helpers: credHelpers for a host, then credsStore; a missing helper gives no credentials', () => {
  const bin = join(work, 'bin');
  mkdirSync(bin);
  const helper = join(bin, 'docker-credential-kplanetest');
  // Answers for quay.io only, as a keychain that knows one server.
  writeFileSync(
    helper,
    '#!/bin/sh\nread server\n[ "$1" = get ] && [ "$server" = quay.io ] && { echo \'{"ServerURL":"quay.io","Username":"hu","Secret":"hs"}\'; exit 0; }\necho "credentials not found in native keychain"; exit 1\n',
  );
  chmodSync(helper, 0o755);
  const saved = process.env.PATH;
  process.env.PATH = `${bin}${delimiter}${saved ?? ''}`;
  try {
    const byHost = authFile('helpers.json', {
      credHelpers: { 'quay.io': 'kplanetest' },
      auths: { 'quay.io': { auth: Buffer.from('file:pw').toString('base64') } },
    });
    assert.deepEqual(credentialsFor('quay.io', { authFile: byHost }), { username: 'hu', password: 'hs' });
    const store = authFile('store.json', { credsStore: 'kplanetest', auths: { 'other.io': { auth: Buffer.from('o:p').toString('base64') } } });
    assert.deepEqual(credentialsFor('quay.io', { authFile: store }), { username: 'hu', password: 'hs' });
    assert.deepEqual(credentialsFor('other.io', { authFile: store }), { username: 'o', password: 'p' }, 'the helper knows nothing: the file entry');
    const missing = authFile('missing-helper.json', { credsStore: 'no-such-helper-kplane' });
    assert.equal(credentialsFor('quay.io', { authFile: missing }), undefined);
  } finally {
    process.env.PATH = saved;
  }
});
