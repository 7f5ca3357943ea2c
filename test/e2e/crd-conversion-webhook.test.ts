// CRD conversion webhooks end to end: a TypeScript conversion webhook on loopback with its own CA
// converts v1 `spec.hostPort: "h:p"` to v2 `spec.host` / `spec.port` and back (as upstream's e2e
// does). kubectl 1.20 and 1.33 create in one version and read, list and replace in the other and
// see the same object; client-node reads and watches across versions. Faults (webhook down,
// garbage, a wrong uid, a renamed object, a Failure result) are upstream's 500 with the webhook's
// message and leave nothing stored. Bad CRDs get upstream's 422; a storage version migration
// rewrites stored objects and status.storedVersions can then be trimmed.
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import type { Server } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import * as k8s from '@kubernetes/client-node';
import { createCertificateAuthority } from '../../src/server/certs.js';
import { eventually } from '../support/eventually.js';
import { adminCredentials, RawClient } from '../support/https.js';
import { KUBECTLS, kubectlSession, type KubectlSession } from '../support/kubectl.js';
import { admissionAnswer, startReviewServer } from '../support/review-server.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { ensureTools } from '../support/tools.js';

ensureTools();

const GROUP = 'conv.example.com';
const CRD_NAME = `hosts.${GROUP}`;

type Obj = { apiVersion: string; kind: string; metadata: Record<string, unknown>; spec?: Record<string, unknown> };
type Mode = 'ok' | 'garbage' | 'wrong-uid' | 'rename' | 'fail' | 'drop-one';

interface ConversionServer {
  server: Server;
  close(): Promise<void>;
  url: string;
  port: number;
  mode: Mode;
  /** Every review received: its desired version, the apiVersions and names of its objects. */
  seen: { desired: string; from: string[]; names: string[]; uid: string; apiVersion: string }[];
}

function convert(o: Obj, desired: string): Obj {
  const out = structuredClone(o);
  const spec = { ...(out.spec ?? {}) };
  if (desired.endsWith('/v2') && o.apiVersion.endsWith('/v1')) {
    const [host, port] = String(spec['hostPort'] ?? ':').split(':');
    delete spec['hostPort'];
    Object.assign(spec, { host, port });
  } else if (desired.endsWith('/v1') && o.apiVersion.endsWith('/v2')) {
    spec['hostPort'] = `${String(spec['host'] ?? '')}:${String(spec['port'] ?? '')}`;
    delete spec['host'];
    delete spec['port'];
  }
  out.spec = spec;
  out.apiVersion = desired;
  return out;
}

async function startConversionServer(ca: { certPem: string; keyPem: string }): Promise<ConversionServer> {
  const state = { mode: 'ok' as Mode, seen: [] as ConversionServer['seen'] };
  type Review = { apiVersion: string; request: { uid: string; desiredAPIVersion: string; objects: Obj[] } };
  const server = await startReviewServer<Review>(
    (review, { res }) => {
      const { uid, desiredAPIVersion, objects } = review.request;
      state.seen.push({
        desired: desiredAPIVersion,
        from: objects.map((o) => o.apiVersion),
        names: objects.map((o) => String(o.metadata['name'])),
        uid,
        apiVersion: review.apiVersion,
      });
      let converted = objects.map((o) => convert(o, desiredAPIVersion));
      let result: Record<string, unknown> = { status: 'Success' };
      let answerUid = uid;
      switch (state.mode) {
        case 'garbage':
          res.setHeader('content-type', 'application/json');
          res.end('garbage, not JSON');
          return undefined;
        case 'wrong-uid':
          answerUid = 'not-the-uid';
          break;
        case 'rename':
          converted = converted.map((o) => ({ ...o, metadata: { ...o.metadata, name: 'renamed' } }));
          break;
        case 'fail':
          result = { status: 'Failure', message: 'cannot convert that host' };
          converted = [];
          break;
        case 'drop-one':
          converted = converted.slice(1);
          break;
        default:
      }
      return { apiVersion: review.apiVersion, kind: 'ConversionReview', response: { uid: answerUid, convertedObjects: converted, result } };
    },
    { ca, commonName: 'converter' },
  );
  return Object.assign(state, { server: server.server, close: () => server.close(), url: `${server.url}/convert`, port: Number(new URL(server.url).port) });
}

