// The connection of an authorization webhook, from `--authorization-webhook-config-file`: a
// kubeconfig (clientcmd's format) whose current context names the remote service (the cluster:
// `server`, `certificate-authority(-data)`, `insecure-skip-tls-verify`, `tls-server-name`) and
// the credentials kplane presents to it (the user: `client-certificate(-data)` with
// `client-key(-data)`, or `token` / `tokenFile`). Read once at start; what clientcmd would refuse
// (a missing file, bad YAML or base64, no server, a CA or key that does not load) is refused here
// with the file and the field named, so a broken webhook is a start-up error, not a 403 later.
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, join } from 'node:path';
import { createSecureContext } from 'node:tls';
import { parse as parseYaml } from 'yaml';
import { decodeStdBase64, corruptInputError } from '../../golang/base64.js';

/** Where and how the webhook is reached: node:https options, resolved and checked. */
export interface WebhookConnection {
  /** The exact URL the SubjectAccessReview is POSTed to (the cluster's `server`). */
  readonly url: string;
  readonly caPem?: string;
  readonly certPem?: string;
  readonly keyPem?: string;
  readonly token?: string;
  readonly insecureSkipTLSVerify?: boolean;
  readonly tlsServerName?: string;
}

type Obj = Readonly<Record<string, unknown>>;

const obj = (v: unknown): Obj => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Obj) : {});
const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

/** A kubeconfig's named list (clusters, users, contexts) as a map, the way clientcmd's v1 conversion reads it. */
function named(list: unknown, field: string): Map<string, Obj> {
  const out = new Map<string, Obj>();
  if (list === undefined || list === null) return out;
  if (!Array.isArray(list)) throw new Error(`${field}: expected a list`);
  for (const item of list) {
    const o = obj(item);
    const name = typeof o['name'] === 'string' ? o['name'] : '';
    out.set(name, obj(o[field === 'clusters' ? 'cluster' : field === 'users' ? 'user' : 'context']));
  }
  return out;
}

/**
 * Loads and checks the webhook kubeconfig at `path` (clientcmd's ClientConfig: the current
 * context, its cluster and user; relative paths in the file are relative to the file). Errors read
 * `--authorization-webhook-config-file "<path>": <clientcmd's text>`.
 */
