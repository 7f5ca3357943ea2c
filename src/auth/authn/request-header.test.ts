import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { describe, it } from 'node:test';
import { createCertificateAuthority, issueCertificate } from '../../server/certs.js';
import { requestHeaderAuthenticator } from './request-header.js';

const der = (pem: string): Buffer => new X509Certificate(pem).raw;

describe('requestheader authenticator', () => {
  const ca = createCertificateAuthority({ commonName: 'front-proxy-ca' });
  const other = createCertificateAuthority({ commonName: 'other-ca' });
  const proxy = issueCertificate(ca, { commonName: 'front-proxy-client', usage: 'client' });
  const stranger = issueCertificate(ca, { commonName: 'someone-else', usage: 'client' });
  const foreign = issueCertificate(other, { commonName: 'front-proxy-client', usage: 'client' });
  const rh = requestHeaderAuthenticator({ clientCA: ca.certPem, allowedNames: ['front-proxy-client'] });

  it('trusts only a certificate the CA signed for an allowed name', () => {
    assert.deepEqual(rh.verify(undefined), { kind: 'none' });
    assert.deepEqual(rh.verify(der(proxy.certPem)), { kind: 'proxy' });
    assert.deepEqual(rh.verify(der(stranger.certPem)), {
      kind: 'invalid',
      reason: 'x509: subject with cn=someone-else is not in the allowed list',
      signedByProxyCA: true,
    });
    assert.deepEqual(rh.verify(der(foreign.certPem)), { kind: 'invalid', reason: 'x509: certificate signed by unknown authority' });
    // Any name the CA signed, without an allowed list.
    assert.deepEqual(requestHeaderAuthenticator({ clientCA: ca.certPem }).verify(der(stranger.certPem)), { kind: 'proxy' });
  });

  it('reads the user, each group line, the uid and unescaped extras; nothing without a username', () => {
    const raw = [
      'X-Remote-User',
      'jane',
      'x-remote-group',
      'devs',
      'X-Remote-Group',
      'system:masters, not-split',
      'X-Remote-Uid',
      'u-1',
      'X-Remote-Extra-Example.com%2fscopes',
      'a',
      'x-remote-extra-example.com%2Fscopes',
      'b',
    ];
    assert.deepEqual(rh.user(raw), { name: 'jane', uid: 'u-1', groups: ['devs', 'system:masters, not-split'], extra: { 'example.com/scopes': ['a', 'b'] } });
    assert.equal(rh.user(['X-Remote-Group', 'devs']), undefined);
    assert.equal(rh.user(['X-Remote-User', '']), undefined);
  });

  it('clears what it read from the headers handlers see', () => {
    const headers: Record<string, unknown> = { 'x-remote-user': 'jane', 'x-remote-group': 'devs', 'x-remote-extra-a': 'b', accept: 'application/json' };
    rh.clear(headers);
    assert.deepEqual(headers, { accept: 'application/json' });
  });
});
