// Pod's strategy (pkg/registry/core/pod/strategy.go) for the subset a node simulator needs:
// defaults (SetDefaults_PodSpec, _Container), validation of the fields kept (ValidatePodCreate,
// ValidatePodUpdate's immutability, ValidatePodStatusUpdate), graceful deletion
// (CheckGracefulDelete) and printer columns (printPod).
import { fieldIssue, type FieldIssue } from '../../../apimachinery/errors.js';
import { rfc3339 } from '../../../apimachinery/times.js';
import type { KubeObject } from '../../../apimachinery/types.js';
import { isDNS1123Label, isDNS1123Subdomain } from '../../../apimachinery/validation/names.js';
import { cloneObject } from '../../codec.js';
import { keepStoredField, type Strategy } from '../../strategy.js';
import { ageColumn, ageSince, nameColumn } from '../../table.js';
import { bindingSubresource, boundByBinding } from './binding.js';

interface ContainerPort {
  name?: string;
  containerPort?: number;
  protocol?: string;
}
interface Container {
  name?: string;
  image?: string;
  ports?: ContainerPort[];
  imagePullPolicy?: string;
  terminationMessagePath?: string;
  terminationMessagePolicy?: string;
  resources?: { requests?: Record<string, unknown>; limits?: Record<string, unknown> };
}
interface ContainerStatus {
  ready?: boolean;
  restartCount?: number;
  state?: { waiting?: { reason?: string }; running?: unknown; terminated?: { reason?: string; signal?: number; exitCode?: number } };
}
export interface PodSpec {
  containers?: Container[];
  initContainers?: Container[];
  nodeName?: string;
  restartPolicy?: string;
  dnsPolicy?: string;
  schedulerName?: string;
  terminationGracePeriodSeconds?: number;
  activeDeadlineSeconds?: number;
  enableServiceLinks?: boolean;
  securityContext?: Record<string, unknown>;
  tolerations?: unknown[];
  readinessGates?: { conditionType?: string }[];
}
export type Pod = KubeObject & {
  spec?: PodSpec;
  status?: {
    phase?: string;
    reason?: string;
    podIP?: string;
    nominatedNodeName?: string;
    qosClass?: string;
    conditions?: { type?: string; status?: string }[];
    containerStatuses?: ContainerStatus[];
  };
};

const RESTART_POLICIES = ['Always', 'OnFailure', 'Never'];
const DNS_POLICIES = ['ClusterFirstWithHostNet', 'ClusterFirst', 'Default', 'None'];
const PROTOCOLS = ['SCTP', 'TCP', 'UDP'];
const DEFAULT_GRACE_SECONDS = 30;
const POD_UPDATE_FORBIDDEN =
  'pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)';

/** The pull policy a container's image gets: Always for `:latest` or no tag, else IfNotPresent. */
function defaultPullPolicy(image: string): string {
  if (image.includes('@')) return 'IfNotPresent';
  const last = image.slice(image.lastIndexOf('/') + 1);
  const colon = last.lastIndexOf(':');
  const tag = colon >= 0 ? last.slice(colon + 1) : '';
  return tag === '' || tag === 'latest' ? 'Always' : 'IfNotPresent';
}

function defaultContainer(c: Container): void {
  if (!c || typeof c !== 'object') return;
  c.terminationMessagePath ??= '/dev/termination-log';
  c.terminationMessagePolicy ??= 'File';
  if (!c.imagePullPolicy && typeof c.image === 'string') c.imagePullPolicy = defaultPullPolicy(c.image);
  for (const p of Array.isArray(c.ports) ? c.ports : []) if (p && typeof p === 'object') p.protocol ??= 'TCP';
}

/** SetDefaults_PodSpec and the container defaults. */
export function defaultPod(o: KubeObject): void {
  const s = (o as Pod).spec;
  if (!s || typeof s !== 'object') return;
  s.dnsPolicy ??= 'ClusterFirst';
  s.restartPolicy ??= 'Always';
  s.securityContext ??= {};
  s.terminationGracePeriodSeconds ??= DEFAULT_GRACE_SECONDS;
  s.schedulerName ??= 'default-scheduler';
  s.enableServiceLinks ??= true;
  for (const c of [...(Array.isArray(s.containers) ? s.containers : []), ...(Array.isArray(s.initContainers) ? s.initContainers : [])]) defaultContainer(c);
}

