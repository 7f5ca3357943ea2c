// CustomResourceDefinition fixtures shared by the e2e tests and bench/cr.ts: one served, stored
// version whose schema has `spec` (and optionally `status`) under a structural object root.
import type { RawClient } from './https.js';
import { eventually } from './eventually.js';

export type Schema = Record<string, unknown>;

/** `status: {phase: string}`, the status most fixtures use. */
export const PHASE_STATUS: Schema = { type: 'object', properties: { phase: { type: 'string' } } };

export interface CrdFixture {
  group: string;
  plural: string;
  kind: string;
  singular?: string;
  scope?: 'Namespaced' | 'Cluster';
  version?: string;
  subresources?: Record<string, unknown>;
  /** The schema of `.spec`. */
  spec: Schema;
  /** The schema of `.status`, if any. */
  status?: Schema;
}

/** The CRD as a JSON object, named `<plural>.<group>`. */
export function crdObject(f: CrdFixture) {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${f.plural}.${f.group}` },
    spec: {
      group: f.group,
      scope: f.scope ?? 'Namespaced',
      names: { plural: f.plural, ...(f.singular ? { singular: f.singular } : {}), kind: f.kind },
      versions: [
        {
          name: f.version ?? 'v1',
          served: true,
          storage: true,
          ...(f.subresources ? { subresources: f.subresources } : {}),
          schema: { openAPIV3Schema: { type: 'object', properties: { spec: f.spec, ...(f.status ? { status: f.status } : {}) } } },
        },
      ],
    },
  };
}

/** Waits (up to 10 s, failing after) until `path` answers 200: a CRD's resource is being served. */
export async function waitServed(raw: RawClient, path: string): Promise<void> {
  await eventually(10_000, `${path} served`, async () => ((await raw.request({ path })).status === 200 ? true : undefined));
}
