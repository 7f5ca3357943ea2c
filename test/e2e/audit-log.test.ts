// Auditing end to end: kubectl 1.33 against a server with an audit policy mixing levels and
// omitStages, read back from the JSON-lines log. Every request appears once per stage its rule
// keeps, with the level and fields upstream writes; the log rotates into lumberjack-named backups;
// a log that cannot be written (a full disk: /dev/full) leaves requests answered in blocking mode
// (and fails them in blocking-strict); a malformed policy refuses start naming the file and field.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createControlPlane } from '../../src/controlplane/controlplane.js';
import { sqlite } from '../../src/storage/factories.js';
import { eventually } from '../support/eventually.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { ensureTools, repoRoot, run, tools } from '../support/tools.js';

ensureTools();

const CONFIGMAPS = { group: '', version: 'v1', resource: 'configmaps' };

interface AuditEvent {
  kind: string;
  apiVersion: string;
  level: string;
  auditID: string;
  stage: string;
  requestURI: string;
  verb: string;
  user: { username?: string; groups?: string[] };
  sourceIPs?: string[];
  userAgent?: string;
  objectRef?: Record<string, string>;
  responseStatus?: { metadata: object; code?: number; status?: string; reason?: string; message?: string; details?: Record<string, unknown> };
  requestObject?: Record<string, unknown>;
  responseObject?: Record<string, unknown>;
  requestReceivedTimestamp: string;
  stageTimestamp: string;
  annotations?: Record<string, string>;
}

const POLICY = `apiVersion: audit.k8s.io/v1
kind: Policy
rules:
  # discovery and the server's own requests are not the test's
  - level: None
    nonResourceURLs: ["/api", "/api/*", "/apis", "/apis/*", "/openapi/*", "/version"]
  - level: None
    users: ["system:apiserver"]
  - level: None
    userGroups: ["system:serviceaccounts"]
  - level: None
    namespaces: ["audit-none"]
  - level: RequestResponse
    namespaces: ["audit-rr"]
    resources: [{group: "", resources: ["configmaps"]}]
  - level: Request
    resources: [{group: "", resources: ["configmaps"], resourceNames: ["req-level"]}]
  - level: Metadata
    namespaces: ["audit-md"]
    omitStages: ["RequestReceived"]
  - level: Metadata
`;

function readEvents(path: string): AuditEvent[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as AuditEvent);
}

const MICRO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

