// JSON over HTTP to a cloud's admin endpoint (the fake provider's and the loopback cloud's), with
// errors that name the endpoint and what it answered.

export interface AdminHttp {
  readonly url: string;
  call<T>(method: string, path: string, body?: unknown): Promise<{ status: number; body: T }>;
}

/** `config.adminURL` ("http://127.0.0.1:PORT") or `config.adminAddress` ("127.0.0.1:PORT"). */
export function adminURLFrom(driver: string, config: Readonly<Record<string, unknown>>): string {
  const url = config.adminURL ?? (typeof config.adminAddress === 'string' ? `http://${config.adminAddress}` : undefined);
  if (typeof url !== 'string' || !/^https?:\/\/[^/]+/.test(url)) {
    throw new Error(
      `driver ${driver}: config.adminURL is required (the cloud's admin endpoint, e.g. http://127.0.0.1:PORT)${url === undefined ? '' : `, got ${JSON.stringify(url)}`}`,
    );
  }
  return url.replace(/\/+$/, '');
}

export function adminHttp(url: string, timeoutMs = 5000): AdminHttp {
  return {
    url,
    async call<T>(method: string, path: string, body?: unknown): Promise<{ status: number; body: T }> {
      let res: Response;
      try {
        res = await fetch(`${url}${path}`, {
          method,
          signal: AbortSignal.timeout(timeoutMs),
          ...(body !== undefined ? { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } } : {}),
        });
      } catch (e) {
        throw new Error(`cloud admin endpoint ${url}: ${method} ${path} failed: ${(e as Error).message}`, { cause: e });
      }
      const text = await res.text();
      let parsed: unknown;
      try {
        parsed = text ? JSON.parse(text) : undefined;
      } catch {
        throw new Error(`cloud admin endpoint ${url}: ${method} ${path} answered ${res.status} with a body that is not JSON: ${text.slice(0, 200)}`);
      }
      return { status: res.status, body: parsed as T };
    },
  };
}

/** `call` that accepts only a 2xx answer. */
export async function adminOK<T>(admin: AdminHttp, method: string, path: string, body?: unknown): Promise<T> {
  const r = await admin.call<T & { error?: string }>(method, path, body);
  if (r.status < 200 || r.status >= 300) {
    throw new Error(`cloud admin endpoint ${admin.url}: ${method} ${path} answered ${r.status}: ${r.body?.error ?? JSON.stringify(r.body)}`);
  }
  return r.body;
}
