// authorization.k8s.io/v1: the four access reviews, create-only and never stored.
import type { ResourceDescriptor } from '../../apimachinery/resource.js';
import type { ControlPlaneAuthorization, ResourceRegistration } from '../registry.js';
import type { Strategy } from '../strategy.js';
import { authorizationDefinitions } from './definitions.js';
import { localSubjectAccessReview, selfSubjectAccessReview, selfSubjectRulesReview, subjectAccessReview } from './reviews.js';

const strategy = (namespaced: boolean): Strategy => ({
  namespaced,
  allowCreateOnUpdate: false,
  allowUnconditionalUpdate: false,
  prepareForCreate() {},
  prepareForUpdate() {},
  validate: () => [],
  validateUpdate: () => [],
});

function descriptor(kind: string, namespaced: boolean): ResourceDescriptor {
  const plural = `${kind.toLowerCase()}s`;
  return {
    group: 'authorization.k8s.io',
    version: 'v1',
    kind,
    listKind: `${kind}List`,
    plural,
    singular: kind.toLowerCase(),
    shortNames: [],
    categories: [],
    namespaced,
    verbs: ['create'],
    subresources: [],
    definitionName: `io.k8s.api.authorization.v1.${kind}`,
  };
}

/** The reviews, answered with `authz()` (the control plane's authorizer and rule resolver). */
export function accessReviews(authz: () => ControlPlaneAuthorization): ResourceRegistration[] {
  const reg = (kind: string, namespaced: boolean, review: ResourceRegistration['review']): ResourceRegistration => ({
    descriptor: descriptor(kind, namespaced),
    strategy: strategy(namespaced),
    definitions: authorizationDefinitions,
    keyPrefix: `/registry/authorization.k8s.io/${kind.toLowerCase()}s/`,
    // The list message is named for registration only: a review has no list (nothing is stored).
    protobuf: { kind: `k8s.io.api.authorization.v1.${kind}`, list: `k8s.io.api.authorization.v1.${kind}` },
    ...(review ? { review } : {}),
  });
  return [
    reg('LocalSubjectAccessReview', true, localSubjectAccessReview(authz)),
    reg('SelfSubjectAccessReview', false, selfSubjectAccessReview(authz)),
    reg('SelfSubjectRulesReview', false, selfSubjectRulesReview(authz)),
    reg('SubjectAccessReview', false, subjectAccessReview(authz)),
  ];
}
