import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { formatFloat32 } from '../../golang/strconv.js';
import { bufferedWriter, createLogger, formatEntries, formatLine, newEntry, putEntry, quote, type Entry, type Fields } from './log.js';
import { goMilliseconds } from './server.js';

describe('catalog serve log lines (logrus text format)', () => {
  it('quotes as logrus does: bare for [A-Za-z0-9-._/@^+] and for an empty value, Go %q otherwise', () => {
    assert.equal(quote('api.Registry'), 'api.Registry');
    assert.equal(quote('a-b_c/d@e^f+g.0'), 'a-b_c/d@e^f+g.0');
    assert.equal(quote(''), '');
    assert.equal(quote('127.0.0.1:5000'), '"127.0.0.1:5000"');
    assert.equal(quote('two words'), '"two words"');
    assert.equal(quote('bell\u0007 tab\t "q"'), '"bell\\a tab\\t \\"q\\""');
    assert.equal(
      formatLine(new Date(Date.UTC(2026, 10, 22, 2, 20, 47, 500)), 'info', 'serving registry', { port: 50051, configs: '/catalog', cache: '' }),
      'time="2026-11-22T02:20:47Z" level=info msg="serving registry" cache= configs=/catalog port=50051\n',
    );
    // a message without anything to quote is printed bare, as logrus prints it
    assert.equal(formatLine(new Date(0), 'info', 'ready', {}), 'time="1970-01-01T00:00:00Z" level=info msg=ready\n');
  });

  it('the call log fast path prints exactly what formatLine prints for the same fields', () => {
    const key = fc.constantFrom('protocol', 'grpc.code', 'grpc.method', 'peer.address', 'user-agent', 'content-type', 'a', 'zz', 'grpc.time_ms', 'te');
    const value = fc.oneof(fc.string(), fc.constantFrom('', 'OK', 'a b', '[x]', '127.0.0.1:1', 'ü"\\\n'));
    fc.assert(
      fc.property(fc.array(fc.tuple(key, value), { maxLength: 14 }), fc.integer({ min: 0, max: 4e12 }), (assignments, ms) => {
        const fields: Fields = {};
        const entries: Entry[] = [];
        for (const [k, v] of assignments) {
          fields[k] = v; // later assignments win, as in a fields object
          putEntry(entries, newEntry(k, quote(v)));
        }
        assert.equal(formatEntries(ms, 'warning', 'finished call', entries), formatLine(new Date(ms), 'warning', 'finished call', fields));
      }),
      { numRuns: 500 },
    );
  });

  it("logEntries with more entries, through a logger's own fields and the piecewise buffered writer, prints what formatLine prints", () => {
    const key = fc.constantFrom('protocol', 'grpc.code', 'grpc.time_ms', 'peer.address', 'user-agent', 'a', 'zz', 'configs', 'é');
    const value = fc.oneof(fc.string(), fc.constantFrom('', 'OK', 'a b', '[x]', 'ü"\\\n', '😀'));
    const sorted = (pairs: [string, string][]): Entry[] => {
      const list: Entry[] = [];
      for (const [k, v] of pairs) putEntry(list, newEntry(k, quote(v)));
      return list;
    };
    const last = (pairs: [string, string][]): Fields => Object.fromEntries(pairs);
    fc.assert(
      fc.property(
        fc.array(fc.tuple(key, value), { maxLength: 4 }),
        fc.array(fc.tuple(key, value), { maxLength: 10 }),
        fc.array(fc.tuple(key, value), { maxLength: 4 }),
        fc.integer({ min: 0, max: 4e12 }),
        (base, call, more, ms) => {
          const expected = formatLine(new Date(ms), 'error', 'finished call', { ...last(base), ...last(call), ...last(more) });
          const plain: string[] = [];
          createLogger({ write: (l) => plain.push(l), now: () => new Date(ms) })
            .with(last(base))
            .logEntries('error', 'finished call', sorted(call), sorted(more));
          const chunks: Buffer[] = [];
          const out = bufferedWriter((c) => chunks.push(Buffer.from(c)), { maxBytes: 16 });
          createLogger({ write: out.write, pieces: out, now: () => new Date(ms) })
            .with(last(base))
            .logEntries('error', 'finished call', sorted(call), sorted(more));
          out.flush();
          assert.equal(plain.join(''), expected);
          assert.equal(Buffer.concat(chunks).toString('utf8'), expected);
        },
      ),
      { numRuns: 400 },
    );
  });

  it('a logger with fields of its own merges them under the call fields', () => {
    const lines: string[] = [];
    const base = createLogger({ write: (l) => lines.push(l), now: () => new Date(0) }).with({ port: 1, 'grpc.code': 'base' });
    const entries: Entry[] = [];
    putEntry(entries, newEntry('grpc.code', quote('OK')));
    putEntry(entries, newEntry('a', quote('x y')));
    base.logEntries('info', 'finished call', entries);
    base.log('info', 'finished call', { 'grpc.code': 'OK', a: 'x y' });
    assert.equal(lines[0], lines[1]);
    assert.equal(lines[0], 'time="1970-01-01T00:00:00Z" level=info msg="finished call" a="x y" grpc.code=OK port=1\n');
  });

  it("grpc.time_ms is float32(whole microseconds) / 1000 in a float32's shortest digits (go-grpc-middleware)", () => {
    assert.equal(goMilliseconds(0.5129), '0.512');
    assert.equal(goMilliseconds(0), '0');
    assert.equal(goMilliseconds(12.3456789), '12.345');
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 100_000_000_000 }), (us) => {
        assert.equal(goMilliseconds(us / 1000 + 0.0000004), formatFloat32(Math.fround(Math.fround(us) / 1000)));
      }),
      { numRuns: 2000 },
    );
  });
});
