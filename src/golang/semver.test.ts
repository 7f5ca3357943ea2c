// Cases transcribed from blang/semver v4.0.0 (v4/semver_test.go, v4/range_test.go).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { goQuote } from './strconv.js';
import {
  SemverError,
  Version,
  expandWildcardVersion,
  finalizeVersion,
  mustParse,
  mustParseRange,
  newBuildVersion,
  newPRVersion,
  parse,
  parseRange,
  parseTolerant,
  splitAndTrim,
  splitComparatorVersion,
  splitORParts,
  type PRVersion,
} from './semver.js';

const s = (v: string): PRVersion => ({ versionStr: v, versionNum: 0n, isNum: false });
const n = (v: number): PRVersion => ({ versionStr: '', versionNum: BigInt(v), isNum: true });
const V = (ma: number, mi: number, pa: number, pre: PRVersion[] = [], build: string[] = []) => new Version(BigInt(ma), BigInt(mi), BigInt(pa), pre, build);

const formatTests: [Version, string][] = [
  [V(1, 2, 3), '1.2.3'],
  [V(0, 0, 1), '0.0.1'],
  [V(0, 0, 1, [s('alpha'), s('preview')], ['123', '456']), '0.0.1-alpha.preview+123.456'],
  [V(1, 2, 3, [s('alpha'), n(1)], ['123', '456']), '1.2.3-alpha.1+123.456'],
  [V(1, 2, 3, [s('alpha'), n(1)]), '1.2.3-alpha.1'],
  [V(1, 2, 3, [], ['123', '456']), '1.2.3+123.456'],
  [V(1, 2, 3, [s('alpha'), s('b-eta')], ['123', 'b-uild']), '1.2.3-alpha.b-eta+123.b-uild'],
  [V(1, 2, 3, [], ['123', 'b-uild']), '1.2.3+123.b-uild'],
  [V(1, 2, 3, [s('alpha'), s('b-eta')]), '1.2.3-alpha.b-eta'],
];

const tolerantFormatTests: [Version, string][] = [
  [V(1, 2, 3), 'v1.2.3'],
  [V(1, 2, 0, [s('alpha')]), '1.2.0-alpha'],
  [V(1, 2, 0), '1.2.00'],
  [V(1, 2, 3), '\t1.2.3 '],
  [V(1, 2, 3), '01.02.03'],
  [V(0, 0, 3), '00.0.03'],
  [V(0, 0, 3), '000.0.03'],
  [V(1, 2, 0), '1.2'],
  [V(1, 0, 0), '1'],
];

test('String formats every part', () => {
  for (const [v, str] of formatTests) assert.equal(v.toString(), str);
});

test('parse round-trips the formatted versions, and they validate', () => {
  for (const [v, str] of formatTests) {
    const p = parse(str);
    assert.equal(p.compare(v), 0, str);
    assert.deepEqual(p.build, v.build);
    assert.equal(p.toString(), str);
    p.validate();
  }
});

test('parseTolerant normalises prefixes, spaces, zeroes and short versions', () => {
  for (const [v, str] of tolerantFormatTests) {
    const p = parseTolerant(str);
    assert.equal(p.compare(v), 0, str);
    p.validate();
  }
  assert.throws(() => parseTolerant('1.0+abc'), { message: 'Short version cannot contain PreRelease/Build meta data' });
  // three dot-separated parts after all, so it reaches parse, which rejects the minor number
  assert.throws(() => parseTolerant('1.0-rc.1'), { message: 'Invalid character(s) found in minor number "0-rc"' });
});

test('mustParse throws with the input named', () => {
  assert.equal(mustParse('32.2.1-alpha').toString(), '32.2.1-alpha');
  assert.throws(() => mustParse('invalid version'), { message: 'semver: Parse(invalid version): No Major.Minor.Patch elements found' });
});

