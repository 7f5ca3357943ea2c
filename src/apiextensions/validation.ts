// CustomResourceDefinition validation with upstream's rules and messages
// (k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation).
//
// Upstream validates the *internal* form, into which the v1 conversion moves per-version
// schema/subresources/additionalPrinterColumns/selectableFields to the top level when every
// version has the same value. Field paths in upstream's errors follow that form (a single-version
// CRD's schema errors read `spec.validation.openAPIV3Schema...`), and so do ours.
import { X509Certificate } from 'node:crypto';
import { fieldIssue, type FieldIssue } from '../apimachinery/errors.js';
import { isDNS1035Label, isDNS1123Subdomain } from '../apimachinery/validation/names.js';
import { validateWebhookService, validateWebhookURL } from '../registry/admissionregistration/validation.js';
import { compileJSONPath } from './jsonpath.js';
import type { ValidationRulesEngine } from './rules.js';
import { canonicalJSON, newStructural, validateOpenAPIV3Schema, type JSONSchemaProps, type Structural } from './schema/index.js';
import {
  API_APPROVED_ANNOTATION,
  isConditionTrue,
  type CRDSpec,
  type CRDSubresources,
  type CRDVersion,
  type CustomResourceColumnDefinition,
  type CustomResourceDefinition,
  type CRDNames,
  type SelectableField,
} from './types.js';

export const PRINTER_COLUMN_TYPES = ['boolean', 'date', 'integer', 'number', 'string'];
export const PRINTER_COLUMN_FORMATS = ['byte', 'date', 'date-time', 'double', 'float', 'int32', 'int64', 'password'];
export const MAX_SELECTABLE_FIELDS = 8;
const ACCEPTED_CONVERSION_REVIEW_VERSIONS = ['v1', 'v1beta1'];

export interface CRDValidationHooks {
  readonly rules?: ValidationRulesEngine | undefined;
}

/** Semantic.DeepEqual on JSON: empty and missing lists/maps are equal. */
function normalized(v: unknown): unknown {
  if (Array.isArray(v)) return v.length === 0 ? undefined : v.map(normalized);
  if (v !== null && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) {
      const n = normalized(x);
      if (n !== undefined) out[k] = n;
    }
    return Object.keys(out).length === 0 ? undefined : out;
  }
  return v;
}
export function semanticEqual(a: unknown, b: unknown): boolean {
  return canonicalJSON(normalized(a) ?? null) === canonicalJSON(normalized(b) ?? null);
}

/** The internal form's view of spec.versions: which per-version fields moved to the top level. */
export interface InternalView {
  readonly validation: CRDVersion['schema'] | undefined;
  readonly subresources: CRDSubresources | undefined;
  readonly columns: CustomResourceColumnDefinition[] | undefined;
  readonly selectableFields: SelectableField[] | undefined;
  readonly perVersion: { schema: boolean; subresources: boolean; columns: boolean; selectableFields: boolean };
}

export function internalView(spec: CRDSpec): InternalView {
  const vs = spec.versions ?? [];
  const same = (pick: (v: CRDVersion) => unknown): boolean => vs.length > 0 && vs.every((v) => semanticEqual(pick(v), pick(vs[0]!)));
  const schema = same((v) => v.schema);
  const sub = same((v) => v.subresources);
  const cols = same((v) => v.additionalPrinterColumns);
  const sel = same((v) => v.selectableFields);
  return {
    validation: schema ? vs[0]?.schema : undefined,
    subresources: sub ? vs[0]?.subresources : undefined,
    columns: cols ? vs[0]?.additionalPrinterColumns : undefined,
    selectableFields: sel ? vs[0]?.selectableFields : undefined,
    perVersion: { schema: !schema, subresources: !sub, columns: !cols, selectableFields: !sel },
  };
}

/** SetDefaults_CustomResourceDefinitionSpec (v1): singular, listKind, conversion. Mutates. */
export function defaultCRD(crd: CustomResourceDefinition): void {
  const spec = crd.spec;
  if (!spec || typeof spec !== 'object') return;
  const names = (spec.names ??= {});
  if (!names.singular && names.kind) names.singular = names.kind.toLowerCase();
  if (!names.listKind && names.kind) names.listKind = `${names.kind}List`;
  spec.conversion ??= { strategy: 'None' };
  const svc = spec.conversion.webhook?.clientConfig?.service;
  if (svc && svc.port === undefined) svc.port = 443;
  floatSchemaBounds(spec);
}

