// How Go's net/http and net would word what node reports for a backend request, for the texts a
// client sees (the Available condition's message, a proxy error's body).
export function goNetErrorText(e: unknown, host: string, port: number): string {
  const err = e as NodeJS.ErrnoException & { reason?: string };
  const addr = `${host.includes(':') ? `[${host}]` : host}:${port}`;
  switch (err?.code) {
    case 'ECONNREFUSED':
      return `dial tcp ${addr}: connect: connection refused`;
    case 'ECONNRESET':
      return `read tcp ${addr}: read: connection reset by peer`;
    case 'ETIMEDOUT':
      return `dial tcp ${addr}: i/o timeout`;
    case 'EHOSTUNREACH':
      return `dial tcp ${addr}: connect: no route to host`;
    case 'DEPTH_ZERO_SELF_SIGNED_CERT':
    case 'SELF_SIGNED_CERT_IN_CHAIN':
    case 'UNABLE_TO_VERIFY_LEAF_SIGNATURE':
    case 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY':
      return 'tls: failed to verify certificate: x509: certificate signed by unknown authority';
    case 'ERR_TLS_CERT_ALTNAME_INVALID':
      return `tls: failed to verify certificate: x509: ${err.reason ?? err.message}`;
    default:
      return err instanceof Error ? err.message : String(e);
  }
}
