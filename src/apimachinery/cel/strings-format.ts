// cel-go's ext strings v2 functions kube enables beyond those the evaluator has:
// `<string>.format(<list>)` (printf-style, cel-go ext/formatting.go: %s %d %f %e %b %x %X %o and
// `%%`, a precision as `%.3f`) and `strings.quote(<string>)`. Formatting is as cel-go's with its
// default locale (en_US: `%f` groups thousands with commas, prints infinities as ∞), and errors
// carry cel-go's texts (`error during formatting: decimal clause can only be used on integers, was
// given string`). As cel-go, a constant format string with a literal argument list is also checked
// when the expression is compiled (checkFormatStrings, called by the compile sites through
// expressions.ts's checkConstantPatterns).
import { EvaluationError, type Environment } from '@marcbachmann/cel-js';
import { formatFloat64, goQuote } from '../../golang/strconv.js';
import { walk } from './ast.js';

const DEFAULT_PRECISION = 6;

class StringsNamespace {}

const ctorName = (v: unknown): string => (v !== null && typeof v === 'object' ? (v.constructor?.name ?? '') : '');

/** The CEL type name of a value, for the error texts. */
function typeName(v: unknown): string {
  if (v === null) return 'null_type';
  if (typeof v === 'bigint') return 'int';
  if (typeof v === 'number') return 'double';
  if (typeof v === 'string') return 'string';
  if (typeof v === 'boolean') return 'bool';
  if (Array.isArray(v)) return 'list';
  if (v instanceof Uint8Array) return 'bytes';
  if (v instanceof Date) return 'google.protobuf.Timestamp';
  switch (ctorName(v)) {
    case 'UnsignedInt':
      return 'uint';
    case 'Duration':
      return 'google.protobuf.Duration';
    case 'Type':
      return 'type';
    default:
      return 'map';
  }
}

const uintValue = (v: unknown): bigint | undefined => (ctorName(v) === 'UnsignedInt' ? (v as { value: bigint }).value : undefined);

/** time.Time.Format(time.RFC3339Nano) of a UTC instant. */
const rfc3339Nano = (d: Date): string => d.toISOString().replace(/\.(\d*?)0*Z$/, (_m, f: string) => (f ? `.${f}Z` : 'Z'));

type Map_ = Map<unknown, unknown>;
const entriesOf = (v: unknown): [unknown, unknown][] => (v instanceof Map ? [...(v as Map_)] : Object.entries(v as object));

const fail = (why: string): never => {
  throw new EvaluationError(why);
};
const formatting = (why: string): never => fail(`error during formatting: ${why}`);
const stringClauseError = (t: string): string =>
  `string clause can only be used on strings, bools, bytes, ints, doubles, maps, lists, types, durations, and timestamps, was given ${t}`;

/** FormatString: the %s of a value. */
function formatString(v: unknown): string {
  if (Array.isArray(v)) return formatList(v);
  if (v === null) return 'null';
  switch (typeName(v)) {
    case 'int':
    case 'string':
    case 'bool':
      return String(v);
    case 'uint':
      return String(uintValue(v));
    case 'double':
      // CEL's string(double): strconv.FormatFloat(f, 'g', -1, 64).
      return formatFloat64(v as number);
    case 'bytes':
      return Buffer.from(v as Uint8Array).toString('utf8');
    case 'google.protobuf.Timestamp':
      return rfc3339Nano(v as Date);
    case 'google.protobuf.Duration':
      return String(v);
    case 'type':
      return (v as { name: string }).name;
    default:
      return formatMap(v);
  }
}

/** clauseForType: how a list element or map value prints inside %s, quoted for CEL (quoteForCEL). */
function member(v: unknown): string {
  const t = typeName(v);
  if (t === 'int') return String(v);
  if (t === 'uint') return String(uintValue(v));
  if (t === 'double') {
    const f = v as number;
    // fmt's %.6f (no grouping), as cel-go prints a double inside a list or map.
    return Number.isFinite(f) ? toFixedEven(f, DEFAULT_PRECISION) : goQuote(formatFloat64(f));
  }
  if (t === 'google.protobuf.Timestamp') return `timestamp(${goQuote(rfc3339Nano(v as Date))})`;
  if (t === 'google.protobuf.Duration') return `duration(${goQuote(String(v))})`;
  if (t === 'type') return `type(${(v as { name: string }).name})`;
  const s = formatString(v);
  if (t === 'string') return goQuote(s);
  if (t === 'bytes') return `b${goQuote(s)}`;
  return s;
}