test('finalizeVersion drops pre-release and build', () => {
  const cases: [string, string][] = [
    ['1.2.3', '1.2.3'],
    ['0.0.1-alpha.preview+123.456', '0.0.1'],
    ['1.2.3-alpha.1+123.456', '1.2.3'],
    ['1.2.3+123.b-uild', '1.2.3'],
    ['1.2.3-alpha.b-eta', '1.2.3'],
  ];
  for (const [i, o] of cases) assert.equal(finalizeVersion(i), o);
  for (const [v] of formatTests) assert.equal(v.finalizeVersion(), `${v.major}.${v.minor}.${v.patch}`);
  assert.throws(() => finalizeVersion(''));
  assert.throws(() => finalizeVersion('1.2-alpha'));
});

test('compare orders by semver 2.0.0 precedence (spec examples 9 and 11), build metadata ignored', () => {
  const cases: [Version, Version, number][] = [
    [V(1, 0, 0), V(1, 0, 0), 0],
    [V(2, 0, 0), V(1, 0, 0), 1],
    [V(0, 1, 0), V(0, 1, 0), 0],
    [V(0, 2, 0), V(0, 1, 0), 1],
    [V(0, 0, 1), V(0, 0, 1), 0],
    [V(0, 0, 2), V(0, 0, 1), 1],
    [V(1, 2, 3), V(1, 2, 3), 0],
    [V(2, 2, 4), V(1, 2, 4), 1],
    [V(1, 3, 3), V(1, 2, 3), 1],
    [V(1, 2, 4), V(1, 2, 3), 1],
    [V(1, 0, 0), V(2, 0, 0), -1],
    [V(2, 0, 0), V(2, 1, 0), -1],
    [V(2, 1, 0), V(2, 1, 1), -1],
    [V(1, 0, 0), V(1, 0, 0, [s('alpha')]), 1],
    [V(1, 0, 0, [s('alpha')]), V(1, 0, 0, [s('alpha'), n(1)]), -1],
    [V(1, 0, 0, [s('alpha'), n(1)]), V(1, 0, 0, [s('alpha'), s('beta')]), -1],
    [V(1, 0, 0, [s('alpha'), s('beta')]), V(1, 0, 0, [s('beta')]), -1],
    [V(1, 0, 0, [s('beta')]), V(1, 0, 0, [s('beta'), n(2)]), -1],
    [V(1, 0, 0, [s('beta'), n(2)]), V(1, 0, 0, [s('beta'), n(11)]), -1],
    [V(1, 0, 0, [s('beta'), n(11)]), V(1, 0, 0, [s('rc'), n(1)]), -1],
    [V(1, 0, 0, [s('rc'), n(1)]), V(1, 0, 0), -1],
    [V(1, 0, 0, [], ['1', '2', '3']), V(1, 0, 0), 0],
  ];
  for (const [a, b, r] of cases) {
    assert.equal(a.compare(b), r, `${a.toString()} vs ${b.toString()}`);
    assert.equal(b.compare(a), -r || 0, `${b.toString()} vs ${a.toString()}`);
  }
});

test('compare helpers', () => {
  const v = V(1, 0, 0, [s('alpha')]);
  const v1 = V(1, 0, 0);
  assert.ok(v.eq(v) && v1.ne(v) && v.gte(v) && v.lte(v) && v.lt(v1) && v.lte(v1) && v1.gt(v) && v1.gte(v));
});

