// JWT/OIDC token authenticators from `--authentication-config` (upstream's
// apiserver/plugin/pkg/authenticator/token/oidc). Each takes only tokens whose (unverified) `iss`
// is its issuer URL; anything else, garbage included, is left to the next authenticator. Its keys
// come from the issuer's discovery document (`<discoveryURL or url>/.well-known/openid-configuration`,
// whose `issuer` must be the URL) and `jwks_uri`, fetched over HTTPS (the `certificateAuthority`
// if given) at start, retried every 10 s until they arrive, and fetched again when a token names
// a key not seen (at most every 10 s). Until the first fetch succeeds the issuer's tokens are
// refused ("not initialized"), as upstream's.
import { request as httpsRequest } from 'node:https';
import { createLocalJWKSet, errors as joseErrors, jwtVerify, type JSONWebKeySet, type JWTPayload } from 'jose';
import type { TokenAuthenticator, TokenOutcome, UserInfo } from '../types.js';
import type { AuthenticationConfiguration, JWTAuthenticatorConfig } from './jwt-config.js';

/** A compiled CEL expression (claims or user validation); evaluation errors throw. */
export interface ClaimExpression {
  evaluate(vars: Readonly<Record<string, unknown>>): unknown;
}

/**
 * What the JWT authenticators need of CEL: compile `expression` with one variable, `claims` (the
 * token's payload, a map) or `user` (username, uid, groups, extra). Throws an Error whose message
 * says why the expression does not compile. The control plane supplies it (src/apiextensions/cel).
 */
export interface ClaimExpressionCompiler {
  compile(expression: string, variable: 'claims' | 'user'): ClaimExpression;
}

/** The algorithms go-oidc verifies with; `none` and HMAC are never accepted. */
export const JWT_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'ES256', 'ES384', 'ES512', 'PS256', 'PS384', 'PS512'] as const;

const RETRY_MS = 10_000;
const FETCH_TIMEOUT_MS = 10_000;
const MAX_DOCUMENT_BYTES = 1 << 20;
const NONE: TokenOutcome = { kind: 'none' };

export interface JWTAuthenticators {
  readonly authenticators: readonly TokenAuthenticator[];
  /** Resolves once every issuer's keys have been fetched once (tests; start-up does not wait). */
  ready(): Promise<void>;
  stop(): void;
}

interface Compiled {
  readonly username: { claim?: string; prefix?: string; expression?: ClaimExpression };
  readonly groups?: { claim?: string; prefix?: string; expression?: ClaimExpression };
  readonly uid?: { claim?: string; expression?: ClaimExpression };
  readonly extra: readonly { key: string; expression: ClaimExpression }[];
  readonly claimRules: readonly { claim?: string; requiredValue?: string; expression?: ClaimExpression; source?: string; message?: string }[];
  readonly userRules: readonly { expression: ClaimExpression; source: string; message: string }[];
}

