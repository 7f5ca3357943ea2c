// The autoregister controller (kube-aggregator's pkg/controllers/autoregister and the CRD
// registration controller): a local APIService for every group/version this server serves, with
// the priorities discovery orders them by. Built-in ones are labelled `onstart` (written once at
// start, kept afterwards), custom resources' `true` (kept in step: removed with the last CRD of
// their group/version).
import type { KubeClient } from '../../client/types.js';
import { isStatusError } from '../../client/types.js';
import type { ApiRegistry } from '../../registry/registry.js';
import { APIREGISTRATION_GROUP, APIREGISTRATION_VERSION, apiServiceName, type APIService } from '../../registry/apiregistration/apiservices/types.js';
import { priorityOf } from '../discovery.js';

export const AUTOMANAGED_LABEL = 'kube-aggregator.kubernetes.io/automanaged';
const APISERVICES = { group: APIREGISTRATION_GROUP, version: APIREGISTRATION_VERSION, resource: 'apiservices' };

export interface AutoRegister {
  /** Writes what is missing or different now. */
  sync(): Promise<void>;
  /** Syncs after every change of the registry (CRDs coming and going) until stopped. */
  start(): Promise<void>;
  stop(): Promise<void>;
}

export function autoRegister(
  client: KubeClient,
  registry: ApiRegistry,
  isRemote: (group: string, version: string) => boolean,
  log?: (msg: string) => void,
): AutoRegister {
  let running: Promise<void> | undefined;
  let again = false;
  let unsubscribe: (() => void) | undefined;
  const wanted = (): Map<string, APIService> => {
    const out = new Map<string, APIService>();
    for (const gv of registry.groupVersions()) {
      if (isRemote(gv.group, gv.version)) continue;
      const custom = registry.resources.every(
        (r) => r.descriptor.group !== gv.group || r.descriptor.version !== gv.version || r.registration.customResource === true,
      );
      const p = priorityOf(gv.group, gv.version);
      const name = apiServiceName(gv.group, gv.version);
      out.set(name, {
        apiVersion: `${APIREGISTRATION_GROUP}/${APIREGISTRATION_VERSION}`,
        kind: 'APIService',
        metadata: { name, labels: { [AUTOMANAGED_LABEL]: custom ? 'true' : 'onstart' } },
        spec: { group: gv.group, version: gv.version, groupPriorityMinimum: p.groupPriority, versionPriority: p.versionPriority },
      });
    }
    return out;
  };
  const once = async (): Promise<void> => {
    const want = wanted();
    const list = await client.list<APIService>(APISERVICES);
    const have = new Map(list.items.map((o) => [o.metadata?.name ?? '', o]));
    for (const [name, o] of want) {
      const cur = have.get(name);
      if (!cur) {
        try {
          await client.create(APISERVICES, undefined, o);
        } catch (e) {
          if (!(isStatusError(e) && e.code === 409)) throw e;
        }
        continue;
      }
      const managed = cur.metadata?.labels?.[AUTOMANAGED_LABEL];
      // `onstart` ones are written once a start; an administrator's edits in between stay.
      if (managed !== 'true') continue;
      if (JSON.stringify(cur.spec ?? {}) === JSON.stringify(o.spec)) continue;
      await client.update(APISERVICES, undefined, { ...cur, spec: o.spec });
    }
    for (const [name, cur] of have) {
      if (want.has(name) || cur.metadata?.labels?.[AUTOMANAGED_LABEL] !== 'true' || cur.spec?.service) continue;
      try {
        await client.delete(APISERVICES, undefined, name);
      } catch (e) {
        if (!(isStatusError(e) && e.code === 404)) throw e;
      }
    }
  };
  const sync = (): Promise<void> => {
    if (running) {
      again = true;
      return running;
    }
    running = (async () => {
      do {
        again = false;
        try {
          await once();
        } catch (e) {
          log?.(`autoregister: ${e instanceof Error ? e.message : String(e)}`);
        }
      } while (again);
    })().finally(() => (running = undefined));
    return running;
  };
  return {
    sync,
    async start() {
      await sync();
      unsubscribe = registry.onChange(() => void sync());
    },
    async stop() {
      unsubscribe?.();
      await running;
    },
  };
}