const FLOAT64_BOUNDS = new Set(['maximum', 'minimum', 'multipleOf']);
/** Values Go keeps as raw JSON (apiextensions JSON): their integers stay exact. */
const RAW_JSON = new Set(['default', 'enum', 'example']);

/**
 * A schema's maximum, minimum and multipleOf are float64 in JSONSchemaProps: an integer literal
 * past 2^53 (decoded as a bigint, golang/json-int64.ts) is the double Go decodes it to.
 */
function floatSchemaBounds(spec: object): void {
  const stack: object[] = [spec];
  while (stack.length > 0) {
    const o = stack.pop() as Record<string, unknown>;
    const isArray = Array.isArray(o);
    for (const k in o) {
      const v = o[k];
      if (typeof v === 'bigint' && !isArray && FLOAT64_BOUNDS.has(k)) o[k] = Number(v);
      else if (v !== null && typeof v === 'object' && (isArray || !RAW_JSON.has(k))) stack.push(v);
    }
  }
}

function enumStrings(path: string, value: string | undefined, accepted: string[], required: boolean): FieldIssue[] {
  if (!value) return required ? [fieldIssue.required(path, '')] : [];
  return accepted.includes(value) ? [] : [fieldIssue.notSupported(path, value, accepted)];
}

function simpleJSONPath(s: string, path: string): FieldIssue[] {
  if (s.length === 0) return [fieldIssue.invalid(path, s, 'must not be empty')];
  if (s[0] !== '.') return [fieldIssue.invalid(path, s, 'must be a simple json path starting with .')];
  return [];
}

function validateNames(names: CRDNames | undefined, p: string): FieldIssue[] {
  const errs: FieldIssue[] = [];
  if (!names) return errs;
  const label = (v: string | undefined, f: string, mixed = false): void => {
    if (!v) return;
    const e = isDNS1035Label(mixed ? v.toLowerCase() : v);
    if (e.length) errs.push(fieldIssue.invalid(`${p}.${f}`, v, (mixed ? 'may have mixed case, but should otherwise match: ' : '') + e.join(',')));
  };
  label(names.plural, 'plural');
  label(names.singular, 'singular');
  label(names.kind, 'kind', true);
  label(names.listKind, 'listKind', true);
  (names.shortNames ?? []).forEach((s, i) => {
    const e = isDNS1035Label(s);
    if (e.length) errs.push(fieldIssue.invalid(`${p}.shortNames[${i}]`, s, e.join(',')));
  });
  if (names.kind && names.kind === names.listKind) errs.push(fieldIssue.invalid(`${p}.listKind`, names.listKind, 'kind and listKind may not be the same'));
  (names.categories ?? []).forEach((c, i) => {
    const e = isDNS1035Label(c);
    if (e.length) errs.push(fieldIssue.invalid(`${p}.categories[${i}]`, c, e.join(',')));
  });
  return errs;
}

function validateColumn(col: CustomResourceColumnDefinition, p: string): FieldIssue[] {
  const errs: FieldIssue[] = [];
  if (!col.name) errs.push(fieldIssue.required(`${p}.name`, ''));
  if (!col.type) errs.push(fieldIssue.required(`${p}.type`, `must be one of ${PRINTER_COLUMN_TYPES.join(',')}`));
  else if (!PRINTER_COLUMN_TYPES.includes(col.type)) errs.push(fieldIssue.invalid(`${p}.type`, col.type, `must be one of ${PRINTER_COLUMN_TYPES.join(',')}`));
  if (col.format && !PRINTER_COLUMN_FORMATS.includes(col.format))
    errs.push(fieldIssue.invalid(`${p}.format`, col.format, `must be one of ${PRINTER_COLUMN_FORMATS.join(',')}`));
  if (!col.jsonPath) errs.push(fieldIssue.required(`${p}.JSONPath`, ''));
  else {
    const e = simpleJSONPath(col.jsonPath, `${p}.JSONPath`);
    if (e.length) errs.push(...e);
    else {
      // Upstream fails later, when it builds the table convertor; kplane refuses the CRD instead.
      try {
        compileJSONPath(col.jsonPath);
      } catch (err) {
        errs.push(fieldIssue.invalid(`${p}.JSONPath`, col.jsonPath, `is not a valid JSONPath: ${(err as Error).message}`));
      }
    }
  }
  return errs;
}

