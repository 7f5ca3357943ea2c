import assert from 'node:assert/strict';
import { describe, it, test } from 'node:test';
import { AggregateError, Alpha, Beta, Deprecated, FeatureGate, GA, type VersionedSpecs } from './feature-gate.js';
import { parseEmulatedVersionFlag, validateEmulationVersion } from './emulation.js';
import { setFeatureGateDuringTest } from './testing.js';
import { Version } from './version.js';

const v = (s: string): Version => Version.parse(s);

function gate(emulation = '1.33'): FeatureGate {
  const g = new FeatureGate(v(emulation));
  g.add({
    TestAlpha: { default: false, preRelease: Alpha },
    TestBeta: { default: true, preRelease: Beta },
    TestBetaOff: { default: false, preRelease: Beta },
    TestGA: { default: true, preRelease: GA, lockToDefault: true },
    TestDeprecated: { default: false, preRelease: Deprecated },
  });
  return g;
}

describe('Set (the --feature-gates syntax)', () => {
  it('parses k=v pairs with Go ParseBool and spaces trimmed', () => {
    const g = gate();
    g.set(' TestAlpha = T , TestBeta=0,,');
    assert.equal(g.enabled('TestAlpha'), true);
    assert.equal(g.enabled('TestBeta'), false);
    assert.equal(g.toString(), 'TestAlpha=true,TestBeta=false');
  });

  it("refuses what upstream refuses, with upstream's messages", () => {
    const cases: Array<[string, string]> = [
      ['TestAlpha', 'missing bool value for TestAlpha'],
      ['TestAlpha=yes', 'invalid value of TestAlpha=yes, err: strconv.ParseBool: parsing "yes": invalid syntax'],
      ['Nope=true', 'unrecognized feature gate: Nope'],
      ['TestGA=false', 'cannot set feature gate TestGA to false, feature is locked to true'],
    ];
    for (const [flag, message] of cases) {
      const g = gate();
      assert.throws(
        () => g.set(flag),
        (e: unknown) => e instanceof AggregateError && e.message === message,
        flag,
      );
    }
  });

  it('aggregates several errors as [a, b] and keeps no value of a failed call', () => {
    const g = gate();
    g.set('TestBetaOff=true');
    assert.throws(() => g.setFromMap({ TestGA: false, TestAlpha: true, TestDeprecated: true }), {
      message: 'cannot set feature gate TestGA to false, feature is locked to true',
    });
    const g2 = gate();
    g2.add({ Locked2: { default: false, preRelease: GA, lockToDefault: true } });
    assert.throws(() => g2.setFromMap({ TestGA: false, Locked2: true }), {
      message: '[cannot set feature gate TestGA to false, feature is locked to true, cannot set feature gate Locked2 to true, feature is locked to false]',
    });
    assert.equal(g.enabled('TestAlpha'), false);
    assert.equal(g.enabled('TestBetaOff'), true, 'earlier values stay');
  });

  it('is cumulative across calls, as pflag calls Set once per --feature-gates flag', () => {
    const g = gate();
    g.set('TestAlpha=true');
    g.set('TestBeta=false');
    assert.equal(g.toString(), 'TestAlpha=true,TestBeta=false');
  });

  it('AllAlpha/AllBeta set only features not set explicitly, whatever the order', () => {
    const g = gate();
    g.set('TestAlpha=false,AllAlpha=true');
    assert.equal(g.enabled('TestAlpha'), false);
    const g2 = gate();
    g2.set('AllBeta=false');
    assert.equal(g2.enabled('TestBeta'), false);
    assert.equal(g2.enabled('TestBetaOff'), false);
    assert.equal(g2.enabled('TestAlpha'), false);
    assert.equal(g2.explicitlySet('TestBeta'), false);
    assert.equal(g2.explicitlySet('AllBeta'), true);
  });

  it('throws for an unknown feature asked with enabled(), with the panic text', () => {
    assert.throws(() => gate().enabled('Nope'), { message: 'feature "Nope" is not registered in FeatureGate' });
  });
});

