// io.k8s.api.core.v1.Secret: shapes follow upstream's generated OpenAPI; descriptions are our own.
import type { GoFieldTypes } from '../../../apimachinery/gotypes.js';
import type { Definitions } from '../../../apimachinery/schema.js';
import { CORE, apiVersionField, bool, kind, kindField, listKind, objectMetaField, str, stringMap } from '../../../apimachinery/definitions/util.js';

const V1 = { group: '', version: 'v1' };
const gvk = (k: string) => ({ group: '', kind: k, version: 'v1' });

export const secretDefinitions: Definitions = {
  [CORE + 'Secret']: kind(gvk('Secret'), 'Secret holds confidential data, such as passwords, tokens or keys, as key/value pairs.', {
    apiVersion: apiVersionField,
    data: {
      type: 'object',
      additionalProperties: { type: 'string', format: 'byte' },
      description: 'Secret values, base64-encoded in JSON. Keys may contain alphanumerics, "-", "_" and ".".',
    },
    immutable: bool('If true, data can no longer be changed (only metadata); the object can only be deleted and recreated.'),
    kind: kindField,
    metadata: objectMetaField(),
    stringData: stringMap('Write-only convenience for plain-text values: merged into data on write (winning over data) and never returned.'),
    type: str('Type of the secret, used for programmatic handling, e.g. "Opaque" (the default) or "kubernetes.io/tls".'),
  }),

  [CORE + 'SecretList']: listKind(V1, CORE + 'Secret', 'Secret', 'The secrets.'),
};

/** Go types of its fields that the definitions lose (see apimachinery/gotypes.ts). */
export const secretGoFieldTypes: GoFieldTypes = { [CORE + 'Secret']: { type: 'v1.SecretType' } };
