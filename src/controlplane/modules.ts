// The built-in API modules. A control plane is assembled from a list of these (KEP-4080: which
// resources are served is chosen in code); each lists its kinds, which are self-contained modules
// (descriptor, strategy, OpenAPI definitions, protobuf messages, Go field types) in their folders.
import { leases } from '../registry/coordination/leases/index.js';
import { configMaps } from '../registry/core/configmaps/index.js';
import { coreEvents } from '../registry/core/events/index.js';
import { namespaces } from '../registry/core/namespaces/index.js';
import { namespaceLifecycle } from '../registry/core/namespaces/lifecycle.js';
import { SYSTEM_NAMESPACES } from '../registry/core/namespaces/strategy.js';
import { systemNamespacesController, type SystemNamespacesController } from '../controllers/systemnamespaces.js';
import { secrets } from '../registry/core/secrets/index.js';
import { resourceQuotas } from '../registry/core/resourcequotas/index.js';
import { resourceQuotaAdmission } from '../registry/core/resourcequotas/admission.js';
import { serviceAccounts } from '../registry/core/serviceaccounts/index.js';
import { eventsV1Events } from '../registry/events/events/index.js';
import { addToScheme, type ApiModule, type ApiRegistry, type ControlPlaneAuthorization } from '../registry/registry.js';
import { roles } from '../registry/rbac/roles/index.js';
import { clusterRoles } from '../registry/rbac/clusterroles/index.js';
import { roleBindings } from '../registry/rbac/rolebindings/index.js';
import { clusterRoleBindings } from '../registry/rbac/clusterrolebindings/index.js';
import { rbacEscalationCheck } from '../registry/rbac/escalation.js';
import { accessReviews } from '../registry/authorization/index.js';
import { alwaysAllow } from '../auth/authorizer.js';
import { reconcileBootstrapPolicy } from '../auth/rbac/reconcile.js';
import { Scheme } from '../apimachinery/scheme.js';
import { apiextensions } from '../apiextensions/module.js';
import {
  mutatingWebhookConfigurations,
  validatingAdmissionPolicies,
  validatingAdmissionPolicyBindings,
  validatingWebhookConfigurations,
} from '../registry/admissionregistration/index.js';
import { validatingPolicyCache, WebhookConfigurationCache } from '../registry/admissionregistration/source.js';
import { MUTATING_POLICY_VERSION, mutatingPolicyCache, mutatingAdmissionPolicyResources } from '../registry/admissionregistration/mutating-policy.js';
import { mutatingAdmissionPolicyPlugin, type MutationObserver } from '../admission/policy/mutating.js';
import { typeOf, type TypeRef } from '../apimachinery/apply/index.js';
import { refTo, resolveSchema } from '../apimachinery/schema.js';
import { policyStatusController, type PolicyStatusController } from './policy-status.js';
import { validatingAdmissionPolicyPlugin, type ParamLookup, type PolicyCheckObserver } from '../admission/policy/validating.js';
import { matchesLabels } from '../apimachinery/labels.js';
import {
  mutatingWebhookPlugin,
  validatingWebhookPlugin,
  type FailOpenObserver,
  type NamespaceLabels,
  type WebhookObserver,
  type WebhookRejectionObserver,
} from '../admission/webhook/dispatcher.js';
import type { MatchConditionObserver } from '../admission/cel/matchconditions.js';
import type { EquivalentResources, EquivalentVersion } from '../admission/interfaces.js';
import { Counter, Histogram, type Registry } from 'prom-client';
import { SeriesHistogram } from '../server/series-metrics.js';
import { StatusError } from '../apimachinery/errors.js';
import { features as featureResources } from '../registry/features/features/index.js';
import { apiServices } from '../registry/apiregistration/apiservices/index.js';

export interface CoreOptions {
  /** Where the system namespaces controller reports failures (default: the control plane's log). */
  readonly log?: (msg: string) => void;
  /** Pause between the system namespaces controller's rounds (upstream's minute; tests shorten it). */
  readonly systemNamespacesIntervalMs?: number;
}