/** qos.GetPodQOS, on the containers' requests and limits as given. */
function qosClass(p: Pod): string {
  const cs = [...(p.spec?.containers ?? []), ...(p.spec?.initContainers ?? [])];
  let any = false;
  let guaranteed = true;
  for (const c of cs) {
    const req = c.resources?.requests ?? {};
    const lim = c.resources?.limits ?? {};
    if (Object.keys(req).length || Object.keys(lim).length) any = true;
    for (const r of ['cpu', 'memory']) {
      if (lim[r] === undefined || (req[r] !== undefined && String(req[r]) !== String(lim[r]))) guaranteed = false;
    }
  }
  if (!any) return 'BestEffort';
  return guaranteed ? 'Guaranteed' : 'Burstable';
}

function portNameIssues(path: string, name: string): FieldIssue[] {
  const issues: FieldIssue[] = [];
  if (name.length > 15) issues.push(fieldIssue.invalid(path, name, 'must be no more than 15 characters'));
  if (!/^[-a-z0-9]+$/.test(name)) issues.push(fieldIssue.invalid(path, name, 'must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)'));
  if (name.includes('--')) issues.push(fieldIssue.invalid(path, name, 'must not contain consecutive hyphens'));
  if (name.startsWith('-') || name.endsWith('-')) issues.push(fieldIssue.invalid(path, name, 'must not begin or end with a hyphen'));
  if (!/[a-z]/.test(name)) issues.push(fieldIssue.invalid(path, name, 'must contain at least one letter (a-z)'));
  return issues;
}

function containersIssues(cs: readonly Container[], path: string, names: Set<string>, portNames: Set<string>, required: boolean): FieldIssue[] {
  const issues: FieldIssue[] = [];
  if (required && cs.length === 0) issues.push(fieldIssue.required(path, ''));
  cs.forEach((c, i) => {
    const p = `${path}[${i}]`;
    if (!c.name) issues.push(fieldIssue.required(`${p}.name`, ''));
    else {
      for (const m of isDNS1123Label(c.name)) issues.push(fieldIssue.invalid(`${p}.name`, c.name, m));
      if (names.has(c.name)) issues.push(fieldIssue.duplicate(`${p}.name`, c.name));
      names.add(c.name);
    }
    if (!c.image) issues.push(fieldIssue.required(`${p}.image`, ''));
    else if (c.image.trim() !== c.image) issues.push(fieldIssue.invalid(`${p}.image`, c.image, 'must not have leading or trailing whitespace'));
    (c.ports ?? []).forEach((port, j) => {
      const pp = `${p}.ports[${j}]`;
      if (port.name) {
        issues.push(...portNameIssues(`${pp}.name`, port.name));
        if (portNames.has(port.name)) issues.push(fieldIssue.duplicate(`${pp}.name`, port.name));
        portNames.add(port.name);
      }
      if (!(typeof port.containerPort === 'number' && port.containerPort >= 1 && port.containerPort <= 65535)) {
        issues.push(fieldIssue.invalid(`${pp}.containerPort`, port.containerPort ?? 0, 'must be between 1 and 65535, inclusive'));
      }
      if (!port.protocol) issues.push(fieldIssue.required(`${pp}.protocol`, ''));
      else if (!PROTOCOLS.includes(port.protocol)) issues.push(fieldIssue.notSupported(`${pp}.protocol`, port.protocol, PROTOCOLS));
    });
  });
  return issues;
}

/** ValidatePodSpec, for the fields kplane models. */
export function validatePod(o: KubeObject): FieldIssue[] {
  const s = (o as Pod).spec ?? {};
  const names = new Set<string>();
  const portNames = new Set<string>();
  const issues = [
    ...containersIssues(s.containers ?? [], 'spec.containers', names, portNames, true),
    ...containersIssues(s.initContainers ?? [], 'spec.initContainers', names, portNames, false),
  ];
  if (s.restartPolicy !== undefined && !RESTART_POLICIES.includes(s.restartPolicy))
    issues.push(fieldIssue.notSupported('spec.restartPolicy', s.restartPolicy, RESTART_POLICIES));
  if (s.dnsPolicy !== undefined && !DNS_POLICIES.includes(s.dnsPolicy)) issues.push(fieldIssue.notSupported('spec.dnsPolicy', s.dnsPolicy, DNS_POLICIES));
  if (s.nodeName) for (const m of isDNS1123Subdomain(s.nodeName)) issues.push(fieldIssue.invalid('spec.nodeName', s.nodeName, m));
  if (s.activeDeadlineSeconds !== undefined && !(s.activeDeadlineSeconds >= 1)) {
    issues.push(fieldIssue.invalid('spec.activeDeadlineSeconds', s.activeDeadlineSeconds, 'must be between 1 and 2147483647, inclusive'));
  }
  return issues;
}