function formatList(l: readonly unknown[]): string {
  return `[${l.map(member).join(', ')}]`;
}

function formatMap(m: unknown): string {
  const pairs = entriesOf(m).map(([k, v]) => {
    const kt = typeName(k);
    if (kt !== 'string' && kt !== 'bool' && kt !== 'int' && kt !== 'uint') formatting(`no formatting function for map key of type ${kt}`);
    return { key: member(k), value: member(v) };
  });
  pairs.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  return `{${pairs.map((p) => `${p.key}:${p.value}`).join(', ')}}`;
}

/** Go's %d/%b/%o/%x of an int or uint. */
function integer(v: unknown, radix: number): string | undefined {
  const n = typeof v === 'bigint' ? v : uintValue(v);
  return n === undefined ? undefined : n.toString(radix);
}

/** Go's %.<p>f digits: as toFixed, but an exact tie rounds to even (2.5 → 2), as strconv does. */
function toFixedEven(x: number, p: number): string {
  // From 1e21 on toFixed answers in exponent form; such a double is an integer.
  if (Math.abs(x) >= 1e21) return p === 0 ? BigInt(x).toString() : `${BigInt(x)}.${'0'.repeat(p)}`;
  // toFixed reads the double's exact value: a tie shows as a 5 and then only zeros.
  const long = x.toFixed(Math.min(100, p + 25));
  const dot = long.indexOf('.');
  if (p > 75 || !/^50*$/.test(long.slice(dot + 1 + p))) return x.toFixed(p);
  const kept = (long.slice(0, dot) + long.slice(dot + 1, dot + 1 + p)).replace(/^0+(?=\d)/, '');
  const n = BigInt(kept) + (BigInt(kept) % 2n === 0n ? 0n : 1n);
  const digits = n.toString().padStart(p + 1, '0');
  return p === 0 ? digits : `${digits.slice(0, -p)}.${digits.slice(-p)}`;
}

/** x/text's en_US rendering of %.<p>f: thousands grouped with commas. */
function fixed(f: number, precision: number): string {
  if (Number.isNaN(f)) return 'NaN';
  if (!Number.isFinite(f)) return f > 0 ? '∞' : '-∞';
  const [int, frac] = toFixedEven(Math.abs(f), precision).split('.') as [string, string | undefined];
  const grouped = int.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return `${f < 0 || Object.is(f, -0) ? '-' : ''}${grouped}${frac !== undefined ? `.${frac}` : ''}`;
}

/** x/text's en_US rendering of %e (cel-go passes the precision as a width: six digits always). */
function scientific(f: number): string {
  if (Number.isNaN(f)) return 'NaN';
  if (!Number.isFinite(f)) return f > 0 ? '∞' : '-∞';
  const [m, e] = f.toExponential(DEFAULT_PRECISION).split('e') as [string, string];
  const n = Number(e);
  return `${m}\u202fe${n < 0 ? '-' : '+'}${String(Math.abs(n)).padStart(2, '0')}`;
}

const floatOf = (v: unknown, clause: string): number => {
  if (typeof v === 'number') return v;
  if (v === 'NaN') return NaN;
  if (v === 'Infinity') return Infinity;
  if (v === '-Infinity') return -Infinity;
  return formatting(`${clause} clause can only be used on doubles, was given ${typeName(v)}`);
};

/** A clause (after the `%`): its verb, its precision, how many characters it took; or why it does not parse. */
function parseClause(spec: string): { verb: string; precision: number | undefined; read: number } | { error: string } {
  let i = 0;
  let precision: number | undefined;
  const bad = (why: string) => ({ error: `could not parse formatting clause: ${why}` });
  if (spec[0] === '.') {
    i = 1;
    while (i < spec.length && spec[i]! >= '0' && spec[i]! <= '9') i++;
    if (i >= spec.length) return bad('error while parsing precision: could not find end of precision specifier');
    const digits = spec.slice(1, i);
    if (digits === '') return bad('error while parsing precision: error while converting precision to integer: strconv.Atoi: parsing "": invalid syntax');
    precision = Number(digits);
  }
  const verb = spec[i]!;
  if (!'sdfeboxX'.includes(verb)) return bad(`unrecognized formatting clause "${verb}"`);
  return { verb, precision, read: i + 1 };
}