/**
 * core/v1: namespaces, configmaps, secrets, serviceaccounts, events, resourcequotas;
 * NamespaceLifecycle and ResourceQuota admission; the system namespaces controller (started by bootstrap, stopped by shutdown).
 */
export function core(opts: CoreOptions = {}): ApiModule {
  let systemNamespaces: SystemNamespacesController | undefined;
  return {
    name: 'core',
    resources: [namespaces, configMaps, secrets, serviceAccounts, coreEvents, resourceQuotas],
    // NamespaceLifecycle (mutating) and ResourceQuota (validating, upstream's last plugin).
    admission: (ctx) => [namespaceLifecycle(ctx.registry), resourceQuotaAdmission(ctx.registry)],
    async bootstrap(ctx) {
      if (!ctx.registry.lookup('', 'v1', 'namespaces')) return;
      const log = opts.log ?? ctx.log;
      systemNamespaces = systemNamespacesController(ctx.client, SYSTEM_NAMESPACES, {
        ...(opts.systemNamespacesIntervalMs !== undefined ? { intervalMs: opts.systemNamespacesIntervalMs } : {}),
        ...(log ? { log } : {}),
      });
      await systemNamespaces.start();
    },
    async shutdown() {
      await systemNamespaces?.stop();
    },
  };
}

/** events.k8s.io/v1 events, stored with core/v1 events. */
export function events(): ApiModule {
  return {
    name: 'events.k8s.io',
    resources: [eventsV1Events],
  };
}

/** coordination.k8s.io/v1 leases. */
export function coordination(): ApiModule {
  return {
    name: 'coordination.k8s.io',
    resources: [leases],
  };
}

/**
 * rbac.authorization.k8s.io/v1: Role, ClusterRole, RoleBinding, ClusterRoleBinding, with
 * escalation prevention, and the bootstrap policy reconciled at start (upstream's
 * rbac/bootstrap-roles hook). Served whatever the authorization mode, as upstream does.
 */
export function rbac(): ApiModule {
  let authz: ControlPlaneAuthorization | undefined;
  return {
    name: 'rbac.authorization.k8s.io',
    resources: [clusterRoleBindings, clusterRoles, roleBindings, roles],
    admission: (ctx) => {
      authz = ctx.authorization;
      return [rbacEscalationCheck({ authorizer: () => authz?.authorizer, resolver: () => authz?.rbac })];
    },
    async bootstrap(ctx) {
      const log = ctx.log ?? (() => {});
      // As upstream's hook, retried until it succeeds (the store may be busy at start).
      for (let attempt = 1; ; attempt++) {
        try {
          await reconcileBootstrapPolicy(ctx.client, (m) => log(m));
          return;
        } catch (e) {
          if (attempt >= 10) throw e;
          log(`rbac: reconciling the bootstrap policy failed (attempt ${attempt}): ${e instanceof Error ? e.message : String(e)}`);
          await new Promise((r) => setTimeout(r, 200 * attempt));
        }
      }
    },
  };
}

/** authorization.k8s.io/v1: SubjectAccessReview, SelfSubjectAccessReview, LocalSubjectAccessReview, SelfSubjectRulesReview. */
export function authorization(): ApiModule {
  // The control plane hands its authorization over in the context (admission is built once,
  // before the first request): the reviews read it then.
  let authz: ControlPlaneAuthorization | undefined;
  return {
    name: 'authorization.k8s.io',
    resources: accessReviews(() => authz ?? { authorizer: undefined, ruleResolver: alwaysAllow }),
    admission: (ctx) => {
      authz = ctx.authorization;
      return [];
    },
  };
}

/**
 * features.kplane.io/v1alpha1 Feature (KEP-0007): every component's features and the value each
 * instance uses. The control plane announces its own and reports its uses once it serves.
 */