test('parse rejects malformed versions', () => {
  const wrong = [
    '',
    '.',
    '1.',
    '.1',
    'a.b.c',
    '1.a.b',
    '1.1.a',
    '1.a.1',
    'a.1.1',
    '..',
    '1..',
    '1.1.',
    '1..1',
    '1.1.+123',
    '1.1.-beta',
    '-1.1.1',
    '1.-1.1',
    '1.1.-1',
    '20000000000000000000.1.1',
    '1.20000000000000000000.1',
    '1.1.20000000000000000000',
    '1.1.1-20000000000000000000',
    '01.1.1',
    '001.1.1',
    '1.01.1',
    '1.001.1',
    '1.1.01',
    '1.1.001',
    '1.1.1-01',
    '1.1.1-001',
    '1.1.1-beta.01',
    '1.1.1-beta.001',
    '0.0.0-!',
    '0.0.0+!',
    '0.0.0-.alpha',
    '0.0.0-alpha+',
    '0.0.0-alpha+test.',
  ];
  for (const w of wrong) assert.throws(() => parse(w), SemverError, w);
  // hand-built versions that Validate rejects
  for (const v of [
    V(0, 0, 0, [s('!')]),
    V(0, 0, 0, [], ['!']),
    V(0, 0, 0, [s(''), s('alpha')]),
    V(0, 0, 0, [s('alpha')], ['']),
    V(0, 0, 0, [s('alpha')], ['test', '']),
  ]) {
    assert.throws(() => v.validate());
  }
});

test('parse errors carry blang and strconv texts', () => {
  const cases: [string, string][] = [
    ['', 'Version string empty'],
    ['1.2', 'No Major.Minor.Patch elements found'],
    ['a.1.1', 'Invalid character(s) found in major number "a"'],
    ['01.1.1', 'Major number must not contain leading zeroes "01"'],
    ['1.b.1', 'Invalid character(s) found in minor number "b"'],
    ['1.01.1', 'Minor number must not contain leading zeroes "01"'],
    ['1.1.c', 'Invalid character(s) found in patch number "c"'],
    ['1.1.01', 'Patch number must not contain leading zeroes "01"'],
    ['1.1.', 'strconv.ParseUint: parsing "": invalid syntax'],
    ['20000000000000000000.1.1', 'strconv.ParseUint: parsing "20000000000000000000": value out of range'],
    ['1.1.1-01', 'Numeric PreRelease version must not contain leading zeroes "01"'],
    ['1.1.1-a!', 'Invalid character(s) found in prerelease "a!"'],
    ['1.1.1-.a', 'Prerelease is empty'],
    ['1.1.1+', 'Build meta data is empty'],
    ['1.1.1+a_b', 'Invalid character(s) found in build meta data "a_b"'],
    ['v1.2.3', 'Invalid character(s) found in major number "v1"'],
  ];
  for (const [i, m] of cases) assert.throws(() => parse(i), { message: m }, i);
  // uint64 bounds are exact
  assert.equal(parse('18446744073709551615.0.0').major, 18446744073709551615n);
  assert.throws(() => parse('18446744073709551616.0.0'), /value out of range/);
});

test('pre-release and build identifiers', () => {
  const p1 = newPRVersion('123');
  assert.ok(p1.isNum);
  assert.equal(p1.versionNum, 123n);
  const p2 = newPRVersion('alpha');
  assert.ok(!p2.isNum);
  assert.equal(p2.versionStr, 'alpha');
  assert.equal(newBuildVersion('123'), '123');
  assert.equal(newBuildVersion('build'), 'build');
  assert.throws(() => newBuildVersion('test?'));
  assert.throws(() => newBuildVersion(''));
});

test('splitAndTrim keeps operators glued and drops one-byte tokens', () => {
  const cases: [string, string[]][] = [
    ['1.2.3 1.2.3', ['1.2.3', '1.2.3']],
    ['     1.2.3     1.2.3     ', ['1.2.3', '1.2.3']],
    ['  >=   1.2.3   <=  1.2.3   ', ['>=1.2.3', '<=1.2.3']],
    ['1.2.3 || >=1.2.3 <1.2.3', ['1.2.3', '||', '>=1.2.3', '<1.2.3']],
    ['      1.2.3      ||     >=1.2.3     <1.2.3    ', ['1.2.3', '||', '>=1.2.3', '<1.2.3']],
  ];
  for (const [i, o] of cases) assert.deepEqual(splitAndTrim(i), o, i);
});

