// JSON decoding as the API server needs it, beside Go's own: JSON.parse does the parsing (fast,
// iterative in V8); one extra linear pass finds duplicate keys (sigs.k8s.io/json's strict mode) and
// measures depth (encoding/json's 10000 limit), and notes whether a number is written in a form its
// double does not give back (`1.0`, `1e3`, long integers): only then a second pass records those
// numbers' text (see numberTextAt), which Go's decoder judges by (`json: cannot unmarshal number 1.0
// into Go struct field ... of type int64`). A malformed text gets Go's message from json-scanner.ts
// plus where it went wrong.
import { UNEXPECTED_END_OF_JSON } from './json-errors.js';
import { closingQuote, MAX_NESTING_DEPTH, quoteCharAsJSON, scanJSON } from './json-scanner.js';
import { reviveLongIntegers } from './json-int64.js';

export interface DecodeJSONOptions {
  /** Deepest allowed nesting of objects and arrays; MAX_NESTING_DEPTH by default. */
  readonly maxDepth?: number;
  /** Record number texts (see numberTextAt); default true. */
  readonly numberTexts?: boolean;
  /** Duplicate keys are an error to the caller: with any, record nothing. */
  readonly strict?: boolean;
}

export type DecodedJSON =
  /** duplicateFields: dotted paths of keys seen more than once, in document order (the last value wins) */
  | { readonly value: unknown; readonly duplicateFields: string[]; readonly error?: undefined }
  /** Go's message for malformed or too deeply nested text, with its line and column */
  | { readonly error: string };

/** Decodes one JSON text (see the module comment); never throws for bad input. */
export function decodeJSON(text: string, opts: DecodeJSONOptions = {}): DecodedJSON {
  const maxDepth = opts.maxDepth ?? MAX_NESTING_DEPTH;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { error: describeJsonSyntaxError(text, maxDepth) };
  }
  // Most bodies have neither duplicate keys nor excessive depth: counting keys (a colon outside
  // strings is a key) and comparing with the parsed value proves it without the full scan, which
  // keeps a set of keys per object. Each duplicate makes the parsed value hold fewer keys.
  const keys = countTextKeys(text, maxDepth);
  const scan = keys >= 0 && keys === countKeys(value) ? { duplicates: [], depthExceededAt: -1 } : scanStructure(text, maxDepth);
  if (scan.depthExceededAt >= 0)
    return {
      error: withLocation(
        text,
        scan.depthExceededAt,
        `invalid character ${quoteCharAsJSON(text.charCodeAt(scan.depthExceededAt))} exceeded max depth of ${maxDepth}`,
      ),
    };
  if (opts.strict && scan.duplicates.length) return { value, duplicateFields: scan.duplicates };
  if (value !== null && typeof value === 'object') {
    const texts = opts.numberTexts !== false && textHasOddNumbers;
    if (texts || textHasLongIntegers) recordNumberTexts(text, value, scan.duplicates.length > 0, texts);
  }
  return { value, duplicateFields: scan.duplicates };
}

// ---------------------------------------------------------------------------------------------
// Structure pass over text JSON.parse has accepted: only brackets, commas, colons and strings matter.

interface Frame {
  isObject: boolean;
  /** Current key (object) or element index (array); read only when a duplicate is reported. */
  at: string | number;
  keys: Set<string> | undefined;
}

interface StructureScan {
  duplicates: string[];
  depthExceededAt: number;
}

const QUOTE = 34; // "

/** Index of the closing quote of the string whose opening quote is at `start` (text is valid JSON). */
function stringEnd(text: string, start: number): number {
  return closingQuote(text, start + 1);
}

/** Set by countTextKeys: the text holds a number that needs its text (see needsText). */
let textHasOddNumbers = false;
/** Set by countTextKeys: the text holds an integer of 16 digits or more (maybe past 2^53: a bigint). */
let textHasLongIntegers = false;

/**
 * The number of object keys in `text`, or -1 when it nests deeper than `maxDepth`. Also notes in
 * textHasOddNumbers whether a number has a fraction, an exponent or 16 characters or more.
 */
function countTextKeys(text: string, maxDepth: number): number {
  let keys = 0;
  let depth = 0;
  let odd = false;
  let long = false;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) i = stringEnd(text, i);
    else if (c === 58)
      keys++; // :
    else if (c === 123 || c === 91) {
      if (depth >= maxDepth) {
        textHasOddNumbers = false;
        textHasLongIntegers = false;
        return -1;
      }
      depth++;
    } else if (c === 125 || c === 93) depth--;
    else if (c <= 57 && c >= 45) {
      // '-' or a digit starts a number ('.' and '/' never come first in valid JSON)
      let j = i + 1;
      let d = 0;
      while (j < n && (d = text.charCodeAt(j)) >= 48 && d <= 57) j++;
      if (d === 46 || d === 101 || d === 69) odd = true;
      else if (j - i >= 16) odd = long = true;
      i = j - 1;
    }
  }
  textHasOddNumbers = odd;
  textHasLongIntegers = long;
  return keys;
}

