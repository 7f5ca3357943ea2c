// Loading file-based catalogs as opm's declcfg.LoadFS does: walk the tree in lexical order, skip
// directories, .indexignore files and whatever the .indexignore patterns exclude, and read every
// other file as a stream of JSON objects or of YAML documents (k8s.io/apimachinery's
// YAMLOrJSONDecoder), each blob becoming a Package, Channel, Bundle, Deprecation or other Meta.
// Blobs are re-encoded through a Go map as opm's Meta.UnmarshalJSON does, so objects inside them
// (property values, other blobs) come out with their keys sorted, numbers as float64.
// Messages are opm's, word for word; a LoadError also carries the file it came from in `path`.
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { compareGoStrings, goJSON, hasNilBytes, markNilBytes, nilSlice, setMember, sortedKeysDeep } from '../../golang/json.js';
import { base64Error } from '../../golang/base64.js';
import { jsonKind, numberValue, unmarshalTypeError } from '../../golang/json-errors.js';
import { StructDecoder } from '../../golang/json-struct.js';
import { closingQuote, scanJSON } from '../../golang/json-scanner.js';
import { IgnoreMatcher, INDEX_IGNORE_FILENAME } from './indexignore.js';
import { goFmtV, goStringList } from '../../golang/fmt.js';
import { goQuote } from '../../golang/strconv.js';
import { looksLikeJSON, splitYAMLDocuments, yamlToJSON, YAMLSeparatorError } from '../../golang/yaml-read.js';
import {
  SchemaBundle,
  SchemaChannel,
  SchemaDeprecation,
  SchemaPackage,
  emptyConfig,
  type Bundle,
  type Channel,
  type ChannelEntry,
  type DeclarativeConfig,
  type Deprecation,
  type DeprecationEntry,
  type Icon,
  type Package,
  type Property,
  type RelatedImage,
} from './types.js';

/** An error loading a catalog: opm's message; `path` names the file (relative to the root) when there is one. */
export class LoadError extends Error {
  override readonly name = 'LoadError';
  readonly code = 'KPL_ERR_CATALOG_LOAD';
  constructor(
    message: string,
    readonly path?: string,
  ) {
    super(message);
  }
}

// ---- walking ----

/** Every file under dir in fs.WalkDir order (entries sorted by name, directories entered in place). */
async function walkFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  const visit = async (rel: string): Promise<void> => {
    const abs = rel === '' ? dir : join(dir, rel);
    let entries;
    try {
      entries = await readdir(abs, { withFileTypes: true });
    } catch (err) {
      // os.DirFS reports a directory it cannot read as "open NAME: ..." (Node says scandir)
      (err as NodeJS.ErrnoException).syscall = 'open';
      throw new LoadError(fsMessage(err, rel === '' ? '.' : rel), rel === '' ? undefined : rel);
    }
    entries.sort((a, b) => compareGoStrings(a.name, b.name));
    for (const e of entries) {
      const r = rel === '' ? e.name : `${rel}/${e.name}`;
      if (e.isDirectory()) await visit(r);
      else out.push(r);
    }
  };
  await visit('');
  return out;
}

function fsMessage(err: unknown, rel: string): string {
  const e = err as NodeJS.ErrnoException;
  const what =
    e.code === 'ENOENT'
      ? 'no such file or directory'
      : e.code === 'ENOTDIR'
        ? 'not a directory'
        : e.code === 'EACCES'
          ? 'permission denied'
          : e.code === 'EISDIR'
            ? 'is a directory'
            : (e.message ?? String(err));
  return `${e.syscall ?? 'open'} ${rel}: ${what}`;
}

/** The files LoadFS reads under dir (relative, `/`-separated), in its order, after .indexignore. */
export async function catalogFiles(dir: string): Promise<string[]> {
  let st;
  try {
    st = await stat(dir);
  } catch (err) {
    throw new LoadError(`${fsMessage(err, dir)}`);
  }
  if (!st.isDirectory()) throw new LoadError(`${goQuote(dir)} is not a directory`);
  const files = await walkFiles(dir);
  const matcher = await IgnoreMatcher.fromFiles(dir, files);
  return files.filter((f) => {
    const base = f.slice(f.lastIndexOf('/') + 1);
    return base !== INDEX_IGNORE_FILENAME && !matcher.match(f, false);
  });
}