function validateSubresources(sub: CRDSubresources | undefined, p: string): FieldIssue[] {
  const errs: FieldIssue[] = [];
  const scale = sub?.scale;
  if (!scale) return errs;
  const under = (v: string | undefined, f: string, prefix: string, what: string): void => {
    if (!v) {
      errs.push(fieldIssue.required(`${p}.scale.${f}`, ''));
      return;
    }
    const e = simpleJSONPath(v, `${p}.scale.${f}`);
    if (e.length) errs.push(...e);
    else if (!v.startsWith(prefix)) errs.push(fieldIssue.invalid(`${p}.scale.${f}`, v, `should be a json path under ${what}`));
  };
  under(scale.specReplicasPath, 'specReplicasPath', '.spec.', '.spec');
  under(scale.statusReplicasPath, 'statusReplicasPath', '.status.', '.status');
  const ls = scale.labelSelectorPath;
  if (ls) {
    const e = simpleJSONPath(ls, `${p}.scale.labelSelectorPath`);
    if (e.length) errs.push(...e);
    else if (!ls.startsWith('.spec.') && !ls.startsWith('.status.'))
      errs.push(fieldIssue.invalid(`${p}.scale.labelSelectorPath`, ls, 'should be a json path under either .spec or .status'));
  }
  return errs;
}

/** cel.ValidFieldPath without array notation: the schema node a dotted path names. */
function fieldPathSchema(path: string, schema: Structural | undefined): { root: string; node?: Structural; error?: string } {
  const parts = path.split('.');
  if (parts[0] !== '' || parts.length < 2 || parts.slice(1).some((x) => x === '')) return { root: '', error: 'expected a path of the form .field.field' };
  let node = schema;
  for (const f of parts.slice(1)) {
    const next = node?.properties?.get(f) ?? node?.additionalProperties?.structural;
    if (!next) return { root: parts[1]!, error: 'does not refer to a valid field' };
    node = next;
  }
  return { root: parts[1]!, ...(node ? { node } : {}) };
}

function validateSelectableFields(fields: SelectableField[], schema: Structural | undefined, p: string): FieldIssue[] {
  const errs: FieldIssue[] = [];
  const seen = new Set<string>();
  fields.forEach((f, i) => {
    const ip = `${p}[${i}].jsonPath`;
    if (!f.jsonPath) {
      errs.push(fieldIssue.required(ip, ''));
      return;
    }
    const r = fieldPathSchema(f.jsonPath, schema);
    if (r.error) {
      errs.push(fieldIssue.invalid(ip, f.jsonPath, `is an invalid path: ${r.error}`));
      return;
    }
    if (r.root === 'metadata') errs.push(fieldIssue.invalid(ip, f.jsonPath, 'must not point to fields in metadata'));
    if (!r.node || !['string', 'boolean', 'integer'].includes(r.node.type)) {
      errs.push(
        fieldIssue.invalid(
          ip,
          f.jsonPath,
          'must point to a field of type string, boolean or integer. Enum string fields and strings with formats are allowed.',
        ),
      );
    }
    if (seen.has(f.jsonPath)) errs.push(fieldIssue.duplicate(ip, f.jsonPath));
    else seen.add(f.jsonPath);
  });
  if (seen.size > MAX_SELECTABLE_FIELDS) errs.push(fieldIssue.tooMany(p, seen.size, MAX_SELECTABLE_FIELDS));
  return errs;
}

function structuralOf(schema: JSONSchemaProps | undefined): Structural | undefined {
  if (!schema) return undefined;
  try {
    return newStructural(schema);
  } catch {
    return undefined;
  }
}