test('splitComparatorVersion', () => {
  const cases: [string, [string, string]][] = [
    ['>1.2.3', ['>', '1.2.3']],
    ['>=1.2.3', ['>=', '1.2.3']],
    ['<1.2.3', ['<', '1.2.3']],
    ['<=1.2.3', ['<=', '1.2.3']],
    ['1.2.3', ['', '1.2.3']],
    ['=1.2.3', ['=', '1.2.3']],
    ['==1.2.3', ['==', '1.2.3']],
    ['!=1.2.3', ['!=', '1.2.3']],
    ['!1.2.3', ['!', '1.2.3']],
  ];
  for (const [i, o] of cases) assert.deepEqual(splitComparatorVersion(i), o);
  assert.throws(() => splitComparatorVersion('error'), { message: 'Could not get version from string: "error"' });
});

test('splitORParts', () => {
  assert.deepEqual(splitORParts(['>1.2.3', '||', '<1.2.3', '||', '=1.2.3']), [['>1.2.3'], ['<1.2.3'], ['=1.2.3']]);
  assert.deepEqual(splitORParts(['>1.2.3', '<1.2.3', '||', '=1.2.3']), [['>1.2.3', '<1.2.3'], ['=1.2.3']]);
  assert.throws(() => splitORParts(['>1.2.3', '||']), { message: "Last element in range is '||'" });
  assert.throws(() => splitORParts(['||', '>1.2.3']), { message: "First element in range is '||'" });
});

test('expandWildcardVersion', () => {
  const cases: [string, string[]][] = [
    ['>=1.2.x', ['>=1.2.0']],
    ['<=1.2.x', ['<1.3.0']],
    ['>1.2.x', ['>=1.3.0']],
    ['<1.2.x', ['<1.2.0']],
    ['!=1.2.x', ['<1.2.0', '>=1.3.0']],
    ['>=1.x', ['>=1.0.0']],
    ['<=1.x', ['<2.0.0']],
    ['>1.x', ['>=2.0.0']],
    ['<1.x', ['<1.0.0']],
    ['!=1.x', ['<1.0.0', '>=2.0.0']],
    ['1.2.x', ['>=1.2.0', '<1.3.0']],
    ['1.x', ['>=1.0.0', '<2.0.0']],
  ];
  for (const [i, o] of cases) assert.deepEqual(expandWildcardVersion([[i]]), [o], i);
  assert.throws(() => expandWildcardVersion([['foox']]));
});

