// `ccm-testdriver.yaml`: which driver, its configuration, what the provider's CCM implements and
// how long its cloud takes (the CSI external-driver pattern, research ccm.md §5.3). Read strictly:
// every problem is an error naming the file and the field, reported before any test runs.
//
//   driver: loopback            # a built-in driver's name, or a module path (relative to this file)
//   config: { adminURL: http://127.0.0.1:40123 }   # passed to the driver's factory as is
//   capabilities: [lb.tcp, lb.udp, dataPlane]      # replaces the driver's own list when present
//   timeouts: { lbCreate: 5m, lbLag: 2m }          # Go durations, as upstream's framework flags
import { readFile } from 'node:fs/promises';
import { parse } from 'yaml';
import { parseGoDuration } from '../golang/time.js';
import { CAPABILITIES, type Capability, type CcmTimeouts } from './types.js';

export interface CapabilityFile {
  /** The file it was read from (errors name it). */
  readonly path: string;
  readonly driver?: string;
  readonly config: Readonly<Record<string, unknown>>;
  readonly capabilities?: readonly Capability[];
  readonly timeouts: Partial<CcmTimeouts>;
}

/** A capability file, a driver module or the cluster is not usable; the message names what and where. */
export class CcmTestConfigError extends Error {
  override readonly name = 'CcmTestConfigError';
  readonly code = 'KPL_ERR_CCM_TEST_CONFIG';
}

/** The file's timeout keys (upstream's names without a unit: the value carries it) and CcmTimeouts' fields. */
export const TIMEOUT_KEYS = {
  lbCreate: 'lbCreateMs',
  lbLag: 'lbLagMs',
  lbPropagation: 'lbPropagationMs',
  nodeDeletion: 'nodeDeletionMs',
  proxyLag: 'proxyLagMs',
} as const satisfies Record<string, keyof CcmTimeouts>;

const FIELDS = ['driver', 'config', 'capabilities', 'timeouts'];
const isCapability = (v: string): v is Capability => (CAPABILITIES as readonly string[]).includes(v);
const isMap = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Checks a list of capability names; `where` prefixes each error (file or module). */
export function checkCapabilities(values: readonly unknown[], where: string, field = 'capabilities'): Capability[] {
  return values.map((v, i) => {
    if (typeof v !== 'string') throw new CcmTestConfigError(`${where}: ${field}[${i}]: must be a capability name, got ${JSON.stringify(v)}`);
    if (!isCapability(v)) throw new CcmTestConfigError(`${where}: ${field}[${i}]: unknown capability ${JSON.stringify(v)}; known: ${CAPABILITIES.join(', ')}`);
    return v;
  });
}

export function parseCapabilityFile(text: string, path: string): CapabilityFile {
  let doc: unknown;
  try {
    doc = parse(text, { uniqueKeys: true, prettyErrors: true });
  } catch (e) {
    throw new CcmTestConfigError(`${path}: not valid YAML: ${(e as Error).message}`);
  }
  if (doc === null || doc === undefined) doc = {};
  if (!isMap(doc)) throw new CcmTestConfigError(`${path}: must be a YAML map with ${FIELDS.join(', ')}`);
  for (const k of Object.keys(doc))
    if (!FIELDS.includes(k)) throw new CcmTestConfigError(`${path}: unknown field ${JSON.stringify(k)}; known: ${FIELDS.join(', ')}`);
  const { driver, config, capabilities, timeouts } = doc;
  if (driver !== undefined && (typeof driver !== 'string' || driver === ''))
    throw new CcmTestConfigError(`${path}: driver: must be a built-in driver's name or a module path, got ${JSON.stringify(driver)}`);
  if (config !== undefined && config !== null && !isMap(config)) throw new CcmTestConfigError(`${path}: config: must be a map, got ${JSON.stringify(config)}`);
  if (capabilities !== undefined && !Array.isArray(capabilities))
    throw new CcmTestConfigError(`${path}: capabilities: must be a list, e.g. [lb.tcp, dataPlane], got ${JSON.stringify(capabilities)}`);
  if (timeouts !== undefined && timeouts !== null && !isMap(timeouts))
    throw new CcmTestConfigError(`${path}: timeouts: must be a map, e.g. { lbCreate: 5m }, got ${JSON.stringify(timeouts)}`);
  const parsed: Partial<Record<keyof CcmTimeouts, number>> = {};
  for (const [key, value] of Object.entries(timeouts ?? {})) {
    if (!(key in TIMEOUT_KEYS))
      throw new CcmTestConfigError(
        `${path}: timeouts.${key}: unknown timeout; known: ${Object.keys(TIMEOUT_KEYS).join(', ')} (values are Go durations, e.g. 5m)`,
      );
    const d = typeof value === 'string' ? parseGoDuration(value.trim()) : undefined;
    if (!d || 'error' in d) throw new CcmTestConfigError(`${path}: timeouts.${key}: ${JSON.stringify(value)} is not a duration; use e.g. 5m`);
    if (d.ns <= 0n) throw new CcmTestConfigError(`${path}: timeouts.${key}: must be above 0, got ${JSON.stringify(value)}`);
    parsed[TIMEOUT_KEYS[key as keyof typeof TIMEOUT_KEYS]] = Number(d.ns / 1_000_000n);
  }
  return {
    path,
    ...(driver !== undefined ? { driver } : {}),
    config: isMap(config) ? config : {},
    ...(capabilities !== undefined ? { capabilities: checkCapabilities(capabilities, path) } : {}),
    timeouts: parsed,
  };
}

export async function loadCapabilityFile(path: string): Promise<CapabilityFile> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    throw new CcmTestConfigError(`${path}: cannot read the capability file: ${(e as Error).message}`);
  }
  return parseCapabilityFile(text, path);
}