function validateValidation(
  v: CRDVersion['schema'] | undefined,
  statusEnabled: boolean,
  p: string,
  hooks: CRDValidationHooks,
  unchanged: boolean,
): FieldIssue[] {
  const schema = v?.openAPIV3Schema;
  if (!schema || unchanged) return [];
  const errs = validateOpenAPIV3Schema(schema, `${p}.openAPIV3Schema`, { statusSubresource: statusEnabled });
  if (errs.length === 0 && hooks.rules) {
    const ss = structuralOf(schema);
    if (ss) errs.push(...hooks.rules.check(ss, `${p}.openAPIV3Schema`));
  }
  return errs;
}

function deprecationWarningErrors(v: CRDVersion): string[] {
  const w = v.deprecationWarning;
  if (!v.deprecated && w !== undefined && w !== null) return ['can only be set for deprecated versions'];
  if (w === undefined || w === null) return [];
  const errs: string[] = [];
  if (Buffer.byteLength(w, 'utf8') > 256) errs.push('must be <= 256 characters long');
  if (w.length === 0) errs.push('must not be an empty string');
  let i = 0;
  for (const ch of w) {
    if (/\p{Cc}/u.test(ch)) {
      errs.push(`must only contain printable UTF-8 characters; control character found at index ${i}`);
      break;
    }
    if (!/[\p{L}\p{M}\p{N}\p{P}\p{S} ]/u.test(ch)) {
      errs.push(`must only contain printable UTF-8 characters; non-printable character found at index ${i}`);
      break;
    }
    i += Buffer.byteLength(ch, 'utf8');
  }
  return errs;
}

function validateConversion(spec: CRDSpec, p: string, requireRecognized: boolean, allowInvalidCABundle: boolean): FieldIssue[] {
  const c = spec.conversion;
  const errs: FieldIssue[] = [];
  if (!c) return errs;
  errs.push(...enumStrings(`${p}.strategy`, c.strategy, ['None', 'Webhook'], true));
  const wp = `${p}.webhookClientConfig`;
  const cc = c.webhook?.clientConfig;
  if (c.strategy === 'Webhook') {
    if (!cc) errs.push(fieldIssue.required(wp, 'required when strategy is set to Webhook'));
    else if ((cc.url === undefined) === (cc.service === undefined)) errs.push(fieldIssue.required(wp, 'exactly one of url or service is required'));
    else if (cc.url !== undefined) errs.push(...validateWebhookURL(`${wp}.url`, cc.url));
    else if (cc.service) errs.push(...validateWebhookService(`${wp}.service`, cc.service));
    if (cc?.caBundle && !allowInvalidCABundle) {
      const why = caBundleError(cc.caBundle);
      if (why) errs.push(fieldIssue.invalid(`${wp}.caBundle`, cc.caBundle, why));
    }
    const versions = c.webhook?.conversionReviewVersions ?? [];
    const vp = `${p}.conversionReviewVersions`;
    if (versions.length === 0) errs.push(fieldIssue.required(vp, ''));
    else {
      const seen = new Set<string>();
      versions.forEach((v, i) => {
        if (seen.has(v)) {
          errs.push(fieldIssue.invalid(`${vp}[${i}]`, v, 'duplicate version'));
          return;
        }
        seen.add(v);
        for (const e of isDNS1035Label(v)) errs.push(fieldIssue.invalid(`${vp}[${i}]`, v, e));
      });
      if (requireRecognized && !versions.some((v) => ACCEPTED_CONVERSION_REVIEW_VERSIONS.includes(v))) {
        errs.push(fieldIssue.invalid(vp, versions, `must include at least one of ${ACCEPTED_CONVERSION_REVIEW_VERSIONS.join(', ')}`));
      }
    }
  } else {
    if (cc) errs.push(fieldIssue.forbidden(wp, 'should not be set when strategy is not set to Webhook'));
    if ((c.webhook?.conversionReviewVersions ?? []).length > 0)
      errs.push(fieldIssue.forbidden(`${p}.conversionReviewVersions`, 'should not be set when strategy is not set to Webhook'));
  }
  return errs;
}

