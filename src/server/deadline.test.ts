import assert from 'node:assert/strict';
import { Agent, createServer, request, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import {
  clearDeadline,
  Deadlines,
  DEFAULT_REQUEST_TIMEOUT_MS,
  filterTimeoutMs,
  handlerBoundFirst,
  isSilenced,
  silence,
  WRITE_TIMEOUT_UPPER_BOUND_MS,
} from './deadline.js';

describe('the deadline of a request', () => {
  it('is the server timeout unless ?timeout= asks for less than it and more than zero', () => {
    const max = DEFAULT_REQUEST_TIMEOUT_MS;
    assert.equal(filterTimeoutMs(undefined, max), 60_000);
    assert.equal(filterTimeoutMs(1_000, max), 1_000);
    assert.equal(filterTimeoutMs(0, max), 60_000, "timeout=0: no timeout of the client's");
    assert.equal(filterTimeoutMs(-1_000, max), 60_000, 'negative');
    assert.equal(filterTimeoutMs(600_000, max), 60_000, 'longer than the server allows');
    assert.equal(filterTimeoutMs(60_000, max), 60_000);
    assert.equal(filterTimeoutMs(0.001, max), 0.001, 'a microsecond');
    assert.equal(filterTimeoutMs(undefined, 0), 0, '--request-timeout=0 times everything out at once, as upstream');
  });

  it("is the write handlers' 34 s bound when that comes first, for writes only", () => {
    assert.equal(WRITE_TIMEOUT_UPPER_BOUND_MS, 34_000);
    for (const verb of ['create', 'update', 'patch', 'delete', 'deletecollection']) {
      assert.equal(handlerBoundFirst(verb, 60_000), true, verb);
      assert.equal(handlerBoundFirst(verb, 34_001), true, verb);
      assert.equal(handlerBoundFirst(verb, 34_000), false, `${verb}: at the same time the filter answers`);
      assert.equal(handlerBoundFirst(verb, 10_000), false, verb);
    }
    for (const verb of ['get', 'list', 'watch', 'post', 'get']) assert.equal(handlerBoundFirst(verb, 60_000), false, verb);
  });
});

/** Waits for `p`; deadline timers never keep the process alive, so this does meanwhile. */
async function alive<T>(p: Promise<T>): Promise<T> {
  const keep = setInterval(() => {}, 1000);
  try {
    return await p;
  } finally {
    clearInterval(keep);
  }
}

describe('Deadlines', () => {
  it('expires deadlines in order, never one that was cleared, and forgets each', async () => {
    const seen: string[] = [];
    let done!: () => void;
    const finished = new Promise<void>((ok) => (done = ok));
    const d = new Deadlines<string>((item) => {
      seen.push(item);
      if (item === 'last') done();
    });
    const start = performance.now();
    // Tens of milliseconds apart: each duration has its own timer, so the order across durations
    // holds only if these lines run before the shortest passes (2 ms apart, a stall of a loaded CI
    // machine between them once let 'a' and 'c' expire before 'f').
    d.add('a', 50, start);
    const b = d.add('b', 50, start);
    d.add('c', 50, start + 10);
    const e = d.add('e', 10, start);
    d.add('f', 20, start);
    d.add('last', 150, start);
    // Past setTimeout's range (which would fire it after 1 ms): it waits.
    const forever = d.add('forever', 10_000 * 3_600_000, start);
    assert.equal(d.size, 7);
    clearDeadline(b);
    clearDeadline(e);
    clearDeadline(e);
    assert.equal(d.size, 5);
    await alive(finished);
    assert.deepEqual(seen, ['f', 'a', 'c', 'last']);
    assert.equal(d.size, 1);
    clearDeadline(forever);
    assert.equal(d.size, 0);
  });

  it('clears the first of a queue so that the next one still expires', async () => {
    const seen: string[] = [];
    let done!: () => void;
    const finished = new Promise<void>((ok) => (done = ok));
    const d = new Deadlines<string>((item) => {
      seen.push(item);
      done();
    });
    const start = performance.now();
    const first = d.add('first', 3, start);
    d.add('second', 3, start + 5);
    clearDeadline(first);
    await alive(finished);
    assert.deepEqual(seen, ['second']);
  });
});

describe('silence', () => {
  let server: Server;
  let agent: Agent;
  let lateEnds = 0;
  const errors: unknown[] = [];
  let late: Promise<void> = Promise.resolve();
  before(async () => {
    server = createServer((req, res: ServerResponse) => {
      res.on('error', (e) => errors.push(e));
      if (req.url !== '/late') {
        res.end('ok');
        return;
      }
      // Answered by "the deadline", then the handler writes its own answer late.
      res.setHeader('X-Handler', 'yes');
      res.statusCode = 504;
      res.end('timed out');
      silence(res, () => lateEnds++);
      late = new Promise<void>((ok) =>
        setTimeout(() => {
          assert.equal(isSilenced(res), true);
          res.statusCode = 201;
          res.setHeader('Content-Type', 'application/json');
          res.removeHeader('X-Handler');
          res.writeHead(200);
          assert.equal(res.write('late'), true);
          res.end('late answer');
          res.end('twice');
          assert.equal(res.statusCode, 504, 'the status sent stays');
          ok();
        }, 20),
      );
    });
    await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
    agent = new Agent({ keepAlive: true, maxSockets: 1 });
  });
  after(() => {
    agent.destroy();
    return new Promise<void>((ok) => server.close(() => ok()));
  });

  const get = (path: string): Promise<{ status: number; body: string; socket: unknown }> =>
    new Promise((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port: (server.address() as AddressInfo).port, path, agent }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body, socket: req.socket }));
      });
      req.on('error', reject);
      req.end();
    });

  it('drops a late answer without an error, and the connection serves the next request', async () => {
    const first = await get('/late');
    assert.deepEqual({ status: first.status, body: first.body }, { status: 504, body: 'timed out' });
    await late;
    assert.equal(lateEnds, 1, 'the late end is reported once');
    const next = await get('/next');
    assert.deepEqual({ status: next.status, body: next.body }, { status: 200, body: 'ok' });
    assert.equal(next.socket, first.socket, 'the same keep-alive connection');
    assert.deepEqual(errors, []);
    assert.equal(isSilenced({}), false);
  });
});
