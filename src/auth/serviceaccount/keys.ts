// ServiceAccount token keys as kube-apiserver takes them: one private key that signs
// (--service-account-signing-key-file) and any number of keys that verify
// (--service-account-key-file, repeatable: public keys, private keys or certificates, so a key
// being rotated out keeps verifying the tokens it signed). Without flags kplane keeps a key of its
// own in the data directory, made at first start (kubeadm's pki/sa.key), so tokens outlive a restart.
import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject, X509Certificate } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ensurePrivateFile } from '../../storage/private-files.js';

/** A JWS algorithm kube signs with: RS256 for RSA, ES256/384/512 by the ECDSA curve. */
export type SigningAlgorithm = 'RS256' | 'ES256' | 'ES384' | 'ES512';

export interface VerificationKey {
  readonly key: KeyObject;
  /** keyIDFromPublicKey: base64url (no padding) of the SHA-256 of the key's PKIX DER. */
  readonly keyId: string;
  readonly algorithm: SigningAlgorithm;
}

export interface SigningKey extends VerificationKey {
  readonly privateKey: KeyObject;
}

export interface ServiceAccountKeys {
  readonly signing: SigningKey;
  /** Every key a token may be signed with; the signing key's public half is among them. */
  readonly verification: readonly VerificationKey[];
}

/** Upstream's keyIDFromPublicKey. */
export function keyIdOf(publicKey: KeyObject): string {
  const der = publicKey.export({ type: 'spki', format: 'der' });
  return createHash('sha256').update(der).digest('base64url');
}

/** algorithmFromPublicKey: RSA keys sign RS256; ECDSA by curve; anything else is refused. */
export function algorithmOf(publicKey: KeyObject): SigningAlgorithm {
  if (publicKey.asymmetricKeyType === 'rsa') return 'RS256';
  if (publicKey.asymmetricKeyType === 'ec') {
    switch (publicKey.asymmetricKeyDetails?.namedCurve) {
      case 'prime256v1':
        return 'ES256';
      case 'secp384r1':
        return 'ES384';
      case 'secp521r1':
        return 'ES512';
      default:
        throw new Error('unknown private key curve, must be 256, 384, or 521');
    }
  }
  throw new Error('unknown public key type, must be *rsa.PublicKey, *ecdsa.PublicKey, or jose.OpaqueSigner');
}

function verificationKey(key: KeyObject): VerificationKey {
  return { key, keyId: keyIdOf(key), algorithm: algorithmOf(key) };
}

const PEM_BLOCK = /-----BEGIN ([A-Z0-9 ]+)-----[\s\S]*?-----END \1-----/g;

/** keyutil.PublicKeysFromFile: every public key, private key (its public half) or certificate in a PEM file. */
export function parsePublicKeysPEM(pem: string, source: string): VerificationKey[] {
  const out: VerificationKey[] = [];
  for (const m of pem.matchAll(PEM_BLOCK)) {
    const type = m[1]!;
    const block = m[0];
    let key: KeyObject | undefined;
    try {
      if (type === 'CERTIFICATE') key = new X509Certificate(block).publicKey;
      else if (type === 'PUBLIC KEY' || type === 'RSA PUBLIC KEY') key = createPublicKey(block);
      else if (type === 'PRIVATE KEY' || type === 'RSA PRIVATE KEY' || type === 'EC PRIVATE KEY') key = createPublicKey(createPrivateKey(block));
    } catch (e) {
      throw new Error(`error reading public key file ${source}: ${(e as Error).message}`, { cause: e });
    }
    if (key && (key.asymmetricKeyType === 'rsa' || key.asymmetricKeyType === 'ec')) out.push(verificationKey(key));
  }
  if (out.length === 0) throw new Error(`error reading public key file ${source}: data does not contain any valid RSA or ECDSA public keys`);
  return out;
}

/** keyutil.PrivateKeyFromFile: the first RSA or ECDSA private key in a PEM file. */
export function parsePrivateKeyPEM(pem: string, source: string): SigningKey {
  for (const m of pem.matchAll(PEM_BLOCK)) {
    const type = m[1]!;
    if (type !== 'PRIVATE KEY' && type !== 'RSA PRIVATE KEY' && type !== 'EC PRIVATE KEY') continue;
    let privateKey: KeyObject;
    try {
      privateKey = createPrivateKey(m[0]);
    } catch (e) {
      throw new Error(`failed to parse service-account-issuer-key-file: ${source}: ${(e as Error).message}`, { cause: e });
    }
    const pub = createPublicKey(privateKey);
    try {
      return { privateKey, ...verificationKey(pub) };
    } catch (e) {
      throw new Error(`failed to build token generator: ${source}: ${(e as Error).message}`, { cause: e });
    }
  }
  throw new Error(`failed to parse service-account-issuer-key-file: ${source}: data does not contain a valid RSA or ECDSA private key`);
}

export interface LoadKeysOptions {
  /** --service-account-signing-key-file. */
  readonly signingKeyFile?: string;
  /** --service-account-key-file (repeatable). Default: the signing key file. */
  readonly keyFiles?: readonly string[];
  /** Where the generated key lives when no signing key file is given (`<dataDir>/pki/sa.key`). */
  readonly dataDir: string;
  readonly log?: (msg: string) => void;
}

/** The key file kplane makes when given none. */
export function generatedKeyPath(dataDir: string): string {
  return join(dataDir, 'pki', 'sa.key');
}

/**
 * The keys of a control plane. Several API servers on one etcd must be given the same key files
 * (each would otherwise make its own, and refuse the others' tokens).
 */
export function loadServiceAccountKeys(opts: LoadKeysOptions): ServiceAccountKeys {
  let signingFile = opts.signingKeyFile;
  if (!signingFile) {
    signingFile = generatedKeyPath(opts.dataDir);
    if (!existsSync(signingFile)) {
      const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
      ensurePrivateFile(signingFile, { create: true });
      writeFileSync(signingFile, privateKey.export({ type: 'pkcs1', format: 'pem' }), { mode: 0o600 });
      opts.log?.(`service account signing key generated at ${signingFile}`);
    } else {
      ensurePrivateFile(signingFile, opts.log ? { log: opts.log } : {});
    }
  }
  const signing = parsePrivateKeyPEM(readFileSync(signingFile, 'utf8'), signingFile);
  const verification: VerificationKey[] = [];
  const seen = new Set<string>();
  const add = (k: VerificationKey): void => {
    if (seen.has(k.keyId)) return;
    seen.add(k.keyId);
    verification.push(k);
  };
  const files = opts.keyFiles?.length ? opts.keyFiles : [signingFile];
  for (const f of files) for (const k of parsePublicKeysPEM(readFileSync(f, 'utf8'), f)) add(k);
  // Upstream refuses to start when the signing key is not among the verification keys only with
  // --service-account-key-file given explicitly; kplane always verifies what it signs.
  add({ key: createPublicKey(signing.privateKey), keyId: signing.keyId, algorithm: signing.algorithm });
  return { signing, verification };
}
