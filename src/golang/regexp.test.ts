// Go's regexp over every RE2 construct: what compiles, what matches (regexp.MatchString, which is
// unanchored), and the texts Go prints for what it refuses (regexp/syntax's Error.Error()).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compileRegexp, findAllString, findString, mustCompileRegexp, RegexpSyntaxError, withoutCaptureNames } from './regexp.js';

// [pattern, input, Go's regexp.MatchString]
const MATCHES: [string, string, boolean][] = [
  // prometheus-operator's PrometheusRule and AlertmanagerConfig patterns
  ['^(?i)(abort|warn)?$', 'WARN', true],
  ['^(?i)(abort|warn)?$', 'Abort', true],
  ['^(?i)(abort|warn)?$', '', true],
  ['^(?i)(abort|warn)?$', 'stop', false],
  ['^((?i)january|february|march)$', 'JANUARY', true],
  ['^((?i)january|february|march)$', 'MaRcH', true],
  ['^((?i)january|february|march)$', 'april', false],
  // (?i) mid-pattern applies from there on, to the end of the group
  ['^ab(?i)cd$', 'abCD', true],
  ['^ab(?i)cd$', 'ABcd', false],
  ['^(a(?i)b)c$', 'aBc', true],
  ['^(a(?i)b)c$', 'aBC', false],
  // (?i:…) groups, and flags turned off with -
  ['^a(?i:b)c$', 'aBc', true],
  ['^a(?i:b)c$', 'ABc', false],
  ['^(?i)a(?-i:b)c$', 'AbC', true],
  ['^(?i)a(?-i:b)c$', 'ABC', false],
  // (?i) folds Unicode: K matches the Kelvin sign, σ matches ς
  ['(?i)^k$', '\u212a', true],
  ['(?i)^σ$', 'ς', true],
  // (?s): . matches \n
  ['^a.b$', 'a\nb', false],
  ['(?s)^a.b$', 'a\nb', true],
  ['^a(?s:.)b$', 'a\nb', true],
  // (?m): ^ and $ at line ends
  ['^b$', 'a\nb', false],
  ['(?m)^b$', 'a\nb', true],
  // $ without (?m) is the end of text only, not before a final \n as in Perl
  ['^ab$', 'ab\n', false],
  // (?U): ungreedy; matching is unchanged, the leftmost match is shorter (see find below)
  ['(?U)^a+$', 'aaa', true],
  // Unicode classes
  ['^\\p{Greek}+$', 'αβγ', true],
  ['^\\p{Greek}+$', 'abc', false],
  ['^\\P{Greek}+$', 'abc', true],
  ['^\\pL+$', 'héllo', true],
  ['^\\pL+$', 'h3llo', false],
  ['^\\PL+$', '123', true],
  ['^\\PL+$', '12a', false],
  ['^\\P{L}+$', '1-2', true],
  ['^\\p{Lu}\\p{Ll}+$', 'Ünïcode', true],
  ['^\\p{Han}+$', '漢字', true],
  ['^\\p{Cyrillic}+$', 'жук', true],
  ['^\\pN+$', '٣٤', true],
  ['^[\\p{L}\\p{N}]+$', 'ab١٢', true],
  ['^[^\\pL]+$', '123', true],
  // Perl classes are ASCII only in Go
  ['^\\w+$', 'é', false],
  ['^\\d+$', '٣', false],
  ['^\\s$', '\u00a0', false],
  ['^\\S$', '\u00a0', true],
  // hex, octal and C escapes
  ['^\\x{41}$', 'A', true],
  ['^\\x{1F600}$', '😀', true],
  ['^\\x41$', 'A', true],
  ['^\\101$', 'A', true],
  ['^a\\tb$', 'a\tb', true],
  // \Q…\E quotes, to \E or to the end
  ['^\\Qa.b\\E$', 'a.b', true],
  ['^\\Qa.b\\E$', 'axb', false],
  ['^\\Q(*)', '(*)', true],
  // named groups in both spellings
  ['^(?P<word>[a-z]+)$', 'abc', true],
  ['^(?<word>[a-z]+)$', 'abc', true],
  ['^(?P<x>a)|(?P<x>b)$', 'b', true], // Go allows a name twice
  // \A and \z: beginning and end of text, even with (?m)
  ['\\Aab\\z', 'ab', true],
  ['\\Aab\\z', 'ab\n', false],
  ['(?m)\\Ab$', 'a\nb', false],
  // POSIX classes, inside brackets only
  ['^[[:alpha:]]+$', 'abC', true],
  ['^[[:alpha:]]+$', 'ab1', false],
  ['^[[:^alpha:]]+$', '12', true],
  ['^[[:digit:][:upper:]]+$', 'A1B2', true],
  ['^[[:space:]]$', '\v', true],
  ['^[[:word:]]+$', 'a_1', true],
  ['^[[:xdigit:]]+$', 'c0ffee', true],
  // word boundaries (ASCII)
  ['\\bfoo\\b', 'a foo b', true],
  ['\\bfoo\\b', 'afoob', false],
  ['\\Bfoo\\B', 'afoob', true],
  // . and negated classes take a whole code point
  ['^.$', '😀', true],
  ['^[^a]$', '😀', true],
  // repetition and alternation
  ['^a{2,3}$', 'aaa', true],
  ['^a{2,3}$', 'aaaa', false],
  ['^(?:ab|cd)+$', 'abcdab', true],
  ['^a{,3}$', 'a{,3}', true], // not a repeat: literal braces
  ['^[]a]+$', ']a]', true], // ] first in a class is a literal
  ['^\\-\\_$', '-_', true],
];