/** The number of keys of all objects in a parsed value (iterative: nesting may be deep). */
function countKeys(v: unknown): number {
  if (v === null || typeof v !== 'object') return 0;
  let keys = 0;
  const stack: unknown[] = [v];
  while (stack.length > 0) {
    const x = stack.pop()!;
    if (Array.isArray(x)) {
      for (let i = 0; i < x.length; i++) {
        const e: unknown = x[i];
        if (e !== null && typeof e === 'object') stack.push(e);
      }
    } else {
      const o = x as { [k: string]: unknown };
      for (const k in o) {
        keys++;
        const e = o[k]!;
        if (e !== null && typeof e === 'object') stack.push(e);
      }
    }
  }
  return keys;
}

/** One pass over valid JSON text: duplicate keys with their paths, and the depth limit. */
function scanStructure(text: string, maxDepth: number): StructureScan {
  const duplicates: string[] = [];
  const stack: Frame[] = [];
  let expectKey = false;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    switch (c) {
      case QUOTE: {
        const end = stringEnd(text, i);
        if (expectKey) {
          const raw = text.slice(i + 1, end);
          const key = raw.includes('\\') ? (JSON.parse(text.slice(i, end + 1)) as string) : raw;
          const frame = stack[stack.length - 1]!;
          frame.keys ??= new Set();
          if (frame.keys.has(key)) {
            frame.at = key;
            duplicates.push(pathOf(stack));
          } else {
            frame.keys.add(key);
            frame.at = key;
          }
          expectKey = false;
        }
        i = end;
        break;
      }
      case 123: // {
      case 91: // [
        if (stack.length >= maxDepth) return { duplicates, depthExceededAt: i };
        stack.push({ isObject: c === 123, at: c === 123 ? '' : 0, keys: undefined });
        expectKey = c === 123;
        break;
      case 125: // }
      case 93: // ]
        stack.pop();
        expectKey = false;
        break;
      case 44: {
        // ,
        const frame = stack[stack.length - 1]!;
        if (frame.isObject) expectKey = true;
        else frame.at = (frame.at as number) + 1;
        break;
      }
      default:
        break;
    }
  }
  return { duplicates, depthExceededAt: -1 };
}

/** One object key of a JSON text, in document order: its dotted path, and whether the object had it already. */
export interface KeyOccurrence {
  readonly path: string;
  readonly repeated: boolean;
}

/**
 * Every object key of valid JSON text in document order (sigs.k8s.io/json's strict decoder meets
 * unknown and duplicate fields in this order). A second walk, made only when a body has problems
 * to report in that order.
 */
