// The resolver against OLM's semantics: the cases of OLM's resolver_test.go that apply to kplane's
// contract (pkg/controller/registry/resolver/resolver_test.go, same names and fixtures), plus
// skipRange upgrades, cycles, unsatisfiable explanations and bad input, and the held-in DBaaS
// catalog loaded as `kplane catalog serve` serves it.
import assert from 'node:assert/strict';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import type { ApiBundle } from '../../api/api.js';
import { modelBundleToApi } from '../../serve/api-bundle.js';
import { loadCatalog } from '../../serve/load.js';
import { resolve } from './resolve.js';
import { catalog, installed, sub, summary, type BundleSpec } from './resolve.test-support.js';
import type { CatalogSnapshot, InstalledOperator, ResolveInput, SubscriptionInput } from './types.js';

const G = 'g/v/k';

interface Case {
  name: string;
  catalogs: CatalogSnapshot[];
  subs: SubscriptionInput[];
  installed?: InstalledOperator[];
  /** the steps as "catalog/channel/csv", in any order; or the failure */
  want: string[] | { reason: string; message: string | RegExp };
}

const b = (name: string, version: string, replaces: string, pkg: string, channel: string, extra: Partial<BundleSpec> = {}): BundleSpec => ({
  name,
  version,
  pkg,
  channel,
  ...(replaces ? { replaces } : {}),
  ...extra,
});

async function check(c: Case): Promise<void> {
  const input: ResolveInput = { namespace: 'olm', subscriptions: c.subs, installed: c.installed ?? [], catalogs: c.catalogs };
  const got = summary(await resolve(input));
  if (Array.isArray(c.want)) {
    assert.ok(Array.isArray(got), `expected steps, got ${JSON.stringify(got)}`);
    assert.deepEqual([...got].sort(), [...c.want].sort());
  } else {
    assert.ok(!Array.isArray(got), `expected a failure, got ${JSON.stringify(got)}`);
    assert.equal(got.reason, c.want.reason);
    if (typeof c.want.message === 'string') assert.equal(got.message, c.want.message);
    else assert.match(got.message, c.want.message);
  }
}

