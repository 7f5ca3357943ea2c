// CRD conversion webhooks (apiextensions-apiserver/pkg/apiserver/conversion/webhook_converter.go):
// objects not in the desired version are sent in one ConversionReview (v1 or v1beta1, the first
// of the CRD's conversionReviewVersions kplane knows) to the CRD's webhook, through the same HTTPS
// client as the admission webhooks (one keep-alive agent per CRD; `?timeout=30s`, upstream's
// default for webhook clients). The answer is checked as upstream checks it: the review's kind and
// uid (v1 only), the result's status, the number of objects, each object's apiVersion, kind,
// name, namespace and uid; metadata other than labels and annotations is restored from the
// original. A failure is a 500 without a reason, `conversion webhook for <group/version, Kind=K>
// failed: ...`, as kube-apiserver's handlers answer the plain error the converter returns.
import { randomUUID } from 'node:crypto';
import { Counter, Histogram, type Registry } from 'prom-client';
import { CallError, newEndpoint, newServiceEndpoint, post, type WebhookEndpoint } from '../admission/webhook/client.js';
import type { ServiceResolver } from '../admission/webhook/service-resolver.js';
import { StatusError, issueString } from '../apimachinery/errors.js';
import type { KubeObject } from '../apimachinery/types.js';
import { validateAnnotations, validateLabels } from '../apimachinery/validation/objectmeta.js';
import { describeJsonSyntaxError } from '../golang/json-decode.js';
import { parseJSONExact, stringifyJSON } from '../golang/json-int64.js';
import { cloneObject } from '../registry/codec.js';
import type { CustomResourceDefinition } from './types.js';

/** Upstream's webhook client timeout for conversion (webhook.NewClientManager's default). */
export const CONVERSION_WEBHOOK_TIMEOUT_SECONDS = 30;

const KNOWN_REVIEW_VERSIONS = ['v1', 'v1beta1'];

/** Upstream's ConversionWebhookErrorType: which check a failed call stopped at ('' on success). */
export type ConversionFailureType =
  | ''
  | 'conversion_webhook_call_failure'
  | 'conversion_webhook_malformed_response_failure'
  | 'conversion_webhook_partial_response_failure'
  | 'conversion_webhook_invalid_converted_object_failure';

/**
 * One conversion webhook call: apiserver_crd_conversion_webhook_duration_seconds (converterMetric)
 * and apiserver_conversion_webhook_request_total / _duration_seconds (ConversionWebhookMetrics).
 */
export type ConversionObserver = (crdName: string, fromVersion: string, toVersion: string, failure: ConversionFailureType, seconds: number) => void;

/** The metrics upstream's conversion package records, in `registry`. */
export function conversionWebhookMetrics(registry: Registry): ConversionObserver {
  const requests = new Counter({
    name: 'apiserver_conversion_webhook_request_total',
    help: 'Counter for conversion webhook requests with success/failure and failure error type',
    labelNames: ['result', 'failure_type'],
    registers: [registry],
  });
  const latency = new Histogram({
    name: 'apiserver_conversion_webhook_duration_seconds',
    help: 'Conversion webhook request latency',
    labelNames: ['result', 'failure_type'],
    buckets: [0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 30, 45, 60],
    registers: [registry],
  });
  const h = new Histogram({
    name: 'apiserver_crd_conversion_webhook_duration_seconds',
    help: 'CRD webhook conversion duration in seconds',
    labelNames: ['crd_name', 'from_version', 'to_version', 'succeeded'],
    // metrics.ExponentialBuckets(0.001, 2, 15)
    buckets: Array.from({ length: 15 }, (_, i) => 0.001 * 2 ** i),
    registers: [registry],
  });
  return (crd_name, from_version, to_version, failure_type, seconds) => {
    h.observe({ crd_name, from_version, to_version, succeeded: String(failure_type === '') }, seconds);
    const labels = { result: failure_type === '' ? 'success' : 'failure', failure_type };
    requests.inc(labels);
    latency.observe(labels, seconds);
  };
}

