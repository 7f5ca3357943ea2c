// YAML text exactly as sigs.k8s.io/yaml's JSONToYAML writes it: the JSON is read back by go-yaml v2
// (integers become ints, other numbers float64, maps get yaml.v2's "natural" key order) and written
// by go-yaml v2's emitter (libyaml's rules: 2-space indent, sequences in mappings not indented,
// plain scalars unless they would read back as something else, line folding past column 80,
// literal blocks for multi-line strings, double quotes with \x/\u/\U escapes for the rest).
import { goKeys, goNumber, setMember } from './json.js';
import { formatFloat64 } from './strconv.js';
import { plainTag } from './yaml-read.js';

/** One YAML document (no `---`) for a decoded JSON value, as JSONToYAML(json.Marshal(v)) gives it. */
export function jsonToYAML(value: unknown): string {
  checkReadable(value);
  const e = new Emitter();
  e.document(foldNEL(value));
  return e.out.join('');
}

/**
 * go-yaml's reader refuses characters YAML does not allow in a stream; JSON leaves DEL, the C1
 * controls (but NEL) and U+FFFE/U+FFFF unescaped, so JSONToYAML fails on them, and so does opm.
 */
const NOT_ALLOWED = /[\u007f-\u0084\u0086-\u009f\ufffe\uffff]/;
function checkReadable(value: unknown): void {
  const state = { breaks: 0 };
  walkReadable(value, state);
}

/**
 * In JSON text order: a string with a disallowed character fails the read; NEL is a line break to
 * go-yaml, and a key spanning lines is no simple key, so the flow mapping fails to parse there.
 */
function walkReadable(value: unknown, state: { breaks: number }): void {
  if (typeof value === 'string') {
    if (NOT_ALLOWED.test(value)) throw new Error('yaml: control characters are not allowed');
    state.breaks += countNEL(value);
  } else if (Array.isArray(value)) {
    for (const v of value) walkReadable(v, state);
  } else if (typeof value === 'object' && value !== null) {
    const obj = value as Record<string, unknown>;
    for (const k of goKeys(obj)) {
      if (obj[k] === undefined) continue;
      if (NOT_ALLOWED.test(k)) throw new Error('yaml: control characters are not allowed');
      const n = countNEL(k);
      state.breaks += n;
      if (n > 0) throw new Error(`yaml: line ${state.breaks}: did not find expected ',' or '}'`);
      walkReadable(obj[k], state);
    }
  }
}

function countNEL(s: string): number {
  let n = 0;
  for (let i = s.indexOf('\u0085'); i >= 0; i = s.indexOf('\u0085', i + 1)) n++;
  return n;
}

/**
 * Go's JSON leaves NEL (U+0085) unescaped; go-yaml reads the JSON strings as double-quoted scalars,
 * where NEL is a line break: spaces before it are dropped, blanks after it skipped, and one break
 * folds to a space, n breaks to n-1 newlines.
 */
function foldNEL(value: unknown): unknown {
  if (typeof value === 'string') return value.includes('\u0085') ? value.replace(/ *\u0085[ \u0085]*/g, foldRun) : value;
  if (Array.isArray(value)) return value.some(hasNEL) ? value.map(foldNEL) : value;
  if (typeof value === 'object' && value !== null) {
    if (!hasNEL(value)) return value;
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) setMember(out, foldNEL(k) as string, foldNEL(v));
    return out;
  }
  return value;
}

function foldRun(run: string): string {
  let n = 0;
  for (const c of run) if (c === '\u0085') n++;
  return n === 1 ? ' ' : '\n'.repeat(n - 1);
}

function hasNEL(value: unknown): boolean {
  if (typeof value === 'string') return value.includes('\u0085');
  if (Array.isArray(value)) return value.some(hasNEL);
  if (typeof value === 'object' && value !== null) return Object.entries(value).some(([k, v]) => k.includes('\u0085') || hasNEL(v));
  return false;
}

// ---- scalars: what a Go value becomes after the JSON → yaml.v2 round trip ----

const INT64_MIN = -(1n << 63n);
const INT64_MAX = (1n << 63n) - 1n;
const UINT64_MAX = (1n << 64n) - 1n;

