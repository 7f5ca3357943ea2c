// ValidateService, ValidateServiceUpdate and ValidateServiceStatusUpdate
// (pkg/apis/core/validation/validation.go), with upstream's paths and messages.
import { GoRenderedValue, fieldIssue, type FieldIssue } from '../../../apimachinery/errors.js';
import { isDNS1123Label, isDNS1123Subdomain, isQualifiedName } from '../../../apimachinery/validation/names.js';
import { validateLabels } from '../../../apimachinery/validation/objectmeta.js';
import { endpointIPIssues, ipFamilyOf, isIP, validCIDRIssues, validIPIssues } from '../netvalidation.js';
import { externallyAccessible, isHeadless, needsHealthCheck, type LoadBalancerIngress, type Service, type ServicePort } from './types.js';

const SERVICE_TYPES = ['ClusterIP', 'ExternalName', 'LoadBalancer', 'NodePort'];
const PROTOCOLS = ['SCTP', 'TCP', 'UDP'];
const AFFINITIES = ['ClientIP', 'None'];
const ETPS = ['Cluster', 'Local'];
const ITPS = ['Cluster', 'Local'];
const IP_FAMILIES = ['IPv4', 'IPv6'];
const IP_FAMILY_POLICIES = ['PreferDualStack', 'RequireDualStack', 'SingleStack'];
const IP_MODES = ['Proxy', 'VIP'];
const MAX_CLIENT_IP_AFFINITY_SECONDS = 86400;
const KUBELET_PORT = 10250;
const PORT_RANGE_MSG = 'must be between 1 and 65535, inclusive';
const SOURCE_RANGES_ANNOTATION = 'service.beta.kubernetes.io/load-balancer-source-ranges';

const isPortNum = (n: unknown): boolean => typeof n === 'number' && Number.isInteger(n) && n >= 1 && n <= 65535;

/** IsValidPortName (an IANA_SVC_NAME). */
function portNameIssues(path: string, name: string): FieldIssue[] {
  const issues: FieldIssue[] = [];
  if (name.length > 15) issues.push(fieldIssue.invalid(path, name, 'must be no more than 15 characters'));
  if (!/^[-a-z0-9]+$/.test(name)) issues.push(fieldIssue.invalid(path, name, 'must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)'));
  if (name.includes('--')) issues.push(fieldIssue.invalid(path, name, 'must not contain consecutive hyphens'));
  if (name.length > 0 && (name.startsWith('-') || name.endsWith('-'))) issues.push(fieldIssue.invalid(path, name, 'must not begin or end with a hyphen'));
  if (!/[a-z]/.test(name)) issues.push(fieldIssue.invalid(path, name, 'must contain at least one letter (a-z)'));
  return issues;
}

/** ValidatePortNumOrName. */
function portNumOrNameIssues(path: string, v: unknown): FieldIssue[] {
  if (typeof v === 'number') return isPortNum(v) ? [] : [fieldIssue.invalid(path, v, PORT_RANGE_MSG)];
  if (typeof v === 'string') return portNameIssues(path, v);
  return [];
}

/** validateServicePort. */
function servicePortIssues(p: ServicePort, requireName: boolean, names: Set<string>, path: string): FieldIssue[] {
  const issues: FieldIssue[] = [];
  const name = p.name ?? '';
  if (requireName && name === '') issues.push(fieldIssue.required(`${path}.name`, ''));
  else if (name !== '') {
    for (const m of isDNS1123Label(name)) issues.push(fieldIssue.invalid(`${path}.name`, name, m));
    if (names.has(name)) issues.push(fieldIssue.duplicate(`${path}.name`, name));
    else names.add(name);
  }
  if (!isPortNum(p.port)) issues.push(fieldIssue.invalid(`${path}.port`, p.port ?? 0, PORT_RANGE_MSG));
  if (!p.protocol) issues.push(fieldIssue.required(`${path}.protocol`, ''));
  else if (!PROTOCOLS.includes(p.protocol)) issues.push(fieldIssue.notSupported(`${path}.protocol`, p.protocol, PROTOCOLS));
  issues.push(...portNumOrNameIssues(`${path}.targetPort`, p.targetPort));
  if (p.appProtocol !== undefined) for (const m of isQualifiedName(p.appProtocol)) issues.push(fieldIssue.invalid(`${path}.appProtocol`, p.appProtocol, m));
  return issues;
}