/** The part of a CRD that decides its converter: a changed one builds a new converter. */
export function conversionKey(crd: CustomResourceDefinition): string | undefined {
  const c = crd.spec?.conversion;
  if (c?.strategy !== 'Webhook') return undefined;
  return stringifyJSON({ cc: c.webhook?.clientConfig ?? null, v: c.webhook?.conversionReviewVersions ?? [] });
}

/** Go's GroupVersionKind.String(): `group/version, Kind=kind`. */
function gvkString(apiVersion: string | undefined, kind: string | undefined): string {
  const av = apiVersion ?? '';
  const gv = av.includes('/') ? av : `/${av}`;
  return `${gv}, Kind=${kind ?? ''}`;
}

function failure(message: string): StatusError {
  // A plain error in the handlers: code 500, no reason, the message as it is.
  return new StatusError({ code: 500, message });
}

interface ReviewResponse {
  uid?: unknown;
  convertedObjects?: unknown;
  result?: { status?: unknown; message?: unknown };
}

export class ConversionWebhook {
  readonly key: string;
  private readonly endpoint: WebhookEndpoint | undefined;
  private readonly endpointError: string | undefined;
  private readonly reviewVersion: string | undefined;
  private readonly crdName: string;

  constructor(
    crd: CustomResourceDefinition,
    private readonly observe?: ConversionObserver,
    resolver?: ServiceResolver,
  ) {
    this.key = conversionKey(crd) ?? '';
    this.crdName = crd.metadata?.name ?? '';
    const w = crd.spec?.conversion?.webhook;
    this.reviewVersion = (w?.conversionReviewVersions ?? []).find((v) => KNOWN_REVIEW_VERSIONS.includes(v));
    const url = w?.clientConfig?.url;
    const svc = w?.clientConfig?.service;
    if (url || (svc && resolver)) {
      try {
        this.endpoint = url
          ? newEndpoint(url, w?.clientConfig?.caBundle)
          : newServiceEndpoint(
              { namespace: svc!.namespace ?? '', name: svc!.name ?? '', port: svc!.port ?? 443, ...(svc!.path !== undefined ? { path: svc!.path } : {}) },
              w?.clientConfig?.caBundle,
              resolver!,
            );
      } catch (e) {
        this.endpointError = e instanceof Error ? e.message : String(e);
      }
    } else this.endpointError = 'no service resolver: service references are not resolved by this server';
  }

  /** Closes the connections once the conversions under way have ended. */
  release(): void {
    this.endpoint?.release();
  }

  /**
   * `objs` converted to `apiVersion`, in order: those already in it as they are, the others from
   * one ConversionReview. Inputs are never modified.
   */
  async convert(objs: readonly KubeObject[], apiVersion: string): Promise<KubeObject[]> {
    const todo: number[] = [];
    objs.forEach((o, i) => {
      if (o.apiVersion !== apiVersion) todo.push(i);
    });
    if (todo.length === 0) return [...objs];
    const first = objs[todo[0]!]!;
    const from = first.apiVersion ?? '';
    const started = performance.now();
    const stage: { failure: ConversionFailureType } = { failure: 'conversion_webhook_call_failure' };
    try {
      const converted = await this.call(
        todo.map((i) => objs[i]!),
        apiVersion,
        gvkString(from, first.kind),
        stage,
      );
      const out = [...objs];
      todo.forEach((i, n) => (out[i] = converted[n]!));
      stage.failure = '';
      return out;
    } finally {
      const version = (av: string): string => av.slice(av.indexOf('/') + 1);
      this.observe?.(this.crdName, version(from), version(apiVersion), stage.failure, (performance.now() - started) / 1000);
    }
  }

