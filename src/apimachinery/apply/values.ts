// JSON values as structured-merge-diff sees them (sigs.k8s.io/structured-merge-diff/value): a total
// order across types, deep equality, the `%v`-style text used in field paths, and the canonical
// JSON written inside `k:` and `v:` path elements.
import { isJsonObject, type JsonObject, type JsonValue } from '../types.js';

/**
 * Go compares strings byte by byte in UTF-8, which is code point order. JS `<` compares UTF-16
 * code units; the two differ only when a surrogate meets a code unit above U+D7FF.
 */
export function compareStrings(a: string, b: string): number {
  if (a === b) return 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    const xs = x >= 0xd800 && x <= 0xdfff;
    const ys = y >= 0xd800 && y <= 0xdfff;
    if (xs !== ys) return xs ? 1 : -1;
    return x < y ? -1 : 1;
  }
  return a.length < b.length ? -1 : a.length > b.length ? 1 : 0;
}

// value.Compare's type rank: numbers (ints and floats compare numerically), strings, booleans,
// lists, maps, null.
function rank(v: JsonValue): number {
  if (typeof v === 'number' || typeof v === 'bigint') return 0;
  if (typeof v === 'string') return 1;
  if (typeof v === 'boolean') return 2;
  if (Array.isArray(v)) return 3;
  if (v === null) return 5;
  return 4;
}

/** value.Compare: a total order over JSON values, so that sets of values can be sorted. */
export function compareValues(a: JsonValue, b: JsonValue): number {
  const ra = rank(a);
  const rb = rank(b);
  if (ra !== rb) return ra < rb ? -1 : 1;
  switch (ra) {
    case 0:
      // An int64 past 2^53 is a bigint: < and > compare it with a number exactly.
      return (a as number | bigint) < (b as number | bigint) ? -1 : (a as number | bigint) > (b as number | bigint) ? 1 : 0;
    case 1:
      return compareStrings(a as string, b as string);
    case 2:
      return a === b ? 0 : a ? 1 : -1;
    case 3: {
      const la = a as JsonValue[];
      const lb = b as JsonValue[];
      for (let i = 0; i < la.length && i < lb.length; i++) {
        const c = compareValues(la[i]!, lb[i]!);
        if (c !== 0) return c;
      }
      return la.length - lb.length < 0 ? -1 : la.length > lb.length ? 1 : 0;
    }
    case 4:
      return compareMaps(a as JsonObject, b as JsonObject);
    default:
      return 0;
  }
}

// MapCompare walks both maps in lexical key order; the map that runs out of keys first, or lacks
// the key the other has, sorts first.
function compareMaps(a: JsonObject, b: JsonObject): number {
  const ka = definedKeys(a).sort(compareStrings);
  const kb = definedKeys(b).sort(compareStrings);
  let i = 0;
  let j = 0;
  while (i < ka.length || j < kb.length) {
    if (i === ka.length) return -1;
    if (j === kb.length) return 1;
    const c = compareStrings(ka[i]!, kb[j]!);
    if (c < 0) return -1; // a has a key b lacks
    if (c > 0) return 1;
    const v = compareValues(a[ka[i]!] as JsonValue, b[kb[j]!] as JsonValue);
    if (v !== 0) return v;
    i++;
    j++;
  }
  return 0;
}

export function definedKeys(o: JsonObject): string[] {
  const out: string[] = [];
  for (const k in o) if (o[k] !== undefined) out.push(k);
  return out;
}

/** value.Equals: deep equality; key order in maps does not matter. */
export function valuesEqual(a: JsonValue | undefined, b: JsonValue | undefined): boolean {
  if (a === b) return true;
  if (a === undefined || b === undefined || a === null || b === null) return false;
  if (typeof a !== 'object' || typeof b !== 'object') return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!valuesEqual(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  let n = 0;
  for (const k in a) {
    const av = a[k];
    if (av === undefined) continue;
    n++;
    const bv = b[k];
    if (bv === undefined || !valuesEqual(av, bv)) return false;
  }
  for (const k in b) if (b[k] !== undefined) n--;
  return n === 0;
}

/** value.ToString: how values appear in printed paths, e.g. `[name="a"]` or `[=8080]`. */
export function valueToString(v: JsonValue): string {
  if (v === null) return 'null';
  if (typeof v === 'string') return goQuote(v);
  if (typeof v === 'number' || typeof v === 'bigint' || typeof v === 'boolean') return String(v);
  if (Array.isArray(v)) return `[${v.map(valueToString).join(',')}]`;
  return definedKeys(v)
    .map((k) => `${k}=${valueToString(v[k] as JsonValue)}`)
    .join('');
}

/** Go's %q for strings: like JSON, but non-printable characters use \x / \u escapes. */
export function goQuote(s: string): string {
  let out = '"';
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    if (ch === '"') out += '\\"';
    else if (ch === '\\') out += '\\\\';
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (c < 0x20 || c === 0x7f) out += '\\x' + c.toString(16).padStart(2, '0');
    else out += ch;
  }
  return out + '"';
}

const HTML_UNSAFE = /[<>&\u2028\u2029]/g;
const HAS_HTML_UNSAFE = /[<>&\u2028\u2029]/;
const htmlEscape = (c: string): string => '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0');

/**
 * JSON as Go's encoding/json (and json-iterator's standard-library mode) writes it: map keys
 * sorted, `<`, `>`, `&`, U+2028 and U+2029 escaped. Used inside `k:`/`v:` path elements, so the
 * same field serializes to the same FieldsV1 key as on a kube-apiserver.
 */
export function goJson(v: JsonValue): string {
  // Numbers, booleans and null never hold characters to escape; most strings do not either.
  if (typeof v === 'string') {
    const j = JSON.stringify(v);
    return HAS_HTML_UNSAFE.test(j) ? j.replace(HTML_UNSAFE, htmlEscape) : j;
  }
  if (v === null || typeof v === 'number' || typeof v === 'boolean') return JSON.stringify(v);
  if (typeof v === 'bigint') return v.toString();
  if (typeof v !== 'object') return JSON.stringify(v).replace(HTML_UNSAFE, htmlEscape);
  if (Array.isArray(v)) return `[${v.map(goJson).join(',')}]`;
  const keys = definedKeys(v).sort(compareStrings);
  return `{${keys.map((k) => `${goJson(k)}:${goJson(v[k] as JsonValue)}`).join(',')}}`;
}

export function isMapValue(v: JsonValue | undefined): v is JsonObject {
  return isJsonObject(v);
}
