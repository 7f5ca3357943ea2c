// node-sim's addresses, all on loopback: node i gets the i-th address of --node-cidr skipping
// .0 and .251-.255 of each /24 (127.2.0.0/16: node 0 → 127.2.0.1, node 249 → 127.2.0.250, node
// 250 → 127.2.1.1), and the i-th /24 of --pod-cidr as its spec.podCIDR (node i → 127.3.i.0/24),
// whose .2-.254 are its pods' IPs (.1 is the node's bridge, as host-local's gateway).

export interface IPv4CIDR {
  readonly base: number;
  readonly bits: number;
}

export function parseIPv4(s: string): number | undefined {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(s);
  if (!m) return undefined;
  const o = m.slice(1).map(Number);
  if (o.some((x) => x > 255)) return undefined;
  return ((o[0]! << 24) >>> 0) + (o[1]! << 16) + (o[2]! << 8) + o[3]!;
}

export const formatIPv4 = (n: number): string => [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.');

/** A loopback IPv4 CIDR (127.0.0.0/8 only: node-sim never uses another range). */
export function parseLoopbackCIDR(flag: string, s: string): IPv4CIDR {
  const [ip, bitsText] = s.split('/');
  const addr = parseIPv4(ip ?? '');
  const bits = Number(bitsText);
  if (addr === undefined || !/^\d+$/.test(bitsText ?? '') || bits < 8 || bits > 30) throw new Error(`${flag}: invalid CIDR address: ${s}`);
  const mask = bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0;
  const base = (addr & mask) >>> 0;
  if (base >>> 24 !== 127) throw new Error(`${flag}: ${s} is not in 127.0.0.0/8 (node-sim only uses loopback addresses)`);
  return { base, bits };
}

const size = (c: IPv4CIDR): number => 2 ** (32 - c.bits);

export function nodeIP(cidr: IPv4CIDR, i: number): string {
  const n = cidr.base + Math.floor(i / 250) * 256 + (i % 250) + 1;
  if (n - cidr.base >= size(cidr)) throw new Error(`node ${i} does not fit in ${formatIPv4(cidr.base)}/${cidr.bits}`);
  return formatIPv4(n);
}

/** Node i's pod range (a /24). */
export function podCIDR(cidr: IPv4CIDR, i: number): string {
  if (cidr.bits > 24 || (i + 1) * 256 > size(cidr)) throw new Error(`node ${i} has no /24 left in ${formatIPv4(cidr.base)}/${cidr.bits}`);
  return `${formatIPv4(cidr.base + i * 256)}/24`;
}

/** Free pod IPs of one node's /24, lowest first. */
export class PodIPPool {
  private readonly used = new Set<number>();
  private readonly base: number;

  constructor(cidr24: string) {
    this.base = parseIPv4(cidr24.split('/')[0]!)!;
  }

  /** Takes `ip` if it is in this range and free (an adopted pod keeps its IP). */
  claim(ip: string): boolean {
    const n = parseIPv4(ip);
    if (n === undefined || n - this.base < 2 || n - this.base > 254 || this.used.has(n - this.base)) return false;
    this.used.add(n - this.base);
    return true;
  }

  take(): string | undefined {
    for (let o = 2; o <= 254; o++) {
      if (!this.used.has(o)) {
        this.used.add(o);
        return formatIPv4(this.base + o);
      }
    }
    return undefined;
  }

  release(ip: string): void {
    const n = parseIPv4(ip);
    if (n !== undefined) this.used.delete(n - this.base);
  }
}
