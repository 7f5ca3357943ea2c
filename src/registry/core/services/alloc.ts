// What the Service REST does around the generic store (pkg/registry/core/service/storage:
// beginCreate, beginUpdate, afterDelete and alloc.go): cluster IPs and node ports are taken
// before the object is validated and written, given back when the write fails, and released when
// the Service goes away or stops needing them. Single-stack IPv4 only (the loopback world).
import { fieldIssue, internalError, invalid, type FieldIssue } from '../../../apimachinery/errors.js';
import type { Storage } from '../../../storage/storage.js';
import type { FinishWrite, WriteHookContext } from '../../strategy.js';
import { AllocationError, AllocationOperation, PersistedRange, parsePortRange, parseServiceCIDR, type ItemRange } from './allocator.js';
import {
  needsClusterIP,
  needsHealthCheck,
  needsNodePort,
  sameList,
  serviceNodePorts,
  shouldAllocateNodePorts,
  spec,
  type Service,
  type ServicePort,
} from './types.js';
import { ipFamilyOf } from '../netvalidation.js';
import { clusterIPsRelatedIssues } from './validation.js';

/** Loopback only: every address kplane hands out is in 127.0.0.0/8. */
export const DEFAULT_SERVICE_CLUSTER_IP_RANGE = '127.1.0.0/16';
export const DEFAULT_SERVICE_NODE_PORT_RANGE = '30000-32767';

export const SERVICE_IPS_KEY = '/registry/ranges/serviceips';
export const SERVICE_NODE_PORTS_KEY = '/registry/ranges/servicenodeports';

export interface ServiceAllocationOptions {
  /** --service-cluster-ip-range (IPv4 CIDR; default 127.1.0.0/16). */
  readonly serviceClusterIPRange?: string;
  /** --service-node-port-range (default 30000-32767). */
  readonly serviceNodePortRange?: string;
  /** Random source of dynamic allocation (tests). */
  readonly random?: (n: number) => number;
}

const SERVICE = { group: '', kind: 'Service' };

interface Ranges {
  readonly ips: PersistedRange;
  readonly ports: PersistedRange;
}

/** Upstream's Allocators: one per control plane (its storage), created on first use. */
export class ServiceAllocators {
  readonly ipRange: ItemRange;
  readonly portRange: ItemRange;
  private readonly byStorage = new WeakMap<Storage, Ranges>();

  constructor(private readonly opts: ServiceAllocationOptions = {}) {
    this.ipRange = parseServiceCIDR(opts.serviceClusterIPRange ?? DEFAULT_SERVICE_CLUSTER_IP_RANGE);
    this.portRange = parsePortRange(opts.serviceNodePortRange ?? DEFAULT_SERVICE_NODE_PORT_RANGE);
  }

  ranges(storage: Storage): Ranges {
    let r = this.byStorage.get(storage);
    if (!r) {
      r = {
        ips: new PersistedRange(storage, SERVICE_IPS_KEY, this.ipRange, this.opts.random),
        ports: new PersistedRange(storage, SERVICE_NODE_PORTS_KEY, this.portRange, this.opts.random),
      };
      this.byStorage.set(storage, r);
    }
    return r;
  }

  /** beginCreate: normalizeClusterIPs, initIPFamilyFields, then cluster IPs and node ports. */
  async beginCreate(svc: Service, ctx: WriteHookContext): Promise<FinishWrite> {
    normalizeClusterIPs(svc, undefined);
    initIPFamilyFields(svc, undefined);
    const r = this.ranges(ctx.storage);
    const op = new AllocationOperation(ctx.dryRun);
    try {
      await this.allocClusterIPs(svc, r, op);
      if (needsNodePort(svc)) await this.initNodePorts(svc, r, op);
      if (needsHealthCheck(svc)) await this.allocHealthCheckNodePort(svc, r, op);
    } catch (e) {
      await op.revert();
      throw e;
    }
    return finishOf(op);
  }

