// kube-controller-manager's ValidatingAdmissionPolicy status controller
// (pkg/controller/validatingadmissionpolicystatus), run inside the control plane because the type
// checker reads the schemas of the kinds served here: for every policy whose generation is newer
// than `status.observedGeneration`, the type check's warnings (apiextensions/cel/policy-typecheck.ts)
// are written to /status as `typeChecking.expressionWarnings`, with the generation checked, by the
// field manager `validatingadmissionpolicy-status` (a merge patch; upstream uses server-side apply).
import { typeCheckPolicy, type TypeCheckSources } from '../apiextensions/cel/policy-typecheck.js';
import type { ValidatingAdmissionPolicy } from '../admission/policy/types.js';
import type { KubeClient } from '../client/types.js';
import type { ApiRegistry } from '../registry/registry.js';
import { WatchedObjects } from '../registry/watched-objects.js';

export const POLICY_STATUS_FIELD_MANAGER = 'validatingadmissionpolicy-status';
const GVR = { group: 'admissionregistration.k8s.io', version: 'v1', resource: 'validatingadmissionpolicies' };

/** The checker's view of the registry: kinds by resource, schemas from the OpenAPI definitions. */
export function registryTypeCheckSources(registry: ApiRegistry): TypeCheckSources {
  return {
    kindFor: (group, version, resource) => registry.lookup(group, version, resource)?.descriptor.kind,
    schemaFor(gvk) {
      const r = registry.byKind(gvk.group ? `${gvk.group}/${gvk.version}` : gvk.version, gvk.kind);
      const name = r?.descriptor.definitionName;
      const schema = name ? registry.definitions[name] : undefined;
      return schema ? { schema, definitions: registry.definitions } : undefined;
    },
  };
}

export interface PolicyStatusController {
  start(): Promise<void>;
  stop(): Promise<void>;
}

export function policyStatusController(registry: ApiRegistry, client: KubeClient, log?: (msg: string) => void): PolicyStatusController {
  const sources = registryTypeCheckSources(registry);
  let running: Promise<void> | undefined;
  let again = false;
  let stopped = false;
  let retry: NodeJS.Timeout | undefined;
  const watched = new WatchedObjects<ValidatingAdmissionPolicy>(
    () => registry.lookup(GVR.group, GVR.version, GVR.resource)?.store,
    'validating admission policy status',
    () => kick(),
    log,
  );

  function kick(): void {
    if (stopped) return;
    if (running) {
      again = true;
      return;
    }
    running = syncAll().finally(() => {
      running = undefined;
      if (again) {
        again = false;
        kick();
      }
    });
  }

  async function syncAll(): Promise<void> {
    let failed = false;
    for (const p of [...watched.items.values()]) {
      const generation = p.metadata?.generation ?? 0;
      const observed = p.status?.observedGeneration ?? 0;
      if (generation <= observed) continue;
      const warnings = typeCheckPolicy(p, sources);
      try {
        await client.patch(
          GVR,
          undefined,
          p.metadata?.name ?? '',
          // A merge patch (upstream applies): the list is replaced, or removed leaving `typeChecking: {}`.
          'merge',
          { status: { observedGeneration: generation, typeChecking: { expressionWarnings: warnings.length ? warnings : null } } },
          { subresource: 'status', fieldManager: POLICY_STATUS_FIELD_MANAGER },
        );
      } catch (e) {
        if (stopped) return;
        failed = true;
        log?.(`validating admission policy status: ${p.metadata?.name ?? ''}: ${e instanceof Error ? e.message : String(e)}`);
      }
    }
    // A failed write (a conflict, storage busy) is tried again soon; the policy is not lost.
    if (failed && !stopped) retry = setTimeout(kick, 1000).unref();
  }

  return {
    async start() {
      await watched.start();
    },
    async stop() {
      stopped = true;
      if (retry) clearTimeout(retry);
      await watched.close();
      await running;
    },
  };
}