export function keyOccurrences(text: string): KeyOccurrence[] {
  const out: KeyOccurrence[] = [];
  const stack: Frame[] = [];
  let expectKey = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      const end = stringEnd(text, i);
      if (expectKey) {
        const raw = text.slice(i + 1, end);
        const key = raw.includes('\\') ? (JSON.parse(text.slice(i, end + 1)) as string) : raw;
        const frame = stack[stack.length - 1]!;
        frame.keys ??= new Set();
        const repeated = frame.keys.has(key);
        frame.keys.add(key);
        frame.at = key;
        out.push({ path: pathOf(stack), repeated });
        expectKey = false;
      }
      i = end;
    } else if (c === 123 || c === 91) {
      stack.push({ isObject: c === 123, at: c === 123 ? '' : 0, keys: undefined });
      expectKey = c === 123;
    } else if (c === 125 || c === 93) {
      stack.pop();
      expectKey = false;
    } else if (c === 44) {
      const frame = stack[stack.length - 1]!;
      if (frame.isObject) expectKey = true;
      else frame.at = (frame.at as number) + 1;
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Number texts. JSON.parse keeps a number's value, not how it was written; Go's decoder judges an
// integer field by the text (strconv.ParseInt refuses `1.0` and `1e3`) and prints it in its errors.
// parseJson records, for the objects and arrays of the value it returns, the text of each number
// that String(value) would not give back, in a table keyed by the holding object or array (weakly:
// it goes with them). Copies (a patch's result, deepCopyJSON) do not carry it.

/** How a number of a parsed body was written. */
export interface NumberText {
  /** The number as the body wrote it (`1.0`, `1e3`, `9007199254740993`). */
  readonly literal: string;
}

const NUMBER_TEXTS = new WeakMap<object, Map<string | number, NumberText>>();
/** Parsed values (roots) for which NUMBER_TEXTS holds anything. */
const WITH_NUMBER_TEXTS = new WeakSet<object>();

/** Whether parseJson recorded number texts anywhere inside `root` (one cheap test per body). */
export function hasNumberTexts(root: unknown): boolean {
  return root !== null && typeof root === 'object' && WITH_NUMBER_TEXTS.has(root);
}

/**
 * How the number `value` at `container[key]` was written, when parseJson recorded it (it records
 * only numbers whose text String(value) would not give back) and it still holds that value.
 */
export function numberTextAt(container: object, key: string | number, value: number): NumberText | undefined {
  const t = NUMBER_TEXTS.get(container)?.get(key);
  return t !== undefined && Number(t.literal) === value ? t : undefined;
}

/** The recorded number texts held directly by `container` (for walks over a whole subtree). */
export function numberTextsIn(container: object): ReadonlyMap<string | number, NumberText> | undefined {
  return NUMBER_TEXTS.get(container);
}

/**
 * Calls `fn` for every number inside `root` (objects and arrays, iteratively: nesting may be deep)
 * whose text parseJson recorded and that still holds the number written so (numberTextAt).
 */
export function forEachNumberText(
  root: object,
  fn: (container: Record<string | number, unknown>, key: string | number, text: NumberText, value: number) => void,
): void {
  const stack: object[] = [root];
  while (stack.length > 0) {
    const c = stack.pop()! as Record<string | number, unknown>;
    const texts = NUMBER_TEXTS.get(c);
    if (texts !== undefined) {
      for (const [key, t] of texts) {
        const v = c[key];
        if (typeof v === 'number' && Number(t.literal) === v) fn(c, key, t, v);
      }
    }
    for (const key in c) {
      const v = c[key];
      if (v !== null && typeof v === 'object') stack.push(v);
    }
  }
}

/**
 * Copies the number texts recorded inside `from` onto the same places in `to`, where `to` holds the
 * same value (what a JSON merge patch does with its patch: every number of the patch ends up at its
 * path in the result). Returns `to`. Upstream's patcher decodes the patched JSON text, in which
 * evanphx/json-patch keeps the patch's numbers as written.
 */
export function copyNumberTexts<T>(from: unknown, to: T): T {
  if (!hasNumberTexts(from) || to === null || typeof to !== 'object') return to;
  let any = false;
  const stack: [object, object][] = [[from as object, to]];
  while (stack.length > 0) {
    const [f, t] = stack.pop()!;
    const fr = f as Record<string | number, unknown>;
    const tr = t as Record<string | number, unknown>;
    const texts = NUMBER_TEXTS.get(f);
    if (texts !== undefined) {
      for (const [key, text] of texts) {
        const v = tr[key];
        if (typeof v !== 'number' || Number(text.literal) !== v || fr[key] !== v) continue;
        let into = NUMBER_TEXTS.get(t);
        if (into === undefined) NUMBER_TEXTS.set(t, (into = new Map<string | number, NumberText>()));
        into.set(key, text);
        any = true;
      }
    }
    for (const key in fr) {
      const fv = fr[key];
      const tv = tr[key];
      if (fv !== null && typeof fv === 'object' && tv !== null && typeof tv === 'object' && Array.isArray(fv) === Array.isArray(tv)) stack.push([fv, tv]);
    }
  }
  if (any) WITH_NUMBER_TEXTS.add(to);
  return to;
}

/**
 * For `text` that JSON.parse (not parseJson) turned into `value`: records its numbers' texts as
 * parseJson would, so that numberTextAt answers for it (a JSON patch's operations). The same scan
 * as parseJson's tells first whether any number outside strings needs its text (most patches hold
 * none: labels, images); only then is the text walked. Duplicate keys are allowed for.
 */
export function recordNumberTextsOf(text: string, value: unknown): void {
  if (value === null || typeof value !== 'object') return;
  countTextKeys(text, Infinity);
  if (textHasOddNumbers) recordNumberTexts(text, value, true, true);
}

/**
 * Records that the number at `container[key]`, inside the value `root`, was written `literal`, as
 * parseJson would have recorded it there (for values put together from parsed pieces: a JSON
 * patch's result). Nothing is recorded for a literal String(value) gives back.
 */
export function setNumberText(root: object, container: object, key: string | number, literal: string): void {
  if (!needsText(literal)) return;
  let texts = NUMBER_TEXTS.get(container);
  if (texts === undefined) NUMBER_TEXTS.set(container, (texts = new Map<string | number, NumberText>()));
  texts.set(key, { literal });
  WITH_NUMBER_TEXTS.add(root);
}

/**
 * A number written with a fraction or an exponent, or long enough to lose digits as a double (`-0`
 * is told by its value, Object.is(v, -0)).
 */
function needsText(literal: string): boolean {
  return String(Number(literal)) !== literal && literal !== '-0';
}

/**
 * Walks `text` (valid JSON, parsed into `root`) in step with `root`: puts a bigint where it holds an
 * integer within int64 past 2^53 (json-int64.ts), and with `texts` records the other numbers
 * needsText picks. With duplicate keys (`duplicates`) the earlier occurrences are walked against
 * the last value (JSON.parse keeps that one): the later occurrence's numbers replace or drop what
 * they recorded, and numberTextAt checks the value for the rest.
 */
function recordNumberTexts(text: string, root: object, duplicates: boolean, texts: boolean): void {
  let any = false;
  reviveLongIntegers(
    text,
    root,
    duplicates,
    texts
      ? (container, at, literal) => {
          if (needsText(literal)) {
            let t = NUMBER_TEXTS.get(container);
            if (t === undefined) NUMBER_TEXTS.set(container, (t = new Map<string | number, NumberText>()));
            t.set(at, { literal });
            any = true;
          } else if (duplicates) {
            NUMBER_TEXTS.get(container)?.delete(at);
          }
        }
      : undefined,
  );
  if (any) WITH_NUMBER_TEXTS.add(root);
}

// ---------------------------------------------------------------------------------------------
// Integers past 2^53 are bigints (json-int64.ts); YAML writes them in hex or octal too.

/**
 * 16 digits in a row, or 14 hex digits after 0x (YAML): any integer past 2^53 is written so, and few
 * bodies hold either otherwise.
 */
const LONG_DIGIT_RUN = /[0-9]{16}|0x[0-9a-fA-F]{14}/;

/** Whether `text` may hold an integer past 2^53 (a cheap test before a scan). */
export function mayHoldLongIntegers(text: string): boolean {
  return LONG_DIGIT_RUN.test(text);
}

function pathOf(stack: readonly Frame[]): string {
  let s = '';
  for (const f of stack) {
    if (f.isObject) s += s === '' ? String(f.at) : `.${String(f.at)}`;
    else s += `[${String(f.at)}]`;
  }
  return s;
}

// ---------------------------------------------------------------------------------------------
// Error path: golang/json-scanner names the first bad character the way Go's encoding/json does.

function withLocation(text: string, offset: number, message: string): string {
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < offset; i++) {
    if (text.charCodeAt(i) === 10) {
      line++;
      lineStart = i + 1;
    }
  }
  return `${message} at line ${line}, column ${offset - lineStart + 1} (offset ${offset})`;
}

