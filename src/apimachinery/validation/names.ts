// Name and key rules shared by every resource, with upstream's exact messages
// (k8s.io/apimachinery/pkg/util/validation, api/validate/content, api/validation/generic.go,
// apiserver/pkg/storage/names). Each check returns a list of messages; empty means valid.
import { randomInt } from 'node:crypto';

// Released kube (≤1.34) says "characters"; the newer content package says "bytes". Clients match
// on the released text, so keep it until upstream ships the change.
export const maxLenError = (length: number): string => `must be no more than ${length} characters`;
export const emptyError = (): string => 'must be non-empty';

/** validation.RegexError, including upstream's `'a',  or 'b'` double space between examples. */
export function regexError(msg: string, re: string, ...examples: string[]): string {
  if (examples.length === 0) return `${msg} (regex used for validation is '${re}')`;
  let s = `${msg} (e.g. `;
  examples.forEach((ex, i) => {
    if (i > 0) s += ' or ';
    s += `'${ex}', `;
  });
  return `${s}regex used for validation is '${re}')`;
}

const dns1123LabelFmt = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const dns1123LabelErrMsg =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character";
export const DNS1123_LABEL_MAX_LENGTH = 63;
const dns1123LabelRegexp = new RegExp(`^${dns1123LabelFmt}$`);

const dns1123SubdomainFmt = `${dns1123LabelFmt}(\\.${dns1123LabelFmt})*`;
const dns1123SubdomainErrMsg =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
export const DNS1123_SUBDOMAIN_MAX_LENGTH = 253;
const dns1123SubdomainRegexp = new RegExp(`^${dns1123SubdomainFmt}$`);

const dns1035LabelFmt = '[a-z]([-a-z0-9]*[a-z0-9])?';
const dns1035LabelErrMsg =
  "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character";
const dns1035LabelRegexp = new RegExp(`^${dns1035LabelFmt}$`);

/** Go's len(): byte length, which is what upstream's limits count. */
const byteLength = (s: string): number => Buffer.byteLength(s, 'utf8');

export function isDNS1123Label(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > DNS1123_LABEL_MAX_LENGTH) errs.push(maxLenError(DNS1123_LABEL_MAX_LENGTH));
  if (!dns1123LabelRegexp.test(value)) {
    // A valid subdomain that is not a valid label can only be failing on its dots.
    if (dns1123SubdomainRegexp.test(value)) errs.push('must not contain dots');
    else errs.push(regexError(dns1123LabelErrMsg, dns1123LabelFmt, 'my-name', '123-abc'));
  }
  return errs;
}

export function isDNS1123Subdomain(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > DNS1123_SUBDOMAIN_MAX_LENGTH) errs.push(maxLenError(DNS1123_SUBDOMAIN_MAX_LENGTH));
  if (!dns1123SubdomainRegexp.test(value)) errs.push(regexError(dns1123SubdomainErrMsg, dns1123SubdomainFmt, 'example.com'));
  return errs;
}

export function isDNS1035Label(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > DNS1123_LABEL_MAX_LENGTH) errs.push(maxLenError(DNS1123_LABEL_MAX_LENGTH));
  if (!dns1035LabelRegexp.test(value)) errs.push(regexError(dns1035LabelErrMsg, dns1035LabelFmt, 'my-name', 'abc-123'));
  return errs;
}

const qualifiedNameCharFmt = '[A-Za-z0-9]';
const qualifiedNameExtCharFmt = '[-A-Za-z0-9_.]';
const qualifiedNameFmt = `(${qualifiedNameCharFmt}${qualifiedNameExtCharFmt}*)?${qualifiedNameCharFmt}`;
const qualifiedNameErrMsg = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
export const QUALIFIED_NAME_MAX_LENGTH = 63;
const qualifiedNameRegexp = new RegExp(`^${qualifiedNameFmt}$`);