// [pattern, Go's err.Error()]
const REFUSED: [string, string][] = [
  ['(a)\\1', 'error parsing regexp: invalid escape sequence: `\\1`'],
  ['(?=a)', 'error parsing regexp: invalid or unsupported Perl syntax: `(?=`'],
  ['a(?!b)', 'error parsing regexp: invalid or unsupported Perl syntax: `(?!`'],
  // Go >= 1.22 reads (?< as a named group: no '>', so the rest is an invalid name
  ['(?<=a)b', 'error parsing regexp: invalid named capture: `(?<=a)b`'],
  ['x(?<!a)b', 'error parsing regexp: invalid named capture: `(?<!a)b`'],
  ['(?<=a)>', 'error parsing regexp: invalid named capture: `(?<=a)>`'],
  ['a\\Z', 'error parsing regexp: invalid escape sequence: `\\Z`'],
  ['a++', 'error parsing regexp: invalid nested repetition operator: `++`'],
  ['a*+', 'error parsing regexp: invalid nested repetition operator: `*+`'],
  ['a**', 'error parsing regexp: invalid nested repetition operator: `**`'],
  ['(?P=n)', 'error parsing regexp: invalid or unsupported Perl syntax: `(?P`'],
  ['\\k<n>', 'error parsing regexp: invalid escape sequence: `\\k`'],
  ['(?#comment)', 'error parsing regexp: invalid or unsupported Perl syntax: `(?#`'],
  ['(?x)a b', 'error parsing regexp: invalid or unsupported Perl syntax: `(?x`'],
  ['(?P<>a)', 'error parsing regexp: invalid named capture: `(?P<>`'],
  ['(?P<a-b>x)', 'error parsing regexp: invalid named capture: `(?P<a-b>`'],
  ['(?P<x>a)(?P<x>b)(?P<>c)', 'error parsing regexp: invalid named capture: `(?P<>`'],
  ['\\C', 'error parsing regexp: invalid escape sequence: `\\C`'],
  ['\\p{Klingon}', 'error parsing regexp: invalid character class range: `\\p{Klingon}`'],
  ['[[:foo:]]', 'error parsing regexp: invalid character class range: `[:foo:]`'],
  ['[z-a]', 'error parsing regexp: invalid character class range: `z-a`'],
  ['x{1001}', 'error parsing regexp: invalid repeat count: `{1001}`'],
  ['a{2,1}', 'error parsing regexp: invalid repeat count: `{2,1}`'],
  ['+', 'error parsing regexp: missing argument to repetition operator: `+`'],
  ['(', 'error parsing regexp: missing closing ): `(`'],
  ['a)', 'error parsing regexp: unexpected ): `a)`'],
  ['[a', 'error parsing regexp: missing closing ]: `[a`'],
  ['(?i', 'error parsing regexp: invalid or unsupported Perl syntax: `(?i`'],
  // Go prints an empty expression, and the whole pattern when it is too big
  ['a\\', 'error parsing regexp: trailing backslash at end of expression: ``'],
  ['((((((((((a{2}){2}){2}){2}){2}){2}){2}){2}){2}){2})', 'error parsing regexp: invalid repeat count: `{2}`'],
];