describe('versioned specs and the emulated version', () => {
  const specs = {
    Versioned: [
      { version: v('1.30'), default: false, preRelease: Alpha },
      { version: v('1.32'), default: true, preRelease: Beta },
      { version: v('1.34'), default: true, preRelease: GA, lockToDefault: true },
    ],
  };

  it('uses the newest spec not newer than the emulated version', () => {
    for (const [emu, want, stage] of [
      ['1.29', false, 'PRE-ALPHA'],
      ['1.31', false, 'ALPHA'],
      ['1.33', true, 'BETA'],
      ['1.34', true, ''],
    ] as const) {
      const g = new FeatureGate(v(emu));
      g.addVersioned(specs);
      assert.equal(g.enabled('Versioned'), want, emu);
      assert.equal(g.getAll().get('Versioned')?.preRelease, stage === 'PRE-ALPHA' ? undefined : stage, emu);
    }
  });

  it('refuses setting a feature that does not exist yet at the emulated version', () => {
    const g = new FeatureGate(v('1.29'));
    g.addVersioned(specs);
    assert.throws(() => g.set('Versioned=true'), { message: 'cannot set feature gate Versioned to true, feature is PreAlpha at emulated version 1.29' });
  });

  it('re-resolves raw values when the emulated version changes', () => {
    const g = new FeatureGate(v('1.33'));
    g.addVersioned(specs);
    g.set('Versioned=false');
    assert.equal(g.enabled('Versioned'), false);
    assert.throws(() => g.setEmulationVersion(v('1.34')), { message: 'cannot set feature gate Versioned to false, feature is locked to true' });
    assert.equal(g.emulationVersion().toString(), '1.33', 'kept on error');
    g.resetFeatureValueToDefault('Versioned');
    g.setEmulationVersion(v('1.34'));
    assert.equal(g.enabled('Versioned'), true);
  });

  it("checks a feature's history as AddVersioned does", () => {
    const cases: Array<[Record<string, VersionedSpecs>, string]> = [
      [{ F: [{ default: false, preRelease: Alpha }] }, 'feature "F" did not provide a version'],
      [{ F: [{ version: v('1.30.1'), default: false, preRelease: Alpha }] }, 'feature "F" specified patch version: 1.30.1'],
      [
        {
          F: [
            { version: v('1.31'), default: false, preRelease: Alpha },
            { version: v('1.30'), default: true, preRelease: Beta },
          ],
        },
        'feature "F" lists version transitions in non-increasing order (1.30 <= 1.31)',
      ],
      [
        {
          F: [
            { version: v('1.30'), default: true, preRelease: Beta },
            { version: v('1.31'), default: false, preRelease: Alpha },
          ],
        },
        'feature "F" regresses stability from more stable level to ALPHA in 1.31',
      ],
      [
        {
          F: [
            { version: v('1.0'), default: true, preRelease: Deprecated },
            { version: v('1.31'), default: true, preRelease: GA },
          ],
        },
        'deprecated feature "F" must not resurrect from its terminal state',
      ],
      [
        { F: [{ version: v('1.31'), default: true, preRelease: Deprecated }] },
        'feature "F" introduced as deprecated must provide a 1.0 entry indicating initial state',
      ],
    ];
    for (const [features, message] of cases) assert.throws(() => new FeatureGate(v('1.33')).addVersioned(features), { message });
    const g = gate();
    assert.throws(() => g.add({ TestAlpha: { default: true, preRelease: Alpha } }), {
      message: 'feature gate "TestAlpha" with different spec already exists: [{false false ALPHA 0.0}]',
    });
    g.add({ TestAlpha: { default: false, preRelease: Alpha } }); // the same spec again is fine
    g.close();
    assert.throws(() => g.add({ Late: { default: false, preRelease: Alpha } }), { message: 'cannot add a feature gate after adding it to the flag set' });
  });
});

describe('OverrideDefault and dependencies', () => {
  it('overrides a default before the gate is closed, never a locked one', () => {
    const g = gate();
    g.overrideDefault('TestAlpha', true);
    assert.equal(g.enabled('TestAlpha'), true);
    assert.throws(() => g.overrideDefault('TestGA', false), { message: 'cannot override default: feature "TestGA" default is locked to true' });
    assert.throws(() => g.overrideDefault('Nope', false), { message: 'cannot override default: feature "Nope" is not registered' });
    g.close();
    assert.throws(() => g.overrideDefault('TestBeta', false), { message: 'cannot override default for feature "TestBeta": gates already added to a flag set' });
  });

  it('refuses a dependency on a less stable feature and cycles, and checks dependencies when set', () => {
    const g = gate();
    assert.throws(() => g.addDependencies({ TestBeta: ['TestAlpha'] }), {
      message: 'BETA feature TestBeta cannot depend on ALPHA feature TestAlpha at version 0.0',
    });
    g.add({ A1: { default: false, preRelease: Alpha }, A2: { default: false, preRelease: Alpha } });
    assert.throws(() => g.addDependencies({ A1: ['A2'], A2: ['A1'] }), { message: /^cycle detected with feature A[12]$/ });
    g.addDependencies({ A1: ['A2'] });
    assert.throws(() => g.set('A1=true'), { message: 'A1 is enabled, but depends on features that are disabled: [A2]' });
    g.set('A1=true,A2=true');
    assert.equal(g.enabled('A1'), true);
  });
});

