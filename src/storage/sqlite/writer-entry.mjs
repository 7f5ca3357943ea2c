// Plain-JS bootstrap of the SQLite writer thread. kplane runs its TypeScript through tsx, whose
// loader hooks (from `--import tsx` or from register() in bin/kplane.js) a worker thread does not
// inherit on Node 20, so register tsx here when the writer's script is TypeScript.
import { workerData } from 'node:worker_threads';

// What sqlite-storage.ts passes as workerData (the config is the writer's own business).
/** @type {{ registerTsx: boolean; script: string }} */
// eslint-disable-next-line @typescript-eslint/no-unsafe-assignment -- @types/node types workerData as any; the line above says what it holds
const data = workerData;
if (data.registerTsx) {
  const { register } = await import('tsx/esm/api');
  register();
}
await import(data.script);
