// `--authentication-config`: upstream's AuthenticationConfiguration (apiserver.config.k8s.io
// v1alpha1, v1beta1, v1), the `jwt` authenticators only. Validation follows upstream's
// (apiserver/pkg/apis/apiserver/validation): every problem is reported with its field path, in
// field.Error's text (`jwt[0].issuer.url: Invalid value: "http://x": URL scheme must be https`).
import { X509Certificate } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { parse as parseYaml } from 'yaml';

export interface ClaimOrExpression {
  readonly claim?: string;
  readonly expression?: string;
}

export interface PrefixedClaimOrExpression extends ClaimOrExpression {
  readonly prefix?: string;
}

export interface JWTAuthenticatorConfig {
  readonly issuer: {
    readonly url: string;
    readonly discoveryURL?: string;
    readonly certificateAuthority?: string;
    readonly audiences: readonly string[];
    readonly audienceMatchPolicy?: string;
  };
  readonly claimValidationRules?: readonly {
    readonly claim?: string;
    readonly requiredValue?: string;
    readonly expression?: string;
    readonly message?: string;
  }[];
  readonly claimMappings: {
    readonly username: PrefixedClaimOrExpression;
    readonly groups?: PrefixedClaimOrExpression;
    readonly uid?: ClaimOrExpression;
    readonly extra?: readonly { readonly key: string; readonly valueExpression: string }[];
  };
  readonly userValidationRules?: readonly { readonly expression: string; readonly message?: string }[];
}

export interface AuthenticationConfiguration {
  readonly jwt: readonly JWTAuthenticatorConfig[];
  /** The file it was read from, named in errors found later (CEL compilation). */
  readonly source?: string;
}

const API_VERSIONS = new Set(['apiserver.config.k8s.io/v1alpha1', 'apiserver.config.k8s.io/v1beta1', 'apiserver.config.k8s.io/v1']);

/** Go's %q of a string, near enough for field.Error texts. */
const q = (s: unknown): string => JSON.stringify(typeof s === 'string' ? s : String(s ?? ''));

class Issues {
  readonly list: string[] = [];
  required(path: string, detail = ''): void {
    this.list.push(`${path}: Required value${detail ? `: ${detail}` : ''}`);
  }
  invalid(path: string, value: unknown, detail: string): void {
    this.list.push(`${path}: Invalid value: ${q(value)}: ${detail}`);
  }
  duplicate(path: string, value: unknown): void {
    this.list.push(`${path}: Duplicate value: ${q(value)}`);
  }
  forbidden(path: string, detail: string): void {
    this.list.push(`${path}: Forbidden: ${detail}`);
  }
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

function obj(v: unknown): Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
}

function arr(v: unknown): unknown[] {
  return Array.isArray(v) ? v : [];
}

function validateURL(issues: Issues, path: string, raw: string): URL | undefined {
  let u: URL;
  try {
    u = new URL(raw);
  } catch (e) {
    issues.invalid(path, raw, (e as Error).message);
    return undefined;
  }
  if (u.protocol !== 'https:') issues.invalid(path, raw, 'URL scheme must be https');
  if (u.username || u.password) issues.invalid(path, raw, 'URL must not contain a username or password');
  if (u.search) issues.invalid(path, raw, 'URL must not contain a query');
  if (u.hash || raw.includes('#')) issues.invalid(path, raw, 'URL must not contain a fragment');
  return u;
}

