// Minimal runner (placeholder: the full runner with --list, JUnit and ordering replaces it).
import type { CcmTestCase, RunSuiteOptions, SuiteEnv, TestResult } from './types.js';

export async function runSuite(opts: RunSuiteOptions & { tests: readonly CcmTestCase[] }): Promise<TestResult[]> {
  const results: TestResult[] = [];
  for (const t of opts.tests) {
    for (const half of ['controlPlane', 'dataPlane'] as const) {
      if (!t[half]) continue;
      const missing = t.needs.capabilities.filter((c) => !opts.driver.capabilities.has(c));
      if (half === 'dataPlane' && !opts.driver.capabilities.has('dataPlane')) missing.push('dataPlane');
      const start = Date.now();
      if (missing.length > 0) {
        results.push({ id: t.id, half, outcome: 'skipped', durationMs: 0, message: `missing capability: ${missing.join(', ')}` });
        continue;
      }
      const namespace = `ccm-${t.id.replace(/[^a-z0-9]+/g, '-')}-${Math.random().toString(36).slice(2, 7)}`.slice(0, 63);
      await opts.client.create({ group: '', version: 'v1', resource: 'namespaces' }, undefined, {
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: { name: namespace },
      });
      const env: SuiteEnv = {
        testId: t.id,
        namespace,
        client: opts.client,
        driver: opts.driver,
        timeouts: { ...opts.driver.timeouts, ...opts.timeouts },
        signal: opts.signal ?? new AbortController().signal,
        log: (m) => opts.log?.(m),
      };
      try {
        await (half === 'controlPlane' ? t.controlPlane?.(env) : t.dataPlane?.(env));
        results.push({ id: t.id, half, outcome: 'passed', durationMs: Date.now() - start });
      } catch (e) {
        results.push({ id: t.id, half, outcome: 'failed', durationMs: Date.now() - start, message: (e as Error).message });
      } finally {
        await opts.client.delete({ group: '', version: 'v1', resource: 'namespaces' }, undefined, namespace).catch(() => {});
      }
      opts.onResult?.(results[results.length - 1]!);
    }
  }
  return results;
}
