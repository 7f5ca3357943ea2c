// Node's strategy (pkg/registry/core/node/strategy.go), validation (ValidateNode,
// ValidateNodeUpdate: taints, pod CIDRs, provider ID) and printer columns (printNode).
import { GoRenderedValue, fieldIssue, type FieldIssue } from '../../../apimachinery/errors.js';
import type { KubeObject } from '../../../apimachinery/types.js';
import { isQualifiedName, isValidLabelValue } from '../../../apimachinery/validation/names.js';
import { keepStoredField, type Strategy } from '../../strategy.js';
import { ageColumn, ageSince, nameColumn } from '../../table.js';
import { ipFamilyOf, validCIDRIssues } from '../netvalidation.js';

interface Taint {
  key?: string;
  value?: string;
  effect?: string;
}

export type Node = KubeObject & {
  spec?: { podCIDR?: string; podCIDRs?: string[]; providerID?: string; taints?: Taint[]; unschedulable?: boolean };
  status?: {
    capacity?: Record<string, unknown>;
    allocatable?: Record<string, unknown>;
    conditions?: { type?: string; status?: string }[];
    addresses?: { type?: string; address?: string }[];
    nodeInfo?: { kubeletVersion?: string; osImage?: string; kernelVersion?: string; containerRuntimeVersion?: string };
  };
};

const TAINT_EFFECTS = ['NoSchedule', 'PreferNoSchedule', 'NoExecute'];
const POD_CIDR_CHANGE = 'node updates may not change podCIDR except from "" to valid';

/** SetDefaults_NodeStatus, and the v1 conversion that keeps podCIDR and podCIDRs in step. */
function defaultNode(o: KubeObject): void {
  const n = o as Node;
  if (n.status?.capacity && !n.status.allocatable) n.status.allocatable = { ...n.status.capacity };
  const s = n.spec;
  if (!s || typeof s !== 'object') return;
  if (s.podCIDR && !s.podCIDRs?.length) s.podCIDRs = [s.podCIDR];
  else if (s.podCIDRs?.length && s.podCIDR !== s.podCIDRs[0]) s.podCIDR = s.podCIDRs[0];
}

function taintIssues(taints: readonly Taint[]): FieldIssue[] {
  const issues: FieldIssue[] = [];
  const seen = new Set<string>();
  taints.forEach((t, i) => {
    const path = `spec.taints[${i}]`;
    for (const m of isQualifiedName(t.key ?? '')) issues.push(fieldIssue.invalid(`${path}.key`, t.key ?? '', m));
    const bad = isValidLabelValue(t.value ?? '');
    if (bad.length) issues.push(fieldIssue.invalid(`${path}.value`, t.value ?? '', bad.join(';')));
    if (!t.effect) issues.push(fieldIssue.required(`${path}.effect`, ''));
    else if (!TAINT_EFFECTS.includes(t.effect)) issues.push(fieldIssue.notSupported(`${path}.effect`, t.effect, TAINT_EFFECTS));
    const k = `${t.effect ?? ''}\u0000${t.key ?? ''}`;
    if (seen.has(k)) {
      const v = new GoRenderedValue(
        `core.Taint{Key:${JSON.stringify(t.key ?? '')}, Value:${JSON.stringify(t.value ?? '')}, Effect:${JSON.stringify(t.effect ?? '')}, TimeAdded:(*v1.Time)(nil)}`,
      );
      issues.push({ ...fieldIssue.duplicate(path, v), detail: 'taints must be unique by key and effect pair' });
    }
    seen.add(k);
  });
  return issues;
}

/** ValidateNode (the spec part). */
export function validateNode(n: Node): FieldIssue[] {
  const issues = taintIssues(n.spec?.taints ?? []);
  const cidrs = n.spec?.podCIDRs ?? [];
  cidrs.forEach((c, i) => issues.push(...validCIDRIssues(`spec.podCIDRs[${i}]`, c)));
  if (cidrs.length > 1) {
    const fams = cidrs.map((c) => ipFamilyOf(c.split('/')[0] ?? ''));
    if (cidrs.length > 2 || fams[0] === fams[1])
      issues.push(fieldIssue.invalid('spec.podCIDRs', cidrs, 'may specify no more than one CIDR for each IP family'));
  }
  return issues;
}