function validateSpec(spec: CRDSpec, old: CRDSpec | undefined, hooks: CRDValidationHooks, allowInvalidCABundle = true): FieldIssue[] {
  const errs: FieldIssue[] = [];
  const p = 'spec';
  if (!spec.group) errs.push(fieldIssue.required(`${p}.group`, ''));
  else {
    const e = isDNS1123Subdomain(spec.group);
    if (e.length) errs.push(fieldIssue.invalid(`${p}.group`, spec.group, e.join(',')));
    else if (spec.group.split('.').length < 2) errs.push(fieldIssue.invalid(`${p}.group`, spec.group, 'should be a domain with at least one dot'));
  }
  errs.push(...enumStrings(`${p}.scope`, spec.scope, ['Cluster', 'Namespaced'], true));

  const versions = spec.versions ?? [];
  const view = internalView(spec);
  const oldVersions = new Map((old?.versions ?? []).map((v) => [v.name, v]));
  const oldView = old ? internalView(old) : undefined;
  // A schema the server accepted before is not re-checked on update (upstream ratchets several checks).
  const unchangedSchema = (v: CRDVersion['schema'] | undefined, oldV: CRDVersion['schema'] | undefined): boolean =>
    !!old && oldV !== undefined && semanticEqual(v, oldV);

  // requireOpenAPISchema: on update only if the old object specified schemas everywhere.
  const requireSchema = !old || (old.versions ?? []).every((v) => v.schema?.openAPIV3Schema);
  if (requireSchema && !view.validation?.openAPIV3Schema) {
    versions.forEach((v, i) => {
      if (!v.schema?.openAPIV3Schema) errs.push(fieldIssue.required(`${p}.versions[${i}].schema.openAPIV3Schema`, ''));
    });
  }

  let storageCount = 0;
  const names = new Set<string>();
  let unique = true;
  versions.forEach((v, i) => {
    const vp = `${p}.versions[${i}]`;
    if (v.storage) storageCount++;
    if (names.has(v.name ?? '')) unique = false;
    else names.add(v.name ?? '');
    const e = isDNS1035Label(v.name ?? '');
    if (e.length) errs.push(fieldIssue.invalid(`${vp}.name`, v.name ?? '', e.join(',')));
    const subresources = view.perVersion.subresources ? v.subresources : view.subresources;
    for (const m of deprecationWarningErrors(v)) errs.push(fieldIssue.invalid(`${vp}.deprecationWarning`, v.deprecationWarning ?? null, m));
    if (view.perVersion.schema) {
      errs.push(...validateValidation(v.schema, !!subresources?.status, `${vp}.schema`, hooks, unchangedSchema(v.schema, oldVersions.get(v.name)?.schema)));
    }
    if (view.perVersion.subresources) errs.push(...validateSubresources(v.subresources, `${vp}.subresources`));
    if (view.perVersion.columns) (v.additionalPrinterColumns ?? []).forEach((c, j) => errs.push(...validateColumn(c, `${vp}.additionalPrinterColumns[${j}]`)));
    if (view.perVersion.selectableFields && (v.selectableFields ?? []).length > 0) {
      if (!v.schema?.openAPIV3Schema)
        errs.push(fieldIssue.invalid(`${vp}.selectableFields`, '', 'may only be set when `version.schema.openAPIV3Schema` is not included'));
      else errs.push(...validateSelectableFields(v.selectableFields!, structuralOf(v.schema.openAPIV3Schema), `${vp}.selectableFields`));
    }
  });
  if (!unique) errs.push(fieldIssue.invalid(`${p}.versions`, versions, 'must contain unique version names'));
  if (storageCount !== 1) errs.push(fieldIssue.invalid(`${p}.versions`, versions, 'must have exactly one version marked as storage version'));

  const n = spec.names ?? {};
  if (!n.plural) errs.push(fieldIssue.required(`${p}.names.plural`, ''));
  if (!n.singular) errs.push(fieldIssue.required(`${p}.names.singular`, ''));
  if (!n.kind) errs.push(fieldIssue.required(`${p}.names.kind`, ''));
  if (!n.listKind) errs.push(fieldIssue.required(`${p}.names.listKind`, ''));
  errs.push(...validateNames(n, `${p}.names`));

  const anyStatus = view.perVersion.subresources ? versions.some((v) => !!v.subresources?.status) : !!view.subresources?.status;
  errs.push(...validateValidation(view.validation, anyStatus, `${p}.validation`, hooks, unchangedSchema(view.validation, oldView?.validation)));
  errs.push(...validateSubresources(view.subresources, `${p}.subresources`));
  (view.columns ?? []).forEach((c, i) => errs.push(...validateColumn(c, `${p}.additionalPrinterColumns[${i}]`)));
  if ((view.selectableFields ?? []).length > 0) {
    if (!view.validation) errs.push(fieldIssue.invalid(`${p}.selectableFields`, '', 'may only be set when validations.schema is included'));
    else errs.push(...validateSelectableFields(view.selectableFields!, structuralOf(view.validation.openAPIV3Schema), `${p}.selectableFields`));
  }
  if (spec.conversion && spec.conversion.strategy !== 'None' && spec.preserveUnknownFields) {
    errs.push(fieldIssue.invalid(`${p}.conversion.strategy`, spec.conversion.strategy, 'must be None if spec.preserveUnknownFields is true'));
  }
  const oldReview = old?.conversion?.webhook?.conversionReviewVersions ?? [];
  errs.push(
    ...validateConversion(
      spec,
      `${p}.conversion`,
      !old || oldReview.length === 0 || oldReview.some((v) => ACCEPTED_CONVERSION_REVIEW_VERSIONS.includes(v)),
      allowInvalidCABundle,
    ),
  );
  return errs;
}