const cases: Case[] = [
  {
    name: 'SolveOperators: a new Subscription is installed, an installed one without upgrade is kept',
    catalogs: [
      catalog('community', 'olm', [
        b('test-package.v1', '0.0.1', '', 'test-package', 'alpha'),
        b('another-package.v1', '1.0.1', '', 'another-package', 'alpha'),
      ]),
    ],
    subs: [
      sub('test-package', 'test-package', 'alpha', 'community', { installedCSV: 'test-package.v1' }),
      sub('another-package', 'another-package', 'alpha', 'community'),
    ],
    installed: [installed('test-package.v1', 'test-package', '0.0.1', [G])],
    want: ['community/alpha/another-package.v1'],
  },
  {
    name: 'MultipleChannels: the Subscription’s channel only',
    catalogs: [
      catalog('community', 'olm', [
        b('test-package.v1', '0.0.1', '', 'test-package', 'alpha'),
        b('another-package.v1', '1.0.0', '', 'another-package', 'alpha'),
        b('another-package.v1', '1.0.0', '', 'another-package', 'beta'),
      ]),
    ],
    subs: [
      sub('test-package', 'test-package', 'alpha', 'community', { installedCSV: 'test-package.v1' }),
      sub('another-package', 'another-package', 'alpha', 'community'),
    ],
    installed: [installed('test-package.v1', 'test-package', '0.0.1', [G])],
    want: ['community/alpha/another-package.v1'],
  },
  {
    name: 'FindLatestVersion: channel heads; the installed operator is upgraded along replaces',
    catalogs: [
      catalog('community', 'olm', [
        b('test-package.v1.0.1', '1.0.1', 'test-package.v1', 'test-package', 'alpha'),
        b('another-package.v0.9.0', '0.9.0', '', 'another-package', 'alpha'),
        b('another-package.v1.0.0', '1.0.0', 'another-package.v0.9.0', 'another-package', 'alpha'),
        b('another-package.v1.0.1', '1.0.1', 'another-package.v1.0.0', 'another-package', 'alpha'),
      ]),
    ],
    subs: [
      sub('test-package', 'test-package', 'alpha', 'community', { installedCSV: 'test-package.v1' }),
      sub('another-package', 'another-package', 'alpha', 'community'),
    ],
    installed: [installed('test-package.v1', 'test-package', '0.0.1', [G])],
    want: ['community/alpha/test-package.v1.0.1 (replaces test-package.v1)', 'community/alpha/another-package.v1.0.1'],
  },
  {
    name: 'FindLatestVersionWithNestedDependencies: package dependencies by version range, transitively',
    catalogs: [
      catalog('community', 'olm', [
        b('another-package.v0.9.0', '0.9.0', '', 'another-package', 'alpha'),
        b('another-package.v1.0.0', '1.0.0', 'another-package.v0.9.0', 'another-package', 'alpha'),
        b('another-package.v1.0.1', '1.0.1', 'another-package.v1.0.0', 'another-package', 'alpha', {
          requiresPackages: [
            ['packageC', '1.0.1'],
            ['packageD', '1.0.1'],
          ],
        }),
        b('packageC.v1.0.0', '1.0.0', '', 'packageC', 'alpha', { requiresPackages: [['packageE', '1.0.1']] }),
        b('packageC.v1.0.1', '1.0.1', 'packageC.v1.0.0', 'packageC', 'alpha', { requiresPackages: [['packageE', '1.0.1']] }),
        b('packageD.v1.0.0', '1.0.0', '', 'packageD', 'alpha'),
        b('packageD.v1.0.1', '1.0.1', 'packageD.v1.0.0', 'packageD', 'alpha'),
        b('packageD.v1.0.2', '1.0.2', 'packageD.v1.0.1', 'packageD', 'alpha'),
        b('packageE.v1.0.1', '1.0.1', 'packageE.v1.0.0', 'packageE', 'alpha'),
        b('packageE.v1.0.0', '1.0.0', '', 'packageE', 'alpha'),
      ]),
    ],
    subs: [sub('another-package', 'another-package', 'alpha', 'community')],
    want: ['community/alpha/another-package.v1.0.1', 'community/alpha/packageC.v1.0.1', 'community/alpha/packageD.v1.0.1', 'community/alpha/packageE.v1.0.1'],
  },
  {
    name: 'WithPackageDependencies: a range like ">=0.1.0 <1.0.0"',
    catalogs: [
      catalog('community', 'olm', [
        b('another-package.v1', '1.0.0', '', 'another-package', 'alpha', { requiresPackages: [['packageC', '>=0.1.0 <1.0.0']] }),
        b('packageC.v0.1', '0.1.0', '', 'packageC', 'alpha'),
        b('packageC.v1', '1.0.0', 'packageC.v0.1', 'packageC', 'alpha'),
      ]),
    ],
    subs: [sub('another-package', 'another-package', 'alpha', 'community')],
    want: ['community/alpha/another-package.v1', 'community/alpha/packageC.v0.1'],
  },
  {
    name: 'WithGVKDependencies: a required API pulls its provider',
    catalogs: [
      catalog('community', 'olm', [
        b('test-package.v1', '0.0.1', '', 'test-package', 'alpha'),
        b('another-package.v1', '1.0.0', '', 'another-package', 'alpha', { requires: [G] }),
        b('packageC.v1', '0.1.0', '', 'packageC', 'alpha', { provides: [G] }),
      ]),
    ],
    subs: [
      sub('test-package', 'test-package', 'alpha', 'community', { installedCSV: 'test-package.v1' }),
      sub('another-package', 'another-package', 'alpha', 'community'),
    ],
    installed: [installed('test-package.v1', 'test-package', '0.0.1')],
    want: ['community/alpha/another-package.v1', 'community/alpha/packageC.v1'],
  },
  {
    name: 'CatsrcPrioritySorting: a dependency comes from the catalog of higher priority',
    catalogs: [
      catalog('community', 'olm', [b('test-package.v1', '0.0.1', '', 'test-package', 'alpha', { requiresPackages: [['another-package', '0.0.1']] })]),
      catalog('community-operator', 'olm', [b('another-package.v1', '0.0.1', '', 'another-package', 'alpha')]),
      catalog('high-priority-operator', 'olm', [b('another-package.v1', '0.0.1', '', 'another-package', 'alpha')], { priority: 100 }),
    ],
    subs: [sub('test-package', 'test-package', 'alpha', 'community')],
    want: ['community/alpha/test-package.v1', 'high-priority-operator/alpha/another-package.v1'],
  },
  {
    name: 'CatsrcPrioritySorting: equal priorities, then catalog names',
    catalogs: [
      catalog('community', 'olm', [b('test-package.v1', '0.0.1', '', 'test-package', 'alpha', { requiresPackages: [['another-package', '0.0.1']] })]),
      catalog('high-priority-operator', 'olm', [b('another-package.v1', '0.0.1', '', 'another-package', 'alpha')], { priority: 100 }),
      catalog('community-operator', 'olm', [b('another-package.v1', '0.0.1', '', 'another-package', 'alpha')], { priority: 100 }),
    ],
    subs: [sub('test-package', 'test-package', 'alpha', 'community')],
    want: ['community/alpha/test-package.v1', 'community-operator/alpha/another-package.v1'],
  },
  {
    name: 'CatsrcPrioritySorting: the dependent bundle’s own catalog first, whatever the priorities',
    catalogs: [
      catalog('community', 'olm', [
        b('test-package.v1', '0.0.1', '', 'test-package', 'alpha', { requiresPackages: [['another-package', '0.0.1']] }),
        b('another-package.v1', '0.0.1', '', 'another-package', 'alpha'),
      ]),
      catalog('high-priority-operator', 'olm', [b('another-package.v1', '0.0.1', '', 'another-package', 'alpha')], { priority: 100 }),
    ],
    subs: [sub('test-package', 'test-package', 'alpha', 'community')],
    want: ['community/alpha/test-package.v1', 'community/alpha/another-package.v1'],
  },
  {
    name: 'OLMConstraint_CompoundAll: all of a package range and two APIs',
    catalogs: [
      catalog('community', 'olm', [
        b('bar.v1.0.0', '1.0.0', '', 'bar', 'stable', {
          properties: [
            {
              type: 'olm.constraint',
              value: JSON.stringify({
                failureMessage: 'all constraint',
                all: {
                  constraints: [
                    { package: { packageName: 'foo', versionRange: '>=1.0.0' } },
                    { gvk: { group: 'g1', version: 'v1', kind: 'k1' } },
                    { gvk: { group: 'g2', version: 'v2', kind: 'k2' } },
                  ],
                },
              }),
            },
          ],
        }),
        b('foo.v0.99.0', '0.99.0', '', 'foo', 'stable', { provides: ['g1/v1/k1', 'g2/v2/k2', 'g3/v3/k3'] }),
        b('foo.v1.0.0', '1.0.0', 'foo.v0.99.0', 'foo', 'stable', { provides: ['g2/v2/k2', 'g3/v3/k3'] }),
        b('foo.v1.0.1', '1.0.1', 'foo.v1.0.0', 'foo', 'stable', { provides: ['g1/v1/k1', 'g2/v2/k2', 'g3/v3/k3'] }),
      ]),
    ],
    subs: [sub('bar', 'bar', 'stable', 'community')],
    want: ['community/stable/bar.v1.0.0', 'community/stable/foo.v1.0.1'],
  },
  {
    name: 'OLMConstraint_CompoundAny: any of two APIs, the head first',
    catalogs: [
      catalog('community', 'olm', [
        b('bar.v1.0.0', '1.0.0', '', 'bar', 'stable', {
          properties: [
            {
              type: 'olm.constraint',
              value: JSON.stringify({
                failureMessage: 'any constraint',
                any: { constraints: [{ gvk: { group: 'g1', version: 'v1', kind: 'k1' } }, { gvk: { group: 'g2', version: 'v2', kind: 'k2' } }] },
              }),
            },
          ],
        }),
        b('foo.v0.99.0', '0.99.0', '', 'foo', 'stable', { provides: ['g0/v0/k0'] }),
        b('foo.v1.0.0', '1.0.0', 'foo.v0.99.0', 'foo', 'stable', { provides: ['g1/v1/k1', 'g2/v2/k2'] }),
        b('foo.v1.0.1', '1.0.1', 'foo.v1.0.0', 'foo', 'stable', { provides: ['g1/v1/k1', 'g2/v2/k2', 'g3/v3/k3'] }),
      ]),
    ],
    subs: [sub('bar', 'bar', 'stable', 'community')],
    want: ['community/stable/bar.v1.0.0', 'community/stable/foo.v1.0.1'],
  },
  {
    name: 'OLMConstraint_CompoundNot: an API, but not from a bundle that also provides two others',
    catalogs: [
      catalog('community', 'olm', [
        b('bar.v1.0.0', '1.0.0', '', 'bar', 'stable', {
          properties: [
            {
              type: 'olm.constraint',
              value: JSON.stringify({
                failureMessage: 'compound not constraint',
                all: {
                  constraints: [
                    { gvk: { group: 'g0', version: 'v0', kind: 'k0' } },
                    { not: { constraints: [{ gvk: { group: 'g1', version: 'v1', kind: 'k1' } }, { gvk: { group: 'g2', version: 'v2', kind: 'k2' } }] } },
                  ],
                },
              }),
            },
          ],
        }),
        b('foo.v0.99.0', '0.99.0', '', 'foo', 'stable', { provides: ['g0/v0/k0'] }),
        b('foo.v1.0.0', '1.0.0', 'foo.v0.99.0', 'foo', 'stable', { provides: ['g0/v0/k0', 'g1/v1/k1', 'g2/v2/k2'] }),
        b('foo.v1.0.1', '1.0.1', 'foo.v1.0.0', 'foo', 'stable', { provides: ['g0/v0/k0', 'g1/v1/k1', 'g2/v2/k2', 'g3/v3/k3'] }),
      ]),
    ],
    subs: [sub('bar', 'bar', 'stable', 'community')],
    want: ['community/stable/bar.v1.0.0', 'community/stable/foo.v0.99.0'],
  },
  {
    name: 'OLMConstraint_Unknown: an unknown constraint type is an error naming the bundle',
    catalogs: [
      catalog('community', 'olm', [
        b('bar.v1.0.0', '1.0.0', '', 'bar', 'stable', {
          properties: [{ type: 'olm.constraint', value: '{"failureMessage": "unknown constraint", "unknown": {"foo": "bar"}}' }],
        }),
      ]),
    ],
    subs: [sub('bar', 'bar', 'stable', 'community')],
    want: { reason: 'ErrorPreventedResolution', message: 'bundle bar.v1.0.0: parse olm.constraint: json: unknown field "unknown"' },
  },
  {
    name: 'IgnoreUnsatisfiableDependencies: a dependency whose own dependency fails is taken from another catalog',
    catalogs: [
      catalog('community', 'olm', [
        b('test-package.v1', '0.0.1', '', 'test-package', 'alpha'),
        b('another-package.v1', '1.0.0', '', 'another-package', 'alpha', { requiresPackages: [['packageC', '0.1.0']] }),
        b('packageC.v1', '0.1.0', '', 'packageC', 'alpha', { requiresPackages: [['packageD', '0.1.0']] }),
      ]),
      catalog('certified', 'olm', [
        b('test-package.v1', '0.0.1', '', 'test-package', 'alpha'),
        b('another-package.v1', '1.0.0', '', 'another-package', 'alpha', { requiresPackages: [['packageC', '0.1.0']] }),
        b('packageC.v1', '0.1.0', '', 'packageC', 'alpha'),
      ]),
    ],
    subs: [
      sub('test-package', 'test-package', 'alpha', 'community', { installedCSV: 'test-package.v1' }),
      sub('another-package', 'another-package', 'alpha', 'community'),
    ],
    installed: [installed('test-package.v1', 'test-package', '0.0.1', [G])],
    want: ['community/alpha/another-package.v1', 'certified/alpha/packageC.v1'],
  },
  {
    name: 'PreferCatalogInSameNamespace: the upgrade comes from the Subscription’s catalog',
    catalogs: [
      catalog('community', 'olm', [b('test-package.v0.0.1', '0.0.1', 'test-package.v1', 'test-package', 'alpha', { provides: [G] })]),
      catalog('alt-community', 'alt-olm', [b('test-package.v0.0.1', '0.0.1', 'test-package.v1', 'test-package', 'alpha', { provides: [G] })]),
    ],
    subs: [sub('test-package', 'test-package', 'alpha', 'community', { installedCSV: 'test-package.v1' })],
    installed: [installed('test-package.v1', 'test-package', '0.0.1', [G])],
    want: ['community/alpha/test-package.v0.0.1 (replaces test-package.v1)'],
  },
  {
    name: 'PreferDefaultChannelInResolution: no channel given, the default channel wins',
    catalogs: [
      catalog(
        'community',
        'olm',
        [
          b('test-package.v0.0.2', '0.0.2', 'test-package.v1', 'test-package', 'alpha', { provides: [G] }),
          b('test-package.v0.0.1', '0.0.1', 'test-package.v1', 'test-package', 'stable', { provides: [G] }),
        ],
        { defaultChannels: { 'test-package': 'stable' } },
      ),
    ],
    subs: [sub('test-package', 'test-package', undefined, 'community')],
    want: ['community/stable/test-package.v0.0.1'],
  },
  {
    name: 'PreferDefaultChannelInResolutionForTransitiveDependencies',
    catalogs: [
      catalog(
        'community',
        'olm',
        [
          b('test-package.v0.0.1', '0.0.1', 'test-package.v1', 'test-package', 'alpha', { requires: [G] }),
          b('another-package.v0.0.1', '0.0.1', 'another-package.v1', 'another-package', 'stable', { provides: [G] }),
          b('another-package.v0.0.2', '0.0.2', 'another-package.v0.0.1', 'another-package', 'alpha', { provides: [G] }),
        ],
        { defaultChannels: { 'test-package': 'stable', 'another-package': 'stable' } },
      ),
    ],
    subs: [sub('test-package', 'test-package', 'alpha', 'community')],
    want: ['community/alpha/test-package.v0.0.1', 'community/stable/another-package.v0.0.1'],
  },
  {
    name: 'SubscriptionlessOperatorsSatisfyDependencies: an installed CSV provides the API',
    catalogs: [
      catalog('community', 'olm', [
        b('another-package.v1.0.0', '1.0.0', '', 'another-package', 'alpha', { requires: [G] }),
        b('another-package.v1.0.1', '1.0.1', 'another-package.v1.0.0', 'another-package', 'alpha', { requires: [G] }),
      ]),
    ],
    subs: [sub('another-package', 'another-package', 'alpha', 'community')],
    installed: [installed('test-package.v1', 'test-package', '0.0.1', [G])],
    want: ['community/alpha/another-package.v1.0.1'],
  },
  {
    name: 'SubscriptionlessOperatorsCanConflict: an installed CSV owns the API the candidates provide',
    catalogs: [
      catalog('community', 'olm', [
        b('another-package.v1.0.0', '1.0.0', '', 'another-package', 'alpha', { provides: [G] }),
        b('another-package.v1.0.1', '1.0.1', 'another-package.v1.0.0', 'another-package', 'alpha', { provides: [G] }),
      ]),
    ],
    subs: [sub('another-package', 'another-package', 'alpha', 'community')],
    installed: [installed('test-package.v1', 'test-package', '0.0.1', [G])],
    want: {
      reason: 'ConstraintsNotSatisfiable',
      message:
        'constraints not satisfiable: @existing/olm//test-package.v1, community/olm/alpha/another-package.v1.0.0 and community/olm/alpha/another-package.v1.0.1 provide k (g/v), clusterserviceversion test-package.v1 exists and is not referenced by a subscription, subscription another-package exists, subscription another-package requires at least one of community/olm/alpha/another-package.v1.0.1 or community/olm/alpha/another-package.v1.0.0',
    },
  },
  {
    name: 'PackageCannotSelfSatisfy: dependencies come from other packages, one operator per API',
    catalogs: [
      catalog(
        'community',
        'olm',
        [
          b('opA.v1.0.0', '1.0.0', '', 'test-package', 'stable', { requires: [G, 'g2/v/k'] }),
          b('opABC.v1.0.0', '1.0.0', '', 'test-package', 'alpha', { provides: [G, 'g2/v/k'] }),
          b('opB.v1.0.0', '1.0.0', '', 'another-package', 'stable', { provides: [G] }),
          b('opD.v1.0.0', '1.0.0', '', 'another-package', 'alpha', { provides: [G] }),
        ],
        { defaultChannels: { 'test-package': '', 'another-package': 'stable' } },
      ),
      catalog(
        'secondary',
        'olm',
        [
          b('opC.v1.0.0', '1.0.0', '', 'another-package', 'stable', { provides: ['g2/v/k'] }),
          b('opE.v1.0.0', '1.0.0', '', 'packageC', 'stable', { provides: ['g2/v/k'] }),
        ],
        { defaultChannels: { 'another-package': 'stable', packageC: '' } },
      ),
    ],
    subs: [sub('test-package', 'test-package', 'stable', 'community')],
    want: ['community/stable/opA.v1.0.0', 'community/stable/opB.v1.0.0', 'secondary/stable/opE.v1.0.0'],
  },
  {
    name: 'WithoutDeprecated: a deprecated bundle is never chosen',
    catalogs: [
      catalog('catalog', 'olm', [b('test-package.v1', '0.0.1', '', 'test-package', 'alpha', { properties: [{ type: 'olm.deprecated', value: '{}' }] })]),
    ],
    subs: [sub('test-package', 'test-package', 'alpha', 'catalog')],
    want: {
      reason: 'ConstraintsNotSatisfiable',
      message:
        'constraints not satisfiable: bundle catalog/olm/alpha/test-package.v1 is deprecated, subscription test-package exists, subscription test-package requires catalog/olm/alpha/test-package.v1',
    },
  },
  {
    name: 'WithDeprecatedInnerChannelEntry: the head is chosen',
    catalogs: [
      catalog('catalog', 'olm', [
        b('a-1', '1.0.0', '', 'a', 'c'),
        b('a-2', '2.0.0', 'a-1', 'a', 'c', { properties: [{ type: 'olm.deprecated', value: '{}' }] }),
        b('a-3', '3.0.0', 'a-2', 'a', 'c'),
      ]),
    ],
    subs: [sub('a', 'a', 'c', 'catalog')],
    want: ['catalog/c/a-3'],
  },
  {
    name: 'WithSkipsAndStartingCSV: startingCSV is installed; a dependency takes its channel head',
    catalogs: [
      catalog('community', 'olm', [
        b('another-package.v1', '1.0.0', '', 'another-package', 'alpha', { requires: [G] }),
        b('another-package.v2', '2.0.0', '', 'another-package', 'alpha', { requires: [G], skips: ['another-package.v1'] }),
        b('test-package.v1', '1.0.0', '', 'test-package', 'alpha', { provides: [G] }),
        b('test-package.v2', '2.0.0', 'test-package.v1', 'test-package', 'alpha', { provides: [G] }),
        b('test-package.v3', '3.0.0', 'test-package.v2', 'test-package', 'alpha', { provides: [G] }),
        b('test-package.v4', '4.0.0', 'test-package.v3', 'test-package', 'alpha', { provides: [G], skips: ['test-package.v3'] }),
        b('test-package.v5', '5.0.0', 'test-package.v4', 'test-package', 'alpha', {
          provides: [G],
          skips: ['test-package.v2', 'test-package.v3', 'test-package.v4'],
        }),
        b('test-package.v6', '6.0.0', 'test-package.v5', 'test-package', 'alpha', { provides: [G] }),
      ]),
    ],
    subs: [sub('another-package', 'another-package', 'alpha', 'community', { startingCSV: 'another-package.v1' })],
    want: ['community/alpha/another-package.v1', 'community/alpha/test-package.v6'],
  },
  {
    name: 'WithSkips: the head that skips the other entry',
    catalogs: [
      catalog('test-catalog', 'olm', [
        b('another-package.v1', '1.0.0', '', 'another-package', 'alpha'),
        b('another-package.v2', '2.0.0', '', 'another-package', 'alpha', { skips: ['another-package.v1'] }),
      ]),
    ],
    subs: [sub('another-package', 'another-package', 'alpha', 'test-catalog')],
    want: ['test-catalog/alpha/another-package.v2'],
  },
  {
    name: 'WithSkipsPreventingSelection: a skipped bundle cannot satisfy a dependency',
    catalogs: [
      catalog('test-catalog', 'olm', [
        b('a-1', '1.0.0', '', 'a', 'channel', { requires: [G] }),
        b('b-3', '3.0.0', 'b-2', 'b', 'channel', { skips: ['b-1'] }),
        b('b-2', '2.0.0', 'b-1', 'b', 'channel'),
        b('b-1', '1.0.0', '', 'b', 'channel', { provides: [G] }),
      ]),
    ],
    subs: [sub('a', 'a', 'channel', 'test-catalog')],
    want: {
      reason: 'ConstraintsNotSatisfiable',
      message:
        'constraints not satisfiable: bundle a-1 requires an operator providing an API with group: g, version: v, kind: k, subscription a exists, subscription a requires test-catalog/olm/channel/a-1',
    },
  },
  {
    name: 'DisjointChannelGraph: two replacement chains in one channel',
    catalogs: [
      catalog('test-catalog', 'olm', [
        b('test-package.side1.v1', '0.0.1', '', 'test-package', 'alpha'),
        b('test-package.side1.v2', '0.0.2', 'test-package.side1.v1', 'test-package', 'alpha'),
        b('test-package.side2.v1', '1.0.0', '', 'test-package', 'alpha'),
        b('test-package.side2.v2', '2.0.0', 'test-package.side2.v1', 'test-package', 'alpha'),
      ]),
    ],
    subs: [sub('test-package', 'test-package', 'alpha', 'test-catalog')],
    want: {
      reason: 'ErrorPreventedResolution',
      message:
        'a unique replacement chain within a channel is required to determine the relative order between channel entries, but 2 replacement chains were found in channel "alpha" of package "test-package": test-package.side1.v2...test-package.side1.v1, test-package.side2.v2...test-package.side2.v1',
    },
  },
  {
    name: 'GenericConstraint: a CEL rule matching a provided API',
    catalogs: [
      catalog('community', 'olm', [
        b('opA.v1.0.0', '1.0.0', '', 'test-package', 'stable', {
          properties: [
            {
              type: 'olm.constraint',
              value: `{"failureMessage":"gvk-constraint","cel":{"rule":"properties.exists(p, p.type == 'olm.gvk' && p.value == {'group': 'g', 'version': 'v', 'kind': 'k'})"}}`,
            },
          ],
        }),
        b('opB.v1.0.0', '1.0.0', '', 'another-package', 'stable', { provides: [G] }),
      ]),
    ],
    subs: [sub('test-package', 'test-package', 'stable', 'community')],
    want: ['community/stable/opA.v1.0.0', 'community/stable/opB.v1.0.0'],
  },
  {
    name: 'GenericConstraint: an unsatisfiable CEL rule is explained with its failureMessage',
    catalogs: [
      catalog('community', 'olm', [
        b('opA.v1.0.0', '1.0.0', '', 'test-package', 'stable', {
          properties: [
            {
              type: 'olm.constraint',
              value: `{"failureMessage":"gvk2-constraint","cel":{"rule":"properties.exists(p, p.type == 'olm.gvk' && p.value == {'group': 'g2', 'version': 'v', 'kind': 'k'})"}}`,
            },
          ],
        }),
        b('opB.v1.0.0', '1.0.0', '', 'another-package', 'stable', { provides: [G] }),
      ]),
    ],
    subs: [sub('test-package', 'test-package', 'stable', 'community')],
    want: {
      reason: 'ConstraintsNotSatisfiable',
      message:
        "constraints not satisfiable: bundle opA.v1.0.0 requires an operator with constraint: \"properties.exists(p, p.type == 'olm.gvk' && p.value == {'group': 'g2', 'version': 'v', 'kind': 'k'})\" and message: \"gvk2-constraint\", subscription test-package exists, subscription test-package requires community/olm/stable/opA.v1.0.0",
    },
  },
  {
    name: 'GenericConstraint: semver_compare in a CEL rule picks an exact version',
    catalogs: [
      catalog('community', 'olm', [
        b('opA.v1.0.0', '1.0.0', '', 'test-package', 'stable', {
          properties: [
            {
              type: 'olm.constraint',
              value: `{"failureMessage":"package-constraint","cel":{"rule":"properties.exists(p, p.type == 'olm.package' && p.value.packageName == 'another-package' && (semver_compare(p.value.version, '1.0.1') == 0))"}}`,
            },
          ],
        }),
        b('opB.v1.0.0', '1.0.0', '', 'another-package', 'stable'),
        b('opB.v1.0.1', '1.0.1', 'opB.v1.0.0', 'another-package', 'stable'),
        b('opB.v1.0.2', '1.0.2', 'opB.v1.0.1', 'another-package', 'stable'),
      ]),
    ],
    subs: [sub('test-package', 'test-package', 'stable', 'community')],
    want: ['community/stable/opA.v1.0.0', 'community/stable/opB.v1.0.1'],
  },
  // ---- beyond OLM's resolver_test.go ----
  {
    name: 'skipRange: an installed version inside the head’s skipRange upgrades straight to the head',
    catalogs: [
      catalog('community', 'olm', [
        b('etcd.v1.0.0', '1.0.0', '', 'etcd', 'stable'),
        b('etcd.v1.1.0', '1.1.0', 'etcd.v1.0.0', 'etcd', 'stable'),
        b('etcd.v1.2.0', '1.2.0', 'etcd.v1.1.0', 'etcd', 'stable', { skipRange: '>=1.0.0 <1.2.0' }),
      ]),
    ],
    subs: [sub('etcd', 'etcd', 'stable', 'community', { installedCSV: 'etcd.v1.0.0' })],
    installed: [installed('etcd.v1.0.0', 'etcd', '1.0.0')],
    want: ['community/stable/etcd.v1.2.0 (replaces etcd.v1.0.0)'],
  },
  {
    name: 'replaces chain: one step at a time without skips',
    catalogs: [
      catalog('community', 'olm', [
        b('etcd.v1.0.0', '1.0.0', '', 'etcd', 'stable'),
        b('etcd.v1.1.0', '1.1.0', 'etcd.v1.0.0', 'etcd', 'stable'),
        b('etcd.v1.2.0', '1.2.0', 'etcd.v1.1.0', 'etcd', 'stable'),
      ]),
    ],
    subs: [sub('etcd', 'etcd', 'stable', 'community', { installedCSV: 'etcd.v1.0.0' })],
    installed: [installed('etcd.v1.0.0', 'etcd', '1.0.0')],
    want: ['community/stable/etcd.v1.1.0 (replaces etcd.v1.0.0)'],
  },
  {
    name: 'the installed head stays: nothing to do',
    catalogs: [catalog('community', 'olm', [b('etcd.v1.0.0', '1.0.0', '', 'etcd', 'stable'), b('etcd.v1.1.0', '1.1.0', 'etcd.v1.0.0', 'etcd', 'stable')])],
    subs: [sub('etcd', 'etcd', 'stable', 'community', { installedCSV: 'etcd.v1.1.0' })],
    installed: [installed('etcd.v1.1.0', 'etcd', '1.1.0')],
    want: [],
  },
  {
    name: 'cyclic dependencies are satisfied together',
    catalogs: [
      catalog('community', 'olm', [
        b('a.v1', '1.0.0', '', 'a', 'stable', { provides: ['a.example/v1/A'], requires: ['b.example/v1/B'] }),
        b('b.v1', '1.0.0', '', 'b', 'stable', { provides: ['b.example/v1/B'], requires: ['a.example/v1/A'] }),
      ]),
    ],
    subs: [sub('a', 'a', 'stable', 'community')],
    want: ['community/stable/a.v1', 'community/stable/b.v1'],
  },
  {
    name: 'two dependencies that need one package in incompatible versions',
    catalogs: [
      catalog('community', 'olm', [
        b('app.v1', '1.0.0', '', 'app', 'stable', {
          requiresPackages: [
            ['db', '>=2.0.0'],
            ['cache', '>=1.0.0'],
          ],
        }),
        b('cache.v1', '1.0.0', '', 'cache', 'stable', { requiresPackages: [['db', '<2.0.0']] }),
        b('db.v1', '1.0.0', '', 'db', 'stable'),
        b('db.v2', '2.0.0', 'db.v1', 'db', 'stable'),
      ]),
    ],
    subs: [sub('app', 'app', 'stable', 'community')],
    want: {
      reason: 'ConstraintsNotSatisfiable',
      message:
        'constraints not satisfiable: bundle app.v1 requires an operator with package: cache and with version in range: >=1.0.0, bundle app.v1 requires an operator with package: db and with version in range: >=2.0.0, bundle cache.v1 requires an operator with package: db and with version in range: <2.0.0, community/olm/stable/db.v1 and community/olm/stable/db.v2 originate from package db, subscription app exists, subscription app requires community/olm/stable/app.v1',
    },
  },
  {
    name: 'a package the catalog does not have',
    catalogs: [catalog('community', 'olm', [b('etcd.v1', '1.0.0', '', 'etcd', 'stable')])],
    subs: [sub('nope', 'nope', 'stable', 'community')],
    want: {
      reason: 'ConstraintsNotSatisfiable',
      message: 'constraints not satisfiable: no operators found in package nope in the catalog referenced by subscription nope, subscription nope exists',
    },
  },
  {
    name: 'a channel the package does not have',
    catalogs: [catalog('community', 'olm', [b('etcd.v1', '1.0.0', '', 'etcd', 'stable')])],
    subs: [sub('etcd', 'etcd', 'beta', 'community')],
    want: {
      reason: 'ConstraintsNotSatisfiable',
      message:
        'constraints not satisfiable: no operators found in channel beta of package etcd in the catalog referenced by subscription etcd, subscription etcd exists',
    },
  },
  {
    name: 'a startingCSV the channel does not have',
    catalogs: [catalog('community', 'olm', [b('etcd.v1', '1.0.0', '', 'etcd', 'stable')])],
    subs: [sub('etcd', 'etcd', 'stable', 'community', { startingCSV: 'etcd.v9' })],
    want: {
      reason: 'ConstraintsNotSatisfiable',
      message:
        'constraints not satisfiable: no operators found with name etcd.v9 in channel stable of package etcd in the catalog referenced by subscription etcd, subscription etcd exists',
    },
  },
  {
    name: 'a catalog that is not in scope',
    catalogs: [catalog('community', 'olm', [b('etcd.v1', '1.0.0', '', 'etcd', 'stable')])],
    subs: [sub('etcd', 'etcd', 'stable', 'missing')],
    want: {
      reason: 'ConstraintsNotSatisfiable',
      message:
        'constraints not satisfiable: no operators found from catalog missing in namespace olm referenced by subscription etcd, subscription etcd exists',
    },
  },
  {
    name: 'malformed CEL in an olm.constraint names the bundle',
    catalogs: [
      catalog('community', 'olm', [
        b('etcd.v1', '1.0.0', '', 'etcd', 'stable', {
          properties: [{ type: 'olm.constraint', value: '{"failureMessage":"x","cel":{"rule":"properties.exists(p, p.type =="}}' }],
        }),
      ]),
    ],
    subs: [sub('etcd', 'etcd', 'stable', 'community')],
    want: { reason: 'ErrorPreventedResolution', message: /^bundle etcd\.v1: convert olm\.constraint to resolver predicate: ERROR: <input>:1:/ },
  },
  {
    name: 'a CEL rule that is not bool',
    catalogs: [
      catalog('community', 'olm', [
        b('etcd.v1', '1.0.0', '', 'etcd', 'stable', { properties: [{ type: 'olm.constraint', value: '{"cel":{"rule":"1 + 1"}}' }] }),
      ]),
    ],
    subs: [sub('etcd', 'etcd', 'stable', 'community')],
    want: { reason: 'ErrorPreventedResolution', message: 'bundle etcd.v1: convert olm.constraint to resolver predicate: cel expressions must have type Bool' },
  },
  {
    name: 'olm.constraint that is not JSON',
    catalogs: [catalog('community', 'olm', [b('etcd.v1', '1.0.0', '', 'etcd', 'stable', { properties: [{ type: 'olm.constraint', value: '{"cel":' }] })])],
    subs: [sub('etcd', 'etcd', 'stable', 'community')],
    want: { reason: 'ErrorPreventedResolution', message: /^bundle etcd\.v1: parse olm\.constraint: / },
  },
  {
    name: 'an empty olm.constraint',
    catalogs: [
      catalog('community', 'olm', [b('etcd.v1', '1.0.0', '', 'etcd', 'stable', { properties: [{ type: 'olm.constraint', value: '{"failureMessage":"x"}' }] })]),
    ],
    subs: [sub('etcd', 'etcd', 'stable', 'community')],
    want: { reason: 'ErrorPreventedResolution', message: 'bundle etcd.v1: convert olm.constraint to resolver predicate: constraint is empty' },
  },
  {
    name: 'olm.maxOpenShiftVersion is ignored',
    catalogs: [
      catalog('community', 'olm', [b('etcd.v1', '1.0.0', '', 'etcd', 'stable', { properties: [{ type: 'olm.maxOpenShiftVersion', value: '"4.8"' }] })]),
    ],
    subs: [sub('etcd', 'etcd', 'stable', 'community')],
    want: ['community/stable/etcd.v1'],
  },
];