/** ValidateNodeUpdate: pod CIDRs and the provider ID are set once. */
export function validateNodeUpdate(n: Node, old: Node): FieldIssue[] {
  const issues = validateNode(n);
  const a = old.spec?.podCIDRs ?? [];
  const b = n.spec?.podCIDRs ?? [];
  if (a.length > 0) {
    if (a.length !== b.length) issues.push(fieldIssue.forbidden('spec.podCIDRs', POD_CIDR_CHANGE));
    else a.forEach((c, i) => c !== b[i] && issues.push(fieldIssue.forbidden('spec.podCIDRs', POD_CIDR_CHANGE)));
  }
  if (old.spec?.providerID && old.spec.providerID !== n.spec?.providerID) {
    issues.push(fieldIssue.forbidden('spec.providerID', 'node updates may not change providerID except from "" to valid'));
  }
  return issues;
}

/** printNode's STATUS: Ready / NotReady / Unknown, then SchedulingDisabled. */
export function nodeStatus(n: Node): string {
  const ready = (n.status?.conditions ?? []).find((c) => c.type === 'Ready');
  const status = ready ? [ready.status === 'True' ? 'Ready' : 'NotReady'] : ['Unknown'];
  if (n.spec?.unschedulable) status.push('SchedulingDisabled');
  return status.join(',');
}

/** findNodeRoles: node-role.kubernetes.io/<role> labels and kubernetes.io/role=<role>. */
export function nodeRoles(n: Node): string {
  const roles = new Set<string>();
  for (const [k, v] of Object.entries(n.metadata?.labels ?? {})) {
    if (k.startsWith('node-role.kubernetes.io/')) {
      const role = k.slice('node-role.kubernetes.io/'.length);
      if (role) roles.add(role);
    } else if (k === 'kubernetes.io/role' && v) roles.add(v);
  }
  return roles.size ? [...roles].sort().join(',') : '<none>';
}

const address = (n: Node, type: string): string => n.status?.addresses?.find((a) => a.type === type)?.address ?? '<none>';
const orUnknown = (v: string | undefined): string => v || '<unknown>';

export const nodeStrategy: Strategy = {
  namespaced: false,
  allowCreateOnUpdate: false,
  allowUnconditionalUpdate: true,
  finalizerNames: 'kube',
  defaults: defaultNode,
  // Nodes may set every field on create, status included (a kubelet registers itself so).
  prepareForCreate() {},
  prepareForUpdate: (o, old) => keepStoredField(o, old, 'status'),
  validate: (o) => validateNode(o),
  validateUpdate: (o, old) => validateNodeUpdate(o, old),
  resetFields: { '': [['status']], status: [['spec']] },
  subresources: {
    status: {
      merge: (incoming) => incoming,
      prepareForUpdate: (o, old) => keepStoredField(o, old, 'spec'),
      validateUpdate: (o, old) => validateNodeUpdate(o, old),
    },
  },
  tableColumns: [
    nameColumn,
    { name: 'Status', type: 'string', description: 'The status of the node', priority: 0 },
    { name: 'Roles', type: 'string', description: 'The roles of the node', priority: 0 },
    ageColumn,
    { name: 'Version', type: 'string', description: 'Kubelet Version reported by the node.', priority: 0 },
    { name: 'Internal-IP', type: 'string', description: 'List of addresses reachable to the node. Queried from cloud provider, if available.', priority: 1 },
    { name: 'External-IP', type: 'string', description: 'List of addresses reachable to the node. Queried from cloud provider, if available.', priority: 1 },
    { name: 'OS-Image', type: 'string', description: 'OS Image reported by the node from /etc/os-release (e.g. Debian GNU/Linux 7 (wheezy)).', priority: 1 },
    { name: 'Kernel-Version', type: 'string', description: "Kernel Version reported by the node from 'uname -r' (e.g. 3.16.0-0.bpo.4-amd64).", priority: 1 },
    {
      name: 'Container-Runtime',
      type: 'string',
      description: 'ContainerRuntime Version reported by the node through runtime remote API (e.g. containerd://1.4.2).',
      priority: 1,
    },
  ],
  tableCells: (o) => {
    const n = o as Node;
    const info = n.status?.nodeInfo ?? {};
    return [
      o.metadata?.name ?? '',
      nodeStatus(n),
      nodeRoles(n),
      ageSince(o.metadata?.creationTimestamp),
      info.kubeletVersion ?? '',
      address(n, 'InternalIP'),
      address(n, 'ExternalIP'),
      orUnknown(info.osImage),
      orUnknown(info.kernelVersion),
      orUnknown(info.containerRuntimeVersion),
    ];
  },
};
