// Apply conflicts and the 409 kube-apiserver answers with
// (structured-merge-diff merge/conflict.go, managedfields/internal/conflict.go).
import { StatusError } from '../errors.js';
import type { StatusCause } from '../types.js';
import { pathToString, type FieldPath } from './fieldpath.js';
import { parseManagerIdentifier } from './managed-fields.js';
import { compareStrings, goQuote } from './values.js';

/** A field the applier sets to a different value than another manager, who owns it. */
export interface Conflict {
  /** Manager identifier (the JSON of its managedFields entry without fields and time). */
  readonly manager: string;
  readonly path: FieldPath;
}

/** Thrown by the merge when conflicts block an apply; turned into a 409 at the edge. */
export class ApplyConflicts extends Error {
  override readonly name = 'ApplyConflicts';
  constructor(readonly conflicts: readonly Conflict[]) {
    super(`Apply failed with ${conflicts.length} conflict${conflicts.length === 1 ? '' : 's'}`);
  }
}

/**
 * printManager: `"name"`, plus ` with subresource "s"` and, for updaters, ` using <apiVersion>`
 * (and ` at <time>` when the identifier carries one).
 */
export function printManager(manager: string): string {
  let e: ReturnType<typeof parseManagerIdentifier>;
  try {
    JSON.parse(manager);
    e = parseManagerIdentifier(manager);
  } catch {
    return goQuote(manager);
  }
  let s = goQuote(e.manager ?? '');
  if (e.subresource) s += ` with subresource ${goQuote(e.subresource)}`;
  if (e.operation === 'Update') {
    s += ` using ${e.apiVersion ?? ''}`;
    if (e.time) s += ` at ${new Date(e.time).toISOString().replace(/\.\d+Z$/, 'Z')}`;
  }
  return s;
}

/** getConflictMessage: one line for one conflict; otherwise grouped by sorted manager. */
export function conflictMessage(conflicts: readonly Conflict[]): string {
  if (conflicts.length === 1) {
    const c = conflicts[0]!;
    return `Apply failed with 1 conflict: conflict with ${printManager(c.manager)}: ${pathToString(c.path)}`;
  }
  const byManager = new Map<string, FieldPath[]>();
  for (const c of conflicts) {
    const paths = byManager.get(c.manager) ?? [];
    paths.push(c.path);
    byManager.set(c.manager, paths);
  }
  const lines: string[] = [];
  for (const manager of [...byManager.keys()].sort(compareStrings)) {
    lines.push(`conflicts with ${printManager(manager)}:`);
    for (const p of byManager.get(manager)!) lines.push(`- ${pathToString(p)}`);
  }
  return `Apply failed with ${conflicts.length} conflicts: ${lines.join('\n')}`;
}

/** NewConflictError: 409 Conflict, one FieldManagerConflict cause per field and manager. */
export function conflictError(conflicts: readonly Conflict[]): StatusError {
  const causes: StatusCause[] = conflicts.map((c) => ({
    reason: 'FieldManagerConflict',
    message: `conflict with ${printManager(c.manager)}`,
    field: pathToString(c.path),
  }));
  return new StatusError({ reason: 'Conflict', code: 409, message: conflictMessage(conflicts), details: { causes } });
}