/** One clause (after the `%`) applied to `v`: the text, and how many characters it took. */
function clause(spec: string, v: unknown): { text: string; read: number } {
  const parsed = parseClause(spec);
  if ('error' in parsed) return fail(parsed.error);
  const { verb: c, precision, read } = parsed;
  switch (c) {
    case 's': {
      const t = typeName(v);
      if (t === 'map' && (v === undefined || typeof v !== 'object')) formatting(stringClauseError(t));
      return { text: formatString(v), read };
    }
    case 'd':
      return { text: integer(v, 10) ?? formatting(`decimal clause can only be used on integers, was given ${typeName(v)}`), read };
    case 'f':
      return { text: fixed(floatOf(v, 'fixed-point'), precision ?? DEFAULT_PRECISION), read };
    case 'e':
      return { text: scientific(floatOf(v, 'scientific')), read };
    case 'b':
      if (typeof v === 'boolean') return { text: v ? '1' : '0', read };
      return { text: integer(v, 2) ?? formatting(`only integers and bools can be formatted as binary, was given ${typeName(v)}`), read };
    case 'o':
      return { text: integer(v, 8) ?? formatting(`octal clause can only be used on integers, was given ${typeName(v)}`), read };
    default: {
      let hex = integer(v, 16);
      if (hex === undefined && typeof v === 'string') hex = Buffer.from(v, 'utf8').toString('hex');
      if (hex === undefined && v instanceof Uint8Array) hex = Buffer.from(v).toString('hex');
      if (hex === undefined) formatting(`only integers, byte buffers, and strings can be formatted as hex, was given ${typeName(v)}`);
      return { text: c === 'X' ? hex!.toUpperCase() : hex!, read };
    }
  }
}

/** parseFormatString. */
export function formatCEL(format: string, args: readonly unknown[]): string {
  let out = '';
  let arg = 0;
  for (let i = 0; i < format.length; ) {
    if (format[i] !== '%') {
      out += format[i];
      i++;
      continue;
    }
    if (format[i + 1] === '%') {
      out += '%';
      i += 2;
      continue;
    }
    if (arg >= args.length) fail(`index ${arg} out of range`);
    if (i + 1 >= format.length) fail('unexpected end of string');
    const r = clause(format.slice(i + 1), args[arg]);
    out += r.text;
    i += 1 + r.read;
    arg++;
  }
  return out;
}

/** cel-go's strings.quote: a double-quoted CEL string literal (invalid UTF-16 becomes U+FFFD). */
export function quoteCEL(s: string): string {
  const escapes: Record<string, string> = {
    '\x07': '\\a',
    '\b': '\\b',
    '\f': '\\f',
    '\n': '\\n',
    '\r': '\\r',
    '\t': '\\t',
    '\v': '\\v',
    '\\': '\\\\',
    '"': '\\"',
  };
  const wellFormed = s.replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD');
  return `"${wellFormed.replace(/[\x07\b\f\n\r\t\v\\"]/g, (c: string) => escapes[c]!)}"`;
}

/** Declares `string.format` and `strings.quote` on `env`; `charge` takes each call's cost. */
export function registerStringFormat(env: Environment, charge: (n: number) => void): void {
  const fn = (sig: string, h: (...args: never[]) => unknown): void => {
    env.registerFunction(sig, h as (...args: unknown[]) => unknown);
  };
  env.registerType('kubernetes.StringsNamespace', { ctor: StringsNamespace, fields: {} } as never);
  env.registerConstant('strings', 'kubernetes.StringsNamespace', new StringsNamespace());
  fn('string.format(list<dyn>): string', (f: string, args: readonly unknown[]) => {
    charge(1 + Math.ceil(f.length / 10) + args.length);
    return formatCEL(f, args);
  });
  fn('kubernetes.StringsNamespace.quote(string): string', (_: StringsNamespace, s: string) => {
    charge(1 + Math.ceil(s.length / 10));
    return quoteCEL(s);
  });
}

// ---------- the compile-time check (cel-go's stringFormatValidator) ----------