/** opm's declcfg.LoadFS over a directory. */
export async function loadFS(dir: string): Promise<DeclarativeConfig> {
  const files = await catalogFiles(dir);
  const cfg = emptyConfig();
  // read ahead a few files while parsing in order
  const reads = new Map<number, Promise<Buffer>>();
  const read = (i: number): Promise<Buffer> => {
    let p = reads.get(i);
    if (p === undefined) {
      p = readFile(join(dir, files[i]!));
      p.catch(() => undefined);
      reads.set(i, p);
    }
    return p;
  };
  for (let i = 0; i < files.length; i++) {
    for (let j = i; j < Math.min(files.length, i + 4); j++) void read(j);
    let data: Buffer;
    try {
      data = await read(i);
    } catch (err) {
      throw new LoadError(fsMessage(err, files[i]!), files[i]);
    } finally {
      reads.delete(i);
    }
    parseInto(cfg, data, files[i]!);
  }
  return cfg;
}

/** opm's LoadFile: one file's blobs. */
export async function loadFile(path: string): Promise<DeclarativeConfig> {
  let data: Buffer;
  try {
    data = await readFile(path);
  } catch (err) {
    throw new LoadError(fsMessage(err, path), path);
  }
  const cfg = emptyConfig();
  parseInto(cfg, data, path);
  return cfg;
}

/** opm's LoadReader over text; path only names the source in errors. */
export function parseBlobs(text: string | Buffer, path = ''): DeclarativeConfig {
  const cfg = emptyConfig();
  parseInto(cfg, typeof text === 'string' ? Buffer.from(text) : text, path);
  return cfg;
}

function parseInto(cfg: DeclarativeConfig, data: Buffer, path: string): void {
  walkMetas(data, path, (meta) => addMeta(cfg, meta, path));
}

// ---- metas: the blobs of a stream ----

/** A blob as opm's Meta holds it after Meta.UnmarshalJSON, before it is typed. */
export interface LoadedMeta {
  schema: string;
  package: string;
  name: string;
  /** the blob with its keys sorted (recursively), as re-encoded through a Go map; null for a `null` document */
  blob: Record<string, unknown> | null;
  /** no document at all (an empty YAML document): opm's zero Meta */
  zero?: boolean;
}

/**
 * opm's WalkMetasReader: each blob of a JSON stream or YAML stream, in order. Throws a LoadError
 * with opm's message for the first bad blob.
 */
export function walkMetas(data: Buffer, path: string, fn: (meta: LoadedMeta) => void): void {
  const text = data.toString('utf8');
  let pos = 0;
  // opm's decoder guesses from its 4096-byte buffer
  if (looksLikeJSON(text, 4096)) {
    let count = 0;
    while (true) {
      const doc = nextJSONValue(text, pos);
      if (doc === undefined) return; // EOF
      let err: string | undefined;
      let rawErr: string | undefined;
      let meta: LoadedMeta | undefined;
      if (doc.error !== undefined) {
        err = doc.error;
        rawErr = doc.rawError;
      } else {
        try {
          meta = metaFromValue(doc.value, text.slice(doc.start, doc.end));
        } catch (e) {
          if (!(e instanceof MetaError)) throw e;
          err = e.message;
        }
      }
      if (err === undefined) {
        count++;
        pos = doc.end;
        fn(meta!);
        continue;
      }
      // past two objects the stream is JSON for sure: the decoder's own error, without the offset
      if (count > 1) throw new LoadError(rawErr ?? err, path);
      // Ambiguous stream: read the rest as YAML, starting after whitespace up to the first newline.
      const rest = consumeWhitespace(text, pos);
      try {
        walkYAML(text.slice(rest), fn);
      } catch (e) {
        if (e instanceof YAMLDocError && e.docIndex === 0) throw new LoadError(err, path);
        if (e instanceof YAMLDocError) throw new LoadError(e.message, path);
        throw e;
      }
      return;
    }
  }
  try {
    walkYAML(text, fn);
  } catch (e) {
    if (e instanceof YAMLDocError) throw new LoadError(e.message, path);
    throw e;
  }
}

