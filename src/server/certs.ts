// The API server's PKI: one CA, a serving certificate for the hosts clients dial, and an admin
// client certificate (system:masters) for the kubeconfig `kplane serve` writes.
// Keys come from node's crypto (native, milliseconds); node-forge only assembles and signs the
// certificates, because RSA key generation in forge's pure JS takes seconds.
import { X509Certificate, createPrivateKey, generateKeyPairSync, randomBytes } from 'node:crypto';
import { chmod, mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { isIP } from 'node:net';
import { join } from 'node:path';
import forge from 'node-forge';

export const DEFAULT_SERVING_HOSTS: readonly string[] = ['127.0.0.1', '::1', 'localhost'];
export const ADMIN_USER_NAME = 'kplane-admin';
export const ADMIN_GROUP = 'system:masters';

const CA_VALIDITY_DAYS = 3650;
const LEAF_VALIDITY_DAYS = 365;
/** A certificate closer than this to its notAfter is reissued at start. */
const RENEW_BEFORE_EXPIRY_MS = 30 * 24 * 3600 * 1000;
/** Tolerates clients whose clock runs a little behind ours. */
const BACKDATE_MS = 5 * 60 * 1000;

export interface PkiPaths {
  readonly dir: string;
  readonly caCert: string;
  readonly caKey: string;
  readonly servingCert: string;
  readonly servingKey: string;
  readonly adminCert: string;
  readonly adminKey: string;
}

export interface Pki {
  readonly caCertPem: string;
  readonly servingCertPem: string;
  readonly servingKeyPem: string;
  readonly adminCertPem: string;
  readonly adminKeyPem: string;
  readonly paths: PkiPaths;
  /** What this call (re)generated, e.g. `['ca', 'serving', 'admin']` on first start; empty when all was loaded. */
  readonly generated: readonly ('ca' | 'serving' | 'admin')[];
}

export interface EnsurePkiOptions {
  /** Host names and IPs the serving certificate must cover. */
  readonly hosts?: readonly string[];
  /** Injected for tests of the renewal rule. */
  readonly now?: () => Date;
}

export interface CertAndKey {
  readonly certPem: string;
  readonly keyPem: string;
}

export interface IssueOptions {
  readonly commonName: string;
  readonly organizations?: readonly string[];
  /** DNS names and IPs for the subjectAltName (serving certificates). */
  readonly hosts?: readonly string[];
  readonly usage: 'server' | 'client';
  readonly validityDays?: number;
  readonly now?: Date;
}

export function pkiPaths(dir: string): PkiPaths {
  const pkiDir = join(dir, 'pki');
  return {
    dir: pkiDir,
    caCert: join(pkiDir, 'ca.crt'),
    caKey: join(pkiDir, 'ca.key'),
    servingCert: join(pkiDir, 'apiserver.crt'),
    servingKey: join(pkiDir, 'apiserver.key'),
    adminCert: join(pkiDir, 'admin.crt'),
    adminKey: join(pkiDir, 'admin.key'),
  };
}

function newRsaKeyPem(): string {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return privateKey.export({ type: 'pkcs1', format: 'pem' }).toString();
}

/** 16 random bytes with the top bit clear, so the DER INTEGER stays positive (RFC 5280 4.1.2.2). */
function newSerialHex(): string {
  const bytes = randomBytes(16);
  bytes[0] = bytes[0]! & 0x7f;
  return bytes.toString('hex');
}

function validity(cert: forge.pki.Certificate, now: Date, days: number): void {
  cert.validity.notBefore = new Date(now.getTime() - BACKDATE_MS);
  cert.validity.notAfter = new Date(now.getTime() + days * 24 * 3600 * 1000);
}

function subjectAttributes(commonName: string, organizations: readonly string[] = []): forge.pki.CertificateField[] {
  return [...organizations.map((o) => ({ shortName: 'O', value: o })), { shortName: 'CN', value: commonName }];
}

function forgeKeys(keyPem: string): { privateKey: forge.pki.rsa.PrivateKey; publicKey: forge.pki.rsa.PublicKey } {
  const privateKey = forge.pki.privateKeyFromPem(keyPem);
  return { privateKey, publicKey: forge.pki.setRsaPublicKey(privateKey.n, privateKey.e) };
}

export function createCertificateAuthority(opts: { commonName?: string; validityDays?: number; now?: Date } = {}): CertAndKey {
  const keyPem = newRsaKeyPem();
  const { privateKey, publicKey } = forgeKeys(keyPem);
  const cert = forge.pki.createCertificate();
  cert.publicKey = publicKey;
  cert.serialNumber = newSerialHex();
  validity(cert, opts.now ?? new Date(), opts.validityDays ?? CA_VALIDITY_DAYS);
  const subject = subjectAttributes(opts.commonName ?? 'kplane-ca');
  cert.setSubject(subject);
  cert.setIssuer(subject);
  // Python >= 3.13 verifies with VERIFY_X509_STRICT, which wants a critical basicConstraints,
  // keyUsage and a subjectKeyIdentifier on CAs, and an authorityKeyIdentifier on leaves.
  cert.setExtensions([
    { name: 'basicConstraints', cA: true, critical: true },
    { name: 'keyUsage', keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
    { name: 'subjectKeyIdentifier' },
  ]);
  cert.sign(privateKey, forge.md.sha256.create());
  return { certPem: forge.pki.certificateToPem(cert), keyPem };
}

function altName(host: string): { type: number; value?: string; ip?: string } {
  // GeneralName tags: 2 = dNSName, 7 = iPAddress.
  return isIP(host) ? { type: 7, ip: host } : { type: 2, value: host };
}

/** Issues a leaf certificate signed by `ca`. */
export function issueCertificate(ca: CertAndKey, opts: IssueOptions): CertAndKey {
  const keyPem = newRsaKeyPem();
  const { publicKey } = forgeKeys(keyPem);
  const caCert = forge.pki.certificateFromPem(ca.certPem);
  const caKey = forge.pki.privateKeyFromPem(ca.keyPem);
  const cert = forge.pki.createCertificate();
  cert.publicKey = publicKey;
  cert.serialNumber = newSerialHex();
  validity(cert, opts.now ?? new Date(), opts.validityDays ?? LEAF_VALIDITY_DAYS);
  cert.setSubject(subjectAttributes(opts.commonName, opts.organizations));
  cert.setIssuer(caCert.subject.attributes);
  const extensions: object[] = [
    { name: 'basicConstraints', cA: false, critical: true },
    { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
    opts.usage === 'server' ? { name: 'extKeyUsage', serverAuth: true } : { name: 'extKeyUsage', clientAuth: true },
    { name: 'subjectKeyIdentifier' },
    { name: 'authorityKeyIdentifier', keyIdentifier: caCert.generateSubjectKeyIdentifier().getBytes() },
  ];
  if (opts.hosts?.length) extensions.push({ name: 'subjectAltName', altNames: opts.hosts.map(altName) });
  cert.setExtensions(extensions);
  cert.sign(caKey, forge.md.sha256.create());
  return { certPem: forge.pki.certificateToPem(cert), keyPem };
}

/** A host as it appears in a SAN, comparable across spellings (`::1` vs `0:0:0:0:0:0:0:1`). */
function canonicalHost(host: string): string {
  switch (isIP(host)) {
    case 4:
      return `ip:${host}`;
    case 6:
      // The WHATWG URL parser prints IPv6 in its compressed canonical form.
      return `ip:${new URL(`http://[${host}]/`).hostname}`;
    default:
      return `dns:${host.toLowerCase()}`;
  }
}

function sanHosts(certPem: string): Set<string> {
  const cert = forge.pki.certificateFromPem(certPem);
  // node-forge types every extension as {}; subjectAltName's carries altNames.
  const ext: { altNames?: { type: number; value: string; ip?: string }[] } | undefined = cert.getExtension('subjectAltName');
  const out = new Set<string>();
  for (const n of ext?.altNames ?? []) {
    if (n.type === 7 && n.ip) out.add(canonicalHost(n.ip));
    else if (n.type === 2) out.add(canonicalHost(n.value));
  }
  return out;
}

function sameHosts(certPem: string, hosts: readonly string[]): boolean {
  const have = sanHosts(certPem);
  const want = new Set(hosts.map(canonicalHost));
  return have.size === want.size && [...want].every((h) => have.has(h));
}

/** Why a stored leaf must be reissued, or undefined when it is still good. */
function leafProblem(leaf: CertAndKey, caCertPem: string, nowMs: number): string | undefined {
  try {
    const cert = new X509Certificate(leaf.certPem);
    const ca = new X509Certificate(caCertPem);
    if (!cert.checkIssued(ca) || !cert.verify(ca.publicKey)) return 'not signed by the current CA';
    if (!cert.checkPrivateKey(createPrivateKey(leaf.keyPem))) return 'key does not match certificate';
    if (Date.parse(cert.validTo) - nowMs < RENEW_BEFORE_EXPIRY_MS) return 'expires within 30 days';
    return undefined;
  } catch (e) {
    return `unreadable: ${e instanceof Error ? e.message : String(e)}`;
  }
}

async function readIfExists(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
}

async function readPair(certPath: string, keyPath: string): Promise<CertAndKey | undefined> {
  const [certPem, keyPem] = await Promise.all([readIfExists(certPath), readIfExists(keyPath)]);
  return certPem !== undefined && keyPem !== undefined ? { certPem, keyPem } : undefined;
}

/** Write-then-rename, so a crash mid-write never leaves half a PEM that the next start would reject. */
async function writeAtomic(path: string, data: string, mode: number): Promise<void> {
  const tmp = `${path}.${process.pid}.tmp`;
  await writeFile(tmp, data, { mode });
  // writeFile's mode goes through the umask; set it explicitly so the result does not depend on it.
  await chmod(tmp, mode);
  await rename(tmp, path);
}

async function writePair(certPath: string, keyPath: string, pair: CertAndKey): Promise<void> {
  await writeAtomic(keyPath, pair.keyPem, 0o600);
  await writeAtomic(certPath, pair.certPem, 0o644);
}

/**
 * Loads the PKI under `dir/pki/`, creating what is missing. The CA is never replaced silently:
 * if only half of it is on disk we fail, because a new CA would orphan every kubeconfig issued so far.
 */
export async function ensurePki(dir: string, opts: EnsurePkiOptions = {}): Promise<Pki> {
  const paths = pkiPaths(dir);
  const hosts = opts.hosts?.length ? opts.hosts : DEFAULT_SERVING_HOSTS;
  const nowMs = (opts.now?.() ?? new Date()).getTime();
  const generated: ('ca' | 'serving' | 'admin')[] = [];
  await mkdir(paths.dir, { recursive: true, mode: 0o700 });

  const [caCertOnDisk, caKeyOnDisk] = await Promise.all([readIfExists(paths.caCert), readIfExists(paths.caKey)]);
  let ca: CertAndKey;
  if (caCertOnDisk === undefined && caKeyOnDisk === undefined) {
    ca = createCertificateAuthority({ now: new Date(nowMs) });
    await writePair(paths.caCert, paths.caKey, ca);
    generated.push('ca');
  } else if (caCertOnDisk === undefined || caKeyOnDisk === undefined) {
    throw new Error(
      `incomplete CA in ${paths.dir}: ${caCertOnDisk === undefined ? paths.caCert : paths.caKey} is missing; restore it, or delete ${paths.dir} to start a new PKI`,
    );
  } else {
    ca = { certPem: caCertOnDisk, keyPem: caKeyOnDisk };
    const caCert = new X509Certificate(ca.certPem);
    if (!caCert.checkPrivateKey(createPrivateKey(ca.keyPem))) throw new Error(`${paths.caKey} does not match ${paths.caCert}`);
  }

  let serving = await readPair(paths.servingCert, paths.servingKey);
  if (!serving || leafProblem(serving, ca.certPem, nowMs) !== undefined || !sameHosts(serving.certPem, hosts)) {
    serving = issueCertificate(ca, { commonName: 'kplane-apiserver', hosts, usage: 'server', now: new Date(nowMs) });
    await writePair(paths.servingCert, paths.servingKey, serving);
    generated.push('serving');
  }

  let admin = await readPair(paths.adminCert, paths.adminKey);
  if (!admin || leafProblem(admin, ca.certPem, nowMs) !== undefined) {
    admin = issueCertificate(ca, { commonName: ADMIN_USER_NAME, organizations: [ADMIN_GROUP], usage: 'client', now: new Date(nowMs) });
    await writePair(paths.adminCert, paths.adminKey, admin);
    generated.push('admin');
  }

  return {
    caCertPem: ca.certPem,
    servingCertPem: serving.certPem,
    servingKeyPem: serving.keyPem,
    adminCertPem: admin.certPem,
    adminKeyPem: admin.keyPem,
    paths,
    generated,
  };
}

export interface FrontProxyPki {
  /** The CA backends trust for the front-proxy headers (`--requestheader-client-ca-file`). */
  readonly caCertPem: string;
  /** The aggregator's client certificate and key (`--proxy-client-cert-file`, `--proxy-client-key-file`). */
  readonly clientCertPem: string;
  readonly clientKeyPem: string;
  readonly paths: { readonly caCert: string; readonly caKey: string; readonly clientCert: string; readonly clientKey: string };
}

/** The CN of the aggregator's client certificate, as kubeadm names it (backends allow it by name). */
export const FRONT_PROXY_CLIENT_NAME = 'front-proxy-client';

/**
 * The front-proxy PKI under `dir/pki/` (kubeadm's front-proxy-ca and front-proxy-client): a CA of
 * its own, apart from the cluster CA, so that a certificate able to assert any user through the
 * X-Remote-* headers never authenticates as a client certificate of the cluster CA.
 */
export async function ensureFrontProxyPki(dir: string, opts: { now?: () => Date } = {}): Promise<FrontProxyPki> {
  const pkiDir = join(dir, 'pki');
  const paths = {
    caCert: join(pkiDir, 'front-proxy-ca.crt'),
    caKey: join(pkiDir, 'front-proxy-ca.key'),
    clientCert: join(pkiDir, 'front-proxy-client.crt'),
    clientKey: join(pkiDir, 'front-proxy-client.key'),
  };
  const nowMs = (opts.now?.() ?? new Date()).getTime();
  await mkdir(pkiDir, { recursive: true, mode: 0o700 });
  let ca = await readPair(paths.caCert, paths.caKey);
  if (!ca) {
    ca = createCertificateAuthority({ commonName: 'front-proxy-ca', now: new Date(nowMs) });
    await writePair(paths.caCert, paths.caKey, ca);
  }
  let client = await readPair(paths.clientCert, paths.clientKey);
  if (!client || leafProblem(client, ca.certPem, nowMs) !== undefined) {
    client = issueCertificate(ca, { commonName: FRONT_PROXY_CLIENT_NAME, usage: 'client', now: new Date(nowMs) });
    await writePair(paths.clientCert, paths.clientKey, client);
  }
  return { caCertPem: ca.certPem, clientCertPem: client.certPem, clientKeyPem: client.keyPem, paths };
}
