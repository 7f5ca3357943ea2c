// The garbage collector controller: one Runnable owning its own informers (their set follows
// discovery, so custom resources join without a restart).
import { controllerFactory, type ControllerFactory } from '../types.js';
import { GarbageCollector, type GarbageCollectorOptions } from './collector.js';

export { GarbageCollector, FINALIZER_ORPHAN, FINALIZER_FOREGROUND } from './collector.js';
export type { GarbageCollectorOptions } from './collector.js';

export function garbageCollector(opts: GarbageCollectorOptions = {}): ControllerFactory {
  return controllerFactory(
    'garbagecollector',
    (ctx) => new GarbageCollector(ctx.client, { ...opts, log: ctx.log, ...(ctx.metrics && !opts.registry ? { registry: ctx.metrics } : {}) }),
    { garbageCollection: true, serviceAccountName: 'generic-garbage-collector' },
  );
}
