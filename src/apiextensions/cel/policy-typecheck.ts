// The type checking of ValidatingAdmissionPolicies (k8s.io/apiserver's policy/validating
// typechecking.go): each validation's expression and messageExpression is compiled with `object`
// and `oldObject` typed by the schema of every kind the policy's resourceRules name (at most 10,
// sorted by group, version, kind), and `params` by the paramKind's schema. What does not
// type-check becomes one ExpressionWarning per expression, its text upstream's:
// `<group>/<version>, Kind=<kind>: ERROR: <input>:1:8: undefined field 'x'` plus the source
// lines, one block per kind. Type checking never changes what the policy does.
//
// Schemas come from the control plane's OpenAPI definitions (built-in kinds and CRDs alike),
// `$ref`s inlined; a schema that cannot be made structural is skipped (upstream's
// ErrSchemaNotFound). The CEL types are the CRD rules' (types.ts): objects with properties are
// message types, so a misspelt field or a wrong operand type does not compile.
import type { Environment } from '@marcbachmann/cel-js';
import { AUTHORIZER_TYPE, registerAuthz } from '../../admission/cel/authz.js';
import type { ValidatingAdmissionPolicy } from '../../admission/policy/types.js';
import { celErrorText } from '../../apimachinery/cel/expressions.js';
import { baseEnvironment } from '../../apimachinery/cel/library.js';
import { resolveSchema, type Definitions, type OpenAPISchema } from '../../apimachinery/schema.js';
import { newStructural } from '../schema/structural.js';
import type { JSONSchemaProps } from '../schema/types.js';
import { TypeBuilder } from './types.js';
import { celSourceMap, parseCel } from '../../apimachinery/cel/source.js';

const MAX_TYPES_TO_CHECK = 10;

export interface GVK {
  readonly group: string;
  readonly version: string;
  readonly kind: string;
}

export interface ExpressionWarning {
  fieldRef: string;
  warning: string;
}

/** What the checker needs of the control plane: the kind a resource serves, and a kind's schema. */
export interface TypeCheckSources {
  kindFor(group: string, version: string, resource: string): string | undefined;
  /** The kind's OpenAPI schema (refs into `definitions`), undefined when unknown. */
  schemaFor(gvk: GVK): { schema: OpenAPISchema; definitions: Definitions } | undefined;
}

/** Go's schema.GroupVersionKind.String(). */
const gvkString = (g: GVK): string => `${g.group}/${g.version}, Kind=${g.kind}`;

/** Inlines `$ref`s into the JSONSchemaProps shape newStructural reads; a recursive ref becomes "anything". */
function inline(defs: Definitions, s: OpenAPISchema | undefined, stack: string[]): JSONSchemaProps {
  if (!s) return { 'x-kubernetes-preserve-unknown-fields': true };
  if (s.$ref) {
    if (stack.includes(s.$ref) || stack.length > 32) return { 'x-kubernetes-preserve-unknown-fields': true };
    return inline(defs, resolveSchema(defs, s), [...stack, s.$ref]);
  }
  const out: Record<string, unknown> = {};
  if (s.type) out.type = s.type;
  if (s.format) out.format = s.format;
  if (s['x-kubernetes-int-or-string'] || s.format === 'int-or-string') {
    delete out.type;
    delete out.format;
    out['x-kubernetes-int-or-string'] = true;
  }
  if (s['x-kubernetes-preserve-unknown-fields']) out['x-kubernetes-preserve-unknown-fields'] = true;
  if (s['x-kubernetes-embedded-resource']) out['x-kubernetes-embedded-resource'] = true;
  if (s.properties) out.properties = Object.fromEntries(Object.entries(s.properties).map(([k, v]) => [k, inline(defs, v, stack)]));
  if (s.items) out.items = inline(defs, s.items, stack);
  if (typeof s.additionalProperties === 'object') out.additionalProperties = inline(defs, s.additionalProperties, stack);
  // A node with neither a type nor properties (e.g. RawExtension) holds anything.
  if (!out.type && !out.properties && !out['x-kubernetes-int-or-string']) out['x-kubernetes-preserve-unknown-fields'] = true;
  else if (!out.type && out.properties) out.type = 'object';
  return out;
}