  /** beginUpdate: patchAllocatedValues, normalizeClusterIPs, initIPFamilyFields, then the allocations a change needs. */
  async beginUpdate(svc: Service, old: Service, ctx: WriteHookContext): Promise<FinishWrite> {
    patchAllocatedValues(svc, old);
    normalizeClusterIPs(svc, old);
    initIPFamilyFields(svc, old);
    const r = this.ranges(ctx.storage);
    const op = new AllocationOperation(ctx.dryRun);
    try {
      // Cluster IPs: ExternalName → another type allocates, another type → ExternalName releases.
      if (old.spec?.type === 'ExternalName' && svc.spec?.type !== 'ExternalName') await this.allocClusterIPs(svc, r, op);
      else if (old.spec?.type !== 'ExternalName' && svc.spec?.type === 'ExternalName' && old.spec?.clusterIPs?.[0] !== 'None') {
        for (const ip of old.spec?.clusterIPs ?? []) op.releaseDeferred(r.ips, ip);
      }
      // Node ports.
      if (needsNodePort(old) && (svc.spec?.type === 'ExternalName' || svc.spec?.type === 'ClusterIP')) {
        for (const p of serviceNodePorts(old)) op.releaseDeferred(r.ports, p);
      }
      if (needsNodePort(svc)) await this.updateNodePorts(svc, old, r, op);
      // Health check node port.
      if (!needsHealthCheck(old) && needsHealthCheck(svc)) await this.allocHealthCheckNodePort(svc, r, op);
      else if (needsHealthCheck(old) && !needsHealthCheck(svc) && old.spec?.healthCheckNodePort) op.releaseDeferred(r.ports, old.spec.healthCheckNodePort);
    } catch (e) {
      await op.revert();
      throw e;
    }
    return finishOf(op);
  }

  /** releaseAllocatedResources (afterDelete). */
  async release(svc: Service, ctx: WriteHookContext): Promise<void> {
    if (ctx.dryRun) return;
    const r = this.ranges(ctx.storage);
    if (needsClusterIP(svc) && svc.spec?.clusterIPs?.[0] !== 'None') {
      for (const ip of svc.spec?.clusterIPs ?? (svc.spec?.clusterIP ? [svc.spec.clusterIP] : [])) await r.ips.release(ip);
    }
    for (const p of serviceNodePorts(svc)) await r.ports.release(p);
    if (needsHealthCheck(svc) && svc.spec?.healthCheckNodePort) await r.ports.release(svc.spec.healthCheckNodePort);
  }

  private async allocClusterIPs(svc: Service, r: Ranges, op: AllocationOperation): Promise<void> {
    if (svc.spec?.type === 'ExternalName') return;
    const s = spec(svc);
    if (s.clusterIPs?.[0] === 'None') return;
    const requested = s.clusterIPs?.[0] ?? '';
    if (requested === '') {
      let ip: string | number;
      try {
        ip = await op.allocateNext(r.ips);
      } catch (e) {
        if (e instanceof AllocationError) throw internalError(new Error(`failed to allocate a serviceIP: ${e.message}`));
        throw e;
      }
      s.clusterIP = String(ip);
      s.clusterIPs = [String(ip), ...(s.clusterIPs ?? []).slice(1)];
      return;
    }
    try {
      await op.allocate(r.ips, requested);
    } catch (e) {
      if (e instanceof AllocationError) {
        throw invalid(SERVICE, svc.metadata?.name ?? '', [
          fieldIssue.invalid('spec.clusterIPs', s.clusterIPs, `failed to allocate IP ${requested}: ${e.message}`),
        ]);
      }
      throw e;
    }
  }

  private async allocateNodePort(svc: Service, r: Ranges, op: AllocationOperation, index: number, nodePort: number): Promise<void> {
    try {
      await op.allocate(r.ports, nodePort);
    } catch (e) {
      if (e instanceof AllocationError)
        throw invalid(SERVICE, svc.metadata?.name ?? '', [fieldIssue.invalid(`spec.ports[${index}].nodePort`, nodePort, e.message)]);
      throw e;
    }
  }

  private async nextNodePort(r: Ranges, op: AllocationOperation): Promise<number> {
    try {
      return Number(await op.allocateNext(r.ports));
    } catch (e) {
      if (e instanceof AllocationError) throw internalError(new Error(`failed to allocate a nodePort: ${e.message}`));
      throw e;
    }
  }

  /** initNodePorts: ports sharing a port number share a nodePort; requested ones are honoured. */
  private async initNodePorts(svc: Service, r: Ranges, op: AllocationOperation): Promise<void> {
    const ports = spec(svc).ports ?? [];
    const byPort = new Map<number, number>();
    for (let i = 0; i < ports.length; i++) {
      const p = ports[i]!;
      const nodePort = validNodePortValue(p);
      if (!nodePort && !shouldAllocateNodePorts(svc)) continue; // do respect specific requests only
      const allocated = byPort.get(p.port ?? 0) ?? 0;
      if (allocated === 0) {
        const requested = findRequestedNodePort(p.port ?? 0, ports);
        if (requested !== 0) {
          await this.allocateNodePort(svc, r, op, i, requested);
          p.nodePort = requested;
          byPort.set(p.port ?? 0, requested);
        } else {
          const n = await this.nextNodePort(r, op);
          p.nodePort = n;
          byPort.set(p.port ?? 0, n);
        }
      } else if (nodePort !== allocated) {
        if (!nodePort) p.nodePort = allocated;
        else await this.allocateNodePort(svc, r, op, i, nodePort);
      }
    }
  }