/** ValidateServiceClusterIPsRelatedFields (also run by allocation before it reads them). */
export function clusterIPsRelatedIssues(svc: Service): FieldIssue[] {
  const s = svc.spec ?? {};
  if (s.type === 'ExternalName') return [];
  const issues: FieldIssue[] = [];
  const ips = s.clusterIPs ?? [];
  if (s.clusterIP) {
    if (ips.length === 0) issues.push(fieldIssue.required('spec.clusterIPs', ''));
    else if (ips[0] !== s.clusterIP) issues.push(fieldIssue.invalid('spec.clusterIPs', ips, 'first value must match `clusterIP`'));
  } else if (ips.length !== 0) {
    issues.push(fieldIssue.invalid('spec.clusterIPs', ips, 'must be empty when `clusterIP` is not specified'));
  }
  const seen = new Set<string>();
  (s.ipFamilies ?? []).forEach((f, i) => {
    if (!IP_FAMILIES.includes(f)) issues.push(fieldIssue.notSupported(`spec.ipFamilies[${i}]`, f, IP_FAMILIES));
    if (seen.has(f)) issues.push(fieldIssue.duplicate(`spec.ipFamilies[${i}]`, f));
    seen.add(f);
  });
  if (s.ipFamilyPolicy !== undefined && !IP_FAMILY_POLICIES.includes(s.ipFamilyPolicy)) {
    issues.push(fieldIssue.notSupported('spec.ipFamilyPolicy', s.ipFamilyPolicy, IP_FAMILY_POLICIES));
  }
  let invalidIPs = false;
  ips.forEach((ip, i) => {
    if (i === 0 && ip === 'None') {
      if (ips.length > 1) {
        invalidIPs = true;
        issues.push(fieldIssue.invalid('spec.clusterIPs', ips, "'None' must be the first and only value"));
      }
      return;
    }
    const bad = validIPIssues(`spec.clusterIPs[${i}]`, ip);
    if (bad.length) invalidIPs = true;
    issues.push(...bad);
  });
  if (ips.length > 2) issues.push(fieldIssue.invalid('spec.clusterIPs', ips, 'may only hold up to 2 values'));
  if (invalidIPs) return issues;
  if (ips.length > 1 && new Set(ips.map(ipFamilyOf)).size !== ips.length) {
    issues.push(fieldIssue.invalid('spec.clusterIPs', ips, 'may specify no more than one IP for each IP family'));
  }
  if (!isHeadless(svc) && ips.length > 0 && (s.ipFamilies?.length ?? 0) > 0) {
    ips.forEach((ip, i) => {
      const f = s.ipFamilies?.[i];
      if (f === 'IPv4' && ipFamilyOf(ip) === 'IPv6')
        issues.push(fieldIssue.invalid(`spec.clusterIPs[${i}]`, ip, `expected an IPv4 value as indicated by \`ipFamilies[${i}]\``));
      if (f === 'IPv6' && ipFamilyOf(ip) !== 'IPv6')
        issues.push(fieldIssue.invalid(`spec.clusterIPs[${i}]`, ip, `expected an IPv6 value as indicated by \`ipFamilies[${i}]\``));
    });
  }
  return issues;
}

