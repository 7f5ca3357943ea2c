// Structural schema → CEL types and value converters (upstream k8s.io/apiserver/pkg/cel/common
// SchemaDeclType and UnstructuredToVal). Objects with properties become message types with known
// fields, so `self.spec.replicas > 0` type-checks and `self.spec.nope` does not compile; maps via
// additionalProperties become map<string, T>; int-or-string and preserve-unknown-fields are dyn.
// Values are converted once per node visit: integers to bigint (CEL int), date-time strings to
// Date (CEL timestamp), objects to instances of one class per message type.
import type { Environment } from '@marcbachmann/cel-js';
import type { Structural } from '../schema/types.js';
import { numbersEqual } from '../../apimachinery/cel/library.js';
import { CEL_RESERVED_WORDS } from '../../apimachinery/cel/expressions.js';

export { numbersEqual };

export const MAX_REQUEST_SIZE_BYTES = 3 * 1024 * 1024;

const ESCAPABLE = /^[a-zA-Z_][a-zA-Z0-9_./-]*$/;

/** cel.Escape: the CEL field name of a property, or undefined when it cannot be written in CEL. */
export function escapeProperty(name: string): string | undefined {
  if (CEL_RESERVED_WORDS.has(name)) return `__${name}__`;
  if (!ESCAPABLE.test(name)) return undefined;
  return name.replace(/__|\.|-|\//g, (m) => (m === '__' ? '__underscores__' : m === '.' ? '__dot__' : m === '-' ? '__dash__' : '__slash__'));
}

/** A converter from a JSON value to the CEL value of one schema node. */
export type Converter = (v: unknown) => unknown;

/** The CEL side of one schema node: its type (as the evaluator spells it) and its converter. */
export interface DeclType {
  type: string;
  convert: Converter;
  /** Message types only: CEL field name → property name and child declaration. */
  fields?: Map<string, { prop: string; decl: DeclType; schema: Structural | undefined }>;
  /** Message type constructor, for equality. */
  ctor?: new () => object;
}

const identity: Converter = (v) => v;
const toInt: Converter = (v) => (typeof v === 'number' && Number.isInteger(v) ? BigInt(v) : v);
const toTimestamp: Converter = (v) => {
  if (typeof v !== 'string') return v;
  const d = new Date(v);
  return Number.isNaN(d.getTime()) ? v : d;
};

/** Deep conversion for dyn values: integral numbers become ints, objects become maps. */
export const toDyn: Converter = (v) => {
  if (typeof v === 'number') return Number.isInteger(v) ? BigInt(v) : v;
  if (v === null || typeof v !== 'object') return v;
  if (Array.isArray(v)) return v.map(toDyn);
  const m = new Map<string, unknown>();
  for (const k of Object.keys(v)) {
    const x = (v as Record<string, unknown>)[k];
    if (x !== undefined) m.set(k, toDyn(x));
  }
  return m;
};

/** Deep equality of converted CEL values (message types, maps, lists, scalars). */
export function celEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if ((typeof a === 'bigint' || typeof a === 'number') && (typeof b === 'bigint' || typeof b === 'number')) return numbersEqual(a, b);
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (a instanceof Date) return b instanceof Date && a.getTime() === b.getTime();
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!celEqual(a[i], b[i])) return false;
    return true;
  }
  if (a instanceof Map) {
    if (!(b instanceof Map) || a.size !== b.size) return false;
    for (const [k, v] of a) if (!b.has(k) || !celEqual(v, b.get(k))) return false;
    return true;
  }
  if (a.constructor !== b.constructor) return false;
  const ak = Object.keys(a);
  if (ak.length !== Object.keys(b).length) return false;
  for (const k of ak) {
    if (!Object.prototype.hasOwnProperty.call(b, k)) return false;
    if (!celEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k])) return false;
  }
  return true;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Collects the message types of one schema (registered on a fresh environment before use). */
