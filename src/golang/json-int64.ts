// Exact int64s in JSON, as the k8s decoders keep them. A JSON integer that fits int64 is an int64 to
// kube-apiserver (sigs.k8s.io/json's UnmarshalCaseSensitivePreserveInts, and the typed fields of
// built-in kinds); a number beyond int64, or written with a fraction or an exponent, is a float64.
// kplane's values are those of JSON.parse, whose numbers are doubles, exact only up to 2^53: an
// integer past that (and within int64) is held as a bigint instead (golang/json.ts jsonNumber), so
// ordinary numbers stay plain and fast. This module writes such values (JSON.stringify refuses a
// bigint) and reads them back from text that may hold them.
import { randomBytes } from 'node:crypto';
import { jsonNumber } from './json.js';
import { closingQuote } from './json-scanner.js';

/**
 * JSON.stringify for values that may hold bigints, written as JSON integers (as Go writes an
 * int64). The common case, no bigint anywhere, is JSON.stringify itself: it throws on the first
 * bigint, and only then the value is written again with a replacer.
 */
export function stringifyJSON(value: unknown, space?: number): string {
  try {
    return JSON.stringify(value, null, space);
  } catch (e) {
    if (!(e instanceof TypeError) || !containsBigInt(value)) throw e;
  }
  return stringifyWithBigInts(value, space);
}

// A bigint is first written as a string with a per-process random marker (JSON.stringify escapes
// the NUL as \u0000, so a marked string reads "\u0000<nonce>:123"), then the quotes and marker are
// cut out. No string of a request can hold the marker without knowing the nonce.
const NONCE = randomBytes(12).toString('hex');
const MARKED = new RegExp(`"\\\\u0000${NONCE}:(-?[0-9]+)"`, 'g');
const markBigInt = (_key: string, v: unknown): unknown => (typeof v === 'bigint' ? `\u0000${NONCE}:${v.toString()}` : v);

function stringifyWithBigInts(value: unknown, space?: number): string {
  return JSON.stringify(value, markBigInt, space).replace(MARKED, '$1');
}

/** Whether a bigint is anywhere inside `value` (iteratively: values may nest deeply). */
export function containsBigInt(value: unknown): boolean {
  if (typeof value === 'bigint') return true;
  if (value === null || typeof value !== 'object') return false;
  const stack: object[] = [value];
  while (stack.length > 0) {
    const o = stack.pop() as Record<string, unknown>;
    for (const k in o) {
      const v = o[k];
      if (typeof v === 'bigint') return true;
      if (v !== null && typeof v === 'object') stack.push(v);
    }
  }
  return false;
}

const RUN = 16;
const isDigit = (c: number): boolean => c >= 48 && c <= 57;

/**
 * Whether JSON `text` may hold an integer a double does not keep exactly: 16 digits in a row (every
 * integer past 2^53 is written so; few texts hold such a run otherwise). Every read of a stored
 * value asks, so it looks at one character in 16: any run of 16 covers one of them, and only a
 * digit there is looked around (a regular expression costs about a sixth of the JSON.parse).
 */
export function mayHoldLongIntegers(text: string): boolean {
  const n = text.length;
  for (let p = RUN - 1; p < n; p += RUN) {
    if (!isDigit(text.charCodeAt(p))) continue;
    let start = p;
    while (start > 0 && isDigit(text.charCodeAt(start - 1))) start--;
    let end = p + 1;
    while (end < n && isDigit(text.charCodeAt(end))) end++;
    if (end - start >= RUN) return true;
    // The next run lies past this one; the sampled positions stay every 16th from there.
    while (p + RUN < end) p += RUN;
  }
  return false;
}

/**
 * JSON.parse keeping integers exactly (see the module comment): the text must be valid JSON
 * without duplicate keys (what kplane wrote itself: stored objects, its own responses).
 */
export function parseJSONExact(text: string): unknown {
  const value: unknown = JSON.parse(text);
  if (typeof value === 'number') return Number.isSafeInteger(value) ? value : jsonNumber(text.trim());
  if (value !== null && typeof value === 'object' && mayHoldLongIntegers(text)) reviveLongIntegers(text, value, false);
  return value;
}

interface Frame {
  /** The object or array of the parsed value this bracket opened; undefined when it went astray (duplicate keys). */
  readonly container: Record<string | number, unknown> | undefined;
  readonly isObject: boolean;
  at: string | number;
}

const QUOTE = 34;

/**
 * Walks `text` (valid JSON, parsed by JSON.parse into `root`) in step with `root` and puts a bigint
 * where the text holds an integer within int64 that a double does not keep (golang/json.ts
 * jsonNumber). `onNumber`, when given, sees every other number literal with where it sits (for the
 * number texts of json-decode.ts). With duplicate keys (`duplicates`) JSON.parse kept the last
 * value: earlier occurrences are walked against it, and a place is changed only when it holds the
 * value the literal reads as, so the last occurrence decides.
 */
export function reviveLongIntegers(
  text: string,
  root: object,
  duplicates: boolean,
  onNumber?: (container: Record<string | number, unknown>, at: string | number, literal: string, path: () => string) => void,
): void {
  const stack: Frame[] = [];
  let expectKey = false;
  const n = text.length;
  const path = (): string => framesPath(stack);
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    switch (c) {
      case QUOTE: {
        const end = closingQuote(text, i + 1);
        if (expectKey) {
          const raw = text.slice(i + 1, end);
          stack[stack.length - 1]!.at = raw.includes('\\') ? (JSON.parse(text.slice(i, end + 1)) as string) : raw;
          expectKey = false;
        }
        i = end;
        break;
      }
      case 123: // {
      case 91: {
        // [
        const parent = stack[stack.length - 1];
        const v: unknown = parent === undefined ? root : parent.container?.[parent.at];
        const ok = v !== null && typeof v === 'object' && Array.isArray(v) === (c === 91);
        stack.push({ container: ok ? (v as Record<string | number, unknown>) : undefined, isObject: c === 123, at: c === 123 ? '' : 0 });
        expectKey = c === 123;
        break;
      }
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
        if (c === 45 || (c >= 48 && c <= 57)) {
          let j = i + 1;
          let integral = true;
          for (; j < n; j++) {
            const d = text.charCodeAt(j);
            if (d >= 48 && d <= 57) continue;
            if (d === 46 || d === 101 || d === 69 || d === 43 || d === 45) integral = false;
            else break;
          }
          const frame = stack[stack.length - 1];
          const container = frame?.container;
          if (container !== undefined) {
            const literal = text.slice(i, j);
            const held = container[frame!.at];
            const exact = integral && j - i >= 16 ? jsonNumber(literal) : undefined;
            if (typeof exact === 'bigint') {
              if ((typeof held === 'number' || (duplicates && typeof held === 'bigint')) && Number(held) === Number(exact)) container[frame!.at] = exact;
            } else {
              // A later duplicate that is no bigint takes back what an earlier occurrence put.
              if (duplicates && typeof held === 'bigint' && Number(held) === Number(literal)) container[frame!.at] = Number(literal);
              onNumber?.(container, frame!.at, literal, path);
            }
          }
          i = j - 1;
        }
        break;
    }
  }
}

function framesPath(stack: readonly Frame[]): string {
  let s = '';
  for (const f of stack) {
    if (f.isObject) s += s === '' ? String(f.at) : `.${String(f.at)}`;
    else s += `[${String(f.at)}]`;
  }
  return s;
}
