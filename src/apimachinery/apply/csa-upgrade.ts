// k8s.io/client-go/util/csaupgrade: the client half of moving from client-side to server-side
// apply. kubectl (not the server) runs it before `apply --server-side` on an object it managed
// client-side, and sends the result as a JSON patch of metadata.managedFields. The server's half is
// the last-applied handling in merge.ts. Kept here, pure, for kplane's own clients and tests.
import type { ManagedFieldsEntry } from '../types.js';
import { FieldSet } from './fieldpath.js';
import { KUBECTL_APPLY_MANAGER, KUBECTL_CLIENT_SIDE_APPLY_MANAGER } from './merge.js';

const isCsaEntry =
  (csa: string) =>
  (e: ManagedFieldsEntry): boolean =>
    e.manager === csa && e.operation === 'Update' && !e.subresource;

/**
 * UpgradeManagedFields: the client-side apply manager's Update entry becomes (or is merged into)
 * the server-side apply manager's Apply entry, and every Update entry of the client-side manager
 * on the main resource is dropped. Returns the input unchanged when there is nothing to convert.
 * Not reversible: which fields client-side apply owned is lost.
 */
export function upgradeClientSideApplyManagedFields(
  entries: readonly ManagedFieldsEntry[],
  csaManager: string = KUBECTL_CLIENT_SIDE_APPLY_MANAGER,
  ssaManager: string = KUBECTL_APPLY_MANAGER,
): ManagedFieldsEntry[] | undefined {
  const fields = entries.map((e) => ({ ...e }));
  const csa = isCsaEntry(csaManager);
  let target = fields.findIndex((e) => e.manager === ssaManager && e.operation === 'Apply' && !e.subresource);
  if (target < 0) {
    // Entries are sorted most recent first within an operation, so the first match is the latest.
    target = fields.findIndex(csa);
    if (target < 0) return [...entries];
    fields[target] = { ...fields[target]!, operation: 'Apply', manager: ssaManager };
  }
  const ssa = fields[target]!;
  const csaSameVersion = fields.find((e) => csa(e) && e.apiVersion === ssa.apiVersion);
  if (csaSameVersion) {
    const union = FieldSet.fromFieldsV1(ssa.fieldsV1 ?? {}).union(FieldSet.fromFieldsV1(csaSameVersion.fieldsV1 ?? {}));
    fields[target] = { ...ssa, fieldsV1: union.toFieldsV1() };
  }
  const kept = fields.filter((e) => !csa(e));
  return kept.length ? kept : undefined;
}