/**
 * allowInvalidCABundle: an invalid caBundle is accepted on create, before the CRD is established,
 * and while the old one is invalid too (upstream 1.31+).
 */
function allowInvalidCABundle(old: CustomResourceDefinition): boolean {
  if (!isConditionTrue(old, 'Established')) return true;
  const ca = old.spec?.conversion?.webhook?.clientConfig?.caBundle;
  if (!ca) return false;
  return caBundleError(ca) !== undefined;
}

/**
 * webhook.ValidateCABundle: client-go's transport.TLSConfigFor on the bundle (base64 on the wire):
 * at least one PEM CERTIFICATE block that parses, else its error text.
 */
function caBundleError(base64: string): string | undefined {
  const pem = Buffer.from(base64, 'base64').toString('latin1');
  const blocks = [...pem.matchAll(/-----BEGIN ([A-Z0-9 ]+)-----\r?\n([\s\S]*?)-----END \1-----/g)];
  const prefix = 'unable to load root certificates: ';
  if (blocks.length === 0) return `${prefix}unable to parse bytes as PEM block`;
  let firstError: string | undefined;
  for (const b of blocks) {
    if (b[1] !== 'CERTIFICATE') continue;
    try {
      new X509Certificate(Buffer.from(b[2]!.replace(/\s+/g, ''), 'base64'));
      return undefined; // one certificate that parses is enough (AppendCertsFromPEM)
    } catch {
      firstError ??= `${prefix}failed to parse certificate: x509: malformed certificate`;
    }
  }
  return firstError ?? `${prefix}no valid certificate authority data seen`;
}

function validateStoredVersions(stored: string[] | undefined, versions: CRDVersion[]): FieldIssue[] {
  const p = 'status.storedVersions';
  if (!stored || stored.length === 0) return [fieldIssue.invalid(p, stored ?? [], 'must have at least one stored version')];
  const errs: FieldIssue[] = [];
  const remaining = new Map(stored.map((v, i) => [v, i]));
  for (const v of versions) {
    const has = remaining.has(v.name ?? '');
    if (v.storage && !has) errs.push(fieldIssue.invalid(p, stored, `must have the storage version ${v.name ?? ''}`));
    if (has) remaining.delete(v.name ?? '');
  }
  for (const [v, i] of remaining) {
    errs.push(
      fieldIssue.invalid(
        `${p}[${i}]`,
        v,
        `missing from spec.versions; ${v} was previously a storage version, and must remain in spec.versions until a storage migration ensures no data remains persisted in ${v} and removes ${v} from status.storedVersions`,
      ),
    );
  }
  return errs;
}

