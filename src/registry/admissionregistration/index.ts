// admissionregistration.k8s.io/v1 ValidatingWebhookConfiguration and MutatingWebhookConfiguration
// (pkg/registry/admissionregistration/{validating,mutating}webhookconfiguration): cluster-scoped,
// validated and defaulted as upstream; the generation follows changes of `webhooks`.
import { ALL_VERBS, type ResourceDescriptor } from '../../apimachinery/resource.js';
import { isDeepStrictEqual } from 'node:util';
import type { KubeObject } from '../../apimachinery/types.js';
import type { ResourceRegistration } from '../registry.js';
import type { Strategy } from '../strategy.js';
import { ageColumn, ageSince, nameColumn } from '../table.js';
import { bindingTable, policyTable } from './policy-tables.js';
import { admissionRegistrationDefinitions, validatingAdmissionPolicyDefinitions } from './definitions.js';
import { mergeDefinitions } from '../../apimachinery/definitions/util.js';
import { defaultBinding, defaultPolicy, validateBinding, validatePolicy } from './policy-validation.js';
import { CREATE_OPTIONS, defaultWebhooks, updateOptions, validateWebhookConfiguration } from './validation.js';
import { deepCopyJSON } from '../../apimachinery/deepcopy.js';

const GROUP = 'admissionregistration.k8s.io';

function descriptor(kind: string, plural: string): ResourceDescriptor {
  return {
    group: GROUP,
    version: 'v1',
    kind,
    listKind: `${kind}List`,
    plural,
    singular: plural.slice(0, -1),
    shortNames: [],
    categories: ['api-extensions'],
    namespaced: false,
    verbs: ALL_VERBS,
    subresources: [],
    definitionName: `io.k8s.api.admissionregistration.v1.${kind}`,
  };
}

function strategy(mutating: boolean): Strategy {
  return {
    namespaced: false,
    allowCreateOnUpdate: false,
    allowUnconditionalUpdate: true,
    // The store applies `defaults` just before prepareForCreate/prepareForUpdate.
    defaults: (o) => defaultWebhooks(o, mutating),
    prepareForCreate(o) {
      o.metadata ??= {};
      o.metadata.generation = 1;
    },
    prepareForUpdate(o, old) {
      o.metadata ??= {};
      const gen = old.metadata?.generation ?? 1;
      o.metadata.generation = isDeepStrictEqual(o.webhooks, old.webhooks) ? gen : gen + 1;
    },
    validate: (o) => validateWebhookConfiguration(o, mutating, CREATE_OPTIONS),
    validateUpdate: (o, old) => validateWebhookConfiguration(o, mutating, updateOptions(old)),
    // printers.go: {Validating,Mutating}WebhookConfiguration column definitions.
    tableColumns: [
      nameColumn,
      { name: 'Webhooks', type: 'integer', description: 'Webhooks indicates the number of webhooks in the configuration', priority: 0 },
      ageColumn,
    ],
    tableCells: (o: KubeObject) => [o.metadata?.name ?? '', Array.isArray(o.webhooks) ? o.webhooks.length : 0, ageSince(o.metadata?.creationTimestamp)],
  };
}

export const validatingWebhookConfigurationsResource = descriptor('ValidatingWebhookConfiguration', 'validatingwebhookconfigurations');
export const mutatingWebhookConfigurationsResource = descriptor('MutatingWebhookConfiguration', 'mutatingwebhookconfigurations');

export const validatingWebhookConfigurations: ResourceRegistration = {
  descriptor: validatingWebhookConfigurationsResource,
  strategy: strategy(false),
  definitions: admissionRegistrationDefinitions,
};

export const mutatingWebhookConfigurations: ResourceRegistration = {
  descriptor: mutatingWebhookConfigurationsResource,
  strategy: strategy(true),
  definitions: admissionRegistrationDefinitions,
};

// ---------- ValidatingAdmissionPolicy (with /status) and ValidatingAdmissionPolicyBinding ----------
// pkg/registry/admissionregistration/validatingadmissionpolicy{,binding}: the spec is written through
// the object, the status (type checking) through /status only; the generation follows the spec.

const policyDefinitions = mergeDefinitions(admissionRegistrationDefinitions, validatingAdmissionPolicyDefinitions);

function keepStored(o: KubeObject, old: KubeObject, field: 'spec' | 'status'): void {
  const stored = old[field];
  if (stored !== undefined) o[field] = deepCopyJSON(stored);
  else delete o[field];
}

export const validatingAdmissionPoliciesResource: ResourceDescriptor = {
  ...descriptor('ValidatingAdmissionPolicy', 'validatingadmissionpolicies'),
  singular: 'validatingadmissionpolicy',
  subresources: [{ name: 'status', kind: 'ValidatingAdmissionPolicy', verbs: ['get', 'patch', 'update'] }],
};

export const validatingAdmissionPolicyBindingsResource: ResourceDescriptor = descriptor(
  'ValidatingAdmissionPolicyBinding',
  'validatingadmissionpolicybindings',
);

export const validatingAdmissionPolicies: ResourceRegistration = {
  descriptor: validatingAdmissionPoliciesResource,
  definitions: policyDefinitions,
  strategy: {
    namespaced: false,
    allowCreateOnUpdate: false,
    allowUnconditionalUpdate: true,
    defaults: (o) => defaultPolicy(o),
    prepareForCreate(o) {
      o.metadata ??= {};
      o.metadata.generation = 1;
      delete o.status;
    },
    prepareForUpdate(o, old) {
      o.metadata ??= {};
      const gen = old.metadata?.generation ?? 1;
      o.metadata.generation = isDeepStrictEqual(o.spec, old.spec) ? gen : gen + 1;
      keepStored(o, old, 'status');
    },
    validate: (o) => validatePolicy(o),
    validateUpdate: (o) => validatePolicy(o),
    resetFields: { '': [['status']], status: [['spec']] },
    subresources: {
      status: {
        merge: (incoming) => incoming,
        prepareForUpdate(o, old) {
          keepStored(o, old, 'spec');
          o.metadata ??= {};
          o.metadata.generation = old.metadata?.generation ?? 1;
        },
        validateUpdate: () => [],
      },
    },
    // printers.go: validatingAdmissionPolicy column definitions.
    ...policyTable('validations', 'Validations', 'Validations indicates the number of validation rules defined in this configuration'),
  },
};

export const validatingAdmissionPolicyBindings: ResourceRegistration = {
  descriptor: validatingAdmissionPolicyBindingsResource,
  definitions: policyDefinitions,
  strategy: {
    namespaced: false,
    allowCreateOnUpdate: false,
    allowUnconditionalUpdate: true,
    defaults: (o) => defaultBinding(o),
    prepareForCreate(o) {
      o.metadata ??= {};
      o.metadata.generation = 1;
    },
    prepareForUpdate(o, old) {
      o.metadata ??= {};
      const gen = old.metadata?.generation ?? 1;
      o.metadata.generation = isDeepStrictEqual(o.spec, old.spec) ? gen : gen + 1;
    },
    validate: (o) => validateBinding(o),
    validateUpdate: (o) => validateBinding(o),
    // printers.go: validatingAdmissionPolicyBinding column definitions.
    ...bindingTable,
  },
};
