import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { mkdtemp, readFile, rm, stat, unlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ensurePki, pkiPaths } from './certs.js';

function hasOpenssl(): boolean {
  try {
    execFileSync('openssl', ['version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

describe('ensurePki', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kplane-pki-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('generates CA, serving and admin certificates on first start', async (t) => {
    const startedMs = performance.now();
    const pki = await ensurePki(dir, {});
    const elapsedMs = performance.now() - startedMs;
    t.diagnostic(`first-start PKI generation took ${elapsedMs.toFixed(0)} ms`);
    assert.deepEqual(pki.generated, ['ca', 'serving', 'admin']);

    const ca = new X509Certificate(pki.caCertPem);
    assert.equal(ca.ca, true);
    assert.match(ca.subject, /CN=kplane-ca/);
    const tenYearsMs = 3650 * 24 * 3600 * 1000;
    assert.ok(Math.abs(Date.parse(ca.validTo) - Date.now() - tenYearsMs) < 24 * 3600 * 1000);

    const serving = new X509Certificate(pki.servingCertPem);
    assert.ok(serving.checkIssued(ca) && serving.verify(ca.publicKey));
    assert.equal(serving.ca, false);
    const san = serving.subjectAltName ?? '';
    assert.match(san, /DNS:localhost/);
    assert.match(san, /IP Address:127\.0\.0\.1/);
    assert.match(san, /IP Address:0:0:0:0:0:0:0:1/i);
    assert.ok(serving.checkIP('127.0.0.1') && serving.checkHost('localhost'));

    const admin = new X509Certificate(pki.adminCertPem);
    assert.ok(admin.verify(ca.publicKey));
    assert.match(admin.subject, /O=system:masters/);
    assert.match(admin.subject, /CN=kplane-admin/);
    assert.deepEqual(admin.keyUsage, ['1.3.6.1.5.5.7.3.2']);

    for (const key of [pki.paths.caKey, pki.paths.servingKey, pki.paths.adminKey]) {
      assert.equal((await stat(key)).mode & 0o777, 0o600, key);
    }
    assert.equal(await readFile(pki.paths.servingKey, 'utf8'), pki.servingKeyPem);
  });

  it('passes strict X.509 verification (Python 3.13 clients use VERIFY_X509_STRICT)', { skip: !hasOpenssl() && 'no openssl' }, () => {
    const p = pkiPaths(dir);
    for (const [cert, purpose] of [
      [p.servingCert, 'sslserver'],
      [p.adminCert, 'sslclient'],
    ] as const) {
      const out = execFileSync('openssl', ['verify', '-x509_strict', '-purpose', purpose, '-CAfile', p.caCert, cert], { encoding: 'utf8' });
      assert.match(out, /: OK/);
    }
  });

  it('loads the same material on a later start', async () => {
    const first = await ensurePki(dir, {});
    const again = await ensurePki(dir, { hosts: ['localhost', '0:0:0:0:0:0:0:1', '127.0.0.1'] });
    assert.deepEqual(again.generated, []);
    assert.equal(again.servingCertPem, first.servingCertPem);
    assert.equal(again.adminKeyPem, first.adminKeyPem);
  });

  it('reissues only the serving certificate when the hosts change', async () => {
    const before = await ensurePki(dir, {});
    const after = await ensurePki(dir, { hosts: ['127.0.0.1', 'kplane.example', '10.0.0.7'] });
    assert.deepEqual(after.generated, ['serving']);
    assert.equal(after.caCertPem, before.caCertPem);
    assert.equal(after.adminCertPem, before.adminCertPem);
    const serving = new X509Certificate(after.servingCertPem);
    assert.ok(serving.checkHost('kplane.example') && serving.checkIP('10.0.0.7'));
    assert.equal(serving.checkHost('localhost'), undefined);
  });

  it('reissues leaves that expire within 30 days', async () => {
    const hosts = ['127.0.0.1', 'kplane.example', '10.0.0.7'];
    const in340Days = new Date(Date.now() + 340 * 24 * 3600 * 1000);
    const renewed = await ensurePki(dir, { hosts, now: () => in340Days });
    assert.deepEqual(renewed.generated, ['serving', 'admin']);
    assert.deepEqual((await ensurePki(dir, { hosts })).generated, []);
  });

  it('reissues a leaf whose file was lost', async () => {
    const hosts = ['127.0.0.1', 'kplane.example', '10.0.0.7'];
    await unlink(pkiPaths(dir).adminKey);
    assert.deepEqual((await ensurePki(dir, { hosts })).generated, ['admin']);
  });

  it('refuses to replace half a CA', async () => {
    const other = await mkdtemp(join(tmpdir(), 'kplane-pki-'));
    try {
      await ensurePki(other, {});
      await unlink(pkiPaths(other).caKey);
      await assert.rejects(ensurePki(other, {}), /incomplete CA/);
    } finally {
      await rm(other, { recursive: true, force: true });
    }
  });
});
