// Worker-thread entry of the SQLite writer (started by SqliteStorage through runtime/thread-entry.mjs).
import { parentPort, workerData } from 'node:worker_threads';
import type { MessagePort } from 'node:worker_threads';
import type { ToWriter, WriterConfig } from './protocol.js';
import { WriterCore, WriterOpenError } from './writer-core.js';

function serve(port: MessagePort, config: WriterConfig): void {
  let core: WriterCore;
  try {
    core = WriterCore.open(config, (msg, transfer) => port.postMessage(msg, transfer ?? []));
  } catch (err) {
    // Closing the port (after the message is queued) lets the thread end without a pending listener.
    port.postMessage({ type: 'open-failed', busy: err instanceof WriterOpenError && err.busy, message: (err as Error).message });
    port.close();
    return;
  }
  port.postMessage({ type: 'ready', revision: core.currentRevision, compacted: core.compactedRevision });
  port.on('message', (msg: ToWriter) => {
    core.handle(msg);
    if (msg.type === 'close') port.close();
  });
}

if (parentPort === null) throw new Error('writer-worker.ts must run in a worker thread');
serve(parentPort, (workerData as { config: WriterConfig }).config);