function consumeWhitespace(text: string, pos: number): number {
  let i = pos;
  while (i < text.length) {
    const c = text[i]!;
    if (!/\s/u.test(c)) return i;
    i++;
    if (c === '\n') return i;
  }
  return i;
}

class MetaError extends Error {}
class YAMLDocError extends Error {
  constructor(
    message: string,
    readonly docIndex: number,
  ) {
    super(message);
  }
}

// ---- JSON streams ----

interface JSONDoc {
  start: number;
  end: number;
  value?: unknown;
  /** the error as YAMLOrJSONDecoder reports it for an ambiguous stream (JSONSyntaxError: with the offset) */
  error?: string;
  /** json.Decoder's own error */
  rawError?: string;
}

/** The next JSON value of a stream from pos (undefined at the end), parsed, or Go's error for it. */
function nextJSONValue(text: string, pos: number): JSONDoc | undefined {
  let i = pos;
  const n = text.length;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) i++;
    else break;
  }
  if (i >= n) return undefined;
  const start = i;
  const end = scanJSONValueEnd(text, i);
  if (end > 0) {
    try {
      return { start, end, value: JSON.parse(text.slice(start, end)) };
    } catch {
      // fall through to the exact error below
    }
  }
  const e = goJSONStreamError(text, pos);
  return { start, end: Math.max(end, start), error: e.wrapped, rawError: e.raw };
}