export function isProtectedCommunityGroup(group: string): boolean {
  return group === 'k8s.io' || group.endsWith('.k8s.io') || group === 'kubernetes.io' || group.endsWith('.kubernetes.io');
}

export type ApprovalState = 'Invalid' | 'Approved' | 'Bypassed' | 'Missing';

export function apiApprovalState(annotations: Record<string, string> | undefined): { state: ApprovalState; reason: string } {
  const a = annotations?.[API_APPROVED_ANNOTATION] ?? '';
  if (a.length === 0)
    return {
      state: 'Missing',
      reason: `protected groups must have approval annotation "${API_APPROVED_ANNOTATION}", see https://github.com/kubernetes/enhancements/pull/1111`,
    };
  if (a.startsWith('unapproved')) return { state: 'Bypassed', reason: `not approved: "${a}"` };
  let url: URL | undefined;
  try {
    url = new URL(a);
  } catch {
    url = undefined;
  }
  if (url && url.host && url.protocol) return { state: 'Approved', reason: `approved in ${a}` };
  return {
    state: 'Invalid',
    reason: `protected groups must have approval annotation "${API_APPROVED_ANNOTATION}" with either a URL or a reason starting with "unapproved", see https://github.com/kubernetes/enhancements/pull/1111`,
  };
}

function validateAPIApproval(crd: CustomResourceDefinition, old: CustomResourceDefinition | undefined): FieldIssue[] {
  if (!isProtectedCommunityGroup(crd.spec?.group ?? '')) return [];
  const next = apiApprovalState(crd.metadata?.annotations);
  if (old && apiApprovalState(old.metadata?.annotations).state === next.state) return [];
  const p = `metadata.annotations[${API_APPROVED_ANNOTATION}]`;
  switch (next.state) {
    case 'Approved':
    case 'Bypassed':
      return [];
    case 'Missing':
      return [fieldIssue.required(p, next.reason)];
    default:
      return [fieldIssue.invalid(p, crd.metadata?.annotations?.[API_APPROVED_ANNOTATION] ?? '', next.reason)];
  }
}

/** ValidateCustomResourceDefinition (create) or ...Update (with `old`), minus ObjectMeta (the store's). */
export function validateCRD(crd: CustomResourceDefinition, old: CustomResourceDefinition | undefined, hooks: CRDValidationHooks = {}): FieldIssue[] {
  const errs: FieldIssue[] = [];
  const spec = crd.spec ?? {};
  if (!old) {
    const name = crd.metadata?.name ?? '';
    if (name && name !== `${spec.names?.plural ?? ''}.${spec.group ?? ''}`)
      errs.push(fieldIssue.invalid('metadata.name', name, 'must be spec.names.plural+"."+spec.group'));
  }
  errs.push(...validateSpec(spec, old?.spec, hooks, !old || allowInvalidCABundle(old)));
  if (old) {
    const o = old.spec ?? {};
    const immutable = (a: unknown, b: unknown, p: string): void => {
      if (!semanticEqual(a, b)) errs.push(fieldIssue.invalid(p, a ?? '', 'field is immutable'));
    };
    if (isConditionTrue(old, 'Established')) {
      immutable(spec.scope, o.scope, 'spec.scope');
      immutable(spec.names?.kind, o.names?.kind, 'spec.names.kind');
    }
    immutable(spec.group, o.group, 'spec.group');
    immutable(spec.names?.plural, o.names?.plural, 'spec.names.plural');
  }
  errs.push(...validateNames(crd.status?.acceptedNames, 'status.acceptedNames'));
  errs.push(...validateStoredVersions(crd.status?.storedVersions, spec.versions ?? []));
  errs.push(...validateAPIApproval(crd, old));
  if (!old?.spec?.preserveUnknownFields && spec.preserveUnknownFields) {
    errs.push(
      fieldIssue.invalid(
        'spec.preserveUnknownFields',
        true,
        'cannot set to true, set x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead',
      ),
    );
  }
  return errs;
}

/** ValidateUpdateCustomResourceDefinitionStatus, minus ObjectMeta. */
export function validateCRDStatus(crd: CustomResourceDefinition): FieldIssue[] {
  return validateNames(crd.status?.acceptedNames, 'status.acceptedNames');
}
