// Plain-JS bootstrap of kplane's worker threads (the SQLite writer, the webhook client). kplane runs
// its TypeScript through tsx, whose loader hooks (from `--import tsx` or from register() in
// bin/kplane.js) a worker thread does not inherit on Node 20, so register tsx here when the
// thread's script is TypeScript.
import { workerData } from 'node:worker_threads';

// What the starter passes as workerData, besides the thread's own data.
/** @type {{ registerTsx: boolean; script: string }} */
// eslint-disable-next-line @typescript-eslint/no-unsafe-assignment -- @types/node types workerData as any; the line above says what it holds
const data = workerData;
if (data.registerTsx) {
  const { register } = await import('tsx/esm/api');
  register();
}
await import(data.script);
