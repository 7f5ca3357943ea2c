// The webhook transport's worker thread (started by client.ts through runtime/thread-entry.mjs).
import { parentPort } from 'node:worker_threads';
import { serve } from './transport.js';

if (parentPort === null) throw new Error('transport-worker.ts must run in a worker thread');
serve(parentPort);
// Calls are given to this thread only from now on.
parentPort.postMessage({ ready: true });