/** End of the JSON value starting at i (exclusive), found by brackets and strings only; -1 if unterminated. */
function scanJSONValueEnd(text: string, i: number): number {
  const c0 = text.charCodeAt(i);
  if (c0 !== 0x7b && c0 !== 0x5b) {
    // a scalar: up to the next delimiter
    if (c0 === 0x22) {
      const q = closingQuote(text, i + 1);
      return q < 0 ? -1 : q + 1;
    }
    let j = i;
    while (j < text.length && !/[\s{}[\],:"]/.test(text[j]!)) j++;
    return j;
  }
  let depth = 0;
  const n = text.length;
  for (let j = i; j < n; j++) {
    const c = text.charCodeAt(j);
    if (c === 0x22) {
      const q = closingQuote(text, j + 1);
      if (q < 0) return -1;
      j = q;
    } else if (c === 0x7b || c === 0x5b) depth++;
    else if (c === 0x7d || c === 0x5d) {
      depth--;
      if (depth === 0) return j + 1;
    }
  }
  return -1;
}

/**
 * Go's json.Decoder error for the stream at pos: a SyntaxError as "json: offset N: ..." (N counting
 * bytes from the start of the stream), or "unexpected EOF" for a value cut short.
 */
function goJSONStreamError(text: string, pos: number): { wrapped: string; raw: string } {
  const bytesBefore = Buffer.byteLength(text.slice(0, pos));
  // latin1: one character per byte, so the scanner names bytes and counts offsets as Go does
  const r = scanJSON(Buffer.from(text.slice(pos)).toString('latin1'), 0, { stream: true, maxDepth: Infinity });
  if (r.kind !== 'error') return { wrapped: 'unexpected EOF', raw: 'unexpected EOF' };
  // SyntaxError.Offset counts the refused byte
  return { wrapped: `json: offset ${bytesBefore + r.offset + 1}: ${r.message}`, raw: r.message };
}

// ---- YAML streams ----

function walkYAML(text: string, fn: (meta: LoadedMeta) => void): void {
  let docs: string[];
  try {
    docs = splitYAMLDocuments(text);
  } catch (e) {
    if (e instanceof YAMLSeparatorError) throw new YAMLDocError(e.message, e.docIndex);
    throw e;
  }
  for (let i = 0; i < docs.length; i++) {
    let value: unknown;
    try {
      value = yamlToValue(docs[i]!);
    } catch (e) {
      throw new YAMLDocError(`error converting YAML to JSON: ${(e as Error).message}`, i);
    }
    if (value === null || value === undefined) {
      // a null (or empty) document sets the decode target to nil: opm's Meta stays at its zero value
      fn({ schema: '', package: '', name: '', blob: null, zero: true });
      continue;
    }
    let meta: LoadedMeta;
    try {
      meta = metaFromValue(value, undefined);
    } catch (e) {
      if (!(e instanceof MetaError)) throw e;
      throw new YAMLDocError(`error unmarshaling JSON: while decoding JSON: ${e.message}`, i);
    }
    fn(meta);
  }
}

/** One YAML document (a chunk from the reader) as sigs.k8s.io/yaml turns it into JSON, read back as float64s. */
function yamlToValue(doc: string): unknown {
  return yamlToJSON(doc);
}

/**
 * One YAML document as sigs.k8s.io/yaml turns it into a JSON value, read by the full parser
 * (fast: false) or by the block-style reader when it can (the default); for tests.
 */
export function yamlDocumentValue(doc: string, opts: { fast?: boolean } = {}): unknown {
  return yamlToJSON(doc, opts);
}

// ---- Meta.UnmarshalJSON ----

/** golang.org/x/text/cases.Fold, as Meta.UnmarshalJSON folds keys (full case folding: ß is ss). */
function caseFold(s: string): string {
  return s.toUpperCase().toLowerCase();
}

/**
 * opm's Meta.UnmarshalJSON over a decoded document: it must be an object; no two keys may fold to
 * the same text; schema, package and name (any case) must be strings when present.
 */
export function metaFromValue(value: unknown, raw: string | undefined): LoadedMeta {
  if (value === null) return { schema: '', package: '', name: '', blob: null };
  if (typeof value !== 'object' || Array.isArray(value)) {
    throw new MetaError(notAnObjectMessage(value, raw));
  }
  const obj = value as Record<string, unknown>;
  const keySets = new Map<string, string[]>();
  const keys = Object.keys(obj);
  for (const k of keys) {
    const f = caseFold(k);
    const set = keySets.get(f);
    if (set === undefined) keySets.set(f, [k]);
    else set.push(k);
  }
  if (keySets.size !== keys.length) {
    const errs: string[] = [];
    for (const [f, ks] of [...keySets].sort((a, b) => compareGoStrings(a[0], b[0]))) {
      if (ks.length !== 1) errs.push(`duplicate keys for key ${goQuote(f)}: ${goStringList([...ks].sort(compareGoStrings))}`);
    }
    throw new MetaError(errs.length === 1 ? errs[0]! : `[${errs.join(', ')}]`);
  }
  const meta: LoadedMeta = { schema: '', package: '', name: '', blob: null };
  for (const field of ['schema', 'package', 'name'] as const) {
    const key = keySets.get(field)?.[0];
    if (key === undefined) continue;
    const v = obj[key];
    if (typeof v !== 'string') {
      throw new MetaError(`expected value for key ${goQuote(key)} to be a string, got ${goFmtT(v)}: ${goFmtV(v)}`);
    }
    meta[field] = v;
  }
  meta.blob = sortObject(obj);
  if (raw !== undefined && /[eE]/.test(raw) && !allFinite(meta.blob)) throw new MetaError(overflowMessage(raw));
  return meta;
}

/** fmt's %t of a decoded value: bools as such, others %!t(type=value), element by element in slices and maps. */
function goFmtT(v: unknown, nested = false): string {
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  // a nil element inside a slice or map prints as <nil> whatever the verb
  if (v === null || v === undefined) return nested ? '<nil>' : '%!t(<nil>)';
  if (typeof v === 'number') return `%!t(float64=${goFmtV(v)})`;
  if (typeof v === 'string') return `%!t(string=${v})`;
  if (Array.isArray(v)) return `[${v.map((e) => goFmtT(e, true)).join(' ')}]`;
  const obj = v as Record<string, unknown>;
  const keys = Object.keys(obj).sort(compareGoStrings);
  return `map[${keys.map((k) => `${goFmtT(k, true)}:${goFmtT(obj[k], true)}`).join(' ')}]`;
}

function allFinite(v: unknown): boolean {
  if (typeof v === 'number') return Number.isFinite(v);
  if (Array.isArray(v)) return v.every(allFinite);
  if (typeof v === 'object' && v !== null) return Object.values(v).every(allFinite);
  return true;
}

/** Go's error for a number too big for a float64 (JSON.parse makes it Infinity). */
function overflowMessage(raw: string): string {
  const re = /"(?:[^"\\]|\\.)*"|(-?\d+(?:\.\d+)?[eE][+-]?\d+)/g;
  for (let m = re.exec(raw); m !== null; m = re.exec(raw)) {
    if (m[1] !== undefined && !Number.isFinite(Number(m[1]))) {
      const end = Buffer.byteLength(raw.slice(0, m.index + m[1].length));
      return prettyJSONError(unmarshalTypeError(numberValue(m[1]), 'float64'), raw, end);
    }
  }
  return unmarshalTypeError('number', 'float64');
}

