// kube's IP and CIDR CEL libraries (k8s.io/apiserver/pkg/cel/library/ip.go and cidr.go, kube
// 1.30+), over Go's netip semantics: `ip('192.0.2.1').family()`, `isIP(s)`, `ip.isCanonical(s)`,
// `isUnspecified/isLoopback/isLinkLocalMulticast/isLinkLocalUnicast/isGlobalUnicast()`,
// `cidr('192.0.2.0/24').containsIP(ip | string)`, `containsCIDR(cidr | string)`, `ip()`,
// `masked()`, `prefixLength()`, `isCIDR(s)`, `string(...)` and `==`. Zones and IPv4-mapped IPv6
// addresses are refused, as upstream. Addresses are parsed as netip.ParseAddr parses them, with its
// error texts.
import { EvaluationError, type Environment } from '@marcbachmann/cel-js';
import { goQuote } from '../../golang/strconv.js';

/** apiservercel.IP: 4 or 16 bytes. */
export class IPValue {
  constructor(readonly bytes: Uint8Array) {}

  get is4(): boolean {
    return this.bytes.length === 4;
  }

  /** netip.Addr.String(): dotted IPv4, RFC 5952 IPv6. */
  toString(): string {
    const b = this.bytes;
    if (this.is4) return b.join('.');
    const groups: number[] = [];
    for (let i = 0; i < 16; i += 2) groups.push((b[i]! << 8) | b[i + 1]!);
    // The longest run of two or more zero groups (the first of equal ones) becomes `::`.
    let best = -1;
    let bestLen = 1;
    for (let i = 0; i < 8; ) {
      if (groups[i] !== 0) {
        i++;
        continue;
      }
      let j = i;
      while (j < 8 && groups[j] === 0) j++;
      if (j - i > bestLen) {
        best = i;
        bestLen = j - i;
      }
      i = j;
    }
    const hex = (from: number, to: number): string =>
      groups
        .slice(from, to)
        .map((g) => g.toString(16))
        .join(':');
    return best < 0 ? hex(0, 8) : `${hex(0, best)}::${hex(best + bestLen, 8)}`;
  }

  equals(o: IPValue): boolean {
    return this.bytes.length === o.bytes.length && this.bytes.every((x, i) => x === o.bytes[i]);
  }
}

/** apiservercel.CIDR: an address and a prefix length. */
export class CIDRValue {
  constructor(
    readonly ip: IPValue,
    readonly bits: number,
  ) {}

  toString(): string {
    return `${this.ip.toString()}/${this.bits}`;
  }

  masked(): CIDRValue {
    const b = Uint8Array.from(this.ip.bytes);
    for (let i = 0; i < b.length; i++) {
      const keep = Math.max(0, Math.min(8, this.bits - i * 8));
      b[i]! &= (0xff << (8 - keep)) & 0xff;
    }
    return new CIDRValue(new IPValue(b), this.bits);
  }

  contains(ip: IPValue): boolean {
    return ip.bytes.length === this.ip.bytes.length && new CIDRValue(ip, this.bits).masked().ip.equals(this.masked().ip);
  }
}

/** A netip parse failure: the reason, and the rest of the text where it was found. */
interface AddrError {
  msg: string;
  at?: string;
}

/** netip's parseIPv4: the four bytes, or why not. */
function parseIPv4(s: string): Uint8Array | AddrError {
  const fields = new Uint8Array(4);
  let val = 0;
  let pos = 0;
  let digits = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0x30 && c <= 0x39) {
      if (digits === 1 && val === 0) return { msg: 'IPv4 field has octet with leading zero' };
      val = val * 10 + (c - 0x30);
      digits++;
      if (val > 255) return { msg: 'IPv4 field has value >255' };
    } else if (s[i] === '.') {
      // `.1.2.3`, `1.2.3.`, `1..2.3`
      if (i === 0 || i === s.length - 1 || s[i - 1] === '.') return { msg: 'IPv4 field must have at least one digit', at: s.slice(i) };
      if (pos === 3) return { msg: 'IPv4 address too long' };
      fields[pos++] = val;
      val = 0;
      digits = 0;
    } else return { msg: 'unexpected character', at: s.slice(i) };
  }
  if (pos < 3) return { msg: 'IPv4 address too short' };
  fields[3] = val;
  return fields;
}

const addrErrorText = (input: string, e: AddrError): string => `ParseAddr(${goQuote(input)}): ${e.msg}${e.at ? ` (at ${goQuote(e.at)})` : ''}`;