describe('Go regexp (RE2) on re2js', () => {
  it('matches as regexp.MatchString does', () => {
    for (const [p, s, want] of MATCHES) {
      const c = compileRegexp(p);
      assert.equal(c.error, undefined, `${p} should compile`);
      assert.equal(c.re.test(s), want, `${JSON.stringify(p)} on ${JSON.stringify(s)}`);
    }
  });

  it("refuses what regexp.Compile refuses, with Go's error text", () => {
    for (const [p, want] of REFUSED) assert.equal(compileRegexp(p).error, want, JSON.stringify(p));
  });

  it("reports Go's whole pattern for an expression too large or nested too deeply", () => {
    // regexp/syntax's own test cases for its limits
    const large = '(xx?){1000}'.repeat(1000);
    assert.equal(compileRegexp(large).error, `error parsing regexp: expression too large: \`${large}\``);
    const deep = `${'('.repeat(1000)}${')'.repeat(1000)}`;
    assert.equal(compileRegexp(deep).error, `error parsing regexp: expression nests too deeply: \`${deep}\``);
  });

  it('throws RegexpSyntaxError from mustCompileRegexp and caches both outcomes', () => {
    assert.throws(
      () => mustCompileRegexp('(?=a)'),
      (e: unknown) => e instanceof RegexpSyntaxError && /`\(\?=`$/.test(e.message),
    );
    assert.equal(compileRegexp('^a$'), compileRegexp('^a$'));
    assert.equal(compileRegexp('(').error, compileRegexp('(').error);
  });

  it('finds the leftmost match; (?U) makes it the shortest', () => {
    assert.equal(findString(mustCompileRegexp('a+'), 'baaa'), 'aaa');
    assert.equal(findString(mustCompileRegexp('(?U)a+'), 'baaa'), 'a');
    assert.equal(findString(mustCompileRegexp('a+?'), 'baaa'), 'a');
    assert.equal(findString(mustCompileRegexp('(?U)a+?'), 'baaa'), 'aaa');
    assert.equal(findString(mustCompileRegexp('x'), 'baaa'), '');
    // leftmost-first, not leftmost-longest
    assert.equal(findString(mustCompileRegexp('a|ab'), 'ab'), 'a');
  });

  it('finds all matches as FindAllString, skipping an empty match that abuts the previous one', () => {
    assert.deepEqual(findAllString(mustCompileRegexp('a*'), 'baaac', -1), ['', 'aaa', '']);
    assert.deepEqual(findAllString(mustCompileRegexp('a*'), 'baaa', -1), ['', 'aaa']);
    assert.deepEqual(findAllString(mustCompileRegexp(''), 'abc', -1), ['', '', '', '']);
    assert.deepEqual(findAllString(mustCompileRegexp('x*'), '😀x😀', -1), ['', 'x', '']);
    assert.deepEqual(findAllString(mustCompileRegexp('[0-9]+'), 'a1b22c333', 2), ['1', '22']);
    assert.deepEqual(findAllString(mustCompileRegexp('[0-9]+'), 'a1b22c333', 0), []);
  });

  it('drops capture names only at group openings', () => {
    assert.equal(withoutCaptureNames('(?P<a>x)(?<b>y)'), '(x)(y)');
    assert.equal(withoutCaptureNames('\\(?P<a>x)'), '\\(?P<a>x)');
    assert.equal(withoutCaptureNames('[(?P<a>]x'), '[(?P<a>]x');
    assert.equal(withoutCaptureNames('[](?P<a>]x'), '[](?P<a>]x');
    assert.equal(withoutCaptureNames('[[:alpha:]](?P<a>x)'), '[[:alpha:]](x)');
    assert.equal(withoutCaptureNames('\\Q(?P<a>\\E(?P<a>x)'), '\\Q(?P<a>\\E(x)');
  });
});