function notAnObjectMessage(value: unknown, raw: string | undefined): string {
  const kind = jsonKind(value);
  const base = unmarshalTypeError(kind, 'map[string]interface {}');
  const data = raw ?? goJSON(value);
  const offset = kind === 'array' ? 1 : Buffer.byteLength(data);
  return prettyJSONError(base, data, offset);
}

/**
 * Go's json.Indent over JSON text: tokens copied as they are, insignificant space dropped, a line
 * per member and element; empty objects and arrays stay {} and []. undefined for invalid JSON.
 */
export function goIndent(src: string, indent: string): string | undefined {
  const out: string[] = [];
  let depth = 0;
  let needIndent = false; // after an opening bracket, until we know it is not empty
  const newline = (): string => '\n' + indent.repeat(depth);
  for (let i = 0; i < src.length; i++) {
    const c = src[i]!;
    if (c === ' ' || c === '\t' || c === '\n' || c === '\r') continue;
    if (needIndent && c !== ']' && c !== '}') {
      needIndent = false;
      depth++;
      out.push(newline());
    }
    if (c === '"') {
      let j = i + 1;
      for (; j < src.length; j++) {
        if (src[j] === '\\') j++;
        else if (src[j] === '"') break;
      }
      if (j >= src.length) return undefined;
      out.push(src.slice(i, j + 1));
      i = j;
      continue;
    }
    switch (c) {
      case '{':
      case '[':
        out.push(c);
        needIndent = true;
        break;
      case ',':
        out.push(c, newline());
        break;
      case ':':
        out.push(c, ' ');
        break;
      case '}':
      case ']':
        if (needIndent) {
          needIndent = false; // empty: stays compact
        } else {
          depth--;
          out.push(newline());
        }
        out.push(c);
        break;
      default:
        out.push(c);
    }
  }
  if (depth !== 0 || needIndent) return undefined;
  return out.join('');
}

/** opm's prettyunmarshaler JSONUnmarshalError.Pretty. */
function prettyJSONError(message: string, data: string, offset: number): string {
  const bytes = Buffer.from(data);
  if (bytes.length === 0 || offset < 0 || offset > bytes.length) return message;
  const marker = ' <==';
  let out = `${message} at offset ${offset} (indicated by${marker})\n`;
  const indented = goIndent(data, '    ');
  const pretty = indented === undefined ? bytes : Buffer.from(indented);
  if (offset === bytes.length) return out + pretty.toString() + marker;
  let p = 0;
  let pOffset = 0;
  for (let d = 0; d < bytes.length; d++) {
    if (d === offset) {
      pOffset = p;
      break;
    }
    while (pretty[p] !== bytes[d]) {
      p++;
      if (p >= pretty.length) return message;
    }
    p++;
  }
  out += pretty.subarray(0, pOffset).toString() + `${marker} ` + pretty.subarray(pOffset).toString();
  return out;
}