/** netip's parseIPv6 (zone split off first): the sixteen bytes and the zone, or why not. */
function parseIPv6(input: string): { bytes: Uint8Array; zone: string } | AddrError {
  let s = input;
  let zone = '';
  const pct = s.indexOf('%');
  if (pct >= 0) {
    zone = s.slice(pct + 1);
    s = s.slice(0, pct);
    if (zone === '') return { msg: 'zone must be a non-empty string' };
  }
  const ip = new Uint8Array(16);
  let ellipsis = -1; // where `::` stands, in bytes
  if (s.startsWith('::')) {
    ellipsis = 0;
    s = s.slice(2);
    if (s === '') return { bytes: ip, zone };
  }
  let i = 0;
  while (i < 16) {
    let off = 0;
    let acc = 0;
    for (; off < s.length; off++) {
      const d = parseInt(s[off]!, 16);
      if (Number.isNaN(d)) break;
      acc = acc * 16 + d;
      if (acc > 0xffff) return { msg: 'IPv6 field has value >=2^16', at: s };
    }
    if (off === 0) return { msg: 'each colon-separated field must have at least one digit', at: s };
    if (s[off] === '.') {
      // A trailing IPv4 address.
      if (ellipsis < 0 && i !== 12) return { msg: 'embedded IPv4 address must replace the final 2 fields of the address', at: s };
      if (i + 4 > 16) return { msg: 'too many hex fields to fit an embedded IPv4 at the end of the address', at: s };
      const v4 = parseIPv4(s);
      if (!(v4 instanceof Uint8Array)) return { msg: addrErrorText(s, v4), at: s };
      ip.set(v4, i);
      s = '';
      i += 4;
      break;
    }
    ip[i] = acc >> 8;
    ip[i + 1] = acc & 0xff;
    i += 2;
    s = s.slice(off);
    if (s === '') break;
    if (s[0] !== ':') return { msg: 'unexpected character, want colon', at: s };
    if (s.length === 1) return { msg: 'colon must be followed by more characters', at: s };
    s = s.slice(1);
    if (s[0] === ':') {
      if (ellipsis >= 0) return { msg: 'multiple :: in address', at: s };
      ellipsis = i;
      s = s.slice(1);
      if (s === '') break;
    }
  }
  if (s !== '') return { msg: 'trailing garbage after address', at: s };
  if (i < 16) {
    if (ellipsis < 0) return { msg: 'address string too short' };
    const n = 16 - i;
    ip.copyWithin(ellipsis + n, ellipsis, i);
    ip.fill(0, ellipsis, ellipsis + n);
  } else if (ellipsis >= 0) return { msg: 'the :: must expand to at least one field of zeros' };
  return { bytes: ip, zone };
}

const is4In6 = (b: Uint8Array): boolean => b.length === 16 && b.slice(0, 10).every((x) => x === 0) && b[10] === 0xff && b[11] === 0xff;

/** netip.ParseAddr: the address and its zone, or Go's error text. */
function parseAddr(s: string): { ip: IPValue; zone: string } | { error: string } {
  const fail = (e: AddrError): { error: string } => ({ error: addrErrorText(s, e) });
  for (const c of s) {
    if (c === '.') {
      const v4 = parseIPv4(s);
      return v4 instanceof Uint8Array ? { ip: new IPValue(v4), zone: '' } : fail(v4);
    }
    if (c === ':') {
      const v6 = parseIPv6(s);
      return 'bytes' in v6 ? { ip: new IPValue(v6.bytes), zone: v6.zone } : fail(v6);
    }
    // An IPv6 address's zone, without the address.
    if (c === '%') return fail({ msg: 'missing IPv6 address' });
  }
  return fail({ msg: 'unable to parse IP' });
}

/** library.parseIPAddr: no zones, no IPv4-mapped IPv6 addresses. */
function parseIP(raw: string): IPValue | string {
  const r = parseAddr(raw);
  if ('error' in r) return `IP Address ${goQuote(raw)} parse error during conversion from string: ${r.error}`;
  if (r.zone) return `IP address ${goQuote(raw)} with zone value is not allowed`;
  if (is4In6(r.ip.bytes)) return `IPv4-mapped IPv6 address ${goQuote(raw)} is not allowed`;
  return r.ip;
}

/** library.parseCIDR over netip.ParsePrefix (stringToCIDR wraps its error once more, as upstream). */
function parseCIDR(raw: string): CIDRValue | string {
  const wrap = (why: string): string => `network address parse error during conversion from string: netip.ParsePrefix(${goQuote(raw)}): ${why}`;
  const slash = raw.lastIndexOf('/');
  if (slash < 0) return wrap("no '/'");
  const addr = raw.slice(0, slash);
  const r = parseAddr(addr);
  if ('error' in r) return wrap(r.error);
  if (r.zone) return wrap('IPv6 zones cannot be present in a prefix');
  const bitsText = raw.slice(slash + 1);
  if (!/^(0|[1-9][0-9]*)$/.test(bitsText) || bitsText.length > 3) return wrap(`bad bits after slash: ${goQuote(bitsText)}`);
  const bits = Number(bitsText);
  if (bits > r.ip.bytes.length * 8) return wrap('prefix length out of range');
  if (is4In6(r.ip.bytes)) return `IPv4-mapped IPv6 address ${goQuote(raw)} is not allowed`;
  return new CIDRValue(r.ip, bits);
}

