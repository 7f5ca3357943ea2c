// Child process for the kill -9 durability test: creates keys from many concurrent workers forever
// and prints "ack <key>" only after the create's promise resolved (i.e. after its commit).
// stdout to a pipe is synchronous on Linux, so a printed line was acknowledged before any SIGKILL.
import { openSqliteStorage } from './sqlite-storage.js';

const path = process.argv[2];
if (path === undefined) throw new Error('usage: crash-writer.fixture.ts <db path>');
const storage = await openSqliteStorage({ path });
const workers = 32;
let next = 0;
process.stdout.write('ready\n');
await Promise.all(
  Array.from({ length: workers }, async () => {
    for (;;) {
      const key = `/registry/crash/k${String(next++).padStart(7, '0')}`;
      await storage.create(key, new TextEncoder().encode(JSON.stringify({ key, pad: 'x'.repeat(200) })));
      process.stdout.write(`ack ${key}\n`);
    }
  }),
);
