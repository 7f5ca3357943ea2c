// events.k8s.io/v1 Event: served from the same storage as core/v1 Event, converted field by field
// (the mapping upstream's conversion uses: regarding ↔ involvedObject, note ↔ message, ...).
import type { KubeObject } from '../../apimachinery/types.js';
import { coreEventStrategy, type CoreEventShape } from '../core/events.js';
import type { VersionConverter } from '../store.js';
import type { Strategy } from '../strategy.js';

type Json = Record<string, unknown>;

function move(from: Json, to: Json, a: string, b: string): void {
  if (from[a] !== undefined) to[b] = from[a];
}

export const eventsV1Converter: VersionConverter = {
  toStorage(obj: KubeObject): KubeObject {
    const src = obj as Json;
    const out: Json = { apiVersion: 'v1', kind: 'Event', metadata: obj.metadata };
    move(src, out, 'regarding', 'involvedObject');
    move(src, out, 'note', 'message');
    move(src, out, 'deprecatedSource', 'source');
    move(src, out, 'deprecatedFirstTimestamp', 'firstTimestamp');
    move(src, out, 'deprecatedLastTimestamp', 'lastTimestamp');
    move(src, out, 'deprecatedCount', 'count');
    move(src, out, 'reportingController', 'reportingComponent');
    for (const k of ['reason', 'type', 'eventTime', 'series', 'action', 'related', 'reportingInstance']) move(src, out, k, k);
    return out as KubeObject;
  },
  fromStorage(obj: KubeObject): KubeObject {
    const src = obj as Json;
    const out: Json = { apiVersion: 'events.k8s.io/v1', kind: 'Event', metadata: obj.metadata };
    move(src, out, 'involvedObject', 'regarding');
    move(src, out, 'message', 'note');
    move(src, out, 'source', 'deprecatedSource');
    move(src, out, 'firstTimestamp', 'deprecatedFirstTimestamp');
    move(src, out, 'lastTimestamp', 'deprecatedLastTimestamp');
    move(src, out, 'count', 'deprecatedCount');
    move(src, out, 'reportingComponent', 'reportingController');
    for (const k of ['reason', 'type', 'eventTime', 'series', 'action', 'related', 'reportingInstance']) move(src, out, k, k);
    return out as KubeObject;
  },
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
