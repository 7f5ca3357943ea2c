// Whole-file writes: the new content goes to a temporary file beside the target, then a rename
// replaces the target, so a reader (or a crash) never sees a partial catalog.yaml. The temporary
// name starts with "." and does not end in .yaml/.json, so the catalog's .indexignore skips it.
import { rename, rm, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

let seq = 0;

export async function writeFileAtomic(path: string, content: string | Uint8Array): Promise<void> {
  const tmp = join(dirname(path), `.${basename(path)}.${process.pid}.${seq++}.tmp`);
  try {
    await writeFile(tmp, content, { flag: 'wx' });
    await rename(tmp, path);
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
}
