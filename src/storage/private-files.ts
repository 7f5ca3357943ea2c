// Data that holds Secrets is readable by its owner only, as etcd keeps it (client/pkg/fileutil:
// PrivateDirMode 0700, PrivateFileMode 0600). etcd creates its data directory 0700 and, finding an
// existing one with another mode, logs "check file permission" and carries on with it open; here the
// mode is also corrected (with the same log line), since carrying on would leave the data readable.
import { chmodSync, closeSync, mkdirSync, openSync, statSync } from 'node:fs';

export const PRIVATE_DIR_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;

/** Go's os.FileMode.String() for a directory or regular file: `drwx------`, `-rw-r--r--`. */
export function goFileModeString(mode: number, isDir: boolean): string {
  const rwx = 'rwxrwxrwx';
  let s = isDir ? 'd' : '-';
  for (let i = 0; i < 9; i++) s += mode & (1 << (8 - i)) ? rwx[i] : '-';
  return s;
}

/**
 * Creates `dir` (and its parents) 0700, or makes an existing one 0700, saying so through `log`
 * with etcd's CheckDirPermission words.
 */
export function ensurePrivateDir(dir: string, log?: (msg: string) => void): void {
  let st;
  try {
    st = statSync(dir);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
    // mkdir's mode passes through the umask, which can only take bits away; set it as meant.
    chmodSync(dir, PRIVATE_DIR_MODE);
    return;
  }
  if (!st.isDirectory()) throw new Error(`${dir} is not a directory`);
  const perm = st.mode & 0o777;
  if (perm === PRIVATE_DIR_MODE) return;
  const said =
    `check file permission: directory ${JSON.stringify(dir)} exist, but the permission is ${JSON.stringify(goFileModeString(perm, true))}. ` +
    `The recommended permission is ${JSON.stringify(goFileModeString(PRIVATE_DIR_MODE, false))} to prevent possible unprivileged access to the data`;
  // Not ours to change (another owner): warn and carry on, as etcd does.
  const failed = tryChmod(dir, PRIVATE_DIR_MODE);
  log?.(failed ? `${said}; it could not be changed: ${failed}` : `${said}; changed it to ${JSON.stringify(goFileModeString(PRIVATE_DIR_MODE, true))}`);
}

/**
 * Makes `file` 0600 (creating it empty when `create` and it is missing), saying so through `log`
 * when an existing file was more open. A missing file without `create` is left missing.
 */
export function ensurePrivateFile(file: string, opts: { create?: boolean; log?: (msg: string) => void } = {}): void {
  let st;
  try {
    st = statSync(file);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    if (!opts.create) return;
    // 'a': never truncates, should another process create it first.
    closeSync(openSync(file, 'a', PRIVATE_FILE_MODE));
    chmodSync(file, PRIVATE_FILE_MODE);
    return;
  }
  const perm = st.mode & 0o777;
  if ((perm & 0o077) === 0) return;
  const failed = tryChmod(file, perm & 0o700);
  const said = `check file permission: file ${JSON.stringify(file)} had permission ${JSON.stringify(goFileModeString(perm, false))}`;
  opts.log?.(
    failed
      ? `${said}; it could not be changed to ${JSON.stringify(goFileModeString(perm & 0o700, false))}: ${failed}`
      : `${said}; changed it to ${JSON.stringify(goFileModeString(perm & 0o700, false))} to prevent possible unprivileged access to the data`,
  );
}

/** chmod, answering why it failed instead of throwing. */
function tryChmod(path: string, mode: number): string | undefined {
  try {
    chmodSync(path, mode);
    return undefined;
  } catch (e) {
    return e instanceof Error ? e.message : String(e);
  }
}