function crdYaml(url: string, caBundle: string, storage: 'v1' | 'v2' = 'v1', reviewVersions = '[v1]'): string {
  const version = (name: string, props: string) =>
    [
      `  - name: ${name}`,
      '    served: true',
      `    storage: ${name === storage}`,
      '    additionalPrinterColumns:',
      `    - {name: Where, type: string, jsonPath: ${name === 'v1' ? '.spec.hostPort' : '.spec.host'}}`,
      '    schema:',
      '      openAPIV3Schema:',
      '        type: object',
      '        properties:',
      '          spec:',
      '            type: object',
      `            properties: {${props}}`,
    ].join('\n');
  return [
    'apiVersion: apiextensions.k8s.io/v1',
    'kind: CustomResourceDefinition',
    `metadata: {name: ${CRD_NAME}}`,
    'spec:',
    `  group: ${GROUP}`,
    '  scope: Namespaced',
    '  names: {plural: hosts, singular: host, kind: Host}',
    '  conversion:',
    '    strategy: Webhook',
    '    webhook:',
    `      conversionReviewVersions: ${reviewVersions}`,
    '      clientConfig:',
    `        url: ${url}`,
    `        caBundle: ${caBundle}`,
    '  versions:',
    version('v1', 'hostPort: {type: string}'),
    version('v2', 'host: {type: string}, port: {type: string}'),
    '',
  ].join('\n');
}

const hostV1 = (name: string, hostPort: string): string =>
  [`apiVersion: ${GROUP}/v1`, 'kind: Host', `metadata: {name: ${name}, labels: {app: conv}}`, `spec: {hostPort: "${hostPort}"}`, ''].join('\n');
const hostV2 = (name: string, host: string, port: string): string =>
  [`apiVersion: ${GROUP}/v2`, 'kind: Host', `metadata: {name: ${name}, labels: {app: conv}}`, `spec: {host: "${host}", port: "${port}"}`, ''].join('\n');