/** A JSON number as yaml.v2 re-emits it: ints (int64/uint64) as decimals, floats with %g. */
function numberScalar(n: number): string {
  const text = goNumber(n);
  if (/^-?[0-9]+$/.test(text)) {
    const b = BigInt(text);
    if ((b >= INT64_MIN && b <= INT64_MAX) || (b >= 0n && b <= UINT64_MAX)) return b.toString();
  }
  return formatFloat64(n); // JSON numbers are finite
}

const BASE60_FLOAT = /^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$/;

/** yaml.v2 resolve("", s) gives !!str, and s is no base-60 float: the string may go unquoted. */
function resolvesToStr(s: string): boolean {
  return plainTag(s) === 'str' && !BASE60_FLOAT.test(s);
}

// ---- yaml.v2 key order (sorter.go keyList.Less, for string keys) ----

const LETTER = /^\p{L}$/u;
const DIGIT = /^\p{Nd}$/u;

const ASCII = /^[\x00-\x7f]*$/;

/** yamlKeyLess for ASCII strings, on char codes. */
function isAsciiLetter(c: number): boolean {
  return (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a);
}
function isAsciiDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
}

function asciiKeyLess(a: string, b: string): boolean {
  const isLetter = isAsciiLetter;
  const isDigit = isAsciiDigit;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    const al = isLetter(x);
    const bl = isLetter(y);
    if (al && bl) return x < y;
    if (al || bl) return bl;
    let an = 0;
    let bn = 0;
    if (x === 0x30 || y === 0x30) {
      for (let j = i - 1; j >= 0 && isDigit(a.charCodeAt(j)); j--) {
        if (a.charCodeAt(j) !== 0x30) {
          an = 1;
          bn = 1;
          break;
        }
      }
    }
    let ai = i;
    for (; ai < a.length && isDigit(a.charCodeAt(ai)); ai++) an = an * 10 + (a.charCodeAt(ai) - 48);
    let bi = i;
    for (; bi < b.length && isDigit(b.charCodeAt(bi)); bi++) bn = bn * 10 + (b.charCodeAt(bi) - 48);
    if (ai - i > 15 || bi - i > 15) return slowKeyLess(a, b); // beyond exact doubles: int64 arithmetic
    if (an !== bn) return an < bn;
    if (ai !== bi) return ai < bi;
    return x < y;
  }
  return a.length < b.length;
}

export function yamlKeyLess(a: string, b: string): boolean {
  if (ASCII.test(a) && ASCII.test(b)) return asciiKeyLess(a, b);
  return slowKeyLess(a, b);
}

function slowKeyLess(a: string, b: string): boolean {
  const ar = Array.from(a);
  const br = Array.from(b);
  for (let i = 0; i < ar.length && i < br.length; i++) {
    if (ar[i] === br[i]) continue;
    const al = LETTER.test(ar[i]!);
    const bl = LETTER.test(br[i]!);
    if (al && bl) return ar[i]!.codePointAt(0)! < br[i]!.codePointAt(0)!;
    if (al || bl) return bl;
    let an = 0n;
    let bn = 0n;
    if (ar[i] === '0' || br[i] === '0') {
      for (let j = i - 1; j >= 0 && DIGIT.test(ar[j]!); j--) {
        if (ar[j] !== '0') {
          an = 1n;
          bn = 1n;
          break;
        }
      }
    }
    let ai = i;
    for (; ai < ar.length && DIGIT.test(ar[ai]!); ai++) an = an * 10n + BigInt(ar[ai]!.codePointAt(0)! - 48);
    let bi = i;
    for (; bi < br.length && DIGIT.test(br[bi]!); bi++) bn = bn * 10n + BigInt(br[bi]!.codePointAt(0)! - 48);
    if (an !== bn) return an < bn;
    if (ai !== bi) return ai < bi;
    return ar[i]!.codePointAt(0)! < br[i]!.codePointAt(0)!;
  }
  return ar.length < br.length;
}

function yamlKeyCompare(a: string, b: string): number {
  return yamlKeyLess(a, b) ? -1 : yamlKeyLess(b, a) ? 1 : 0;
}

// ---- the emitter (libyaml's, as go-yaml v2 has it), for block style output of plain data ----

type Style = 'plain' | 'single' | 'double' | 'literal';

interface ScalarAnalysis {
  /** the scalar's text (lone surrogates, which Go's JSON turns into U+FFFD, replaced) */
  text: string;
  chars: number[]; // code points
  multiline: boolean;
  flowPlainAllowed: boolean;
  blockPlainAllowed: boolean;
  singleQuotedAllowed: boolean;
  blockAllowed: boolean;
}

