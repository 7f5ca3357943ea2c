// encoding/json's scanner (scanner.go) for its verdict on text: where a value ends, or the first
// byte it refuses and Go's words for it. One state machine serves json.Unmarshal (the text must
// hold exactly one value) and json.Decoder (the stream's next value; what follows is the next
// call's business). Hot paths parse with JSON.parse and ask this only for the error of text that
// JSON.parse refused, or for a stream's value boundaries.
import { goQuote } from './strconv.js';

/** encoding/json's maxNestingDepth. */
export const MAX_NESTING_DEPTH = 10000;

/**
 * Go's quoteChar of the byte `c`: `'x'`, escaped as strconv.Quote escapes string(rune(c)), so the
 * first byte of "é" is 'Ã'. Scan latin1-decoded text to get Go's bytes.
 */
export function quoteChar(c: number): string {
  if (c === 0x27) return `'\\''`;
  if (c === 0x22) return `'"'`;
  return `'${goQuote(String.fromCharCode(c)).slice(1, -1)}'`;
}

/**
 * The API server's quoting of a UTF-16 character (kplane's messages for request bodies, pinned by
 * their tests): as JSON.stringify escapes it, so a control character reads '\u0001' where Go
 * prints '\x01'.
 */
export function quoteCharAsJSON(c: number): string {
  if (c === 0x27) return `'\\''`;
  if (c === 0x22) return `'"'`;
  return `'${JSON.stringify(String.fromCharCode(c)).slice(1, -1)}'`;
}

export type ScanResult =
  /** the value ends before `end` */
  | { readonly kind: 'ok'; readonly end: number }
  /** the text ends inside a value (or, reading a whole text, before any) */
  | { readonly kind: 'eof' }
  /** `offset`: index of the refused character; Go's SyntaxError.Offset counts it too (offset + 1) */
  | { readonly kind: 'error'; readonly offset: number; readonly message: string };

export interface ScanOptions {
  /** nesting beyond which Go fails ("exceeded max depth"); MAX_NESTING_DEPTH by default */
  readonly maxDepth?: number;
  /** json.Decoder: stop after the first value; otherwise only space may follow it (json.Unmarshal) */
  readonly stream?: boolean;
  /** how the refused character is quoted: quoteChar (Go's, on bytes) by default */
  readonly quote?: (c: number) => string;
}

/**
 * Index of the quote that ends the string whose contents start at `from` (just after its opening
 * quote), or -1 when none does: a quote counts unless an odd number of backslashes precedes it.
 * Only for finding boundaries fast; it does not check what is inside.
 */
export function closingQuote(text: string, from: number): number {
  let j = from;
  for (;;) {
    const q = text.indexOf('"', j);
    if (q < 0) return -1;
    let b = q - 1;
    while (b >= from && text.charCodeAt(b) === 92) b--;
    if ((q - 1 - b) % 2 === 0) return q;
    j = q + 1;
  }
}

const isDigit = (c: number): boolean => c >= 48 && c <= 57;
const isHex = (c: number): boolean => isDigit(c) || (c >= 97 && c <= 102) || (c >= 65 && c <= 70);
const isSpace = (c: number): boolean => c === 32 || c === 9 || c === 10 || c === 13;

class Refused {
  constructor(
    readonly offset: number,
    readonly context: string,
  ) {}
}

/**
 * Scans the JSON value at text[from:] (after space) as Go's scanner does. Index `i` of text is
 * Go's byte i when text is latin1-decoded bytes.
 */
