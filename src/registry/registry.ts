// What a control plane serves: API modules contribute resources (descriptor + strategy), OpenAPI
// definitions, admission plugins and start-up work. The registry builds one GenericStore each.
import type { ResourceDescriptor } from '../apimachinery/resource.js';
import type { Definitions } from '../apimachinery/schema.js';
import { apiVersionOf, type GroupVersionKind, type GroupVersionResource, type KubeObject } from '../apimachinery/types.js';
import type { Storage } from '../storage/storage.js';
import { GenericStore, type VersionConverter } from './store.js';
import type { Strategy } from './strategy.js';

export interface ResourceRegistration {
  readonly descriptor: ResourceDescriptor;
  readonly strategy: Strategy;
  /** Storage key prefix ending in '/'; default `/registry/[<group>/]<plural>/`. */
  readonly keyPrefix?: string;
  readonly converter?: VersionConverter;
  /** DELETE answers with the deleted object instead of a Success Status (namespaces). */
  readonly returnDeletedObject?: boolean;
}

export interface UserInfo {
  readonly name: string;
  readonly uid?: string;
  readonly groups: readonly string[];
}

export type AdmissionOperation = 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';

export interface AdmissionAttributes {
  readonly operation: AdmissionOperation;
  readonly resource: GroupVersionResource;
  readonly subresource: string;
  readonly kind: GroupVersionKind;
  readonly namespace: string;
  readonly name: string;
  /** The new object (create/update); plugins in the mutating phase may change it. */
  readonly object?: KubeObject;
  readonly oldObject?: KubeObject;
  readonly dryRun: boolean;
  readonly userInfo: UserInfo;
}

/** An admission plugin: `admit` may mutate (runs first), `validate` may only reject. Both throw StatusError to deny. */
export interface AdmissionPlugin {
  readonly name: string;
  admit?(attrs: AdmissionAttributes): void | Promise<void>;
  validate?(attrs: AdmissionAttributes): void | Promise<void>;
}

export interface ControlPlaneContext {
  readonly registry: ApiRegistry;
}

export interface ApiModule {
  readonly name: string;
  readonly resources: readonly ResourceRegistration[];
  readonly definitions?: Definitions;
  readonly admission?: (ctx: ControlPlaneContext) => readonly AdmissionPlugin[];
  /** Runs once storage is up, before the server reports ready (e.g. system namespaces). */
  readonly bootstrap?: (ctx: ControlPlaneContext) => Promise<void>;
}

export interface RegisteredResource {
  readonly registration: ResourceRegistration;
  readonly descriptor: ResourceDescriptor;
  readonly store: GenericStore;
}

export function defaultKeyPrefix(d: ResourceDescriptor): string {
  return d.group ? `/registry/${d.group}/${d.plural}/` : `/registry/${d.plural}/`;
}

export class ApiRegistry {
  private readonly byGVR = new Map<string, RegisteredResource>();
  readonly resources: RegisteredResource[] = [];
  readonly definitions: Definitions = {};

  constructor(
    private readonly storage: Storage,
    private readonly onPrefix?: (prefix: string) => void,
  ) {}

  add(reg: ResourceRegistration): RegisteredResource {
    const d = reg.descriptor;
    const keyPrefix = reg.keyPrefix ?? defaultKeyPrefix(d);
    this.onPrefix?.(keyPrefix);
    const store = new GenericStore({
      descriptor: d,
      strategy: reg.strategy,
      storage: this.storage,
      keyPrefix,
      ...(reg.converter ? { converter: reg.converter } : {}),
    });
    const r: RegisteredResource = { registration: reg, descriptor: d, store };
    this.byGVR.set(gvrKey(d.group, d.version, d.plural), r);
    this.resources.push(r);
    return r;
  }

  addDefinitions(defs: Definitions): void {
    Object.assign(this.definitions, defs);
  }

  lookup(group: string, version: string, resource: string): RegisteredResource | undefined {
    return this.byGVR.get(gvrKey(group, version, resource));
  }

  /** The served group/versions, in registration order, core first. */
  groupVersions(): { group: string; version: string }[] {
    const seen = new Set<string>();
    const out: { group: string; version: string }[] = [];
    for (const r of this.resources) {
      const k = apiVersionOf(r.descriptor.group, r.descriptor.version);
      if (!seen.has(k)) {
        seen.add(k);
        out.push({ group: r.descriptor.group, version: r.descriptor.version });
      }
    }
    return out;
  }

  /** Look a store up by kind (for controllers and admission that know only apiVersion/kind). */
  byKind(apiVersion: string, kind: string): RegisteredResource | undefined {
    return this.resources.find((r) => apiVersionOf(r.descriptor.group, r.descriptor.version) === apiVersion && r.descriptor.kind === kind);
  }
}

function gvrKey(group: string, version: string, resource: string): string {
  return `${group}/${version}/${resource}`;
}
