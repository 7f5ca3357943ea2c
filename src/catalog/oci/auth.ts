// Registry credentials: explicit ones (flags), else a docker config.json / containers auth.json, and
// the WWW-Authenticate challenges (Basic, Bearer) the distribution API answers 401 with.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { OciError } from './errors.js';

export interface Credentials {
  readonly username?: string;
  readonly password?: string;
  /** An OAuth2 refresh token (docker config "identitytoken"), traded for access tokens. */
  readonly identityToken?: string;
}

export interface AuthOptions {
  /** Credentials for every registry this call talks to (flags: --username/--password or --creds). */
  readonly credentials?: Credentials;
  /** A docker config.json or containers auth.json; default REGISTRY_AUTH_FILE, $DOCKER_CONFIG/config.json, ~/.docker/config.json. */
  readonly authFile?: string;
}

interface AuthFile {
  auths?: Record<string, { auth?: string; username?: string; password?: string; identitytoken?: string }>;
  credsStore?: string;
  credHelpers?: Record<string, string>;
}

/** The auth files to look in, first found wins (as podman/skopeo then docker look). */
export function authFileCandidates(explicit?: string): string[] {
  if (explicit) return [explicit];
  const out: string[] = [];
  if (process.env.REGISTRY_AUTH_FILE) out.push(process.env.REGISTRY_AUTH_FILE);
  if (process.env.XDG_RUNTIME_DIR) out.push(join(process.env.XDG_RUNTIME_DIR, 'containers', 'auth.json'));
  out.push(join(process.env.DOCKER_CONFIG ?? join(homedir(), '.docker'), 'config.json'));
  return out;
}

/** The keys a host may be filed under in `auths` (docker writes https://index.docker.io/v1/ for Docker Hub). */
function hostKeys(host: string): string[] {
  if (host === 'docker.io' || host === 'registry-1.docker.io' || host === 'index.docker.io') {
    return ['https://index.docker.io/v1/', 'index.docker.io', 'docker.io', 'registry-1.docker.io'];
  }
  return [host, `https://${host}`, `http://${host}`, `https://${host}/v1/`, `https://${host}/v2/`];
}

export function credentialsFor(host: string, opts: AuthOptions = {}): Credentials | undefined {
  if (opts.credentials) return opts.credentials;
  for (const file of authFileCandidates(opts.authFile)) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (e) {
      if (opts.authFile) throw new OciError('UNAUTHORIZED', `cannot read the registry auth file ${file}: ${(e as Error).message}`);
      continue;
    }
    let cfg: AuthFile;
    try {
      cfg = JSON.parse(text) as AuthFile;
    } catch (e) {
      throw new OciError('UNAUTHORIZED', `the registry auth file ${file} is not valid JSON (${(e as Error).message}); fix or remove it`);
    }
    // docker's order: a helper for this host, then the default store, then the file's own entries.
    const helper =
      hostKeys(host)
        .map((k) => cfg.credHelpers?.[k])
        .find(Boolean) ?? cfg.credsStore;
    if (helper) {
      const fromHelper = credentialsFromHelper(helper, host);
      if (fromHelper) return fromHelper;
    }
    for (const key of hostKeys(host)) {
      const entry = cfg.auths?.[key];
      if (!entry) continue;
      if (entry.identitytoken) return { identityToken: entry.identitytoken, ...(entry.username ? { username: entry.username } : {}) };
      if (entry.auth) {
        const decoded = Buffer.from(entry.auth, 'base64').toString('utf8');
        const i = decoded.indexOf(':');
        if (i < 0) throw new OciError('UNAUTHORIZED', `the "auth" entry for ${key} in ${file} is not base64 of USER:PASSWORD`);
        return { username: decoded.slice(0, i), password: decoded.slice(i + 1) };
      }
      if (entry.username !== undefined && entry.password !== undefined) return { username: entry.username, password: entry.password };
    }
    // The file exists: docker stops looking here too.
    return undefined;
  }
  return undefined;
}

/**
 * Asks a docker credential helper (`docker-credential-NAME get`, the server on stdin, JSON
 * {Username, Secret} on stdout). A helper that is missing or knows nothing of the host gives no
 * credentials, so public images still pull (the 401 message then says none were found).
 */
function credentialsFromHelper(name: string, host: string): Credentials | undefined {
  // A helper is a process (and may prompt a keychain): ask it once per server and process.
  const key = `${name}\u0000${host}`;
  if (!helperAnswers.has(key)) helperAnswers.set(key, askHelper(name, host));
  return helperAnswers.get(key);
}

const helperAnswers = new Map<string, Credentials | undefined>();

function askHelper(name: string, host: string): Credentials | undefined {
  const server = host === 'docker.io' || host === 'registry-1.docker.io' ? 'https://index.docker.io/v1/' : host;
  let out: string;
  try {
    out = execFileSync(`docker-credential-${name}`, ['get'], { input: server, encoding: 'utf8', timeout: 10_000, stdio: ['pipe', 'pipe', 'ignore'] });
  } catch {
    return undefined;
  }
  try {
    const r = JSON.parse(out) as { Username?: string; Secret?: string };
    if (!r.Secret) return undefined;
    // "<token>" marks an identity (refresh) token, as docker stores them.
    return r.Username === '<token>' ? { identityToken: r.Secret } : { username: r.Username ?? '', password: r.Secret };
  } catch {
    return undefined;
  }
}

/** Parses `--creds USER[:PASSWORD]`. */
export function parseCreds(s: string): Credentials {
  const i = s.indexOf(':');
  return i < 0 ? { username: s, password: '' } : { username: s.slice(0, i), password: s.slice(i + 1) };
}

export interface Challenge {
  readonly scheme: string; // lowercased: basic, bearer
  readonly params: Record<string, string>;
}

/** Parses a WWW-Authenticate header: `Bearer realm="...",service="...",scope="..."`. */
export function parseChallenge(header: string): Challenge | undefined {
  const m = /^\s*([A-Za-z][\w-]*)\s*(.*)$/s.exec(header);
  if (!m) return undefined;
  const params: Record<string, string> = {};
  const re = /([\w-]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,]+))\s*,?\s*/g;
  let p: RegExpExecArray | null;
  while ((p = re.exec(m[2]!)) !== null) params[p[1]!.toLowerCase()] = p[2] !== undefined ? p[2].replace(/\\(.)/g, '$1') : p[3]!;
  return { scheme: m[1]!.toLowerCase(), params };
}

export function basicHeader(c: Credentials): string {
  return `Basic ${Buffer.from(`${c.username ?? ''}:${c.password ?? ''}`).toString('base64')}`;
}