describe('help and listing', () => {
  it('lists features as KnownFeatures does: sorted, GA/deprecated hidden, AllAlpha/AllBeta shown', () => {
    assert.deepEqual(gate().knownFeatures(), [
      'AllAlpha=true|false (ALPHA - default=false)',
      'AllBeta=true|false (BETA - default=false)',
      'TestAlpha=true|false (ALPHA - default=false)',
      'TestBeta=true|false (BETA - default=true)',
      'TestBetaOff=true|false (BETA - default=false)',
    ]);
    assert.match(gate().flagUsage(), /^A set of key=value pairs that describe feature gates for alpha\/experimental features\. Options are:\nAllAlpha=/);
  });

  it('records the features a component asked about (its uses)', () => {
    const g = gate();
    g.enabled('TestBeta');
    assert.deepEqual([...g.queried()], ['TestBeta']);
    assert.equal(g.deepCopy().queried().size, 0);
  });
});

test('setFeatureGateDuringTest puts the value back after the test', async (t) => {
  const g = gate();
  await t.test('inner', (tt) => {
    setFeatureGateDuringTest(tt, g, 'TestAlpha', true);
    assert.equal(g.enabled('TestAlpha'), true);
  });
  assert.equal(g.enabled('TestAlpha'), false);
  assert.equal(g.explicitlySet('TestAlpha'), false);
});

describe('--emulated-version', () => {
  it('accepts 1.31 and kube=1.31 within [binary-3, binary]', () => {
    assert.equal((parseEmulatedVersionFlag('kube=1.31') as Version).toString(), '1.31');
    assert.equal((parseEmulatedVersionFlag('1.32') as Version).toString(), '1.32');
    assert.deepEqual(parseEmulatedVersionFlag('wardle=1.2'), { error: 'component not registered: wardle' });
    assert.equal(validateEmulationVersion(v('1.33'), v('1.31')), undefined);
    assert.equal(validateEmulationVersion(v('1.33'), v('1.29')), 'emulation version 1.29 is not between [1.30, 1.33]');
    assert.equal(validateEmulationVersion(v('1.33'), v('1.34')), 'emulation version 1.34 is not between [1.30, 1.33]');
  });
});

describe('dynamic features (kplane, KEP-0007)', () => {
  it('turns only a feature marked dynamic, over the flag, until reset', () => {
    const g = gate();
    g.add({ TestDynamic: { default: false, preRelease: Beta, dynamic: true } });
    g.set('TestDynamic=false');
    assert.equal(g.isDynamic('TestDynamic'), true);
    assert.equal(g.isDynamic('TestBeta'), false);
    assert.equal(g.isDynamic('Unknown'), false);
    assert.equal(g.enabled('TestDynamic'), false);
    g.setDynamicValue('TestDynamic', true);
    assert.equal(g.enabled('TestDynamic'), true);
    assert.equal(g.dynamicValue('TestDynamic'), true);
    assert.equal(g.deepCopy().enabled('TestDynamic'), true);
    g.setDynamicValue('TestDynamic', undefined);
    assert.equal(g.enabled('TestDynamic'), false);
    assert.throws(() => g.setDynamicValue('TestBeta', false), /feature "TestBeta" is not dynamic/);
    assert.throws(() => g.setDynamicValue('Unknown', false), /feature "Unknown" is not dynamic/);
  });

  it('a locked feature is never dynamic; re-adding with another dynamic mark is refused', () => {
    const g = gate();
    g.add({ TestLockedDynamic: { default: true, preRelease: GA, lockToDefault: true, dynamic: true } });
    assert.equal(g.isDynamic('TestLockedDynamic'), false);
    assert.throws(() => g.add({ TestLockedDynamic: { default: true, preRelease: GA, lockToDefault: true } }), /with different spec already exists/);
  });
});