describe('audit log with kubectl 1.33', () => {
  let dir = '';
  let srv: TestServer;
  let logPath = '';
  let kube: (args: string[]) => ReturnType<typeof run>;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kplane-audit-'));
    logPath = join(dir, 'log', 'audit.log');
    const policyFile = join(dir, 'policy.yaml');
    await writeFile(policyFile, POLICY);
    srv = await startTestServer({ audit: { policyFile, log: { path: logPath } } });
    const env = { KUBECONFIG: srv.kubeconfig, HOME: dir, KUBECACHEDIR: join(dir, 'cache') };
    kube = (args) => run(tools.kubectl, args, { env });
    for (const ns of ['audit-rr', 'audit-md', 'audit-none']) assert.equal((await kube(['create', 'namespace', ns])).code, 0);
  });
  after(async () => {
    await srv?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  /** The events of the requests matching `pick`, grouped by audit ID, once the last stage is there. */
  async function requests(pick: (e: AuditEvent) => boolean, count: number, lastStage = 'ResponseComplete'): Promise<AuditEvent[][]> {
    return eventually(5000, `${count} audited requests`, async () => {
      const byId = new Map<string, AuditEvent[]>();
      for (const e of readEvents(logPath).filter(pick)) byId.set(e.auditID, [...(byId.get(e.auditID) ?? []), e]);
      const done = [...byId.values()].filter((evs) => evs.some((e) => e.stage === lastStage));
      return done.length >= count ? [...byId.values()] : undefined;
    });
  }

  it('RequestResponse: create, get, list, patch and delete, each once at RequestReceived and ResponseComplete', async () => {
    assert.equal((await kube(['create', 'configmap', 'rr1', '-n', 'audit-rr', '--from-literal=a=1'])).code, 0);
    assert.equal((await kube(['get', 'configmap', 'rr1', '-n', 'audit-rr'])).code, 0);
    assert.equal((await kube(['get', 'configmaps', '-n', 'audit-rr'])).code, 0);
    assert.equal((await kube(['patch', 'configmap', 'rr1', '-n', 'audit-rr', '-p', '{"data":{"b":"2"}}'])).code, 0);
    // --wait=false: kubectl would otherwise GET the object until it is gone.
    assert.equal((await kube(['delete', 'configmap', 'rr1', '-n', 'audit-rr', '--wait=false'])).code, 0);
    // kubectl patch reads the object first: six requests.
    const reqs = await requests((e) => e.objectRef?.namespace === 'audit-rr' && e.objectRef.resource === 'configmaps', 6);
    assert.deepEqual(
      reqs.map((evs) => evs[0]!.verb),
      ['create', 'get', 'list', 'get', 'patch', 'delete'],
      JSON.stringify(reqs.map((evs) => evs.map((e) => [e.verb, e.stage, e.requestURI]))),
    );
    for (const evs of reqs) {
      const verb = evs[0]!.verb;
      assert.deepEqual(
        evs.map((e) => e.stage),
        ['RequestReceived', 'ResponseComplete'],
        `${verb}: one event per stage, in order`,
      );
      for (const e of evs) {
        assert.equal(e.kind, 'Event');
        assert.equal(e.apiVersion, 'audit.k8s.io/v1');
        assert.equal(e.level, 'RequestResponse');
        assert.match(e.requestReceivedTimestamp, MICRO_TIME);
        assert.match(e.stageTimestamp, MICRO_TIME);
        assert.match(e.userAgent ?? '', /^kubectl\/v1\.33/);
        assert.deepEqual(e.sourceIPs, ['127.0.0.1']);
        assert.equal(e.user.username, 'kplane-admin');
        assert.ok(e.user.groups?.includes('system:masters'));
      }
      const [received, complete] = evs as [AuditEvent, AuditEvent];
      assert.equal(received.stageTimestamp, received.requestReceivedTimestamp, 'RequestReceived is stamped with the arrival time');
      assert.equal(received.responseStatus, undefined);
      assert.ok(complete.stageTimestamp >= complete.requestReceivedTimestamp);
    }
    const [create, get, list, patchGet, patch, del] = reqs as [AuditEvent[], AuditEvent[], AuditEvent[], AuditEvent[], AuditEvent[], AuditEvent[]];
    // RequestReceived goes out before the body is read, as upstream's: the name comes from the body later.
    assert.deepEqual(create[0]!.objectRef, { resource: 'configmaps', namespace: 'audit-rr', apiVersion: 'v1' });
    assert.equal(create[0]!.requestObject, undefined);
    assert.deepEqual(create[1]!.objectRef, { resource: 'configmaps', namespace: 'audit-rr', name: 'rr1', apiVersion: 'v1' });
    assert.equal(create[0]!.requestURI, '/api/v1/namespaces/audit-rr/configmaps?fieldManager=kubectl-create&fieldValidation=Strict');
    assert.deepEqual((create[1]!.requestObject as { data: unknown }).data, { a: '1' });
    assert.deepEqual(create[1]!.responseStatus, { metadata: {}, code: 201 });
    const created = create[1]!.responseObject as { metadata: { uid: string; resourceVersion: string } };
    assert.ok(created.metadata.uid && created.metadata.resourceVersion);

    assert.deepEqual(get[1]!.objectRef, { resource: 'configmaps', namespace: 'audit-rr', name: 'rr1', apiVersion: 'v1' });
    assert.deepEqual(get[1]!.responseStatus, { metadata: {}, code: 200 });
    // kubectl asks for a Table: the answer as written is what is recorded.
    assert.equal(get[1]!.responseObject?.kind, 'Table');
    assert.equal(list[1]!.responseObject?.kind, 'Table');
    assert.equal(patchGet[1]!.responseObject?.kind, 'ConfigMap');

    assert.deepEqual(patch[1]!.requestObject, { data: { b: '2' } }, 'the patch as sent');
    assert.deepEqual((patch[1]!.responseObject as { data: unknown }).data, { a: '1', b: '2' });

    assert.equal(del[1]!.responseStatus?.status, 'Success');
    assert.equal(del[1]!.responseStatus?.code, 200);
    assert.equal(del[1]!.responseStatus?.details?.name, 'rr1');
  });

  it('Metadata with RequestReceived omitted: a 404 and an invalid create carry their Status, and no objects', async () => {
    const missing = await kube(['get', 'configmap', 'missing', '-n', 'audit-md']);
    assert.equal(missing.code, 1);
    const bad = await kube(['create', 'configmap', 'Bad_Name', '-n', 'audit-md']);
    assert.equal(bad.code, 1);
    const reqs = await requests((e) => e.objectRef?.namespace === 'audit-md' && e.objectRef.resource === 'configmaps' && e.verb !== 'watch', 2);
    assert.equal(reqs.length, 2);
    for (const evs of reqs) {
      assert.deepEqual(
        evs.map((e) => e.stage),
        ['ResponseComplete'],
      );
      assert.equal(evs[0]!.level, 'Metadata');
      assert.equal(evs[0]!.requestObject, undefined);
      assert.equal(evs[0]!.responseObject, undefined);
    }
    const notFound = reqs.find((evs) => evs[0]!.verb === 'get')![0]!;
    assert.deepEqual(notFound.responseStatus, {
      metadata: {},
      status: 'Failure',
      message: 'configmaps "missing" not found',
      reason: 'NotFound',
      details: { name: 'missing', kind: 'configmaps' },
      code: 404,
    });
    const invalid = reqs.find((evs) => evs[0]!.verb === 'create')![0]!;
    assert.equal(invalid.responseStatus?.code, 422);
    assert.equal(invalid.responseStatus?.reason, 'Invalid');
    // At Metadata the body still names the object.
    assert.equal(invalid.objectRef?.name, 'Bad_Name');
  });

  it('a watch: RequestReceived omitted, ResponseStarted when it starts, ResponseComplete when it ends', async () => {
    const w = await kube(['get', '--raw', '/api/v1/namespaces/audit-md/configmaps?watch=1&timeoutSeconds=1']);
    assert.equal(w.code, 0, w.stderr);
    const reqs = await requests((e) => e.verb === 'watch' && e.objectRef?.namespace === 'audit-md', 1);
    assert.equal(reqs.length, 1);
    assert.deepEqual(
      reqs[0]!.map((e) => e.stage),
      ['ResponseStarted', 'ResponseComplete'],
    );
    for (const e of reqs[0]!) assert.deepEqual(e.responseStatus, { metadata: {}, code: 200 });
  });

  it('Request level by resourceName; None by namespace; a 401 once, at ResponseStarted, without a user', async () => {
    // A create names no object in its URL, so resourceNames cannot match it (as upstream): Metadata.
    assert.equal((await kube(['create', 'configmap', 'req-level', '-n', 'audit-md', '--from-literal=k=v'])).code, 0);
    assert.equal((await kube(['patch', 'configmap', 'req-level', '-n', 'audit-md', '-p', '{"data":{"k":"w"}}'])).code, 0);
    assert.equal((await kube(['create', 'configmap', 'quiet', '-n', 'audit-none'])).code, 0);
    const unauthorized = await run(
      tools.kubectl,
      ['--kubeconfig=/dev/null', `--server=${srv.url}`, '--insecure-skip-tls-verify', '--token=wrong', 'get', '--raw', '/api/v1/namespaces/audit-md/secrets'],
      {
        env: { HOME: dir },
      },
    );
    assert.equal(unauthorized.code, 1);
    const reqs = await requests((e) => e.objectRef?.name === 'req-level', 2);
    const create = reqs.find((evs) => evs[0]!.verb === 'create')!;
    assert.deepEqual(
      create.map((e) => [e.stage, e.level, e.requestObject]),
      [['ResponseComplete', 'Metadata', undefined]],
    );
    const patch = reqs.find((evs) => evs[0]!.verb === 'patch')!;
    assert.deepEqual(
      patch.map((e) => [e.stage, e.level, e.requestObject, e.responseObject]),
      [
        ['RequestReceived', 'Request', undefined, undefined],
        ['ResponseComplete', 'Request', { data: { k: 'w' } }, undefined],
      ],
    );
    const failed = await requests((e) => e.responseStatus?.code === 401, 1, 'ResponseStarted');
    assert.equal(failed.length, 1);
    assert.deepEqual(failed[0], [
      {
        ...failed[0]![0]!,
        level: 'Metadata',
        stage: 'ResponseStarted',
        verb: 'list',
        user: {},
        responseStatus: { metadata: {}, message: 'Authentication failed, attempted: bearer', code: 401 },
      },
    ]);
    assert.equal(
      readEvents(logPath).some((e) => e.objectRef?.namespace === 'audit-none'),
      false,
      'nothing at level None',
    );
  });

  it('counts events and levels in /metrics', async () => {
    const m = await kube(['get', '--raw', '/metrics']);
    assert.equal(m.code, 0);
    const total = Number(/^apiserver_audit_event_total (\d+)/m.exec(m.stdout)?.[1]);
    assert.ok(total >= readEvents(logPath).length - 1, m.stdout);
    assert.match(m.stdout, /^apiserver_audit_level_total\{level="RequestResponse"\} [1-9]/m);
    assert.match(m.stdout, /^apiserver_audit_level_total\{level="None"\} [1-9]/m);
  });
});