const BEST_INDENT = 2;
const BEST_WIDTH = 80;

function isBreak(c: number): boolean {
  return c === 0x0d || c === 0x0a || c === 0x85 || c === 0x2028 || c === 0x2029;
}
function isBlank(c: number | undefined): boolean {
  return c === 0x20 || c === 0x09;
}
function isPrintable(c: number): boolean {
  return c === 0x0a || (c >= 0x20 && c <= 0x7e) || (c >= 0xa0 && c <= 0xd7ff) || (c >= 0xe000 && c <= 0xfffd && c !== 0xfeff);
}

/** Index of the last space that is neither the first nor the last character (a fold point), or -1. */
function innerLastSpace(v: number[]): number {
  for (let i = v.length - 2; i > 0; i--) if (v[i] === 0x20) return i;
  return -1;
}

/** A character written as itself inside double quotes. */
function plainInQuotes(c: number): boolean {
  return isPrintable(c) && !isBreak(c) && c !== 0x22 && c !== 0x5c;
}

function codePoints(s: string): number[] {
  const out: number[] = [];
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        out.push(((c - 0xd800) << 10) + (d - 0xdc00) + 0x10000);
        i++;
        continue;
      }
    }
    out.push(c >= 0xd800 && c <= 0xdfff ? 0xfffd : c);
  }
  return out;
}

// indicator characters: at the start of a scalar (both contexts), later on (flow context)
const FIRST_BOTH = 1;
const LATER_FLOW = 2;
const OTHER = 4;
const INDICATOR = new Uint8Array(128);
for (const ch of '#,[]{}&*!|>\'"%@`') INDICATOR[ch.charCodeAt(0)]! |= FIRST_BOTH;
for (const ch of ',?[]{}') INDICATOR[ch.charCodeAt(0)]! |= LATER_FLOW;
for (const ch of '?:-#') INDICATOR[ch.charCodeAt(0)]! |= OTHER;

function analyzeScalar(s: string): ScalarAnalysis {
  const v = codePoints(s);
  const a: ScalarAnalysis = {
    text: /[\ud800-\udfff]/.test(s) ? String.fromCodePoint(...v) : s,
    chars: v,
    multiline: false,
    flowPlainAllowed: false,
    blockPlainAllowed: true,
    singleQuotedAllowed: true,
    blockAllowed: false,
  };
  if (v.length === 0) return a;
  let blockIndicators = false;
  let flowIndicators = false;
  let lineBreaks = false;
  let specialCharacters = false;
  let leadingSpace = false;
  let leadingBreak = false;
  let trailingSpace = false;
  let trailingBreak = false;
  let breakSpace = false;
  let spaceBreak = false;
  let previousSpace = false;
  let previousBreak = false;
  if (v.length >= 3 && ((v[0] === 0x2d && v[1] === 0x2d && v[2] === 0x2d) || (v[0] === 0x2e && v[1] === 0x2e && v[2] === 0x2e))) {
    blockIndicators = true;
    flowIndicators = true;
  }
  let precededByWhitespace = true;
  for (let i = 0; i < v.length; i++) {
    const c = v[i]!;
    const followedByWhitespace = i + 1 >= v.length || isBlank(v[i + 1]);
    if (c < 0x80 && INDICATOR[c] !== 0) {
      const kind = INDICATOR[c]!;
      if (i === 0) {
        if (kind & FIRST_BOTH) {
          flowIndicators = true;
          blockIndicators = true;
        } else if (c === 0x3f /* ? */ || c === 0x3a /* : */) {
          flowIndicators = true;
          if (followedByWhitespace) blockIndicators = true;
        } else if (c === 0x2d /* - */ && followedByWhitespace) {
          flowIndicators = true;
          blockIndicators = true;
        }
      } else if (kind & LATER_FLOW) {
        flowIndicators = true;
      } else if (c === 0x3a) {
        flowIndicators = true;
        if (followedByWhitespace) blockIndicators = true;
      } else if (c === 0x23 /* # */ && precededByWhitespace) {
        flowIndicators = true;
        blockIndicators = true;
      }
    }
    if (!isPrintable(c)) specialCharacters = true;
    if (c === 0x20) {
      if (i === 0) leadingSpace = true;
      if (i === v.length - 1) trailingSpace = true;
      if (previousBreak) breakSpace = true;
      previousSpace = true;
      previousBreak = false;
    } else if (isBreak(c)) {
      lineBreaks = true;
      if (i === 0) leadingBreak = true;
      if (i === v.length - 1) trailingBreak = true;
      if (previousSpace) spaceBreak = true;
      previousSpace = false;
      previousBreak = true;
    } else {
      previousSpace = false;
      previousBreak = false;
    }
    precededByWhitespace = isBlank(c) || isBreak(c) || c === 0;
  }
  a.multiline = lineBreaks;
  a.flowPlainAllowed = true;
  a.blockPlainAllowed = true;
  a.singleQuotedAllowed = true;
  a.blockAllowed = true;
  if (leadingSpace || leadingBreak || trailingSpace || trailingBreak) {
    a.flowPlainAllowed = false;
    a.blockPlainAllowed = false;
  }
  if (trailingSpace) a.blockAllowed = false;
  if (breakSpace) {
    a.flowPlainAllowed = false;
    a.blockPlainAllowed = false;
    a.singleQuotedAllowed = false;
  }
  if (spaceBreak || specialCharacters) {
    a.flowPlainAllowed = false;
    a.blockPlainAllowed = false;
    a.singleQuotedAllowed = false;
    a.blockAllowed = false;
  }
  if (lineBreaks) {
    a.flowPlainAllowed = false;
    a.blockPlainAllowed = false;
  }
  if (flowIndicators) a.flowPlainAllowed = false;
  if (blockIndicators) a.blockPlainAllowed = false;
  return a;
}

