import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Bundle, Channel, DeclarativeConfig, Package } from '../declcfg/types.js';
import { channelHeadName, channelKindOf, checkPlatform, checkRequirements, checkSharedAPIs, indexBundles } from './interop.js';
import { PlatformError, filterCatalogForPlatform, parsePlatform, resolveChannel } from './platform.js';

function bundle(
  pkg: string,
  version: string,
  opts: { provides?: [string, string, string][]; requires?: [string, string][]; requiresGVK?: [string, string, string][] } = {},
): Bundle {
  return {
    schema: 'olm.bundle',
    name: `${pkg}.v${version}`,
    package: pkg,
    image: `r.io/${pkg}:v${version}`,
    properties: [
      { type: 'olm.package', value: { packageName: pkg, version } },
      ...(opts.provides ?? []).map(([group, version, kind]) => ({ type: 'olm.gvk', value: { group, kind, version } })),
      ...(opts.requires ?? []).map(([packageName, versionRange]) => ({ type: 'olm.package.required', value: { packageName, versionRange } })),
      ...(opts.requiresGVK ?? []).map(([group, version, kind]) => ({ type: 'olm.gvk.required', value: { group, kind, version } })),
    ],
  };
}

function chan(pkg: string, name: string, versions: string[]): Channel {
  return {
    schema: 'olm.channel',
    name,
    package: pkg,
    entries: versions.map((v, i) => ({ name: `${pkg}.v${v}`, ...(i > 0 ? { replaces: `${pkg}.v${versions[i - 1]}` } : {}) })),
  };
}

const pkg = (name: string, defaultChannel: string): Package => ({ schema: 'olm.package', name, defaultChannel });

function fixture(): DeclarativeConfig {
  return {
    packages: [pkg('db', 'stable-v1'), pkg('mon', 'stable-v1'), pkg('pg', 'stable-v2')],
    channels: [
      chan('db', 'candidate-v1', ['1.0.0', '1.1.0', '1.2.0']),
      chan('db', 'stable-v1', ['1.0.0', '1.1.0']),
      chan('mon', 'candidate-v1', ['1.0.0', '1.1.0']),
      chan('mon', 'stable-v1', ['1.0.0']),
      chan('mon', 'fast-v1', ['1.0.0', '1.1.0']),
      chan('pg', 'stable-v2', ['2.0.0']),
    ],
    bundles: [
      bundle('db', '1.0.0', { provides: [['db.io', 'v1', 'DB']] }),
      bundle('db', '1.1.0', { provides: [['db.io', 'v1', 'DB']], requires: [['mon', '>=1.0.0 <2.0.0']] }),
      // only in candidate, and needs mon 1.1 which is in candidate: fine; and a package nowhere: warning
      bundle('db', '1.2.0', {
        provides: [['db.io', 'v1', 'DB']],
        requires: [
          ['mon', '>=1.1.0'],
          ['logging', '>=1.0.0'],
        ],
      }),
      bundle('mon', '1.0.0', { provides: [['monitoring.coreos.com', 'v1', 'ServiceMonitor']] }),
      bundle('mon', '1.1.0', { provides: [['monitoring.coreos.com', 'v1', 'ServiceMonitor']] }),
      bundle('pg', '2.0.0', { provides: [['monitoring.coreos.com', 'v1', 'ServiceMonitor']], requiresGVK: [['db.io', 'v1', 'DB']] }),
    ],
    deprecations: [
      {
        schema: 'olm.deprecations',
        package: 'db',
        entries: [
          { reference: { schema: 'olm.channel', name: 'candidate-v1' }, message: 'x' },
          { reference: { schema: 'olm.bundle', name: 'db.v1.0.0' }, message: 'old' },
        ],
      },
      { schema: 'olm.deprecations', package: 'pg', entries: [{ reference: { schema: 'olm.package' }, message: 'eol' }] },
    ],
    others: [],
  };
}

