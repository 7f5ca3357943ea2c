// A control plane embedded in a program: serves core and coordination APIs on a free port,
// creates a configmap through its own HTTPS API with the admin client certificate, and stops.
// Run (in the repository, from source): node --conditions=kplane-source --import tsx examples/embedded.ts
import { request } from 'node:https';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createControlPlane, core, coordination, memory } from 'kplane';

const dataDir = await mkdtemp(join(tmpdir(), 'kplane-example-'));
const cp = await createControlPlane({ storage: memory(), apis: [core(), coordination()], dataDir, port: 0 });
await cp.start();

function call(method: string, path: string, body?: unknown): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${cp.url}${path}`,
      { method, ca: cp.pki.caCertPem, cert: cp.pki.adminCertPem, key: cp.pki.adminKeyPem, headers: { 'content-type': 'application/json' } },
      (res) => {
        let text = '';
        res.on('data', (d: Buffer) => (text += d.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      },
    );
    req.on('error', reject);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

const created = await call('POST', '/api/v1/namespaces/default/configmaps', {
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'hello' },
  data: { greeting: 'hi' },
});
console.log(`create: ${created.status}`);
const groups = await call('GET', '/apis');
console.log(`groups: ${(JSON.parse(groups.body) as { groups: { name: string }[] }).groups.map((g) => g.name).join(', ')}`);
await cp.stop();