interface Scalar {
  analysis: ScalarAnalysis;
  style: Style; // as the encoder asked for it
}

/** encoder.stringv / intv / floatv / boolv / nilv: the scalar and the style asked for. */
function scalarOf(value: unknown): Scalar {
  if (value === null || value === undefined) return { analysis: analyzeScalar('null'), style: 'plain' };
  if (typeof value === 'boolean') return { analysis: analyzeScalar(value ? 'true' : 'false'), style: 'plain' };
  if (typeof value === 'number') return { analysis: analyzeScalar(numberScalar(value)), style: 'plain' };
  if (typeof value === 'bigint') return { analysis: analyzeScalar(value.toString()), style: 'plain' };
  const s = String(value);
  const canUsePlain = resolvesToStr(s);
  const style: Style = s.includes('\n') ? 'literal' : canUsePlain ? 'plain' : 'double';
  return { analysis: analyzeScalar(s), style };
}

class Emitter {
  readonly out: string[] = [];
  private column = 0;
  private indent = -1;
  private readonly indents: number[] = [];
  private whitespace = true;
  private indention = true;
  private flowLevel = 0;
  private mappingContext = false;
  private simpleKeyContext = false;

  document(value: unknown): void {
    this.node(value, false, false, false);
    // document end: implicit, so only the final line break
    this.writeIndent();
  }

  // -- output primitives --
  private put(s: string): void {
    this.out.push(s);
    this.column++;
  }
  private putBreak(): void {
    this.out.push('\n');
    this.column = 0;
  }
  private writeChar(c: number): void {
    this.out.push(String.fromCodePoint(c));
    this.column++;
  }
  private writeBreakChar(c: number): void {
    if (c === 0x0a) this.putBreak();
    else {
      this.writeChar(c);
      this.column = 0;
    }
  }
  private increaseIndent(flow: boolean, indentless: boolean): void {
    this.indents.push(this.indent);
    if (this.indent < 0) this.indent = flow ? BEST_INDENT : 0;
    else if (!indentless) this.indent += BEST_INDENT;
  }
  private popIndent(): void {
    this.indent = this.indents.pop()!;
  }
  private writeIndent(): void {
    const indent = this.indent < 0 ? 0 : this.indent;
    if (!this.indention || this.column > indent || (this.column === indent && !this.whitespace)) this.putBreak();
    if (this.column < indent) {
      this.out.push(' '.repeat(indent - this.column));
      this.column = indent;
    }
    this.whitespace = true;
    this.indention = true;
  }
  private writeIndicator(indicator: string, needWhitespace: boolean, isWhitespace: boolean, isIndention: boolean): void {
    if (needWhitespace && !this.whitespace) this.put(' ');
    for (const ch of indicator) this.put(ch);
    this.whitespace = isWhitespace;
    this.indention = this.indention && isIndention;
  }

