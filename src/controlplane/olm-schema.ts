// The install flow's CRD upgrade check (OLM's validateExistingCRs): a stored custom resource
// validated against a new CRD version's openAPIV3Schema with the apiextensions validator.
import { issueString } from '../apimachinery/errors.js';
import { newStructural, validateObject, type JSONSchemaProps } from '../apiextensions/schema/index.js';

/** The problems of `object` under `openAPIV3Schema`, as text; a schema that does not convert is no problem of the object. */
export function crdSchemaValidator(object: unknown, openAPIV3Schema: unknown): string[] {
  let structural;
  try {
    structural = newStructural(openAPIV3Schema as JSONSchemaProps);
  } catch {
    return [];
  }
  return validateObject(object, structural).map(issueString);
}
