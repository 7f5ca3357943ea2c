// Endpoints' strategy (pkg/registry/core/endpoint/strategy.go), validation (ValidateEndpoints)
// and printer columns (printEndpoints).
import { fieldIssue, type FieldIssue } from '../../../apimachinery/errors.js';
import type { KubeObject } from '../../../apimachinery/types.js';
import { isDNS1123Label, isDNS1123Subdomain } from '../../../apimachinery/validation/names.js';
import type { Strategy } from '../../strategy.js';
import { ageColumn, ageSince, nameColumn } from '../../table.js';
import { endpointIPIssues } from '../netvalidation.js';

interface Address {
  ip?: string;
  hostname?: string;
  nodeName?: string;
}
interface Port {
  name?: string;
  port?: number;
  protocol?: string;
  appProtocol?: string;
}
type Endpoints = KubeObject & { subsets?: { addresses?: Address[]; notReadyAddresses?: Address[]; ports?: Port[] }[] };

const PROTOCOLS = ['SCTP', 'TCP', 'UDP'];

function addressIssues(a: Address, path: string): FieldIssue[] {
  const issues = endpointIPIssues(`${path}.ip`, a.ip ?? '');
  if (a.hostname) for (const m of isDNS1123Label(a.hostname)) issues.push(fieldIssue.invalid(`${path}.hostname`, a.hostname, m));
  if (a.nodeName !== undefined) for (const m of isDNS1123Subdomain(a.nodeName)) issues.push(fieldIssue.invalid(`${path}.nodeName`, a.nodeName, m));
  return issues;
}

/** ValidateEndpoints (validateEndpointSubsets). */
function validateEndpoints(o: KubeObject): FieldIssue[] {
  const issues: FieldIssue[] = [];
  ((o as Endpoints).subsets ?? []).forEach((ss, i) => {
    const path = `subsets[${i}]`;
    const addrs = ss.addresses ?? [];
    const notReady = ss.notReadyAddresses ?? [];
    if (addrs.length === 0 && notReady.length === 0) {
      issues.push(fieldIssue.required(path, 'must specify `addresses` or `notReadyAddresses`'));
    }
    addrs.forEach((a, j) => issues.push(...addressIssues(a, `${path}.addresses[${j}]`)));
    notReady.forEach((a, j) => issues.push(...addressIssues(a, `${path}.notReadyAddresses[${j}]`)));
    const ports = ss.ports ?? [];
    ports.forEach((p, j) => {
      const pp = `${path}.ports[${j}]`;
      if (ports.length > 1 || p.name) {
        if (!p.name) issues.push(fieldIssue.required(`${pp}.name`, ''));
        else for (const m of isDNS1123Label(p.name)) issues.push(fieldIssue.invalid(`${pp}.name`, p.name, m));
      }
      if (!(typeof p.port === 'number' && p.port >= 1 && p.port <= 65535)) {
        issues.push(fieldIssue.invalid(`${pp}.port`, p.port ?? 0, 'must be between 1 and 65535, inclusive'));
      }
      if (!p.protocol) issues.push(fieldIssue.required(`${pp}.protocol`, ''));
      else if (!PROTOCOLS.includes(p.protocol)) issues.push(fieldIssue.notSupported(`${pp}.protocol`, p.protocol, PROTOCOLS));
    });
  });
  return issues;
}

/** SetDefaults_EndpointPort: protocol TCP. */
function defaultEndpoints(o: KubeObject): void {
  for (const ss of (o as Endpoints).subsets ?? []) for (const p of ss?.ports ?? []) if (p && !p.protocol) p.protocol = 'TCP';
}

/** formatEndpoints: up to three ip:port pairs, then `+ N more...`; `<none>` when empty. */
export function formatEndpoints(o: KubeObject): string {
  const list: string[] = [];
  let count = 0;
  for (const ss of (o as Endpoints).subsets ?? []) {
    const ports = ss.ports?.length ? ss.ports : [undefined];
    for (const a of ss.addresses ?? []) {
      for (const p of ports) {
        if (list.length < 3) list.push(p ? `${a.ip}:${p.port}` : (a.ip ?? ''));
        count++;
      }
    }
  }
  if (count > 3) return `${list.join(',')} + ${count - 3} more...`;
  return list.length ? list.join(',') : '<none>';
}

export const endpointsStrategy: Strategy = {
  namespaced: true,
  allowCreateOnUpdate: true,
  allowUnconditionalUpdate: true,
  finalizerNames: 'kube',
  defaults: defaultEndpoints,
  prepareForCreate() {},
  prepareForUpdate() {},
  validate: validateEndpoints,
  validateUpdate: (o) => validateEndpoints(o),
  tableColumns: [nameColumn, { name: 'Endpoints', type: 'string', description: 'Endpoints of the service', priority: 0 }, ageColumn],
  tableCells: (o) => [o.metadata?.name ?? '', formatEndpoints(o), ageSince(o.metadata?.creationTimestamp)],
};
