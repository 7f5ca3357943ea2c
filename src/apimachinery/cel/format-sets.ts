// Two of kube's CEL libraries on the shared environment (library.ts registers them):
//
// - The format library (k8s.io/apiserver/pkg/cel/library/format.go, kube 1.31+): named string
//   validations, `format.dns1123Label().validate(s)` or `format.named('dns1123Label')`, whose
//   `validate` answers optional.none() for a valid string, or the list of what is wrong (the texts
//   of the apimachinery validators, as in a 422). Names: dns1123Label, dns1123Subdomain,
//   dns1035Label, qualifiedName, dns1123LabelPrefix, dns1123SubdomainPrefix, dns1035LabelPrefix,
//   labelValue, uri, uuid, byte, date, datetime.
// - cel-go's sets extension (kube 1.29+): `sets.contains(a, b)` (every element of b is in a),
//   `sets.equivalent(a, b)` (each contains the other) and `sets.intersects(a, b)` (an element in
//   both), elements compared with CEL equality (an int equals the double of the same value).
//
// cel-js has no qualified function names: `format` and `sets` are constants of namespace types
// whose receiver functions these are, as the evaluator does for `optional`.
import { Optional, type Environment } from '@marcbachmann/cel-js';
import { formatChecker } from '../openapi/formats.js';
import { isQualifiedName, isValidLabelValue, nameIsDNS1035Label, nameIsDNSLabel, nameIsDNSSubdomain } from '../validation/names.js';
import { parseURL } from './url.js';

/** apiservercel.Format: a named validation. */
export class NamedFormat {
  constructor(
    readonly name: string,
    readonly validate: (s: string) => string[],
  ) {}
}

class FormatNamespace {}
class SetsNamespace {}

const strfmt =
  (format: string, message: string) =>
  (s: string): string[] =>
    formatChecker(format)!(s) ? [] : [message];

/** Go's url.ParseRequestURI, as far as its error goes: an absolute URI or an absolute path. */
/** The `uri` format: Go's url.ParseRequestURI. */
const parseRequestURI = (s: string): string[] => (parseURL(s) ? [] : [`parse ${JSON.stringify(s)}: invalid URI for request`]);

/** library.ConstantFormats: the name `format.<name>()` and `format.named()` take, the Format's name, its check. */
const FORMAT_LIST: readonly (readonly [string, string, (s: string) => string[]])[] = [
  ['dns1123Label', 'DNS1123Label', (s) => nameIsDNSLabel(s, false)],
  ['dns1123Subdomain', 'DNS1123Subdomain', (s) => nameIsDNSSubdomain(s, false)],
  ['dns1035Label', 'DNS1035Label', (s) => nameIsDNS1035Label(s, false)],
  ['qualifiedName', 'QualifiedName', isQualifiedName],
  ['dns1123LabelPrefix', 'DNS1123LabelPrefix', (s) => nameIsDNSLabel(s, true)],
  ['dns1123SubdomainPrefix', 'DNS1123SubdomainPrefix', (s) => nameIsDNSSubdomain(s, true)],
  ['dns1035LabelPrefix', 'DNS1035LabelPrefix', (s) => nameIsDNS1035Label(s, true)],
  ['labelValue', 'LabelValue', isValidLabelValue],
  ['uri', 'URI', parseRequestURI],
  ['uuid', 'uuid', strfmt('uuid', 'does not match the UUID format')],
  ['byte', 'byte', strfmt('byte', 'invalid base64')],
  ['date', 'date', strfmt('date', 'invalid date')],
  ['datetime', 'datetime', strfmt('datetime', 'invalid datetime')],
];
const FORMATS: ReadonlyMap<string, NamedFormat> = new Map(FORMAT_LIST.map(([key, name, validate]) => [key, new NamedFormat(name, validate)]));

/** CEL equality for the values lists hold: numbers across int and double, lists and maps deeply. */
function celEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if ((typeof a === 'bigint' || typeof a === 'number') && (typeof b === 'bigint' || typeof b === 'number')) {
    // A bigint and a number compare by value with ==.
    return a == b;
  }
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => celEqual(x, b[i]));
  if (a instanceof Uint8Array && b instanceof Uint8Array) return Buffer.from(a).equals(Buffer.from(b));
  if (a instanceof Date && b instanceof Date) return a.getTime() === b.getTime();
  const entries = (m: unknown): Map<unknown, unknown> | undefined => {
    if (m instanceof Map) return m as Map<unknown, unknown>;
    if (m !== null && typeof m === 'object' && !Array.isArray(m) && Object.getPrototypeOf(m) === Object.prototype) return new Map(Object.entries(m));
    return undefined;
  };
  const ma = entries(a);
  const mb = entries(b);
  if (!ma || !mb || ma.size !== mb.size) return false;
  for (const [k, v] of ma) if (!mb.has(k) || !celEqual(v, mb.get(k))) return false;
  return true;
}

const containsAll = (a: readonly unknown[], b: readonly unknown[]): boolean => b.every((x) => a.some((y) => celEqual(y, x)));

/** Declares the format library and the sets extension on `env`; `charge` takes each call's cost. */
export function registerFormatAndSets(env: Environment, charge: (n: number) => void): void {
  const fn = (sig: string, h: (...args: never[]) => unknown): void => {
    env.registerFunction(sig, h as (...args: unknown[]) => unknown);
  };
  env.registerType('kubernetes.NamedFormat', { ctor: NamedFormat, fields: {} } as never);
  env.registerType('kubernetes.FormatNamespace', { ctor: FormatNamespace, fields: {} } as never);
  env.registerType('kubernetes.SetsNamespace', { ctor: SetsNamespace, fields: {} } as never);
  env.registerConstant('format', 'kubernetes.FormatNamespace', new FormatNamespace());
  env.registerConstant('sets', 'kubernetes.SetsNamespace', new SetsNamespace());

  for (const [key, f] of FORMATS) fn(`kubernetes.FormatNamespace.${key}(): kubernetes.NamedFormat`, () => f);
  fn('kubernetes.FormatNamespace.named(string): optional<kubernetes.NamedFormat>', (_: FormatNamespace, name: string) => {
    const f = FORMATS.get(name);
    return f ? Optional.of(f) : Optional.none();
  });
  fn('kubernetes.NamedFormat.validate(string): optional<list<string>>', (f: NamedFormat, s: string) => {
    charge(1 + Math.ceil(s.length / 10));
    const errs = f.validate(s);
    return errs.length ? Optional.of(errs) : Optional.none();
  });

  const setsFn = (name: string, h: (a: readonly unknown[], b: readonly unknown[]) => boolean): void =>
    fn(`kubernetes.SetsNamespace.${name}(list<A>, list<A>): bool`, (_: SetsNamespace, a: readonly unknown[], b: readonly unknown[]) => {
      charge(1 + a.length * b.length);
      return h(a, b);
    });
  setsFn('contains', containsAll);
  setsFn('equivalent', (a, b) => containsAll(a, b) && containsAll(b, a));
  setsFn('intersects', (a, b) => a.some((x) => b.some((y) => celEqual(x, y))));
}