function claimOrExpression(
  issues: Issues,
  path: string,
  v: Record<string, unknown>,
  prefixed: boolean,
  required: boolean,
): PrefixedClaimOrExpression | undefined {
  const claim = str(v['claim']) ?? '';
  const expression = str(v['expression']) ?? '';
  const prefix = str(v['prefix']);
  if (claim === '' && expression === '') {
    if (required) issues.required(path, 'claim or expression is required');
    return undefined;
  }
  if (claim !== '' && expression !== '') issues.invalid(path, '', "claim and expression can't both be set");
  if (prefixed) {
    if (claim !== '' && prefix === undefined) {
      issues.required(`${path}.prefix`, 'prefix is required when claim is set. It can be set to an empty string to disable prefixing');
    }
    if (expression !== '' && prefix !== undefined) issues.invalid(`${path}.prefix`, prefix, 'may not be specified when expression is set');
  }
  return { ...(claim ? { claim } : {}), ...(expression ? { expression } : {}), ...(prefix !== undefined ? { prefix } : {}) };
}

/** Parses and validates the file's text; throws one Error naming the file and every field at fault. */
export function parseAuthenticationConfiguration(text: string, source: string): AuthenticationConfiguration {
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (e) {
    throw new Error(`failed to load authentication configuration from file ${q(source)}: ${(e as Error).message}`, { cause: e });
  }
  const top = obj(doc);
  const issues = new Issues();
  if (!API_VERSIONS.has(str(top['apiVersion']) ?? '') || top['kind'] !== 'AuthenticationConfiguration') {
    throw new Error(
      `failed to load authentication configuration from file ${q(source)}: no kind ${q(top['kind'])} is registered for version ${q(top['apiVersion'])}`,
    );
  }
  const jwt: JWTAuthenticatorConfig[] = [];
  const seenIssuers = new Map<string, number>();
  arr(top['jwt']).forEach((raw, i) => {
    const p = `jwt[${i}]`;
    const a = obj(raw);
    const issuer = obj(a['issuer']);
    const url = str(issuer['url']) ?? '';
    if (url === '') issues.required(`${p}.issuer.url`);
    else {
      validateURL(issues, `${p}.issuer.url`, url);
      if (seenIssuers.has(url)) issues.duplicate(`${p}.issuer.url`, url);
      seenIssuers.set(url, i);
    }
    const discoveryURL = str(issuer['discoveryURL']) ?? '';
    if (discoveryURL !== '') {
      validateURL(issues, `${p}.issuer.discoveryURL`, discoveryURL);
      if (url !== '' && discoveryURL.replace(/\/$/, '') === url.replace(/\/$/, '')) {
        issues.invalid(`${p}.issuer.discoveryURL`, discoveryURL, 'discoveryURL must be different from URL');
      }
    }
    const ca = str(issuer['certificateAuthority']) ?? '';
    if (ca !== '') {
      try {
        const blocks = ca.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
        if (blocks.length === 0) throw new Error('data does not contain any valid RSA or ECDSA certificates');
        for (const b of blocks) new X509Certificate(b);
      } catch (e) {
        issues.invalid(`${p}.issuer.certificateAuthority`, '<omitted>', (e as Error).message);
      }
    }
    const audiences = arr(issuer['audiences']).map((x) => str(x) ?? '');
    if (audiences.length === 0) issues.required(`${p}.issuer.audiences`, `at least one ${p}.issuer.audiences is required`);
    const seenAud = new Set<string>();
    audiences.forEach((aud, j) => {
      if (aud === '') issues.required(`${p}.issuer.audiences[${j}]`);
      else if (seenAud.has(aud)) issues.duplicate(`${p}.issuer.audiences[${j}]`, aud);
      seenAud.add(aud);
    });
    const policy = str(issuer['audienceMatchPolicy']) ?? '';
    if (audiences.length > 1 && policy !== 'MatchAny') {
      issues.invalid(`${p}.issuer.audienceMatchPolicy`, policy, 'audienceMatchPolicy must be MatchAny for multiple audiences');
    }
    if (audiences.length <= 1 && policy !== '' && policy !== 'MatchAny') {
      issues.invalid(`${p}.issuer.audienceMatchPolicy`, policy, 'audienceMatchPolicy must be empty or MatchAny for single audience');
    }
    const rules = arr(a['claimValidationRules']).map((r, j) => {
      const rp = `${p}.claimValidationRules[${j}]`;
      const rule = obj(r);
      const claim = str(rule['claim']) ?? '';
      const requiredValue = str(rule['requiredValue']) ?? '';
      const expression = str(rule['expression']) ?? '';
      const message = str(rule['message']) ?? '';
      if (claim === '' && expression === '') issues.required(rp, 'claim or expression is required');
      if (claim !== '' && expression !== '') issues.invalid(rp, '', "claim and expression can't both be set");
      if (claim !== '' && message !== '') issues.invalid(`${rp}.message`, message, 'may not be specified when claim is set');
      if (expression !== '' && requiredValue !== '') issues.invalid(`${rp}.requiredValue`, requiredValue, 'may not be specified when expression is set');
      return { ...(claim ? { claim, requiredValue } : {}), ...(expression ? { expression, message } : {}) };
    });
    const mappings = obj(a['claimMappings']);
    const mp = `${p}.claimMappings`;
    const username = claimOrExpression(issues, `${mp}.username`, obj(mappings['username']), true, true);
    const groups = claimOrExpression(issues, `${mp}.groups`, obj(mappings['groups']), true, false);
    const uid = claimOrExpression(issues, `${mp}.uid`, obj(mappings['uid']), false, false);
    const seenKeys = new Set<string>();
    const extra = arr(mappings['extra']).map((e, j) => {
      const ep = `${mp}.extra[${j}]`;
      const x = obj(e);
      const key = str(x['key']) ?? '';
      const valueExpression = str(x['valueExpression']) ?? '';
      if (key === '') issues.required(`${ep}.key`);
      else {
        if (!/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?(\.[a-z0-9]+)*\/.+$/.test(key) || !key.split('/')[0]!.includes('.')) {
          issues.invalid(`${ep}.key`, key, 'must be a domain-prefixed path (such as "acme.io/foo")');
        } else if (key !== key.toLowerCase()) issues.invalid(`${ep}.key`, key, 'key must be lowercase');
        if (/^(kubernetes\.io|k8s\.io)\//.test(key) || /\.(kubernetes\.io|k8s\.io)\//.test(key)) {
          issues.invalid(`${ep}.key`, key, 'k8s.io, kubernetes.io and their subdomains are reserved for Kubernetes use');
        }
        if (seenKeys.has(key)) issues.duplicate(`${ep}.key`, key);
        seenKeys.add(key);
      }
      if (valueExpression === '') issues.required(`${ep}.valueExpression`, 'valueExpression is required');
      return { key, valueExpression };
    });
    const userRules = arr(a['userValidationRules']).map((r, j) => {
      const rule = obj(r);
      const expression = str(rule['expression']) ?? '';
      if (expression === '') issues.required(`${p}.userValidationRules[${j}].expression`, 'expression is required');
      return { expression, message: str(rule['message']) ?? '' };
    });
    jwt.push({
      issuer: {
        url,
        ...(discoveryURL ? { discoveryURL } : {}),
        ...(ca ? { certificateAuthority: ca } : {}),
        audiences,
        ...(policy ? { audienceMatchPolicy: policy } : {}),
      },
      claimValidationRules: rules,
      claimMappings: {
        username: username ?? {},
        ...(groups ? { groups } : {}),
        ...(uid ? { uid } : {}),
        extra,
      },
      userValidationRules: userRules,
    });
  });
  if (issues.list.length > 0) {
    const text = issues.list.length === 1 ? issues.list[0]! : `[${issues.list.join(', ')}]`;
    throw new Error(`invalid authentication configuration in file ${q(source)}: ${text}`);
  }
  return { jwt, source };
}

/** Reads `--authentication-config`. */
export async function loadAuthenticationConfiguration(path: string): Promise<AuthenticationConfiguration> {
  return parseAuthenticationConfiguration(await readFile(path, 'utf8'), path);
}
