import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createHealthChecks } from './health.js';
import type { CheckFailure, HealthCheck, HealthEndpoint, HealthResponse } from './health.js';

const healthy = (name: string, endpoints?: HealthEndpoint[]): HealthCheck => ({ name, check: async () => {}, ...(endpoints ? { endpoints } : {}) });
const failing = (name: string, message: string): HealthCheck => ({
  name,
  check: async () => {
    throw new Error(message);
  },
});

async function get(h: ReturnType<typeof createHealthChecks>, path: string, query = ''): Promise<HealthResponse> {
  const pending = h.handle(path, query);
  assert.ok(pending, `${path} should be a health path`);
  return pending;
}

describe('health checks', () => {
  it('answers plain ok when every check passes', async () => {
    const h = createHealthChecks([healthy('storage')]);
    for (const path of ['/healthz', '/livez', '/readyz']) {
      const r = await get(h, path);
      assert.deepEqual(r, { status: 200, contentType: 'text/plain; charset=utf-8', headers: { 'x-content-type-options': 'nosniff' }, body: 'ok' });
    }
  });

  it('lists every check with ?verbose, readyz including shutdown', async () => {
    const h = createHealthChecks([healthy('storage'), healthy('informer-sync', ['readyz'])]);
    assert.equal((await get(h, '/readyz', 'verbose')).body, '[+]ping ok\n[+]storage ok\n[+]informer-sync ok\n[+]shutdown ok\nreadyz check passed\n');
    assert.equal((await get(h, '/livez', '?verbose=false')).body, '[+]ping ok\n[+]storage ok\nlivez check passed\n');
  });

  it('fails with 500 and the upstream listing, withholding reasons from the body', async () => {
    const failures: [HealthEndpoint, readonly CheckFailure[]][] = [];
    const h = createHealthChecks([failing('storage', 'database is locked'), healthy('informer-sync')], {
      onFailure: (endpoint, f) => failures.push([endpoint, f]),
    });
    const r = await get(h, '/readyz');
    assert.equal(r.status, 500);
    assert.equal(r.contentType, 'text/plain; charset=utf-8');
    assert.equal(r.body, '[+]ping ok\n[-]storage failed: reason withheld\n[+]informer-sync ok\n[+]shutdown ok\nreadyz check failed\n');
    assert.deepEqual(failures, [['readyz', [{ name: 'storage', reason: 'database is locked' }]]]);
  });

  it('excludes checks by name and warns about unknown exclusions', async () => {
    const h = createHealthChecks([failing('storage', 'down'), healthy('log')]);
    const r = await get(h, '/healthz', 'exclude=storage&exclude=zeta&exclude=alpha&verbose');
    assert.equal(r.status, 200);
    assert.equal(
      r.body,
      '[+]ping ok\n[+]storage excluded: ok\n[+]log ok\nwarn: some health checks cannot be excluded: no matches for "alpha","zeta"\nhealthz check passed\n',
    );
    assert.equal((await get(h, '/healthz', 'exclude=storage')).body, 'ok');
  });

  // A probe that waited for the check would never answer: the test's timeout fails it.
  it('fails a hanging check after the timeout instead of hanging the probe', { timeout: 10_000 }, async () => {
    let calls = 0;
    const hanging: HealthCheck = {
      name: 'storage',
      check: () => {
        calls++;
        return new Promise<void>(() => {});
      },
    };
    const h = createHealthChecks([hanging], { checkTimeoutMs: 50 });
    const [a, b] = await Promise.all([get(h, '/readyz'), get(h, '/readyz/storage')]);
    assert.equal(a.status, 500);
    assert.match(a.body, /\[-\]storage failed: reason withheld\n/);
    assert.deepEqual([b.status, b.body], [500, 'internal server error: timed out after 50ms\n']);
    assert.equal(calls, 1, 'concurrent probes share the in-flight call');
  });

  it('answers a single check at /<endpoint>/<name>, undefined for unknown paths', async () => {
    const h = createHealthChecks([failing('storage', 'no route to host'), healthy('informer-sync', ['readyz'])]);
    assert.deepEqual(await get(h, '/livez/ping'), {
      status: 200,
      contentType: 'text/plain; charset=utf-8',
      headers: { 'x-content-type-options': 'nosniff' },
      body: 'ok',
    });
    const r = await get(h, '/healthz/storage');
    assert.deepEqual([r.status, r.body], [500, 'internal server error: no route to host\n']);
    assert.equal(h.handle('/livez/informer-sync'), undefined);
    assert.equal(h.handle('/readyz/nope'), undefined);
    assert.equal(h.handle('/healthzz'), undefined);
    assert.equal(h.handle('/api/v1/pods'), undefined);
    assert.ok(h.handle('/readyz/informer-sync'));
  });

  it('turns readyz red once shutting down, leaving livez green', async () => {
    const h = createHealthChecks([]);
    h.markShuttingDown();
    assert.equal(h.shuttingDown, true);
    const r = await get(h, '/readyz');
    assert.equal(r.status, 500);
    assert.equal(r.body, '[+]ping ok\n[-]shutdown failed: reason withheld\nreadyz check failed\n');
    assert.equal((await get(h, '/readyz/shutdown')).body, 'internal server error: process is shutting down\n');
    assert.equal((await get(h, '/livez')).status, 200);
    assert.equal((await get(h, '/healthz')).status, 200);
  });

  it('keeps later-added checks before shutdown and rejects duplicate names', async () => {
    const h = createHealthChecks([healthy('storage')]);
    h.add(healthy('poststarthook/start-controllers'));
    assert.deepEqual(h.names('readyz'), ['ping', 'storage', 'poststarthook/start-controllers', 'shutdown']);
    assert.equal((await get(h, '/readyz/poststarthook/start-controllers')).status, 200);
    assert.throws(() => h.add(healthy('storage')), /registered twice/);
    assert.throws(() => createHealthChecks([healthy('a b')]), /invalid health check name/);
  });

  it('treats a synchronous throw in a check as a failure', async () => {
    const h = createHealthChecks([
      {
        name: 'sync',
        check: () => {
          throw new Error('boom');
        },
      },
    ]);
    assert.equal((await get(h, '/healthz/sync')).body, 'internal server error: boom\n');
  });
});
