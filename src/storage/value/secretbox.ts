// The `secretbox` provider (k8s.io/apiserver/pkg/storage/value/encrypt/secretbox): XSalsa20 and
// Poly1305 with a 32-byte key, NaCl's secretbox. Stored layout as upstream's:
//   nonce(24) | tag(16) | ciphertext
import { randomBytes } from 'node:crypto';
import { xsalsa20poly1305 } from '@noble/ciphers/salsa.js';
import { TransformError, type FromStorage, type Transformer } from './transformer.js';

const NONCE_SIZE = 24;
const OVERHEAD = 16;

export function secretboxTransformer(key: Uint8Array): Transformer {
  if (key.length !== 32) throw new Error(`expected key size 32 for secretbox provider, got ${key.length}`);
  const k = Uint8Array.from(key);
  return {
    fromStorage(data: Uint8Array): FromStorage {
      if (data.length < OVERHEAD + NONCE_SIZE) throw new TransformError('the stored data was shorter than the required size');
      try {
        const out = xsalsa20poly1305(k, data.subarray(0, NONCE_SIZE)).decrypt(data.subarray(NONCE_SIZE));
        return { data: out, stale: false };
      } catch {
        // Upstream's words for a box that does not open (wrong key or tampered value).
        throw new TransformError('output array was not large enough for encryption');
      }
    },
    toStorage(data: Uint8Array): Uint8Array {
      const nonce = randomBytes(NONCE_SIZE);
      const sealed = xsalsa20poly1305(k, nonce).encrypt(data);
      const out = Buffer.allocUnsafe(NONCE_SIZE + sealed.length);
      out.set(nonce, 0);
      out.set(sealed, NONCE_SIZE);
      return out;
    },
  };
}