export function loadWebhookKubeconfig(path: string, flag = '--authorization-webhook-config-file'): WebhookConnection {
  const fail = (msg: string): never => {
    throw new Error(`${flag} ${JSON.stringify(path)}: ${msg}`);
  };
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    return fail(code === 'ENOENT' ? `stat ${path}: no such file or directory` : `error loading config file: ${(e as Error).message}`);
  }
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (e) {
    return fail(`error loading config file ${JSON.stringify(path)}: yaml: ${(e as Error).message.split('\n')[0]}`);
  }
  if (doc !== null && doc !== undefined && (typeof doc !== 'object' || Array.isArray(doc)))
    return fail(`error loading config file ${JSON.stringify(path)}: couldn't get version/kind; json parse error: the file is not a kubeconfig object`);
  const top = obj(doc);
  let clusters: Map<string, Obj>, users: Map<string, Obj>, contexts: Map<string, Obj>;
  try {
    clusters = named(top['clusters'], 'clusters');
    users = named(top['users'], 'users');
    contexts = named(top['contexts'], 'contexts');
  } catch (e) {
    return fail(`error loading config file ${JSON.stringify(path)}: ${(e as Error).message}`);
  }
  if (clusters.size === 0 && contexts.size === 0)
    return fail('invalid configuration: no configuration has been provided, try setting KUBERNETES_MASTER environment variable');
  const contextName = typeof top['current-context'] === 'string' ? top['current-context'] : '';
  const ctx = contexts.get(contextName);
  if (contextName !== '' && !ctx) return fail(`invalid configuration: context was not found for specified context: ${contextName}`);
  const clusterName = str(ctx?.['cluster']) ?? '';
  const userName = str(ctx?.['user']) ?? '';
  const cluster = clusters.get(clusterName) ?? {};
  const user = users.get(userName) ?? {};
  const errors: string[] = [];
  const baseDir = dirname(path);
  const readRef = (p: string, what: string, owner: string): string | undefined => {
    const full = isAbsolute(p) ? p : join(baseDir, p);
    try {
      return readFileSync(full, 'utf8');
    } catch (e) {
      const why = (e as NodeJS.ErrnoException).code === 'ENOENT' ? `open ${full}: no such file or directory` : (e as Error).message;
      errors.push(`unable to read ${what} ${full} for ${owner} due to ${why}`);
      return undefined;
    }
  };
  // []byte fields are base64 in the file; clientcmd fails the whole load on bad base64.
  const data = (v: unknown, field: string): string | undefined => {
    const s = str(v);
    if (s === undefined) return undefined;
    const bytes = decodeStdBase64(s);
    if (typeof bytes === 'number') fail(`error loading config file ${JSON.stringify(path)}: ${field}: ${corruptInputError(bytes)}`);
    return (bytes as Buffer).toString('utf8');
  };
  const server = str(cluster['server']);
  if (!server) errors.push(clusterName === '' ? 'cluster has no server defined' : `no server found for cluster ${JSON.stringify(clusterName)}`);
  else if (!URL.canParse(server) || !['https:', 'http:'].includes(new URL(server).protocol))
    errors.push(`host must be a URL or a host:port pair: ${JSON.stringify(server)} (cluster ${JSON.stringify(clusterName)}, field server)`);
  const insecure = cluster['insecure-skip-tls-verify'] === true;
  let caPem = data(cluster['certificate-authority-data'], `clusters[${JSON.stringify(clusterName)}].certificate-authority-data`);
  const caFile = str(cluster['certificate-authority']);
  if (caPem === undefined && caFile) caPem = readRef(caFile, 'certificate-authority', clusterName);
  if (insecure && (caPem !== undefined || caFile))
    errors.push(`specifying a root certificates file with the insecure flag is not allowed (cluster ${JSON.stringify(clusterName)})`);
  if (caPem !== undefined) {
    try {
      new X509Certificate(caPem);
    } catch {
      errors.push(`unable to load root certificates from certificate-authority of cluster ${JSON.stringify(clusterName)}: unable to parse bytes as PEM block`);
    }
  }
  let certPem = data(user['client-certificate-data'], `users[${JSON.stringify(userName)}].client-certificate-data`);
  const certFile = str(user['client-certificate']);
  if (certPem === undefined && certFile) certPem = readRef(certFile, 'client-cert', userName);
  let keyPem = data(user['client-key-data'], `users[${JSON.stringify(userName)}].client-key-data`);
  const keyFile = str(user['client-key']);
  if (keyPem === undefined && keyFile) keyPem = readRef(keyFile, 'client-key', userName);
  const hasCert = certPem !== undefined || certFile !== undefined;
  const hasKey = keyPem !== undefined || keyFile !== undefined;
  if (hasCert && !hasKey) errors.push(`client-key-data or client-key must be specified for ${userName} to use the clientCert authentication method.`);
  if (hasKey && !hasCert) errors.push(`client-cert-data or client-cert must be specified for ${userName} to use the clientCert authentication method.`);
  if (certPem !== undefined && keyPem !== undefined) {
    try {
      createPrivateKey(keyPem);
      createSecureContext({ cert: certPem, key: keyPem });
    } catch (e) {
      errors.push(`tls: failed to load the client certificate and key of user ${JSON.stringify(userName)}: ${(e as Error).message}`);
    }
  }
  let token = str(user['token']);
  const tokenFile = str(user['tokenFile']);
  if (token === undefined && tokenFile) token = readRef(tokenFile, 'tokenFile', userName)?.trim();
  if (errors.length) fail(errors.length === 1 ? `invalid configuration: ${errors[0]}` : `invalid configuration: [${errors.join(', ')}]`);
  const tlsServerName = str(cluster['tls-server-name']);
  return {
    url: server!,
    ...(caPem !== undefined && !insecure ? { caPem } : {}),
    ...(certPem !== undefined ? { certPem } : {}),
    ...(keyPem !== undefined ? { keyPem } : {}),
    ...(token !== undefined ? { token } : {}),
    ...(insecure ? { insecureSkipTLSVerify: true } : {}),
    ...(tlsServerName ? { tlsServerName } : {}),
  };
}
