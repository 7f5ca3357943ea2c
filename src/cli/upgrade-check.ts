// `kplane upgrade-check` (KEP-0007, research A14): before running an older kplane (a downgrade, or
// `--emulated-version` lowered), say per feature whether the data stored today still depends on a
// feature the target version lacks: a gated field still set on stored objects of a feature that
// is not available at the target (the older server would neither validate nor clean it). Exit 1
// when a downgrade is unsafe, 2 on a bad flag.
//
// It reads a running cluster through the API (--kubeconfig), or the data directory of a stopped
// server (--data-dir: the SQLite database, read-only, under the writer lock so that no server
// starts on it meanwhile): the check to run between stopping the newer kplane and starting the
// older one.
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { KubeObject } from '../apimachinery/types.js';
import { createHttpsClient, loadKubeconfig } from '../client/https.js';
import type { GVR, KubeClient } from '../client/types.js';
import { defaultModules } from '../controlplane/modules.js';
import { KUBE_BINARY_VERSION, KUBE_FEATURES, PreAlpha, specAt, Version } from '../featuregate/index.js';
import { parseJSONExact } from '../golang/json-int64.js';
import type { GatedField } from '../registry/gated-fields.js';
import { defaultKeyPrefix } from '../registry/registry.js';
import { BackupError, readStoppedDatabase, type StoredValue } from '../storage/sqlite/backup.js';

export const UPGRADE_CHECK_USAGE = `kplane upgrade-check flags:
  --kubeconfig FILE         the cluster to check, through its API
  --data-dir DIR            or: the data directory of a stopped kplane (SQLite), read offline
  --target-version VER      the Kubernetes version the older kplane serves or emulates, e.g. 1.30 (required)

One of --kubeconfig and --data-dir is required.

Lists every kplane feature with its stage at the target version and the stored objects that still
hold its gated fields. Exits 1 when one such feature is not available at the target (unsafe), 0
otherwise. Clear the data first: turn the feature off and let its ClearField task run (kubectl get
features -A shows when it is Off).
`;

interface GatedResource {
  readonly gvr: GVR;
  /** Where its objects are stored (`/registry/<group>/<plural>/`). */
  readonly keyPrefix: string;
  readonly namespaced: boolean;
  readonly fields: readonly GatedField[];
}

/** The resources kplane serves by default that declare gated fields. */
function gatedResources(): GatedResource[] {
  const out: GatedResource[] = [];
  for (const m of defaultModules())
    for (const r of m.resources ?? []) {
      if (!r.gatedFields?.length) continue;
      const d = r.descriptor;
      out.push({
        gvr: { group: d.group, version: d.version, resource: d.plural },
        keyPrefix: r.keyPrefix ?? defaultKeyPrefix(d),
        namespaced: d.namespaced,
        fields: r.gatedFields,
      });
    }
  return out;
}

const isSet = (o: unknown, path: readonly string[]): boolean => {
  let cur: unknown = o;
  for (const p of path) {
    if (!cur || typeof cur !== 'object') return false;
    cur = (cur as Record<string, unknown>)[p];
  }
  return cur !== undefined && cur !== null;
};

/** How many stored objects of a resource hold any of the paths. */
type Counter = (r: GatedResource, paths: readonly (readonly string[])[]) => Promise<number>;

/** Through the API: lists in pages of 500. */
async function countWithFields(client: KubeClient, r: GatedResource, paths: readonly (readonly string[])[]): Promise<number> {
  let n = 0;
  let cont: string | undefined;
  do {
    const page = await client.list<KubeObject>(r.gvr, undefined, { limit: 500, ...(cont ? { continue: cont } : {}) });
    for (const o of page.items) if (paths.some((p) => isSet(o, p))) n++;
    cont = page.metadata?.continue || undefined;
  } while (cont);
  return n;
}

const ENCRYPTED = Buffer.from('k8s:enc:');

/** Thrown when a stored value cannot be read offline; the message says which and what to do. */
class OfflineReadError extends Error {}

/** Offline: every stored object under the resource's key prefix, decoded from its JSON. */
function countStored(values: (prefix: string) => Iterable<StoredValue>, r: GatedResource, paths: readonly (readonly string[])[]): number {
  let n = 0;
  for (const { key, value } of values(r.keyPrefix)) {
    if (value.subarray(0, ENCRYPTED.length).equals(ENCRYPTED))
      throw new OfflineReadError(`${key} is encrypted at rest: check through a running server with --kubeconfig (it holds the keys)`);
    let o: unknown;
    try {
      o = parseJSONExact(value.toString('utf8'));
    } catch (e) {
      throw new OfflineReadError(`${key} is not a JSON object as kplane stores them: ${(e as Error).message}`);
    }
    if (paths.some((p) => isSet(o, p))) n++;
  }
  return n;
}

