import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parse } from 'yaml';
import { ensurePki } from './certs.js';
import type { Pki } from './certs.js';
import { tokenKubeconfig, writeAdminKubeconfig } from './kubeconfig.js';

interface Kubeconfig {
  'current-context': string;
  contexts: unknown[];
  clusters: { cluster: Record<string, string | undefined> }[];
  users: { user: Record<string, string | undefined> }[];
}

const decode = (b64: string): string => Buffer.from(b64, 'base64').toString('utf8');

describe('kubeconfig', () => {
  let dir: string;
  let pki: Pki;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kplane-kubeconfig-'));
    pki = await ensurePki(dir, {});
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('writes an admin kubeconfig with embedded credentials, mode 0600', async () => {
    const path = await writeAdminKubeconfig(join(dir, 'nested', 'admin.kubeconfig'), { server: 'https://127.0.0.1:6443', pki });
    assert.equal(path, join(dir, 'nested', 'admin.kubeconfig'));
    assert.equal((await stat(path)).mode & 0o777, 0o600);
    const cfg = parse(await readFile(path, 'utf8')) as Kubeconfig;
    assert.equal(cfg['current-context'], 'kplane');
    assert.deepEqual(cfg.contexts, [{ name: 'kplane', context: { cluster: 'kplane', user: 'kplane-admin' } }]);
    assert.equal(cfg.clusters[0]!.cluster.server, 'https://127.0.0.1:6443');
    assert.equal(decode(cfg.clusters[0]!.cluster['certificate-authority-data']!), pki.caCertPem);
    assert.equal(decode(cfg.users[0]!.user['client-certificate-data']!), pki.adminCertPem);
    assert.equal(decode(cfg.users[0]!.user['client-key-data']!), pki.adminKeyPem);
  });

  it('honours a context name and overwrites an existing file', async () => {
    const path = join(dir, 'admin.kubeconfig');
    await writeAdminKubeconfig(path, { server: 'https://127.0.0.1:1', pki });
    await writeAdminKubeconfig(path, { server: 'https://127.0.0.1:2', pki, contextName: 'dev' });
    const cfg = parse(await readFile(path, 'utf8')) as Kubeconfig;
    assert.equal(cfg['current-context'], 'dev');
    assert.equal(cfg.clusters[0]!.cluster.server, 'https://127.0.0.1:2');
  });

  it('builds a bearer-token kubeconfig', () => {
    const cfg = tokenKubeconfig({ server: 'https://localhost:6443', caCertPem: pki.caCertPem, token: 'abc' });
    assert.deepEqual(cfg.users, [{ name: 'kplane-token', user: { token: 'abc' } }]);
    assert.equal(cfg.contexts[0]?.context.user, 'kplane-token');
  });
});