/** Sorts keys recursively as a Go map[string]interface{} re-encoding does (keeps arrays' order). */
function sortObject(obj: Record<string, unknown>): Record<string, unknown> {
  const keys = Object.keys(obj);
  let sorted = true;
  for (let i = 1; i < keys.length; i++) {
    if (compareGoStrings(keys[i - 1]!, keys[i]!) > 0) {
      sorted = false;
      break;
    }
  }
  if (!sorted) keys.sort(compareGoStrings);
  const out: Record<string, unknown> = sorted ? obj : {};
  for (const k of keys) {
    const v = obj[k];
    if (out === obj) obj[k] = sortValue(v);
    else setMember(out, k, sortValue(v));
  }
  return out;
}

function sortValue(v: unknown): unknown {
  if (typeof v !== 'object' || v === null) return v;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) v[i] = sortValue(v[i]);
    return v;
  }
  return sortObject(v as Record<string, unknown>);
}

// ---- fbcBuilder.addMeta: typed blobs ----

/** opm's fbcBuilder.addMeta. */
export function addMeta(cfg: DeclarativeConfig, meta: LoadedMeta, path?: string): void {
  const blob = meta.blob ?? {};
  try {
    switch (meta.schema) {
      case SchemaPackage:
        cfg.packages.push(decodePackage(blob));
        return;
      case SchemaChannel:
        cfg.channels.push(decodeChannel(blob));
        return;
      case SchemaBundle:
        cfg.bundles.push(decodeBundle(blob));
        return;
      case SchemaDeprecation:
        cfg.deprecations.push(decodeDeprecation(blob));
        return;
      case '': {
        const text = meta.zero ? '' : meta.blob === null ? 'null\n' : goJSON(meta.blob) + '\n';
        throw new LoadError(`object '${text}' is missing root schema field`, path);
      }
      default:
        cfg.others.push({ schema: meta.schema, package: meta.package, name: meta.name, blob: meta.blob ?? {} });
    }
  } catch (e) {
    if (e instanceof LoadError) throw e;
    if (e instanceof DecodeError) throw new LoadError(e.message, path);
    throw e;
  }
}

class DecodeError extends Error {}

/** A []byte field: base64 text (kept as text), checked as base64.StdEncoding decodes it. */
function bytesField(d: StructDecoder, v: unknown): string | undefined {
  if (v === null || v === undefined) return undefined;
  if (typeof v !== 'string') {
    d.fail(jsonKind(v), '[]uint8');
    return undefined;
  }
  const bad = base64Error(v);
  if (bad !== undefined) {
    d.save(bad);
    return undefined;
  }
  return v;
}

function canonicalBase64(s: string): string {
  return Buffer.from(s.replace(/[\r\n]/g, ''), 'base64').toString('base64');
}

function properties(d: StructDecoder, v: unknown): Property[] | undefined {
  const items = d.slice(v, '[]property.Property');
  if (items === undefined) return undefined;
  const out: Property[] = [];
  for (const it of items) {
    const p: Property = { type: '', value: undefined };
    d.fields(it, 'Property', 'property.Property', ['type', 'value'], (f, fv) => {
      if (f === 'type') p.type = d.string(fv) ?? p.type;
      else p.value = fv; // json.RawMessage: anything
    });
    out.push(p);
  }
  return out;
}

function finish<T>(d: StructDecoder, what: string, v: T): T {
  if (d.firstError !== undefined) throw new DecodeError(`parse ${what}: ${d.firstError}`);
  return v;
}

function decodePackage(blob: Record<string, unknown>): Package {
  const d = new StructDecoder();
  const p: Package = { schema: SchemaPackage, name: '', defaultChannel: '' };
  d.fields(blob, 'Package', 'declcfg.Package', ['schema', 'name', 'defaultChannel', 'icon', 'description', 'properties'], (f, v) => {
    switch (f) {
      case 'schema':
        p.schema = (d.string(v) ?? p.schema) as typeof SchemaPackage;
        break;
      case 'name':
        p.name = d.string(v) ?? p.name;
        break;
      case 'defaultChannel':
        p.defaultChannel = d.string(v) ?? p.defaultChannel;
        break;
      case 'icon': {
        if (v === null) break;
        const icon: Icon = p.icon ?? { base64data: '', mediatype: '' };
        let data = p.icon !== undefined && !hasNilBytes(p.icon);
        if (
          d.fields(v, 'Icon', 'declcfg.Icon', ['base64data', 'mediatype'], (g, gv) => {
            if (g === 'base64data') {
              const b = bytesField(d, gv);
              if (b !== undefined) {
                icon.base64data = canonicalBase64(b);
                data = true;
              }
            } else icon.mediatype = d.string(gv) ?? icon.mediatype;
          })
        ) {
          // no base64data (or null): Go's Data stays nil and is written as null
          p.icon = data ? icon : markNilBytes(icon);
        }
        break;
      }
      case 'description':
        p.description = d.string(v) ?? p.description;
        break;
      case 'properties':
        p.properties = properties(d, v);
        break;
    }
  });
  return finish(d, 'package', p);
}

