// io.k8s.api.core.v1.Pod: the subset of upstream's generated OpenAPI a node simulator uses (kwok's
// view of a pod); containers keep the fields kplane does not model (resources, probes, env, ...).
// Descriptions are our own.
import type { Definitions, OpenAPISchema } from '../../../apimachinery/schema.js';
import { refTo } from '../../../apimachinery/schema.js';
import {
  CORE,
  META,
  apiVersionField,
  arrayOf,
  bool,
  int32,
  int64,
  kind,
  kindField,
  listKind,
  objectMetaField,
  ref,
  str,
  stringMap,
  struct,
} from '../../../apimachinery/definitions/util.js';

const V1 = { group: '', version: 'v1' };
const mapBy = (key: string): Partial<OpenAPISchema> => ({
  'x-kubernetes-list-map-keys': [key],
  'x-kubernetes-list-type': 'map',
  'x-kubernetes-patch-merge-key': key,
  'x-kubernetes-patch-strategy': 'merge',
});
const atomic = { 'x-kubernetes-list-type': 'atomic' } as const;

export const podDefinitions: Definitions = {
  [CORE + 'Pod']: kind({ group: '', kind: 'Pod', version: 'v1' }, 'Pod is a collection of containers that can run on a host.', {
    apiVersion: apiVersionField,
    kind: kindField,
    metadata: objectMetaField(),
    spec: ref(CORE + 'PodSpec', 'The desired behavior of the pod.'),
    status: ref(CORE + 'PodStatus', 'The most recently observed status of the pod, written by the node running it.'),
  }),
  [CORE + 'PodSpec']: struct(
    'PodSpec is a description of a pod (the subset kplane models; see the cloud module docs).',
    {
      activeDeadlineSeconds: int64('Seconds the pod may be active on a node before it is failed.'),
      containers: arrayOf(refTo(CORE + 'Container'), 'The containers of the pod (at least one).', mapBy('name')),
      dnsPolicy: str('ClusterFirst (default), ClusterFirstWithHostNet, Default or None.'),
      enableServiceLinks: bool('Whether service environment variables are injected (default true).'),
      hostname: str("The pod's hostname; defaults to its name."),
      initContainers: arrayOf(refTo(CORE + 'Container'), 'Containers run to completion before the others start.', mapBy('name')),
      nodeName: str('The node the pod is bound to; set by the scheduler.'),
      nodeSelector: stringMap('Labels a node must have for the pod to be scheduled there.'),
      preemptionPolicy: str('Never or PreemptLowerPriority (default).'),
      priority: int32('The priority of the pod.'),
      priorityClassName: str("The pod's priority class."),
      readinessGates: arrayOf(refTo(CORE + 'PodReadinessGate'), 'Extra conditions the pod must meet to be ready.', atomic),
      restartPolicy: str('Always (default), OnFailure or Never.'),
      schedulerName: str('The scheduler that places the pod (default-scheduler).'),
      securityContext: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true, description: 'Pod-level security attributes.' },
      serviceAccountName: str('The service account the pod runs as.'),
      subdomain: str("With hostname, the pod's FQDN <hostname>.<subdomain>.<namespace>.svc."),
      terminationGracePeriodSeconds: int64('Seconds the pod has to stop gracefully when deleted (default 30).'),
      tolerations: arrayOf(refTo(CORE + 'Toleration'), 'Taints the pod tolerates.', atomic),
    },
    { required: ['containers'] },
  ),
  [CORE + 'Container']: struct(
    'A single application container (name, image and ports modelled; other fields kept as given).',
    {
      image: str('The container image.'),
      name: str('The name of the container (a DNS_LABEL, unique in the pod).'),
      ports: arrayOf(refTo(CORE + 'ContainerPort'), 'Ports exposed by the container.', {
        'x-kubernetes-list-map-keys': ['containerPort', 'protocol'],
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-patch-merge-key': 'containerPort',
        'x-kubernetes-patch-strategy': 'merge',
      }),
    },
    { required: ['name'], 'x-kubernetes-preserve-unknown-fields': true },
  ),
  [CORE + 'ContainerPort']: struct(
    'ContainerPort represents a network port in a single container.',
    {
      containerPort: int32("The port number on the pod's IP address."),
      hostIP: str('The host IP to bind the external port to.'),
      hostPort: int32('The port number on the host.'),
      name: str('An IANA_SVC_NAME, unique in the pod; services refer to it.'),
      protocol: str('TCP (default), UDP or SCTP.'),
    },
    { required: ['containerPort'] },
  ),
  [CORE + 'Toleration']: struct('The pod this Toleration is attached to tolerates any taint that matches the triple <key,value,effect>.', {
    effect: str('The taint effect to match; empty matches all.'),
    key: str('The taint key; empty with operator Exists matches all.'),
    operator: str('Exists or Equal (default).'),
    tolerationSeconds: int64('For NoExecute: how long the pod stays bound after the taint appears.'),
    value: str('The taint value to match.'),
  }),
  [CORE + 'PodReadinessGate']: struct(
    'PodReadinessGate contains the reference to a pod condition',
    { conditionType: str('A condition type of the pod.') },
    { required: ['conditionType'] },
  ),
  [CORE + 'PodStatus']: struct('PodStatus represents information about the status of a pod.', {
    conditions: arrayOf(refTo(CORE + 'PodCondition'), "The pod's conditions (PodScheduled, Initialized, ContainersReady, Ready).", mapBy('type')),
    containerStatuses: arrayOf({ type: 'object', 'x-kubernetes-preserve-unknown-fields': true }, 'The status of each container.', atomic),
    hostIP: str('The IP of the node the pod runs on.'),
    hostIPs: arrayOf(refTo(CORE + 'HostIP'), 'The IPs of the node the pod runs on.', {
      ...atomic,
      'x-kubernetes-patch-merge-key': 'ip',
      'x-kubernetes-patch-strategy': 'merge',
    }),
    initContainerStatuses: arrayOf({ type: 'object', 'x-kubernetes-preserve-unknown-fields': true }, 'The status of each init container.', atomic),
    message: str('Why the pod is in this phase.'),
    nominatedNodeName: str('The node the scheduler nominated while preempting.'),
    phase: str('Pending, Running, Succeeded, Failed or Unknown.'),
    podIP: str("The pod's IP address."),
    podIPs: arrayOf(refTo(CORE + 'PodIP'), "The pod's IP addresses, podIP first.", {
      'x-kubernetes-list-map-keys': ['ip'],
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-patch-merge-key': 'ip',
      'x-kubernetes-patch-strategy': 'merge',
    }),
    qosClass: str('Guaranteed, Burstable or BestEffort.'),
    reason: str("A CamelCase reason for the pod's state (e.g. Evicted)."),
    startTime: ref(META + 'Time', 'When the node acknowledged the pod.'),
  }),
  [CORE + 'PodCondition']: struct(
    'PodCondition contains details for the current condition of this pod.',
    {
      lastProbeTime: ref(META + 'Time', 'When the condition was last probed.'),
      lastTransitionTime: ref(META + 'Time', 'When the condition last changed status.'),
      message: str('Details of the last transition.'),
      reason: str('Why the condition last changed.'),
      status: str('True, False or Unknown.'),
      type: str('The condition type.'),
    },
    { required: ['type', 'status'] },
  ),
  [CORE + 'PodIP']: struct('PodIP represents a single IP address allocated to the pod.', { ip: str('The IP address.') }, { required: ['ip'] }),
  [CORE + 'HostIP']: struct('HostIP represents a single IP address allocated to the host.', { ip: str('The IP address.') }, { required: ['ip'] }),
  [CORE + 'PodList']: listKind(V1, CORE + 'Pod', 'Pod', 'The pods.'),
};
