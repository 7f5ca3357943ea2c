// Which template a file is (alpha/template/registry.go and schema.go): the `schema` of its first
// document, matched case-insensitively as encoding/json matches fields.
import { TemplateError } from './common.js';
import { GoDecodeError, unmarshalYAMLInto, type GoType } from './godecode.js';

/** opm's template registry: schema → type name (api.TypeFromSchema: the last dot-separated part). */
export const TEMPLATE_SCHEMAS: Readonly<Record<string, string>> = {
  'olm.template.basic': 'basic',
  'olm.semver': 'semver',
  'olm.template.substitutes': 'substitutes',
};

/** Template types opm knows, sorted (GetSupportedTypes). */
export const TEMPLATE_TYPES: readonly string[] = Object.values(TEMPLATE_SCHEMAS).sort();

const SCHEMA_DOC: GoType = {
  kind: 'struct',
  goName: 'struct { Schema string "json:\\"schema\\"" }',
  short: '',
  fields: [{ name: 'schema', type: { kind: 'string', goName: 'string' } }],
};

/**
 * detectSchema: the schema of the first YAML or JSON document. Errors as opm's: "decoding template
 * input: ...", "unmarshalling template schema: ...", "template input missing required 'schema' field".
 */
export function detectSchema(input: string): string {
  if (input.trim() === '' || /^(\s*---\s*\n?)*\s*$/.test(input)) throw new TemplateError('decoding template input: EOF');
  let doc: Record<string, unknown> | undefined;
  try {
    // the k8s YAMLOrJSONDecoder: plain YAMLToJSON (no struct guidance), unknown fields ignored
    doc = unmarshalYAMLInto(input, SCHEMA_DOC, { strictYAML: false, disallowUnknownFields: false, guided: false });
  } catch (err) {
    if (!(err instanceof GoDecodeError)) throw err;
    const m = err.message;
    if (m.startsWith('error converting YAML to JSON: ')) throw new TemplateError(`decoding template input: ${m}`);
    throw new TemplateError(`unmarshalling template schema: ${m.replace(/^error unmarshaling JSON: while decoding JSON: /, '')}`);
  }
  const schema = (doc?.['schema'] as string | undefined) ?? '';
  if (schema === '') throw new TemplateError("template input missing required 'schema' field");
  return schema;
}

/** The template type of a schema, or opm's UnknownSchemaError. */
export function typeOfSchema(schema: string): string {
  const t = TEMPLATE_SCHEMAS[schema];
  if (t === undefined) throw new TemplateError(`unknown template schema: ${schema}`);
  return t;
}
