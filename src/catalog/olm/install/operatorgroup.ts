// OperatorGroups as OLM's olm operator reads them (operatorgroup.go, operator.go): the group's
// target namespaces (status.namespaces), a CSV's install modes checked against them
// (operator-framework/api's InstallModeSet.Supports, with its texts), and copied CSVs: a CSV of a
// group that targets other namespaces is copied into each of them, labelled olm.copiedFrom with its
// namespace, status reason Copied, and removed when its parent is gone or no longer targets it.
import { StatusError } from '../../../apimachinery/errors.js';
import { labelSelectorToString, tryLabelSelectorFromObject } from '../../../apimachinery/labels.js';
import type { KubeObject } from '../../../apimachinery/types.js';
import type { GVR, KubeClient } from '../../../client/types.js';
import { arr, CSVS, nameOf, now, obj, OPERATOR_GROUPS, sameStatus, specOf, statusOf, str, type Json } from './shared.js';

export const COPIED_LABEL = 'olm.copiedFrom';
export const OPERATOR_NAMESPACE_ANNOTATION = 'olm.operatorNamespace';
export const TARGETS_ANNOTATION = 'olm.targetNamespaces';
const NAMESPACES: GVR = { group: '', version: 'v1', resource: 'namespaces' };
/** Labels OLM does not carry over to a copy (decorators.ComponentLabelKeyPrefix). */
const COMPONENT_LABEL_PREFIX = 'operators.coreos.com/';

const MODES = ['OwnNamespace', 'SingleNamespace', 'MultiNamespace', 'AllNamespaces'] as const;

/** A CSV copied from another namespace (v1alpha1.IsCopied): the label, or an operator namespace that is not its own. */
export function isCopied(csv: KubeObject): boolean {
  if (csv.metadata?.labels?.[COPIED_LABEL] !== undefined) return true;
  const opNs = csv.metadata?.annotations?.[OPERATOR_NAMESPACE_ANNOTATION];
  return opNs !== undefined && opNs !== csv.metadata?.namespace;
}

/**
 * The group's target namespaces, as OLM writes them in status.namespaces: spec.targetNamespaces,
 * else the namespaces its selector matches, else [""] (all namespaces). Sorted.
 */
export async function targetNamespaces(client: KubeClient, og: KubeObject): Promise<string[]> {
  const spec = specOf(og);
  const listed = arr(spec.targetNamespaces).map(str).filter(Boolean);
  if (listed.length) return [...new Set(listed)].sort();
  if (spec.selector === undefined || spec.selector === null) return [''];
  const sel = tryLabelSelectorFromObject(obj(spec.selector));
  if (!sel.ok) return [];
  const list = await client.list(NAMESPACES, undefined, { labelSelector: labelSelectorToString(sel.selector) });
  return list.items.map(nameOf).sort();
}

/** Writes the group's status.namespaces when they changed. */
export async function writeGroupStatus(client: KubeClient, og: KubeObject, namespaces: string[]): Promise<void> {
  if (JSON.stringify(arr(statusOf(og).namespaces)) === JSON.stringify(namespaces)) return;
  await client.patch(
    OPERATOR_GROUPS,
    og.metadata?.namespace,
    nameOf(og),
    'merge',
    { status: { namespaces, lastUpdated: now() } },
    { subresource: 'status', fieldManager: 'olm-operator' },
  );
}

/**
 * Whether the CSV's install modes allow the group's target namespaces: undefined when they do, else
 * OLM's reason (`InvalidInstallModes`, `UnsupportedOperatorGroup`) and message.
 */
export function installModeProblem(csv: KubeObject, operatorNamespace: string, namespaces: readonly string[]): { reason: string; message: string } | undefined {
  const modes = arr(specOf(csv).installModes).map(obj);
  const set = new Map<string, boolean>();
  for (const m of modes) {
    const type = str(m.type);
    if (set.has(type)) {
      // Go's %v of []InstallMode.
      const shown = modes.map((x) => `{${str(x.type)} ${x.supported === true}}`).join(' ');
      return { reason: 'InvalidInstallModes', message: `InstallMode list contains duplicates, cannot make set: [${shown}]` };
    }
    set.set(type, m.supported === true);
  }
  const has = (t: (typeof MODES)[number]): boolean => set.get(t) === true;
  const unsupported = (message: string): { reason: string; message: string } => ({ reason: 'UnsupportedOperatorGroup', message });
  if (namespaces.length === 0) return unsupported('operatorgroup has invalid selected namespaces, cannot configure to watch zero namespaces');
  if (namespaces.length === 1) {
    const only = namespaces[0]!;
    if (only === operatorNamespace) {
      if (!has('OwnNamespace')) return unsupported('OwnNamespace InstallModeType not supported, cannot configure to watch own namespace');
    } else if (only === '') {
      if (!has('AllNamespaces')) return unsupported('AllNamespaces InstallModeType not supported, cannot configure to watch all namespaces');
    } else if (!has('SingleNamespace')) return unsupported('SingleNamespace InstallModeType not supported, cannot configure to watch one namespace');
    return undefined;
  }
  if (!has('MultiNamespace')) return unsupported(`MultiNamespace InstallModeType not supported, cannot configure to watch ${namespaces.length} namespaces`);
  for (const n of namespaces) {
    if (n === operatorNamespace && !has('OwnNamespace'))
      return unsupported('OwnNamespace InstallModeType not supported, cannot configure to watch own namespace');
    if (n === '') return unsupported('operatorgroup has invalid selected namespaces, NamespaceAll found when |selected namespaces| > 1');
  }
  return undefined;
}

