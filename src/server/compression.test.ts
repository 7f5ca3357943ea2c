import assert from 'node:assert/strict';
import { createServer, request, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { gunzipSync } from 'node:zlib';
import { acceptsGzip, endBody, firstHeaderValue, GZIP_THRESHOLD_BYTES, overGzipThreshold } from './compression.js';

describe('acceptsGzip (responseContentEncodingSupported)', () => {
  it('finds the token gzip among comma-separated tokens, trimmed as strings.TrimSpace trims', () => {
    for (const v of ['gzip', 'gzip, deflate', 'deflate, gzip', 'br,gzip', ' gzip ', '\tgzip', 'gzip\t,br', 'identity,,gzip', 'deflate, gzip, br'])
      assert.equal(acceptsGzip(v), true, JSON.stringify(v));
  });

  it('compares each token exactly: no q-values, no other case, no aliases or wildcards', () => {
    // Upstream compares the whole trimmed token with "gzip": a token with parameters never matches,
    // whatever its q-value says.
    for (const v of [undefined, '', 'identity', 'deflate, br', 'gzip;q=1.0', 'gzip; q=0.5', 'gzip;q=0', 'GZIP', 'Gzip', 'x-gzip', '*', 'gzi', 'gzipx', 'g zip'])
      assert.equal(acceptsGzip(v), false, JSON.stringify(v));
  });

  it('trims Unicode spaces of the header bytes read as UTF-8, as Go does, not latin1 ones', () => {
    // node hands header bytes over as latin1: C2 A0 (UTF-8 no-break space) arrives as two characters.
    assert.equal(acceptsGzip('\u00c2\u00a0gzip'), true, 'UTF-8 NBSP is a space to Go');
    assert.equal(acceptsGzip('gzip\u00e2\u0080\u0083'), true, 'UTF-8 EM SPACE (U+2003) too');
    assert.equal(acceptsGzip('\u00a0gzip'), false, 'a lone A0 byte is invalid UTF-8, not a space');
    assert.equal(acceptsGzip('\u0085gzip'), false, 'a lone 85 byte likewise');
  });
});

describe('firstHeaderValue', () => {
  it('takes the first of repeated headers (Header.Get), case-insensitively', () => {
    const req = { headers: { 'accept-encoding': 'br, gzip' }, rawHeaders: ['Host', 'x', 'Accept-Encoding', 'br', 'accept-encoding', 'gzip'] };
    assert.equal(firstHeaderValue(req, 'accept-encoding'), 'br');
    assert.equal(acceptsGzip(firstHeaderValue(req, 'accept-encoding')), false, 'node joined them to "br, gzip"; Go reads "br"');
    assert.equal(firstHeaderValue({ headers: {}, rawHeaders: ['Host', 'x'] }, 'accept-encoding'), undefined);
    assert.equal(firstHeaderValue({ headers: { 'accept-encoding': 'gzip' } }, 'accept-encoding'), 'gzip', 'objects without rawHeaders');
  });
});

describe('overGzipThreshold', () => {
  it('is true above 128 KiB of bytes, not at it', () => {
    assert.equal(GZIP_THRESHOLD_BYTES, 131072);
    assert.equal(overGzipThreshold(Buffer.alloc(131072)), false);
    assert.equal(overGzipThreshold(Buffer.alloc(131073)), true);
    assert.equal(overGzipThreshold('a'.repeat(131072)), false);
    assert.equal(overGzipThreshold('a'.repeat(131073)), true);
    assert.equal(overGzipThreshold(''), false);
  });

  it('counts UTF-8 bytes of strings, not characters', () => {
    // 'é' is two bytes, '€' three, '😀' four (two UTF-16 units).
    assert.equal(overGzipThreshold('é'.repeat(65536)), false, '131072 bytes');
    assert.equal(overGzipThreshold('é'.repeat(65536) + 'a'), true, '131073 bytes');
    assert.equal(overGzipThreshold('€'.repeat(43690) + 'aa'), false, '131072 bytes');
    assert.equal(overGzipThreshold('€'.repeat(43691)), true, '131073 bytes');
    assert.equal(overGzipThreshold('😀'.repeat(32768)), false, '131072 bytes');
    assert.equal(overGzipThreshold('😀'.repeat(32768) + 'a'), true, '131073 bytes');
  });
});

describe('endBody over HTTP', () => {
  let server: Server;
  let enabled = true;
  let body: string | Buffer = '';
  before(async () => {
    server = createServer((_req, res) => {
      res.statusCode = 200;
      res.setHeader('Content-Type', 'application/json');
      if (res.req.url === '/vary') res.setHeader('Vary', 'Accept');
      endBody(res, body, enabled);
    });
    await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  });
  after(() => new Promise<void>((ok) => server.close(() => ok())));

  const get = (path: string, headers: Record<string, string> = {}): Promise<{ headers: IncomingHttpHeaders; rawHeaders: string[]; body: Buffer }> =>
    new Promise((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port: (server.address() as AddressInfo).port, path, headers, agent: false }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ headers: res.headers, rawHeaders: res.rawHeaders, body: Buffer.concat(chunks) }));
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end();
    });

  it('gzips a large body for a client that asks, with Content-Encoding and Vary, and nothing else', async () => {
    enabled = true;
    body = JSON.stringify({ items: Array.from({ length: 3000 }, (_, i) => ({ name: `item-${i}`, value: 'x'.repeat(40) })) }) + '\n';
    assert.ok(Buffer.byteLength(body) > GZIP_THRESHOLD_BYTES);
    const gz = await get('/', { 'accept-encoding': 'gzip' });
    assert.equal(gz.headers['content-encoding'], 'gzip');
    assert.equal(gz.headers.vary, 'Accept-Encoding');
    assert.equal(gz.headers['content-type'], 'application/json');
    assert.ok(gz.body.length < Buffer.byteLength(body) / 4, `${gz.body.length} bytes`);
    assert.equal(gunzipSync(gz.body).toString(), body);
    // A Vary already set is kept: Add, not Set.
    const vary = await get('/vary', { 'accept-encoding': 'gzip' });
    assert.deepEqual(vary.rawHeaders.filter((_, i, a) => i % 2 === 0 && /^vary$/i.test(a[i]!)).length, 2);
    assert.equal(vary.headers.vary, 'Accept, Accept-Encoding');

    const plain = await get('/');
    assert.equal(plain.headers['content-encoding'], undefined);
    assert.equal(plain.headers.vary, undefined);
    assert.equal(plain.body.toString(), body);
    assert.equal((await get('/', { 'accept-encoding': 'gzip;q=1.0' })).headers['content-encoding'], undefined);

    enabled = false;
    const off = await get('/', { 'accept-encoding': 'gzip' });
    assert.equal(off.headers['content-encoding'], undefined, 'turned off');
    assert.equal(off.body.toString(), body);
  });

  it('leaves a body of 128 KiB or less as it is', async () => {
    enabled = true;
    body = Buffer.alloc(GZIP_THRESHOLD_BYTES, 'a');
    const res = await get('/', { 'accept-encoding': 'gzip' });
    assert.equal(res.headers['content-encoding'], undefined);
    assert.equal(res.headers.vary, undefined);
    assert.equal(res.body.length, GZIP_THRESHOLD_BYTES);
    body = Buffer.alloc(GZIP_THRESHOLD_BYTES + 1, 'a');
    assert.equal((await get('/', { 'accept-encoding': 'gzip' })).headers['content-encoding'], 'gzip', 'one byte more');
  });
});
