// events.k8s.io/v1 Event: served from the same storage as core/v1 Event, converted field by field
// (the mapping upstream's conversion uses: regarding ↔ involvedObject, note ↔ message, ...).
import type { KubeObject } from '../../apimachinery/types.js';
import { coreEventStrategy, type CoreEventShape } from '../core/events.js';
import type { VersionConverter } from '../store.js';
import type { Strategy } from '../strategy.js';

type Json = Record<string, unknown>;

/** events.k8s.io/v1 field → core/v1 field (upstream's conversion); unlisted fields keep their name. */
const RENAMED: readonly (readonly [string, string])[] = [
  ['regarding', 'involvedObject'],
  ['note', 'message'],
  ['deprecatedSource', 'source'],
  ['deprecatedFirstTimestamp', 'firstTimestamp'],
  ['deprecatedLastTimestamp', 'lastTimestamp'],
  ['deprecatedCount', 'count'],
  ['reportingController', 'reportingComponent'],
];
const SAME = ['reason', 'type', 'eventTime', 'series', 'action', 'related', 'reportingInstance'];

function convert(obj: KubeObject, apiVersion: string, pairs: readonly (readonly [string, string])[]): KubeObject {
  const src = obj as Json;
  const out: Json = { apiVersion, kind: 'Event', metadata: obj.metadata };
  for (const [from, to] of pairs) if (src[from] !== undefined) out[to] = src[from];
  for (const k of SAME) if (src[k] !== undefined) out[k] = src[k];
  return out as KubeObject;
}

export const eventsV1Converter: VersionConverter = {
  toStorage: (obj) => convert(obj, 'v1', RENAMED),
  fromStorage: (obj) => convert(obj, 'events.k8s.io/v1', RENAMED.map(([a, b]) => [b, a] as const)),
};

function asCore(o: KubeObject): KubeObject {
  return eventsV1Converter.toStorage(o);
}

export const eventsV1Strategy: Strategy = {
  ...coreEventStrategy,
  validate: (o) => coreEventStrategy.validate(asCore(o)).map(renameField),
  validateUpdate: (o, old) => coreEventStrategy.validateUpdate(asCore(o), asCore(old)).map(renameField),
  selectableFields(o) {
    const core = coreEventStrategy.selectableFields!(asCore(o));
    const out: Record<string, string> = { ...core };
    for (const [k, v] of Object.entries(core)) {
      if (k.startsWith('involvedObject.')) out['regarding.' + k.slice('involvedObject.'.length)] = v;
    }
    out.reportingController = (asCore(o) as CoreEventShape).reportingComponent ?? '';
    return out;
  },
  tableCells: (o) => coreEventStrategy.tableCells!(asCore(o)),
};

function renameField<T extends { field: string }>(i: T): T {
  const f = i.field
    .replace(/^involvedObject/, 'regarding')
    .replace(/^message$/, 'note')
    .replace(/^reportingComponent$/, 'reportingController');
  return { ...i, field: f };
}