/** Reasons that keep a CSV from being copied (v1alpha1's uncopiableReasons). */
const UNCOPIABLE = new Set([
  'Copied',
  'InvalidInstallModes',
  'NoTargetNamespaces',
  'UnsupportedOperatorGroup',
  'NoOperatorGroup',
  'TooManyOperatorGroups',
  'InterOperatorGroupOwnerConflict',
  'CannotModifyStaticOperatorGroupProvidedAPIs',
]);

function copiable(csv: KubeObject): boolean {
  const s = statusOf(csv);
  const phase = str(s.phase);
  return phase !== '' && phase !== 'None' && !UNCOPIABLE.has(str(s.reason));
}

/** The copy of `csv` for another namespace (OLM's csvCopyPrototype): metadata, spec, status. */
function copyOf(csv: KubeObject, ns: string): { meta: Json; spec: Json; status: Json } {
  const annotations: Record<string, string> = {};
  for (const [k, v] of Object.entries(csv.metadata?.annotations ?? {})) {
    if (k === TARGETS_ANNOTATION || k === 'kubectl.kubernetes.io/last-applied-configuration') continue;
    annotations[k] = v;
  }
  const labels: Record<string, string> = {};
  for (const [k, v] of Object.entries(csv.metadata?.labels ?? {})) if (!k.startsWith(COMPONENT_LABEL_PREFIX)) labels[k] = v;
  labels[COPIED_LABEL] = csv.metadata?.namespace ?? '';
  const from = csv.metadata?.namespace ?? '';
  return {
    meta: { name: nameOf(csv), namespace: ns, labels, annotations },
    spec: specOf(csv),
    status: { ...statusOf(csv), reason: 'Copied', message: `The operator is running in ${from} but is managing this namespace` },
  };
}

/**
 * Copies of the namespace's CSVs into the group's target namespaces (other than its own, and only
 * those that exist), brought up to date; copies from this namespace whose parent is gone or no
 * longer targets their namespace are deleted.
 */
export async function syncCopies(client: KubeClient, ns: string, csvs: readonly KubeObject[], targets: readonly string[] | undefined): Promise<void> {
  const existing = (await client.list(CSVS, undefined, { labelSelector: `${COPIED_LABEL}=${ns}` })).items;
  const byKey = new Map(existing.map((c) => [`${c.metadata?.namespace ?? ''}/${nameOf(c)}`, c]));
  const parents = new Map(csvs.filter((c) => !c.metadata?.deletionTimestamp).map((c) => [nameOf(c), c]));
  // The namespaces a copy belongs in.
  let into: string[] = [];
  if (targets && !(targets.length === 1 && targets[0] === ns)) {
    const all = targets.length === 1 && targets[0] === '';
    const names = (await client.list(NAMESPACES)).items.filter((n) => !n.metadata?.deletionTimestamp).map(nameOf);
    into = names.filter((n) => n !== ns && (all || targets.includes(n)));
  }
  const wanted = new Set<string>();
  for (const csv of parents.values()) {
    if (!copiable(csv)) {
      // OLM leaves the copies of an uncopiable CSV alone (they are not requeued).
      for (const t of into) wanted.add(`${t}/${nameOf(csv)}`);
      continue;
    }
    for (const t of into) {
      const key = `${t}/${nameOf(csv)}`;
      wanted.add(key);
      await ignoreGone(ensureCopy(client, csv, t, byKey.get(key)));
    }
  }
  for (const [key, copy] of byKey) {
    if (wanted.has(key) || copy.metadata?.deletionTimestamp) continue;
    await ignoreGone(client.delete(CSVS, copy.metadata?.namespace, nameOf(copy)));
  }
}

async function ensureCopy(client: KubeClient, csv: KubeObject, ns: string, have: KubeObject | undefined): Promise<void> {
  const want = copyOf(csv, ns);
  let current = have;
  if (!current) {
    current = await client.create(
      CSVS,
      ns,
      { apiVersion: csv.apiVersion, kind: csv.kind, metadata: want.meta, spec: want.spec },
      {
        fieldManager: 'olm-operator',
      },
    );
  } else {
    const meta = current.metadata ?? {};
    const same = sameStatus(
      { labels: meta.labels ?? {}, annotations: meta.annotations ?? {}, spec: specOf(current) },
      { labels: want.meta.labels, annotations: want.meta.annotations, spec: want.spec },
    );
    if (!same) current = await client.update(CSVS, ns, { ...current, metadata: { ...meta, ...want.meta }, spec: want.spec }, { fieldManager: 'olm-operator' });
  }
  if (sameStatus(statusOf(current), want.status)) return;
  await client.updateStatus(CSVS, ns, { ...current, status: want.status }, { fieldManager: 'olm-operator' });
}

async function ignoreGone(p: Promise<unknown>): Promise<void> {
  try {
    await p;
  } catch (e) {
    // The namespace went away, someone else wrote first, or the copy is already gone: the next sync settles it.
    if (e instanceof StatusError && (e.code === 404 || e.code === 409 || e.code === 403)) return;
    throw e;
  }
}