function decodeChannel(blob: Record<string, unknown>): Channel {
  const d = new StructDecoder();
  const c: Channel = { schema: SchemaChannel, name: '', package: '', entries: nilSlice() };
  d.fields(blob, 'Channel', 'declcfg.Channel', ['schema', 'name', 'package', 'entries', 'properties'], (f, v) => {
    switch (f) {
      case 'schema':
        c.schema = (d.string(v) ?? c.schema) as typeof SchemaChannel;
        break;
      case 'name':
        c.name = d.string(v) ?? c.name;
        break;
      case 'package':
        c.package = d.string(v) ?? c.package;
        break;
      case 'entries': {
        const items = d.slice(v, '[]declcfg.ChannelEntry');
        if (items === undefined) {
          if (v === null) c.entries = nilSlice();
          break;
        }
        c.entries = items.map((it) => {
          const e: ChannelEntry = { name: '' };
          d.fields(it, 'ChannelEntry', 'declcfg.ChannelEntry', ['name', 'replaces', 'skips', 'skipRange'], (g, gv) => {
            switch (g) {
              case 'name':
                e.name = d.string(gv) ?? e.name;
                break;
              case 'replaces': {
                const s = d.string(gv);
                if (s !== undefined) e.replaces = s;
                break;
              }
              case 'skips': {
                const s = d.strings(gv);
                if (s !== undefined) e.skips = s;
                else if (gv === null) delete e.skips;
                break;
              }
              case 'skipRange': {
                const s = d.string(gv);
                if (s !== undefined) e.skipRange = s;
                break;
              }
            }
          });
          return e;
        });
        break;
      }
      case 'properties':
        c.properties = properties(d, v);
        break;
    }
  });
  return finish(d, 'channel', c);
}

function decodeBundle(blob: Record<string, unknown>): Bundle {
  const d = new StructDecoder();
  const b: Bundle = { schema: SchemaBundle, name: '', package: '', image: '' };
  d.fields(blob, 'Bundle', 'declcfg.Bundle', ['schema', 'name', 'package', 'image', 'properties', 'relatedImages'], (f, v) => {
    switch (f) {
      case 'schema':
        b.schema = (d.string(v) ?? b.schema) as typeof SchemaBundle;
        break;
      case 'name':
        b.name = d.string(v) ?? b.name;
        break;
      case 'package':
        b.package = d.string(v) ?? b.package;
        break;
      case 'image':
        b.image = d.string(v) ?? b.image;
        break;
      case 'properties':
        b.properties = properties(d, v);
        break;
      case 'relatedImages': {
        const items = d.slice(v, '[]declcfg.RelatedImage');
        if (items === undefined) {
          if (v === null) delete b.relatedImages;
          break;
        }
        b.relatedImages = items.map((it) => {
          const r: RelatedImage = { name: '', image: '' };
          d.fields(it, 'RelatedImage', 'declcfg.RelatedImage', ['name', 'image'], (g, gv) => {
            if (g === 'name') r.name = d.string(gv) ?? r.name;
            else r.image = d.string(gv) ?? r.image;
          });
          return r;
        });
        break;
      }
    }
  });
  finish(d, 'bundle', b);
  readBundleObjects(b);
  return b;
}

