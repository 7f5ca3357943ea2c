import type { Strategy } from '../../strategy.js';
import { ageColumn, ageSince, nameColumn } from '../../table.js';

/** v1.ServiceAccount{}.SwaggerDoc()["secrets"]. */
const SECRETS_DESCRIPTION =
  'Secrets is a list of the secrets in the same namespace that pods running using this ServiceAccount are allowed to use. Pods are only limited to this list if this service account has a "kubernetes.io/enforce-mountable-secrets" annotation set to "true". The "kubernetes.io/enforce-mountable-secrets" annotation is deprecated since v1.32. Prefer separate namespaces to isolate access to mounted secrets. This field should not be used to find auto-generated service account token secrets for use outside of pods. Instead, tokens can be requested directly using the TokenRequest API, or service account token secrets can be manually created. More info: https://kubernetes.io/docs/concepts/configuration/secret';

export const serviceAccountStrategy: Strategy = {
  // ValidateServiceAccount goes through core's ValidateObjectMeta wrapper.
  finalizerNames: 'kube',
  namespaced: true,
  allowCreateOnUpdate: false,
  allowUnconditionalUpdate: true,
  prepareForCreate() {},
  prepareForUpdate() {},
  validate: () => [],
  validateUpdate: () => [],
  // printers.go: serviceAccountColumnDefinitions / printServiceAccount (SECRETS is len(secrets)).
  tableColumns: [nameColumn, { name: 'Secrets', type: 'string', description: SECRETS_DESCRIPTION, priority: 0 }, ageColumn],
  tableCells: (o) => [o.metadata?.name ?? '', Array.isArray(o.secrets) ? o.secrets.length : 0, ageSince(o.metadata?.creationTimestamp)],
};