  private async call(objs: readonly KubeObject[], apiVersion: string, gvk: string, stage: { failure: ConversionFailureType }): Promise<KubeObject[]> {
    const single = objs.length === 1;
    const failed = (why: string): StatusError => failure(`conversion webhook for ${gvk} failed: ${why}`);
    if (!this.reviewVersion) throw failure('no supported conversion review versions');
    if (!this.endpoint) throw failed(`could not get REST client: ${this.endpointError ?? 'no endpoint'}`);
    const uid = randomUUID();
    const review = {
      kind: 'ConversionReview',
      apiVersion: `apiextensions.k8s.io/${this.reviewVersion}`,
      request: { uid, desiredAPIVersion: apiVersion, objects: objs },
    };
    let text: string;
    try {
      text = await post(this.endpoint, stringifyJSON(review), CONVERSION_WEBHOOK_TIMEOUT_SECONDS);
    } catch (e) {
      throw failed(e instanceof CallError ? e.message : String(e));
    }
    let answer: unknown;
    try {
      answer = parseJSONExact(text);
    } catch {
      throw failed(`couldn't get version/kind; json parse error: ${describeJsonSyntaxError(text, undefined, false)}`);
    }
    if (answer === null || typeof answer !== 'object' || Array.isArray(answer)) {
      throw failed(
        `couldn't get version/kind; json parse error: json: cannot unmarshal ${Array.isArray(answer) ? 'array' : answer === null ? 'null' : typeof answer} into Go value of type struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" }`,
      );
    }
    const r = answer as { apiVersion?: unknown; kind?: unknown; response?: ReviewResponse | null };
    stage.failure = 'conversion_webhook_malformed_response_failure';
    if (this.reviewVersion === 'v1') {
      // Verify GVK to make sure we decoded what we intended to (v1beta1 never checked it).
      if (r.apiVersion !== 'apiextensions.k8s.io/v1' || r.kind !== 'ConversionReview') {
        const av = typeof r.apiVersion === 'string' ? r.apiVersion : '';
        throw failed(
          `expected webhook response of apiextensions.k8s.io/v1, Kind=ConversionReview, got ${gvkString(av, typeof r.kind === 'string' ? r.kind : '')}`,
        );
      }
    }
    const resp = r.response;
    if (!resp || typeof resp !== 'object') throw failed('no response provided');
    if (this.reviewVersion === 'v1' && resp.uid !== uid) {
      throw failed(`expected response.uid=${JSON.stringify(uid)}, got ${JSON.stringify(typeof resp.uid === 'string' ? resp.uid : '')}`);
    }
    const status = typeof resp.result?.status === 'string' ? resp.result.status : '';
    if (status !== 'Success') {
      const msg = typeof resp.result?.message === 'string' ? resp.result.message : '';
      throw failed(msg || `response.result.status was '${status}', not 'Success'`);
    }
    const converted = Array.isArray(resp.convertedObjects) ? (resp.convertedObjects as unknown[]) : [];
    stage.failure = 'conversion_webhook_partial_response_failure';
    if (converted.length !== objs.length) throw failure(`conversion webhook for ${gvk} returned ${converted.length} objects, expected ${objs.length}`);
    stage.failure = 'conversion_webhook_invalid_converted_object_failure';
    return converted.map((c, i) => {
      const original = objs[i]!;
      // Upstream counts a list's items from 1 once an item is decoded (from 0 before).
      const invalidObject = (why: string, meta = false, index = i + 1): StatusError =>
        failure(
          single
            ? `conversion webhook for ${gvk} returned invalid ${meta ? 'metadata' : 'object'}: ${why}`
            : `conversion webhook for ${gvk} returned invalid ${meta ? 'metadata in object' : 'converted object'} at index ${index}: ${why}`,
        );
      if (c === null || typeof c !== 'object' || Array.isArray(c)) throw invalidObject('Object "kind" is missing in converted object', false, i);
      const out = c as KubeObject;
      const badGV = `invalid groupVersion (expected ${apiVersion}, received ${typeof out.apiVersion === 'string' ? out.apiVersion : ''})`;
      if (out.apiVersion !== apiVersion) {
        throw failure(
          single
            ? `conversion webhook for ${gvk} returned invalid object at index 0: ${badGV}`
            : `conversion webhook for ${gvk} returned invalid converted object at index ${i + 1}: ${badGV}`,
        );
      }
      if (out.kind !== original.kind) {
        const why = `invalid kind (expected ${original.kind ?? ''}, received ${typeof out.kind === 'string' ? out.kind : ''})`;
        throw failure(
          single
            ? `conversion webhook for ${gvk} returned invalid object at index 0: ${why}`
            : `conversion webhook for ${gvk} returned invalid converted object at index ${i + 1}: ${why}`,
        );
      }
      const why = metadataChange(original, out);
      if (why) throw invalidObject(why);
      const restored = restoreObjectMeta(original, out);
      if (typeof restored === 'string') throw invalidObject(restored, true);
      return restored;
    });
  }
}