/** ValidateService (the spec part; metadata is the store's, with the DNS-1035 name rule). */
export function validateService(svc: Service): FieldIssue[] {
  const s = svc.spec ?? {};
  const issues: FieldIssue[] = [];
  const ports = s.ports ?? [];
  if (ports.length === 0 && !isHeadless(svc) && s.type !== 'ExternalName') issues.push(fieldIssue.required('spec.ports', ''));
  switch (s.type) {
    case 'LoadBalancer':
      if (isHeadless(svc))
        issues.push(fieldIssue.invalid('spec.clusterIPs[0]', s.clusterIPs?.[0] ?? 'None', "may not be set to 'None' for LoadBalancer services"));
      ports.forEach((p, i) => {
        if (p.port === KUBELET_PORT) {
          issues.push(fieldIssue.invalid(`spec.ports[${i}]`, p.port, `may not expose port ${KUBELET_PORT} externally since it is used by kubelet`));
        }
      });
      break;
    case 'NodePort':
      if (isHeadless(svc)) issues.push(fieldIssue.invalid('spec.clusterIPs[0]', s.clusterIPs?.[0] ?? 'None', "may not be set to 'None' for NodePort services"));
      break;
    case 'ExternalName': {
      if ((s.clusterIPs?.length ?? 0) > 0) issues.push(fieldIssue.forbidden('spec.clusterIPs', 'may not be set for ExternalName services'));
      if ((s.ipFamilies?.length ?? 0) > 0) issues.push(fieldIssue.forbidden('spec.ipFamilies', 'may not be set for ExternalName services'));
      if (s.ipFamilyPolicy !== undefined) issues.push(fieldIssue.forbidden('spec.ipFamilyPolicy', 'may not be set for ExternalName services'));
      const cname = (s.externalName ?? '').replace(/\.$/, '');
      if (cname.length > 0) for (const m of isDNS1123Subdomain(cname)) issues.push(fieldIssue.invalid('spec.externalName', cname, m));
      else issues.push(fieldIssue.required('spec.externalName', ''));
      break;
    }
    default:
      break;
  }
  const names = new Set<string>();
  ports.forEach((p, i) => issues.push(...servicePortIssues(p, ports.length > 1, names, `spec.ports[${i}]`)));
  if (s.selector) issues.push(...validateLabels(s.selector, 'spec.selector'));
  if (!s.sessionAffinity) issues.push(fieldIssue.required('spec.sessionAffinity', ''));
  else if (!AFFINITIES.includes(s.sessionAffinity)) issues.push(fieldIssue.notSupported('spec.sessionAffinity', s.sessionAffinity, AFFINITIES));
  if (s.sessionAffinity === 'ClientIP') {
    const need = 'when session affinity type is ClientIP';
    const cfg = s.sessionAffinityConfig;
    if (!cfg) issues.push(fieldIssue.required('spec.sessionAffinityConfig', need));
    else if (!cfg.clientIP) issues.push(fieldIssue.required('spec.sessionAffinityConfig.clientIP', need));
    else if (cfg.clientIP.timeoutSeconds === undefined) issues.push(fieldIssue.required('spec.sessionAffinityConfig.clientIP.timeoutSeconds', need));
    else {
      const t = cfg.clientIP.timeoutSeconds;
      if (!(t > 0 && t <= MAX_CLIENT_IP_AFFINITY_SECONDS)) {
        issues.push(
          fieldIssue.invalid('spec.sessionAffinityConfig.clientIP.timeoutSeconds', t, `must be greater than 0 and less than ${MAX_CLIENT_IP_AFFINITY_SECONDS}`),
        );
      }
    }
  } else if (s.sessionAffinity === 'None' && s.sessionAffinityConfig) {
    issues.push(fieldIssue.forbidden('spec.sessionAffinityConfig', 'must not be set when session affinity is None'));
  }
  issues.push(...clusterIPsRelatedIssues(svc));
  // Loopback external IPs are accepted (kplane's loopback cloud lives in 127.0.0.0/8): see endpointIPIssues.
  (s.externalIPs ?? []).forEach((ip, i) => issues.push(...endpointIPIssues(`spec.externalIPs[${i}]`, ip)));
  if (!s.type) issues.push(fieldIssue.required('spec.type', ''));
  else if (!SERVICE_TYPES.includes(s.type)) issues.push(fieldIssue.notSupported('spec.type', s.type, SERVICE_TYPES));
  if (s.type === 'ClusterIP') {
    ports.forEach((p, i) => {
      if (p.nodePort) issues.push(fieldIssue.forbidden(`spec.ports[${i}].nodePort`, "may not be used when `type` is 'ClusterIP'"));
    });
  }
  const nodePorts = new Set<string>();
  ports.forEach((p, i) => {
    if (!p.nodePort) return;
    const k = `${p.protocol}/${p.nodePort}`;
    if (nodePorts.has(k)) issues.push(fieldIssue.duplicate(`spec.ports[${i}].nodePort`, p.nodePort));
    nodePorts.add(k);
  });
  const portKeys = new Set<string>();
  ports.forEach((p, i) => {
    const k = `${p.protocol}/${p.port}`;
    if (portKeys.has(k)) issues.push(fieldIssue.duplicate(`spec.ports[${i}]`, goServicePortKey(p)));
    portKeys.add(k);
  });
  if ((s.loadBalancerSourceRanges?.length ?? 0) > 0) {
    const path = 'spec.LoadBalancerSourceRanges';
    if (s.type !== 'LoadBalancer') issues.push(fieldIssue.forbidden(path, "may only be used when `type` is 'LoadBalancer'"));
    s.loadBalancerSourceRanges!.forEach((v, i) => issues.push(...validCIDRIssues(`${path}[${i}]`, v.trim())));
  } else {
    const val = svc.metadata?.annotations?.[SOURCE_RANGES_ANNOTATION];
    if (val !== undefined) {
      const path = `metadata.annotations[${SOURCE_RANGES_ANNOTATION}]`;
      if (s.type !== 'LoadBalancer') issues.push(fieldIssue.forbidden(path, "may only be used when `type` is 'LoadBalancer'"));
      const t = val.trim();
      if (t !== '') {
        for (const c of t.split(',')) {
          if (validCIDRIssues(path, c.trim()).length) {
            issues.push(fieldIssue.invalid(path, val, 'must be a comma separated list of CIDRs e.g. 192.168.0.0/16,10.0.0.0/8'));
            break;
          }
        }
      }
    }
  }
  if (s.allocateLoadBalancerNodePorts !== undefined && s.type !== 'LoadBalancer') {
    issues.push(fieldIssue.forbidden('spec.allocateLoadBalancerNodePorts', "may only be used when `type` is 'LoadBalancer'"));
  }
  if (s.type === 'LoadBalancer' && s.allocateLoadBalancerNodePorts === undefined) issues.push(fieldIssue.required('allocateLoadBalancerNodePorts', ''));
  issues.push(...loadBalancerClassIssues(undefined, svc));
  // validateServiceExternalTrafficPolicy
  if (!externallyAccessible(svc)) {
    if (s.externalTrafficPolicy)
      issues.push(fieldIssue.invalid('spec.externalTrafficPolicy', s.externalTrafficPolicy, 'may only be set for externally-accessible services'));
  } else if (!s.externalTrafficPolicy) issues.push(fieldIssue.required('spec.externalTrafficPolicy', ''));
  else if (!ETPS.includes(s.externalTrafficPolicy)) issues.push(fieldIssue.notSupported('spec.externalTrafficPolicy', s.externalTrafficPolicy, ETPS));
  if (!needsHealthCheck(svc)) {
    if (s.healthCheckNodePort) {
      issues.push(
        fieldIssue.invalid(
          'spec.healthCheckNodePort',
          s.healthCheckNodePort,
          "may only be set when `type` is 'LoadBalancer' and `externalTrafficPolicy` is 'Local'",
        ),
      );
    }
  } else if (!s.healthCheckNodePort) issues.push(fieldIssue.required('spec.healthCheckNodePort', ''));
  else if (!isPortNum(s.healthCheckNodePort)) issues.push(fieldIssue.invalid('spec.healthCheckNodePort', s.healthCheckNodePort, PORT_RANGE_MSG));
  // validateServiceInternalTrafficFieldsValue
  if (s.internalTrafficPolicy === undefined) {
    if (s.type === 'NodePort' || s.type === 'LoadBalancer' || s.type === 'ClusterIP') issues.push(fieldIssue.required('spec.internalTrafficPolicy', ''));
  } else if (!ITPS.includes(s.internalTrafficPolicy)) issues.push(fieldIssue.notSupported('spec.internalTrafficPolicy', s.internalTrafficPolicy, ITPS));
  if (s.trafficDistribution !== undefined && s.trafficDistribution !== 'PreferClose') {
    issues.push(fieldIssue.notSupported('spec.trafficDistribution', s.trafficDistribution, ['PreferClose']));
  }
  return issues;
}

