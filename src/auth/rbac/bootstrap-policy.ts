// The default roles and bindings (plugin/pkg/auth/authorizer/rbac/bootstrappolicy/policy.go and
// controller_policy.go), as far as kplane serves the resources or runs the controllers they are
// for. Each carries upstream's label and autoupdate annotation; reconcile.ts writes them at start.
import type { ClusterRole, ClusterRoleBinding, PolicyRule, Subject } from './types.js';
import { RBAC_GROUP } from './types.js';

/** user.KubeControllerManager: kube-controller-manager's own user (without service-account credentials). */
export const KUBE_CONTROLLER_MANAGER_USER = 'system:kube-controller-manager';
export const AUTO_UPDATE_ANNOTATION = 'rbac.authorization.kubernetes.io/autoupdate';
const BOOTSTRAP_LABEL = { 'kubernetes.io/bootstrapping': 'rbac-defaults' };

const READ = ['get', 'list', 'watch'];
const WRITE = ['create', 'delete', 'deletecollection', 'patch', 'update'];
const READ_WRITE = ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete', 'deletecollection'];

const rule = (verbs: string[], groups: string[], resources: string[], names?: string[]): PolicyRule => ({
  apiGroups: groups,
  resources,
  verbs,
  ...(names ? { resourceNames: names } : {}),
});
const urls = (verbs: string[], paths: string[]): PolicyRule => ({ nonResourceURLs: paths, verbs });

function clusterRole(name: string, rules: PolicyRule[] | undefined, extra: { labels?: Record<string, string>; aggregateLabel?: string } = {}): ClusterRole {
  return {
    apiVersion: `${RBAC_GROUP}/v1`,
    kind: 'ClusterRole',
    metadata: {
      name,
      labels: { ...BOOTSTRAP_LABEL, ...extra.labels },
      annotations: { [AUTO_UPDATE_ANNOTATION]: 'true' },
    },
    ...(extra.aggregateLabel ? { aggregationRule: { clusterRoleSelectors: [{ matchLabels: { [extra.aggregateLabel]: 'true' } }] } } : {}),
    ...(rules ? { rules } : {}),
  };
}

function clusterRoleBinding(name: string, role: string, subjects: Subject[]): ClusterRoleBinding {
  return {
    apiVersion: `${RBAC_GROUP}/v1`,
    kind: 'ClusterRoleBinding',
    metadata: { name, labels: { ...BOOTSTRAP_LABEL }, annotations: { [AUTO_UPDATE_ANNOTATION]: 'true' } },
    roleRef: { apiGroup: RBAC_GROUP, kind: 'ClusterRole', name: role },
    subjects,
  };
}

const group = (name: string): Subject => ({ kind: 'Group', apiGroup: RBAC_GROUP, name });
const user = (name: string): Subject => ({ kind: 'User', apiGroup: RBAC_GROUP, name });
const serviceAccount = (namespace: string, name: string): Subject => ({ kind: 'ServiceAccount', name, namespace });

const FEATURES_GROUP = 'features.kplane.io';
/** What a component needs to announce its features and report its uses (KEP-0007). */
export const FEATURE_REPORTER = 'system:kplane:feature-reporter';

const AGG_ADMIN = 'rbac.authorization.k8s.io/aggregate-to-admin';
const AGG_EDIT = 'rbac.authorization.k8s.io/aggregate-to-edit';
const AGG_VIEW = 'rbac.authorization.k8s.io/aggregate-to-view';

/**
 * controller_policy.go's roles for the controllers kplane runs (system:controller:<name>), in
 * upstream's order; each is bound to the ServiceAccount kube-system/<name> that controller acts as
 * with service-account credentials (src/controllers: ControllerFactory.serviceAccountName).
 */
