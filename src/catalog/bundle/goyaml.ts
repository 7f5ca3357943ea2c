// YAML read the way opm reads bundle files: k8s.io/apimachinery's YAMLOrJSONDecoder (JSON when the
// text starts with '{', else YAML documents split at `---` lines) and sigs.k8s.io/yaml, which
// parses with go-yaml v2 (YAML 1.1 scalars: yes/no/on/off/y/n are booleans, 0x/0o/0b and leading-0
// octal ints, underscores in numbers; timestamps stay strings) and converts the result to JSON.
import { isAlias, isMap, isScalar, isSeq, parseDocument, type Document, type Node as YamlNode } from 'yaml';

import { goNumber, parseRawJSON, type RawValue } from '../golang/json.js';

/** The first document of a file as the decoder yields it, or an error (the file is then skipped). */
export type FirstDocument = { kind: 'json'; value: RawValue } | { kind: 'yaml'; value: unknown } | { kind: 'empty' };

/** The first document of a YAML or JSON stream (opm decodes only the first one of each file). */
export function firstDocument(text: string): FirstDocument {
  // GuessJSONStream over the decoder's 30-byte buffer (opm's decodeFileFS asks for 30): JSON when
  // the first non-space character within it is '{'
  const head = Buffer.from(text.slice(0, 30), 'utf8').subarray(0, 30).toString('utf8');
  if (/^[\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]*\{/u.test(head)) return { kind: 'json', value: parseRawJSON(text, false) };
  const chunk = firstYAMLChunk(text);
  if (chunk === undefined) return { kind: 'empty' };
  return { kind: 'yaml', value: yamlToValue(chunk) };
}

/** k8s.io/apimachinery's YAMLReader: the text up to the first `---` line that ends a non-empty document. */
export function firstYAMLChunk(text: string): string | undefined {
  let buffer = '';
  let pos = 0;
  while (pos < text.length) {
    const nl = text.indexOf('\n', pos);
    const end = nl < 0 ? text.length : nl + 1;
    const line = text.slice(pos, end);
    pos = end;
    if (line.startsWith('---')) {
      const trimmed = line.slice(3).trim();
      if (trimmed.length > 0 && !trimmed.startsWith('#')) throw new Error(`invalid Yaml document separator: ${trimmed}`);
      if (buffer.length > 0) return buffer;
    }
    buffer += line;
  }
  return buffer.length > 0 ? buffer : undefined;
}

/** One YAML document converted as sigs.k8s.io/yaml's YAMLToJSON would (before json.Unmarshal). */
export function yamlToValue(chunk: string): unknown {
  const doc = parseDocument(chunk, { schema: 'failsafe', merge: false, uniqueKeys: false, version: '1.1', prettyErrors: false, strict: false });
  if (doc.errors.length > 0) throw new Error(`error converting YAML to JSON: yaml: ${doc.errors[0]!.message.split('\n')[0]}`);
  return convert(doc.contents as YamlNode | null, doc, 0);
}

function convert(node: YamlNode | null | undefined, doc: Document, depth: number): unknown {
  if (depth > 10000) throw new Error('error converting YAML to JSON: yaml: exceeded max depth');
  if (node === null || node === undefined) return null;
  if (isAlias(node)) return convert(node.resolve(doc) as YamlNode | undefined, doc, depth + 1);
  if (isScalar(node)) {
    const text = String(node.value ?? '');
    const tag = node.tag;
    if (tag === 'tag:yaml.org,2002:str' || tag === '!!str' || tag === 'tag:yaml.org,2002:binary') return text;
    if (node.type === 'PLAIN' || (tag !== undefined && tag !== '!')) return resolvePlain(text);
    return text;
  }
  if (isSeq(node)) return node.items.map((item) => convert(item as YamlNode, doc, depth + 1));
  if (isMap(node)) {
    const out: Record<string, unknown> = {};
    for (const pair of node.items) {
      const keyNode = pair.key as YamlNode | null;
      if (isScalar(keyNode) && keyNode.type === 'PLAIN' && keyNode.value === '<<' && keyNode.tag === undefined) {
        mergeInto(out, convert(pair.value as YamlNode, doc, depth + 1));
        continue;
      }
      const key = jsonKey(convert(keyNode, doc, depth + 1), pair.value);
      out[key] = convert(pair.value as YamlNode, doc, depth + 1);
    }
    return out;
  }
  return null;
}

/** go-yaml v2 merge keys: a map, or a list of maps (earlier ones win among the list). */
function mergeInto(out: Record<string, unknown>, src: unknown): void {
  const maps = Array.isArray(src) ? [...src].reverse() : [src];
  for (const m of maps) {
    if (m === null || typeof m !== 'object' || Array.isArray(m)) {
      throw new Error('error converting YAML to JSON: yaml: map merge requires map or sequence of maps as the value');
    }
    Object.assign(out, m);
  }
}

/** sigs.k8s.io/yaml's key conversion: strings stay, numbers and booleans are formatted. */
function jsonKey(k: unknown, value: unknown): string {
  if (typeof k === 'string') return k;
  if (typeof k === 'boolean') return k ? 'true' : 'false';
  if (typeof k === 'number') {
    if (Number.isNaN(k)) return '.nan';
    if (k === Infinity) return '.inf';
    if (k === -Infinity) return '-.inf';
    return String(k);
  }
  throw new Error(`error converting YAML to JSON: unsupported map key of type: ${k === null ? 'nil' : typeof k}, key: ${String(k)}, value: ${String(value)}`);
}

const BOOL_TRUE = new Set(['y', 'Y', 'yes', 'Yes', 'YES', 'true', 'True', 'TRUE', 'on', 'On', 'ON']);
const BOOL_FALSE = new Set(['n', 'N', 'no', 'No', 'NO', 'false', 'False', 'FALSE', 'off', 'Off', 'OFF']);
const NULLS = new Set(['', '~', 'null', 'Null', 'NULL']);
const YAML_FLOAT = /^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$/;

/** go-yaml v2's resolve() for an untagged plain scalar. */
export function resolvePlain(s: string): unknown {
  if (BOOL_TRUE.has(s)) return true;
  if (BOOL_FALSE.has(s)) return false;
  if (NULLS.has(s)) return null;
  if (s === '.nan' || s === '.NaN' || s === '.NAN') return NaN;
  if (s === '.inf' || s === '.Inf' || s === '.INF' || s === '+.inf' || s === '+.Inf' || s === '+.INF') return Infinity;
  if (s === '-.inf' || s === '-.Inf' || s === '-.INF') return -Infinity;
  const c = s[0]!;
  if (c === '.') {
    return /^\.[0-9]+([eE][-+]?[0-9]+)?$/.test(s) ? Number(s) : s;
  }
  if (c === '+' || c === '-' || (c >= '0' && c <= '9')) {
    if (looksLikeTimestamp(s)) return s; // decoded into interface{}, go-yaml v2 keeps the text
    const plain = s.replace(/_/g, '');
    const int = parseGoInt(plain);
    if (int !== undefined) return int;
    if (YAML_FLOAT.test(plain)) return Number(plain);
    const bin = /^(-?)0b([01]+)$/.exec(plain);
    if (bin) return parseGoInt(`${bin[1]}0b${bin[2]}`) ?? s;
  }
  return s;
}

/**
 * strconv.ParseInt(s, 0, 64) (and ParseUint): sign, 0x / 0o / 0b / leading-0 octal, decimal. An
 * int64 beyond 2^53 stays exact (bigint); a uint64 beyond int64 becomes a float64, as the k8s
 * decoder reads it back.
 */
function parseGoInt(s: string): number | bigint | undefined {
  const m = /^([+-]?)(0[xX][0-9a-fA-F]+|0[oO][0-7]+|0[bB][01]+|0[0-7]*|[1-9][0-9]*)$/.exec(s);
  if (!m) return undefined;
  const body = m[2]!;
  let v: bigint;
  if (/^0[xX]/.test(body)) v = BigInt(body.toLowerCase());
  else if (/^0[oO]/.test(body)) v = BigInt(`0o${body.slice(2)}`);
  else if (/^0[bB]/.test(body)) v = BigInt(`0b${body.slice(2)}`);
  else if (body.length > 1 && body.startsWith('0')) v = BigInt(`0o${body.slice(1)}`);
  else v = BigInt(body);
  if (m[1] === '-') v = -v;
  if (v > 18446744073709551615n || v < -9223372036854775808n) return undefined;
  const n = Number(v);
  if (Number.isSafeInteger(n) || v > 9223372036854775807n) return n;
  return v;
}

/** go-yaml v2's parseTimestamp gate: four digits and '-', then one of its layouts. */
function looksLikeTimestamp(s: string): boolean {
  if (!/^[0-9]{4}-/.test(s)) return false;
  return /^[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}(?:(?:[Tt]|[ \t]+)[0-9]{1,2}:[0-9]{1,2}:[0-9]{1,2}(?:\.[0-9]*)?(?:[ \t]*(?:Z|[-+][0-9]{1,2}(?::[0-9]{2})?))?)?$/.test(s);
}

/** The JSON text sigs.k8s.io/yaml produces for a converted value (fails on NaN/Inf as json.Marshal does). */
export function assertJSONable(v: unknown): void {
  if (typeof v === 'number') goNumber(v);
  else if (typeof v === 'bigint') return;
  else if (Array.isArray(v)) v.forEach(assertJSONable);
  else if (v !== null && typeof v === 'object') Object.values(v).forEach(assertJSONable);
}
