// What a control plane serves: API modules contribute resources (each a kind's descriptor,
// strategy, OpenAPI definitions, protobuf messages and Go field types), admission plugins and
// start-up work. The registry builds one GenericStore each and owns the control plane's Scheme.
import { metaDefinitions } from '../apimachinery/definitions/meta.js';
import type { GoFieldTypes } from '../apimachinery/gotypes.js';
import type { ResourceDescriptor } from '../apimachinery/resource.js';
import { Scheme } from '../apimachinery/scheme.js';
import type { Definitions } from '../apimachinery/schema.js';
import { apiVersionOf, type KubeObject } from '../apimachinery/types.js';
import type { Storage } from '../storage/storage.js';
import type { FeatureLookup, GatedField } from './gated-fields.js';
import { GenericStore, type VersionConverter } from './store.js';
import type { Strategy } from './strategy.js';

/** One served resource: everything the control plane needs to know about its kind. */
export interface ResourceRegistration {
  readonly descriptor: ResourceDescriptor;
  readonly strategy: Strategy;
  /** OpenAPI definitions of the kind and the types it refers to, added to the control plane's. */
  readonly definitions?: Definitions;
  /**
   * The protobuf messages (full proto names, see apimachinery/protobuf/proto) of the kind and of
   * its list, added to the control plane's Scheme under the descriptor's apiVersion. Without them
   * the kind has no protobuf form there.
   */
  readonly protobuf?: { readonly kind: string; readonly list: string };
  /** A feature gate the resource is served under: left out of the control plane while it is off. */
  readonly featureGate?: string;
  /** Other kinds its endpoints take or answer in protobuf (a subresource's own kind: TokenRequest). */
  readonly protobufKinds?: readonly { readonly apiVersion: string; readonly kind: string; readonly message: string }[];
  /** Go types of fields its definitions lose (see gotypes.ts), added to the Scheme for goTypedBody. */
  readonly goFieldTypes?: GoFieldTypes;
  /** Storage key prefix ending in '/'; default `/registry/[<group>/]<plural>/`. */
  readonly keyPrefix?: string;
  readonly converter?: VersionConverter;
  /** DELETE answers with the deleted object instead of a Success Status (namespaces). */
  readonly returnDeletedObject?: boolean;
  /** Accepts strategic merge patch (default true; custom resources answer 415 for it). */
  readonly strategicMergePatch?: boolean;
  /**
   * Drops the fields of a request body that the kind does not declare and returns their paths
   * (`spec.foo`), for fieldValidation. Default: pruning against the OpenAPI definition
   * (built-in kinds); custom resources prune with their structural schema.
   */
  readonly pruneUnknownFields?: (obj: KubeObject) => string[];
  /**
   * Request bodies are checked as Go's JSON decoder would decode them into the kind's struct
   * (src/apimachinery/gotypes.ts), so a field of the wrong type is refused as upstream refuses it
   * instead of being stored (the core/v1, events and coordination kinds; ConfigMap and Secret
   * strategies also store their byte arrays as Go writes them back).
   */
  readonly goTypedBody?: boolean;
  /** Served by the CRD handler upstream (its 405s name the verb and kind; built-ins' come from the router). */
  readonly customResource?: boolean;
  /** Warnings sent with every response of this resource (a deprecated custom resource version). */
  readonly warnings?: readonly string[];
  /**
   * A create-only kind answered without storage (TokenReview, SelfSubjectReview, the access
   * reviews; upstream's rest.Creater without a store): POST decodes and checks the body as for
   * any kind, then this returns the object answered with 201. Nothing is stored or cached.
   */
  readonly review?: (obj: KubeObject, ctx: ReviewContext) => KubeObject | Promise<KubeObject>;
  /**
   * Fields that exist only while a feature gate is on (upstream's dropDisabledFields): while the
   * control plane's gate has the feature off, create and update drop the field after the
   * strategy's prepareForCreate/prepareForUpdate unless the stored object already has it set
   * (ratcheting), and /openapi/v2, /openapi/v3 (so `kubectl explain`) leave it out.
   */
  readonly gatedFields?: readonly GatedField[];
  /**
   * A storage of the resource's own instead of the control plane's (a read-only view computed in
   * memory, as OLM's PackageManifests): no watch cache is put in front of it and its revisions are
   * its own.
   */
  readonly storage?: Storage;
}