/** Compiles the configuration's expressions; throws one Error naming the file, the fields and why. */
function compileAll(config: AuthenticationConfiguration, cel: ClaimExpressionCompiler | undefined, source: string): Compiled[] {
  const issues: string[] = [];
  const compile = (path: string, expression: string, variable: 'claims' | 'user'): ClaimExpression => {
    if (cel === undefined) {
      issues.push(`${path}: Invalid value: ${JSON.stringify(expression)}: CEL expressions are not available`);
      return { evaluate: () => undefined };
    }
    try {
      return cel.compile(expression, variable);
    } catch (e) {
      issues.push(`${path}: Invalid value: ${JSON.stringify(expression)}: compilation failed: ${(e as Error).message}`);
      return { evaluate: () => undefined };
    }
  };
  const out = config.jwt.map((a, i): Compiled => {
    const p = `jwt[${i}]`;
    const m = a.claimMappings;
    const mapping = (path: string, c: { claim?: string; prefix?: string; expression?: string } | undefined) =>
      c === undefined
        ? undefined
        : {
            ...(c.claim ? { claim: c.claim } : {}),
            ...(c.prefix !== undefined ? { prefix: c.prefix } : {}),
            ...(c.expression ? { expression: compile(`${path}.expression`, c.expression, 'claims') } : {}),
          };
    const groups = mapping(`${p}.claimMappings.groups`, m.groups);
    const uid = mapping(`${p}.claimMappings.uid`, m.uid);
    return {
      username: mapping(`${p}.claimMappings.username`, m.username)!,
      ...(groups ? { groups } : {}),
      ...(uid ? { uid } : {}),
      extra: (m.extra ?? []).map((e, j) => ({
        key: e.key,
        expression: compile(`${p}.claimMappings.extra[${j}].valueExpression`, e.valueExpression, 'claims'),
      })),
      claimRules: (a.claimValidationRules ?? []).map((r, j) =>
        r.expression
          ? { expression: compile(`${p}.claimValidationRules[${j}].expression`, r.expression, 'claims'), source: r.expression, message: r.message ?? '' }
          : { ...(r.claim !== undefined ? { claim: r.claim } : {}), requiredValue: r.requiredValue ?? '' },
      ),
      userRules: (a.userValidationRules ?? []).map((r, j) => ({
        expression: compile(`${p}.userValidationRules[${j}].expression`, r.expression, 'user'),
        source: r.expression,
        message: r.message ?? '',
      })),
    };
  });
  if (issues.length > 0) {
    throw new Error(`invalid authentication configuration in file ${JSON.stringify(source)}: ${issues.length === 1 ? issues[0] : `[${issues.join(', ')}]`}`);
  }
  return out;
}

/** GET over HTTPS with the issuer's CA; the body as JSON. */
function fetchJSON(url: string, ca: string | undefined, signal: AbortSignal): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      url,
      { method: 'GET', headers: { accept: 'application/json' }, ...(ca ? { ca } : {}), signal, timeout: FETCH_TIMEOUT_MS },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          size += c.length;
          if (size > MAX_DOCUMENT_BYTES) req.destroy(new Error(`${url}: response larger than ${MAX_DOCUMENT_BYTES} bytes`));
          else chunks.push(c);
        });
        res.on('error', reject);
        res.on('end', () => {
          if (res.statusCode !== 200) return reject(new Error(`${url}: ${res.statusCode} ${res.statusMessage ?? ''}`.trim()));
          try {
            resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')));
          } catch (e) {
            reject(new Error(`${url}: ${(e as Error).message}`));
          }
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error(`${url}: no answer within ${FETCH_TIMEOUT_MS} ms`)));
    req.on('error', reject);
    req.end();
  });
}

