// String formats kube-apiserver checks in custom resources: the kube-openapi strfmt registry
// restricted to apiextensions' supported list (pkg/apiserver/validation/formats.go). Each checker
// mirrors the Go parser it stands for closely enough for the inputs people write.
import { isIPv6 as nodeIsIPv6 } from 'node:net';

/** Normalized (dashes removed, as go-openapi does) names of the formats apiextensions keeps. */
export const SUPPORTED_STRING_FORMATS: ReadonlySet<string> = new Set([
  'bsonobjectid',
  'uri',
  'email',
  'hostname',
  'ipv4',
  'ipv6',
  'cidr',
  'mac',
  'uuid',
  'uuid3',
  'uuid4',
  'uuid5',
  'isbn',
  'isbn10',
  'isbn13',
  'creditcard',
  'ssn',
  'hexcolor',
  'rgbcolor',
  'byte',
  'password',
  'date',
  'duration',
  'datetime',
  'k8sshortname',
  'k8slongname',
]);

export const normalizeFormat = (f: string): string => f.replaceAll('-', '');

/**
 * StripUnsupportedFormatsPostProcessor: the format a validator actually uses for a schema with the
 * given types, or '' when kube drops it (unknown string formats, non-int32/int64 integer formats...).
 */
export function effectiveFormat(format: string | undefined, types: readonly string[]): string {
  if (!format) return '';
  const t = types.length === 1 ? types[0]! : '';
  switch (t) {
    case '':
    case 'string':
      return SUPPORTED_STRING_FORMATS.has(normalizeFormat(format)) ? format : '';
    case 'integer':
      return format === 'int32' || format === 'int64' ? format : '';
    case 'number':
      return format === 'float' || format === 'double' ? format : '';
    default:
      return '';
  }
}

