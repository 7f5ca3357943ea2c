// A node:test reporter that sums the durations of each test file's top-level tests and writes
// them as JSON ({ "path/to/file.test.ts": seconds }, longest first). scripts/run-tests.mjs adds it
// beside the spec reporter and orders the next run's files by scripts/test-durations.json, so the
// longest files start first and the parallel slots finish together. After a full `npm test`,
// `cp .test-durations.json scripts/test-durations.json` refreshes that order.
import { relative } from 'node:path';

/** @param {AsyncIterable<{ type: string, data: { nesting: number, file?: string, details?: { duration_ms?: number } } }>} source */
export default async function* durations(source) {
  /** @type {Map<string, number>} */
  const perFile = new Map();
  for await (const event of source) {
    if (event.type !== 'test:pass' && event.type !== 'test:fail') continue;
    const { nesting, file, details } = event.data;
    if (nesting !== 0 || !file) continue;
    const key = relative(process.cwd(), file);
    perFile.set(key, (perFile.get(key) ?? 0) + (details?.duration_ms ?? 0) / 1000);
  }
  const sorted = [...perFile].sort((a, b) => b[1] - a[1]).map(([f, s]) => [f, Math.round(s * 10) / 10]);
  yield `${JSON.stringify(Object.fromEntries(sorted), null, 1)}\n`;
}
