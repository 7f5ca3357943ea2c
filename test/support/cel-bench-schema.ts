// The CEL workload of the micro benchmark (bench/micro.ts), also checked by a unit test
// (src/apiextensions/cel/cel.test.ts): 2 rules on a 20-field spec, the custom resource bench's shape.
import type { JSONSchemaProps } from '../../src/apiextensions/schema/types.js';

export function twentyFieldRules(): { schema: JSONSchemaProps; spec: Record<string, unknown> } {
  const props: Record<string, JSONSchemaProps> = {};
  const spec: Record<string, unknown> = {};
  for (let i = 0; i < 16; i++) {
    props[`f${i}`] = i % 2 ? { type: 'string', maxLength: 64 } : { type: 'integer' };
    spec[`f${i}`] = i % 2 ? `value-${i}` : i;
  }
  Object.assign(props, {
    minReplicas: { type: 'integer' },
    maxReplicas: { type: 'integer' },
    image: { type: 'string', maxLength: 256 },
    mode: { type: 'string', maxLength: 16 },
  });
  Object.assign(spec, { minReplicas: 1, maxReplicas: 5, image: 'registry/app:v1', mode: 'fast' });
  const schema: JSONSchemaProps = {
    type: 'object',
    properties: {
      spec: {
        type: 'object',
        properties: props,
        'x-kubernetes-validations': [{ rule: 'self.minReplicas <= self.maxReplicas' }, { rule: 'self.image.contains(":") && self.mode in ["fast", "slow"]' }],
      },
    },
  };
  return { schema, spec };
}