/** The payload of a compact JWS, unverified; undefined when `token` is not one. */
function unverifiedPayload(token: string): Record<string, unknown> | undefined {
  const first = token.indexOf('.');
  const second = first < 0 ? -1 : token.indexOf('.', first + 1);
  if (second < 0 || token.indexOf('.', second + 1) >= 0) return undefined;
  try {
    const v: unknown = JSON.parse(Buffer.from(token.slice(first + 1, second), 'base64url').toString('utf8'));
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

class Rejection extends Error {}

function claimString(claims: JWTPayload, claim: string, what: string): string {
  if (!(claim in claims)) throw new Rejection(`oidc: parse ${what} claims ${JSON.stringify(claim)}: claim not present`);
  const v = claims[claim];
  if (typeof v !== 'string') throw new Rejection(`oidc: parse ${what} claims ${JSON.stringify(claim)}: claim is not a string`);
  return v;
}

/** A string or a list of strings, from a claim or an expression. */
function stringList(v: unknown, what: string): string[] {
  if (v === undefined || v === null) return [];
  if (typeof v === 'string') return v === '' ? [] : [v];
  if (Array.isArray(v) && v.every((x) => typeof x === 'string')) return v;
  throw new Rejection(`oidc: ${what} must be a string or an array of strings`);
}

class IssuerAuthenticator implements TokenAuthenticator {
  readonly name: string;
  private keys: ReturnType<typeof createLocalJWKSet> | undefined;
  private lastFetch = 0;
  private fetching: Promise<void> | undefined;
  private readonly firstFetch: Promise<void>;
  private resolveFirst!: () => void;
  private retry: NodeJS.Timeout | undefined;
  private readonly abort = new AbortController();

  constructor(
    private readonly config: JWTAuthenticatorConfig,
    private readonly compiled: Compiled,
    private readonly log: (msg: string) => void,
  ) {
    this.name = `jwt:${config.issuer.url}`;
    this.firstFetch = new Promise((ok) => (this.resolveFirst = ok));
  }

  start(): void {
    void this.refresh();
  }

  ready(): Promise<void> {
    return this.firstFetch;
  }

  stop(): void {
    this.abort.abort();
    if (this.retry) clearTimeout(this.retry);
  }

  private refresh(): Promise<void> {
    this.fetching ??= this.fetchKeys().finally(() => (this.fetching = undefined));
    return this.fetching;
  }

  private async fetchKeys(): Promise<void> {
    const { url, discoveryURL, certificateAuthority: ca } = this.config.issuer;
    this.lastFetch = Date.now();
    try {
      const base = (discoveryURL ?? url).replace(/\/$/, '');
      const discovery = (await fetchJSON(discoveryURL ? discoveryURL : `${base}/.well-known/openid-configuration`, ca, this.abort.signal)) as Record<
        string,
        unknown
      >;
      if (discovery['issuer'] !== url) {
        throw new Error(
          `oidc: issuer did not match the issuer returned by provider, expected ${JSON.stringify(url)} got ${JSON.stringify(discovery['issuer'])}`,
        );
      }
      const jwksURI = discovery['jwks_uri'];
      if (typeof jwksURI !== 'string') throw new Error('oidc: discovery document has no jwks_uri');
      const jwks = (await fetchJSON(jwksURI, ca, this.abort.signal)) as JSONWebKeySet;
      if (!jwks || !Array.isArray(jwks.keys)) throw new Error(`oidc: ${jwksURI}: not a JSON Web Key Set`);
      this.keys = createLocalJWKSet(jwks);
      this.resolveFirst();
    } catch (e) {
      if (this.abort.signal.aborted) return;
      this.log(`oidc authenticator: initializing plugin: ${(e as Error).message}`);
      if (this.keys === undefined) {
        this.retry = setTimeout(() => void this.refresh(), RETRY_MS);
        this.retry.unref();
      }
    }
  }

  async authenticateToken(token: string): Promise<TokenOutcome> {
    const unverified = unverifiedPayload(token);
    if (unverified === undefined || unverified['iss'] !== this.config.issuer.url) return NONE;
    try {
      return { kind: 'user', user: this.userOf(await this.verify(token)) };
    } catch (e) {
      if (e instanceof Rejection) return { kind: 'rejected', reason: e.message };
      throw e;
    }
  }

  private async verify(token: string): Promise<JWTPayload> {
    if (this.keys === undefined) throw new Rejection(`oidc: authenticator for issuer ${JSON.stringify(this.config.issuer.url)} is not initialized`);
    const options = { issuer: this.config.issuer.url, audience: [...this.config.issuer.audiences], algorithms: [...JWT_ALGORITHMS] };
    try {
      return (await jwtVerify(token, this.keys, options)).payload;
    } catch (e) {
      // A key not seen yet: the issuer may have rotated; look again (not more often than every 10 s).
      if (e instanceof joseErrors.JWKSNoMatchingKey && Date.now() - this.lastFetch > RETRY_MS) {
        await this.refresh();
        try {
          return (await jwtVerify(token, this.keys, options)).payload;
        } catch (again) {
          throw new Rejection(`oidc: verify token: ${(again as Error).message}`);
        }
      }
      throw new Rejection(`oidc: verify token: ${(e as Error).message}`);
    }
  }

  private evaluate(expression: ClaimExpression, vars: Record<string, unknown>, what: string): unknown {
    try {
      return expression.evaluate(vars);
    } catch (e) {
      throw new Rejection(`oidc: error evaluating ${what} expression: ${(e as Error).message}`);
    }
  }

  private userOf(claims: JWTPayload): UserInfo {
    const c = this.compiled;
    const vars = { claims };
    for (const rule of c.claimRules) {
      if (rule.claim !== undefined) {
        if (!(rule.claim in claims)) throw new Rejection(`oidc: required claim ${rule.claim} not present in ID token`);
        const v = claims[rule.claim];
        if (typeof v !== 'string') throw new Rejection(`oidc: parse claim ${rule.claim}: claim is not a string`);
        if (v !== rule.requiredValue) throw new Rejection(`oidc: required claim ${rule.claim} value does not match. Got = ${v}, want = ${rule.requiredValue}`);
      } else if (rule.expression) {
        const ok = this.evaluate(rule.expression, vars, 'claim validation');
        if (ok !== true)
          throw new Rejection(`oidc: error evaluating claim validation expression: validation expression '${rule.source}' failed: ${rule.message}`);
      }
    }
    let name: string;
    if (c.username.expression) {
      const v = this.evaluate(c.username.expression, vars, 'username claim');
      if (typeof v !== 'string') throw new Rejection('oidc: error evaluating username claim expression: expression must evaluate to a string');
      if (v === '') throw new Rejection('oidc: empty username via CEL expression is not allowed');
      name = v;
    } else {
      const claim = c.username.claim ?? 'sub';
      name = claimString(claims, claim, 'username');
      if (claim === 'email' && 'email_verified' in claims && claims['email_verified'] !== true) throw new Rejection('oidc: email not verified');
      if (name === '') throw new Rejection(`oidc: empty username via ${claim} claim is not allowed`);
      name = (c.username.prefix ?? '') + name;
    }
    let groups: string[] = [];
    if (c.groups?.expression) groups = stringList(this.evaluate(c.groups.expression, vars, 'groups claim'), 'groups expression');
    else if (c.groups?.claim)
      groups = stringList(claims[c.groups.claim], `groups claim ${JSON.stringify(c.groups.claim)}`).map((g) => (c.groups?.prefix ?? '') + g);
    let uid = '';
    if (c.uid?.expression) {
      const v = this.evaluate(c.uid.expression, vars, 'uid claim');
      if (typeof v !== 'string') throw new Rejection('oidc: error evaluating uid claim expression: expression must evaluate to a string');
      uid = v;
    } else if (c.uid?.claim) uid = claimString(claims, c.uid.claim, 'uid');
    const extra: Record<string, string[]> = {};
    for (const e of c.extra) {
      const values = stringList(this.evaluate(e.expression, vars, 'extra mapping'), `extra mapping ${JSON.stringify(e.key)}`);
      if (values.length > 0) extra[e.key] = values;
    }
    const user: UserInfo = { name, ...(uid ? { uid } : {}), groups, ...(Object.keys(extra).length ? { extra } : {}) };
    const userVar = { username: name, uid, groups, extra };
    for (const rule of c.userRules) {
      const ok = this.evaluate(rule.expression, { user: userVar }, 'user validation');
      if (ok !== true) throw new Rejection(`oidc: error evaluating user info validation rule: validation expression '${rule.source}' failed: ${rule.message}`);
    }
    return user;
  }
}

/** One TokenAuthenticator per `jwt` entry, in the file's order; their keys are fetched from now on. */
export function createJWTAuthenticators(
  config: AuthenticationConfiguration,
  opts: { readonly cel?: ClaimExpressionCompiler; readonly log?: (msg: string) => void } = {},
): JWTAuthenticators {
  const compiled = compileAll(config, opts.cel, config.source ?? 'authentication configuration');
  const log = opts.log ?? (() => {});
  const all = config.jwt.map((a, i) => new IssuerAuthenticator(a, compiled[i]!, log));
  for (const a of all) a.start();
  return {
    authenticators: all,
    ready: async () => {
      await Promise.all(all.map((a) => a.ready()));
    },
    stop: () => {
      for (const a of all) a.stop();
    },
  };
}