/** Go's %#v of the ServicePort{Protocol, Port} key field.Duplicate is given. */
function goServicePortKey(p: ServicePort): GoRenderedValue {
  const protocol = JSON.stringify(p.protocol ?? '');
  return new GoRenderedValue(
    `core.ServicePort{Name:"", Protocol:${protocol}, AppProtocol:(*string)(nil), Port:${p.port ?? 0}, TargetPort:intstr.IntOrString{Type:0, IntVal:0, StrVal:""}, NodePort:0}`,
  );
}

/** validateLoadBalancerClassField. */
function loadBalancerClassIssues(old: Service | undefined, svc: Service): FieldIssue[] {
  const issues: FieldIssue[] = [];
  const cls = svc.spec?.loadBalancerClass;
  if (old) {
    const oldCls = old.spec?.loadBalancerClass;
    if (old.spec?.type === 'LoadBalancer' && svc.spec?.type === 'LoadBalancer' && oldCls !== cls) {
      issues.push(fieldIssue.invalid('spec.loadBalancerClass', cls ?? null, 'may not change once set'));
    }
    return issues;
  }
  if (cls !== undefined) {
    if (svc.spec?.type !== 'LoadBalancer') issues.push(fieldIssue.forbidden('spec.loadBalancerClass', "may only be used when `type` is 'LoadBalancer'"));
    else for (const m of isQualifiedName(cls)) issues.push(fieldIssue.invalid('spec.loadBalancerClass', cls, m));
  }
  return issues;
}

