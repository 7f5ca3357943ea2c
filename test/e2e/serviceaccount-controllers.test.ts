// The ServiceAccount controllers in process: `default` and `kube-root-ca.crt` in every namespace
// (put back when deleted or edited), legacy token Secrets filled by the token controller and usable
// as bearer tokens until the Secret or the ServiceAccount goes, and the serviceaccount_* metrics.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { decodeJwt } from 'jose';
import { defaultControllers } from '../../src/controllers/index.js';
import { adminCredentials, RawClient } from '../support/https.js';
import { eventually } from '../support/eventually.js';
import { startTestServer, type TestServer } from '../support/server.js';

const NS = 'team-b';

/** The fields of the objects read here. */
interface Obj {
  metadata: { uid: string; annotations: { 'kubernetes.io/description': string; 'kubernetes.io/service-account.uid': string } };
  data: { token: string; namespace: string; 'ca.crt': string };
}

describe('ServiceAccount controllers', () => {
  let server: TestServer;
  let admin: RawClient;
  let anon: RawClient;
  const json = async (method: string, path: string, body?: unknown) => {
    const r = await admin.request({ method, path, ...(body ? { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) } : {}) });
    return { status: r.status, body: r.json<Obj>() };
  };
  const found = async (path: string): Promise<Obj | undefined> => {
    const r = await json('GET', path);
    return r.status === 200 ? r.body : undefined;
  };

  before(async () => {
    server = await startTestServer({ storage: 'memory', controllers: defaultControllers() });
    const creds = adminCredentials(server.dataDir);
    admin = new RawClient(server.url, creds);
    anon = new RawClient(server.url, { ca: creds.ca });
    assert.equal((await json('POST', '/api/v1/namespaces', { metadata: { name: NS } })).status, 201);
  });
  after(async () => {
    admin?.close();
    anon?.close();
    await server?.stop();
  });

  it('every namespace gets the ServiceAccount default and the ConfigMap kube-root-ca.crt, put back when deleted or edited', async () => {
    await eventually(10_000, 'default ServiceAccount', () => found(`/api/v1/namespaces/${NS}/serviceaccounts/default`));
    const cm = await eventually(10_000, 'kube-root-ca.crt', () => found(`/api/v1/namespaces/${NS}/configmaps/kube-root-ca.crt`));
    assert.deepEqual(cm.data, { 'ca.crt': server.cp.pki.caCertPem });
    assert.match(cm.metadata.annotations['kubernetes.io/description'], /^Contains a CA bundle that can be used to verify the kube-apiserver/);
    // System namespaces too.
    await eventually(10_000, 'default in kube-system', () => found('/api/v1/namespaces/kube-system/serviceaccounts/default'));
    const uid = (await found(`/api/v1/namespaces/${NS}/serviceaccounts/default`))!.metadata.uid;
    assert.equal((await json('DELETE', `/api/v1/namespaces/${NS}/serviceaccounts/default`)).status, 200);
    await eventually(10_000, 'default made again', async () => {
      const sa = await found(`/api/v1/namespaces/${NS}/serviceaccounts/default`);
      return sa && sa.metadata.uid !== uid ? sa : undefined;
    });
    const edited = { ...cm, data: { 'ca.crt': 'not a CA', extra: 'x' } };
    assert.equal((await json('PUT', `/api/v1/namespaces/${NS}/configmaps/kube-root-ca.crt`, edited)).status, 200);
    await eventually(10_000, 'the ConfigMap restored', async () => {
      const now = await found(`/api/v1/namespaces/${NS}/configmaps/kube-root-ca.crt`);
      return now && now.data['ca.crt'] === server.cp.pki.caCertPem && !('extra' in now.data) ? true : undefined;
    });
    assert.equal((await json('DELETE', `/api/v1/namespaces/${NS}/configmaps/kube-root-ca.crt`)).status, 200);
    await eventually(10_000, 'the ConfigMap made again', () => found(`/api/v1/namespaces/${NS}/configmaps/kube-root-ca.crt`));
  });

  it('a kubernetes.io/service-account-token Secret is filled; its token works until the Secret or the ServiceAccount goes', async () => {
    assert.equal((await json('POST', `/api/v1/namespaces/${NS}/serviceaccounts`, { metadata: { name: 'legacy' } })).status, 201);
    const secret = (name: string) => ({
      metadata: { name, annotations: { 'kubernetes.io/service-account.name': 'legacy' } },
      type: 'kubernetes.io/service-account-token',
    });
    assert.equal((await json('POST', `/api/v1/namespaces/${NS}/secrets`, secret('legacy-token'))).status, 201);
    assert.equal((await json('POST', `/api/v1/namespaces/${NS}/secrets`, secret('legacy-token-2'))).status, 201);
    const filled = await eventually(10_000, 'the token Secret filled', async () => {
      const s = await found(`/api/v1/namespaces/${NS}/secrets/legacy-token`);
      return s?.data?.token ? s : undefined;
    });
    const sa = (await found(`/api/v1/namespaces/${NS}/serviceaccounts/legacy`))!;
    assert.equal(Buffer.from(filled.data.namespace, 'base64').toString(), NS);
    assert.equal(Buffer.from(filled.data['ca.crt'], 'base64').toString(), server.cp.pki.caCertPem);
    assert.equal(filled.metadata.annotations['kubernetes.io/service-account.uid'], sa.metadata.uid);
    const token = Buffer.from(filled.data.token, 'base64').toString();
    assert.deepEqual(decodeJwt(token), {
      iss: 'kubernetes/serviceaccount',
      'kubernetes.io/serviceaccount/namespace': NS,
      'kubernetes.io/serviceaccount/secret.name': 'legacy-token',
      'kubernetes.io/serviceaccount/service-account.name': 'legacy',
      'kubernetes.io/serviceaccount/service-account.uid': sa.metadata.uid,
      sub: `system:serviceaccount:${NS}:legacy`,
    });
    const use = (t: string) => anon.request({ path: `/api/v1/namespaces/${NS}/configmaps`, headers: { authorization: `Bearer ${t}` } });
    assert.equal((await use(token)).status, 200);
    const metrics = (await admin.request({ path: '/metrics' })).text();
    assert.match(metrics, /^serviceaccount_legacy_tokens_total [1-9]/m);
    assert.match(metrics, /^# HELP serviceaccount_stale_tokens_total /m);
    assert.match(metrics, /^# HELP serviceaccount_valid_tokens_total /m);
    // The Secret's deletion ends the token.
    assert.equal((await json('DELETE', `/api/v1/namespaces/${NS}/secrets/legacy-token`)).status, 200);
    // Up to 10 s: a success is cached that long, as kube-apiserver's token cache does.
    await eventually(20_000, 'the token refused', async () => ((await use(token)).status === 401 ? true : undefined));
    // Deleting the ServiceAccount takes its token Secrets with it.
    const second = await eventually(10_000, 'the second Secret filled', async () => {
      const s = await found(`/api/v1/namespaces/${NS}/secrets/legacy-token-2`);
      return s?.data?.token ? s : undefined;
    });
    const token2 = Buffer.from(second.data.token, 'base64').toString();
    assert.equal((await use(token2)).status, 200);
    assert.equal((await json('DELETE', `/api/v1/namespaces/${NS}/serviceaccounts/legacy`)).status, 200);
    await eventually(10_000, 'the second Secret deleted', async () =>
      (await json('GET', `/api/v1/namespaces/${NS}/secrets/legacy-token-2`)).status === 404 ? true : undefined,
    );
    // Up to 10 s more: the success cache again.
    await eventually(20_000, 'the second token refused', async () => ((await use(token2)).status === 401 ? true : undefined));
  });

  it('a token Secret naming no ServiceAccount is deleted', async () => {
    const r = await json('POST', `/api/v1/namespaces/${NS}/secrets`, {
      metadata: { name: 'orphan-token', annotations: { 'kubernetes.io/service-account.name': 'nobody' } },
      type: 'kubernetes.io/service-account-token',
    });
    assert.equal(r.status, 201);
    await eventually(10_000, 'the orphan deleted', async () =>
      (await json('GET', `/api/v1/namespaces/${NS}/secrets/orphan-token`)).status === 404 ? true : undefined,
    );
  });
});
