// A catalog's package as the package server builds its PackageManifest (newPackageManifest).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ApiBundle, ApiPackage } from '../api/api.js';
import { packageManifest, type CatalogSourceRef } from './packagemanifest.js';

const source: CatalogSourceRef = {
  name: 'cat',
  namespace: 'ns',
  labels: { team: 'a' },
  displayName: 'Cat',
  publisher: 'Pub',
  creationTimestamp: '2026-01-01T00:00:00Z',
};

const bundle = (csv: Record<string, unknown>): ApiBundle => ({ csvJson: JSON.stringify(csv) }) as ApiBundle;
const csv = (name: string, provider: string, labels: Record<string, string> = {}) => ({
  metadata: { name, labels, annotations: { capabilities: 'Basic Install' } },
  spec: {
    displayName: name.toUpperCase(),
    version: '1.0.0',
    provider: { name: provider },
    icon: [{ base64data: 'x', mediatype: 'image/png' }],
    keywords: ['db'],
  },
});

describe('packageManifest', () => {
  it("takes the provider and labels of the default channel, and the package server's labels", () => {
    const pkg: ApiPackage = {
      name: 'db',
      defaultChannelName: 'stable',
      channels: [
        { name: 'alpha', csvName: 'a' },
        { name: 'stable', csvName: 's' },
      ],
    };
    const heads = new Map([
      ['alpha', bundle(csv('db.v2', 'Alpha Inc'))],
      ['stable', bundle(csv('db.v1', 'Stable Inc', { 'operatorframework.io/arch.arm64': 'supported' }))],
    ]);
    const out = packageManifest(pkg, heads, new Map([['stable', [{ name: 'db.v1', version: '1.0.0' }]]]), source)!;
    assert.deepEqual(out.metadata, {
      name: 'db',
      namespace: 'ns',
      creationTimestamp: '2026-01-01T00:00:00Z',
      labels: {
        team: 'a',
        catalog: 'cat',
        'catalog-namespace': 'ns',
        provider: 'Stable Inc',
        'provider-url': '',
        'operatorframework.io/arch.arm64': 'supported',
        'operatorframework.io/os.linux': 'supported',
      },
    });
    const status = (out as unknown as { status: Record<string, unknown> & { channels: Record<string, unknown>[] } }).status;
    assert.equal(status.defaultChannel, 'stable');
    assert.deepEqual(status.provider, { name: 'Stable Inc' });
    assert.deepEqual(status.channels[1], {
      name: 'stable',
      currentCSV: 'db.v1',
      currentCSVDesc: {
        displayName: 'DB.V1',
        version: '1.0.0',
        provider: { name: 'Stable Inc' },
        annotations: { capabilities: 'Basic Install' },
        keywords: ['db'],
      },
      entries: [{ name: 'db.v1', version: '1.0.0' }],
    });
  });

  it('elides channels without a head and moves the default channel to the first one left', () => {
    const pkg: ApiPackage = {
      name: 'db',
      defaultChannelName: 'stable',
      channels: [
        { name: 'alpha', csvName: 'a' },
        { name: 'stable', csvName: 's' },
      ],
    };
    const problems: string[] = [];
    const out = packageManifest(pkg, new Map([['alpha', bundle(csv('db.v2', 'A'))]]), new Map(), source, problems)!;
    const status = (out as unknown as { status: { defaultChannel: string; channels: unknown[] } }).status;
    assert.equal(status.defaultChannel, 'alpha');
    assert.equal(status.channels.length, 1);
    assert.deepEqual(problems, ['package db channel stable: error getting bundle, eliding channel']);
    assert.equal(packageManifest(pkg, new Map(), new Map(), source), undefined);
  });
});