  /** updateNodePorts: new numbers are taken, numbers no longer used are released on commit. */
  private async updateNodePorts(svc: Service, old: Service, r: Ranges, op: AllocationOperation): Promise<void> {
    const oldNumbers = serviceNodePorts(old);
    const taken = new Set<number>();
    const seen: { protocol: string; nodePort: number }[] = [];
    const ports = spec(svc).ports ?? [];
    for (let i = 0; i < ports.length; i++) {
      const p = ports[i]!;
      let nodePort = validNodePortValue(p);
      if (!nodePort && !shouldAllocateNodePorts(svc)) continue;
      if (nodePort) {
        if (!oldNumbers.includes(nodePort) && !taken.has(nodePort)) {
          await this.allocateNodePort(svc, r, op, i, nodePort);
          taken.add(nodePort);
        }
      } else {
        nodePort = await this.nextNodePort(r, op);
        p.nodePort = nodePort;
      }
      const protocol = p.protocol ?? 'TCP';
      if (seen.some((s) => s.protocol === protocol && s.nodePort === nodePort)) {
        throw internalError(new Error(`duplicate nodePort: {${protocol} ${nodePort}}`));
      }
      seen.push({ protocol, nodePort });
    }
    const newNumbers = serviceNodePorts(svc);
    for (const n of oldNumbers) if (!newNumbers.includes(n)) op.releaseDeferred(r.ports, n);
  }

  private async allocHealthCheckNodePort(svc: Service, r: Ranges, op: AllocationOperation): Promise<void> {
    const s = spec(svc);
    const requested = typeof s.healthCheckNodePort === 'number' ? s.healthCheckNodePort : 0;
    try {
      if (requested !== 0) await op.allocate(r.ports, requested);
      else s.healthCheckNodePort = Number(await op.allocateNext(r.ports));
    } catch (e) {
      if (!(e instanceof AllocationError)) throw e;
      const why =
        requested !== 0
          ? `failed to allocate requested HealthCheck NodePort ${requested}: ${e.message}`
          : `failed to allocate a HealthCheck NodePort 0: ${e.message}`;
      throw internalError(new Error(why));
    }
  }
}

function finishOf(op: AllocationOperation): FinishWrite {
  return async (success) => {
    if (success) await op.commit();
    else await op.revert();
  };
}

/** A nodePort as a number (0 when unset or not a number: validation reports those). */
function validNodePortValue(p: ServicePort): number {
  return typeof p.nodePort === 'number' && Number.isInteger(p.nodePort) ? p.nodePort : 0;
}

function findRequestedNodePort(port: number, ports: readonly ServicePort[]): number {
  for (const p of ports) if ((p.port ?? 0) === port && validNodePortValue(p) !== 0) return validNodePortValue(p);
  return 0;
}

/** normalizeClusterIPs: keeps clusterIP and clusterIPs in step for clients that set only one. */
export function normalizeClusterIPs(svc: Service, old: Service | undefined): void {
  const s = spec(svc);
  if (!old) {
    if (s.clusterIP && !s.clusterIPs?.length) s.clusterIPs = [s.clusterIP];
    return;
  }
  const o = old.spec ?? {};
  if ((o.clusterIPs?.length ?? 0) > 0 && !s.clusterIPs?.length && (o.clusterIP ?? '') === (s.clusterIP ?? '')) s.clusterIPs = o.clusterIPs;
  if ((o.clusterIP ?? '') !== (s.clusterIP ?? '')) {
    if (o.clusterIP && !s.clusterIP && sameList(o.clusterIPs, s.clusterIPs)) delete s.clusterIPs;
    if (s.clusterIP && sameList(o.clusterIPs, s.clusterIPs)) s.clusterIPs = [s.clusterIP];
  }
}