export function features(): ApiModule {
  return {
    name: 'features.kplane.io',
    resources: [featureResources],
  };
}

export { apiextensions };

/** apiserver_admission_webhook_admission_duration_seconds, as upstream's admission metrics. */
function webhookDurationMetric(registry: Registry | undefined): WebhookObserver | undefined {
  if (!registry) return undefined;
  // Observed on every call: a series found by a key string, as the per-request metrics are
  // (series-metrics.ts; prom-client's observe hashed the labels object each time).
  const h = new SeriesHistogram(
    'apiserver_admission_webhook_admission_duration_seconds',
    'Admission webhook latency histogram in seconds, identified by name and broken out for each operation and API resource and type (validate or admit).',
    [0.005, 0.025, 0.1, 0.5, 1.0, 2.5, 10, 25],
    registry,
  );
  const requests = new Counter({
    name: 'apiserver_admission_webhook_request_total',
    help: 'Admission webhook request total, identified by name and broken out for each admission type (validating or mutating) and operation. Additional labels specify whether the request was rejected or not and an HTTP status code. Codes greater than 600 are truncated to 600, to keep the metrics cardinality bounded.',
    labelNames: ['name', 'type', 'operation', 'code', 'rejected'] as const,
    registers: [registry],
  });
  return (name, type, operation, rejected, seconds, code) => {
    const key = `${name}\u0000${type}\u0000${operation}\u0000${rejected ? 1 : 0}`;
    h.observe(h.find(key) ?? h.add(key, { name, type, operation, rejected: String(rejected) }), seconds);
    requests.inc({ name, type, operation, code: String(code), rejected: String(rejected) });
  };
}

/** apiserver_admission_webhook_rejection_count, as upstream's admission metrics. */
function webhookRejectionMetric(registry: Registry | undefined): WebhookRejectionObserver | undefined {
  if (!registry) return undefined;
  const count = new Counter({
    name: 'apiserver_admission_webhook_rejection_count',
    help: 'Admission webhook rejection count, identified by name and broken out for each admission type (validating or admit) and operation. Additional labels specify an error type (calling_webhook_error or apiserver_internal_error if an error occurred; no_error otherwise) and optionally a non-zero rejection code if the webhook rejects the request with an HTTP status code (honored by the apiserver when the code is greater or equal to 400). Codes greater than 600 are truncated to 600, to keep the metrics cardinality bounded.',
    labelNames: ['name', 'type', 'operation', 'error_type', 'rejection_code'] as const,
    registers: [registry],
  });
  return (name, type, operation, errorType, code) => count.inc({ name, type, operation, error_type: errorType, rejection_code: String(code) });
}

/**
 * The versions each group/resource is served in (matchPolicy: Equivalent), worked out again when
 * the served set changes, and conversion between them through the versions' stores.
 */
function equivalentResources(registry: ApiRegistry): EquivalentResources {
  let generation = -1;
  let byResource = new Map<string, EquivalentVersion[]>();
  return {
    versionsOf(group, resource) {
      if (generation !== registry.generation) {
        byResource = new Map();
        for (const r of registry.resources) {
          const d = r.descriptor;
          const key = `${d.group}/${d.plural}`;
          const list = byResource.get(key) ?? [];
          list.push({ version: d.version, kind: d.kind });
          byResource.set(key, list);
        }
        generation = registry.generation;
      }
      return byResource.get(`${group}/${resource}`) ?? [];
    },
    convert(obj, group, resource, from, to) {
      const source = registry.lookup(group, from, resource);
      const target = registry.lookup(group, to, resource);
      if (!source || !target) return Promise.reject(new Error(`${resource}.${group} is not served in ${source ? to : from}`));
      return target.store.convertToServed(obj, source.store);
    },
  };
}