  // -- nodes --
  private node(value: unknown, sequence: boolean, mapping: boolean, simpleKey: boolean, scalar?: Scalar): void {
    this.mappingContext = mapping;
    this.simpleKeyContext = simpleKey;
    void sequence;
    if (Array.isArray(value)) {
      if (value.length === 0 || this.flowLevel > 0) this.emptyFlow('[', ']');
      else this.blockSequence(value);
    } else if (typeof value === 'object' && value !== null) {
      const obj = value as Record<string, unknown>;
      const keys = Object.keys(obj).filter((k) => obj[k] !== undefined);
      if (keys.length === 0 || this.flowLevel > 0) this.emptyFlow('{', '}');
      else this.blockMapping(obj, keys);
    } else {
      this.scalar(scalar ?? scalarOf(value));
    }
  }

  private emptyFlow(open: string, close: string): void {
    this.writeIndicator(open, true, true, false);
    this.increaseIndent(true, false);
    this.flowLevel++;
    this.flowLevel--;
    this.popIndent();
    this.writeIndicator(close, false, false, false);
  }

  private blockSequence(items: unknown[]): void {
    this.increaseIndent(false, this.mappingContext && !this.indention);
    for (const item of items) {
      this.writeIndent();
      this.writeIndicator('-', true, false, true);
      this.node(item, true, false, false);
    }
    this.popIndent();
  }

  private blockMapping(obj: Record<string, unknown>, keys: string[]): void {
    this.increaseIndent(false, false);
    keys.sort(yamlKeyCompare);
    for (const k of keys) {
      this.writeIndent();
      const key = scalarOf(k);
      // check_simple_key: a one-line scalar of at most 128 bytes
      const simple = !key.analysis.multiline && Buffer.byteLength(k) <= 128;
      if (simple) {
        this.node(k, false, true, true, key);
        this.writeIndicator(':', false, false, false);
      } else {
        this.writeIndicator('?', true, false, true);
        this.node(k, false, true, false, key);
        this.writeIndent();
        this.writeIndicator(':', true, false, true);
      }
      this.node(obj[k], false, true, false);
    }
    this.popIndent();
  }

  private scalar(sc: Scalar): void {
    const a = sc.analysis;
    // select_scalar_style
    let style = sc.style;
    if (this.simpleKeyContext && a.multiline) style = 'double';
    if (style === 'plain') {
      if ((this.flowLevel > 0 && !a.flowPlainAllowed) || (this.flowLevel === 0 && !a.blockPlainAllowed)) style = 'single';
      if (a.chars.length === 0 && (this.flowLevel > 0 || this.simpleKeyContext)) style = 'single';
    }
    if (style === 'single' && !a.singleQuotedAllowed) style = 'double';
    if (style === 'literal' && (!a.blockAllowed || this.flowLevel > 0 || this.simpleKeyContext)) style = 'double';

    this.increaseIndent(true, false);
    const allowBreaks = !this.simpleKeyContext;
    switch (style) {
      case 'plain':
        this.writePlain(a.chars, allowBreaks, a.text);
        break;
      case 'single':
        this.writeSingleQuoted(a.chars, allowBreaks, a.text);
        break;
      case 'double':
        this.writeDoubleQuoted(a.chars, allowBreaks, a.text);
        break;
      case 'literal':
        this.writeLiteral(a.chars);
        break;
    }
    this.popIndent();
  }

  private writePlain(v: number[], allowBreaks: boolean, text: string): void {
    if (!this.whitespace) this.put(' ');
    // no space past the fold column: the text goes out as it is
    if (!allowBreaks || this.column + v.lastIndexOf(0x20) <= BEST_WIDTH) {
      this.out.push(text);
      this.column += v.length;
      this.whitespace = false;
      this.indention = false;
      return;
    }
    let spaces = false;
    let breaks = false;
    for (let i = 0; i < v.length; i++) {
      const c = v[i]!;
      if (c === 0x20) {
        if (allowBreaks && !spaces && this.column > BEST_WIDTH && v[i + 1] !== 0x20) this.writeIndent();
        else this.writeChar(c);
        spaces = true;
      } else if (isBreak(c)) {
        if (!breaks && c === 0x0a) this.putBreak();
        this.writeBreakChar(c);
        this.indention = true;
        breaks = true;
      } else {
        if (breaks) this.writeIndent();
        this.writeChar(c);
        this.indention = false;
        spaces = false;
        breaks = false;
      }
    }
    this.whitespace = false;
    this.indention = false;
  }

