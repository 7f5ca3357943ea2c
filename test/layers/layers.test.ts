// The import-boundary check proves itself: the rules of .dependency-cruiser.mjs (what
// `npm run check:layers` runs over src/) run over a small tree with one violation of each kind and
// must report those and nothing else, so a rule that silently stopped matching fails here.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { repoRoot } from '../support/tools.js';

interface Violation {
  readonly rule: { readonly name: string };
  readonly from: string;
  readonly to: string;
  readonly cycle?: readonly { readonly name: string }[];
}

test('the layer rules report each kind of violation, and only those', async () => {
  const fixture = join(repoRoot, 'test', 'layers', 'fixture');
  const bin = join(repoRoot, 'node_modules', '.bin', 'depcruise');
  // depcruise exits non-zero when it finds violations; the report is what this test reads.
  const out = await promisify(execFile)(bin, ['src', '--config', join(repoRoot, '.dependency-cruiser.mjs'), '--output-type', 'json'], {
    cwd: fixture,
    maxBuffer: 16 << 20,
  }).catch((e: { stdout?: string }) => ({ stdout: e.stdout ?? '' }));
  const result = JSON.parse(out.stdout) as { summary: { violations: Violation[] } };
  const found = result.summary.violations.map((v) => `${v.rule.name}: ${v.from} → ${v.to}`).sort();
  assert.deepEqual(found, [
    'cli-main-lazy: src/cli/main.ts → src/golang/strconv.ts',
    'layer-apiextensions: src/apiextensions/serving.ts → src/server/apiserver.ts',
    'layer-storage: src/storage/storage.ts → src/server/apiserver.ts',
    'no-circular: src/registry/store.ts → src/registry/strategy.ts',
    'no-source-to-test: src/client/loopback.ts → test/support/fixture.ts',
  ]);
});
