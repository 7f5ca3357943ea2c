import assert from 'node:assert/strict';
import type { EventEmitter } from 'node:events';
import { describe, it } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import { streamTablesOf } from '../../runtime/http2-stream-tables.js';
import { listen, shutdown } from './server.js';

/** The session's stream Map as node:http2 keeps it. */
function streamsMap(session: object): unknown {
  const tables = streamTablesOf(session);
  assert.ok(tables, 'the stream-table workaround does not recognise this Node version');
  return tables.streams;
}

describe('listen', () => {
  it("gives grpc-js's HTTP/2 sessions young stream tables (src/runtime/http2-stream-tables.ts)", async () => {
    const server = new grpc.Server();
    const port = await listen(server, '127.0.0.1', 0);
    // grpc-js keeps its node:http2 servers in a private Map; if that changes, the workaround is off.
    const h2servers = (server as unknown as { http2Servers?: Map<EventEmitter, unknown> }).http2Servers;
    assert.ok(h2servers instanceof Map && h2servers.size === 1, 'grpc-js no longer keeps its http2 servers where listen() looks');
    const sessions: object[] = [];
    [...h2servers.keys()][0]!.on('session', (s: object) => sessions.push(s));
    const client = new grpc.Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
    const call = (): Promise<grpc.status | undefined> =>
      new Promise((resolve) => {
        client.makeUnaryRequest(
          '/kplane.test.Nothing/Call',
          (b: Buffer) => b,
          (b: Buffer) => b,
          Buffer.alloc(0),
          (err) => resolve(err?.code),
        );
      });
    try {
      assert.equal(await call(), grpc.status.UNIMPLEMENTED);
      assert.equal(sessions.length, 1);
      const first = streamsMap(sessions[0]!);
      for (let i = 0; i < 70; i++) assert.equal(await call(), grpc.status.UNIMPLEMENTED);
      assert.notEqual(streamsMap(sessions[0]!), first, 'the session kept its stream table after 71 calls');
    } finally {
      client.close();
      await shutdown(server, 1000);
    }
  });
});