/** apiserver_admission_webhook_fail_open_count, as upstream's admission metrics (type admit or validating). */
function webhookFailOpenMetric(registry: Registry | undefined): FailOpenObserver | undefined {
  if (!registry) return undefined;
  const count = new Counter({
    name: 'apiserver_admission_webhook_fail_open_count',
    help: 'Admission webhook fail open count, identified by name and broken out for each admission type (validating or mutating).',
    labelNames: ['name', 'type'] as const,
    registers: [registry],
  });
  return (name, type) => count.inc({ name, type });
}

/**
 * apiserver_admission_match_condition_evaluation_errors_total, _exclusions_total and
 * _evaluation_seconds, as upstream's admission metrics (labels name, kind, type, operation).
 */
function matchConditionObserver(registry: Registry | undefined): MatchConditionObserver | undefined {
  if (!registry) return undefined;
  const labelNames = ['name', 'kind', 'type', 'operation'] as const;
  const errors = new Counter({
    name: 'apiserver_admission_match_condition_evaluation_errors_total',
    help: 'Admission match condition evaluation errors count, identified by name of resource containing the match condition and broken out for each kind containing matchConditions (webhook or policy), operation and admission type (validate or admit).',
    labelNames,
    registers: [registry],
  });
  const exclusions = new Counter({
    name: 'apiserver_admission_match_condition_exclusions_total',
    help: 'Admission match condition evaluation exclusions count, identified by name of resource containing the match condition and broken out for each kind containing matchConditions (webhook or policy), operation and admission type (validate or admit).',
    labelNames,
    registers: [registry],
  });
  const seconds = new Histogram({
    name: 'apiserver_admission_match_condition_evaluation_seconds',
    help: 'Admission match condition evaluation time in seconds, identified by name and broken out for each kind containing matchConditions (webhook or policy), operation and type (validate or admit).',
    labelNames,
    buckets: [0.001, 0.005, 0.01, 0.025, 0.1, 0.2, 0.25],
    registers: [registry],
  });
  return {
    evaluationError: (l) => errors.inc(l),
    exclusion: (l) => exclusions.inc(l),
    seconds: (l, s) => seconds.observe(l, s),
  };
}

/** apiserver_validating_admission_policy_check_total and _check_duration_seconds, as upstream's policy metrics. */
function policyCheckMetric(registry: Registry | undefined): PolicyCheckObserver | undefined {
  if (!registry) return undefined;
  const labelNames = ['policy', 'policy_binding', 'error_type', 'enforcement_action'] as const;
  const total = new Counter({
    name: 'apiserver_validating_admission_policy_check_total',
    help: 'Validation admission policy check total, labeled by policy and further identified by binding and enforcement action taken.',
    labelNames,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'apiserver_validating_admission_policy_check_duration_seconds',
    help: 'Validation admission latency for individual validation expressions in seconds, labeled by policy and further including binding and enforcement action taken.',
    labelNames,
    buckets: [0.0000005, 0.001, 0.01, 0.1, 1.0],
    registers: [registry],
  });
  return (policy, binding, enforcement, errorType, seconds) => {
    const labels = { policy, policy_binding: binding, error_type: errorType, enforcement_action: enforcement };
    total.inc(labels);
    duration.observe(labels, seconds);
  };
}

/** apiserver_mutating_admission_policy_check_total and _check_duration_seconds, as upstream's mutating policy metrics. */
function mutationCheckMetric(registry: Registry | undefined): MutationObserver | undefined {
  if (!registry) return undefined;
  const labelNames = ['policy', 'policy_binding', 'error_type'] as const;
  const total = new Counter({
    name: 'apiserver_mutating_admission_policy_check_total',
    help: 'Mutation admission policy check total, labeled by policy and further identified by binding.',
    labelNames,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'apiserver_mutating_admission_policy_check_duration_seconds',
    help: 'Mutation admission latency for individual mutation expressions in seconds, labeled by policy and binding.',
    labelNames,
    buckets: [0.0000005, 0.001, 0.01, 0.1, 1.0],
    registers: [registry],
  });
  return (policy, binding, errorType, seconds) => {
    const labels = { policy, policy_binding: binding, error_type: errorType };
    total.inc(labels);
    duration.observe(labels, seconds);
  };
}