describe('resolve (OLM resolver_test.go cases)', () => {
  for (const c of cases) it(c.name, () => check(c));

  it('orders steps dependencies first and names the Subscription a bundle answers', async () => {
    const r = await resolve({
      namespace: 'olm',
      subscriptions: [sub('app', 'app', 'stable', 'community')],
      installed: [],
      catalogs: [
        catalog('community', 'olm', [
          b('app.v1', '1.0.0', '', 'app', 'stable', { requires: ['db.example/v1/DB'] }),
          b('db.v1', '1.0.0', '', 'db', 'stable', { provides: ['db.example/v1/DB'], requiresPackages: [['base', '1.x']] }),
          b('base.v1', '1.0.0', '', 'base', 'stable'),
        ]),
      ],
    });
    assert.ok(r.ok);
    assert.deepEqual(
      r.steps.map((s) => [s.bundle.csvName, s.subscription ?? null, s.catalog]),
      [
        ['base.v1', null, { name: 'community', namespace: 'olm' }],
        ['db.v1', null, { name: 'community', namespace: 'olm' }],
        ['app.v1', 'app', { name: 'community', namespace: 'olm' }],
      ],
    );
  });
});

describe('resolve: a larger unsatisfiable problem', () => {
  it('names only the constraints in conflict', async () => {
    // 30 packages of 10 bundles, each package requiring the one before it (any 1.x); an installed
    // CSV without a Subscription holds package p10, which p11 needs from the catalog
    const specs: BundleSpec[] = [];
    for (let i = 0; i < 30; i++) {
      for (let j = 0; j < 10; j++) {
        specs.push(
          b(`p${i}.v1.${j}.0`, `1.${j}.0`, j > 0 ? `p${i}.v1.${j - 1}.0` : '', `p${i}`, 'stable', {
            provides: [`p${i}.example/v1/K${i}`],
            ...(i > 0 ? { requiresPackages: [[`p${i - 1}`, '>=1.0.0 <2.0.0']] as [string, string][] } : {}),
          }),
        );
      }
    }
    const r = await resolve({
      namespace: 'olm',
      subscriptions: [sub('top', 'p29', 'stable', 'big')],
      installed: [installed('p10.v0.1.0', 'p10', '0.1.0')],
      catalogs: [catalog('big', 'olm', specs)],
    });
    assert.ok(!r.ok);
    assert.equal(r.reason, 'ConstraintsNotSatisfiable');
    const ids = Array.from({ length: 10 }, (_, j) => `big/olm/stable/p10.v1.${j}.0`).sort();
    const all = ['@existing/olm//p10.v0.1.0', ...ids];
    assert.ok(r.message.includes(`${all.slice(0, -1).join(', ')} and ${all[all.length - 1]} originate from package p10`), r.message);
    assert.ok(r.message.includes('clusterserviceversion p10.v0.1.0 exists and is not referenced by a subscription'), r.message);
    assert.ok(r.message.includes('subscription top exists'), r.message);
    // nothing about packages below p10, which are not part of the conflict
    assert.ok(!/p9\b|p8\b/.test(r.message), r.message);
  });
});