test('channelKindOf', () => {
  assert.equal(channelKindOf('stable-v1.2'), 'stable');
  assert.equal(channelKindOf('candidate'), 'candidate');
  assert.equal(channelKindOf('alpha'), undefined);
  assert.equal(channelKindOf('stablex-v1'), undefined);
});

test('requirements: satisfiable in the same channel kind; candidate-only findings are warnings', () => {
  const f = checkRequirements(indexBundles(fixture()));
  assert.deepEqual(f.get('mon'), []);
  assert.deepEqual(f.get('db'), [
    { severity: 'warning', message: 'bundle db.v1.2.0 (candidate-v1) requires package logging >=1.0.0, which is not in the catalog' },
  ]);
  // pg 2.0.0 is in stable-v2 and requires db.io/v1/DB: db's stable bundles provide it
  assert.deepEqual(f.get('pg'), []);
  // take mon 1.0.0 out of stable: db 1.1.0 in stable-v1 can no longer be satisfied there
  const cfg = fixture();
  cfg.channels = cfg.channels.filter((c) => !(c.package === 'mon' && c.name === 'stable-v1'));
  const g = checkRequirements(indexBundles(cfg)).get('db')!;
  assert.deepEqual(
    g.filter((x) => x.severity === 'error').map((x) => x.message),
    ['bundle db.v1.1.0 (stable-v1) requires package mon >=1.0.0 <2.0.0: no bundle of it in a stable channel is in that range'],
  );
});

test('shared APIs: undeclared is an error, declared passes', () => {
  const b = indexBundles(fixture());
  const r = checkSharedAPIs(b, []);
  assert.deepEqual([...r.shared], [['monitoring.coreos.com/ServiceMonitor', ['mon', 'pg']]]);
  assert.equal(r.findings.get('monitoring.coreos.com/ServiceMonitor')![0]!.severity, 'error');
  const ok = checkSharedAPIs(b, [{ group: 'monitoring.coreos.com', kind: 'ServiceMonitor', packages: ['pg', 'mon'] }]);
  assert.deepEqual(ok.findings.get('monitoring.coreos.com/ServiceMonitor'), []);
});

test('shared APIs: a conflict that exists only through candidate channels is a warning', () => {
  const cfg = fixture();
  cfg.channels = cfg.channels.filter((c) => c.package !== 'pg');
  cfg.channels.push(chan('pg', 'candidate-v2', ['2.0.0']));
  const r = checkSharedAPIs(indexBundles(cfg), []);
  assert.equal(r.findings.get('monitoring.coreos.com/ServiceMonitor')![0]!.severity, 'warning');
});

