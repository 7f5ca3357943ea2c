// Command lines as spf13/pflag (under cobra) reads them for opm: flags anywhere among the
// arguments, `--name value` or `--name=value`, `-o` glued or apart, booleans bare or `=value`
// (strconv.ParseBool), "--" ending the flags and "-" an argument; errors in pflag's words.
import { goQuote, NumError, parseGoBool } from './strconv.js';

/** A mistake in how a command was called: cobra prints "Error: ..." and the usage. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

export interface FlagSpec {
  /** long names of flags that take a value */
  readonly values: ReadonlySet<string>;
  /** long names of boolean flags */
  readonly bools: ReadonlySet<string>;
  /** the one shorthand: -o for --output */
  readonly output?: boolean;
}

export interface ParsedFlags {
  args: string[];
  values: Record<string, string>;
  bools: Record<string, boolean>;
  /** every flag set on the command line (pflag's Changed) */
  changed: Set<string>;
}

/** strconv.ParseBool, as pflag parses a boolean flag's value. */
function parseBool(name: string, v: string): boolean {
  const b = parseGoBool(v);
  if (b instanceof NumError) throw new UsageError(`invalid argument ${goQuote(v)} for "--${name}" flag: ${b.message}`);
  return b;
}

export function parseFlags(argv: readonly string[], spec: FlagSpec): ParsedFlags {
  const out: ParsedFlags = { args: [], values: {}, bools: {}, changed: new Set() };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--') {
      out.args.push(...argv.slice(i + 1));
      break;
    }
    if (spec.output === true && a.startsWith('-o')) {
      if (a === '-o') {
        if (i + 1 >= argv.length) throw new UsageError("flag needs an argument: 'o' in -o");
        out.values['output'] = argv[++i]!;
      } else out.values['output'] = a.slice(a[2] === '=' ? 3 : 2);
      out.changed.add('output');
      continue;
    }
    if (a.startsWith('--') && a.length > 2) {
      const eq = a.indexOf('=');
      const name = eq < 0 ? a.slice(2) : a.slice(2, eq);
      if (spec.values.has(name)) {
        if (eq >= 0) out.values[name] = a.slice(eq + 1);
        else {
          if (i + 1 >= argv.length) throw new UsageError(`flag needs an argument: --${name}`);
          out.values[name] = argv[++i]!;
        }
      } else if (spec.bools.has(name)) {
        out.bools[name] = eq < 0 ? true : parseBool(name, a.slice(eq + 1));
      } else throw new UsageError(`unknown flag: --${name}`);
      out.changed.add(name);
      continue;
    }
    if (a.startsWith('-') && a.length > 1) throw new UsageError(`unknown shorthand flag: '${a[1]}' in ${a}`);
    out.args.push(a);
  }
  return out;
}