/** patchAllocatedValues: values the client left out of an update (a PUT of an old copy) keep the allocated ones. */
export function patchAllocatedValues(svc: Service, old: Service): void {
  const s = spec(svc);
  const o = old.spec ?? {};
  if (needsClusterIP(old) && needsClusterIP(svc)) {
    if (!s.clusterIP && o.clusterIP) s.clusterIP = o.clusterIP;
    if (!s.clusterIPs?.length && o.clusterIPs?.length) s.clusterIPs = [...o.clusterIPs];
  }
  if (needsNodePort(old) && needsNodePort(svc)) {
    const newUsed = new Set(serviceNodePorts(svc));
    const used = new Set(serviceNodePorts(old).filter((n) => newUsed.has(n)));
    const byName = new Map<string, number>();
    for (const p of o.ports ?? []) byName.set(p.name ?? '', p.nodePort ?? 0);
    for (const p of s.ports ?? []) {
      if (!p.nodePort) {
        const v = byName.get(p.name ?? '') ?? 0;
        if (v && !used.has(v)) p.nodePort = v;
      }
    }
  }
  if (needsHealthCheck(old) && needsHealthCheck(svc) && !s.healthCheckNodePort && o.healthCheckNodePort) s.healthCheckNodePort = o.healthCheckNodePort;
}

/**
 * initIPFamilyFields on a single-stack IPv4 cluster: ipFamilyPolicy defaults to SingleStack (the
 * old object's on update; RequireDualStack for headless without selector), ipFamilies to IPv4;
 * families or policies this cluster cannot serve are refused with upstream's messages.
 */
export function initIPFamilyFields(svc: Service, old: Service | undefined): void {
  if (svc.spec?.type === 'ExternalName') return;
  const s = spec(svc);
  const name = svc.metadata?.name ?? '';
  const headlessSelectorless = s.clusterIP === 'None' && Object.keys(s.selector ?? {}).length === 0;
  if (s.ipFamilyPolicy === undefined) {
    if (old?.spec?.ipFamilyPolicy !== undefined) s.ipFamilyPolicy = old.spec.ipFamilyPolicy;
    else s.ipFamilyPolicy = headlessSelectorless ? 'RequireDualStack' : 'SingleStack';
  }
  // Loose pre-validation, so that what follows reads well-formed values.
  const pre = clusterIPsRelatedIssues(svc);
  if (pre.length) throw invalid(SERVICE, name, pre);
  const issues: FieldIssue[] = [];
  if (s.ipFamilyPolicy === 'SingleStack') {
    if (s.clusterIPs?.length === 2) {
      issues.push(
        fieldIssue.invalid('spec.ipFamilyPolicy', s.ipFamilyPolicy, "must be 'RequireDualStack' or 'PreferDualStack' when multiple cluster IPs are specified"),
      );
    }
    if (s.ipFamilies?.length === 2) {
      issues.push(
        fieldIssue.invalid('spec.ipFamilyPolicy', s.ipFamilyPolicy, "must be 'RequireDualStack' or 'PreferDualStack' when multiple IP families are specified"),
      );
    }
  }
  const ips = s.clusterIPs ?? [];
  for (let i = 0; i < ips.length; i++) {
    const ip = ips[i]!;
    if (ip === 'None') break;
    const fam = ipFamilyOf(ip);
    if (i >= (s.ipFamilies?.length ?? 0)) {
      if (fam !== 'IPv4') issues.push(fieldIssue.invalid(`spec.clusterIPs[${i}]`, ips, `${fam} is not configured on this cluster`));
      else (s.ipFamilies ??= []).push(fam);
    }
  }
  if (issues.length) throw invalid(SERVICE, name, issues);
  if (headlessSelectorless) {
    if (!s.ipFamilies?.length) s.ipFamilies = ['IPv4'];
    if (s.ipFamilies.length < 2 && s.ipFamilyPolicy !== 'SingleStack') s.ipFamilies.push(s.ipFamilies[0] === 'IPv4' ? 'IPv6' : 'IPv4');
    return;
  }
  if (s.ipFamilyPolicy === 'RequireDualStack') {
    issues.push(fieldIssue.invalid('spec.ipFamilyPolicy', s.ipFamilyPolicy, 'this cluster is not configured for dual-stack services'));
  }
  (s.ipFamilies ?? []).forEach((f, i) => {
    if (f !== 'IPv4') issues.push(fieldIssue.invalid(`spec.ipFamilies[${i}]`, f, 'not configured on this cluster'));
  });
  if (issues.length) throw invalid(SERVICE, name, issues);
  if (!s.ipFamilies?.length) s.ipFamilies = ['IPv4'];
}