describe('resolve: the DBaaS example catalog', () => {
  const dir = join(dirname(fileURLToPath(import.meta.url)), '../../../../examples/dbaas-catalog/catalog');

  async function dbaas(): Promise<CatalogSnapshot> {
    const { model } = await loadCatalog(dir);
    const bundles: ApiBundle[] = [];
    const defaultChannels: Record<string, string> = {};
    for (const pkg of model.values()) {
      defaultChannels[pkg.name] = pkg.defaultChannel?.name ?? '';
      for (const ch of pkg.channels.values()) for (const bundle of ch.bundles.values()) bundles.push(modelBundleToApi(bundle));
    }
    return { key: { name: 'dbaas', namespace: 'olm' }, priority: 0, bundles, defaultChannels };
  }

  it("pxc-operator's stable channel pulls monitoring-operator and cloud-provider-operator", async () => {
    const cat = await dbaas();
    const r = await resolve({ namespace: 'olm', subscriptions: [sub('pxc', 'pxc-operator', 'stable-v1', 'dbaas')], installed: [], catalogs: [cat] });
    assert.ok(r.ok, JSON.stringify(r));
    const names = r.steps.map((s) => s.bundle.csvName);
    assert.equal(names[names.length - 1], 'pxc-operator.v1.2.0');
    assert.deepEqual(new Set(names.map((n) => n.replace(/\.v.*$/, ''))), new Set(['cloud-provider-operator', 'monitoring-operator', 'pxc-operator']));
    const monitoring = r.steps.find((s) => s.bundle.packageName === 'monitoring-operator')!;
    // the default channel's head, within pxc 1.2.0's range (>=1.1.0 <2.0.0)
    assert.match(monitoring.bundle.csvName, /^monitoring-operator\.v1\.[12]\.0$/);
    assert.equal(r.steps.find((s) => s.bundle.packageName === 'pxc-operator')!.subscription, 'pxc');
  });

  it('the DB server, monitoring and database operators of story 1 resolve together', async () => {
    const cat = await dbaas();
    const r = await resolve({
      namespace: 'olm',
      subscriptions: [
        sub('pxc', 'pxc-operator', 'stable-v1', 'dbaas'),
        sub('monitoring', 'monitoring-operator', undefined, 'dbaas'),
        sub('psmdb', 'psmdb-operator', 'stable-v1', 'dbaas'),
      ],
      installed: [],
      catalogs: [cat],
    });
    assert.ok(r.ok, JSON.stringify(r));
    const pkgs = r.steps.map((s) => s.bundle.packageName);
    assert.equal(new Set(pkgs).size, pkgs.length, 'one bundle per package');
    for (const p of ['pxc-operator', 'psmdb-operator', 'monitoring-operator', 'cloud-provider-operator']) assert.ok(pkgs.includes(p), p);
  });
});
