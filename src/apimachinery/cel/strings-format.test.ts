// cel-go's documented string.format examples (ext/strings.go) and its error texts.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { assertCelFails as fails, celEvaluate as evaluate } from '../../../test/support/cel.js';
import { checkConstantPatterns } from './expressions.js';
import { baseEnvironment } from './library.js';
import { parseCel } from './source.js';

/** What compiling says of an expression once type-checked (cel-go's AST validators), first line. */
function compileError(e: string): string | undefined {
  const p = parseCel(baseEnvironment().clone().registerVariable('object', 'dyn'), e);
  p.check();
  return checkConstantPatterns(p.ast, e)?.split('\n')[0];
}

describe('string.format', () => {
  it("formats cel-go's examples", () => {
    assert.equal(evaluate('"this is a string: %s\\nand an integer: %d".format(["str", 42])'), 'this is a string: str\nand an integer: 42');
    assert.equal(evaluate('"a double substituted with %%s: %s".format([64.2])'), 'a double substituted with %s: 64.2');
    assert.equal(evaluate('"string type: %s".format([string])'), 'string type: string');
    assert.equal(evaluate('"timestamp: %s".format([timestamp("2023-02-03T23:31:20+00:00")])'), 'timestamp: 2023-02-03T23:31:20Z');
    assert.equal(evaluate('"duration: %s".format([duration("1h45m47s")])'), 'duration: 6347s');
    assert.equal(evaluate('"%f".format([3.14])'), '3.140000');
    assert.equal(evaluate('"%e".format([2.71828])'), '2.718280\u202fe+00');
    assert.equal(evaluate('"%b".format([5])'), '101');
    assert.equal(evaluate('"%x".format(["hello"])'), '68656c6c6f');
    assert.equal(evaluate('"%X".format([255])'), 'FF');
    assert.equal(evaluate('"%o".format([8])'), '10');
  });

  it('lists and maps print as CEL literals; %f groups thousands; a precision', () => {
    assert.equal(evaluate('"%s".format([["abc", 1, 2.5, b"x", null, true]])'), '["abc", 1, 2.500000, b"x", null, true]');
    assert.equal(evaluate('"%s".format([{"b": 2, "a": [1]}])'), '{"a":[1], "b":2}');
    assert.equal(evaluate('"%.2f".format([1234.5])'), '1,234.50');
    assert.equal(evaluate('"%.0f".format([2.5])'), '2');
    assert.equal(evaluate('"%.0f".format([3.5])'), '4');
    assert.equal(evaluate('"%.2f".format([0.125])'), '0.12');
    assert.equal(evaluate('"%.1f".format([0.35])'), '0.3');
    assert.equal(evaluate('"%d %d".format([-3, 7u])'), '-3 7');
  });

  it("prints a double as Go does: %s as string(double) ('g', shortest), %f past 1e21, ties in lists to even", () => {
    assert.equal(evaluate('"%s".format([123456789.123])'), '1.23456789123e+08');
    assert.equal(evaluate('"%s".format([1e20])'), '1e+20');
    assert.equal(evaluate('"%s".format([-0.0])'), '-0');
    assert.equal(evaluate('"%s".format([[0.0078125, 1e21]])'), '[0.007812, 1000000000000000000000.000000]');
    assert.equal(evaluate('"%f".format([1e21])'), '1,000,000,000,000,000,000,000.000000');
  });

  it('refuses as cel-go does, with its texts', () => {
    fails('"%d".format(["a"])', 'error during formatting: decimal clause can only be used on integers, was given string');
    fails('"%f".format([1])', 'error during formatting: fixed-point clause can only be used on doubles, was given int');
    fails('"%z".format([1])', 'could not parse formatting clause: unrecognized formatting clause "z"');
    fails('"%s %s".format(["a"])', 'index 1 out of range');
  });
});

describe('string.format checked when compiled (cel-go stringFormatValidator)', () => {
  it('refuses a constant format string that does not fit its literal arguments, where cel-go points', () => {
    assert.equal(
      compileError("'%d'.format(['a']) == ''"),
      'compilation failed: ERROR: <input>:1:14: error during formatting: decimal clause can only be used on integers, was given string',
    );
    assert.equal(compileError("'%s and %s'.format([1]) == ''"), 'compilation failed: ERROR: <input>:1:19: index 1 out of range');
    assert.equal(
      compileError("'%s'.format([1, 2]) == ''"),
      'compilation failed: ERROR: <input>:1:12: too many arguments supplied to string.format (expected 1, got 2)',
    );
    assert.equal(
      compileError("'%q'.format([1]) == ''"),
      'compilation failed: ERROR: <input>:1:12: could not parse formatting clause: unrecognized formatting clause "q"',
    );
    assert.equal(compileError("'abc %'.format([1]) == ''"), 'compilation failed: ERROR: <input>:1:15: unexpected end of string');
    assert.equal(
      compileError("'%s'.format([[optional.of(1)]]) == ''"),
      'compilation failed: ERROR: <input>:1:15: error during formatting: string clause can only be used on strings, bools, bytes, ints, doubles, maps, lists, types, durations, and timestamps, was given optional_type',
    );
  });

  it('accepts what fits, and leaves dyn arguments and non-constant formats to run time', () => {
    assert.equal(compileError("'%s %d %f %e %b %o %x %X %%'.format(['a', 1, 1.0, 2.0, true, 8, 'hi', 255]) == ''"), undefined);
    assert.equal(compileError("'%d items'.format([object.count]) == ''"), undefined);
    assert.equal(compileError("object.fmt.format([1, 2]) == ''"), undefined);
    assert.equal(compileError("'%d'.format(object.args) == ''"), undefined);
  });
});

describe('strings.quote', () => {
  it('quotes as a CEL string literal', () => {
    assert.equal(evaluate('strings.quote("first\\nsecond")'), '"first\\nsecond"');
    assert.equal(evaluate('strings.quote("bell\\a")'), '"bell\\a"');
    assert.equal(evaluate('strings.quote("\\"quoted\\" \\\\ ü")'), '"\\"quoted\\" \\\\ ü"');
  });
});