const stageName = (p: string): string => (p === '' ? 'GA' : p === PreAlpha ? 'unavailable' : p.charAt(0) + p.slice(1).toLowerCase());
const resourceName = (g: GVR): string => (g.group ? `${g.resource}.${g.group}` : g.resource);

export async function upgradeCheck(
  argv: string[],
  out: (s: string) => void = (s) => process.stdout.write(s),
  err: (s: string) => void = (s) => process.stderr.write(s),
): Promise<number> {
  let values: { kubeconfig?: string | undefined; 'data-dir'?: string | undefined; 'target-version'?: string | undefined; help?: boolean | undefined };
  try {
    ({ values } = parseArgs({
      args: argv,
      options: { kubeconfig: { type: 'string' }, 'data-dir': { type: 'string' }, 'target-version': { type: 'string' }, help: { type: 'boolean', short: 'h' } },
      allowPositionals: false,
    }));
  } catch (e) {
    err(`kplane: ${(e as Error).message}\n`);
    return 2;
  }
  if (values.help) {
    out(UPGRADE_CHECK_USAGE);
    return 0;
  }
  const bad = (msg: string): number => {
    err(`kplane: ${msg}\n`);
    return 2;
  };
  if (!values.kubeconfig && !values['data-dir']) return bad('upgrade-check needs --kubeconfig FILE or --data-dir DIR');
  if (values.kubeconfig && values['data-dir']) return bad('upgrade-check takes one of --kubeconfig and --data-dir, not both');
  const raw = values['target-version'];
  if (!raw) return bad('upgrade-check needs --target-version VER');
  let target: Version;
  try {
    target = Version.parse(raw.replace(/^v/, ''));
  } catch (e) {
    return bad(`invalid argument ${JSON.stringify(raw)} for "--target-version" flag: ${(e as Error).message}`);
  }
  if (target.greaterThan(KUBE_BINARY_VERSION))
    return bad(`--target-version ${raw} is newer than this kplane (${KUBE_BINARY_VERSION.toString()}): nothing to check`);
  const resources = gatedResources();
  // What to count: per feature, each resource that declares gated fields for it.
  const wanted = Object.keys(KUBE_FEATURES)
    .sort()
    .map((name) => ({
      name,
      checks: resources.map((r) => ({ r, paths: r.fields.filter((f) => f.feature === name).map((f) => f.path) })).filter((c) => c.paths.length > 0),
    }));
  const counts = new Map<string, number>();
  const countKey = (feature: string, r: GatedResource): string => `${feature}\u0000${r.keyPrefix}`;
  const countAll = async (count: Counter): Promise<void> => {
    for (const w of wanted) for (const { r, paths } of w.checks) counts.set(countKey(w.name, r), await count(r, paths));
  };
  if (values['data-dir']) {
    const dataDir = resolve(values['data-dir']);
    try {
      readStoppedDatabase(
        dataDir,
        (read) => {
          for (const w of wanted) for (const { r, paths } of w.checks) counts.set(countKey(w.name, r), countStored(read, r, paths));
        },
        'or check it through the API with --kubeconfig',
      );
    } catch (e) {
      if (e instanceof BackupError || e instanceof OfflineReadError) return bad(`upgrade-check: ${e.message}`);
      throw e;
    }
  } else {
    const client = createHttpsClient(loadKubeconfig(values.kubeconfig!));
    try {
      await countAll((r, paths) => countWithFields(client, r, paths));
    } finally {
      void client.close();
    }
  }
  const rows: string[][] = [['FEATURE', `AT ${target.toString()}`, 'STORED DATA', 'DOWNGRADE']];
  let unsafe = 0;
  for (const { name, checks } of wanted) {
    const atTarget = specAt(KUBE_FEATURES[name]!, target);
    const lacks = atTarget.preRelease === PreAlpha;
    const stored: string[] = [];
    for (const { r, paths } of checks) {
      const n = counts.get(countKey(name, r)) ?? 0;
      if (n > 0) stored.push(`${n} ${resourceName(r.gvr)} with ${paths.map((p) => p.join('.')).join(',')}`);
    }
    const verdict = lacks && stored.length > 0 ? 'unsafe' : 'safe';
    if (verdict === 'unsafe') unsafe++;
    const stage = lacks ? 'unavailable' : `${stageName(atTarget.preRelease)} (default ${atTarget.default ? 'on' : 'off'})`;
    rows.push([name, stage, stored.length ? stored.join('; ') : 'none', verdict]);
  }
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  for (const r of rows) out(`${r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]! + 3))).join('')}\n`);
  if (unsafe > 0) {
    out(
      `\n${unsafe} feature(s) still have stored data that kplane ${target.toString()} does not know: not safe to downgrade.\nTurn them off (kplane serve --feature-gates=<Feature>=false) and wait until kubectl get features -A shows them Off.\n`,
    );
    return 1;
  }
  out(`\nSafe to downgrade to ${target.toString()}: no stored data depends on a feature it lacks.\n`);
  return 0;
}
