#!/usr/bin/env -S node --initial-old-space-size=256
// The flags on the line above are src/runtime/node-flags.ts's NODE_FLAGS (why: see there).
// Runs the TypeScript CLI through tsx (a runtime dependency), so no build step is needed.
import { register } from 'tsx/esm/api';
register();
await import('../src/cli/main.ts');