describe('audit log rotation', () => {
  it('rotates at --audit-log-maxsize into lumberjack-named backups, keeping --audit-log-maxbackup', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'kplane-audit-rot-'));
    const logPath = join(dir, 'audit.log');
    const srv = await startTestServer({
      audit: {
        policy: { rules: [ruleAll('RequestResponse')], omitStages: [], omitManagedFields: false },
        log: { path: logPath, maxSizeMB: 1, maxBackups: 2 },
      },
    });
    try {
      const client = srv.cp.loopbackClient();
      // Each create logs its 300 KB ConfigMap three times (request and response bodies).
      for (let i = 0; i < 6; i++) {
        await client.create(CONFIGMAPS, 'default', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `big-${i}` }, data: { x: 'x'.repeat(300_000) } });
      }
      const backups = await eventually(5000, 'two backups', async () => {
        const b = readdirSync(dir).filter((n) => n !== 'audit.log');
        return b.length === 2 ? b : undefined;
      });
      for (const b of backups) assert.match(b, /^audit-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}\.\d{3}\.log$/);
      for (const f of [...backups, 'audit.log']) {
        const text = readFileSync(join(dir, f), 'utf8');
        assert.ok(text.length <= 1024 * 1024, `${f} within 1 MB`);
        for (const line of text.split('\n').filter(Boolean)) assert.equal((JSON.parse(line) as AuditEvent).kind, 'Event');
      }
    } finally {
      await srv.stop();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

function ruleAll(level: 'Metadata' | 'RequestResponse') {
  return { level, users: [], userGroups: [], verbs: [], resources: [], namespaces: [], nonResourceURLs: [], omitStages: [], omitManagedFields: undefined };
}

describe('an audit log that cannot be written (a full disk)', () => {
  it('blocking (the default): requests are answered and the failures counted', async () => {
    const srv = await startTestServer({
      audit: { policy: { rules: [ruleAll('Metadata')], omitStages: [], omitManagedFields: false }, log: { path: '/dev/full' } },
    });
    try {
      const r = await run(tools.kubectl, ['create', 'configmap', 'still-served', '-n', 'default'], { env: { KUBECONFIG: srv.kubeconfig } });
      assert.equal(r.code, 0, r.stderr);
      const m = await run(tools.kubectl, ['get', '--raw', '/metrics'], { env: { KUBECONFIG: srv.kubeconfig } });
      assert.match(m.stdout, /^apiserver_audit_error_total\{plugin="log"\} [1-9]/m);
      assert.match(m.stdout, /^apiserver_audit_requests_rejected_total 0$/m);
    } finally {
      await srv.stop();
    }
  });

  it("blocking-strict: the request fails with upstream's 500 when RequestReceived cannot be stored", async () => {
    // The server's own writes at start (the bootstrap RBAC policy, through the loopback client) are
    // audited too, and would fail the same way: the policy leaves system:apiserver out.
    const loopbackNone = { ...ruleAll('Metadata'), level: 'None' as const, users: ['system:apiserver'] };
    const srv = await startTestServer({
      audit: {
        policy: { rules: [loopbackNone, ruleAll('Metadata')], omitStages: [], omitManagedFields: false },
        log: { path: '/dev/full', mode: 'blocking-strict' },
      },
    });
    try {
      const r = await run(tools.kubectl, ['get', '--raw', '/api/v1/namespaces/default/configmaps'], { env: { KUBECONFIG: srv.kubeconfig } });
      assert.equal(r.code, 1);
      assert.match(r.stderr, /Internal Server Error: \\"\/api\/v1\/namespaces\/default\/configmaps\\": failed to store audit event/);
    } finally {
      await srv.stop();
    }
  });
});

describe('a malformed audit policy refuses start, naming the file and the field', () => {
  let dir = '';
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kplane-audit-bad-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const cases: [string, string, (file: string) => string][] = [
    [
      'an unknown level',
      'apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Foo\n',
      (f) =>
        `loading audit policy file: rules[0].level: Unsupported value: "Foo": supported values: "None", "Metadata", "Request", "RequestResponse": from file ${f}`,
    ],
    [
      'no level',
      'apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- verbs: [get]\n',
      (f) => `loading audit policy file: rules[0].level: Required value: from file ${f}`,
    ],
    [
      'a bad stage and a bad URL',
      'apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [Done]\nrules:\n- level: None\n  nonResourceURLs: ["api/*"]\n',
      (f) =>
        `loading audit policy file: [omitStages[0]: Invalid value: "Done": allowed stages are RequestReceived,ResponseStarted,ResponseComplete,Panic, rules[0].nonResourceURLs[0]: Invalid value: "api/*": non-resource URL rules must begin with a '/' character]: from file ${f}`,
    ],
    ['no rules', 'apiVersion: audit.k8s.io/v1\nkind: Policy\n', (f) => `loading audit policy file: loaded illegal policy with 0 rules: from file ${f}`],
    [
      'a wrong type',
      'apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: None\n  verbs: get\n',
      (f) =>
        `loading audit policy file: failed decoding: json: cannot unmarshal string into Go struct field PolicyRule.rules.verbs of type []string: from file ${f}`,
    ],
    [
      'no kind',
      'apiVersion: audit.k8s.io/v1\nrules: []\n',
      (f) => `loading audit policy file: failed decoding: Object 'Kind' is missing in '{"apiVersion":"audit.k8s.io/v1","rules":[]}': from file ${f}`,
    ],
  ];
  for (const [what, text, message] of cases) {
    it(what, async () => {
      const file = join(dir, `${what.replace(/\W+/g, '-')}.yaml`);
      await writeFile(file, text);
      const dataDir = join(dir, 'data');
      await assert.rejects(
        createControlPlane({ storage: sqlite({ dir: dataDir }), dataDir, port: 0, audit: { policyFile: file, log: { path: join(dir, 'a.log') } } }),
        { message: message(file) },
      );
    });
  }

  it('kplane serve exits with the message', async () => {
    const file = join(dir, 'cli.yaml');
    await writeFile(file, 'apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Foo\n');
    const r = await run(
      process.execPath,
      [
        '--import',
        'tsx',
        join(repoRoot, 'src/cli/main.ts'),
        'serve',
        '--data-dir',
        join(dir, 'cli-data'),
        '--secure-port',
        '0',
        '--audit-policy-file',
        file,
        '--audit-log-path',
        join(dir, 'cli.log'),
      ],
      {
        env: { npm_lifecycle_event: '' },
      },
    );
    assert.equal(r.code, 1);
    assert.match(r.stderr, /^kplane: loading audit policy file: rules\[0\]\.level: Unsupported value: "Foo": .*: from file .*cli\.yaml\n/);
  });
});
