// Table output (`Accept: application/json;as=Table;v=v1;g=meta.k8s.io`), as kubectl get prints it.
import type { KubeObject, ListMeta } from '../apimachinery/types.js';
import type { Strategy, TableColumn } from './strategy.js';
import { formatTime, GO_ZERO_TIME_SECONDS, parseRfc3339 } from '../apimachinery/protobuf/time.js';

/** metav1.ObjectMeta{}.SwaggerDoc()["name"]: the Name column's description everywhere upstream. */
export const NAME_DESCRIPTION =
  'Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names';

/** metav1.ObjectMeta{}.SwaggerDoc()["creationTimestamp"]: the Age / Created At columns' description. */
export const CREATION_TIMESTAMP_DESCRIPTION =
  'CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata';

export const nameColumn: TableColumn = {
  name: 'Name',
  type: 'string',
  format: 'name',
  description: NAME_DESCRIPTION,
  priority: 0,
};

export const ageColumn: TableColumn = {
  name: 'Age',
  type: 'string',
  description: CREATION_TIMESTAMP_DESCRIPTION,
  priority: 0,
};

/** rest.NewDefaultTableConvertor's second column (kinds without printers, e.g. CRDs). */
const createdAtColumn: TableColumn = {
  name: 'Created At',
  type: 'date',
  description: CREATION_TIMESTAMP_DESCRIPTION,
  priority: 0,
};

/** metav1.TableColumnDefinition as it goes on the wire: `format` has no omitempty, so it is always there. */
export interface TableColumnDefinition {
  name: string;
  type: string;
  format: string;
  description: string;
  priority: number;
}

export type IncludeObject = 'None' | 'Metadata' | 'Object';

export interface Table {
  kind: 'Table';
  apiVersion: string;
  metadata: ListMeta;
  /** null in watch events after the first (Go's nil slice), as upstream's watch encoder sends them. */
  columnDefinitions: TableColumnDefinition[] | null;
  rows: { cells: unknown[]; object?: KubeObject }[];
}

/** duration.HumanDuration: the AGE column's format. */
export function humanDuration(ms: number): string {
  // int(d.Seconds()) truncates toward zero: 1.5s in the future is still "0s", not "<invalid>".
  const seconds = Math.trunc(ms / 1000);
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

/** translateTimestampSince: the age of a metav1.Time / MicroTime, "<unknown>" for the zero time. */
export function ageSince(ts: string | null | undefined, now: number = Date.now()): string {
  if (!ts) return '<unknown>';
  const t = parseTimeMillis(ts);
  if (t === undefined || t === GO_ZERO_TIME_MS) return '<unknown>';
  return humanDuration(now - t);
}

/** Go's zero time.Time (0001-01-01T00:00:00Z) in milliseconds since the epoch. */
const GO_ZERO_TIME_MS = GO_ZERO_TIME_SECONDS * 1000;

/**
 * time.Parse(time.RFC3339, s) as metav1.Time's decoder uses it: milliseconds since the epoch, or
 * undefined when Go would refuse the text (date only, no zone, out-of-range fields, ...).
 */
export function parseTimeMillis(s: string): number | undefined {
  const t = parseRfc3339(s);
  return t && t.seconds * 1000 + Math.floor(t.nanos / 1e6);
}

/** metav1.Time.UTC().Format(time.RFC3339): whole seconds, UTC, "0001-01-01T00:00:00Z" when unset. */
export function formatTimeCell(ts: string | null | undefined): string {
  const t = ts ? parseRfc3339(ts) : undefined;
  return formatTime(t === undefined ? GO_ZERO_TIME_SECONDS : t.seconds);
}

export function partialObjectMetadata(obj: KubeObject, apiVersion = 'meta.k8s.io/v1'): KubeObject {
  return { kind: 'PartialObjectMetadata', apiVersion, metadata: obj.metadata ?? {} };
}

function columnsOf(strategy: Strategy): readonly TableColumn[] {
  return strategy.tableColumns ?? [nameColumn, createdAtColumn];
}

function cellsOf(strategy: Strategy, obj: KubeObject): unknown[] {
  if (strategy.tableCells) return strategy.tableCells(obj);
  // rest.defaultTableConvertor: the name and the creation time as RFC 3339 text.
  return [obj.metadata?.name ?? '', formatTimeCell(obj.metadata?.creationTimestamp)];
}

const wireColumn = (c: TableColumn): TableColumnDefinition => ({
  name: c.name,
  type: c.type,
  format: c.format ?? '',
  description: c.description,
  priority: c.priority,
});

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
    columnDefinitions: opts.noHeaders ? null : columnsOf(strategy).map(wireColumn),
    rows: objects.map((o) => {
      const row: { cells: unknown[]; object?: KubeObject } = { cells: cellsOf(strategy, o) };
      if (include === 'Object') row.object = o;
      else if (include === 'Metadata') row.object = partialObjectMetadata(o, apiVersion);
      return row;
    }),
  };
}
