// Kubeconfig files for clients of a kplane server: the admin one `kplane serve` writes next to its
// data, and token-based ones for other users. Credentials are embedded (`*-data`), so the file
// stays valid when the PKI directory moves or is unreadable to the client.
import { chmod, mkdir, rename, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { stringify } from 'yaml';
import type { Pki } from './certs.js';

export interface KubeconfigCluster {
  server: string;
  'certificate-authority-data'?: string;
}

export interface KubeconfigUser {
  'client-certificate-data'?: string;
  'client-key-data'?: string;
  token?: string;
}

/** The subset of clientcmd's v1 Config kplane writes. */
export interface Kubeconfig {
  apiVersion: 'v1';
  kind: 'Config';
  clusters: { name: string; cluster: KubeconfigCluster }[];
  users: { name: string; user: KubeconfigUser }[];
  contexts: { name: string; context: { cluster: string; user: string; namespace?: string } }[];
  'current-context': string;
  preferences: Record<string, never>;
}

export const DEFAULT_CONTEXT_NAME = 'kplane';

const base64 = (pem: string): string => Buffer.from(pem, 'utf8').toString('base64');

function singleContext(contextName: string, cluster: KubeconfigCluster, userName: string, user: KubeconfigUser): Kubeconfig {
  return {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: contextName, cluster }],
    users: [{ name: userName, user }],
    contexts: [{ name: contextName, context: { cluster: contextName, user: userName } }],
    'current-context': contextName,
    preferences: {},
  };
}

export interface AdminKubeconfigOptions {
  /** e.g. `https://127.0.0.1:6443` (IPv6 hosts in brackets). */
  readonly server: string;
  readonly pki: Pick<Pki, 'caCertPem' | 'adminCertPem' | 'adminKeyPem'>;
  readonly contextName?: string;
}

export function adminKubeconfig(opts: AdminKubeconfigOptions): Kubeconfig {
  const contextName = opts.contextName ?? DEFAULT_CONTEXT_NAME;
  return singleContext(contextName, { server: opts.server, 'certificate-authority-data': base64(opts.pki.caCertPem) }, `${contextName}-admin`, {
    'client-certificate-data': base64(opts.pki.adminCertPem),
    'client-key-data': base64(opts.pki.adminKeyPem),
  });
}

export interface TokenKubeconfigOptions {
  readonly server: string;
  readonly caCertPem: string;
  readonly token: string;
  /** Name of the user entry in the file (not the authenticated user name, which the server decides). */
  readonly userName?: string;
  readonly contextName?: string;
}

export function tokenKubeconfig(opts: TokenKubeconfigOptions): Kubeconfig {
  const contextName = opts.contextName ?? DEFAULT_CONTEXT_NAME;
  return singleContext(contextName, { server: opts.server, 'certificate-authority-data': base64(opts.caCertPem) }, opts.userName ?? `${contextName}-token`, {
    token: opts.token,
  });
}

export function kubeconfigToYaml(config: Kubeconfig): string {
  return stringify(config, { lineWidth: 0 });
}

/** Writes atomically with mode 0600 (the file holds a private key or token); returns `path`. */
export async function writeKubeconfig(path: string, config: Kubeconfig): Promise<string> {
  await mkdir(dirname(path), { recursive: true });
  const tmp = `${path}.${process.pid}.tmp`;
  await writeFile(tmp, kubeconfigToYaml(config), { mode: 0o600 });
  await chmod(tmp, 0o600);
  await rename(tmp, path);
  return path;
}

export async function writeAdminKubeconfig(path: string, opts: AdminKubeconfigOptions): Promise<string> {
  return writeKubeconfig(path, adminKubeconfig(opts));
}

export async function writeTokenKubeconfig(path: string, opts: TokenKubeconfigOptions): Promise<string> {
  return writeKubeconfig(path, tokenKubeconfig(opts));
}
