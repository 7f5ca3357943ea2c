// Table output (`Accept: application/json;as=Table;v=v1;g=meta.k8s.io`), as kubectl get prints it.
import type { KubeObject, ListMeta } from '../apimachinery/types.js';
import type { Strategy, TableColumn } from './strategy.js';

export const nameColumn: TableColumn = {
  name: 'Name',
  type: 'string',
  format: 'name',
  description: 'Name must be unique within a namespace. Cannot be updated.',
  priority: 0,
};

export const ageColumn: TableColumn = {
  name: 'Age',
  type: 'string',
  description: 'When the object was created, as a duration before now.',
  priority: 0,
};

const createdAtColumn: TableColumn = {
  name: 'Created At',
  type: 'date',
  description: 'When the object was created.',
  priority: 0,
};

export type IncludeObject = 'None' | 'Metadata' | 'Object';

export interface Table {
  kind: 'Table';
  apiVersion: string;
  metadata: ListMeta;
  /** null in watch events after the first (Go's nil slice), as upstream's watch encoder sends them. */
  columnDefinitions: TableColumn[] | null;
  rows: { cells: unknown[]; object?: KubeObject }[];
}

/** duration.HumanDuration: the AGE column's format. */
export function humanDuration(ms: number): string {
  const seconds = Math.floor(ms / 1000);
  if (seconds < -1) return '<invalid>';
  if (seconds < 0) return '0s';
  if (seconds < 120) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 10) {
    const s = seconds % 60;
    return s === 0 ? `${minutes}m` : `${minutes}m${s}s`;
  }
  if (minutes < 180) return `${minutes}m`;
  const hours = Math.floor(minutes / 60);
  if (hours < 8) {
    const m = minutes % 60;
    return m === 0 ? `${hours}h` : `${hours}h${m}m`;
  }
  if (hours < 48) return `${hours}h`;
  if (hours < 24 * 8) {
    const h = hours % 24;
    return h === 0 ? `${Math.floor(hours / 24)}d` : `${Math.floor(hours / 24)}d${h}h`;
  }
  if (hours < 24 * 365 * 2) return `${Math.floor(hours / 24)}d`;
  if (hours < 24 * 365 * 8) {
    const dy = Math.floor(hours / 24) % 365;
    const y = Math.floor(hours / 24 / 365);
    return dy === 0 ? `${y}y` : `${y}y${dy}d`;
  }
  return `${Math.floor(hours / 24 / 365)}y`;
}

export function ageSince(ts: string | null | undefined, now: number = Date.now()): string {
  if (!ts) return '<unknown>';
  const t = Date.parse(ts);
  if (Number.isNaN(t)) return '<unknown>';
  return humanDuration(now - t);
}

export function partialObjectMetadata(obj: KubeObject, apiVersion = 'meta.k8s.io/v1'): KubeObject {
  return { kind: 'PartialObjectMetadata', apiVersion, metadata: obj.metadata ?? {} };
}

function columnsOf(strategy: Strategy): readonly TableColumn[] {
  return strategy.tableColumns ?? [nameColumn, createdAtColumn];
}

function cellsOf(strategy: Strategy, obj: KubeObject): unknown[] {
  if (strategy.tableCells) return strategy.tableCells(obj);
  return [obj.metadata?.name ?? '', obj.metadata?.creationTimestamp ?? null];
}

export function toTable(
  strategy: Strategy,
  objects: readonly KubeObject[],
  opts: { listMeta?: ListMeta; includeObject?: IncludeObject; apiVersion?: string; noHeaders?: boolean },
): Table {
  const include = opts.includeObject ?? 'Metadata';
  const apiVersion = opts.apiVersion ?? 'meta.k8s.io/v1';
  return {
    kind: 'Table',
    apiVersion,
    metadata: opts.listMeta ?? {},
    // Watch events after the first carry no column definitions (TableOptions.NoHeaders upstream).
    columnDefinitions: opts.noHeaders ? null : [...columnsOf(strategy)],
    rows: objects.map((o) => {
      const row: { cells: unknown[]; object?: KubeObject } = { cells: cellsOf(strategy, o) };
      if (include === 'Object') row.object = o;
      else if (include === 'Metadata') row.object = partialObjectMetadata(o, apiVersion);
      return row;
    }),
  };
}
