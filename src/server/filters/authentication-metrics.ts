// The authentication filter's metrics, as upstream's (apiserver/pkg/endpoints/filters/metrics.go):
//
//   authentication_attempts{result}            counter
//   authentication_duration_seconds{result}    histogram, buckets 1 ms × 2^0..14
//   authenticated_user_requests{username}      counter, the user name compressed to a category
//
// result is `success`, `failure` (no credentials and no anonymous) or `error` (credentials that
// nobody accepted). Counted in plain numbers on the request path and handed to prom-client when
// scraped, so a request pays no label hashing.
import { Counter, type Registry } from 'prom-client';
import { SeriesHistogram } from '../series-metrics.js';

export type AuthenticationResult = 'success' | 'failure' | 'error';

const RESULTS: readonly AuthenticationResult[] = ['success', 'failure', 'error'];

/** metrics.ExponentialBuckets(0.001, 2, 15). */
const DURATION_BUCKETS = Array.from({ length: 15 }, (_, i) => 0.001 * 2 ** i);

/** compressUsername: a handful of known identities, `email_id`, or `other`, never the name itself. */
export function compressUsername(username: string): string {
  switch (username) {
    case 'admin':
    case 'client':
    case 'kube_proxy':
    case 'kubelet':
    case 'system:serviceaccount:kube-system:default':
      return username;
    default:
      return username.includes('@') ? 'email_id' : 'other';
  }
}

export class AuthenticationMetrics {
  private readonly attempts: Record<AuthenticationResult, number> = { success: 0, failure: 0, error: 0 };
  private readonly users = new Map<string, number>();
  private readonly duration: SeriesHistogram;

  constructor(registry: Registry) {
    const attempts = this.attempts;
    const users = this.users;
    new Counter({
      name: 'authentication_attempts',
      help: 'Counter of authenticated attempts.',
      labelNames: ['result'] as const,
      registers: [registry],
      collect() {
        this.reset();
        for (const r of RESULTS) if (attempts[r] > 0) this.inc({ result: r }, attempts[r]);
      },
    });
    new Counter({
      name: 'authenticated_user_requests',
      help: 'Counter of authenticated requests broken out by username.',
      labelNames: ['username'] as const,
      registers: [registry],
      collect() {
        this.reset();
        for (const [username, n] of users) this.inc({ username }, n);
      },
    });
    this.duration = new SeriesHistogram(
      'authentication_duration_seconds',
      'Authentication duration in seconds broken out by result.',
      DURATION_BUCKETS,
      registry,
    );
  }

  /** One authentication: its result, how long it took, and (on success) who. */
  record(result: AuthenticationResult, seconds: number, username?: string): void {
    this.attempts[result]++;
    this.duration.observe(this.duration.find(result) ?? this.duration.add(result, { result }), seconds);
    if (username !== undefined) {
      const category = compressUsername(username);
      this.users.set(category, (this.users.get(category) ?? 0) + 1);
    }
  }
}