/** ValidateServiceUpdate: cluster IPs and families may not change (except from, to or on ExternalName). */
export function validateServiceUpdate(svc: Service, old: Service): FieldIssue[] {
  const issues: FieldIssue[] = [];
  const s = svc.spec ?? {};
  const o = old.spec ?? {};
  if (o.type !== 'ExternalName' && s.type !== 'ExternalName') {
    const a = o.clusterIPs ?? [];
    const b = s.clusterIPs ?? [];
    if (a.length === b.length) {
      a.forEach((ip, i) => {
        if (ip !== b[i]) issues.push(fieldIssue.invalid(`spec.clusterIPs[${i}]`, b, 'may not change once set'));
      });
    } else if (a.length > b.length) {
      if (b.length === 0) issues.push(fieldIssue.invalid('spec.clusterIPs[0]', b, 'primary clusterIP can not be unset'));
      else if (a[0] !== b[0]) issues.push(fieldIssue.invalid('spec.clusterIPs[0]', b, 'may not change once set'));
    } else if (a.length > 0 && a[0] !== b[0]) issues.push(fieldIssue.invalid('spec.clusterIPs[0]', b, 'may not change once set'));
    const fa = o.ipFamilies ?? [];
    const fb = s.ipFamilies ?? [];
    if (fa.length > 0 && fb.length > 0 && fa[0] !== fb[0]) issues.push(fieldIssue.invalid('spec.ipFamilies[0]', fb[0], 'may not change once set'));
  }
  issues.push(...loadBalancerClassIssues(old, svc));
  return [...issues, ...validateService(svc)];
}

/** ValidateLoadBalancerStatus (ValidateServiceStatusUpdate). */
export function validateServiceStatus(svc: Service): FieldIssue[] {
  const issues: FieldIssue[] = [];
  (svc.status?.loadBalancer?.ingress ?? []).forEach((ing: LoadBalancerIngress, i) => {
    const path = `status.loadBalancer.ingress[${i}]`;
    if (ing.ip && !isIP(ing.ip)) issues.push(fieldIssue.invalid(`${path}.ip`, ing.ip, 'must be a valid IP address'));
    if (ing.ipMode !== undefined && !ing.ip) issues.push(fieldIssue.forbidden(`${path}.ipMode`, 'may not be specified when `ip` is not'));
    else if (ing.ipMode !== undefined && !IP_MODES.includes(ing.ipMode)) issues.push(fieldIssue.notSupported(`${path}.ipMode`, ing.ipMode, IP_MODES));
    else if (ing.ipMode === undefined && ing.ip) issues.push(fieldIssue.required(`${path}.ipMode`, 'must be specified when `ip` is set'));
    if (ing.hostname) {
      for (const m of isDNS1123Subdomain(ing.hostname)) issues.push(fieldIssue.invalid(`${path}.hostname`, ing.hostname, m));
      if (isIP(ing.hostname)) issues.push(fieldIssue.invalid(`${path}.hostname`, ing.hostname, 'must be a DNS name, not an IP address'));
    }
  });
  return issues;
}
