// Registry credentials: explicit ones (flags), else a docker config.json / containers auth.json, and
// the WWW-Authenticate challenges (Basic, Bearer) the distribution API answers 401 with.
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
    // The file exists: docker stops looking here too. Credential helpers are external programs we do not run.
    return undefined;
  }
  return undefined;
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