const CONTROLLER_ROLES: { name: string; rules: PolicyRule[] }[] = [
  {
    name: 'clusterrole-aggregation-controller',
    rules: [rule(['escalate', 'get', 'list', 'watch', 'update', 'patch'], [RBAC_GROUP], ['clusterroles'])],
  },
  {
    // The cloud module's Endpoints controller (src/controllers/endpoints).
    name: 'endpoint-controller',
    rules: [
      rule(['get', 'list', 'watch'], [''], ['services', 'pods']),
      rule(['get', 'list', 'create', 'update', 'delete'], [''], ['endpoints']),
      rule(['create'], [''], ['endpoints/restricted']),
      eventsRule(),
    ],
  },
  {
    // The cloud module's EndpointSlice controller (src/controllers/endpointslice).
    name: 'endpointslice-controller',
    rules: [
      rule(['get', 'list', 'watch'], [''], ['services', 'pods', 'nodes']),
      rule(['update'], [''], ['services/finalizers']),
      rule(['get', 'list', 'create', 'update', 'delete'], ['discovery.k8s.io'], ['endpointslices']),
      eventsRule(),
    ],
  },
  {
    name: 'generic-garbage-collector',
    rules: [rule(['get', 'list', 'watch', 'patch', 'update', 'delete'], ['*'], ['*']), eventsRule()],
  },
  {
    name: 'namespace-controller',
    rules: [
      rule(['get', 'list', 'watch', 'delete'], [''], ['namespaces']),
      rule(['update'], [''], ['namespaces/finalize', 'namespaces/status']),
      rule(['get', 'list', 'delete', 'deletecollection'], ['*'], ['*']),
      eventsRule(),
    ],
  },
  {
    // Upstream's rules, and `get` on resourcequotas: kplane's controller reads the quota it syncs
    // from the API (its resourceVersion guards the status update) rather than from a lister.
    name: 'resourcequota-controller',
    rules: [rule(['list', 'watch'], ['*'], ['*']), rule(['get'], [''], ['resourcequotas']), rule(['update'], [''], ['resourcequotas/status']), eventsRule()],
  },
  {
    name: 'service-account-controller',
    rules: [rule(['create'], [''], ['serviceaccounts']), eventsRule()],
  },
  {
    name: 'root-ca-cert-publisher',
    rules: [rule(['create', 'update'], [''], ['configmaps']), eventsRule()],
  },
];

function eventsRule(): PolicyRule {
  return rule(['create', 'update', 'patch'], ['', 'events.k8s.io'], ['events']);
}

