// Server-side apply as a library: field sets and their FieldsV1 encoding, typed field sets from
// OpenAPI schemas, and the apply/update entry points the registry calls on every write.
export {
  FieldSet,
  FieldsV1Error,
  makePath,
  fieldElement,
  keyElement,
  valueElement,
  indexElement,
  pathToString,
  pathElementToString,
  comparePathElements,
  parseFieldsV1Key,
} from './fieldpath.js';
export type { FieldPath, PathElement, PathPart, DecodedPathElement } from './fieldpath.js';
export { toFieldSet, validateListUniqueness, validateTyped, fieldSetOf, TypedError, listItemElement } from './typed.js';
export type { TypedIssue, ValidateOptions } from './typed.js';
export { typeOf, DEDUCED, UNTYPED, listRelationship } from './atoms.js';
export type { Atom, ListAtom, MapAtom, TypeRef } from './atoms.js';
export { compareTyped } from './compare.js';
export type { Comparison } from './compare.js';
export { conflictError, conflictMessage, printManager, ApplyConflicts } from './conflict.js';
export type { Conflict } from './conflict.js';
export { decodeManagedFields, encodeManagedFields, managerIdentifier, ManagedFieldsError, isResetManagedFields } from './managed-fields.js';
export type { Managed, VersionedSet } from './managed-fields.js';
export {
  apply,
  update,
  LAST_APPLIED_ANNOTATION,
  KUBECTL_APPLY_MANAGER,
  KUBECTL_CLIENT_SIDE_APPLY_MANAGER,
  BEFORE_FIRST_APPLY_MANAGER,
  MAX_UPDATE_MANAGERS,
} from './merge.js';
export type { ApplyOptions, ApplyResult, UpdateOptions } from './merge.js';
export { upgradeClientSideApplyManagedFields } from './csa-upgrade.js';