test('parseRange matches as blang does', () => {
  const cases: [string, [string, boolean][]][] = [
    [
      '>1.2.3',
      [
        ['1.2.2', false],
        ['1.2.3', false],
        ['1.2.4', true],
      ],
    ],
    [
      '>=1.2.3',
      [
        ['1.2.3', true],
        ['1.2.4', true],
        ['1.2.2', false],
      ],
    ],
    [
      '<1.2.3',
      [
        ['1.2.2', true],
        ['1.2.3', false],
        ['1.2.4', false],
      ],
    ],
    [
      '<=1.2.3',
      [
        ['1.2.2', true],
        ['1.2.3', true],
        ['1.2.4', false],
      ],
    ],
    [
      '1.2.3',
      [
        ['1.2.2', false],
        ['1.2.3', true],
        ['1.2.4', false],
      ],
    ],
    [
      '=1.2.3',
      [
        ['1.2.2', false],
        ['1.2.3', true],
        ['1.2.4', false],
      ],
    ],
    [
      '==1.2.3',
      [
        ['1.2.2', false],
        ['1.2.3', true],
        ['1.2.4', false],
      ],
    ],
    [
      '!=1.2.3',
      [
        ['1.2.2', true],
        ['1.2.3', false],
        ['1.2.4', true],
      ],
    ],
    [
      '!1.2.3',
      [
        ['1.2.2', true],
        ['1.2.3', false],
        ['1.2.4', true],
      ],
    ],
    [
      '>1.2.2 <1.2.4',
      [
        ['1.2.2', false],
        ['1.2.3', true],
        ['1.2.4', false],
      ],
    ],
    [
      '<1.2.2 <1.2.4',
      [
        ['1.2.1', true],
        ['1.2.2', false],
        ['1.2.3', false],
        ['1.2.4', false],
      ],
    ],
    [
      '>1.2.2 <1.2.5 !=1.2.4',
      [
        ['1.2.2', false],
        ['1.2.3', true],
        ['1.2.4', false],
        ['1.2.5', false],
      ],
    ],
    [
      '>1.2.2 <1.2.5 !1.2.4',
      [
        ['1.2.2', false],
        ['1.2.3', true],
        ['1.2.4', false],
        ['1.2.5', false],
      ],
    ],
    [
      '>1.2.2 || <1.2.4',
      [
        ['1.2.2', true],
        ['1.2.3', true],
        ['1.2.4', true],
      ],
    ],
    [
      '<1.2.2 || >1.2.4',
      [
        ['1.2.2', false],
        ['1.2.3', false],
        ['1.2.4', false],
      ],
    ],
    [
      '>1.x',
      [
        ['0.1.9', false],
        ['1.2.6', false],
        ['1.9.0', false],
        ['2.0.0', true],
      ],
    ],
    [
      '>1.2.x',
      [
        ['1.1.9', false],
        ['1.2.6', false],
        ['1.3.0', true],
      ],
    ],
    [
      '>1.2.2 <1.2.4 || >=2.0.0',
      [
        ['1.2.2', false],
        ['1.2.3', true],
        ['1.2.4', false],
        ['2.0.0', true],
        ['2.0.1', true],
      ],
    ],
    [
      '1.x || >=2.0.x <2.2.x',
      [
        ['0.9.2', false],
        ['1.2.2', true],
        ['2.0.0', true],
        ['2.1.8', true],
        ['2.2.0', false],
      ],
    ],
    [
      '>1.2.2 <1.2.4 || >=2.0.0 <3.0.0',
      [
        ['1.2.2', false],
        ['1.2.3', true],
        ['1.2.4', false],
        ['2.0.0', true],
        ['2.0.1', true],
        ['2.9.9', true],
        ['3.0.0', false],
      ],
    ],
    // as opm writes skipRanges: operator and version split by spaces
    [
      '>= 4.1.0 < 4.2.0',
      [
        ['4.0.9', false],
        ['4.1.0', true],
        ['4.1.9-rc.1', true],
        ['4.2.0-rc.1', true],
        ['4.2.0', false],
      ],
    ],
  ];
  for (const [r, vs] of cases) {
    const range = parseRange(r);
    for (const [v, want] of vs) assert.equal(range(mustParse(v)), want, `${r} ${v}`);
  }
  assert.ok(mustParseRange('>1.2.2 <1.2.4 || >=2.0.0 <3.0.0')(mustParse('1.2.3')));
  assert.throws(() => mustParseRange('invalid version'), /^SemverError: semver: ParseRange\(invalid version\)/);
});

test('parseRange errors carry blang texts', () => {
  const cases: [string, string][] = [
    ['>>1.2.3', 'Could not parse Range ">>1.2.3": Could not parse comparator ">>" in ">>1.2.3"'],
    ['1.0', 'Could not parse Range "1.0": Could not parse version "1.0" in "1.0": No Major.Minor.Patch elements found'],
    ['string', 'Could not get version from string: "string"'],
    ['', "Last element in range is '||'"],
    ['fo.ob.ar.x', 'Could not get version from string: "fo.ob.ar.x"'],
    ['|| 1.2.3', "First element in range is '||'"],
    ['<1.2.3 ||', "Last element in range is '||'"],
  ];
  for (const [i, m] of cases) assert.throws(() => parseRange(i), { message: m }, i);
});

test('goQuote quotes as Go %q does', () => {
  assert.equal(goQuote('a"b\\c'), '"a\\"b\\\\c"');
  assert.equal(goQuote('tab\there\n'), '"tab\\there\\n"');
  assert.equal(goQuote('\u0001é'), '"\\x01é"');
  assert.equal(goQuote('\u200b'), '"\\u200b"');
});