/** The bootstrap ClusterRoles, upstream's order. */
export function bootstrapClusterRoles(): ClusterRole[] {
  return [
    clusterRole('cluster-admin', [rule(['*'], ['*'], ['*']), urls(['*'], ['*'])]),
    clusterRole('system:discovery', [
      urls(['get'], ['/api', '/api/*', '/apis', '/apis/*', '/healthz', '/livez', '/openapi', '/openapi/*', '/readyz', '/version', '/version/']),
    ]),
    clusterRole('system:monitoring', [urls(['get'], ['/healthz', '/healthz/*', '/livez', '/livez/*', '/metrics', '/metrics/slis', '/readyz', '/readyz/*'])]),
    clusterRole('system:basic-user', [
      rule(['create'], ['authorization.k8s.io'], ['selfsubjectaccessreviews', 'selfsubjectrulesreviews']),
      // SelfSubjectReview (`kubectl auth whoami`), as upstream's policy since it reached beta.
      rule(['create'], ['authentication.k8s.io'], ['selfsubjectreviews']),
    ]),
    clusterRole('system:public-info-viewer', [urls(['get'], ['/healthz', '/livez', '/readyz', '/version', '/version/'])]),
    clusterRole('admin', undefined, { aggregateLabel: AGG_ADMIN }),
    clusterRole('edit', undefined, { labels: { [AGG_ADMIN]: 'true' }, aggregateLabel: AGG_EDIT }),
    clusterRole('view', undefined, { labels: { [AGG_EDIT]: 'true' }, aggregateLabel: AGG_VIEW }),
    clusterRole(
      'system:aggregate-to-admin',
      [rule(['create'], ['authorization.k8s.io'], ['localsubjectaccessreviews']), rule(READ_WRITE, [RBAC_GROUP], ['rolebindings', 'roles'])],
      { labels: { [AGG_ADMIN]: 'true' } },
    ),
    clusterRole(
      'system:aggregate-to-edit',
      [
        rule(READ, [''], ['pods/attach', 'pods/exec', 'pods/portforward', 'pods/proxy', 'secrets', 'services/proxy']),
        rule(['impersonate'], [''], ['serviceaccounts']),
        rule(WRITE, [''], ['pods', 'pods/attach', 'pods/exec', 'pods/portforward', 'pods/proxy']),
        rule(['create'], [''], ['pods/eviction']),
        rule(
          WRITE,
          [''],
          [
            'configmaps',
            'endpoints',
            'persistentvolumeclaims',
            'replicationcontrollers',
            'replicationcontrollers/scale',
            'secrets',
            'serviceaccounts',
            'services',
            'services/proxy',
          ],
        ),
        rule(['create'], [''], ['serviceaccounts/token']),
        rule(
          WRITE,
          ['apps'],
          ['daemonsets', 'deployments', 'deployments/rollback', 'deployments/scale', 'replicasets', 'replicasets/scale', 'statefulsets', 'statefulsets/scale'],
        ),
        rule(WRITE, ['autoscaling'], ['horizontalpodautoscalers']),
        rule(WRITE, ['batch'], ['cronjobs', 'jobs']),
        rule(
          WRITE,
          ['extensions'],
          [
            'daemonsets',
            'deployments',
            'deployments/rollback',
            'deployments/scale',
            'ingresses',
            'networkpolicies',
            'replicasets',
            'replicasets/scale',
            'replicationcontrollers/scale',
          ],
        ),
        rule(WRITE, ['policy'], ['poddisruptionbudgets']),
        rule(WRITE, ['networking.k8s.io'], ['ingresses', 'networkpolicies']),
        rule(WRITE, ['coordination.k8s.io'], ['leases']),
      ],
      { labels: { [AGG_EDIT]: 'true' } },
    ),
    clusterRole(
      'system:aggregate-to-view',
      [
        rule(
          READ,
          [''],
          [
            'configmaps',
            'endpoints',
            'persistentvolumeclaims',
            'persistentvolumeclaims/status',
            'pods',
            'replicationcontrollers',
            'replicationcontrollers/scale',
            'serviceaccounts',
            'services',
            'services/status',
          ],
        ),
        rule(
          READ,
          [''],
          [
            'bindings',
            'events',
            'limitranges',
            'namespaces/status',
            'pods/log',
            'pods/status',
            'replicationcontrollers/status',
            'resourcequotas',
            'resourcequotas/status',
          ],
        ),
        rule(READ, [''], ['namespaces']),
        rule(READ, ['discovery.k8s.io'], ['endpointslices']),
        rule(
          READ,
          ['apps'],
          [
            'controllerrevisions',
            'daemonsets',
            'daemonsets/status',
            'deployments',
            'deployments/scale',
            'deployments/status',
            'replicasets',
            'replicasets/scale',
            'replicasets/status',
            'statefulsets',
            'statefulsets/scale',
            'statefulsets/status',
          ],
        ),
        rule(READ, ['autoscaling'], ['horizontalpodautoscalers', 'horizontalpodautoscalers/status']),
        rule(READ, ['batch'], ['cronjobs', 'cronjobs/status', 'jobs', 'jobs/status']),
        rule(
          READ,
          ['extensions'],
          [
            'daemonsets',
            'daemonsets/status',
            'deployments',
            'deployments/scale',
            'deployments/status',
            'ingresses',
            'ingresses/status',
            'networkpolicies',
            'replicasets',
            'replicasets/scale',
            'replicasets/status',
            'replicationcontrollers/scale',
          ],
        ),
        rule(READ, ['policy'], ['poddisruptionbudgets', 'poddisruptionbudgets/status']),
        rule(READ, ['networking.k8s.io'], ['ingresses', 'ingresses/status', 'networkpolicies']),
        rule(READ, ['coordination.k8s.io'], ['leases']),
        rule(READ, ['events.k8s.io'], ['events']),
      ],
      { labels: { [AGG_VIEW]: 'true' } },
    ),
    // kplane's Feature API (KEP-0007): readers see features through view; an admin of a class
    // (namespace) may create and remove its Feature objects, but not update them: `update` is what
    // sets spec.desired, which turns a dynamic feature for the whole cluster, so only cluster-admin
    // has it by default. Components report their uses with the reporter role.
    clusterRole('system:kplane:aggregate-features-to-view', [rule(READ, [FEATURES_GROUP], ['features', 'features/status'])], {
      labels: { [AGG_VIEW]: 'true' },
    }),
    clusterRole('system:kplane:aggregate-features-to-admin', [rule(['create', 'delete', 'deletecollection'], [FEATURES_GROUP], ['features'])], {
      labels: { [AGG_ADMIN]: 'true' },
    }),
    clusterRole(FEATURE_REPORTER, [
      rule(['get', 'list', 'watch', 'create'], [FEATURES_GROUP], ['features']),
      rule(['create', 'update'], [FEATURES_GROUP], ['features/uses']),
    ]),
    clusterRole('system:auth-delegator', [
      rule(['create'], ['authentication.k8s.io'], ['tokenreviews']),
      rule(['create'], ['authorization.k8s.io'], ['subjectaccessreviews']),
    ]),
    clusterRole('system:kube-controller-manager', [
      eventsRule(),
      // Needed for leader election. kplane's controllers campaign for the Lease
      // kplane-controller-manager (CONTROLLER_LEASE), so that name is added to upstream's.
      rule(['create'], ['coordination.k8s.io'], ['leases']),
      rule(['get', 'update'], ['coordination.k8s.io'], ['leases'], ['kube-controller-manager', 'kplane-controller-manager']),
      rule(['create'], [''], ['endpoints']),
      rule(['get', 'update'], [''], ['endpoints'], ['kube-controller-manager']),
      // Fundamental resources.
      rule(['create'], [''], ['secrets', 'serviceaccounts']),
      rule(['delete'], [''], ['secrets']),
      rule(['get'], [''], ['namespaces', 'secrets', 'serviceaccounts', 'configmaps']),
      rule(['update'], [''], ['secrets', 'serviceaccounts']),
      // Needed to check API access. These creates are non-mutating.
      rule(['create'], ['authentication.k8s.io'], ['tokenreviews']),
      rule(['create'], ['authorization.k8s.io'], ['subjectaccessreviews']),
      // Needed for all shared informers.
      rule(['list', 'watch'], ['*'], ['*']),
      rule(['create'], [''], ['serviceaccounts/token']),
    ]),
    ...CONTROLLER_ROLES.map((r) => clusterRole(`system:controller:${r.name}`, r.rules)),
  ];
}

