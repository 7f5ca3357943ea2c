// Plain-JS bootstrap of the SQLite writer thread. kplane runs its TypeScript through tsx, whose
// loader hooks (from `--import tsx` or from register() in bin/kplane.js) a worker thread does not
// inherit on Node 20, so register tsx here when the writer's script is TypeScript.
import { workerData } from 'node:worker_threads';

if (workerData.registerTsx) {
  const { register } = await import('tsx/esm/api');
  register();
}
await import(workerData.script);