export function scanJSON(text: string, from = 0, opts: ScanOptions = {}): ScanResult {
  const maxDepth = opts.maxDepth ?? MAX_NESTING_DEPTH;
  const n = text.length;
  let i = from;
  const fail = (at: number, context: string): never => {
    throw new Refused(at, context);
  };
  const skipSpace = (): void => {
    while (i < n && isSpace(text.charCodeAt(i))) i++;
  };
  const literal = (word: string): void => {
    for (let k = 1; k < word.length; k++) {
      if (text.charCodeAt(i + k) !== word.charCodeAt(k)) fail(i + k, `in literal ${word} (expecting ${quoteChar(word.charCodeAt(k))})`);
    }
    i += word.length;
  };
  const str = (): void => {
    i++; // opening quote
    for (;;) {
      if (i >= n) fail(i, '');
      const c = text.charCodeAt(i);
      if (c === 34) {
        i++;
        return;
      }
      if (c < 0x20) fail(i, 'in string literal');
      if (c === 92) {
        const e = text.charCodeAt(i + 1);
        if (e === 117) {
          // \u and four hex digits
          for (let k = 2; k < 6; k++) if (!isHex(text.charCodeAt(i + k))) fail(i + k, 'in \\u hexadecimal character escape');
          i += 6;
          continue;
        }
        if (i + 1 >= n) fail(i + 1, '');
        if (!(e === 34 || e === 92 || e === 47 || e === 98 || e === 102 || e === 110 || e === 114 || e === 116)) fail(i + 1, 'in string escape code');
        i += 2;
        continue;
      }
      i++;
    }
  };
  const num = (): void => {
    if (text.charCodeAt(i) === 45) i++;
    if (text.charCodeAt(i) === 48) i++;
    else if (isDigit(text.charCodeAt(i))) while (isDigit(text.charCodeAt(i))) i++;
    else fail(i, 'in numeric literal');
    if (text.charCodeAt(i) === 46) {
      i++;
      if (!isDigit(text.charCodeAt(i))) fail(i, 'after decimal point in numeric literal');
      while (isDigit(text.charCodeAt(i))) i++;
    }
    const e = text.charCodeAt(i);
    if (e === 101 || e === 69) {
      i++;
      const s = text.charCodeAt(i);
      if (s === 43 || s === 45) i++;
      if (!isDigit(text.charCodeAt(i))) fail(i, 'in exponent of numeric literal');
      while (isDigit(text.charCodeAt(i))) i++;
    }
  };
  // Open objects and arrays, true for an object; bounded by maxDepth, so no recursion on hostile input.
  const stack: boolean[] = [];
  let justOpened = false;
  const value = (): void => {
    skipSpace();
    if (i >= n) fail(i, '');
    const c = text.charCodeAt(i);
    if (c === 123 || c === 91) {
      if (stack.length >= maxDepth) fail(i, 'exceeded max depth');
      stack.push(c === 123);
      justOpened = true;
      i++;
    } else if (c === 34) str();
    else if (c === 45 || isDigit(c)) num();
    else if (c === 116) literal('true');
    else if (c === 102) literal('false');
    else if (c === 110) literal('null');
    else fail(i, 'looking for beginning of value');
  };
  try {
    value();
    // After each value, what may follow is decided by the innermost open object or array.
    for (;;) {
      if (stack.length === 0) {
        if (opts.stream) return { kind: 'ok', end: i };
        skipSpace();
        if (i < n) fail(i, 'after top-level value');
        return { kind: 'ok', end: i };
      }
      skipSpace();
      const inObject = stack[stack.length - 1]!;
      const close = inObject ? 125 : 93;
      const fresh = justOpened;
      justOpened = false;
      if (text.charCodeAt(i) === close) {
        stack.pop();
        i++;
        continue;
      }
      if (!fresh) {
        if (i < n && text.charCodeAt(i) !== 44) fail(i, inObject ? 'after object key:value pair' : 'after array element');
        i++;
        if (inObject) skipSpace();
      }
      if (inObject) {
        if (i < n && text.charCodeAt(i) !== 34) fail(i, 'looking for beginning of object key string');
        if (i >= n) fail(i, '');
        str();
        skipSpace();
        if (i < n && text.charCodeAt(i) !== 58) fail(i, 'after object key');
        i++;
      }
      value();
    }
  } catch (e) {
    if (!(e instanceof Refused)) throw e;
    if (e.offset >= n) return { kind: 'eof' };
    const quote = opts.quote ?? quoteChar;
    return { kind: 'error', offset: e.offset, message: `invalid character ${quote(text.charCodeAt(e.offset))} ${e.context}` };
  }
}
