import assert from 'node:assert/strict';
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { keepStreamTablesYoung, streamTablesOf, swapStreamTables } from './http2-stream-tables.js';

/** The session's stream Map as node:http2 keeps it (the object this module swaps). */
function streamsMap(session: object): Map<unknown, unknown> {
  const tables = streamTablesOf(session);
  assert.ok(tables, 'the workaround does not recognise this Node version: it is off');
  return tables.streams;
}

async function listen(server: http2.Http2Server): Promise<string> {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function get(client: http2.ClientHttp2Session, path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = client.request({ ':path': path });
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (body += c));
    req.on('end', () => resolve(body));
    req.on('error', reject);
  });
}

describe('keepStreamTablesYoung', () => {
  it("finds this Node's session tables and swaps them for copies with the same entries", async () => {
    const server = http2.createServer();
    const seen: { before: Map<unknown, unknown>; after: Map<unknown, unknown>; ok: boolean; keys: unknown[][] }[] = [];
    server.on('stream', (stream) => {
      const session = stream.session!;
      const before = streamsMap(session);
      const ok = swapStreamTables(session);
      const after = streamsMap(session);
      seen.push({ before, after, ok, keys: [[...before.keys()], [...after.keys()]] });
      // The open stream is still found under its id in the new Map.
      assert.equal(after.get(stream.id), stream);
      stream.respond({ ':status': 200 });
      stream.end('ok');
    });
    const client = http2.connect(await listen(server));
    try {
      assert.equal(await get(client, '/'), 'ok');
      assert.equal(seen.length, 1);
      assert.equal(seen[0]!.ok, true, 'the workaround does not recognise this Node version: it is off');
      assert.notEqual(seen[0]!.before, seen[0]!.after);
      assert.deepEqual(seen[0]!.keys, [[1], [1]]);
      // The session goes on working on the copies.
      assert.equal(await get(client, '/'), 'ok');
    } finally {
      client.close();
      server.close();
    }
  });

  it('answers every request while tables are swapped under streams in flight', { timeout: 10_000 }, async () => {
    const server = http2.createServer((req, res) => {
      // Answers out of order, so that streams stay open across many swaps.
      setTimeout(() => res.end(`answer ${req.url}`), Math.floor(Math.random() * 20));
    });
    keepStreamTablesYoung(server, 2);
    keepStreamTablesYoung(server, 2); // a second call installs nothing more
    let maps = 0;
    let last: unknown;
    server.on('stream', (stream) => {
      const m = streamsMap(stream.session!);
      if (m !== last) maps++;
      last = m;
    });
    const client = http2.connect(await listen(server));
    try {
      const bodies = await Promise.all(Array.from({ length: 200 }, (_, i) => get(client, `/${i}`)));
      assert.deepEqual(
        bodies,
        Array.from({ length: 200 }, (_, i) => `answer /${i}`),
      );
      // One swap per 2 streams (the listener above runs after the workaround's).
      assert.ok(maps >= 90, `only ${maps} different stream tables seen`);
    } finally {
      client.close();
      server.close();
    }
  });

  it('leaves the streams open at a swap where closing the session finds them', { timeout: 10_000 }, async () => {
    const server = http2.createServer();
    keepStreamTablesYoung(server, 1);
    const open: http2.ServerHttp2Stream[] = [];
    const serverSession = new Promise<http2.ServerHttp2Session>((r) => server.once('session', r));
    server.on('stream', (stream) => open.push(stream)); // never answered
    const client = http2.connect(await listen(server));
    try {
      const reqs = Array.from({ length: 3 }, () => {
        const req = client.request({ ':path': '/' });
        return new Promise<void>((resolve) => {
          req.on('close', () => resolve());
          req.on('error', () => undefined);
          req.resume();
        });
      });
      while (open.length < 3) await new Promise((r) => setTimeout(r, 5));
      const closed = open.map((s) => new Promise<void>((r) => s.once('close', () => r())));
      // Session.destroy() ends every stream in its (swapped) table.
      (await serverSession).destroy();
      await Promise.all([...closed, ...reqs]);
      assert.ok(open.every((s) => s.destroyed));
    } finally {
      client.destroy();
      server.close();
    }
  });
});
