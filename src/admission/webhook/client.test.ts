// The webhook client against a real HTTPS server on loopback: calls reuse kept-alive connections,
// and an answer cut after its status line reads as Go's `unexpected EOF`. (The other failures,
// hang, refused, 500, garbage, unknown CA, are proven through kubectl in
// test/e2e/admission-webhooks.test.ts.)
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { createCertificateAuthority, issueCertificate } from '../../server/certs.js';
import { CallError, newEndpoint, post, type WebhookEndpoint } from './client.js';

describe('webhook client', () => {
  let server: Server;
  let ep: WebhookEndpoint;
  let connections = 0;
  let url = '';
  let caBundle = '';

  before(async () => {
    const ca = createCertificateAuthority({ commonName: 'client-test-ca' });
    const cert = issueCertificate(ca, { commonName: 'webhook', hosts: ['127.0.0.1'], usage: 'server' });
    server = createServer({ cert: cert.certPem, key: cert.keyPem }, (req, res) => {
      req.resume();
      req.on('end', () => {
        if (req.url?.startsWith('/cut')) {
          // The status line and headers promise 100 bytes; the connection ends after 2.
          res.writeHead(200, { 'content-type': 'application/json', 'content-length': 100 });
          res.write('{"', () => res.socket?.destroy());
          return;
        }
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': 2 });
        res.end('{}');
      });
    });
    server.on('secureConnection', () => connections++);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
    caBundle = Buffer.from(ca.certPem).toString('base64');
    ep = newEndpoint(`${url}/ok`, caBundle);
  });

  after(async () => {
    ep.release();
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  it('calls one after another reuse kept-alive connections', async () => {
    for (let i = 0; i < 10; i++) assert.equal((await post(ep, Buffer.from('{}'), 10)).toString(), '{}');
    // undici may open a second one while the first finishes the call before (it takes the next
    // call when it drains); never one per call.
    assert.ok(connections <= 2, `${connections} connections for 10 calls`);
  });

  it('an answer cut after its status line: unexpected EOF', async () => {
    const trusted = newEndpoint(`${url}/cut`, caBundle);
    try {
      await assert.rejects(post(trusted, Buffer.from('{}'), 10), (e: unknown) => {
        assert.ok(e instanceof CallError);
        assert.equal(e.message, `Post "${url}/cut?timeout=10s": unexpected EOF`);
        return true;
      });
    } finally {
      trusted.release();
    }
  });
});