const rxUUID = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;
const rxUUID3 = /^[0-9a-f]{8}-?[0-9a-f]{4}-?3[0-9a-f]{3}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;
const rxUUID4 = /^[0-9a-f]{8}-?[0-9a-f]{4}-?4[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$/i;
const rxUUID5 = /^[0-9a-f]{8}-?[0-9a-f]{4}-?5[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$/i;
const rxHostname =
  /^([a-zA-Z0-9\p{S}\p{L}]((-?[a-zA-Z0-9\p{S}\p{L}]{0,62})?)|([a-zA-Z0-9\p{S}\p{L}](([a-zA-Z0-9\-\p{S}\p{L}]{0,61}[a-zA-Z0-9\p{S}\p{L}])?)(\.)){1,}([a-zA-Z\p{L}]){2,63})$/u;
const rxCreditCard =
  /^(?:4[0-9]{12}(?:[0-9]{3})?|5[1-5][0-9]{14}|6(?:011|5[0-9][0-9])[0-9]{12}|3[47][0-9]{13}|3(?:0[0-5]|[68][0-9])[0-9]{11}|(?:2131|1800|35\d{3})\d{11})$/;
const rxISBN10 = /^(?:[0-9]{9}X|[0-9]{10})$/;
const rxISBN13 = /^(?:[0-9]{13})$/;
const rxHexcolor = /^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/;
const rxRGBcolor = /^rgb\(\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*,\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*,\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*\)$/;
const rxBase64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{4})$/;
const rxSSN = /^\d{3}[- ]?\d{2}[- ]?\d{4}$/;
const rxDateTime = /^([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))$/;
const rxShortName = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const rxLongName = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const rxGoDuration = /^[-+]?(0|(([0-9]+(\.[0-9]*)?|\.[0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$/;
const rxLooseDuration = /((\d+)\s*([A-Za-zµ]+))/g;
const rxEmailAddr = /^[^\s@<>()[\]\\,;:"]+(\.[^\s@<>()[\]\\,;:"]+)*@[^\s@<>()[\]\\,;:"]+$/;

/** Go's ParseIP(v4) as netutils.ParseIPSloppy: leading zeros allowed. */
function parseIPv4Sloppy(s: string): boolean {
  const parts = s.split('.');
  if (parts.length !== 4) return false;
  for (const p of parts) {
    if (!/^[0-9]{1,3}$/.test(p) || Number(p) > 255) return false;
  }
  return true;
}

function parseIPSloppy(s: string): boolean {
  if (parseIPv4Sloppy(s)) return true;
  if (s.includes('%')) return false; // Go's ParseIP rejects zones
  return nodeIsIPv6(s);
}

function isCIDR(s: string): boolean {
  const slash = s.indexOf('/');
  if (slash < 0) return false;
  const ip = s.slice(0, slash);
  const bits = s.slice(slash + 1);
  if (!/^[0-9]{1,3}$/.test(bits)) return false;
  if (parseIPv4Sloppy(ip)) return Number(bits) <= 32;
  return !ip.includes('%') && nodeIsIPv6(ip) && Number(bits) <= 128;
}

/** net.ParseMAC: 6, 8 or 20 octets as xx:xx.., xx-xx.. or xxxx.xxxx... */
function isMAC(s: string): boolean {
  if (s.length < 14) return false;
  if (s[2] === ':' || s[2] === '-') {
    const sep = s[2];
    const groups = s.split(sep);
    if (![6, 8, 20].includes(groups.length)) return false;
    return groups.every((g) => /^[0-9a-fA-F]{2}$/.test(g));
  }
  if (s[4] === '.') {
    const groups = s.split('.');
    if (![3, 4, 10].includes(groups.length)) return false;
    return groups.every((g) => /^[0-9a-fA-F]{4}$/.test(g));
  }
  return false;
}

/** url.ParseRequestURI: an absolute URI or an absolute path, no control bytes. */
function isRequestURI(s: string): boolean {
  if (!s) return false;
  // Go rejects ASCII control bytes in URLs.
  if (/[\x00-\x1f\x7f]/.test(s)) return false;
  if (s === '*') return true;
  const m = /^([a-zA-Z][a-zA-Z0-9+.-]*):(.*)$/s.exec(s);
  if (m) {
    const rest = m[2]!;
    if (rest.startsWith('//')) {
      const authority = rest.slice(2).split(/[/?]/, 1)[0]!;
      const hostport = authority.includes('@') ? authority.slice(authority.lastIndexOf('@') + 1) : authority;
      const colon = hostport.startsWith('[') ? hostport.indexOf(':', hostport.indexOf(']')) : hostport.lastIndexOf(':');
      if (colon >= 0 && !/^[0-9]*$/.test(hostport.slice(colon + 1))) return false;
    }
    return !/%(?![0-9a-fA-F]{2})/.test(rest);
  }
  if (s.startsWith(':')) return false;
  return s.startsWith('/') && !/%(?![0-9a-fA-F]{2})/.test(s);
}

const ANGLE_ADDR = /^(?:"[^"]*"|[^<>"]*)\s*<([^<>]+)>$/;

/** net/mail.ParseAddress, for the common `local@domain` and `Name <local@domain>` spellings. */
function isEmail(s: string): boolean {
  const t = s.trim();
  // The `Name <addr>` spelling ends with '>'; most addresses are plain and skip its regexp.
  const angle = t.endsWith('>') ? ANGLE_ADDR.exec(t) : null;
  const addr = angle ? angle[1]! : t;
  return rxEmailAddr.test(addr);
}

function isHostname(s: string): boolean {
  if (!rxHostname.test(s)) return false;
  if (Buffer.byteLength(s) > 255) return false;
  return s.split('.').every((p) => Buffer.byteLength(p) <= 63);
}

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** time.Parse("2006-01-02"): exact widths, real calendar days. */
export function isDate(s: string): boolean {
  const m = /^([0-9]{4})-([0-9]{2})-([0-9]{2})$/.exec(s);
  if (!m) return false;
  const y = Number(m[1]);
  const mo = Number(m[2]);
  const d = Number(m[3]);
  if (mo < 1 || mo > 12 || d < 1) return false;
  const leap = (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
  const max = mo === 2 && leap ? 29 : DAYS_IN_MONTH[mo - 1]!;
  return d <= max;
}

/** strfmt.IsDateTime: date, a `t`, then time with zone, compared as strings like upstream. */
export function isDateTime(str: string): boolean {
  if (str.length < 4) return false;
  const s = str.toLowerCase().split('t');
  if (s.length < 2 || !isDate(s[0]!)) return false;
  const m = rxDateTime.exec(s[1]!);
  if (!m) return false;
  return m[1]! <= '23' && m[2]! <= '59' && m[3]! <= '59';
}

const LOOSE_UNITS: readonly (readonly string[])[] = [
  ['ns', 'nano'],
  ['us', 'µs', 'micro'],
  ['ms', 'milli'],
  ['s', 'sec'],
  ['m', 'min'],
  ['h', 'hr', 'hour'],
  ['d', 'day'],
  ['w', 'wk', 'week'],
];

/** strfmt.ParseDuration: Go's time.ParseDuration, else any "<n> <unit>" run it recognizes. */
function isDuration(s: string): boolean {
  if (rxGoDuration.test(s)) return true;
  for (const m of s.matchAll(rxLooseDuration)) {
    const unit = m[3]!.trim().toLowerCase();
    for (const variants of LOOSE_UNITS) {
      const last = variants.length - 1;
      for (let i = 0; i < variants.length; i++) {
        if ((i === last && unit.startsWith(variants[i]!)) || unit === variants[i]) return true;
      }
    }
  }
  return false;
}

function isCreditCard(str: string): boolean {
  const s = str.replace(/[^0-9]+/g, '');
  if (!rxCreditCard.test(s)) return false;
  let sum = 0;
  let dbl = false;
  for (let i = s.length - 1; i >= 0; i--) {
    let n = s.charCodeAt(i) - 48;
    if (dbl) {
      n *= 2;
      sum += n >= 10 ? (n % 10) + 1 : n;
    } else sum += n;
    dbl = !dbl;
  }
  return sum % 10 === 0;
}

function isISBN(str: string, version: 10 | 13): boolean {
  const s = str.replace(/[\s-]+/g, '');
  if (version === 10) {
    if (!rxISBN10.test(s)) return false;
    let sum = 0;
    for (let i = 0; i < 9; i++) sum += (i + 1) * (s.charCodeAt(i) - 48);
    sum += s[9] === 'X' ? 100 : 10 * (s.charCodeAt(9) - 48);
    return sum % 11 === 0;
  }
  if (!rxISBN13.test(s)) return false;
  let sum = 0;
  for (let i = 0; i < 12; i++) sum += (i % 2 === 0 ? 1 : 3) * (s.charCodeAt(i) - 48);
  return s.charCodeAt(12) - 48 - ((10 - (sum % 10)) % 10) === 0;
}

const CHECKERS: Record<string, (s: string) => boolean> = {
  bsonobjectid: (s) => /^[0-9a-fA-F]{24}$/.test(s),
  uri: isRequestURI,
  email: isEmail,
  hostname: isHostname,
  ipv4: (s) => parseIPSloppy(s) && s.includes('.'),
  ipv6: (s) => !s.includes('%') && nodeIsIPv6(s) && s.includes(':'),
  cidr: isCIDR,
  mac: isMAC,
  uuid: (s) => rxUUID.test(s),
  uuid3: (s) => rxUUID3.test(s),
  uuid4: (s) => rxUUID4.test(s),
  uuid5: (s) => rxUUID5.test(s),
  isbn: (s) => isISBN(s, 10) || isISBN(s, 13),
  isbn10: (s) => isISBN(s, 10),
  isbn13: (s) => isISBN(s, 13),
  creditcard: isCreditCard,
  ssn: (s) => s.length === 11 && rxSSN.test(s),
  hexcolor: (s) => rxHexcolor.test(s),
  rgbcolor: (s) => rxRGBcolor.test(s),
  byte: (s) => rxBase64.test(s),
  password: () => true,
  date: isDate,
  duration: isDuration,
  datetime: isDateTime,
  k8sshortname: (s) => s.length <= 63 && rxShortName.test(s),
  k8slongname: (s) => s.length <= 253 && rxLongName.test(s),
};

/** The checker for a (supported) string format, or undefined when the registry does not know it. */
export function formatChecker(format: string): ((s: string) => boolean) | undefined {
  return CHECKERS[normalizeFormat(format)];
}
