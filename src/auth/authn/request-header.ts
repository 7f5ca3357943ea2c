// The requestheader authenticator (k8s.io/apiserver/pkg/authentication/request/headerrequest with
// x509request's verifier): a client certificate signed by the requestheader CA, with a common name
// in the allowed list (any, when the list is empty), lets the front proxy assert the user in
// headers: the first non-empty username header, every value of the group headers, and extras from
// headers with the extra prefixes (the rest of the name, lower-cased and unescaped, is the key).
import { X509Certificate } from 'node:crypto';
import type { UserInfo } from '../../admission/index.js';

export interface RequestHeaderConfig {
  /** PEM bundle: `--requestheader-client-ca-file`. */
  readonly clientCA: string;
  /** `--requestheader-allowed-names`: common names allowed; empty allows any the CA signed. */
  readonly allowedNames?: readonly string[];
  /** `--requestheader-username-headers` (default here `X-Remote-User`, kubeadm's). */
  readonly usernameHeaders?: readonly string[];
  /** `--requestheader-uid-headers` (default `X-Remote-Uid`). */
  readonly uidHeaders?: readonly string[];
  /** `--requestheader-group-headers` (default `X-Remote-Group`). */
  readonly groupHeaders?: readonly string[];
  /** `--requestheader-extra-headers-prefix` (default `X-Remote-Extra-`). */
  readonly extraHeaderPrefixes?: readonly string[];
}

export const DEFAULT_REQUEST_HEADERS = {
  usernameHeaders: ['X-Remote-User'],
  uidHeaders: ['X-Remote-Uid'],
  groupHeaders: ['X-Remote-Group'],
  extraHeaderPrefixes: ['X-Remote-Extra-'],
} as const;

/** What the client certificate says about the front proxy. */
export type ProxyCertificate = { kind: 'none' } | { kind: 'invalid'; reason: string; signedByProxyCA?: boolean } | { kind: 'proxy' };

/**
 * The request's headers as sent, name and value alternating (node's `rawHeaders`): node joins a
 * repeated header into one value with ", ", but each X-Remote-Group line is one group.
 */
type RawHeaders = readonly string[];

const values = (raw: RawHeaders, name: string): string[] => {
  const lower = name.toLowerCase();
  const out: string[] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) if (raw[i]!.toLowerCase() === lower) out.push(raw[i + 1]!);
  return out;
};

export interface RequestHeaderAuthenticator {
  readonly config: Required<RequestHeaderConfig>;
  /** Checks a presented certificate (DER) against the CA bundle, validity and the allowed names. */
  verify(der: Buffer | undefined): ProxyCertificate;
  /** The user the headers assert, or undefined when no username header is set. */
  user(rawHeaders: RawHeaders): UserInfo | undefined;
  /** Removes every header the authenticator reads (ClearAuthenticationHeaders), so handlers never see them. */
  clear(headers: Record<string, unknown>): void;
}

function caCertificates(pem: string): X509Certificate[] {
  const blocks = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  if (blocks.length === 0) throw new Error('requestheader client CA: data does not contain any valid RSA or ECDSA certificates');
  return blocks.map((b) => new X509Certificate(b));
}

/**
 * `clusterCAs`: the client CAs of the x509 authenticator; a certificate they also sign is left to
 * it when its name is not allowed here (otherwise the server refuses it as a client certificate).
 */
export function requestHeaderAuthenticator(cfg: RequestHeaderConfig, opts: { clusterCAs?: string; now?: () => number } = {}): RequestHeaderAuthenticator {
  const now = opts.now ?? Date.now;
  const cluster = opts.clusterCAs ? caCertificates(opts.clusterCAs) : [];
  const config: Required<RequestHeaderConfig> = {
    clientCA: cfg.clientCA,
    allowedNames: cfg.allowedNames ?? [],
    usernameHeaders: cfg.usernameHeaders ?? DEFAULT_REQUEST_HEADERS.usernameHeaders,
    uidHeaders: cfg.uidHeaders ?? DEFAULT_REQUEST_HEADERS.uidHeaders,
    groupHeaders: cfg.groupHeaders ?? DEFAULT_REQUEST_HEADERS.groupHeaders,
    extraHeaderPrefixes: cfg.extraHeaderPrefixes ?? DEFAULT_REQUEST_HEADERS.extraHeaderPrefixes,
  };
  const cas = caCertificates(config.clientCA);
  const prefixes = config.extraHeaderPrefixes.map((p) => p.toLowerCase());
  return {
    config,
    verify(der) {
      if (!der || der.length === 0) return { kind: 'none' };
      let cert: X509Certificate;
      try {
        cert = new X509Certificate(der);
      } catch (e) {
        return { kind: 'invalid', reason: (e as Error).message };
      }
      // Leaves signed directly by a CA of the bundle (kubeadm's front-proxy-client is).
      if (!cas.some((ca) => cert.checkIssued(ca) && cert.verify(ca.publicKey)))
        return { kind: 'invalid', reason: 'x509: certificate signed by unknown authority' };
      const t = now();
      if (t < Date.parse(cert.validFrom) || t > Date.parse(cert.validTo))
        return { kind: 'invalid', reason: 'x509: certificate has expired or is not yet valid' };
      if (config.allowedNames.length) {
        const cn = /(?:^|\n)CN=([^\n]*)/.exec(cert.subject)?.[1] ?? '';
        if (!config.allowedNames.includes(cn))
          return {
            kind: 'invalid',
            reason: `x509: subject with cn=${cn} is not in the allowed list`,
            signedByProxyCA: !cluster.some((ca) => cert.checkIssued(ca) && cert.verify(ca.publicKey)),
          };
      }
      return { kind: 'proxy' };
    },
    user(raw) {
      const name = config.usernameHeaders.map((h) => values(raw, h)[0] ?? '').find((v) => v !== '');
      if (!name) return undefined;
      const uid = config.uidHeaders.map((h) => values(raw, h)[0] ?? '').find((v) => v !== '');
      const groups = config.groupHeaders.flatMap((h) => values(raw, h));
      const extra: Record<string, string[]> = {};
      for (let i = 0; i + 1 < raw.length; i += 2) {
        const lower = raw[i]!.toLowerCase();
        const v = raw[i + 1]!;
        const prefix = prefixes.find((p) => lower.startsWith(p));
        if (!prefix) continue;
        let key = lower.slice(prefix.length);
        try {
          key = decodeURIComponent(key);
        } catch {
          // upstream keeps a key it cannot unescape as it is
        }
        (extra[key] ??= []).push(v);
      }
      return { name, ...(uid ? { uid } : {}), groups, ...(Object.keys(extra).length ? { extra } : {}) };
    },
    clear(headers) {
      for (const h of [...config.usernameHeaders, ...config.uidHeaders, ...config.groupHeaders]) delete headers[h.toLowerCase()];
      for (const k of Object.keys(headers)) if (prefixes.some((p) => k.toLowerCase().startsWith(p))) delete headers[k];
    },
  };
}
