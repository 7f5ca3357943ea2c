// The TLS settings kube-apiserver serves with, for node:tls: Go's crypto/tls default cipher suites
// for TLS 1.2 (the Go kube 1.33 is built with), and the --tls-cipher-suites / --tls-min-version
// flags with component-base's names and messages (cli/flag/ciphersuites_flag.go).

/** A cipher suite as Go names it (IANA's name), with OpenSSL's name for the same suite. */
interface Suite {
  readonly go: string;
  readonly openssl: string;
  /** in tls.InsecureCipherSuites() (RC4, CBC-SHA256) */
  readonly insecure?: boolean;
}

// In Go's preference order (cipherSuitesPreferenceOrder, AES-GCM hardware): since Go 1.17 the
// server picks by this order whatever order the configuration lists, so the node server honours it.
const TLS12_SUITES: readonly Suite[] = [
  { go: 'TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256', openssl: 'ECDHE-ECDSA-AES128-GCM-SHA256' },
  { go: 'TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256', openssl: 'ECDHE-RSA-AES128-GCM-SHA256' },
  { go: 'TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384', openssl: 'ECDHE-ECDSA-AES256-GCM-SHA384' },
  { go: 'TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384', openssl: 'ECDHE-RSA-AES256-GCM-SHA384' },
  { go: 'TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256', openssl: 'ECDHE-ECDSA-CHACHA20-POLY1305' },
  { go: 'TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256', openssl: 'ECDHE-RSA-CHACHA20-POLY1305' },
  { go: 'TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA', openssl: 'ECDHE-ECDSA-AES128-SHA' },
  { go: 'TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA', openssl: 'ECDHE-RSA-AES128-SHA' },
  { go: 'TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA', openssl: 'ECDHE-ECDSA-AES256-SHA' },
  { go: 'TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA', openssl: 'ECDHE-RSA-AES256-SHA' },
  { go: 'TLS_RSA_WITH_AES_128_GCM_SHA256', openssl: 'AES128-GCM-SHA256' },
  { go: 'TLS_RSA_WITH_AES_256_GCM_SHA384', openssl: 'AES256-GCM-SHA384' },
  { go: 'TLS_RSA_WITH_AES_128_CBC_SHA', openssl: 'AES128-SHA' },
  { go: 'TLS_RSA_WITH_AES_256_CBC_SHA', openssl: 'AES256-SHA' },
  { go: 'TLS_ECDHE_RSA_WITH_3DES_EDE_CBC_SHA', openssl: 'ECDHE-RSA-DES-CBC3-SHA' },
  { go: 'TLS_RSA_WITH_3DES_EDE_CBC_SHA', openssl: 'DES-CBC3-SHA' },
  { go: 'TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256', openssl: 'ECDHE-ECDSA-AES128-SHA256', insecure: true },
  { go: 'TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256', openssl: 'ECDHE-RSA-AES128-SHA256', insecure: true },
  { go: 'TLS_RSA_WITH_AES_128_CBC_SHA256', openssl: 'AES128-SHA256', insecure: true },
  { go: 'TLS_ECDHE_ECDSA_WITH_RC4_128_SHA', openssl: 'ECDHE-ECDSA-RC4-SHA', insecure: true },
  { go: 'TLS_ECDHE_RSA_WITH_RC4_128_SHA', openssl: 'ECDHE-RSA-RC4-SHA', insecure: true },
  { go: 'TLS_RSA_WITH_RC4_128_SHA', openssl: 'RC4-SHA', insecure: true },
];

/**
 * Go's default TLS 1.2 suites (crypto/tls defaultCipherSuites): ECDHE only (RSA key exchange left
 * the defaults in Go 1.22, 3DES in 1.23), AEADs first, then ECDHE AES-CBC-SHA; never CBC-SHA256 or RC4.
 */
const GO_DEFAULT_TLS12 = new Set(TLS12_SUITES.slice(0, 10).map((s) => s.go));

/** TLS 1.3 suites: accepted by the flag, but neither Go nor this server lets them be configured. */
const TLS13_SUITES = ['TLS_AES_128_GCM_SHA256', 'TLS_AES_256_GCM_SHA384', 'TLS_CHACHA20_POLY1305_SHA256'];

/** component-base keeps these names for backward compatibility. */
const LEGACY_NAMES: Readonly<Record<string, string>> = {
  TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305: 'TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256',
  TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305: 'TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256',
};

const TLS_VERSIONS = { VersionTLS10: 'TLSv1', VersionTLS11: 'TLSv1.1', VersionTLS12: 'TLSv1.2', VersionTLS13: 'TLSv1.3' } as const;
export type TLSVersionName = keyof typeof TLS_VERSIONS;

/** What node:tls takes. */
export interface ServerTLSSettings {
  /** OpenSSL cipher list for TLS 1.2 and below, in Go's preference order. */
  readonly ciphers: string;
  readonly minVersion: 'TLSv1' | 'TLSv1.1' | 'TLSv1.2' | 'TLSv1.3';
  /** the server's order decides, as Go's server does */
  readonly honorCipherOrder: true;
  /** `Use of insecure cipher '…' detected.` lines, as kube-apiserver logs them */
  readonly warnings: readonly string[];
}

/**
 * cliflag.TLSCipherSuites: every name must be one of Go's (secure or insecure) suites, or the
 * error `Cipher suite X not supported or doesn't exist`.
 */
export function checkTLSCipherSuites(names: readonly string[]): void {
  for (const n of names) {
    const go = LEGACY_NAMES[n] ?? n;
    if (!TLS13_SUITES.includes(go) && !TLS12_SUITES.some((s) => s.go === go)) throw new Error(`Cipher suite ${n} not supported or doesn't exist`);
  }
}

/** cliflag.TLSVersion: `''` is the default (VersionTLS12), else one of VersionTLS10..13 or `unknown tls version "X"`. */
export function checkTLSVersion(name: string): TLSVersionName {
  if (name === '') return 'VersionTLS12';
  if (Object.hasOwn(TLS_VERSIONS, name)) return name as TLSVersionName;
  throw new Error(`unknown tls version ${JSON.stringify(name)}`);
}

/**
 * The node:tls settings for kube's --tls-cipher-suites (Go names; none: Go's defaults) and
 * --tls-min-version (default VersionTLS12). Throws component-base's errors for unknown names, and
 * when no TLS 1.2 suite of the list exists in this OpenSSL (RC4 alone) with TLS 1.2 allowed.
 */
export function serverTLSSettings(opts: { cipherSuites?: readonly string[]; minVersion?: string } = {}): ServerTLSSettings {
  const minVersion = TLS_VERSIONS[checkTLSVersion(opts.minVersion ?? '')];
  const names = opts.cipherSuites ?? [];
  checkTLSCipherSuites(names);
  const chosen = names.length ? new Set(names.map((n) => LEGACY_NAMES[n] ?? n)) : GO_DEFAULT_TLS12;
  const suites = TLS12_SUITES.filter((s) => chosen.has(s.go));
  const warnings = names.length ? suites.filter((s) => s.insecure).map((s) => `Use of insecure cipher '${s.go}' detected.`) : [];
  // Only TLS 1.3 suites named: Go then has no TLS 1.2 suite to agree on. OpenSSL refuses an empty
  // list, so say it as what it means: TLS 1.3 only.
  if (!suites.length) return { ciphers: TLS12_SUITES[0]!.openssl, minVersion: 'TLSv1.3', honorCipherOrder: true, warnings };
  return { ciphers: suites.map((s) => s.openssl).join(':'), minVersion, honorCipherOrder: true, warnings };
}
