// NamespaceLifecycle admission: nothing is created in a namespace that is missing or terminating,
// and the system namespaces cannot be deleted (plugin/pkg/admission/namespace/lifecycle).
import { StatusError, forbidden, notFound } from '../../apimachinery/errors.js';
import type { AdmissionPlugin, ApiRegistry } from '../registry.js';
import { SYSTEM_NAMESPACES } from './namespaces.js';

export function namespaceLifecycle(registry: ApiRegistry): AdmissionPlugin {
  const immortal = new Set<string>(SYSTEM_NAMESPACES);
  return {
    name: 'NamespaceLifecycle',
    async validate(a) {
      const isNamespace = a.resource.group === '' && a.resource.resource === 'namespaces';
      if (isNamespace && a.operation === 'DELETE' && immortal.has(a.name)) {
        throw forbidden({ group: '', resource: 'namespaces' }, a.name, 'this namespace may not be deleted');
      }
      if (a.operation !== 'CREATE' || !a.namespace || isNamespace) return;
      const namespaces = registry.lookup('', 'v1', 'namespaces');
      if (!namespaces) return;
      let ns;
      try {
        // From the watch cache like upstream's namespace lister; a miss falls back to storage.
        ns = await namespaces.store.getCached(undefined, a.namespace);
      } catch (e) {
        if (e instanceof StatusError && e.code === 404) throw notFound({ group: '', resource: 'namespaces' }, a.namespace);
        throw e;
      }
      const phase = (ns as { status?: { phase?: string } }).status?.phase;
      if (phase === 'Terminating' || ns.metadata?.deletionTimestamp) {
        const err = forbidden(
          { group: a.resource.group, resource: a.resource.resource },
          a.name,
          `unable to create new content in namespace ${a.namespace} because it is being terminated`,
        );
        err.status.details = {
          ...err.status.details,
          causes: [{ reason: 'NamespaceTerminating', message: `namespace ${a.namespace} is being terminated`, field: 'metadata.namespace' }],
        };
        throw err;
      }
    },
  };
}
