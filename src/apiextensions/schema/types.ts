// Shapes of CRD schemas: the wire form (apiextensions.k8s.io/v1 JSONSchemaProps) and the
// structural form the server works with (k8s.io/apiextensions-apiserver/pkg/apiserver/schema).
// Kept apart from the algorithms so every file of the package can import them without cycles.
import type { JsonValue } from '../../apimachinery/types.js';

/** One `x-kubernetes-validations` entry. CEL is evaluated elsewhere; here it is only carried and shape-checked. */
export interface ValidationRule {
  rule: string;
  message?: string;
  messageExpression?: string;
  reason?: string;
  fieldPath?: string;
  optionalOldSelf?: boolean;
}

/**
 * apiextensions.k8s.io/v1 JSONSchemaProps as it arrives in `openAPIV3Schema`. Fields that
 * CRDs reject (id, $ref, patternProperties, ...) are listed so that validation can name them.
 */
export interface JSONSchemaProps extends ValueBounds {
  id?: string;
  $schema?: string;
  $ref?: string;
  description?: string;
  type?: string;
  format?: string;
  title?: string;
  default?: JsonValue;
  /** A schema; an array of schemas is forbidden for CRDs but representable so it can be reported. */
  items?: JSONSchemaProps | JSONSchemaProps[];
  allOf?: JSONSchemaProps[];
  oneOf?: JSONSchemaProps[];
  anyOf?: JSONSchemaProps[];
  not?: JSONSchemaProps;
  properties?: Record<string, JSONSchemaProps>;
  additionalProperties?: JSONSchemaProps | boolean;
  patternProperties?: Record<string, JSONSchemaProps>;
  dependencies?: Record<string, JSONSchemaProps | string[]>;
  additionalItems?: JSONSchemaProps | boolean;
  definitions?: Record<string, JSONSchemaProps>;
  externalDocs?: { description?: string; url?: string };
  example?: JsonValue;
  nullable?: boolean;
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  'x-kubernetes-embedded-resource'?: boolean;
  'x-kubernetes-int-or-string'?: boolean;
  'x-kubernetes-list-map-keys'?: string[];
  'x-kubernetes-list-type'?: string;
  'x-kubernetes-map-type'?: string;
  'x-kubernetes-validations'?: ValidationRule[];
}

/** Value bounds shared by JSONSchemaProps and the structural ValueValidation. */
export interface ValueBounds {
  maximum?: number;
  exclusiveMaximum?: boolean;
  minimum?: number;
  exclusiveMinimum?: boolean;
  maxLength?: number;
  minLength?: number;
  pattern?: string;
  maxItems?: number;
  minItems?: number;
  uniqueItems?: boolean;
  multipleOf?: number;
  enum?: JsonValue[];
  maxProperties?: number;
  minProperties?: number;
  required?: string[];
}

/** Schema fields that only constrain values, never the shape (upstream ValueValidation). */
export interface ValueValidation extends ValueBounds {
  format?: string;
  allOf?: NestedValueValidation[];
  oneOf?: NestedValueValidation[];
  anyOf?: NestedValueValidation[];
  not?: NestedValueValidation;
}

/** Fields that shape a schema node (upstream Generic); forbidden under allOf/anyOf/oneOf/not. */
export interface Generic {
  type: string;
  description: string;
  title: string;
  /** The default value; `undefined` when there is none (a JSON `null` default counts as none, as upstream). */
  default?: JsonValue;
  nullable: boolean;
  externalDocs?: { description?: string; url?: string };
  example?: JsonValue;
}

/** Kubernetes vendor extensions (upstream Extensions). */
export interface Extensions {
  xPreserveUnknownFields: boolean;
  xEmbeddedResource: boolean;
  xIntOrString: boolean;
  xListMapKeys?: string[];
  xListType?: string;
  xMapType?: string;
}

/** A value validation under a logical junctor, with whatever else was written there kept for reporting. */
export interface NestedValueValidation extends ValueValidation {
  items?: NestedValueValidation;
  properties?: Map<string, NestedValueValidation>;
  additionalProperties?: NestedValueValidation;
  xValidations?: ValidationRule[];
  forbiddenGenerics: Generic;
  forbiddenExtensions: Extensions;
}

/** additionalProperties of a structural schema: a schema, or just allowed/disallowed. */
export interface StructuralOrBool {
  structural?: Structural;
  bool: boolean;
}

/**
 * A structural schema node. Properties are a Map because pruning, defaulting and validation look
 * keys up per object field on the hot path of every custom resource write.
 */
export interface Structural extends Generic, Extensions {
  items?: Structural;
  properties?: Map<string, Structural>;
  additionalProperties?: StructuralOrBool;
  xValidations?: ValidationRule[];
  valueValidation?: ValueValidation;
}
