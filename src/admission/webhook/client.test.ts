// The webhook client against a real HTTPS server on loopback, on both transports (inline and on its
// worker thread): calls reuse kept-alive connections, an answer cut after its status line reads as
// Go's `unexpected EOF`, a non-2xx Status answer keeps its message and code, and a call that meets
// a kept-alive connection the server closes is sent again on a new one (never a new connection's);
// the thread ending under a call fails the call, and the next starts another; calls made while a
// thread starts do not wait for it; calls begun together travel to and from the thread in batches.
// (The other failures,
// hang, refused, 500, garbage, unknown CA, are proven through kubectl in
// test/e2e/admission-webhooks.test.ts.)
import assert from 'node:assert/strict';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { createServer as createTlsServer, type Server as TlsServer, type TLSSocket } from 'node:tls';
import { after, before, describe, it } from 'node:test';
import { createCertificateAuthority, issueCertificate } from '../../server/certs.js';
import { CallError, newEndpoint, post, setInlineCalls, transportThreadState, transportWorker, type WebhookEndpoint } from './client.js';

// Each case on both transports: inline (on this thread) and on the transport's worker thread.
for (const route of ['inline', 'thread'] as const)
  describe(`webhook client (${route})`, () => {
    let server: Server;
    let ep: WebhookEndpoint;
    let connections = 0;
    let previousInlineCalls = 0;
    let url = '';
    let caBundle = '';

    let ca: ReturnType<typeof createCertificateAuthority>;

    before(async () => {
      previousInlineCalls = setInlineCalls(route === 'inline' ? Infinity : 0);
      // Calls go to the thread once it is ready.
      if (route === 'thread') await transportWorker();
      ca = createCertificateAuthority({ commonName: 'client-test-ca' });
      const cert = issueCertificate(ca, { commonName: 'webhook', hosts: ['127.0.0.1'], usage: 'server' });
      server = createServer({ cert: cert.certPem, key: cert.keyPem }, (req, res) => {
        req.resume();
        req.on('end', () => {
          if (req.url?.startsWith('/hang')) return; // never answers
          if (req.url?.startsWith('/together')) return; // answered by its test
          if (req.url?.startsWith('/status')) {
            res.writeHead(403, { 'content-type': 'application/json' });
            res.end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', message: 'not you', code: 409 }));
            return;
          }
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

    // A bare HTTP/1.1 server over TLS whose connections answer their first request and are closed by
    // the server when the next one comes (as if its idle timeout fired just then), without a
    // Keep-Alive hint; on /refuse it closes any connection when its request comes.
    let closing: TlsServer;
    let closingURL = '';
    const seen = { connections: 0, requests: 0, refused: 0 };
    const sockets = new Set<TLSSocket>();

    before(async () => {
      const cert = issueCertificate(ca, { commonName: 'closing', hosts: ['127.0.0.1'], usage: 'server' });
      closing = createTlsServer({ cert: cert.certPem, key: cert.keyPem }, (socket) => {
        seen.connections++;
        sockets.add(socket);
        socket.once('close', () => sockets.delete(socket));
        let served = 0;
        let buf = '';
        socket.setEncoding('latin1').on('data', (d: string) => {
          buf += d;
          const head = buf.indexOf('\r\n\r\n');
          if (head < 0) return;
          const length = Number(/content-length: *(\d+)/i.exec(buf.slice(0, head))?.[1] ?? 0);
          if (buf.length < head + 4 + length) return;
          const refuse = buf.startsWith('POST /refuse');
          buf = buf.slice(head + 4 + length);
          seen.requests++;
          if (refuse || served > 0) {
            if (refuse) seen.refused++;
            socket.destroy();
            return;
          }
          served++;
          socket.write('HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}');
        });
      });
      await new Promise<void>((r) => closing.listen(0, '127.0.0.1', r));
      closingURL = `https://127.0.0.1:${(closing.address() as AddressInfo).port}`;
    });

    after(async () => {
      setInlineCalls(previousInlineCalls);
      ep.release();
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
      for (const s of sockets) s.destroy();
      await new Promise((r) => closing.close(r));
    });

    it('calls one after another reuse kept-alive connections', async () => {
      for (let i = 0; i < 10; i++) assert.equal(await post(ep, '{}', 10), '{}');
      // undici may open a second one while the first finishes the call before (it takes the next
      // call when it drains); never one per call.
      assert.ok(connections <= 2, `${connections} connections for 10 calls`);
    });

    it('an answer cut after its status line: unexpected EOF', async () => {
      const trusted = newEndpoint(`${url}/cut`, caBundle);
      try {
        await assert.rejects(post(trusted, '{}', 10), (e: unknown) => {
          assert.ok(e instanceof CallError);
          assert.equal(e.message, `Post "${url}/cut?timeout=10s": unexpected EOF`);
          return true;
        });
      } finally {
        trusted.release();
      }
    });

    it('a non-2xx answer with a Status: its message and code', async () => {
      const refusing = newEndpoint(`${url}/status`, caBundle);
      try {
        await assert.rejects(post(refusing, '{}', 10), (e: unknown) => {
          assert.ok(e instanceof CallError);
          assert.deepEqual([e.message, e.code], ['not you', 409]);
          return true;
        });
      } finally {
        refusing.release();
      }
    });

    it('a kept-alive connection the server closes as a call comes: the call is sent again on a new one', async () => {
      const hook = newEndpoint(`${closingURL}/validate`, caBundle);
      try {
        assert.equal(await post(hook, '{}', 10), '{}');
        // Once undici has marked the connection idle (it does so on the next turn of the event loop),
        // the next call goes out on it and the server closes it.
        await new Promise((r) => setImmediate(r));
        assert.equal(await post(hook, '{}', 10), '{}');
        assert.deepEqual({ connections: seen.connections, requests: seen.requests }, { connections: 2, requests: 3 });
      } finally {
        hook.release();
      }
    });

    it('a new connection closed under its first call is not tried again: EOF', async () => {
      const hook = newEndpoint(`${closingURL}/refuse`, caBundle);
      try {
        await assert.rejects(post(hook, '{}', 10), (e: unknown) => {
          assert.ok(e instanceof CallError);
          assert.equal(e.message, `Post "${closingURL}/refuse?timeout=10s": EOF`);
          return true;
        });
        assert.equal(seen.refused, 1);
      } finally {
        hook.release();
      }
    });

    // The thread's own failure: on the thread route only.
    if (route === 'thread')
      it('the transport thread ending under a call: the call fails, and the next call starts another thread', async () => {
        const hanging = newEndpoint(`${url}/hang`, caBundle);
        try {
          const worker = await transportWorker();
          const call = post(hanging, '{}', 10);
          // Ended once the call is on its way: the webhook has its request.
          await new Promise<void>((r) => server.once('request', () => r()));
          await worker.terminate();
          await assert.rejects(call, (e: unknown) => {
            assert.ok(e instanceof CallError);
            assert.equal(e.message, `Post "${url}/hang?timeout=10s": the webhook transport thread exited with code 1`);
            return true;
          });
          assert.notEqual(await transportWorker(), worker, 'another thread (ready before the call below)');
          // An endpoint opened on the thread that ended is opened again on the new one.
          assert.equal(await post(ep, '{}', 10), '{}');
        } finally {
          hanging.release();
        }
      });

    if (route === 'thread')
      it('calls begun in the same turn go to the thread in one message, and their ends come back together', async () => {
        const worker = await transportWorker();
        const sent: unknown[] = [];
        const received: unknown[] = [];
        const postMessage = worker.postMessage.bind(worker);
        worker.postMessage = (m: unknown) => (sent.push(m), postMessage(m));
        const onMessage = (m: unknown): number => received.push(m);
        worker.on('message', onMessage);
        // Held until all eight are there, so that they end in the same turn of the thread.
        const held: (() => void)[] = [];
        const gate = (req: IncomingMessage, res: ServerResponse): void => {
          if (!req.url?.startsWith('/together')) return;
          held.push(() => {
            res.writeHead(200, { 'content-type': 'application/json', 'content-length': 2 });
            res.end('{}');
          });
          if (held.length === 8) for (const answer of held) answer();
        };
        const together = newEndpoint(`${url}/together`, caBundle);
        server.prependListener('request', gate);
        try {
          const calls = Array.from({ length: 8 }, () => post(together, '{}', 10));
          assert.deepEqual(await Promise.all(calls), Array(8).fill('{}'));
          assert.equal(sent.length, 1, 'one message for the endpoint and its eight calls');
          assert.deepEqual(
            (sent[0] as { t: string }[]).map((m) => m.t),
            ['open', ...Array<string>(8).fill('call')],
          );
          const ends = received.flat().length;
          assert.equal(ends, 8);
          assert.ok(received.length < 8, `the eight ends came in ${received.length} messages`);
        } finally {
          server.off('request', gate);
          worker.off('message', onMessage);
          worker.postMessage = postMessage;
          together.release();
        }
      });

    if (route === 'thread')
      it('a call made while a new transport thread starts runs inline, not waiting for the start', async () => {
        await (await transportWorker()).terminate();
        assert.equal(transportThreadState(), 'none');
        // This call starts the next thread (a few hundred milliseconds) and is answered before it is ready.
        assert.equal(await post(ep, '{}', 10), '{}');
        assert.equal(transportThreadState(), 'starting');
        await transportWorker();
        assert.equal(transportThreadState(), 'ready');
      });
  });
