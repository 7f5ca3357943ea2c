// The webhook admission plugins (k8s.io/apiserver/pkg/admission/plugin/webhook): MutatingAdmissionWebhook
// calls the matching mutating webhooks one after another and applies their JSONPatches;
// ValidatingAdmissionWebhook calls the matching validating webhooks in parallel. Both send an
// admission.k8s.io/v1 AdmissionReview, honour timeoutSeconds, failurePolicy and sideEffects on
// dry runs, pass the webhooks' warnings on, and answer with upstream's errors.
import { randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import { StatusError, badRequest, forbidden, internalError, notFound } from '../../apimachinery/errors.js';
import { EVERYTHING, isEmptySelector, matchesLabels, tryLabelSelectorFromObject, type LabelSelector } from '../../apimachinery/labels.js';
import { applyJsonPatchOperations, decodeJsonPatch } from '../../apimachinery/patch/json-patch.js';
import type { KubeObject } from '../../apimachinery/types.js';
import { describeJsonSyntaxError } from '../../golang/json-decode.js';
import { compareGoStrings, goJSON, goString, goStruct } from '../../golang/json.js';
import { stringifyJSON } from '../../golang/json-int64.js';
import { isQualifiedName } from '../../apimachinery/validation/names.js';
import { ALLOW_ALL, authorizerFor, Checks, type CheckAuthorizer } from '../cel/authz.js';
import { admissionRequest, operationOptions, toCEL } from '../cel/compile.js';
import {
  compileMatchConditions,
  matchConditionMetrics,
  matchConditions,
  settledObserving,
  type CompiledMatchConditions,
  type MatchConditionObserver,
  type MatchResult,
} from '../cel/matchconditions.js';
import { unlessIdle } from '../chain.js';
import { enterDispatcher } from '../reinvocation.js';
import { conversionFailed, convertFor, equivalentMatch, type Converted } from '../equivalent.js';
import type { AdmissionAttributes, AdmissionPlugin, AnnotationSink, EquivalentResources, EquivalentVersion } from '../interfaces.js';
import { CallError, newEndpoint, newServiceEndpoint, post, type WebhookEndpoint } from './client.js';
import type { ServiceResolver } from './service-resolver.js';
import { isExemptAdmissionConfigurationResource, isNamespaceResource, ruleMatches } from './rules.js';
import type { Webhook, WebhookConfiguration } from './types.js';

/** One webhook of a configuration, with what the dispatcher needs prepared once per change. */
export interface CompiledWebhook {
  readonly configuration: string;
  readonly hook: Webhook;
  /** Unique within the plugin (configuration/index), for reinvocation. */
  readonly key: string;
  readonly namespaceSelector: LabelSelector;
  readonly objectSelector: LabelSelector;
  /** Undefined: the webhook cannot be reached (`endpointError` says why). */
  readonly endpoint: WebhookEndpoint | undefined;
  readonly endpointError?: string;
  /** The webhook's matchConditions, compiled; undefined when it has none. */
  readonly matchConditions?: CompiledMatchConditions;
}

/** Where the plugins read the current configurations (an informer's cache, never storage per request). */
export interface WebhookSource {
  webhooks(): readonly CompiledWebhook[];
}

/** The labels of a namespace, or undefined when there is no such namespace. */
export type NamespaceLabels = (namespace: string) => Promise<Readonly<Record<string, string>> | undefined>;

/**
 * What a webhook call took and how it ended, for apiserver_admission_webhook_admission_duration_seconds
 * and apiserver_admission_webhook_request_total: `code` 200 when it answered and allowed, the code
 * of its refusal or of the failure to call it, 0 for an error of the server's own.
 */
export type WebhookObserver = (name: string, type: 'admit' | 'validating', operation: string, rejected: boolean, seconds: number, code: number) => void;

/** Why a webhook call refused a request, for apiserver_admission_webhook_rejection_count. */
export type WebhookRejectionType = 'calling_webhook_error' | 'apiserver_internal_error' | 'no_error';
export type WebhookRejectionObserver = (name: string, type: 'admit' | 'validating', operation: string, errorType: WebhookRejectionType, code: number) => void;

/** A webhook that failed open (failurePolicy Ignore), for apiserver_admission_webhook_fail_open_count. */
export type FailOpenObserver = (name: string, type: 'admit' | 'validating') => void;

export interface WebhookPluginOptions {
  readonly source: WebhookSource;
  readonly namespaceLabels: NamespaceLabels;
  readonly observe?: WebhookObserver;
  readonly observeRejection?: WebhookRejectionObserver;
  readonly observeFailOpen?: FailOpenObserver;
  /** Without it, `matchPolicy: Equivalent` matches as `Exact`. */
  readonly equivalents?: EquivalentResources;
  /** What `authorizer` checks in matchConditions ask; without it every check is allowed (AlwaysAllow). */
  readonly authorizer?: CheckAuthorizer;
  /** matchConditions' evaluation errors, exclusions and time (upstream's admission metrics). */
  readonly observeMatchCondition?: MatchConditionObserver;
}

/** The audit annotation keys' prefixes upstream's dispatchers write (…/round_<r>_index_<i>). */
const MUTATION_ANNOTATION_PREFIX = 'mutation.webhook.admission.k8s.io/';
const PATCH_ANNOTATION_PREFIX = 'patch.webhook.admission.k8s.io/';
const MUTATION_FAILED_OPEN_PREFIX = `failed-open.${MUTATION_ANNOTATION_PREFIX}`;
const VALIDATING_FAILED_OPEN_PREFIX = 'failed-open.validating.webhook.admission.k8s.io/';

/**
 * attributesRecord.AddAnnotation: a key that is not `<DNS subdomain>/<name>` (a qualified name with
 * one slash) is not recorded (upstream logs a warning and goes on); the first value of a key stays.
 */
function annotate(a: AdmissionAttributes, key: string, value: string): void {
  if (!a.annotations) return;
  if (key.split('/').length !== 2 || isQualifiedName(key).length > 0) return;
  a.annotations.addAnnotation(key, value);
}

/**
 * Where the dispatchers' own annotations go (keys well-formed by construction), undefined when the
 * request is not audited: `own(a)?.addAnnotation(key, json())` does not even make the value then.
 */
const own = (a: AdmissionAttributes): AnnotationSink | undefined => (a.annotations?.audited === false ? undefined : a.annotations);

/** Where a mutating webhook's call stands in the dispatch: upstream's round (0, 1 when reinvoked) and index among the webhooks. */
interface CallPlace {
  readonly round: number;
  readonly index: number;
}

const placeKey = (prefix: string, p: CallPlace): string => `${prefix}round_${p.round}_index_${p.index}`;

/**
 * Builds the compiled form of configurations (sorted by name, as upstream's configuration manager).
 * Webhooks naming the same URL and CA share one endpoint, and keep `previous`'s (as upstream's client
 * manager caches clients by their config): a change of any configuration keeps the others' connections.
 */
export function compileConfigurations(
  configs: readonly WebhookConfiguration[],
  previous: readonly CompiledWebhook[] = [],
  resolver?: ServiceResolver,
): CompiledWebhook[] {
  const endpoints = new Map<string, WebhookEndpoint>();
  for (const p of previous) if (p.endpoint) endpoints.set(endpointKey(p.hook), p.endpoint);
  const out: CompiledWebhook[] = [];
  const sorted = [...configs].sort((a, b) => ((a.metadata?.name ?? '') < (b.metadata?.name ?? '') ? -1 : 1));
  for (const c of sorted) {
    const name = c.metadata?.name ?? '';
    (c.webhooks ?? []).forEach((hook, i) => {
      const ns = hook.namespaceSelector ? tryLabelSelectorFromObject(hook.namespaceSelector) : { ok: true as const, selector: EVERYTHING };
      const obj = hook.objectSelector ? tryLabelSelectorFromObject(hook.objectSelector) : { ok: true as const, selector: EVERYTHING };
      let endpoint: WebhookEndpoint | undefined;
      let endpointError: string | undefined;
      const cc = hook.clientConfig;
      if (cc?.url || (cc?.service && resolver)) {
        const key = endpointKey(hook);
        endpoint = endpoints.get(key);
        if (!endpoint) {
          try {
            endpoint = cc.url ? newEndpoint(cc.url, cc.caBundle) : newServiceEndpoint(serviceRef(cc.service!), cc.caBundle, resolver!);
            endpoints.set(key, endpoint);
          } catch (e) {
            endpointError = e instanceof Error ? e.message : String(e);
          }
        }
      } else endpointError = 'no service resolver: service references are not resolved by this server';
      const conditions = compileMatchConditions(hook.matchConditions as { name?: string; expression?: string }[] | undefined, hook.failurePolicy, {
        params: false,
        variables: false,
      });
      out.push({
        configuration: name,
        hook,
        key: `${name}/${i}`,
        // An invalid selector (stored before validation tightened) selects nothing.
        namespaceSelector: ns.ok ? ns.selector : { requirements: [], matchesNothing: true },
        objectSelector: obj.ok ? obj.selector : { requirements: [], matchesNothing: true },
        endpoint,
        ...(endpointError ? { endpointError } : {}),
        ...(conditions ? { matchConditions: conditions } : {}),
      });
    });
  }
  return out;
}

const serviceRef = (svc: NonNullable<NonNullable<Webhook['clientConfig']>['service']>) => ({
  namespace: svc.namespace ?? '',
  name: svc.name ?? '',
  port: svc.port ?? 443,
  ...(svc.path !== undefined ? { path: svc.path } : {}),
});

const endpointKey = (hook: Webhook): string => {
  const cc = hook.clientConfig;
  const target = cc?.url ?? (cc?.service ? JSON.stringify(serviceRef(cc.service)) : '');
  return `${target}\n${cc?.caBundle ?? ''}`;
};

/** Releases the endpoints of `hooks` that `kept` no longer uses (their calls under way still finish). */
export function releaseWebhooks(hooks: readonly CompiledWebhook[], kept: readonly CompiledWebhook[] = []): void {
  const inUse = new Set(kept.map((h) => h.endpoint));
  for (const h of hooks) if (h.endpoint && !inUse.has(h.endpoint)) h.endpoint.release();
}

/**
 * generic.Webhook.ShouldCallHook: rules, namespace selector, object selector, then matchConditions
 * (which the dispatchers evaluate on the object in the version the webhook is called with).
 * Answered without a promise unless the namespace's labels must be read or, for a webhook with
 * matchConditions matched through an equivalent version, the objects converted.
 */
function shouldCall(h: CompiledWebhook, a: AdmissionAttributes, opts: WebhookPluginOptions, type: WebhookType): Match | Promise<Match> {
  const eq = opts.equivalents;
  const matched = rulesMatch(h, a, eq);
  if (matched === false) return false;
  const ns = matchNamespace(h.namespaceSelector, a, opts.namespaceLabels);
  if (ns === false) return false;
  if (ns === true) return matchRest(h, a, matched, opts, type);
  return ns.then((inNamespace) => inNamespace && matchRest(h, a, matched, opts, type));
}

/** Which dispatcher asks: the type label of upstream's webhook metrics. */
type WebhookType = 'admit' | 'validating';

/**
 * Whether a webhook is called: false, true (with the request's version), or the equivalent version
 * it is called with (with the objects converted, when its matchConditions needed them).
 */
type Match = boolean | EquivalentVersion | Converted;

/** The request's objects in the equivalent version `m`, converted once per call. */
function convertedFor(eq: EquivalentResources, a: AdmissionAttributes, m: EquivalentVersion | Converted): Promise<Converted> {
  return 'object' in m ? Promise.resolve(m) : convertFor(eq, a, m);
}

/**
 * The rules against the request's resource, then, under `matchPolicy: Equivalent`, each rule in
 * turn against the resource's other versions (upstream's order: rules outside, versions inside).
 */
function rulesMatch(h: CompiledWebhook, a: AdmissionAttributes, eq: EquivalentResources | undefined): Match {
  const rules = h.hook.rules ?? [];
  for (const r of rules) if (ruleMatches(r, a)) return true;
  if (h.hook.matchPolicy !== 'Equivalent' || !eq) return false;
  return equivalentMatch(rules, a, eq, ruleMatches) ?? false;
}

/** ShouldCallHook after the namespace selector: the object selector, then matchConditions. */
function matchRest(
  h: CompiledWebhook,
  a: AdmissionAttributes,
  matched: true | EquivalentVersion,
  opts: WebhookPluginOptions,
  type: WebhookType,
): Match | Promise<Match> {
  const eq = opts.equivalents;
  if (!matchObject(h.objectSelector, a)) return false;
  const conditions = h.matchConditions;
  if (!conditions) return matched;
  if (matched === true || !eq) {
    const m = conditionsMatch(h, conditions, a, undefined, opts, type);
    return m === true || m === false ? m && matched : m.then((yes) => yes && matched);
  }
  // The converted objects go on with the match: the call sends them without converting again.
  return convertFor(eq, a, matched).then(
    async (as) => (await conditionsMatch(h, conditions, a, as, opts, type)) && as,
    (e: unknown) => {
      throw conversionFailed(e);
    },
  );
}

/**
 * A webhook's matchConditions on the request (its objects in `as`, the equivalent version it is
 * called with, when given); a promise only when an `authorizer` check waits for its answer.
 */
function conditionsMatch(
  h: CompiledWebhook,
  conditions: CompiledMatchConditions,
  a: AdmissionAttributes,
  as: Converted | undefined,
  opts: WebhookPluginOptions,
  type: WebhookType,
): boolean | Promise<boolean> {
  const checks = new Checks(opts.authorizer ?? ALLOW_ALL);
  const vars = {
    object: toCEL((as ? as.object : a.object) ?? null),
    oldObject: toCEL((as ? as.oldObject : a.oldObject) ?? null),
    request: toCEL(admissionRequest(a, as)),
    namespaceObject: null,
    authorizer: authorizerFor(a, checks),
  };
  // Evaluated again when an `authorizer` check waited for its answer (the time waited is not the
  // conditions'); only the last evaluation's metrics count.
  const observer = opts.observeMatchCondition;
  const labels = observer && { name: h.hook.name ?? '', kind: 'webhook', type, operation: a.operation };
  let deadline = performance.now() + 1000;
  const r = settledObserving(
    checks,
    observer,
    (o) => matchConditions(conditions, vars, deadline, labels && matchConditionMetrics(o, labels)),
    (ms) => (deadline += ms),
  );
  const decide = (r: MatchResult): boolean => {
    // A condition that fails under failurePolicy Fail refuses the request (fails closed), as upstream.
    if ('error' in r) throw forbidden({ group: a.resource.group, resource: a.resource.resource }, a.name, r.error);
    if (!r.matches && labels) observer?.exclusion(labels);
    return r.matches;
  };
  return r instanceof Promise ? r.then(decide) : decide(r);
}

/** namespace.Matcher.MatchNamespaceSelector; a promise only when the namespace's labels are read. */
function matchNamespace(sel: LabelSelector, a: AdmissionAttributes, namespaceLabels: NamespaceLabels): boolean | Promise<boolean> {
  const ns = isNamespaceResource(a);
  // A cluster-scoped resource that is not a namespace is never exempted.
  if (a.namespace === '' && !ns) return true;
  if (isEmptySelector(sel)) return true;
  if (sel.matchesNothing) return false;
  if (ns) return matchesLabels(sel, (a.object ?? a.oldObject)?.metadata?.labels ?? {});
  return namespaceLabels(a.namespace).then((labels) => {
    if (labels === undefined) throw notFound({ group: '', resource: 'namespaces' }, a.namespace);
    return matchesLabels(sel, labels);
  });
}

/** object.Matcher.MatchObjectSelector: the new or the old object. */
function matchObject(sel: LabelSelector, a: AdmissionAttributes): boolean {
  if (isEmptySelector(sel)) return true;
  const m = (o: KubeObject | undefined): boolean => o !== undefined && matchesLabels(sel, o.metadata?.labels ?? {});
  return m(a.object) || m(a.oldObject);
}

/** request.CreateV1AdmissionReview's request, without its uid. */
function reviewRequest(a: AdmissionAttributes, as?: Converted): Record<string, unknown> {
  const requestKind = { group: a.kind.group, version: a.kind.version, kind: a.kind.kind };
  const requestResource = { group: a.resource.group, version: a.resource.version, resource: a.resource.resource };
  // Called with an equivalent version: kind, resource and the objects in that version, the request's own in requestKind/requestResource.
  const kind = as ? { group: a.kind.group, version: as.version, kind: as.kind } : requestKind;
  const resource = as ? { ...requestResource, version: as.version } : requestResource;
  const u = a.userInfo;
  return {
    kind,
    resource,
    ...(a.subresource ? { subResource: a.subresource } : {}),
    requestKind,
    requestResource,
    ...(a.subresource ? { requestSubResource: a.subresource } : {}),
    ...(a.name ? { name: a.name } : {}),
    ...(a.namespace ? { namespace: a.namespace } : {}),
    operation: a.operation,
    userInfo: {
      username: u.name,
      ...(u.uid ? { uid: u.uid } : {}),
      ...(u.groups.length ? { groups: u.groups } : {}),
      ...(u.extra && Object.keys(u.extra).length ? { extra: u.extra } : {}),
    },
    object: (as ? as.object : a.object) ?? null,
    oldObject: (as ? as.oldObject : a.oldObject) ?? null,
    dryRun: a.dryRun,
    options: operationOptions(a),
  };
}

interface ReviewResponse {
  uid?: string;
  allowed?: boolean;
  status?: { code?: number; message?: string; reason?: string; status?: string; details?: unknown };
  patch?: string;
  patchType?: string;
  warnings?: string[];
  auditAnnotations?: Record<string, string>;
}

/** A failure to talk to the webhook (webhookutil.ErrCallingWebhook): the failure policy decides. */
class CallingWebhookError extends Error {
  /** ErrCallingWebhook's Status code (upstream sets one per failure; the metrics carry it). */
  readonly code: number;
  constructor(hook: string, reason: string, code: number) {
    super(`failed calling webhook ${JSON.stringify(hook)}: ${reason}`);
    this.code = code;
  }
}

/** The refusals webhooks answered (ErrWebhookRejection), as told from kplane's own StatusErrors. */
const WEBHOOK_REJECTIONS = new WeakSet<StatusError>();

/** errors.ToStatusErr: the webhook's refusal. */
function denied(hook: string, st: ReviewResponse['status']): StatusError {
  const e = deniedStatus(hook, st);
  WEBHOOK_REJECTIONS.add(e);
  return e;
}

function deniedStatus(hook: string, st: ReviewResponse['status']): StatusError {
  const deniedBy = `admission webhook ${JSON.stringify(hook)} denied the request`;
  const code = st?.code !== undefined && st.code >= 400 ? st.code : 400;
  const message = st?.message ? `${deniedBy}: ${st.message}` : st?.reason ? `${deniedBy}: ${st.reason}` : `${deniedBy} without explanation`;
  return new StatusError({
    message,
    ...(st?.reason ? { reason: st.reason as StatusError['status']['reason'] } : {}),
    ...(st?.details ? { details: st.details } : {}),
    code,
  });
}

/**
 * One call: the AdmissionReview out, the verified response back (request.VerifyAdmissionResponse).
 * `requestJSON` is reviewRequest's JSON: written once for the webhooks called in parallel, each
 * call's uid put first (as AdmissionRequest's fields are ordered).
 */
async function callHook(h: CompiledWebhook, a: AdmissionAttributes, requestJSON: string, mutating: boolean): Promise<ReviewResponse> {
  const name = h.hook.name ?? '';
  if (a.dryRun) {
    const se = h.hook.sideEffects;
    if (se === undefined) throw new CallingWebhookError(name, 'Webhook SideEffects is nil', 400);
    if (se !== 'None' && se !== 'NoneOnDryRun') throw badRequest(`admission webhook ${JSON.stringify(name)} does not support dry run`);
  }
  // request.CreateAdmissionObjects: the first AdmissionReview version the webhook lists that kplane knows.
  const version = (h.hook.admissionReviewVersions ?? []).find((v) => v === 'v1' || v === 'v1beta1');
  if (!version)
    throw new CallingWebhookError(name, 'could not create admission objects: webhook does not accept known AdmissionReview versions (v1, v1beta1)', 400);
  // Upstream's codes for a failed call differ between the two dispatchers.
  if (!h.endpoint) throw new CallingWebhookError(name, `could not get REST client: ${h.endpointError ?? 'no endpoint'}`, mutating ? 500 : 400);
  const callFailed = mutating ? 503 : 400;
  const uid = randomUUID();
  // uid (a UUID) and version (v1 or v1beta1) need no escaping.
  const body = `{"kind":"AdmissionReview","apiVersion":"admission.k8s.io/${version}","request":{"uid":"${uid}",${requestJSON.slice(1)}}`;
  let text: string;
  try {
    text = await post(h.endpoint, body, h.hook.timeoutSeconds ?? 10);
  } catch (e) {
    throw new CallingWebhookError(
      name,
      `failed to call webhook: ${e instanceof CallError ? e.message : String(e)}`,
      (e instanceof CallError ? e.code : undefined) ?? callFailed,
    );
  }
  let review: { apiVersion?: string; kind?: string; response?: ReviewResponse };
  try {
    review = JSON.parse(text) as typeof review;
  } catch {
    throw new CallingWebhookError(
      name,
      `failed to call webhook: couldn't get version/kind; json parse error: ${describeJsonSyntaxError(text, undefined, false)}`,
      callFailed,
    );
  }
  if (review === null || typeof review !== 'object' || Array.isArray(review)) {
    throw new CallingWebhookError(
      name,
      `failed to call webhook: couldn't get version/kind; json parse error: json: cannot unmarshal ${Array.isArray(review) ? 'array' : typeof review} into Go value of type struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" }`,
      callFailed,
    );
  }
  const r = review.response;
  if (!r || typeof r !== 'object') throw invalidResponse(name, 'webhook response was absent');
  if (version === 'v1beta1') {
    // request.VerifyAdmissionResponse for v1beta1: neither uid nor kind checked; a patch is a JSONPatch.
    if (!mutating) {
      delete r.patch;
      delete r.patchType;
    } else if (r.patch) r.patchType = 'JSONPatch';
  } else {
    if (r.uid !== uid) throw invalidResponse(name, `expected response.uid=${JSON.stringify(uid)}, got ${JSON.stringify(r.uid ?? '')}`);
    if (review.apiVersion !== 'admission.k8s.io/v1' || review.kind !== 'AdmissionReview') {
      const [g, v] = (review.apiVersion ?? '').includes('/') ? (review.apiVersion ?? '').split('/', 2) : ['', review.apiVersion ?? ''];
      throw invalidResponse(name, `expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, got ${g}/${v}, Kind=${review.kind ?? ''}`);
    }
    if (mutating) {
      if (r.patch && r.patchType === undefined) throw invalidResponse(name, 'webhook returned response.patch but not response.patchType');
      if (!r.patch && r.patchType !== undefined) throw invalidResponse(name, 'webhook returned response.patchType but not response.patch');
      if (r.patchType !== undefined && r.patchType === '') throw invalidResponse(name, `webhook returned invalid response.patchType of ""`);
    } else {
      if (r.patch) throw invalidResponse(name, 'validating webhook may not return response.patch');
      if (r.patchType !== undefined) throw invalidResponse(name, 'validating webhook may not return response.patchType');
    }
  }
  // The webhook's audit annotations, each key prefixed with its name.
  if (r.auditAnnotations && typeof r.auditAnnotations === 'object') {
    for (const [k, v] of Object.entries(r.auditAnnotations)) if (typeof v === 'string') annotate(a, `${name}/${k}`, v);
  }
  for (const w of r.warnings ?? []) if (typeof w === 'string') a.warnings?.addWarning(w);
  if (!r.allowed) throw denied(name, r.status);
  return r;
}

/** A response request.VerifyAdmissionResponse refuses (a module function: no closure per call). */
function invalidResponse(hook: string, why: string): CallingWebhookError {
  return new CallingWebhookError(hook, `received invalid webhook response: ${why}`, 503);
}

const failOpen = (h: CompiledWebhook): boolean => h.hook.failurePolicy === 'Ignore';

/**
 * Counts one call as upstream's dispatchers do (ObserveWebhook, ObserveWebhookRejection): `e`
 * undefined when the webhook allowed; a failure to call it refuses (calling_webhook_error, its
 * code) unless the webhook fails open; its own refusal is no_error with its code; anything else
 * apiserver_internal_error, code 0. Codes over 600 count as 600.
 */
function observe(opts: WebhookPluginOptions, h: CompiledWebhook, type: 'admit' | 'validating', a: AdmissionAttributes, started: number, e?: unknown): void {
  if (!opts.observe && !opts.observeRejection) return;
  const name = h.hook.name ?? '';
  let rejected = false;
  let code = 200;
  if (e !== undefined) {
    let why: WebhookRejectionType | undefined;
    if (e instanceof CallingWebhookError) {
      code = Math.min(e.code, 600);
      if (!failOpen(h)) why = 'calling_webhook_error';
    } else if (e instanceof StatusError && WEBHOOK_REJECTIONS.has(e)) {
      code = Math.min(e.status.code ?? 0, 600);
      why = 'no_error';
    } else {
      code = 0;
      why = 'apiserver_internal_error';
    }
    if (why) {
      rejected = true;
      opts.observeRejection?.(name, type, a.operation, why, code);
    }
  }
  opts.observe?.(name, type, a.operation, rejected, (performance.now() - started) / 1000, code);
}

/**
 * Whether no webhook of `opts` can concern the write: an exempt resource, none configured, or none
 * whose rules match (the first check of shouldCall, so nothing a webhook call would see differs).
 */
function noWebhookMatches(opts: WebhookPluginOptions): (a: AdmissionAttributes) => boolean {
  return (a) => {
    if (isExemptAdmissionConfigurationResource(a)) return true;
    for (const h of opts.source.webhooks()) if (rulesMatch(h, a, opts.equivalents) !== false) return false;
    return true;
  };
}

/** MutatingAdmissionWebhook: in order, each patch applied before the next webhook is asked. */
export function mutatingWebhookPlugin(opts: WebhookPluginOptions): AdmissionPlugin {
  // Answered at once, without a promise, when no webhook's rules match the write.
  return unlessIdle(noWebhookMatches(opts), {
    name: 'MutatingAdmissionWebhook',
    // Exempt writes and writes no webhook's rules match never get here (noWebhookMatches).
    async admit(a) {
      const hooks = opts.source.webhooks();
      // Reinvocation as upstream's dispatcher: in the chain's second pass only the IfNeeded webhooks
      // called before a later change (this plugin's, or any plugin's since it last ran) are called.
      const state = enterDispatcher(a, 'MutatingAdmissionWebhook');
      const round = state.rc.isReinvoke ? 1 : 0;
      const run = async (h: CompiledWebhook, place: CallPlace): Promise<void> => {
        const s = shouldCall(h, a, opts, 'admit');
        const call = s instanceof Promise ? await s : s;
        if (call === false) return;
        if (state.skips(h.key)) return;
        const started = performance.now();
        let changed = false;
        let failure: unknown;
        try {
          changed = await mutate(h, a, place, call === true ? undefined : opts.equivalents && { eq: opts.equivalents, to: call });
        } catch (e) {
          failure = e;
          if (e instanceof CallingWebhookError) {
            if (failOpen(h)) {
              opts.observeFailOpen?.(h.hook.name ?? '', 'admit');
              own(a)?.addAnnotation(placeKey(MUTATION_FAILED_OPEN_PREFIX, place), h.hook.name ?? '');
              return;
            }
            throw internalError(e);
          }
          throw e;
        } finally {
          // Whatever the outcome: an IfNeeded webhook that failed open is reinvoked after a later
          // change too, as upstream marks it invoked before it looks at the error.
          state.invoked(h.key, changed, h.hook.reinvocationPolicy === 'IfNeeded');
          // Whether the call changed the object, whatever its outcome (upstream's deferred annotation).
          own(a)?.addAnnotation(placeKey(MUTATION_ANNOTATION_PREFIX, place), mutationAnnotation(h, changed));
          observe(opts, h, 'admit', a, started, failure);
        }
      };
      try {
        for (let i = 0; i < hooks.length; i++) await run(hooks[i]!, { round, index: i });
      } finally {
        state.leave(a.object);
      }
    },
  });
}

/** MutationAuditAnnotation: `{"configuration","webhook","mutated"}`, as Go marshals the struct. */
function mutationAnnotation(h: CompiledWebhook, mutated: boolean): string {
  return goStruct([
    ['configuration', goString(h.configuration, true)],
    ['webhook', goString(h.hook.name ?? '', true)],
    ['mutated', mutated ? 'true' : 'false'],
  ]);
}

/**
 * PatchAuditAnnotation: the configuration, the webhook, the patch as decoded (each operation a Go
 * map: its members in sorted order) and `JSONPatch`, as Go marshals them.
 */
function patchAnnotation(h: CompiledWebhook, ops: readonly unknown[]): string {
  const op = (o: unknown): string => {
    if (o === null || typeof o !== 'object' || Array.isArray(o)) return goJSON(o, { escapeHTML: true });
    const m = o as Record<string, unknown>;
    const keys = Object.keys(m).sort(compareGoStrings);
    return `{${keys.map((k) => `${goString(k, true)}:${goJSON(m[k], { escapeHTML: true })}`).join(',')}}`;
  };
  return goStruct([
    ['configuration', goString(h.configuration, true)],
    ['webhook', goString(h.hook.name ?? '', true)],
    ['patch', `[${ops.map(op).join(',')}]`],
    ['patchType', '"JSONPatch"'],
  ]);
}

/** Calls one mutating webhook and applies its JSONPatch to `a.object`; answers whether it changed. */
async function mutate(
  h: CompiledWebhook,
  a: AdmissionAttributes,
  place: CallPlace,
  equivalent?: { readonly eq: EquivalentResources; readonly to: EquivalentVersion | Converted },
): Promise<boolean> {
  const name = h.hook.name ?? '';
  let as: Converted | undefined;
  try {
    as = equivalent ? await convertedFor(equivalent.eq, a, equivalent.to) : undefined;
  } catch (e) {
    throw conversionFailed(e);
  }
  const r = await callHook(h, a, stringifyJSON(reviewRequest(a, as)), true);
  if (!r.patch) return false;
  let ops: unknown[];
  try {
    ops = decodeJsonPatch(Buffer.from(r.patch, 'base64'));
  } catch (e) {
    throw new CallingWebhookError(name, `received undecodable patch in webhook response: ${e instanceof Error ? e.message : String(e)}`, 503);
  }
  if (ops.length === 0) return false;
  const base = as ? as.object : a.object;
  if (!base || !a.object)
    throw internalError(new Error(`admission webhook ${JSON.stringify(name)} attempted to modify the object, which is not supported for this operation`));
  if (r.patchType !== 'JSONPatch')
    throw new CallingWebhookError(name, `unsupported patch type ${JSON.stringify(r.patchType)}`, deniedStatus(name, r.status).status.code ?? 400);
  let patched: KubeObject;
  try {
    patched = applyJsonPatchOperations(base as never, ops as never) as KubeObject;
  } catch (e) {
    throw internalError(e instanceof StatusError ? new Error(e.message) : e);
  }
  if (patched === null || typeof patched !== 'object' || Array.isArray(patched))
    throw internalError(new Error(`admission webhook ${JSON.stringify(name)} patched the object into something that is not an object`));
  // Called with an equivalent version: the patched object back in the request's version.
  if (as && equivalent) {
    try {
      patched = await equivalent.eq.convert(patched, a.resource.group, a.resource.resource, as.version, a.resource.version);
    } catch (e) {
      throw conversionFailed(e);
    }
  }
  const changed = !isDeepStrictEqual(a.object, patched);
  // The patch applied, on audit events of level Request and above.
  own(a)?.addAnnotation(placeKey(PATCH_ANNOTATION_PREFIX, place), patchAnnotation(h, ops), 'Request');
  if (changed) {
    // The handler holds `a.object`: its content is replaced in place.
    const target = a.object as Record<string, unknown>;
    for (const k of Object.keys(target)) delete target[k];
    Object.assign(target, patched);
  }
  return changed;
}

/** ValidatingAdmissionWebhook: every matching webhook at once; the first refusal (in their order) answers. */
export function validatingWebhookPlugin(opts: WebhookPluginOptions): AdmissionPlugin {
  return unlessIdle(noWebhookMatches(opts), {
    name: 'ValidatingAdmissionWebhook',
    // Exempt writes and writes no webhook's rules match never get here (noWebhookMatches).
    async validate(a) {
      const hooks = opts.source.webhooks();
      const relevant: CompiledWebhook[] = [];
      const matches: Match[] = [];
      for (const h of hooks) {
        const s = shouldCall(h, a, opts, 'validating');
        const call = s instanceof Promise ? await s : s;
        if (call === false) continue;
        relevant.push(h);
        matches.push(call);
      }
      if (relevant.length === 0) return;
      const eq = opts.equivalents;
      // The review's request, written once per version the webhooks are called with.
      const requests = new Map<string, Promise<string>>();
      const requestFor = (m: Match): Promise<string> => {
        const version = m === true || m === false ? a.resource.version : m.version;
        let r = requests.get(version);
        if (!r) {
          r =
            m === true || m === false || !eq
              ? Promise.resolve(stringifyJSON(reviewRequest(a)))
              : convertedFor(eq, a, m).then((as) => stringifyJSON(reviewRequest(a, as)));
          requests.set(version, r);
        }
        return r;
      };
      if (relevant.length === 1 && matches[0] === true) {
        const first = await validateOne(opts, relevant[0]!, 0, a, stringifyJSON(reviewRequest(a)));
        if (first) throw first;
        return;
      }
      const request = (i: number): Promise<string> => requestFor(matches[i]!);
      // One webhook (the common case) is called without gathering answers.
      let texts: string[];
      try {
        texts = await Promise.all(relevant.map((_, i) => request(i)));
      } catch (e) {
        throw conversionFailed(e);
      }
      const results = await Promise.all(relevant.map((h, i) => validateOne(opts, h, i, a, texts[i]!)));
      const first = results.find((e) => e !== undefined);
      if (first) throw first;
    },
  });
}

/**
 * Calls one validating webhook (the `index`th of those called); answers its refusal, or undefined
 * when it allowed the write or failed open.
 */
async function validateOne(
  opts: WebhookPluginOptions,
  h: CompiledWebhook,
  index: number,
  a: AdmissionAttributes,
  request: string,
): Promise<StatusError | undefined> {
  const started = performance.now();
  try {
    await callHook(h, a, request, false);
    observe(opts, h, 'validating', a, started);
    return undefined;
  } catch (e) {
    observe(opts, h, 'validating', a, started, e);
    if (e instanceof CallingWebhookError) {
      if (!failOpen(h)) return internalError(e);
      opts.observeFailOpen?.(h.hook.name ?? '', 'validating');
      own(a)?.addAnnotation(placeKey(VALIDATING_FAILED_OPEN_PREFIX, { round: 0, index }), h.hook.name ?? '');
      return undefined;
    }
    return e instanceof StatusError ? e : internalError(e);
  }
}
