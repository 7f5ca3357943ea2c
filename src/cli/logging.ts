// The logging flags kube's components take (k8s.io/component-base/logs): `-v`/`--v` for the
// verbosity and `--logging-format text|json`, shared by `kplane serve` and `kplane controller-manager`.
import { checkLoggingFlags, createKlog, type Logger } from '../golang/klog.js';

export const LOGGING_USAGE = `  -v, --v N                 log verbosity: 0 start-up, state changes and errors; 2 one line per object
                            the controllers act on (garbage collector deletions); 4-5 more detail (default 0)
  --logging-format FORMAT   text (klog's lines) or json (component-base's JSON lines) (default text)
`;

export const LOGGING_OPTIONS = {
  v: { type: 'string', short: 'v', default: '0' },
  'logging-format': { type: 'string', default: 'text' },
} as const;

/** pflag reads `-v=2` as the shorthand with the value 2; node's parseArgs would read "=2". */
export function normalizeShortVerbosity(argv: readonly string[]): string[] {
  const out: string[] = [];
  for (const a of argv) {
    if (a === '--') {
      out.push(...argv.slice(out.length));
      break;
    }
    out.push(/^-v=/.test(a) ? `--v=${a.slice(3)}` : a);
  }
  return out;
}

/** The process's logger from the flags, or the flag's error text. */
export function loggerFromFlags(values: { v: string; 'logging-format': string }): { logger: Logger } | { invalid: string } {
  const checked = checkLoggingFlags(values['logging-format'], values.v);
  if ('error' in checked) return { invalid: checked.error };
  return { logger: createKlog({ verbosity: checked.verbosity, format: checked.format }) };
}