/** Who asks a review kind, and where (a namespaced review's namespace). */
export interface ReviewContext {
  readonly user: UserInfo;
  readonly namespace: string | undefined;
}

import type { AdmissionPlugin, UserInfo } from '../admission/interfaces.js';
import type { Authorizer, RuleResolver } from '../auth/authorizer.js';
import type { RbacRuleResolver } from '../auth/rbac/resolver.js';
import type { KubeClient } from '../client/types.js';
import type { Registry } from 'prom-client';
import type { ServiceResolver } from '../admission/webhook/service-resolver.js';
export type { AdmissionAttributes, AdmissionOperation, AdmissionPlugin, UserInfo } from '../admission/interfaces.js';

export interface ControlPlaneContext {
  readonly registry: ApiRegistry;
  /**
   * The control plane's own client (loopback, no sockets; user system:apiserver, user agent
   * kube-apiserver, as upstream's loopback clientset): what a module writes in the background goes
   * through it, so that admission, validation and managedFields apply as to any other writer.
   */
  readonly client: KubeClient;
  /** Where modules report what goes wrong in the background (the control plane's log). */
  readonly log?: (msg: string) => void;
  /** The control plane's authorization, for what must ask it (RBAC's escalation checks, the access reviews). */
  readonly authorization?: ControlPlaneAuthorization;
  /** The control plane's metrics registry (served at /metrics), for what modules measure. */
  readonly metrics?: Registry;
  /** Where `service` references of webhooks, conversion webhooks and APIServices go. */
  readonly serviceResolver?: ServiceResolver;
}

export interface ControlPlaneAuthorization {
  /** The authorizer the server's filter asks (undefined: every authenticated request is allowed). */
  readonly authorizer: Authorizer | undefined;
  /** What SelfSubjectRulesReview reports. */
  readonly ruleResolver: RuleResolver;
  /** RBAC's resolver, when RBAC is one of the modes (escalation checks read what a user holds). */
  readonly rbac?: RbacRuleResolver;
}

export interface ApiModule {
  readonly name: string;
  readonly resources: readonly ResourceRegistration[];
  readonly definitions?: Definitions;
  readonly admission?: (ctx: ControlPlaneContext) => readonly AdmissionPlugin[];
  /** Runs once storage is up, before the server reports ready (e.g. system namespaces). */
  readonly bootstrap?: (ctx: ControlPlaneContext) => Promise<void>;
  /** Stops what bootstrap started (background loops), before storage closes. */
  readonly shutdown?: () => Promise<void>;
}

export interface RegisteredResource {
  readonly registration: ResourceRegistration;
  readonly descriptor: ResourceDescriptor;
  readonly store: GenericStore;
  /** The Scheme of the control plane serving it (protobuf kinds, Go field types). */
  readonly scheme: Scheme;
}

/** Adds what a resource's kind brings to a Scheme: its protobuf messages and Go field types. */
export function addToScheme(scheme: Scheme, reg: ResourceRegistration): void {
  const d = reg.descriptor;
  if (reg.protobuf) {
    const apiVersion = apiVersionOf(d.group, d.version);
    scheme.addProtobufKinds([
      { apiVersion, kind: d.kind, message: reg.protobuf.kind },
      { apiVersion, kind: d.listKind, message: reg.protobuf.list },
    ]);
  }
  if (reg.protobufKinds) scheme.addProtobufKinds(reg.protobufKinds);
  if (reg.goFieldTypes) scheme.addGoFieldTypes(reg.goFieldTypes);
}

