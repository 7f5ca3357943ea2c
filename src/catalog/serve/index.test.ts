// serveCatalog in-process: the library entry other commands and tests use.
import assert from 'node:assert/strict';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import { loadPackageDefinition } from '../api/api.js';
import { serveCatalog } from './index.js';

const testdata = join(dirname(fileURLToPath(import.meta.url)), 'testdata');

describe('serveCatalog', () => {
  it('serves a catalog on a free loopback port and stops', async () => {
    const running = await serveCatalog(join(testdata, 'deprecations'));
    const Registry = grpc.makeGenericClientConstructor(loadPackageDefinition()['api.Registry'] as grpc.ServiceDefinition, 'Registry');
    const client = new Registry(running.address, grpc.credentials.createInsecure()) as unknown as grpc.Client & {
      GetBundleForChannel(req: object, cb: (err: grpc.ServiceError | null, b: { csvName: string }) => void): void;
    };
    try {
      const b = await new Promise<{ csvName: string }>((resolve, reject) =>
        client.GetBundleForChannel({ pkgName: 'cockroachdb', channelName: 'stable-v6.x' }, (err, out) => (err ? reject(err) : resolve(out))),
      );
      assert.equal(b.csvName, 'cockroachdb.v6.0.0');
      assert.match(running.address, /^127\.0\.0\.1:\d+$/);
    } finally {
      client.close();
      await running.stop();
    }
  });

  it('rejects an invalid catalog with the load error', async () => {
    await assert.rejects(serveCatalog(join(testdata, 'does-not-exist')), /no such file or directory/);
  });
});
