// io.k8s.api.core.v1.ConfigMap: shapes follow upstream's generated OpenAPI; descriptions are our own.
import type { Definitions } from '../../../apimachinery/schema.js';
import { CORE, apiVersionField, bool, kind, kindField, listKind, objectMetaField, stringMap } from '../../../apimachinery/definitions/util.js';

const V1 = { group: '', version: 'v1' };
const gvk = (k: string) => ({ group: '', kind: k, version: 'v1' });

export const configMapDefinitions: Definitions = {
  [CORE + 'ConfigMap']: kind(gvk('ConfigMap'), 'ConfigMap holds non-confidential configuration data as key/value pairs.', {
    apiVersion: apiVersionField,
    binaryData: {
      type: 'object',
      additionalProperties: { type: 'string', format: 'byte' },
      description: 'Binary values, base64-encoded in JSON. Keys may contain alphanumerics, "-", "_" and "." and must not also appear in data.',
    },
    data: stringMap('UTF-8 string values. Keys may contain alphanumerics, "-", "_" and "." and must not also appear in binaryData.'),
    immutable: bool('If true, data and binaryData can no longer be changed (only metadata); the object can only be deleted and recreated.'),
    kind: kindField,
    metadata: objectMetaField(),
  }),

  [CORE + 'ConfigMapList']: listKind(V1, CORE + 'ConfigMap', 'ConfigMap', 'The config maps.'),
};