/**
 * Go's message for the first syntax error in `text` (which JSON.parse has rejected), followed by
 * its line and column unless `withPosition` is false (for places where upstream's exact text matters).
 * Characters are quoted as JSON escapes them, and the depth limit is named (kplane's wording).
 */
export function describeJsonSyntaxError(text: string, maxDepth = MAX_NESTING_DEPTH, withPosition = true): string {
  const r = scanJSON(text, 0, { maxDepth, quote: quoteCharAsJSON });
  if (r.kind === 'eof') return UNEXPECTED_END_OF_JSON;
  // JSON.parse and the scanner disagree; keep the failure a 400 rather than guessing.
  if (r.kind === 'ok') return 'invalid JSON';
  const message = r.message.endsWith(' exceeded max depth') ? `${r.message} of ${maxDepth}` : r.message;
  return withPosition ? withLocation(text, r.offset, message) : message;
}

/**
 * json.Unmarshal's error for a text that is not exactly one JSON value: SyntaxError's message as
 * Go words it (bytes quoted as Go quotes them, no position), or UNEXPECTED_END_OF_JSON; undefined
 * when the text is valid. For messages that embed Go's err.Error() (opm's).
 */
export function unmarshalSyntaxError(text: string): string | undefined {
  // Go scans bytes: latin1 makes index i of the scanned text byte i of the UTF-8.
  const r = scanJSON(Buffer.from(text, 'utf8').toString('latin1'));
  if (r.kind === 'ok') return undefined;
  return r.kind === 'eof' ? UNEXPECTED_END_OF_JSON : r.message;
}