/**
 * admissionregistration.k8s.io/v1: ValidatingWebhookConfiguration and MutatingWebhookConfiguration,
 * ValidatingAdmissionPolicy and ValidatingAdmissionPolicyBinding.
 * Only cluster-admin manages them (upstream's bootstrap roles do not aggregate them into admin/edit).
 */
export function admissionRegistration(): ApiModule {
  let mutating: WebhookConfigurationCache | undefined;
  let validating: WebhookConfigurationCache | undefined;
  let policies: ReturnType<typeof validatingPolicyCache> | undefined;
  let mutatingPolicies: ReturnType<typeof mutatingPolicyCache> | undefined;
  let policyStatus: PolicyStatusController | undefined;
  return {
    name: 'admissionregistration.k8s.io',
    resources: [
      mutatingWebhookConfigurations,
      validatingWebhookConfigurations,
      validatingAdmissionPolicies,
      validatingAdmissionPolicyBindings,
      ...mutatingAdmissionPolicyResources,
    ],
    admission: (ctx) => {
      const store = (plural: string) => () => ctx.registry.lookup('admissionregistration.k8s.io', 'v1', plural)?.store;
      mutating = new WebhookConfigurationCache(store('mutatingwebhookconfigurations'), ctx.log, ctx.serviceResolver);
      validating = new WebhookConfigurationCache(store('validatingwebhookconfigurations'), ctx.log, ctx.serviceResolver);
      const namespaceLabels: NamespaceLabels = async (name) => {
        const namespaces = ctx.registry.lookup('', 'v1', 'namespaces');
        if (!namespaces) return {};
        try {
          return (await namespaces.store.getCached(undefined, name)).metadata?.labels ?? {};
        } catch (e) {
          if (e instanceof StatusError && e.code === 404) return undefined;
          throw e;
        }
      };
      // What CEL's `authorizer` checks ask: the control plane's authorizer (none: AlwaysAllow).
      const authorizer = ctx.authorization?.authorizer;
      const observe = webhookDurationMetric(ctx.metrics);
      const observeFailOpen = webhookFailOpenMetric(ctx.metrics);
      const observeRejection = webhookRejectionMetric(ctx.metrics);
      const observeMatchCondition = matchConditionObserver(ctx.metrics);
      // What every webhook and policy plugin's CEL gets: the authorizer and the matchConditions metrics.
      const cel = { ...(authorizer ? { authorizer } : {}), ...(observeMatchCondition ? { observeMatchCondition } : {}) };
      const webhookMetrics = {
        ...(observe ? { observe } : {}),
        ...(observeRejection ? { observeRejection } : {}),
        ...(observeFailOpen ? { observeFailOpen } : {}),
      };
      const equivalents = equivalentResources(ctx.registry);
      policies = validatingPolicyCache(store('validatingadmissionpolicies'), store('validatingadmissionpolicybindings'), ctx.log);
      const namespace = async (name: string) => {
        const namespaces = ctx.registry.lookup('', 'v1', 'namespaces');
        if (!namespaces) return undefined;
        try {
          return await namespaces.store.getCached(undefined, name);
        } catch (e) {
          if (e instanceof StatusError && e.code === 404) return undefined;
          throw e;
        }
      };
      // A policy's parameters, read through the paramKind's store (its watch cache).
      const params: ParamLookup = async (paramKind, ns, ref) => {
        const r = ctx.registry.byKind(paramKind.apiVersion ?? '', paramKind.kind ?? '');
        if (!r) return { error: `paramKind kind \`${paramKind.apiVersion ?? ''}, Kind=${paramKind.kind ?? ''}\` not known` };
        const namespaced = r.descriptor.namespaced;
        const where = namespaced ? ns : undefined;
        if (namespaced && !where) return { namespaced, items: [] };
        if (ref.name !== undefined) {
          try {
            return { namespaced, items: [await r.store.getCached(where, ref.name)] };
          } catch (e) {
            if (e instanceof StatusError && e.code === 404) return { namespaced, items: [] };
            throw e;
          }
        }
        const list = await r.store.list(where);
        return { namespaced, items: list.items.filter((o) => matchesLabels(ref.selector!, o.metadata?.labels ?? {})) };
      };
      const observePolicy = policyCheckMetric(ctx.metrics);
      const observeMutation = mutationCheckMetric(ctx.metrics);
      const mapStore = (plural: string) => () => ctx.registry.lookup('admissionregistration.k8s.io', MUTATING_POLICY_VERSION, plural)?.store;
      mutatingPolicies = mutatingPolicyCache(mapStore('mutatingadmissionpolicies'), mapStore('mutatingadmissionpolicybindings'), ctx.log);
      // The structured-merge type of a request's kind, for apply configurations: resolved once per
      // kind until the served set or the definitions change (atoms resolve lazily and are kept).
      const types = new Map<string, TypeRef>();
      let typesGeneration = -1;
      const type = (a: { resource: { group: string; version: string; resource: string } }): TypeRef | undefined => {
        if (typesGeneration !== ctx.registry.generation) {
          types.clear();
          typesGeneration = ctx.registry.generation;
        }
        const r = ctx.registry.lookup(a.resource.group, a.resource.version, a.resource.resource);
        if (!r) return undefined;
        const name = r.descriptor.definitionName;
        let t = types.get(name);
        if (!t) {
          const defs = ctx.registry.definitions;
          types.set(name, (t = typeOf(resolveSchema(defs, refTo(name)), defs)));
        }
        return t;
      };
      return [
        mutatingAdmissionPolicyPlugin({
          source: mutatingPolicies,
          namespace,
          params,
          type,
          equivalents,
          ...cel,
          ...(observeMutation ? { observe: observeMutation } : {}),
        }),
        mutatingWebhookPlugin({ source: mutating, namespaceLabels, equivalents, ...cel, ...webhookMetrics }),
        validatingAdmissionPolicyPlugin({
          source: policies,
          namespace,
          params,
          equivalents,
          ...cel,
          ...(observePolicy ? { observe: observePolicy } : {}),
        }),
        validatingWebhookPlugin({ source: validating, namespaceLabels, equivalents, ...cel, ...webhookMetrics }),
      ];
    },
    async bootstrap(ctx) {
      await Promise.all([mutating?.start(), validating?.start(), policies?.start(), mutatingPolicies?.start()]);
      // status.typeChecking of the policies (policy-status.ts).
      policyStatus = policyStatusController(ctx.registry, ctx.client, ctx.log);
      await policyStatus.start();
    },
    async shutdown() {
      await policyStatus?.stop();
      await Promise.all([mutating?.close(), validating?.close(), policies?.close(), mutatingPolicies?.close()]);
    },
  };
}

/**
 * apiregistration.k8s.io/v1 APIService: API aggregation. With it the control plane proxies the
 * group/versions of non-local APIServices to their servers, checks their availability and keeps a
 * local APIService for each group/version it serves (see `ControlPlaneOptions.aggregation`).
 */
export function apiRegistration(): ApiModule {
  return {
    name: 'apiregistration.k8s.io',
    resources: [apiServices],
  };
}

/** What `kplane serve` serves by default. */
export function defaultModules(): ApiModule[] {
  return [core(), events(), coordination(), authorization(), rbac(), apiextensions(), admissionRegistration(), features()];
}

/** A Scheme holding every kind the default modules serve, for code outside a control plane (a control plane has its own: `registry.scheme`). */
export function builtinScheme(): Scheme {
  const scheme = new Scheme();
  for (const m of defaultModules()) for (const r of m.resources) addToScheme(scheme, r);
  return scheme;
}
