// EndpointSlice's strategy (pkg/registry/discovery/endpointslice/strategy.go), validation
// (pkg/apis/discovery/validation: ValidateEndpointSlice, ...Update) and printer columns
// (printEndpointSlice).
import { fieldIssue, type FieldIssue } from '../../../apimachinery/errors.js';
import type { KubeObject } from '../../../apimachinery/types.js';
import { isDNS1123Label, isDNS1123Subdomain } from '../../../apimachinery/validation/names.js';
import { endpointIPIssues, ipFamilyOf } from '../../core/netvalidation.js';
import type { Strategy } from '../../strategy.js';
import { ageColumn, ageSince, nameColumn } from '../../table.js';

interface Endpoint {
  addresses?: string[];
  hostname?: string;
  nodeName?: string;
  conditions?: { ready?: boolean; serving?: boolean; terminating?: boolean };
}
interface Port {
  name?: string;
  port?: number;
  protocol?: string;
}
type EndpointSlice = KubeObject & { addressType?: string; endpoints?: Endpoint[]; ports?: Port[] };

const ADDRESS_TYPES = ['FQDN', 'IPv4', 'IPv6'];
const PROTOCOLS = ['SCTP', 'TCP', 'UDP'];
const MAX_ENDPOINTS = 1000;
const MAX_ADDRESSES = 100;
const MAX_PORTS = 20000;

function addressIssues(addressType: string, a: string, path: string): FieldIssue[] {
  switch (addressType) {
    case 'IPv4':
      if (ipFamilyOf(a) !== 'IPv4') return [fieldIssue.invalid(path, a, 'must be a valid IPv4 address')];
      return endpointIPIssues(path, a);
    case 'IPv6':
      if (ipFamilyOf(a) !== 'IPv6') return [fieldIssue.invalid(path, a, 'must be a valid IPv6 address')];
      return endpointIPIssues(path, a);
    case 'FQDN':
      return isDNS1123Subdomain(a).map((m) => fieldIssue.invalid(path, a, m));
    default:
      return [];
  }
}

/** ValidateEndpointSlice. */
function validateEndpointSlice(o: KubeObject): FieldIssue[] {
  const s = o as EndpointSlice;
  const issues: FieldIssue[] = [];
  const at = s.addressType ?? '';
  if (!at) issues.push(fieldIssue.required('addressType', ''));
  else if (!ADDRESS_TYPES.includes(at)) issues.push(fieldIssue.notSupported('addressType', at, ADDRESS_TYPES));
  const eps = s.endpoints ?? [];
  if (eps.length > MAX_ENDPOINTS) issues.push(fieldIssue.tooMany('endpoints', eps.length, MAX_ENDPOINTS));
  eps.forEach((ep, i) => {
    const path = `endpoints[${i}]`;
    const addrs = ep.addresses ?? [];
    if (addrs.length === 0) issues.push(fieldIssue.required(`${path}.addresses`, 'must contain at least 1 address'));
    else if (addrs.length > MAX_ADDRESSES) issues.push(fieldIssue.tooMany(`${path}.addresses`, addrs.length, MAX_ADDRESSES));
    addrs.forEach((a, j) => issues.push(...addressIssues(at, a, `${path}.addresses[${j}]`)));
    if (ep.nodeName) for (const m of isDNS1123Subdomain(ep.nodeName)) issues.push(fieldIssue.invalid(`${path}.nodeName`, ep.nodeName, m));
    if (ep.hostname) for (const m of isDNS1123Label(ep.hostname)) issues.push(fieldIssue.invalid(`${path}.hostname`, ep.hostname, m));
  });
  const ports = s.ports ?? [];
  if (ports.length > MAX_PORTS) issues.push(fieldIssue.tooMany('ports', ports.length, MAX_PORTS));
  const names = new Set<string>();
  ports.forEach((p, i) => {
    const path = `ports[${i}]`;
    const name = p.name ?? '';
    if (name) for (const m of isDNS1123Label(name)) issues.push(fieldIssue.invalid(`${path}.name`, name, m));
    if (names.has(name)) issues.push(fieldIssue.duplicate(`${path}.name`, name));
    names.add(name);
    if (!p.protocol) issues.push(fieldIssue.required(`${path}.protocol`, ''));
    else if (!PROTOCOLS.includes(p.protocol)) issues.push(fieldIssue.notSupported(`${path}.protocol`, p.protocol, PROTOCOLS));
    if (p.port !== undefined && !(p.port >= 1 && p.port <= 65535))
      issues.push(fieldIssue.invalid(`${path}.port`, p.port, 'must be between 1 and 65535, inclusive'));
  });
  return issues;
}

/** SetDefaults_EndpointPort: protocol TCP, name "". */
function defaultEndpointSlice(o: KubeObject): void {
  for (const p of (o as EndpointSlice).ports ?? []) {
    if (!p || typeof p !== 'object') continue;
    p.protocol ??= 'TCP';
    p.name ??= '';
  }
}

function listWithMore(list: string[], count: number): string {
  if (count > 3) return `${list.join(',')} + ${count - 3} more...`;
  return list.length ? list.join(',') : '<unset>';
}

/** formatDiscoveryPorts: up to three port numbers (name, or `*` when unset). */
export function formatSlicePorts(o: KubeObject): string {
  const ports = (o as EndpointSlice).ports ?? [];
  return listWithMore(
    ports.slice(0, 3).map((p) => (p.port !== undefined ? String(p.port) : p.name || '*')),
    ports.length,
  );
}

/** formatDiscoveryEndpoints: up to three addresses. */
export function formatSliceEndpoints(o: KubeObject): string {
  const all = ((o as EndpointSlice).endpoints ?? []).flatMap((e) => e.addresses ?? []);
  return listWithMore(all.slice(0, 3), all.length);
}

export const endpointSliceStrategy: Strategy = {
  namespaced: true,
  allowCreateOnUpdate: false,
  allowUnconditionalUpdate: true,
  finalizerNames: 'kube',
  defaults: defaultEndpointSlice,
  prepareForCreate() {},
  prepareForUpdate() {},
  validate: validateEndpointSlice,
  // ValidateEndpointSliceUpdate: addressType is immutable.
  validateUpdate: (o, old) => [
    ...validateEndpointSlice(o),
    ...((o as EndpointSlice).addressType !== (old as EndpointSlice).addressType
      ? [fieldIssue.invalid('addressType', (o as EndpointSlice).addressType ?? '', 'field is immutable')]
      : []),
  ],
  tableColumns: [
    nameColumn,
    { name: 'AddressType', type: 'string', description: 'The type of address held in the EndpointSlice', priority: 0 },
    { name: 'Ports', type: 'string', description: 'The ports contained in the EndpointSlice', priority: 0 },
    { name: 'Endpoints', type: 'string', description: 'The endpoints contained in the EndpointSlice', priority: 0 },
    ageColumn,
  ],
  tableCells: (o) => [
    o.metadata?.name ?? '',
    (o as EndpointSlice).addressType ?? '',
    formatSlicePorts(o),
    formatSliceEndpoints(o),
    ageSince(o.metadata?.creationTimestamp),
  ],
};