describe('CRD conversion webhooks', () => {
  let server: TestServer;
  let raw: RawClient;
  let dir: string;
  const ca = createCertificateAuthority({ commonName: 'converter-ca' });
  const caBundle = Buffer.from(ca.certPem).toString('base64');
  let hook: ConversionServer;
  const sessions: { name: string; kc: KubectlSession }[] = [];
  let k: KubectlSession;

  before(async () => {
    server = await startTestServer({ storage: 'memory' });
    raw = new RawClient(server.url, adminCredentials(server.dataDir));
    dir = await mkdtemp(join(tmpdir(), 'kplane-conv-'));
    for (const v of KUBECTLS) {
      const home = join(dir, v.name);
      await mkdir(home);
      sessions.push({ name: v.name, kc: kubectlSession(v.bin, server.kubeconfig, home) });
    }
    k = sessions.find((s) => s.name === '1.33')!.kc;
    hook = await startConversionServer(ca);
    await k.ok(['apply', '-f', await k.file('crd.yaml', crdYaml(hook.url, caBundle))]);
    await eventually(10_000, 'hosts served in v1 and v2', async () => {
      const a = await raw.request({ path: `/apis/${GROUP}/v1/namespaces/default/hosts` });
      const b = await raw.request({ path: `/apis/${GROUP}/v2/namespaces/default/hosts` });
      return a.status === 200 && b.status === 200 ? true : undefined;
    });
  });
  after(async () => {
    raw?.close();
    await hook?.close();
    await server?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const get = async (version: string, name: string): Promise<{ status: number; body: Record<string, unknown> }> => {
    const r = await raw.request({ path: `/apis/${GROUP}/${version}/namespaces/default/hosts/${name}` });
    return { status: r.status, body: r.json() };
  };

  for (const v of KUBECTLS)
    it(`kubectl ${v.name}: create in v1, read in v2 (the same object), write in v2, read in v1`, async () => {
      const kc = sessions.find((s) => s.name === v.name)!.kc;
      const name = `web-${v.name.replace('.', '-')}`;
      await kc.ok(['create', '-f', await kc.file(`${name}.yaml`, hostV1(name, 'localhost:8080'))]);
      const asV2 = JSON.parse(await kc.ok(['get', `hosts.v2.${GROUP}`, name, '-o', 'json'])) as Obj;
      assert.equal(asV2.apiVersion, `${GROUP}/v2`);
      assert.deepEqual(asV2.spec, { host: 'localhost', port: '8080' });
      const asV1 = JSON.parse(await kc.ok(['get', `hosts.v1.${GROUP}`, name, '-o', 'json'])) as Obj;
      assert.equal(asV1.metadata['uid'], asV2.metadata['uid']);
      assert.equal(asV1.metadata['resourceVersion'], asV2.metadata['resourceVersion']);
      assert.deepEqual(asV1.metadata['labels'], { app: 'conv' });
      // The webhook saw v1 objects to convert to v2.
      assert.ok(hook.seen.some((s) => s.desired === `${GROUP}/v2` && s.from.includes(`${GROUP}/v1`) && s.apiVersion === 'apiextensions.k8s.io/v1'));

      // A write in v2 (apply of the v2 form) is converted to the storage version v1.
      await kc.ok(['apply', '-f', await kc.file(`${name}-v2.yaml`, hostV2(name, 'example.org', '443'))]);
      const back = JSON.parse(await kc.ok(['get', `hosts.v1.${GROUP}`, name, '-o', 'json'])) as Obj;
      assert.deepEqual(back.spec, { hostPort: 'example.org:443' });

      // kubectl get's table: the v2 printer column shows the converted field.
      const table = await kc.ok(['get', `hosts.v2.${GROUP}`, name]);
      assert.match(table, /WHERE/);
      assert.match(table, new RegExp(`${name}\\s+example\\.org`));
    });

  it('a list in v2 converts every item in one review; label selectors see the served form', async () => {
    await k.ok(['create', '-f', await k.file('l1.yaml', hostV1('list-a', 'a:1'))]);
    await k.ok(['create', '-f', await k.file('l2.yaml', hostV1('list-b', 'b:2'))]);
    const before = hook.seen.length;
    const list = JSON.parse(await k.ok(['get', `hosts.v2.${GROUP}`, '-l', 'app=conv', '-o', 'json'])) as { items: Obj[] };
    const names = list.items.map((i) => i.metadata['name']);
    assert.ok(names.includes('list-a') && names.includes('list-b'), names.join(','));
    for (const i of list.items) assert.equal(i.apiVersion, `${GROUP}/v2`);
    assert.deepEqual(list.items.find((i) => i.metadata['name'] === 'list-b')!.spec, { host: 'b', port: '2' });
    const reviews = hook.seen.slice(before);
    assert.ok(
      reviews.some((r) => r.from.length === list.items.length),
      `one review for the whole list: ${JSON.stringify(reviews.map((r) => r.from.length))}`,
    );
  });

  it('an admission webhook for v1 gets a v2 write converted by the conversion webhook (matchPolicy Equivalent)', async () => {
    // A validating webhook whose rules name v1 only; it refuses hosts whose v1 hostPort starts with "blocked".
    const reviews: { requestKind: { version: string }; kind: { version: string }; object: Obj }[] = [];
    const admission = await startReviewServer<{ request: (typeof reviews)[number] & { uid: string } }>(
      (review) => {
        reviews.push(review.request);
        const blocked = String(review.request.object.spec?.['hostPort'] ?? '').startsWith('blocked');
        return admissionAnswer(review.request.uid, blocked ? { allowed: false, status: { code: 403, message: 'blocked host' } } : { allowed: true });
      },
      { ca, commonName: 'admission' },
    );
    try {
      const url = `${admission.url}/check`;
      const config = [
        'apiVersion: admissionregistration.k8s.io/v1',
        'kind: ValidatingWebhookConfiguration',
        'metadata: {name: host-check}',
        'webhooks:',
        '- name: host-check.conv.example.com',
        `  clientConfig: {url: "${url}", caBundle: ${caBundle}}`,
        `  rules: [{operations: [CREATE], apiGroups: [${GROUP}], apiVersions: [v1], resources: [hosts]}]`,
        '  admissionReviewVersions: [v1]',
        '  sideEffects: None',
        '',
      ].join('\n');
      await k.ok(['apply', '-f', await k.file('host-check.yaml', config)]);
      const refused = await eventually(10_000, 'the admission webhook in effect', async () => {
        const r = await k.k(['create', '-f', await k.file('blocked.yaml', hostV2('blocked-one', 'blocked', '1'))]);
        return r.code !== 0 ? r : (await k.k(['delete', `hosts.v2.${GROUP}`, 'blocked-one']), undefined);
      });
      assert.match(refused.stderr, /admission webhook "host-check\.conv\.example\.com" denied the request: blocked host/);
      reviews.length = 0;
      await k.ok(['create', '-f', await k.file('fine.yaml', hostV2('fine-one', 'fine', '2'))]);
      const seen = reviews.find((r) => r.object.metadata['name'] === 'fine-one')!;
      assert.equal(seen.requestKind.version, 'v2');
      assert.equal(seen.kind.version, 'v1');
      assert.equal(seen.object.apiVersion, `${GROUP}/v1`);
      assert.deepEqual(seen.object.spec, { hostPort: 'fine:2' }, 'converted by the conversion webhook');
    } finally {
      await k.k(['delete', 'validatingwebhookconfiguration', 'host-check']);
      await admission.close();
    }
  });

  /** client-node against the server, and a list of hosts in v2 (its resourceVersion to watch from). */
  async function clientNodeInV2(): Promise<{ kc: k8s.KubeConfig; custom: k8s.CustomObjectsApi; listed: { metadata: { resourceVersion: string } } }> {
    const kc = new k8s.KubeConfig();
    kc.loadFromFile(server.kubeconfig);
    const custom = kc.makeApiClient(k8s.CustomObjectsApi);
    const listed = (await custom.listNamespacedCustomObject({ group: GROUP, version: 'v2', namespace: 'default', plural: 'hosts' })) as {
      metadata: { resourceVersion: string };
    };
    return { kc, custom, listed };
  }

  it('three client-node watches in v2: each event converted once for all of them', async () => {
    const { kc, custom, listed } = await clientNodeInV2();
    const events: { watcher: number; type: string; obj: Obj }[][] = [[], [], []];
    const watch = new k8s.Watch(kc);
    const reqs = await Promise.all(
      events.map((mine, watcher) =>
        watch.watch(
          `/apis/${GROUP}/v2/namespaces/default/hosts`,
          { resourceVersion: listed.metadata.resourceVersion },
          (type: string, obj: Obj) => mine.push({ watcher, type, obj }),
          () => {},
        ),
      ),
    );
    try {
      const before = hook.seen.length;
      await custom.createNamespacedCustomObject({
        group: GROUP,
        version: 'v1',
        namespace: 'default',
        plural: 'hosts',
        body: { apiVersion: `${GROUP}/v1`, kind: 'Host', metadata: { name: 'fanned' }, spec: { hostPort: 'f:1' } },
      });
      for (const mine of events) {
        const ev = await eventually(10_000, 'the ADDED event in v2', async () => mine.find((e) => e.obj.metadata['name'] === 'fanned'));
        assert.deepEqual([ev.type, ev.obj.apiVersion, ev.obj.spec], ['ADDED', `${GROUP}/v2`, { host: 'f', port: '1' }]);
      }
      const calls = hook.seen.slice(before).filter((s) => s.desired === `${GROUP}/v2` && s.names.includes('fanned'));
      assert.equal(calls.length, 1, `one conversion for the three watchers: ${JSON.stringify(calls)}`);
    } finally {
      for (const r of reqs) r.abort();
    }
  });

  it('client-node reads and watches in v2 what is written in v1', async () => {
    const { kc, custom, listed } = await clientNodeInV2();
    const events: { type: string; obj: Obj }[] = [];
    const watch = new k8s.Watch(kc);
    const req = await watch.watch(
      `/apis/${GROUP}/v2/namespaces/default/hosts`,
      { resourceVersion: listed.metadata.resourceVersion },
      (type: string, obj: Obj) => events.push({ type, obj }),
      () => {},
    );
    try {
      await custom.createNamespacedCustomObject({
        group: GROUP,
        version: 'v1',
        namespace: 'default',
        plural: 'hosts',
        body: { apiVersion: `${GROUP}/v1`, kind: 'Host', metadata: { name: 'watched' }, spec: { hostPort: 'w:9' } },
      });
      const ev = await eventually(10_000, 'the ADDED event in v2', async () => events.find((e) => e.obj.metadata['name'] === 'watched'));
      assert.equal(ev.type, 'ADDED');
      assert.equal(ev.obj.apiVersion, `${GROUP}/v2`);
      assert.deepEqual(ev.obj.spec, { host: 'w', port: '9' });
      const got = (await custom.getNamespacedCustomObject({ group: GROUP, version: 'v2', namespace: 'default', plural: 'hosts', name: 'watched' })) as Obj;
      assert.deepEqual(got.spec, { host: 'w', port: '9' });
    } finally {
      req.abort();
    }
  });

  it('faults are 500s with the webhook message, and a failed write stores nothing', async () => {
    await k.ok(['create', '-f', await k.file('f.yaml', hostV1('faulty', 'f:1'))]);
    const cases: { mode: Mode; read: RegExp; write: RegExp }[] = [
      {
        mode: 'garbage',
        read: /^conversion webhook for conv\.example\.com\/v1, Kind=Host failed: couldn't get version\/kind; json parse error: /,
        write: /^conversion webhook for conv\.example\.com\/v2, Kind=Host failed: couldn't get version\/kind; json parse error: /,
      },
      {
        mode: 'wrong-uid',
        read: /^conversion webhook for conv\.example\.com\/v1, Kind=Host failed: expected response\.uid="[0-9a-f-]+", got "not-the-uid"$/,
        write: /^conversion webhook for conv\.example\.com\/v2, Kind=Host failed: expected response\.uid="[0-9a-f-]+", got "not-the-uid"$/,
      },
      {
        mode: 'rename',
        read: /^conversion webhook for conv\.example\.com\/v1, Kind=Host returned invalid object: must have the same name: faulty != renamed$/,
        write: /^conversion webhook for conv\.example\.com\/v2, Kind=Host returned invalid object: must have the same name: /,
      },
      {
        mode: 'fail',
        read: /^conversion webhook for conv\.example\.com\/v1, Kind=Host failed: cannot convert that host$/,
        write: /^conversion webhook for conv\.example\.com\/v2, Kind=Host failed: cannot convert that host$/,
      },
    ];
    try {
      for (const c of cases) {
        hook.mode = c.mode;
        const r = await get('v2', 'faulty');
        assert.equal(r.status, 500, `${c.mode}: ${JSON.stringify(r.body)}`);
        assert.match(String(r.body['message']), c.read, c.mode);
        assert.equal(r.body['reason'], undefined);
        const w = await raw.request({
          method: 'POST',
          path: `/apis/${GROUP}/v2/namespaces/default/hosts`,
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ apiVersion: `${GROUP}/v2`, kind: 'Host', metadata: { name: `never-${c.mode}` }, spec: { host: 'n', port: '1' } }),
        });
        assert.equal(w.status, 500, `${c.mode} write: ${w.text()}`);
        assert.match(String(w.json()['message']), c.write, c.mode);
      }
      // Too few objects back in a list: upstream's count check.
      hook.mode = 'drop-one';
      const l = await raw.request({ path: `/apis/${GROUP}/v2/namespaces/default/hosts` });
      assert.equal(l.status, 500);
      assert.match(String(l.json()['message']), /^conversion webhook for conv\.example\.com\/v1, Kind=Host returned \d+ objects, expected \d+$/);
      // kubectl shows the message.
      hook.mode = 'fail';
      const kr = await k.k(['get', `hosts.v2.${GROUP}`, 'faulty']);
      assert.notEqual(kr.code, 0);
      assert.match(kr.stderr, /conversion webhook for conv\.example\.com\/v1, Kind=Host failed: cannot convert that host/);
    } finally {
      hook.mode = 'ok';
    }

    // The webhook down: connection refused.
    await hook.close();
    try {
      const r = await get('v2', 'faulty');
      assert.equal(r.status, 500);
      assert.equal(
        r.body['message'],
        `conversion webhook for conv.example.com/v1, Kind=Host failed: Post "${hook.url}?timeout=30s": dial tcp 127.0.0.1:${hook.port}: connect: connection refused`,
      );
      const w = await k.k(['create', '-f', await k.file('down.yaml', hostV2('never-down', 'd', '1'))]);
      assert.notEqual(w.code, 0);
      assert.match(w.stderr, /conversion webhook for conv\.example\.com\/v2, Kind=Host failed: Post .*connection refused/);
      // The storage version needs no conversion: reading in v1 still works.
      assert.equal((await get('v1', 'faulty')).status, 200);
    } finally {
      await new Promise<void>((r) => hook.server.listen(hook.port, '127.0.0.1', r));
    }
    for (const c of [...cases.map((x) => x.mode), 'down']) assert.equal((await get('v1', `never-${c}`)).status, 404, `never-${c} is not stored`);
    assert.equal((await get('v2', 'faulty')).status, 200);

    const metrics = (await raw.request({ path: '/metrics' })).text();
    assert.match(
      metrics,
      /apiserver_crd_conversion_webhook_duration_seconds_count\{crd_name="hosts\.conv\.example\.com",from_version="v1",to_version="v2",succeeded="true"\} [1-9]/,
    );
    assert.match(
      metrics,
      /apiserver_crd_conversion_webhook_duration_seconds_count\{crd_name="hosts\.conv\.example\.com",from_version="v1",to_version="v2",succeeded="false"\} [1-9]/,
    );
    // Upstream's request counter, by the check a failed call stopped at.
    const counted = (result: string, failureType: string): boolean =>
      metrics
        .split('\n')
        .some(
          (l) =>
            l.startsWith('apiserver_conversion_webhook_request_total{') &&
            l.includes(`result="${result}"`) &&
            l.includes(`failure_type="${failureType}"`) &&
            !l.endsWith(' 0'),
        );
    for (const [result, type] of [
      ['success', ''],
      ['failure', 'conversion_webhook_call_failure'],
      ['failure', 'conversion_webhook_malformed_response_failure'],
      ['failure', 'conversion_webhook_partial_response_failure'],
      ['failure', 'conversion_webhook_invalid_converted_object_failure'],
    ] as const)
      assert.ok(counted(result, type), `apiserver_conversion_webhook_request_total{result=${result},failure_type=${type}}`);
  });

  it('refuses bad conversion settings with 422 and the field paths', async () => {
    const bad = crdYaml('http://127.0.0.1:1/convert?x=1', caBundle, 'v1', '[]')
      .replace(`name: ${CRD_NAME}`, `name: bads.${GROUP}`)
      .replace('plural: hosts, singular: host, kind: Host', 'plural: bads, singular: bad, kind: Bad');
    const r = await k.k(['create', '-f', await k.file('bad-crd.yaml', bad)]);
    assert.notEqual(r.code, 0);
    for (const text of [
      `The CustomResourceDefinition "bads.${GROUP}" is invalid`,
      `spec.conversion.webhookClientConfig.url: Invalid value: "http": 'https' is the only allowed URL scheme; desired format: https://host[/path]`,
      'spec.conversion.webhookClientConfig.url: Invalid value: "x=1": query parameters are not permitted in the URL',
      'spec.conversion.conversionReviewVersions: Required value',
    ]) {
      assert.ok(r.stderr.includes(text), `missing ${text}\n${r.stderr}`);
    }
    assert.notEqual((await k.k(['get', 'crd', `bads.${GROUP}`])).code, 0);

    // An established CRD with a valid caBundle may not get an invalid one (upstream 1.31+).
    const garbage = Buffer.from('garbage').toString('base64');
    const ca = await k.k(['apply', '-f', await k.file('bad-ca.yaml', crdYaml(hook.url, garbage))]);
    assert.notEqual(ca.code, 0);
    assert.ok(
      ca.stderr.includes(
        `spec.conversion.webhookClientConfig.caBundle: Invalid value: "${garbage}": unable to load root certificates: unable to parse bytes as PEM block`,
      ),
      ca.stderr,
    );
  });

  it('a storage version migration: storedVersions grows, replace rewrites, then it is trimmed', async () => {
    await k.ok(['create', '-f', await k.file('m.yaml', hostV1('migrated', 'm:5'))]);
    await k.ok(['apply', '-f', await k.file('crd-v2.yaml', crdYaml(hook.url, caBundle, 'v2'))]);
    const crd = JSON.parse(await k.ok(['get', 'crd', CRD_NAME, '-o', 'json'])) as { status: { storedVersions: string[] } };
    assert.deepEqual(crd.status.storedVersions, ['v1', 'v2']);
    // Wait until the v2 storage version is served (re-registration follows the CRD).
    await eventually(10_000, 'objects written in v2 storage', async () => {
      await k.ok(['create', '-f', await k.file('probe.yaml', hostV1('probe', 'p:1'))]);
      const stored = hook.seen.findLast((s) => s.desired === `${GROUP}/v2`);
      await k.ok(['delete', `hosts.${GROUP}`, 'probe']);
      return stored ? true : undefined;
    });
    // kubectl get -o json | kubectl replace -f -: every object is written again, in v2.
    const all = await k.ok(['get', `hosts.v2.${GROUP}`, '-o', 'json']);
    await k.ok(['replace', '-f', await k.file('all.json', all)]);
    // Stored in v2 now: reading in v2 sends nothing to the webhook.
    const before = hook.seen.length;
    const list = JSON.parse(await k.ok(['get', `hosts.v2.${GROUP}`, '-o', 'json'])) as { items: Obj[] };
    assert.ok(list.items.length >= 3);
    assert.equal(hook.seen.length, before, `no conversion after the migration: ${JSON.stringify(hook.seen.slice(before))}`);
    assert.deepEqual(list.items.find((i) => i.metadata['name'] === 'migrated')!.spec, { host: 'm', port: '5' });

    // Trimming v1 through /status is allowed; dropping the storage version is not.
    const refused = await k.k(['patch', 'crd', CRD_NAME, '--subresource=status', '--type=merge', '-p', '{"status":{"storedVersions":["v1"]}}']);
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /status\.storedVersions: Invalid value: \["v1"\]: must have the storage version v2/);
    await k.ok(['patch', 'crd', CRD_NAME, '--subresource=status', '--type=merge', '-p', '{"status":{"storedVersions":["v2"]}}']);
    const trimmed = JSON.parse(await k.ok(['get', 'crd', CRD_NAME, '-o', 'json'])) as { status: { storedVersions: string[] } };
    assert.deepEqual(trimmed.status.storedVersions, ['v2']);
  });

  it('the CRD can be deleted with its instances while the webhook is down', async () => {
    await hook.close();
    try {
      // The clean-up lists and deletes through the storage version (v2 now): no conversion.
      await k.ok(['delete', 'crd', CRD_NAME, '--timeout=60s']);
      assert.notEqual((await k.k(['get', 'crd', CRD_NAME])).code, 0);
    } finally {
      await new Promise<void>((r) => hook.server.listen(hook.port, '127.0.0.1', r));
    }
  });
});
