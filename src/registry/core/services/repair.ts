// Upstream's ipallocator and portallocator repair controllers (pkg/registry/core/service/
// {ipallocator,portallocator}/controller/repair.go), run once when the control plane starts: the
// stored bitmaps are rebuilt from the Services that exist, so that an item leaked by a crash
// between allocation and write is free again and an item a Service holds is taken. What cannot be
// repaired (an item outside the configured range, one held twice) is reported, as upstream does.
import type { Storage } from '../../../storage/storage.js';
import type { GenericStore } from '../../store.js';
import type { ServiceAllocators } from './alloc.js';
import { needsClusterIP, needsHealthCheck, serviceNodePorts, type Service } from './types.js';

export async function repairServiceAllocations(alloc: ServiceAllocators, storage: Storage, store: GenericStore, log: (msg: string) => void): Promise<void> {
  const ranges = alloc.ranges(storage);
  for (const [r, what] of [
    [ranges.ips, 'service cluster IP range'],
    [ranges.ports, 'service node port range'],
  ] as const) {
    const stored = await r.storedRange();
    if (stored !== undefined && stored !== r.range.text)
      log(`repair: the stored ${what} ${stored} differs from the configured ${r.range.text}; using ${r.range.text}`);
  }
  const list = await store.list(undefined);
  const ips = new Map<string, string>();
  const ports = new Map<number, string>();
  for (const item of list.items as Service[]) {
    const who = `${item.metadata?.namespace ?? ''}/${item.metadata?.name ?? ''}`;
    if (needsClusterIP(item) && item.spec?.clusterIPs?.[0] !== 'None') {
      for (const ip of item.spec?.clusterIPs ?? []) {
        if (ips.has(ip)) log(`repair: the cluster IP ${ip} for service ${who} was assigned to multiple services; please recreate`);
        else if (alloc.ipRange.indexOf(ip) === undefined)
          log(`repair: the cluster IP ${ip} for service ${who} is not within the service CIDR ${alloc.ipRange.text}; please recreate`);
        ips.set(ip, who);
      }
    }
    const held = [...serviceNodePorts(item), ...(needsHealthCheck(item) && item.spec?.healthCheckNodePort ? [item.spec.healthCheckNodePort] : [])];
    for (const p of new Set(held)) {
      if (ports.has(p)) log(`repair: the node port ${p} for service ${who} was assigned to multiple services; please recreate`);
      else if (alloc.portRange.indexOf(p) === undefined)
        log(`repair: the node port ${p} for service ${who} is not within the port range ${alloc.portRange.text}; please recreate`);
      ports.set(p, who);
    }
  }
  await ranges.ips.replaceWith(ips.keys());
  await ranges.ports.replaceWith(ports.keys());
}
