// kplane backup / kplane restore: argument parsing and what the operator reads. The work is in
// storage/sqlite/backup.ts.
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { BackupError, DATABASE_FILE, DEFAULT_BUMP_REVISION, backupDatabase, restoreDatabase } from '../storage/sqlite/backup.js';
import type { BackupProgress } from '../storage/sqlite/backup.js';

export const BACKUP_USAGE = `kplane backup [--data-dir DIR] [--force] OUT.db
  Copies DIR/${DATABASE_FILE} (SQLite storage) to OUT.db, consistently, while a server may be serving
  from it (its writes carry on). OUT.db is written 0600; an existing one is replaced only with --force.
  The PKI and kubeconfig in DIR (pki/, admin.kubeconfig) are not part of it: copy them once.

kplane restore [--data-dir DIR] [--force] [--bump-revision N] IN.db
  Writes the backup IN.db into DIR/${DATABASE_FILE}. DIR must not be in use by a running server, and
  must be empty or missing unless --force (then its database is replaced; other files stay). The
  revision moves forward by N (default ${DEFAULT_BUMP_REVISION}) from the backup's or the replaced
  database's, whichever is higher, and is marked compacted, as etcdutl snapshot restore
  --bump-revision N --mark-compacted: clients that watched the previous server get 410 Gone and list
  again. --bump-revision 0 keeps the backup's revisions and history (for a copy no client has seen).
`;

const MB = 1024 * 1024;

function progressPrinter(verb: string): (p: BackupProgress) => void {
  return (p) => {
    // A small database is done in a moment anyway; a line about it would only be noise on a busy machine.
    if (p.totalBytes < MB) return;
    const percent = Math.min(99, Math.floor((p.copiedBytes / p.totalBytes) * 100));
    process.stderr.write(`${verb}: ${percent}% (${(p.copiedBytes / MB).toFixed(0)} of ${(p.totalBytes / MB).toFixed(0)} MiB)\n`);
  };
}

/** An interrupt stops the copy (its partial output is removed) instead of leaving it behind. */
function interruptible(): { signal: AbortSignal; done: () => void } {
  const controller = new AbortController();
  const onSignal = (): void => controller.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  return {
    signal: controller.signal,
    done: () => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    },
  };
}

function parse(argv: string[], extra: Record<string, { type: 'string' }>): { values: Record<string, string | boolean | undefined>; file: string } | undefined {
  const { values, positionals } = parseArgs({
    args: argv,
    options: {
      'data-dir': { type: 'string', default: '.kplane' },
      force: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h' },
      ...extra,
    },
    allowPositionals: true,
  });
  if (values.help) {
    process.stdout.write(BACKUP_USAGE);
    return undefined;
  }
  if (positionals.length !== 1) throw new BackupError('failed', `expected one file name, got ${positionals.length}\n\n${BACKUP_USAGE}`);
  return { values, file: positionals[0]! };
}

/** `kplane backup`; answers the exit code. */
export async function backup(argv: string[]): Promise<number> {
  const args = parse(argv, {});
  if (!args) return 0;
  const dataDir = resolve(String(args.values['data-dir']));
  const output = resolve(args.file);
  const stop = interruptible();
  const started = performance.now();
  try {
    const r = await backupDatabase({
      source: join(dataDir, DATABASE_FILE),
      output,
      force: args.values.force === true,
      onProgress: progressPrinter('backup'),
      signal: stop.signal,
    });
    process.stdout.write(
      `kplane: backed up ${join(dataDir, DATABASE_FILE)} to ${output}: ${r.keys} keys at revision ${r.revision}, ${(r.bytes / MB).toFixed(1)} MiB in ${((performance.now() - started) / 1000).toFixed(1)} s\n`,
    );
    return 0;
  } finally {
    stop.done();
  }
}

/** `kplane restore`; answers the exit code. */
export async function restore(argv: string[]): Promise<number> {
  const args = parse(argv, { 'bump-revision': { type: 'string' } });
  if (!args) return 0;
  const bumpText = args.values['bump-revision'];
  let bumpRevision = DEFAULT_BUMP_REVISION;
  if (typeof bumpText === 'string') {
    if (!/^[0-9]+$/.test(bumpText) || !Number.isSafeInteger(Number(bumpText)))
      throw new BackupError('failed', `invalid argument ${JSON.stringify(bumpText)} for "--bump-revision" flag: not a whole number, 0 or more`);
    bumpRevision = Number(bumpText);
  }
  const dataDir = resolve(String(args.values['data-dir']));
  const input = resolve(args.file);
  const stop = interruptible();
  try {
    const r = await restoreDatabase({
      input,
      dataDir,
      force: args.values.force === true,
      bumpRevision,
      onProgress: progressPrinter('restore'),
      signal: stop.signal,
      onNotice: (m) => process.stderr.write(`kplane: ${m}\n`),
    });
    const lines = [`kplane: restored ${input} into ${r.path}: ${r.backup.keys} keys at revision ${r.backup.revision}.`];
    if (bumpRevision > 0)
      lines.push(
        `resourceVersions continue after ${r.revision} (marked compacted${r.replacedRevision !== undefined ? `; the replaced database had reached ${r.replacedRevision}` : ''}): ` +
          'clients that watched the previous server get 410 Gone ("too old resource version") and list again.',
      );
    else lines.push('revisions are kept as in the backup (--bump-revision 0): only for a server whose clients never saw a later revision.');
    lines.push(`Next: kplane serve --data-dir ${dataDir}`);
    if (!existsSync(join(dataDir, 'pki')))
      lines.push(
        `(Without ${join(dataDir, 'pki')} the server makes a new CA and admin.kubeconfig at its first start; copy pki/ and admin.kubeconfig from the old data directory to keep existing kubeconfigs working.)`,
      );
    process.stdout.write(`${lines.join('\n')}\n`);
    return 0;
  } finally {
    stop.done();
  }
}