/** typesToCheck: the kinds of the resourceRules without wildcards (subresources skipped), sorted, at most 10. */
export function typesToCheck(p: ValidatingAdmissionPolicy, src: TypeCheckSources): GVK[] {
  const found = new Map<string, GVK>();
  const rules = p.spec?.matchConstraints?.resourceRules ?? [];
  for (const rule of rules) {
    const groups = rule.apiGroups ?? [];
    const versions = rule.apiVersions ?? [];
    if (groups.some((g) => g.includes('*')) || versions.some((v) => v.includes('*'))) continue;
    const resources = (rule.resources ?? []).filter((r) => !/[*/]/.test(r));
    let count = 0;
    for (const group of [...groups].sort())
      for (const version of [...versions].sort())
        for (const resource of [...resources].sort()) {
          const kind = src.kindFor(group, version, resource);
          if (!kind) continue;
          found.set(`${group}/${version}/${kind}`, { group, version, kind });
          if (++count === MAX_TYPES_TO_CHECK) return sortGVKs([...found.values()]);
        }
  }
  return sortGVKs([...found.values()]);
}

const sortGVKs = (l: GVK[]): GVK[] =>
  l.sort((a, b) => (a.group !== b.group ? cmp(a.group, b.group) : a.version !== b.version ? cmp(a.version, b.version) : cmp(a.kind, b.kind)));
const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** An environment with `object`/`oldObject` (and `params`) typed; undefined when a schema cannot be used. */
function environmentFor(
  objectSchema: JSONSchemaProps,
  paramsSchema: JSONSchemaProps | undefined,
  hasParams: boolean,
  hasVariables: boolean,
): Environment | undefined {
  const env = baseEnvironment().clone();
  const tb = new TypeBuilder();
  let objectType: string;
  let paramsType = 'dyn';
  try {
    objectType = tb.decl(newStructural(objectSchema), 'Object', false).type;
    if (paramsSchema) paramsType = tb.decl(newStructural(paramsSchema), 'Params', false).type;
  } catch {
    return undefined;
  }
  tb.register(env);
  env.registerVariable('object', objectType);
  env.registerVariable('oldObject', objectType);
  env.registerVariable('request', 'dyn');
  env.registerVariable('namespaceObject', 'dyn');
  registerAuthz(env);
  env.registerVariable('authorizer', AUTHORIZER_TYPE);
  if (hasParams) env.registerVariable('params', paramsType);
  if (hasVariables) env.registerVariable('variables', 'map');
  return env;
}

/** TypeChecker.Check: the warnings for `policy.status.typeChecking.expressionWarnings` (empty: none). */
export function typeCheckPolicy(policy: ValidatingAdmissionPolicy, src: TypeCheckSources): ExpressionWarning[] {
  const gvks = typesToCheck(policy, src);
  if (gvks.length === 0) return [];
  const pk = policy.spec?.paramKind;
  let paramsSchema: JSONSchemaProps | undefined;
  if (pk?.apiVersion && pk.kind) {
    const [g, v] = pk.apiVersion.includes('/') ? pk.apiVersion.split('/', 2) : ['', pk.apiVersion];
    const found = src.schemaFor({ group: g!, version: v!, kind: pk.kind });
    if (found) paramsSchema = inline(found.definitions, found.schema, []);
  }
  const hasVariables = (policy.spec?.variables ?? []).length > 0;
  const envs: { gvk: GVK; env: Environment }[] = [];
  for (const gvk of gvks) {
    const found = src.schemaFor(gvk);
    if (!found) continue;
    const env = environmentFor(inline(found.definitions, found.schema, []), paramsSchema, pk !== undefined, hasVariables);
    if (env) envs.push({ gvk, env });
  }
  const check = (expression: string): string => {
    const blocks: string[] = [];
    for (const { gvk, env } of envs) {
      let error: unknown;
      try {
        const r = parseCel(env, expression).check();
        if (!r.valid) error = r.error;
      } catch (e) {
        error = e;
      }
      if (error !== undefined) blocks.push(`${gvkString(gvk)}: ${celErrorText(expression, error, celSourceMap(expression))}\n`);
    }
    return blocks.join('\n');
  };
  const warnings: ExpressionWarning[] = [];
  (policy.spec?.validations ?? []).forEach((v, i) => {
    const w = check(v.expression ?? '');
    if (w) warnings.push({ fieldRef: `spec.validations[${i}].expression`, warning: w });
    if (!v.messageExpression) return;
    const m = check(v.messageExpression);
    if (m) warnings.push({ fieldRef: `spec.validations[${i}].messageExpression`, warning: m });
  });
  return warnings;
}