  private writeSingleQuoted(v: number[], allowBreaks: boolean, text: string): void {
    this.writeIndicator("'", true, false, false);
    if (!text.includes("'") && !v.some(isBreak) && (!allowBreaks || this.column + innerLastSpace(v) <= BEST_WIDTH)) {
      this.out.push(text, "'");
      this.column += v.length + 1;
      this.whitespace = false;
      this.indention = false;
      return;
    }
    let spaces = false;
    let breaks = false;
    for (let i = 0; i < v.length; i++) {
      const c = v[i]!;
      if (c === 0x20) {
        if (allowBreaks && !spaces && this.column > BEST_WIDTH && i > 0 && i < v.length - 1 && v[i + 1] !== 0x20) this.writeIndent();
        else this.writeChar(c);
        spaces = true;
      } else if (isBreak(c)) {
        if (!breaks && c === 0x0a) this.putBreak();
        this.writeBreakChar(c);
        this.indention = true;
        breaks = true;
      } else {
        if (breaks) this.writeIndent();
        if (c === 0x27) this.put("'");
        this.writeChar(c);
        this.indention = false;
        spaces = false;
        breaks = false;
      }
    }
    this.writeIndicator("'", false, false, false);
    this.whitespace = false;
    this.indention = false;
  }

  private writeDoubleQuoted(v: number[], allowBreaks: boolean, text: string): void {
    this.writeIndicator('"', true, false, false);
    if (v[0] !== 0xfeff && v.every(plainInQuotes) && (!allowBreaks || this.column + innerLastSpace(v) <= BEST_WIDTH)) {
      this.out.push(text, '"');
      this.column += v.length + 1;
      this.whitespace = false;
      this.indention = false;
      return;
    }
    let spaces = false;
    // libyaml's is_bom looks at the start of the value, not at position i
    const startsWithBOM = v[0] === 0xfeff;
    for (let i = 0; i < v.length; i++) {
      const c = v[i]!;
      if (!isPrintable(c) || startsWithBOM || isBreak(c) || c === 0x22 || c === 0x5c) {
        this.put('\\');
        const short = DOUBLE_ESCAPES.get(c);
        if (short !== undefined) this.put(short);
        else {
          const [letter, width] = c <= 0xff ? ['x', 2] : c <= 0xffff ? ['u', 4] : ['U', 8];
          this.put(letter);
          for (const d of c.toString(16).toUpperCase().padStart(width, '0')) this.put(d);
        }
        spaces = false;
      } else if (c === 0x20) {
        if (allowBreaks && !spaces && this.column > BEST_WIDTH && i > 0 && i < v.length - 1) {
          this.writeIndent();
          if (v[i + 1] === 0x20) this.put('\\');
        } else this.writeChar(c);
        spaces = true;
      } else {
        this.writeChar(c);
        spaces = false;
      }
    }
    this.writeIndicator('"', false, false, false);
    this.whitespace = false;
    this.indention = false;
  }

  private writeLiteral(v: number[]): void {
    this.writeIndicator('|', true, false, false);
    // block scalar hints
    if (v[0] === 0x20 || isBreak(v[0]!)) this.writeIndicator(String(BEST_INDENT), false, false, false);
    let chomp = '';
    const last = v.length - 1;
    if (!isBreak(v[last]!)) chomp = '-';
    else if (last === 0) chomp = '+';
    else if (isBreak(v[last - 1]!)) chomp = '+';
    if (chomp !== '') this.writeIndicator(chomp, false, false, false);
    this.putBreak();
    this.indention = true;
    this.whitespace = true;
    let breaks = true;
    for (const c of v) {
      if (isBreak(c)) {
        this.writeBreakChar(c);
        this.indention = true;
        breaks = true;
      } else {
        if (breaks) this.writeIndent();
        this.writeChar(c);
        this.indention = false;
        breaks = false;
      }
    }
  }
}

const DOUBLE_ESCAPES = new Map<number, string>([
  [0x00, '0'],
  [0x07, 'a'],
  [0x08, 'b'],
  [0x09, 't'],
  [0x0a, 'n'],
  [0x0b, 'v'],
  [0x0c, 'f'],
  [0x0d, 'r'],
  [0x1b, 'e'],
  [0x22, '"'],
  [0x5c, '\\'],
  [0x85, 'N'],
  [0xa0, '_'],
  [0x2028, 'L'],
  [0x2029, 'P'],
]);