/** Label keys, annotation keys (after lower-casing) and finalizer names: `[prefix/]name`. */
export function isQualifiedName(value: string): string[] {
  const errs: string[] = [];
  const parts = value.split('/');
  let name: string;
  switch (parts.length) {
    case 1:
      name = parts[0]!;
      break;
    case 2: {
      const prefix = parts[0]!;
      name = parts[1]!;
      if (prefix.length === 0) errs.push(`prefix part ${emptyError()}`);
      else for (const m of isDNS1123Subdomain(prefix)) errs.push(`prefix part ${m}`);
      break;
    }
    default:
      return [
        `a qualified name ${regexError(qualifiedNameErrMsg, qualifiedNameFmt, 'MyName', 'my.name', '123-abc')} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`,
      ];
  }
  if (name.length === 0) errs.push(`name part ${emptyError()}`);
  else if (byteLength(name) > QUALIFIED_NAME_MAX_LENGTH) errs.push(`name part ${maxLenError(QUALIFIED_NAME_MAX_LENGTH)}`);
  if (!qualifiedNameRegexp.test(name)) errs.push(`name part ${regexError(qualifiedNameErrMsg, qualifiedNameFmt, 'MyName', 'my.name', '123-abc')}`);
  return errs;
}

const labelValueFmt = `(${qualifiedNameFmt})?`;
const labelValueErrMsg =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
export const LABEL_VALUE_MAX_LENGTH = 63;
const labelValueRegexp = new RegExp(`^${labelValueFmt}$`);

export function isValidLabelValue(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > LABEL_VALUE_MAX_LENGTH) errs.push(maxLenError(LABEL_VALUE_MAX_LENGTH));
  if (!labelValueRegexp.test(value)) errs.push(regexError(labelValueErrMsg, labelValueFmt, 'MyValue', 'my_value', '12345'));
  return errs;
}

/** Names that become a URL path segment or storage key segment (any resource, CRs included). */
export function isPathSegmentName(name: string): string[] {
  if (name === '.' || name === '..') return [`may not be '${name}'`];
  return isPathSegmentPrefix(name);
}

/** For generateName: a prefix may be `.` since random characters follow it. */
export function isPathSegmentPrefix(name: string): string[] {
  const errs: string[] = [];
  if (name.includes('/')) errs.push(`may not contain '/'`);
  if (name.includes('%')) errs.push(`may not contain '%'`);
  return errs;
}

/**
 * A generateName prefix ends in '-' by convention, which no DNS name may; upstream swaps the last
 * character for an 'a' so the prefix is checked as if a random suffix followed it.
 */
export function maskTrailingDash(name: string): string {
  return name.length > 1 && name.endsWith('-') ? `${name.slice(0, -2)}a` : name;
}

/** ValidateNameFunc: `prefix` is true when checking generateName rather than name. */
export type NameValidator = (name: string, prefix: boolean) => string[];

export const nameIsDNSSubdomain: NameValidator = (name, prefix) => isDNS1123Subdomain(prefix ? maskTrailingDash(name) : name);
export const nameIsDNSLabel: NameValidator = (name, prefix) => isDNS1123Label(prefix ? maskTrailingDash(name) : name);
export const nameIsDNS1035Label: NameValidator = (name, prefix) => isDNS1035Label(prefix ? maskTrailingDash(name) : name);
export const nameIsPathSegment: NameValidator = (name, prefix) => (prefix ? isPathSegmentPrefix(name) : isPathSegmentName(name));
/** Namespaces are DNS labels. */
export const validateNamespaceName: NameValidator = nameIsDNSLabel;

// apiserver/pkg/storage/names: vowels and easily confused characters are left out so generated
// names never spell words or look alike.
export const GENERATED_NAME_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';
export const GENERATED_NAME_RANDOM_LENGTH = 5;
export const MAX_GENERATED_NAME_BASE_LENGTH = 63 - GENERATED_NAME_RANDOM_LENGTH;

export function randomNameSuffix(length = GENERATED_NAME_RANDOM_LENGTH, pick: (n: number) => number = randomInt): string {
  let s = '';
  for (let i = 0; i < length; i++) s += GENERATED_NAME_ALPHABET[pick(GENERATED_NAME_ALPHABET.length)];
  return s;
}

/** SimpleNameGenerator: base cut to 58 characters, then 5 random ones. */
export function generateName(base: string, pick?: (n: number) => number): string {
  const cut = base.length > MAX_GENERATED_NAME_BASE_LENGTH ? base.slice(0, MAX_GENERATED_NAME_BASE_LENGTH) : base;
  return cut + randomNameSuffix(GENERATED_NAME_RANDOM_LENGTH, pick);
}
