// JsonCache in-process: build, integrity, load (bundles read from disk on demand, custom-schema blobs).
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import protobuf from 'protobufjs';
import { REGISTRY_PROTO } from '../api/api.js';
import { JsonCache, fnv64a } from './cache.js';
import { createLogger } from './log.js';

const testdata = join(dirname(fileURLToPath(import.meta.url)), 'testdata');
const Bundle = protobuf.loadSync(REGISTRY_PROTO).lookupType('api.Bundle');

describe('JsonCache', () => {
  const tmp = mkdtempSync(join(tmpdir(), 'kplane-cache-'));
  after(() => rmSync(tmp, { recursive: true, force: true }));
  const lines: string[] = [];
  const logger = createLogger({ write: (l) => lines.push(l) });

  it('builds opm’s JSON layout, loads it, and notices a changed catalog', async () => {
    const configDir = join(tmp, 'configs');
    cpSync(join(testdata, 'custom-schemas'), configDir, { recursive: true });
    const cache = new JsonCache({ cacheDir: join(tmp, 'cache'), configDir, logger });
    await cache.checkUsable();
    await assert.rejects(cache.checkIntegrity(), /^CacheError: read existing cache digest: open .*\/digest: no such file or directory$/);
    await cache.build();
    await cache.checkIntegrity();
    assert.deepEqual(readdirSync(join(tmp, 'cache')).sort(), ['cache', 'digest']);
    assert.deepEqual(readdirSync(join(tmp, 'cache', 'cache')).sort(), ['metas', 'packages.json', 'testpkg_stable_testpkg.v1.0.0.json']);

    const served = await cache.load();
    const b = Bundle.toObject(Bundle.decode(await served.index.getBundleForChannel('testpkg', 'stable'))) as { csvName: string; bundlePath: string };
    assert.equal(b.csvName, 'testpkg.v1.0.0');
    assert.equal(b.bundlePath, 'quay.io/test/testpkg:v1.0.0');
    assert.deepEqual(
      served.metas
        .list('custom.operator.io', 'testpkg')
        .map((m) => m.name)
        .sort(),
      ['another-custom-resource', 'my-custom-resource'],
    );
    assert.deepEqual(
      served.metas.list('custom.packageless', '').map((m) => m.name),
      ['global-config'],
    );

    writeFileSync(join(configDir, 'extra.json'), '{"schema":"custom.extra","name":"x"}\n');
    await assert.rejects(
      cache.checkIntegrity(),
      /^CacheError: cache requires rebuild: cache reports digest as "[0-9a-f]+", but computed digest is "[0-9a-f]+"$/,
    );
    assert.ok(lines.some((l) => l.includes('level=warning msg="cache requires rebuild"')));
  });

  it('fnv64a as Go hash/fnv New64a', () => {
    assert.equal(fnv64a(new Uint8Array()), 'cbf29ce484222325');
    assert.equal(fnv64a(Buffer.from('a')), 'af63dc4c8601ec8c');
  });
});