test('platform: parse strictly, resolve kinds to the newest channel, check heads together', () => {
  assert.throws(() => parsePlatform('schema: kplane.platform\nname: x\noperators: []\n', 'p.yaml'), PlatformError);
  assert.throws(() => parsePlatform('schema: other\nname: x\noperators: [{package: a, channel: b}]\n', 'p.yaml'), /schema must be "kplane.platform"/);
  assert.throws(() => parsePlatform('schema: kplane.platform\nname: x\noperators: [{package: a, chanel: b}]\n', 'p.yaml'), /unknown field "chanel"/);
  const cfg = fixture();
  cfg.channels.push(chan('mon', 'fast-v0', ['1.0.0']));
  assert.equal(resolveChannel(cfg, 'mon', 'fast').name, 'fast-v1');
  assert.throws(() => resolveChannel(cfg, 'mon', 'beta'), {
    message: 'package "mon" has no channel "beta" (channels: candidate-v1, fast-v0, fast-v1, stable-v1)',
  });
  assert.throws(() => resolveChannel(cfg, 'nope', 'stable'), { message: 'package "nope" is not in the catalog' });
  // the newest major wins, and a major channel before its minor channels
  const m = fixture();
  m.channels.push(
    chan('mon', 'fast-v2.0', ['1.1.0']),
    chan('mon', 'fast-v2', ['1.1.0']),
    chan('mon', 'fast-v2.3', ['1.1.0']),
    chan('mon', 'fast-v1.9', ['1.0.0']),
  );
  assert.equal(resolveChannel(m, 'mon', 'fast').name, 'fast-v2');
  m.channels = m.channels.filter((c) => c.name !== 'fast-v2');
  assert.equal(resolveChannel(m, 'mon', 'fast').name, 'fast-v2.3');

  const b = indexBundles(cfg);
  const px = parsePlatform('schema: kplane.platform\nname: px\noperators:\n- {package: db, channel: stable-v1}\n- {package: mon, channel: fast}\n', 'px.yaml');
  const r = checkPlatform(cfg, b, px, []);
  assert.deepEqual(
    r.heads.map((h) => h.bundle.bundle.name),
    ['db.v1.1.0', 'mon.v1.1.0'],
  );
  assert.deepEqual(r.findings, []);

  const py = parsePlatform(
    'schema: kplane.platform\nname: py\noperators:\n- {package: db, channel: stable-v1}\n- {package: pg, channel: stable-v2}\n',
    'py.yaml',
  );
  const f = checkPlatform(cfg, b, py, []).findings.map((x) => `${x.severity}: ${x.message}`);
  assert.deepEqual(f, ['error: db head db.v1.1.0 (stable-v1) requires package mon >=1.0.0 <2.0.0, which is not part of platform py']);

  const pz = parsePlatform(
    'schema: kplane.platform\nname: pz\noperators:\n- {package: mon, channel: stable-v1}\n- {package: pg, channel: stable-v2}\n',
    'pz.yaml',
  );
  const z = checkPlatform(cfg, b, pz, []).findings.map((x) => `${x.severity}: ${x.message}`);
  assert.deepEqual(z, [
    'error: pg head pg.v2.0.0 (stable-v2) requires API db.io/v1/DB, which no operator of platform pz provides',
    'error: monitoring.coreos.com/ServiceMonitor is provided by mon (stable-v1) and pg (stable-v2); both cannot be installed in one cluster unless declared in sharedAPIs',
  ]);
  pz.sharedAPIs.push({ group: 'monitoring.coreos.com', kind: 'ServiceMonitor', packages: ['mon', 'pg'] });
  assert.equal(checkPlatform(cfg, b, pz, []).findings.length, 1);
});

test('channelHeadName: one head, else opm-like errors', () => {
  assert.equal(channelHeadName(chan('a', 's', ['1.0.0', '1.1.0'])), 'a.v1.1.0');
  const two: Channel = { schema: 'olm.channel', name: 's', package: 'a', entries: [{ name: 'x' }, { name: 'y' }] };
  assert.throws(() => channelHeadName(two), /multiple channel heads found in graph: x, y/);
});

test('filterCatalogForPlatform keeps only the platform channels, their bundles, and what refers to them', () => {
  const cfg = fixture();
  const p = parsePlatform('schema: kplane.platform\nname: px\noperators:\n- {package: db, channel: stable-v1}\n- {package: mon, channel: fast}\n', 'px.yaml');
  const out = filterCatalogForPlatform(cfg, p);
  assert.deepEqual(
    out.packages.map((x) => [x.name, x.defaultChannel]),
    [
      ['db', 'stable-v1'],
      ['mon', 'fast-v1'],
    ],
  );
  assert.deepEqual(
    out.channels.map((c) => `${c.package}/${c.name}`),
    ['db/stable-v1', 'mon/fast-v1'],
  );
  assert.deepEqual(
    out.bundles.map((b) => b.name),
    ['db.v1.0.0', 'db.v1.1.0', 'mon.v1.0.0', 'mon.v1.1.0'],
  );
  // the candidate-v1 channel deprecation is dropped with its channel; the bundle one stays; pg's package is gone
  assert.deepEqual(out.deprecations, [
    { schema: 'olm.deprecations', package: 'db', entries: [{ reference: { schema: 'olm.bundle', name: 'db.v1.0.0' }, message: 'old' }] },
  ]);
  // the input is not modified
  assert.equal(cfg.packages[1]!.defaultChannel, 'stable-v1');
});