/** Per verb: the kinds of argument it takes (a `dyn` argument passes), and the text when another is given. */
const VERBS: Record<string, { kinds: readonly string[]; error: (t: string) => string }> = {
  d: { kinds: ['int', 'uint'], error: (t) => `decimal clause can only be used on integers, was given ${t}` },
  f: { kinds: ['double', 'string'], error: (t) => `fixed-point clause can only be used on doubles, was given ${t}` },
  e: { kinds: ['double', 'string'], error: (t) => `scientific clause can only be used on doubles, was given ${t}` },
  b: { kinds: ['int', 'uint', 'bool'], error: (t) => `only integers and bools can be formatted as binary, was given ${t}` },
  o: { kinds: ['int', 'uint'], error: (t) => `octal clause can only be used on integers, was given ${t}` },
  x: { kinds: ['int', 'uint', 'string', 'bytes'], error: (t) => `only integers, byte buffers, and strings can be formatted as hex, was given ${t}` },
};
VERBS.X = VERBS.x!;
const STRING_KINDS = [
  'list',
  'map',
  'int',
  'uint',
  'double',
  'bool',
  'string',
  'google.protobuf.Timestamp',
  'bytes',
  'google.protobuf.Duration',
  'type',
  'null_type',
];

interface FormatNode {
  op: string;
  args: unknown;
  start: number;
  end: number;
  checkedType?: { name?: string };
}

/** cel-go's kind of a checked node, as its TypeName reads: `list`, `map`, `null_type`, `dyn`, or the type's name. */
function kindOf(n: FormatNode): string {
  const name = n.checkedType?.name ?? 'dyn';
  if (name.startsWith('list<')) return 'list';
  if (name.startsWith('map<')) return 'map';
  if (name.startsWith('optional<')) return 'optional_type';
  if (name === 'null') return 'null_type';
  return name;
}

/** verifyString: a kind %s takes, and so each element of a list or map literal. */
function badForString(n: FormatNode): FormatNode | undefined {
  const k = kindOf(n);
  if (k !== 'dyn' && !STRING_KINDS.includes(k)) return n;
  if (n.op === 'list')
    for (const e of n.args as FormatNode[]) {
      const b = badForString(e);
      if (b) return b;
    }
  if (n.op === 'map') {
    for (const [key, value] of n.args as [FormatNode, FormatNode][]) {
      const b = badForString(key) ?? badForString(value);
      if (b) return b;
    }
  }
  return undefined;
}

/**
 * cel-go's stringFormatValidator: each `'<constant>'.format([<list literal>])` of a type-checked
 * AST, its format string parsed and each clause checked against its argument's type. The first
 * error, with where cel-go reports it (the argument, or the call's `(`), or undefined.
 */
export function checkFormatStrings(ast: unknown, src: string): { message: string; at: number } | undefined {
  let found: { message: string; at: number } | undefined;
  walk(ast, (node) => {
    const n = node as unknown as FormatNode;
    if (found || n.op !== 'rcall') return;
    const [name, target, callArgs] = n.args as [string, FormatNode, FormatNode[]];
    if (name !== 'format' || target.op !== 'value' || typeof target.args !== 'string' || callArgs.length !== 1 || callArgs[0]!.op !== 'list') return;
    const args = callArgs[0]!.args as FormatNode[];
    const open = src.indexOf('(', target.end);
    const at = (why: string, where = open): void => {
      found = { message: why, at: where };
    };
    const format = target.args;
    let used = 0;
    for (let i = 0; i < format.length; ) {
      if (format[i] !== '%') {
        i++;
        continue;
      }
      if (format[i + 1] === '%') {
        i += 2;
        continue;
      }
      if (i + 1 >= format.length) return at('unexpected end of string');
      if (used >= args.length) return at(`index ${used} out of range`);
      const c = parseClause(format.slice(i + 1));
      if ('error' in c) return at(c.error);
      const arg = args[used]!;
      if (c.verb === 's') {
        const bad = badForString(arg);
        if (bad) return at(`error during formatting: ${stringClauseError(kindOf(bad))}`, bad.start);
      } else {
        const k = kindOf(arg);
        const v = VERBS[c.verb]!;
        if (k !== 'dyn' && !v.kinds.includes(k)) return at(`error during formatting: ${v.error(k)}`, arg.start);
      }
      used++;
      i += 1 + c.read;
    }
    if (args.length > used) at(`too many arguments supplied to string.format (expected ${used}, got ${args.length})`);
  });
  return found;
}
