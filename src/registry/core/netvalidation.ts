// IP and CIDR checks of core/v1 validation (k8s.io/apimachinery/pkg/util/validation/ip.go and
// pkg/apis/core/validation), with upstream's messages. Parsing is ParseIPSloppy's: IPv4 parts may
// carry leading zeros.
import { isIPv6 } from 'node:net';
import { fieldIssue, type FieldIssue } from '../../apimachinery/errors.js';

/** An IPv4 address as a number (leading zeros allowed, as ParseIPSloppy), or undefined. */
export function parseIPv4(text: string): number | undefined {
  const parts = text.split('.');
  if (parts.length !== 4) return undefined;
  let n = 0;
  for (const p of parts) {
    if (!/^\d{1,3}$/.test(p)) return undefined;
    const v = Number(p);
    if (v > 255) return undefined;
    n = n * 256 + v;
  }
  return n;
}

export function ipFamilyOf(text: string): 'IPv4' | 'IPv6' | undefined {
  if (parseIPv4(text) !== undefined) return 'IPv4';
  if (isIPv6(text) && !text.includes('%')) return 'IPv6';
  return undefined;
}

export const isIP = (text: string): boolean => ipFamilyOf(text) !== undefined;

/** validation.IsValidIP. */
export function validIPIssues(path: string, value: string): FieldIssue[] {
  return isIP(value) ? [] : [fieldIssue.invalid(path, value, 'must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)')];
}

/** validation.IsValidCIDR. */
export function validCIDRIssues(path: string, value: string): FieldIssue[] {
  const m = /^([^/]+)\/(\d{1,3})$/.exec(value);
  const fam = m ? ipFamilyOf(m[1]!) : undefined;
  const bits = m ? Number(m[2]) : NaN;
  const ok = fam !== undefined && ((fam === 'IPv4' && bits <= 32) || (fam === 'IPv6' && bits <= 128));
  return ok ? [] : [fieldIssue.invalid(path, value, 'must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)')];
}

/** ValidateNonSpecialIP (externalIPs, endpoint addresses). */
export function nonSpecialIPIssues(path: string, value: string): FieldIssue[] {
  const fam = ipFamilyOf(value);
  if (!fam) return [fieldIssue.invalid(path, value, 'must be a valid IP address')];
  const issues: FieldIssue[] = [];
  if (fam === 'IPv4') {
    const n = parseIPv4(value)!;
    const a = n >>> 24;
    if (n === 0) issues.push(fieldIssue.invalid(path, value, 'may not be unspecified (0.0.0.0)'));
    if (a === 127) issues.push(fieldIssue.invalid(path, value, 'may not be in the loopback range (127.0.0.0/8, ::1/128)'));
    if (a === 169 && ((n >>> 16) & 255) === 254) issues.push(fieldIssue.invalid(path, value, 'may not be in the link-local range (169.254.0.0/16, fe80::/10)'));
    if (n >>> 8 === 0xe00000) issues.push(fieldIssue.invalid(path, value, 'may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)'));
  } else {
    const v = value.toLowerCase();
    if (/^[0:]+$/.test(v)) issues.push(fieldIssue.invalid(path, value, 'may not be unspecified (0.0.0.0)'));
    if (/^[0:]*:0*1$/.test(v) && v !== '1') issues.push(fieldIssue.invalid(path, value, 'may not be in the loopback range (127.0.0.0/8, ::1/128)'));
    if (/^fe[89ab]/.test(v)) issues.push(fieldIssue.invalid(path, value, 'may not be in the link-local range (169.254.0.0/16, fe80::/10)'));
    if (/^ff02:/.test(v)) issues.push(fieldIssue.invalid(path, value, 'may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)'));
  }
  return issues;
}

/**
 * ValidateEndpointIP / ValidateNonSpecialIP as kplane applies them to endpoint addresses and
 * externalIPs: upstream also refuses the loopback range, which is where kplane's loopback cloud
 * puts pods, nodes and external addresses (a documented difference, KEP-0008).
 */
export function endpointIPIssues(path: string, value: string): FieldIssue[] {
  const bad = validIPIssues(path, value);
  if (bad.length) return bad;
  return nonSpecialIPIssues(path, value).filter((i) => !String(i.detail).startsWith('may not be in the loopback range'));
}
