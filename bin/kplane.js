#!/usr/bin/env -S node --initial-old-space-size=256
// The flags on the line above are src/runtime/node-flags.ts's NODE_FLAGS (why: see there).
// Runs the compiled CLI (dist/, built by `npm run build`; the published package holds it). In the
// repository, under the `kplane-source` export condition (npm test, npm run bench, or
// `node --conditions=kplane-source bin/kplane.js`), it runs the TypeScript source through tsx
// instead, a development dependency, so that no build is needed there.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

if (import.meta.resolve('kplane').endsWith('.ts')) {
  const { register } = await import('tsx/esm/api');
  register();
  await import('../src/cli/main.ts');
} else {
  const main = new URL('../dist/cli/main.js', import.meta.url);
  if (!existsSync(fileURLToPath(main))) {
    process.stderr.write('kplane: dist/ is not built: run `npm run build`, or run from source with `node --conditions=kplane-source bin/kplane.js`\n');
    process.exit(1);
  }
  await import(main.href);
}
