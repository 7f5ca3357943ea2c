// io.k8s.api.core.v1.Node: shapes follow upstream's generated OpenAPI (the fields a node simulator
// and the cloud controllers use); descriptions are our own.
import type { Definitions } from '../../../apimachinery/schema.js';
import { refTo } from '../../../apimachinery/schema.js';
import {
  CORE,
  META,
  apiVersionField,
  arrayOf,
  bool,
  int32,
  kind,
  kindField,
  listKind,
  objectMetaField,
  ref,
  str,
  stringList,
  struct,
} from '../../../apimachinery/definitions/util.js';

const V1 = { group: '', version: 'v1' };
const QUANTITY = 'io.k8s.apimachinery.pkg.api.resource.Quantity';
const resourceList = (description: string) => ({ type: 'object' as const, additionalProperties: refTo(QUANTITY), description });
const mergeBy = (key: string) => ({ 'x-kubernetes-patch-merge-key': key, 'x-kubernetes-patch-strategy': 'merge' });

export const nodeDefinitions: Definitions = {
  [CORE + 'Node']: kind({ group: '', kind: 'Node', version: 'v1' }, 'Node is a worker node; each node has a unique name.', {
    apiVersion: apiVersionField,
    kind: kindField,
    metadata: objectMetaField(),
    spec: ref(CORE + 'NodeSpec', 'The behavior of the node: pod CIDRs, provider ID, taints, schedulability.'),
    status: ref(CORE + 'NodeStatus', 'The most recently observed status of the node, written by its kubelet (or simulator) and the node controllers.'),
  }),
  [CORE + 'NodeSpec']: struct('NodeSpec describes the attributes that a node is created with.', {
    podCIDR: str('The pod IP range assigned to the node.'),
    podCIDRs: stringList('The pod IP ranges assigned to the node, podCIDR first; at most one per IP family.', {
      'x-kubernetes-list-type': 'set',
      'x-kubernetes-patch-strategy': 'merge',
    }),
    providerID: str("The node's ID in its cloud provider: <ProviderName>://<ProviderSpecificNodeID>."),
    taints: arrayOf(refTo(CORE + 'Taint'), "The node's taints.", { 'x-kubernetes-list-type': 'atomic' }),
    unschedulable: bool('No new pods are scheduled to the node.'),
  }),
  [CORE + 'Taint']: struct(
    'A taint repels the pods that do not tolerate it.',
    {
      effect: str('NoSchedule, PreferNoSchedule or NoExecute.'),
      key: str('The taint key.'),
      timeAdded: ref(META + 'Time', 'When a NoExecute taint was added.'),
      value: str('The taint value.'),
    },
    { required: ['key', 'effect'] },
  ),
  [CORE + 'NodeStatus']: struct('NodeStatus is information about the current status of a node.', {
    addresses: arrayOf(refTo(CORE + 'NodeAddress'), "The node's addresses (InternalIP, ExternalIP, Hostname, ...).", {
      'x-kubernetes-list-map-keys': ['type'],
      'x-kubernetes-list-type': 'map',
      ...mergeBy('type'),
    }),
    allocatable: resourceList('What of the capacity pods may use.'),
    capacity: resourceList("The node's resources."),
    conditions: arrayOf(refTo(CORE + 'NodeCondition'), "The node's conditions (Ready, ...).", {
      'x-kubernetes-list-map-keys': ['type'],
      'x-kubernetes-list-type': 'map',
      ...mergeBy('type'),
    }),
    daemonEndpoints: ref(CORE + 'NodeDaemonEndpoints', 'Ports of the daemons on the node.'),
    nodeInfo: ref(CORE + 'NodeSystemInfo', 'Versions and IDs of the node.'),
    phase: str('Deprecated: never set.'),
  }),
  [CORE + 'NodeAddress']: struct(
    "NodeAddress contains information for the node's address.",
    { address: str('The address.'), type: str('Hostname, ExternalIP, InternalIP, ExternalDNS or InternalDNS.') },
    { required: ['type', 'address'] },
  ),
  [CORE + 'NodeCondition']: struct(
    'NodeCondition contains condition information for a node.',
    {
      lastHeartbeatTime: ref(META + 'Time', 'When the condition was last probed.'),
      lastTransitionTime: ref(META + 'Time', 'When the condition last changed status.'),
      message: str('Details of the last transition.'),
      reason: str('Why the condition last changed.'),
      status: str('True, False or Unknown.'),
      type: str('Ready, MemoryPressure, DiskPressure, PIDPressure, NetworkUnavailable.'),
    },
    { required: ['type', 'status'] },
  ),
  [CORE + 'NodeDaemonEndpoints']: struct('NodeDaemonEndpoints lists ports opened by daemons running on the node.', {
    kubeletEndpoint: ref(CORE + 'DaemonEndpoint', 'The port the kubelet listens on.'),
  }),
  [CORE + 'DaemonEndpoint']: struct(
    'DaemonEndpoint contains information about a single daemon endpoint.',
    { Port: int32('The port number.') },
    { required: ['Port'] },
  ),
  [CORE + 'NodeSystemInfo']: struct('NodeSystemInfo is a set of ids/uuids to uniquely identify the node.', {
    architecture: str('The architecture reported by the node.'),
    bootID: str('Boot ID reported by the node.'),
    containerRuntimeVersion: str('Container runtime version (runtime://version).'),
    kernelVersion: str('Kernel version (uname -r).'),
    kubeProxyVersion: str('Deprecated: the KubeProxy version.'),
    kubeletVersion: str('Kubelet version.'),
    machineID: str('MachineID reported by the node.'),
    operatingSystem: str('The operating system reported by the node.'),
    osImage: str('OS image (e.g. Debian GNU/Linux 12).'),
    systemUUID: str('SystemUUID reported by the node.'),
  }),
  [CORE + 'NodeList']: listKind(V1, CORE + 'Node', 'Node', 'The nodes.'),
  [QUANTITY]: { type: 'string', description: 'Quantity is a fixed-point representation of a number, e.g. 100m, 2Gi.' },
};
