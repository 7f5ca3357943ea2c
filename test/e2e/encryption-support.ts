// Shared by the encryption-*.test.ts files: config files, keys, and the raw bytes a backend holds.
import { existsSync, readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { openSqliteStorage } from '../../src/storage/sqlite/sqlite-storage.js';

export const KEY1 = Buffer.alloc(32, 0x11).toString('base64');
export const KEY2 = Buffer.alloc(32, 0x22).toString('base64');

export type Provider = { aescbc: [string, string][] } | { aesgcm: [string, string][] } | { secretbox: [string, string][] } | 'identity';

/** An EncryptionConfiguration (YAML) for secrets with these providers, in order. */
export function encryptionConfigYAML(providers: readonly Provider[], resources: readonly string[] = ['secrets']): string {
  const lines = ['apiVersion: apiserver.config.k8s.io/v1', 'kind: EncryptionConfiguration', 'resources:', '- resources:'];
  for (const r of resources) lines.push(`  - ${r}`);
  lines.push('  providers:');
  for (const p of providers) {
    if (p === 'identity') {
      lines.push('  - identity: {}');
      continue;
    }
    const [name, keys] = Object.entries(p)[0] as [string, [string, string][]];
    lines.push(`  - ${name}:`, '      keys:');
    for (const [keyName, secret] of keys) lines.push(`      - name: ${keyName}`, `        secret: ${secret}`);
  }
  return `${lines.join('\n')}\n`;
}

export async function writeConfig(dir: string, name: string, text: string): Promise<string> {
  const p = join(dir, name);
  await writeFile(p, text);
  return p;
}

/** The SQLite database file and its write-ahead log, as bytes (what a thief of the disk reads). */
export function sqliteFileBytes(dataDir: string): Buffer {
  const parts = ['kplane.db', 'kplane.db-wal'].map((f) => join(dataDir, f)).filter((p) => existsSync(p));
  return Buffer.concat(parts.map((p) => readFileSync(p)));
}

/** The current stored values under a prefix, read straight from the SQLite file (the server stopped). */
export async function rawSqliteValues(dataDir: string, prefix: string): Promise<Map<string, string>> {
  const s = await openSqliteStorage({ path: join(dataDir, 'kplane.db'), inProcessWriter: true });
  try {
    const { items } = await s.list(prefix);
    return new Map(items.map((kv) => [kv.key, Buffer.from(kv.value).toString('latin1')]));
  } finally {
    await s.close();
  }
}