/** ValidatePodUpdate: only images, activeDeadlineSeconds, added tolerations and the grace period may change. */
export function validatePodUpdate(o: KubeObject, old: KubeObject): FieldIssue[] {
  const a = cloneObject(((old as Pod).spec ?? {}) as KubeObject) as PodSpec;
  const b = (o as Pod).spec ?? {};
  // What may change is copied over from the new spec before the comparison (upstream's mungedPodSpec).
  a.containers?.forEach((c, i) => {
    if (b.containers?.[i]) c.image = b.containers[i].image;
  });
  a.initContainers?.forEach((c, i) => {
    if (b.initContainers?.[i]) c.image = b.initContainers[i].image;
  });
  a.activeDeadlineSeconds = b.activeDeadlineSeconds;
  if (a.activeDeadlineSeconds === undefined) delete a.activeDeadlineSeconds;
  const oldTolerations = (a.tolerations ?? []).map((t) => JSON.stringify(t));
  if (oldTolerations.every((t) => (b.tolerations ?? []).some((n) => JSON.stringify(n) === t))) {
    if (b.tolerations) a.tolerations = b.tolerations;
  }
  if ((a.terminationGracePeriodSeconds ?? 0) < 0 && b.terminationGracePeriodSeconds === 1) a.terminationGracePeriodSeconds = 1;
  // pods/binding sets the node of a pod that has none (binding.ts); no other write may.
  if (!a.nodeName && b.nodeName && boundByBinding.has(o)) a.nodeName = b.nodeName;
  const issues = validatePod(o);
  if (JSON.stringify(sortKeys(a)) !== JSON.stringify(sortKeys(b))) issues.push(fieldIssue.forbidden('spec', POD_UPDATE_FORBIDDEN));
  return issues;
}

function sortKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (v && typeof v === 'object')
    return Object.fromEntries(
      Object.keys(v)
        .sort()
        .map((k) => [k, sortKeys((v as Record<string, unknown>)[k])]),
    );
  return v;
}

/** ValidatePodStatusUpdate: the node name cannot change through /status. */
function validatePodStatusUpdate(o: KubeObject, old: KubeObject): FieldIssue[] {
  const issues: FieldIssue[] = [];
  const st = (o as Pod).status ?? {};
  if (st.nominatedNodeName)
    for (const m of isDNS1123Subdomain(st.nominatedNodeName)) issues.push(fieldIssue.invalid('status.nominatedNodeName', st.nominatedNodeName, m));
  if ((o as Pod).spec?.nodeName !== (old as Pod).spec?.nodeName) issues.push(fieldIssue.forbidden('status.nodeName', 'may not be changed directly'));
  return issues;
}

/**
 * CheckGracefulDelete: a pod on a node is marked deleting with a grace period (the request's,
 * else the pod's terminationGracePeriodSeconds) and removed by its node (a DELETE with grace 0);
 * one not scheduled, or finished, goes at once. A second DELETE may only shorten the period.
 */
function podBeforeDelete(o: KubeObject, opts: { gracePeriodSeconds?: number }): 'proceed' | 'unchanged' | { update: KubeObject } {
  const p = o as Pod;
  let grace = opts.gracePeriodSeconds ?? p.spec?.terminationGracePeriodSeconds ?? DEFAULT_GRACE_SECONDS;
  if (!p.spec?.nodeName || p.status?.phase === 'Failed' || p.status?.phase === 'Succeeded') grace = 0;
  if (grace < 0) grace = 1; // a negative period is taken as 1 (upstream's compatibility rule)
  if (grace === 0) return 'proceed';
  const m = p.metadata ?? {};
  if (m.deletionTimestamp && m.deletionGracePeriodSeconds !== undefined && grace >= m.deletionGracePeriodSeconds) return 'unchanged';
  const next = cloneObject(o);
  const nm = (next.metadata ??= {});
  nm.deletionGracePeriodSeconds = grace;
  nm.deletionTimestamp = rfc3339(Date.now() + grace * 1000);
  return { update: next };
}

