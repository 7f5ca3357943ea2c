// AES providers (k8s.io/apiserver/pkg/storage/value/encrypt/aes): `aesgcm` (random 96-bit nonce,
// the storage key as additional authenticated data) and `aescbc` (random IV, PKCS#7 padding).
// Stored layouts as upstream's, so that either server reads the other's values:
//   aesgcm: nonce(12) | ciphertext | tag(16)      aescbc: iv(16) | ciphertext (padded to 16)
import { createCipheriv, createDecipheriv, randomBytes, type CipherGCMTypes } from 'node:crypto';
import { TransformError, type FromStorage, type TransformContext, type Transformer } from './transformer.js';

const GCM_NONCE_SIZE = 12;
const GCM_TAG_SIZE = 16;
const BLOCK_SIZE = 16;

function algorithm(key: Uint8Array, mode: 'gcm' | 'cbc'): string {
  if (key.length !== 16 && key.length !== 24 && key.length !== 32) throw new Error(`crypto/aes: invalid key size ${key.length}`);
  return `aes-${key.length * 8}-${mode}`;
}

/** aes.NewGCMTransformer: AEAD with a random nonce per write; the value is bound to its storage key. */
export function gcmTransformer(key: Uint8Array): Transformer {
  const alg = algorithm(key, 'gcm') as CipherGCMTypes;
  const k = Buffer.from(key);
  return {
    fromStorage(data: Uint8Array, ctx: TransformContext): FromStorage {
      if (data.length < GCM_NONCE_SIZE) throw new TransformError('the stored data was shorter than the required size');
      if (data.length < GCM_NONCE_SIZE + GCM_TAG_SIZE) throw new TransformError('cipher: message authentication failed');
      const d = createDecipheriv(alg, k, data.subarray(0, GCM_NONCE_SIZE), { authTagLength: GCM_TAG_SIZE });
      d.setAAD(ctx.authenticatedData);
      d.setAuthTag(data.subarray(data.length - GCM_TAG_SIZE));
      try {
        const out = Buffer.concat([d.update(data.subarray(GCM_NONCE_SIZE, data.length - GCM_TAG_SIZE)), d.final()]);
        return { data: out, stale: false };
      } catch {
        throw new TransformError('cipher: message authentication failed');
      }
    },
    toStorage(data: Uint8Array, ctx: TransformContext): Uint8Array {
      const nonce = randomBytes(GCM_NONCE_SIZE);
      const c = createCipheriv(alg, k, nonce, { authTagLength: GCM_TAG_SIZE });
      c.setAAD(ctx.authenticatedData);
      return Buffer.concat([nonce, c.update(data), c.final(), c.getAuthTag()]);
    },
  };
}

/** aes.NewCBCTransformer. Padding is checked here rather than by OpenSSL, to fail with upstream's errors. */
export function cbcTransformer(key: Uint8Array): Transformer {
  const alg = algorithm(key, 'cbc');
  const k = Buffer.from(key);
  return {
    fromStorage(data: Uint8Array): FromStorage {
      if (data.length < BLOCK_SIZE) throw new TransformError('the stored data was shorter than the required size');
      const body = data.subarray(BLOCK_SIZE);
      if (body.length % BLOCK_SIZE !== 0) throw new TransformError('the stored data is not a multiple of the block size');
      if (body.length === 0) throw new TransformError('invalid PKCS7 data (empty or not padded)');
      const d = createDecipheriv(alg, k, data.subarray(0, BLOCK_SIZE));
      d.setAutoPadding(false);
      const result = Buffer.concat([d.update(body), d.final()]);
      const pad = result[result.length - 1]!;
      if (pad === 0 || pad > result.length) throw new TransformError('invalid PKCS7 data (empty or not padded)');
      for (let i = result.length - pad; i < result.length; i++) {
        if (result[i] !== pad) throw new TransformError('invalid padding on input');
      }
      return { data: result.subarray(0, result.length - pad), stale: false };
    },
    toStorage(data: Uint8Array): Uint8Array {
      const iv = randomBytes(BLOCK_SIZE);
      const c = createCipheriv(alg, k, iv);
      // OpenSSL's padding is PKCS#7, as upstream writes it.
      return Buffer.concat([iv, c.update(data), c.final()]);
    },
  };
}