/** opm's readBundleObjects: olm.bundle.object properties as JSON manifests, and the CSV among them. */
function readBundleObjects(b: Bundle): void {
  const objects: string[] = [];
  const props = b.properties ?? [];
  for (let i = 0; i < props.length; i++) {
    const p = props[i]!;
    if (p.type !== 'olm.bundle.object') continue;
    const d = new StructDecoder();
    let data: string | undefined;
    const v = p.value;
    if (v === undefined) {
      // no value at all: json.Unmarshal of an empty RawMessage
      throw new DecodeError(
        `read bundle objects: package ${goQuote(b.package)}, bundle ${goQuote(b.name)}: parse property at index ${i} as bundle object: unexpected end of JSON input`,
      );
    }
    if (v !== null && (typeof v !== 'object' || Array.isArray(v))) {
      d.fail(jsonKind(v), 'property.BundleObject');
    } else {
      d.fields(v, 'BundleObject', 'property.BundleObject', ['data'], (_f, fv) => {
        const s = bytesField(d, fv);
        if (s !== undefined) data = s;
      });
    }
    if (d.firstError !== undefined) {
      throw new DecodeError(
        `read bundle objects: package ${goQuote(b.package)}, bundle ${goQuote(b.name)}: parse property at index ${i} as bundle object: ${d.firstError}`,
      );
    }
    const text = data === undefined ? '' : Buffer.from(data.replace(/[\r\n]/g, ''), 'base64').toString('utf8');
    let json: string;
    if (/^\s*\{/u.test(text)) json = text;
    else {
      try {
        // sigs.k8s.io/yaml.YAMLToJSON: json.Marshal of the decoded document (map keys sorted, HTML escaped)
        const value = yamlToValue(text);
        json = goJSON(sortedKeysDeep(value === undefined ? null : value), { escapeHTML: true });
      } catch (e) {
        throw new DecodeError(
          `read bundle objects: package ${goQuote(b.package)}, bundle ${goQuote(b.name)}: convert bundle object property at index ${i} to JSON: ${(e as Error).message}`,
        );
      }
    }
    objects.push(json);
  }
  b.objects = objects;
  b.csvJSON = extractCSV(objects);
}

function extractCSV(objects: string[]): string {
  for (const o of objects) {
    try {
      const v: unknown = /^\s*\{/u.test(o) ? JSON.parse(o) : yamlToValue(o);
      if (typeof v === 'object' && v !== null && (v as { kind?: unknown }).kind === 'ClusterServiceVersion') return o;
    } catch {
      // not an object: skipped, as opm does
    }
  }
  return '';
}

function decodeDeprecation(blob: Record<string, unknown>): Deprecation {
  const d = new StructDecoder();
  const dep: Deprecation = { schema: SchemaDeprecation, package: '', entries: nilSlice() };
  d.fields(blob, 'Deprecation', 'declcfg.Deprecation', ['schema', 'package', 'entries'], (f, v) => {
    switch (f) {
      case 'schema':
        dep.schema = (d.string(v) ?? dep.schema) as typeof SchemaDeprecation;
        break;
      case 'package':
        dep.package = d.string(v) ?? dep.package;
        break;
      case 'entries': {
        const items = d.slice(v, '[]declcfg.DeprecationEntry');
        if (items === undefined) {
          if (v === null) dep.entries = nilSlice();
          break;
        }
        dep.entries = items.map((it) => {
          const e: DeprecationEntry = { reference: { schema: '' }, message: '' };
          d.fields(it, 'DeprecationEntry', 'declcfg.DeprecationEntry', ['reference', 'message'], (g, gv) => {
            if (g === 'message') e.message = d.string(gv) ?? e.message;
            else {
              d.fields(gv, 'PackageScopedReference', 'declcfg.PackageScopedReference', ['schema', 'name'], (h, hv) => {
                if (h === 'schema') e.reference.schema = d.string(hv) ?? e.reference.schema;
                else {
                  const s = d.string(hv);
                  if (s !== undefined) e.reference.name = s;
                }
              });
            }
          });
          return e;
        });
        break;
      }
    }
  });
  if (d.firstError !== undefined) throw new DecodeError(`parse deprecation: ${d.firstError}`);
  return dep;
}