/** printPod's READY, STATUS and RESTARTS. */
export function podCells(p: Pod): [string, string, number] {
  const total = p.spec?.containers?.length ?? 0;
  let ready = 0;
  let restarts = 0;
  let reason = p.status?.reason || p.status?.phase || '';
  let running = false;
  const statuses = p.status?.containerStatuses ?? [];
  for (let i = statuses.length - 1; i >= 0; i--) {
    const c = statuses[i]!;
    restarts += c.restartCount ?? 0;
    if (c.state?.waiting?.reason) reason = c.state.waiting.reason;
    else if (c.state?.terminated?.reason) reason = c.state.terminated.reason;
    else if (c.state?.terminated) reason = c.state.terminated.signal ? `Signal:${c.state.terminated.signal}` : `ExitCode:${c.state.terminated.exitCode ?? 0}`;
    else if (c.ready && c.state?.running) {
      running = true;
      ready++;
    }
  }
  if (reason === 'Completed' && running) {
    const readyCond = (p.status?.conditions ?? []).find((c) => c.type === 'Ready');
    reason = readyCond?.status === 'True' ? 'Running' : 'NotReady';
  }
  if (p.metadata?.deletionTimestamp) reason = p.status?.reason === 'NodeLost' ? 'Unknown' : 'Terminating';
  return [`${ready}/${total}`, reason, restarts];
}

function readinessGates(p: Pod): string {
  const gates = p.spec?.readinessGates ?? [];
  if (!gates.length) return '<none>';
  const trueConds = new Set((p.status?.conditions ?? []).filter((c) => c.status === 'True').map((c) => c.type));
  return `${gates.filter((g) => trueConds.has(g.conditionType)).length}/${gates.length}`;
}

export const podStrategy: Strategy = {
  namespaced: true,
  allowCreateOnUpdate: false,
  allowUnconditionalUpdate: true,
  finalizerNames: 'kube',
  defaults: defaultPod,
  prepareForCreate(o) {
    const p = o as Pod;
    p.status = { phase: 'Pending', qosClass: qosClass(p) };
  },
  prepareForUpdate: (o, old) => keepStoredField(o, old, 'status'),
  validate: validatePod,
  validateUpdate: validatePodUpdate,
  resetFields: { '': [['status']], status: [['spec']] },
  beforeDelete: podBeforeDelete,
  subresources: {
    binding: bindingSubresource,
    status: {
      merge: (incoming) => incoming,
      prepareForUpdate: (o, old) => keepStoredField(o, old, 'spec'),
      validateUpdate: validatePodStatusUpdate,
    },
  },
  selectableFields: (o) => {
    const p = o as Pod;
    return {
      'spec.nodeName': p.spec?.nodeName ?? '',
      'spec.restartPolicy': p.spec?.restartPolicy ?? '',
      'spec.schedulerName': p.spec?.schedulerName ?? '',
      'status.phase': p.status?.phase ?? '',
      'status.podIP': p.status?.podIP ?? '',
      'status.nominatedNodeName': p.status?.nominatedNodeName ?? '',
    };
  },
  tableColumns: [
    nameColumn,
    { name: 'Ready', type: 'string', description: 'The aggregate readiness state of this pod for accepting traffic.', priority: 0 },
    { name: 'Status', type: 'string', description: 'The aggregate status of the containers in this pod.', priority: 0 },
    {
      name: 'Restarts',
      type: 'string',
      description: 'The number of times the containers in this pod have been restarted and when the last container in this pod has restarted.',
      priority: 0,
    },
    ageColumn,
    {
      name: 'IP',
      type: 'string',
      description: 'IP address allocated to the pod. Routable at least within the cluster. Empty if not yet allocated.',
      priority: 1,
    },
    { name: 'Node', type: 'string', description: 'NodeName is a request to schedule this pod onto a specific node.', priority: 1 },
    {
      name: 'Nominated Node',
      type: 'string',
      description:
        'nominatedNodeName is set when this pod preempts other pods on the node, but it cannot be scheduled right away as preemption victims receive their graceful termination periods.',
      priority: 1,
    },
    { name: 'Readiness Gates', type: 'string', description: 'If specified, all readiness gates will be evaluated for pod readiness.', priority: 1 },
  ],
  tableCells: (o) => {
    const p = o as Pod;
    const [ready, status, restarts] = podCells(p);
    return [
      o.metadata?.name ?? '',
      ready,
      status,
      String(restarts),
      ageSince(o.metadata?.creationTimestamp),
      p.status?.podIP || '<none>',
      p.spec?.nodeName || '<none>',
      p.status?.nominatedNodeName || '<none>',
      readinessGates(p),
    ];
  },
};