export class TypeBuilder {
  private readonly used = new Set<string>();
  readonly messages: Array<{ name: string; ctor: new () => object; fields: Record<string, string> }> = [];
  private readonly memo = new Map<Structural, DeclType>();

  private uniqueName(name: string): string {
    let n = name.replace(/[^A-Za-z0-9_.]/g, '_');
    if (this.used.has(n)) {
      let i = 2;
      while (this.used.has(`${n}_${i}`)) i++;
      n = `${n}_${i}`;
    }
    this.used.add(n);
    return n;
  }

  /** SchemaDeclType: the CEL type of `s`, named after its position (`Object.spec.items.__idx__`). */
  decl(s: Structural, name: string, isResourceRoot: boolean): DeclType {
    // Whether a node is a resource root is fixed by its position, so one declaration per node.
    const hit = this.memo.get(s);
    if (hit) return hit;
    const d = this.build(s, name, isResourceRoot);
    this.memo.set(s, d);
    return d;
  }

  private build(s: Structural, name: string, isResourceRoot: boolean): DeclType {
    if (s.xIntOrString) return { type: 'dyn', convert: toDyn };
    switch (s.type) {
      case 'integer':
        return { type: 'int', convert: toInt };
      case 'number':
        return { type: 'double', convert: identity };
      case 'boolean':
        return { type: 'bool', convert: identity };
      case 'string': {
        const f = s.valueValidation?.format;
        if (f === 'date-time' || f === 'datetime') return { type: 'google.protobuf.Timestamp', convert: toTimestamp };
        return { type: 'string', convert: identity };
      }
      case 'array': {
        if (!s.items) return { type: 'list<dyn>', convert: toDyn };
        const el = this.decl(s.items, `${name}.__idx__`, s.items.xEmbeddedResource);
        const c = el.convert;
        return {
          type: `list<${el.type}>`,
          convert: c === identity ? identity : (v) => (Array.isArray(v) ? v.map((x) => (x === null ? null : c(x))) : v),
        };
      }
      case 'object':
        return this.object(s, name, isResourceRoot || s.xEmbeddedResource);
      default:
        // No type: only legal with x-kubernetes-preserve-unknown-fields (or int-or-string above).
        return { type: 'dyn', convert: toDyn };
    }
  }

  private object(s: Structural, name: string, withMeta: boolean): DeclType {
    const props = s.properties;
    if (!props?.size && !withMeta) {
      const ap = s.additionalProperties?.structural;
      if (ap) {
        const el = this.decl(ap, `${name}.__elem__`, ap.xEmbeddedResource);
        const c = el.convert;
        return {
          type: `map<string, ${el.type}>`,
          convert: (v) => {
            if (!isObject(v)) return v;
            const m = new Map<string, unknown>();
            for (const k of Object.keys(v)) {
              const x = v[k];
              if (x !== undefined && x !== null) m.set(k, c(x));
            }
            return m;
          },
        };
      }
      if (s.xPreserveUnknownFields || s.additionalProperties?.bool) return { type: 'dyn', convert: toDyn };
    }
    const typeName = this.uniqueName(name);
    const ctor = { [typeName]: class {} }[typeName]!;
    const fields = new Map<string, { prop: string; decl: DeclType; schema: Structural | undefined }>();
    if (props) {
      for (const [prop, child] of props) {
        const d = this.decl(child, `${name}.${prop}`, child.xEmbeddedResource);
        const esc = escapeProperty(prop);
        if (esc === undefined) continue; // not addressable from CEL, as upstream (its own rules still run)
        fields.set(esc, { prop, decl: d, schema: child });
      }
    }
    if (withMeta) {
      // WithTypeAndObjectMeta: apiVersion, kind and metadata.{name,generateName} are always known.
      if (!fields.has('apiVersion')) fields.set('apiVersion', { prop: 'apiVersion', decl: { type: 'string', convert: identity }, schema: undefined });
      if (!fields.has('kind')) fields.set('kind', { prop: 'kind', decl: { type: 'string', convert: identity }, schema: undefined });
      const metaName = this.uniqueName(`${name}.metadata`);
      const metaCtor = { [metaName]: class {} }[metaName]!;
      this.messages.push({ name: metaName, ctor: metaCtor, fields: { name: 'string', generateName: 'string' } });
      const metaConvert: Converter = (v) => {
        if (!isObject(v)) return v;
        const o = new metaCtor() as Record<string, unknown>;
        if (typeof v.name === 'string') o.name = v.name;
        if (typeof v.generateName === 'string') o.generateName = v.generateName;
        return o;
      };
      fields.set('metadata', { prop: 'metadata', decl: { type: metaName, convert: metaConvert, ctor: metaCtor }, schema: undefined });
    }
    const fieldTypes: Record<string, string> = {};
    for (const [esc, f] of fields) fieldTypes[esc] = f.decl.type;
    this.messages.push({ name: typeName, ctor, fields: fieldTypes });
    return { type: typeName, convert: messageConverter(ctor, fields, undefined), fields, ctor };
  }

