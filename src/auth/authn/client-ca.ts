// `--client-ca-file`: a PEM bundle of CA certificates that client certificates may chain to.
import { X509Certificate } from 'node:crypto';

/** Checks the bundle holds at least one certificate, each parseable; returns the PEM as given. */
export function loadClientCA(pem: string, source: string): string {
  const blocks = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  if (blocks.length === 0)
    throw new Error(`unable to load client CA file ${JSON.stringify(source)}: data does not contain any valid RSA or ECDSA certificates`);
  for (const b of blocks) {
    try {
      new X509Certificate(b);
    } catch (e) {
      throw new Error(`unable to load client CA file ${JSON.stringify(source)}: ${(e as Error).message}`, { cause: e });
    }
  }
  return pem;
}
