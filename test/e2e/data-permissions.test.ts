// The data directory, the SQLite database (which holds Secrets) and the PKI's private keys are
// readable by their owner only, as etcd keeps its data: 0700 directories, 0600 files, also when an
// earlier run or the operator left them more open (then the log says what was changed).
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { startTestServer } from '../support/server.js';

const modeOf = (p: string): string => (statSync(p).mode & 0o777).toString(8).padStart(3, '0');

/** Every file and directory under `dir` (the PKI's public certificates aside) with its mode. */
function modes(dir: string): Record<string, string> {
  const out: Record<string, string> = { '.': modeOf(dir) };
  for (const name of readdirSync(dir, { recursive: true }) as string[]) {
    if (name.endsWith('.crt')) continue;
    out[name] = modeOf(join(dir, name));
  }
  return out;
}

async function writeASecret(srv: Awaited<ReturnType<typeof startTestServer>>): Promise<void> {
  const client = srv.cp.loopbackClient();
  await client.create({ group: '', version: 'v1', resource: 'secrets' }, 'default', {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 's' },
    stringData: { password: 'hunter2' },
  });
}

test('a new data directory, its database files and private keys are owner-only', async () => {
  const parent = mkdtempSync(join(tmpdir(), 'kplane-perm-'));
  const dataDir = join(parent, 'data');
  const srv = await startTestServer({ storage: 'sqlite', dataDir });
  try {
    await writeASecret(srv);
    const m = modes(dataDir);
    assert.ok(existsSync(join(dataDir, 'kplane.db-wal')), 'the WAL exists while serving');
    for (const [name, mode] of Object.entries(m)) {
      if (statSync(join(dataDir, name)).isDirectory()) assert.equal(mode, '700', name);
      else assert.equal(Number.parseInt(mode, 8) & 0o077, 0, `${name} is ${mode}`);
    }
    assert.equal(m['kplane.db'], '600');
    assert.equal(m['kplane.db-wal'], '600');
  } finally {
    await srv.stop();
    rmSync(parent, { recursive: true, force: true });
  }
});

test('a data directory left open by an earlier run is made private, and the log says so', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'kplane-perm-'));
  let srv = await startTestServer({ storage: 'sqlite', dataDir });
  await writeASecret(srv);
  await srv.stop();
  chmodSync(dataDir, 0o755);
  chmodSync(join(dataDir, 'pki'), 0o755);
  for (const f of ['kplane.db', 'pki/admin.key', 'pki/ca.key']) chmodSync(join(dataDir, f), 0o644);
  const logs: string[] = [];
  srv = await startTestServer({ storage: 'sqlite', dataDir, log: (m) => logs.push(m) });
  try {
    await writeASecret(srv).catch(() => {}); // AlreadyExists; the write only has to reach the WAL
    for (const [name, mode] of Object.entries(modes(dataDir))) assert.equal(Number.parseInt(mode, 8) & 0o077, 0, `${name} is still ${mode}`);
    const said = logs.join('\n');
    assert.match(said, new RegExp(`directory "${dataDir}" exist, but the permission is "drwxr-xr-x"`));
    assert.match(said, /file ".*kplane\.db" had permission "-rw-r--r--"; changed it to "-rw-------"/);
    assert.match(said, /file ".*ca\.key" had permission "-rw-r--r--"/);
  } finally {
    await srv.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
});
