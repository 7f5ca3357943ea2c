// From a driver's name or module path to a checked CcmTestDriver, with the capability file's
// capabilities and timeouts laid over it. A module that does not export a driver, or exports one
// missing a part, is an error naming the module and what is missing, before any test runs.
import { isAbsolute, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { type CapabilityFile, CcmTestConfigError, checkCapabilities } from './capability-file.js';
import { builtinDrivers, type DriverContext, type DriverFactory } from './drivers/index.js';
import type { CcmTestDriver } from './types.js';

/** The export names a driver module may use, in the order they are looked at. */
export const DRIVER_EXPORTS = ['default', 'driver', 'createDriver'] as const;

const isMap = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null;
const looksLikePath = (spec: string): boolean => /^[./~]/.test(spec) || /\.(?:[cm]?[jt]s)$/.test(spec) || isAbsolute(spec);

/** The methods each optional part must have, as types.ts declares them. */
const PARTS: Record<string, readonly string[]> = {
  nodes: ['deleteInstance', 'instanceExists'],
  loadBalancers: ['describe', 'forceCleanup'],
  externalClient: ['httpGet', 'udpExchange', 'tcpConnect', 'sourceIPs'],
  upgrade: [],
  podClient: ['dial'],
};

/** Checks what a factory or module gave; names every missing or wrong part. */
export function checkDriver(v: unknown, where: string): CcmTestDriver {
  if (!isMap(v)) throw new CcmTestConfigError(`${where}: the driver must be an object (CcmTestDriver), got ${v === null ? 'null' : typeof v}`);
  const problems: string[] = [];
  if (typeof v.name !== 'string' || v.name === '') problems.push('name (a non-empty string)');
  const caps = v.capabilities;
  if (!(caps instanceof Set) && !Array.isArray(caps)) problems.push('capabilities (a Set of capability names)');
  if (v.timeouts !== undefined && !isMap(v.timeouts)) problems.push('timeouts (an object of milliseconds, CcmTimeouts)');
  for (const [part, methods] of Object.entries(PARTS)) {
    const p = v[part];
    if (p === undefined) continue;
    if (!isMap(p)) problems.push(`${part} (an object)`);
    else for (const m of methods) if (typeof p[m] !== 'function') problems.push(`${part}.${m}() (a function)`);
  }
  for (const hook of ['beforeEach', 'afterEach']) if (v[hook] !== undefined && typeof v[hook] !== 'function') problems.push(`${hook}() (a function)`);
  if (problems.length) throw new CcmTestConfigError(`${where}: not a CcmTestDriver: missing or wrong ${problems.join(', ')}`);
  const capabilities = checkCapabilities([...(caps as Iterable<unknown>)], where, 'driver capabilities');
  const driver = v as unknown as CcmTestDriver;
  // A list is accepted for convenience; the driver object itself is never changed.
  return caps instanceof Set ? driver : withCapabilityFile(driver, { capabilities, timeouts: {} });
}

/**
 * A driver as a run sees it: the capability file's capabilities (when it lists them) replace the
 * driver's own, its timeouts are laid over the driver's. The driver itself is left as it is.
 */
export function withCapabilityFile(driver: CcmTestDriver, file: Pick<CapabilityFile, 'capabilities' | 'timeouts'> | undefined): CcmTestDriver {
  if (!file) return driver;
  return {
    name: driver.name,
    capabilities: file.capabilities ? new Set(file.capabilities) : driver.capabilities,
    timeouts: { ...driver.timeouts, ...file.timeouts },
    ...(driver.nodes ? { nodes: driver.nodes } : {}),
    ...(driver.loadBalancers ? { loadBalancers: driver.loadBalancers } : {}),
    ...(driver.externalClient ? { externalClient: driver.externalClient } : {}),
    ...(driver.upgrade ? { upgrade: driver.upgrade } : {}),
    ...(driver.podClient ? { podClient: driver.podClient } : {}),
    ...(driver.testExternalIP !== undefined ? { testExternalIP: driver.testExternalIP } : {}),
    ...(driver.beforeEach ? { beforeEach: driver.beforeEach.bind(driver) } : {}),
    ...(driver.afterEach ? { afterEach: driver.afterEach.bind(driver) } : {}),
  };
}

export interface LoadDriverOptions {
  /** A built-in driver's name (fake, loopback) or a module path. */
  readonly spec: string;
  /** Relative module paths resolve from here (the capability file's folder, or the working directory for --driver). */
  readonly baseDir: string;
  readonly context: DriverContext;
  /** Default: the built-in drivers. */
  readonly drivers?: Readonly<Record<string, DriverFactory>>;
}

export async function loadDriver(opts: LoadDriverOptions): Promise<CcmTestDriver> {
  const drivers = opts.drivers ?? builtinDrivers;
  const builtin = Object.hasOwn(drivers, opts.spec) ? drivers[opts.spec] : undefined;
  if (builtin) {
    const where = `driver ${JSON.stringify(opts.spec)}`;
    let made: unknown;
    try {
      made = await builtin(opts.context);
    } catch (e) {
      throw new CcmTestConfigError(`${where}: could not be started: ${(e as Error).message}`);
    }
    return checkDriver(made, where);
  }
  if (!looksLikePath(opts.spec)) {
    const known = Object.keys(drivers).sort();
    throw new CcmTestConfigError(
      `unknown driver ${JSON.stringify(opts.spec)}: built in: ${known.length ? known.join(', ') : '(none)'}; or give a module path, e.g. ./my-driver.ts`,
    );
  }
  const file = resolve(opts.baseDir, opts.spec);
  let mod: Record<string, unknown>;
  try {
    mod = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    const hint =
      err.code === 'ERR_UNKNOWN_FILE_EXTENSION' ? ' (a TypeScript driver needs a loader: run with NODE_OPTIONS=--import=tsx, or compile it to .js)' : '';
    throw new CcmTestConfigError(`driver module ${file}: cannot be loaded: ${err.message}${hint}`);
  }
  const name = DRIVER_EXPORTS.find((n) => mod[n] !== undefined);
  if (!name) {
    const found = Object.keys(mod).filter((k) => k !== '__esModule');
    throw new CcmTestConfigError(
      `driver module ${file}: exports no CcmTestDriver: expected ${DRIVER_EXPORTS.map((n) => (n === 'default' ? 'a default export' : `\`${n}\``)).join(' or ')}, a driver object or a factory (ctx) => Promise<CcmTestDriver>; it exports ${found.length ? found.join(', ') : 'nothing'}`,
    );
  }
  const where = `driver module ${file} (export ${name})`;
  const exported = mod[name];
  if (typeof exported !== 'function') return checkDriver(exported, where);
  let made: unknown;
  try {
    made = await (exported as DriverFactory)(opts.context);
  } catch (e) {
    throw new CcmTestConfigError(`${where}: the factory failed: ${(e as Error).message}`);
  }
  return checkDriver(made, `${where}, what the factory returned`);
}