/** validateConvertedObject: name, namespace and uid must stay. */
function metadataChange(original: KubeObject, out: KubeObject): string | undefined {
  const m = original.metadata ?? {};
  const o = (out.metadata && typeof out.metadata === 'object' ? out.metadata : {}) as Record<string, unknown>;
  const str = (v: unknown): string => (typeof v === 'string' ? v : '');
  if ((m.name ?? '') !== str(o['name'])) return `must have the same name: ${m.name ?? ''} != ${str(o['name'])}`;
  if ((m.namespace ?? '') !== str(o['namespace'])) return `must have the same namespace: ${m.namespace ?? ''} != ${str(o['namespace'])}`;
  if ((m.uid ?? '') !== str(o['uid'])) return `must have the same UID: ${m.uid ?? ''} != ${str(o['uid'])}`;
  return undefined;
}

/**
 * restoreObjectMeta: the original's metadata, with the converted object's labels and annotations
 * (validated when they changed). Answers a new object, or why the metadata is invalid.
 */
function restoreObjectMeta(original: KubeObject, converted: KubeObject): KubeObject | string {
  const responseMeta = (converted as Record<string, unknown>)['metadata'];
  if (responseMeta === undefined) return 'missing metadata in converted object';
  if (responseMeta === null || typeof responseMeta !== 'object' || Array.isArray(responseMeta)) {
    return `invalid metadata of type ${goTypeName(responseMeta)} in converted object`;
  }
  const out = { ...converted, metadata: cloneObject(original.metadata ?? {}) } as KubeObject;
  const meta = out.metadata as Record<string, unknown>;
  for (const fld of ['labels', 'annotations'] as const) {
    const v = (responseMeta as Record<string, unknown>)[fld];
    if (v === undefined || v === null) {
      delete meta[fld];
      continue;
    }
    if (typeof v !== 'object' || Array.isArray(v)) return `invalid metadata.${fld} of type ${goTypeName(v)} in converted object`;
    const given = v as Record<string, unknown>;
    const before = (meta[fld] ?? {}) as Record<string, string>;
    let changed = Object.keys(before).length !== Object.keys(given).length;
    for (const [k, x] of Object.entries(given)) {
      if (typeof x !== 'string') return `metadata.${fld}[${k}] must be a string, but is ${goTypeName(x)} in converted object`;
      if (before[k] !== x) changed = true;
    }
    if (changed) {
      const map = given as Record<string, string>;
      const issues = fld === 'labels' ? validateLabels(map, 'metadata.labels') : validateAnnotations(map, 'metadata.annotation');
      if (issues.length) {
        const texts = issues.map((i) => issueString(i));
        return texts.length === 1 ? texts[0]! : `[${texts.join(', ')}]`;
      }
    }
    meta[fld] = given;
  }
  return out;
}

/** The Go type encoding/json gives a JSON value, as `%T` prints it. */
function goTypeName(v: unknown): string {
  if (typeof v === 'string') return 'string';
  if (typeof v === 'number' || typeof v === 'bigint') return 'float64';
  if (typeof v === 'boolean') return 'bool';
  if (Array.isArray(v)) return '[]interface {}';
  if (v === null) return '<nil>';
  return 'map[string]interface {}';
}