  /** Registers every message type (and its equality) on `env`, which must still be open. */
  register(env: Environment): void {
    for (const m of this.messages) env.registerType(m.name, { ctor: m.ctor, fields: m.fields });
    for (const m of this.messages) {
      env.registerOperator(`${m.name} == ${m.name}`, (a: unknown, b: unknown) => celEqual(a, b));
    }
  }
}

type Fields = NonNullable<DeclType['fields']>;

/** A message type's converter: an instance of `ctor` with the set fields (those in `only`, if given) converted. */
function messageConverter(ctor: new () => object, fields: Fields, only: ReadonlySet<string> | undefined): Converter {
  const list = [...fields].filter(([esc]) => !only || only.has(esc)).map(([esc, f]) => [f.prop, esc, f.decl.convert] as const);
  return (v) => {
    if (!isObject(v)) return v;
    const o = new ctor() as Record<string, unknown>;
    for (let i = 0; i < list.length; i++) {
      const [prop, esc, c] = list[i]!;
      const x = v[prop];
      if (x !== undefined && x !== null) o[esc] = c(x);
    }
    return o;
  };
}

/**
 * The converter of a message type limited to the CEL fields in `only` (all a node's rules read):
 * the value has no other fields, which those rules cannot tell.
 */
export function fieldsConverter(d: DeclType, only: ReadonlySet<string>): Converter {
  if (!d.fields || !d.ctor) return d.convert;
  return messageConverter(d.ctor, d.fields, only);
}

/** Minimum serialized size of a value of schema `s` (upstream estimateMinSizeJSON). */
function minSize(s: Structural | undefined): number {
  if (!s || s.xIntOrString) return 1;
  switch (s.type) {
    case 'string':
      return 2; // ""
    case 'boolean':
      return 4; // true
    case 'integer':
    case 'number':
      return 1;
    case 'array':
    case 'object':
      return 2; // [] or {}
    default:
      return 1;
  }
}

/** The maximum length/size of the value of `s`: declared maxLength/maxItems/maxProperties or the request-size bound. */
export function maxSize(s: Structural | undefined): number {
  if (!s) return MAX_REQUEST_SIZE_BYTES;
  const vv = s.valueValidation;
  switch (s.type) {
    case 'string':
      return vv?.maxLength ?? MAX_REQUEST_SIZE_BYTES - 2;
    case 'array':
      return vv?.maxItems ?? Math.floor((MAX_REQUEST_SIZE_BYTES - 2) / (minSize(s.items) + 1));
    case 'object':
      if (s.properties?.size && !s.additionalProperties?.structural) return s.properties.size;
      // "k":v, — at least 4 bytes of key and punctuation per entry.
      return vv?.maxProperties ?? Math.floor((MAX_REQUEST_SIZE_BYTES - 2) / (minSize(s.additionalProperties?.structural) + 4));
    default:
      return 1;
  }
}