/** The bootstrap ClusterRoleBindings. */
export function bootstrapClusterRoleBindings(): ClusterRoleBinding[] {
  return [
    clusterRoleBinding('cluster-admin', 'cluster-admin', [group('system:masters')]),
    clusterRoleBinding('system:monitoring', 'system:monitoring', [group('system:monitoring')]),
    clusterRoleBinding('system:discovery', 'system:discovery', [group('system:authenticated')]),
    clusterRoleBinding('system:basic-user', 'system:basic-user', [group('system:authenticated')]),
    // The controller-manager reports the gates it reads; a third party binds its own ServiceAccount.
    clusterRoleBinding(FEATURE_REPORTER, FEATURE_REPORTER, [user(KUBE_CONTROLLER_MANAGER_USER)]),
    clusterRoleBinding('system:public-info-viewer', 'system:public-info-viewer', [group('system:authenticated'), group('system:unauthenticated')]),
    clusterRoleBinding('system:kube-controller-manager', 'system:kube-controller-manager', [user(KUBE_CONTROLLER_MANAGER_USER)]),
    ...CONTROLLER_ROLES.map((r) => clusterRoleBinding(`system:controller:${r.name}`, `system:controller:${r.name}`, [serviceAccount('kube-system', r.name)])),
  ];
}