export function defaultKeyPrefix(d: ResourceDescriptor): string {
  return d.group ? `/registry/${d.group}/${d.plural}/` : `/registry/${d.plural}/`;
}

export class ApiRegistry {
  private readonly byGVR = new Map<string, RegisteredResource>();
  readonly resources: RegisteredResource[] = [];
  /** OpenAPI definitions: meta's (every control plane has them) and those of the kinds served. */
  readonly definitions: Definitions = { ...metaDefinitions };
  /** The kind tables of this control plane, filled from the resources added. */
  readonly scheme = new Scheme();
  private readonly listeners = new Set<() => void>();
  private generationValue = 0;

  constructor(
    /** The control plane's storage (modules keep state of their own there: the Service allocators' ranges). */
    readonly storage: Storage,
    private readonly onPrefix?: (prefix: string) => void,
    /**
     * garbageCollection: DELETE adds the orphan/foregroundDeletion finalizers (a GC runs).
     * features: the control plane's gate, asked for resources' gatedFields (default: all on).
     */
    private readonly storeDefaults: { readonly garbageCollection?: boolean; readonly features?: FeatureLookup } = {},
  ) {}

  /** The control plane's feature gate as the registry asks it (gated fields); all on without one. */
  get features(): FeatureLookup {
    return this.storeDefaults.features ?? ALL_ENABLED;
  }

  add(reg: ResourceRegistration): RegisteredResource {
    const d = reg.descriptor;
    const keyPrefix = reg.keyPrefix ?? defaultKeyPrefix(d);
    if (!reg.review && !reg.storage) this.onPrefix?.(keyPrefix);
    const store = new GenericStore({
      descriptor: d,
      strategy: reg.strategy,
      storage: reg.storage ?? this.storage,
      keyPrefix,
      ...(reg.converter ? { converter: reg.converter } : {}),
      ...(this.storeDefaults.garbageCollection ? { garbageCollection: true } : {}),
      ...(reg.gatedFields?.length ? { gatedFields: reg.gatedFields, features: this.features } : {}),
    });
    addToScheme(this.scheme, reg);
    if (reg.definitions) Object.assign(this.definitions, reg.definitions);
    const r: RegisteredResource = { registration: reg, descriptor: d, store, scheme: this.scheme };
    const k = gvrKey(d.group, d.version, d.plural);
    const existing = this.byGVR.get(k);
    this.byGVR.set(k, r);
    // Re-adding a resource (a CRD's new spec) replaces it in place, keeping discovery's order.
    const at = existing ? this.resources.indexOf(existing) : -1;
    if (at >= 0) this.resources[at] = r;
    else this.resources.push(r);
    this.changed();
    return r;
  }

  /**
   * Stops serving a resource (at runtime, e.g. a CRD version removed). Its stored objects stay.
   * Returns whether it was served.
   */
  remove(group: string, version: string, resource: string): boolean {
    const k = gvrKey(group, version, resource);
    const r = this.byGVR.get(k);
    if (!r) return false;
    this.byGVR.delete(k);
    const at = this.resources.indexOf(r);
    if (at >= 0) this.resources.splice(at, 1);
    this.changed();
    return true;
  }

  addDefinitions(defs: Definitions): void {
    Object.assign(this.definitions, defs);
    this.changed();
  }

  removeDefinitions(names: Iterable<string>): void {
    for (const n of names) delete this.definitions[n];
    this.changed();
  }

  /** Increases whenever the served set or the definitions change (for caches such as OpenAPI). */
  get generation(): number {
    return this.generationValue;
  }

  /** Calls `fn` after every change of the served set or the definitions; returns an unsubscribe. */
  onChange(fn: () => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  private changed(): void {
    this.generationValue++;
    for (const fn of this.listeners) fn();
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

const ALL_ENABLED: FeatureLookup = { enabled: () => true };

function gvrKey(group: string, version: string, resource: string): string {
  return `${group}/${version}/${resource}`;
}