function v4in(b: Uint8Array, first: number, second?: number): boolean {
  return b.length === 4 && b[0] === first && (second === undefined || b[1] === second);
}

const isLoopback = (ip: IPValue): boolean => (ip.is4 ? ip.bytes[0] === 127 : ip.bytes.every((x, i) => x === (i === 15 ? 1 : 0)));
const isUnspecified = (ip: IPValue): boolean => ip.bytes.every((x) => x === 0);
const isMulticast = (ip: IPValue): boolean => (ip.is4 ? (ip.bytes[0]! & 0xf0) === 0xe0 : ip.bytes[0] === 0xff);
const isLinkLocalUnicast = (ip: IPValue): boolean => (ip.is4 ? v4in(ip.bytes, 169, 254) : ip.bytes[0] === 0xfe && (ip.bytes[1]! & 0xc0) === 0x80);
const isLinkLocalMulticast = (ip: IPValue): boolean =>
  ip.is4 ? v4in(ip.bytes, 224, 0) && ip.bytes[2] === 0 : ip.bytes[0] === 0xff && (ip.bytes[1]! & 0x0f) === 0x02;
const isGlobalUnicast = (ip: IPValue): boolean =>
  !(ip.is4 && ip.bytes.every((x) => x === 255)) && !isUnspecified(ip) && !isLoopback(ip) && !isMulticast(ip) && !isLinkLocalUnicast(ip);

class IPNamespace {}

/** Declares the IP and CIDR libraries on `env`; `charge` takes each call's cost. */
export function registerNet(env: Environment, charge: (n: number) => void): void {
  const fn = (sig: string, h: (...args: never[]) => unknown): void => {
    env.registerFunction(sig, h as (...args: unknown[]) => unknown);
  };
  const must = <T>(v: T | string): T => {
    if (typeof v === 'string') throw new EvaluationError(v);
    return v;
  };
  env.registerType('net.IP', { ctor: IPValue, fields: {} } as never);
  env.registerType('net.CIDR', { ctor: CIDRValue, fields: {} } as never);
  env.registerType('kubernetes.IPNamespace', { ctor: IPNamespace, fields: {} } as never);

  fn('ip(string): net.IP', (s: string) => (charge(1), must(parseIP(s))));
  fn('isIP(string): bool', (s: string) => (charge(1), typeof parseIP(s) !== 'string'));
  env.registerConstant('ip', 'kubernetes.IPNamespace', new IPNamespace());
  fn('kubernetes.IPNamespace.isCanonical(string): bool', (_: IPNamespace, s: string) => (charge(1), must(parseIP(s)).toString() === s));
  fn('net.IP.family(): int', (ip: IPValue) => (ip.is4 ? 4n : 6n));
  fn('net.IP.isUnspecified(): bool', isUnspecified);
  fn('net.IP.isLoopback(): bool', isLoopback);
  fn('net.IP.isLinkLocalMulticast(): bool', isLinkLocalMulticast);
  fn('net.IP.isLinkLocalUnicast(): bool', isLinkLocalUnicast);
  fn('net.IP.isGlobalUnicast(): bool', isGlobalUnicast);
  fn('string(net.IP): string', (ip: IPValue) => ip.toString());
  env.registerOperator('net.IP == net.IP', (a: IPValue, b: IPValue) => a.equals(b));

  const toCIDR = (s: string): CIDRValue => {
    const c = parseCIDR(s);
    return must(typeof c === 'string' ? `network address parse error during conversion from string: ${c}` : c);
  };
  fn('cidr(string): net.CIDR', (s: string) => (charge(1), toCIDR(s)));
  fn('isCIDR(string): bool', (s: string) => (charge(1), typeof parseCIDR(s) !== 'string'));
  fn('net.CIDR.containsIP(net.IP): bool', (c: CIDRValue, ip: IPValue) => c.contains(ip));
  fn('net.CIDR.containsIP(string): bool', (c: CIDRValue, s: string) => c.contains(must(parseIP(s))));
  const containsCIDR = (c: CIDRValue, o: CIDRValue): boolean => c.bits <= o.bits && c.contains(o.ip);
  fn('net.CIDR.containsCIDR(net.CIDR): bool', containsCIDR);
  fn('net.CIDR.containsCIDR(string): bool', (c: CIDRValue, s: string) => containsCIDR(c, toCIDR(s)));
  fn('net.CIDR.ip(): net.IP', (c: CIDRValue) => c.ip);
  fn('net.CIDR.masked(): net.CIDR', (c: CIDRValue) => c.masked());
  fn('net.CIDR.prefixLength(): int', (c: CIDRValue) => BigInt(c.bits));
  fn('string(net.CIDR): string', (c: CIDRValue) => c.toString());
  env.registerOperator('net.CIDR == net.CIDR', (a: CIDRValue, b: CIDRValue) => a.bits === b.bits && a.ip.equals(b.ip));
}
