// kubectl 1.20 and kubectl 1.33 end to end against a real kplane server: every case runs with
// both binaries (one server per version), asserting on exit codes, stdout/stderr and the state
// read back with `kubectl get -o json`.
import assert from 'node:assert/strict';
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parse as parseYaml, stringify as toYamlText } from 'yaml';
import { startTestServer, type TestServer } from '../support/server.js';
import { ensureTools, run, tools, type RunResult } from '../support/tools.js';
import { Background } from '../support/background.js';

ensureTools();

const KUBECTLS = [
  { name: '1.20', bin: tools.kubectl120 },
  { name: '1.33', bin: tools.kubectl },
] as const;

interface Obj {
  apiVersion?: string;
  kind?: string;
  metadata: {
    name: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    deletionTimestamp?: string;
    finalizers?: string[];
    resourceVersion?: string;
  };
  data?: Record<string, string>;
  type?: string;
  secrets?: Array<{ name: string }>;
  spec?: Record<string, unknown>;
  status?: { phase?: string };
  items?: Obj[];
}

const MULTI_DOC = `apiVersion: v1
kind: ConfigMap
metadata:
  name: m-cm
  labels: {app: x, env: a}
data:
  a: "1"
---
apiVersion: v1
kind: Secret
metadata:
  name: m-sec
stringData:
  user: admin
---
apiVersion: v1
kind: ServiceAccount
metadata:
  name: m-sa
---
apiVersion: coordination.k8s.io/v1
kind: Lease
metadata:
  name: m-lease
spec:
  holderIdentity: me
  leaseDurationSeconds: 15
`;

for (const kubectl of KUBECTLS) {
  describe(`kubectl ${kubectl.name}`, { timeout: 150_000 }, () => {
    let server: TestServer;
    let dir: string;
    let env: NodeJS.ProcessEnv;

    before(async () => {
      server = await startTestServer();
      dir = await mkdtemp(join(tmpdir(), `kplane-kubectl-${kubectl.name}-`));
      // HOME isolates kubectl's discovery/http cache from the user's and from the other version's.
      env = { KUBECONFIG: server.kubeconfig, HOME: dir, KUBECACHEDIR: join(dir, 'cache') };
    });
    after(async () => {
      await server?.stop();
      if (dir) await rm(dir, { recursive: true, force: true });
    });

    const k = (args: readonly string[], opts: { input?: string; env?: NodeJS.ProcessEnv } = {}): Promise<RunResult> =>
      run(kubectl.bin, args, { env: { ...env, ...opts.env }, timeoutMs: 30_000, ...(opts.input !== undefined ? { input: opts.input } : {}) });
    /** Runs kubectl, asserts it succeeded, returns stdout. */
    const ok = async (args: readonly string[], opts: { input?: string; env?: NodeJS.ProcessEnv } = {}): Promise<string> => {
      const r = await k(args, opts);
      assert.equal(r.code, 0, `kubectl ${args.join(' ')} exited ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
      return r.stdout;
    };
    /** Runs kubectl, asserts it failed with this message on stderr. */
    const fails = async (args: readonly string[], stderr: RegExp | string): Promise<RunResult> => {
      const r = await k(args);
      assert.equal(r.code, 1, `kubectl ${args.join(' ')} should fail\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
      if (typeof stderr === 'string') assert.ok(r.stderr.includes(stderr), `stderr of kubectl ${args.join(' ')}:\n${r.stderr}\nshould include:\n${stderr}`);
      else assert.match(r.stderr, stderr);
      return r;
    };
    const getJson = async (args: readonly string[]): Promise<Obj> => JSON.parse(await ok(['get', ...args, '-o', 'json'])) as Obj;
    const file = async (name: string, text: string): Promise<string> => {
      const p = join(dir, name);
      await writeFile(p, text);
      return p;
    };
    const ns = async (name: string): Promise<string> => {
      assert.equal(await ok(['create', 'namespace', name]), `namespace/${name} created\n`);
      return name;
    };

    it('create: namespace, configmap, secret, several documents from a file, server dry run', async () => {
      const n = await ns('create');
      const created = await getJson(['namespace', n]);
      assert.equal(created.status?.phase, 'Active');
      assert.equal(created.metadata.labels?.['kubernetes.io/metadata.name'], n);

      assert.equal(await ok(['-n', n, 'create', 'configmap', 'c1', '--from-literal=a=1', '--from-literal=b=two']), 'configmap/c1 created\n');
      assert.deepEqual((await getJson(['-n', n, 'configmap', 'c1'])).data, { a: '1', b: 'two' });

      assert.equal(await ok(['-n', n, 'create', 'secret', 'generic', 's1', '--from-literal=password=s3cr3t!']), 'secret/s1 created\n');
      const secret = await getJson(['-n', n, 'secret', 's1']);
      assert.equal(secret.type, 'Opaque');
      assert.equal(Buffer.from(secret.data?.password ?? '', 'base64').toString('utf8'), 's3cr3t!');

      const multi = await file('multi.yaml', MULTI_DOC);
      assert.equal(
        await ok(['-n', n, 'create', '-f', multi]),
        'configmap/m-cm created\nsecret/m-sec created\nserviceaccount/m-sa created\nlease.coordination.k8s.io/m-lease created\n',
      );
      const names = await ok(['-n', n, 'get', 'configmap,secret,serviceaccount,lease', '-o', 'name']);
      assert.deepEqual(names.trim().split('\n').sort(), [
        'configmap/c1',
        'configmap/m-cm',
        'lease.coordination.k8s.io/m-lease',
        'secret/m-sec',
        'secret/s1',
        'serviceaccount/m-sa',
      ]);
      const stringDataSecret = await getJson(['-n', n, 'secret', 'm-sec']);
      assert.equal(Buffer.from(stringDataSecret.data?.user ?? '', 'base64').toString(), 'admin');
      assert.equal((stringDataSecret as { stringData?: unknown }).stringData, undefined);
      const lease = await getJson(['-n', n, 'lease', 'm-lease']);
      assert.deepEqual(lease.spec, { holderIdentity: 'me', leaseDurationSeconds: 15 });

      assert.equal(await ok(['-n', n, 'create', 'configmap', 'dry', '--from-literal=a=1', '--dry-run=server']), 'configmap/dry created (server dry run)\n');
      await fails(['-n', n, 'get', 'configmap', 'dry'], 'Error from server (NotFound): configmaps "dry" not found');
      // Already there: the server dry run reports the conflict as a real create would.
      await fails(['-n', n, 'create', 'configmap', 'c1', '--from-literal=a=1', '--dry-run=server'], 'configmaps "c1" already exists');
      const again = await fails(['-n', n, 'create', '-f', multi, '--dry-run=server'], /AlreadyExists/);
      assert.deepEqual(again.stderr.trim().split('\n'), [
        `Error from server (AlreadyExists): error when creating "${multi}": configmaps "m-cm" already exists`,
        `Error from server (AlreadyExists): error when creating "${multi}": secrets "m-sec" already exists`,
        `Error from server (AlreadyExists): error when creating "${multi}": serviceaccounts "m-sa" already exists`,
        `Error from server (AlreadyExists): error when creating "${multi}": leases.coordination.k8s.io "m-lease" already exists`,
      ]);
    });

    it('get: output formats, label and field selectors, all namespaces', async () => {
      const n = await ns('get');
      await ok(['-n', n, 'create', '-f', await file('get.yaml', MULTI_DOC)]);
      await ok(['-n', n, 'create', 'configmap', 'other', '--from-literal=a=9']);
      await ok(['-n', n, 'label', 'configmap', 'other', 'env=b', 'x=1']);

      const json = await getJson(['-n', n, 'configmap', 'm-cm']);
      assert.equal(json.kind, 'ConfigMap');
      assert.equal(json.apiVersion, 'v1');
      assert.equal(json.metadata.namespace, n);
      assert.deepEqual(json.metadata.labels, { app: 'x', env: 'a' });
      assert.match(json.metadata.resourceVersion ?? '', /^\d+$/);

      const yaml = parseYaml(await ok(['-n', n, 'get', 'configmap', 'm-cm', '-o', 'yaml'])) as Obj;
      assert.deepEqual(yaml.data, { a: '1' });
      assert.equal(yaml.metadata.name, 'm-cm');

      const wide = (await ok(['-n', n, 'get', 'configmaps', '-o', 'wide'])).trim().split('\n');
      assert.match(wide[0]!, /^NAME\s+DATA\s+AGE$/);
      assert.deepEqual(
        wide.slice(1).map((l) => l.split(/\s+/).slice(0, 2)),
        [
          ['m-cm', '1'],
          ['other', '1'],
        ],
      );
      const secrets = (await ok(['-n', n, 'get', 'secrets'])).trim().split('\n');
      assert.match(secrets[0]!, /^NAME\s+TYPE\s+DATA\s+AGE$/);
      assert.match(secrets[1]!, /^m-sec\s+Opaque\s+1\s+\d+s$/);

      assert.equal(await ok(['-n', n, 'get', 'configmap', '-o', 'name']), 'configmap/m-cm\nconfigmap/other\n');
      assert.equal(await ok(['-n', n, 'get', 'configmap', 'm-cm', '-o', 'jsonpath={.data.a}']), '1');

      const [byLabel, bySet, byAbsence, byName, byType, none] = await Promise.all([
        ok(['-n', n, 'get', 'cm', '-l', 'app=x', '-o', 'name']),
        ok(['-n', n, 'get', 'cm', '-l', 'env in (a,b)', '-o', 'name']),
        ok(['-n', n, 'get', 'cm', '-l', '!x', '-o', 'name']),
        ok(['-n', n, 'get', 'cm', '--field-selector', 'metadata.name=other', '-o', 'name']),
        ok(['-n', n, 'get', 'secrets', '--field-selector', 'type=Opaque', '-o', 'name']),
        k(['-n', n, 'get', 'secrets', '--field-selector', 'type=kubernetes.io/tls']),
      ]);
      assert.equal(byLabel, 'configmap/m-cm\n');
      assert.equal(bySet, 'configmap/m-cm\nconfigmap/other\n');
      assert.equal(byAbsence, 'configmap/m-cm\n');
      assert.equal(byName, 'configmap/other\n');
      assert.equal(byType, 'secret/m-sec\n');
      assert.equal(none.code, 0);
      assert.equal(none.stdout, '');
      assert.equal(none.stderr, `No resources found in ${n} namespace.\n`);

      await fails(
        ['-n', n, 'get', 'cm', '--field-selector', 'data.a=1'],
        /"data\.a" is not a known field selector: only "metadata\.name", "metadata\.namespace"/,
      );
      await fails(['-n', n, 'get', 'secrets', '--field-selector', 'data.a=1'], /field label not supported: data\.a/);
      await fails(['-n', n, 'get', 'cm', '-l', 'a b'], /unable to parse requirement|couldn't parse the selector/);

      const namespaces = (await ok(['get', 'ns'])).trim().split('\n');
      assert.match(namespaces[0]!, /^NAME\s+STATUS\s+AGE$/);
      for (const want of ['default', 'kube-public', 'kube-system', n]) {
        assert.ok(
          namespaces.some((l) => new RegExp(`^${want}\\s+Active\\s+\\d+[sm]$`).test(l)),
          `${want} in\n${namespaces.join('\n')}`,
        );
      }

      const all = (await ok(['get', 'cm', '-A'])).trim().split('\n');
      assert.match(all[0]!, /^NAMESPACE\s+NAME\s+DATA\s+AGE$/);
      assert.ok(
        all.some((l) => new RegExp(`^${n}\\s+m-cm\\s+1\\s+`).test(l)),
        all.join('\n'),
      );
      assert.ok(
        all.some((l) => new RegExp(`^${n}\\s+other\\s+1\\s+`).test(l)),
        all.join('\n'),
      );
      const allNames = await ok(['get', 'cm', '--all-namespaces', '-o', 'jsonpath={range .items[*]}{.metadata.namespace}/{.metadata.name} {end}']);
      assert.ok(allNames.includes(`${n}/m-cm ${n}/other`), allNames);

      await fails(['-n', n, 'get', 'configmap', 'missing'], 'Error from server (NotFound): configmaps "missing" not found');

      // The response headers every kube-apiserver answer carries (WithAuditInit, WithCacheControl).
      const verbose = await k(['get', 'namespace', 'default', '-v=8']);
      assert.equal(verbose.code, 0, verbose.stderr);
      assert.match(verbose.stderr, /Audit-Id: [0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\n/);
      assert.match(verbose.stderr, /Cache-Control: no-cache, private\n/);
    });

    it('describe configmap and namespace', async () => {
      const n = await ns('describe');
      await ok(['-n', n, 'create', 'configmap', 'd', '--from-literal=greeting=hello']);
      await ok(['-n', n, 'label', 'configmap', 'd', 'app=web']);
      const cm = await ok(['-n', n, 'describe', 'configmap', 'd']);
      assert.match(cm, /^Name:\s+d$/m);
      assert.match(cm, new RegExp(`^Namespace:\\s+${n}$`, 'm'));
      assert.match(cm, /^Labels:\s+app=web$/m);
      assert.match(cm, /^Data\n====\ngreeting:\n----\nhello\n/m);
      const nsText = await ok(['describe', 'namespace', n]);
      assert.match(nsText, new RegExp(`^Name:\\s+${n}$`, 'm'));
      assert.match(nsText, new RegExp(`^Labels:\\s+kubernetes.io/metadata.name=${n}$`, 'm'));
      assert.match(nsText, /^Status:\s+Active$/m);
    });

    it('apply: create, unchanged, then a removed key is removed (three-way merge)', async () => {
      const n = await ns('apply');
      const v1 = await file(
        'apply1.yaml',
        'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ap\n  labels: {keep: "yes", drop: "me"}\ndata:\n  a: "1"\n  b: "2"\n',
      );
      const v2 = await file('apply2.yaml', 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ap\n  labels: {keep: "yes"}\ndata:\n  a: "1"\n');
      assert.equal(await ok(['-n', n, 'apply', '-f', v1]), 'configmap/ap created\n');
      const first = await getJson(['-n', n, 'cm', 'ap']);
      const lastApplied = JSON.parse(first.metadata.annotations?.['kubectl.kubernetes.io/last-applied-configuration'] ?? '{}') as Obj;
      assert.deepEqual(lastApplied.data, { a: '1', b: '2' });
      assert.equal(await ok(['-n', n, 'apply', '-f', v1]), 'configmap/ap unchanged\n');
      assert.equal((await getJson(['-n', n, 'cm', 'ap'])).metadata.resourceVersion, first.metadata.resourceVersion, 'unchanged apply must not write');
      // A key added by someone else survives apply (it is not in last-applied).
      await ok(['-n', n, 'patch', 'cm', 'ap', '--type', 'merge', '-p', '{"data":{"foreign":"x"}}']);
      assert.equal(await ok(['-n', n, 'apply', '-f', v2]), 'configmap/ap configured\n');
      const after2 = await getJson(['-n', n, 'cm', 'ap']);
      assert.deepEqual(after2.data, { a: '1', foreign: 'x' });
      assert.deepEqual(after2.metadata.labels, { keep: 'yes' });
      assert.equal(await ok(['-n', n, 'apply', '-f', v2, '--dry-run=server']), 'configmap/ap unchanged (server dry run)\n');
    });

    it('apply from stdin, diff (server dry run), columns, chunked lists, delete -l and --all', async () => {
      const n = await ns('misc');
      const manifest = await ok(['-n', n, 'create', 'configmap', 'st', '--from-literal=a=1', '--dry-run=client', '-o', 'yaml']);
      assert.equal(await ok(['-n', n, 'apply', '-f', '-'], { input: manifest }), 'configmap/st created\n');
      const changed = await file('diff.yaml', manifest.replace(/a: "1"/, 'a: "2"'));
      const diff = await k(['-n', n, 'diff', '-f', changed]);
      assert.equal(diff.code, 1, `diff exits 1 when there are differences: ${diff.stderr}`);
      assert.match(diff.stdout, /^-  a: "1"\n\+  a: "2"$/m);
      assert.deepEqual((await getJson(['-n', n, 'cm', 'st'])).data, { a: '1' }, 'diff must not change the object');
      const same = await k(['-n', n, 'diff', '-f', '-'], { input: manifest });
      assert.equal(same.code, 0, same.stdout + same.stderr);
      assert.equal(same.stdout, '');

      for (const i of [3, 1, 2]) await ok(['-n', n, 'create', 'configmap', `c${i}`, `--from-literal=a=${i}`]);
      await ok(['-n', n, 'label', 'configmap', 'c1', 'c2', 'app=x']);
      const table = (await ok(['-n', n, 'get', 'cm', '--show-labels', '-L', 'app', '--sort-by=.metadata.name', '--chunk-size=1'])).trim().split('\n');
      assert.match(table[0]!, /^NAME\s+DATA\s+AGE\s+APP\s+LABELS$/);
      assert.deepEqual(
        table.slice(1).map((l) => l.split(/\s+/).filter((c) => !/^\d+s$/.test(c))),
        [
          ['c1', '1', 'x', 'app=x'],
          ['c2', '1', 'x', 'app=x'],
          ['c3', '1', '<none>'],
          ['st', '1', '<none>'],
        ],
      );
      assert.equal(await ok(['-n', n, 'delete', 'configmap', '-l', 'app=x']), 'configmap "c1" deleted\nconfigmap "c2" deleted\n');
      assert.equal(await ok(['-n', n, 'delete', 'configmap', '--all']), 'configmap "c3" deleted\nconfigmap "st" deleted\n');
      const none = await k(['-n', n, 'get', 'configmaps']);
      assert.equal(none.stderr, `No resources found in ${n} namespace.\n`);
    });

    it('edit with an EDITOR script persists the change', async () => {
      const n = await ns('edit');
      await ok(['-n', n, 'create', 'configmap', 'e', '--from-literal=a=before', '--from-literal=b=keep']);
      const editor = await file('editor.sh', '#!/bin/sh\nsed -i -e \'s/^  a: before$/  a: after/\' "$1"\n');
      await chmod(editor, 0o755);
      assert.equal(await ok(['-n', n, 'edit', 'configmap', 'e'], { env: { EDITOR: editor, KUBE_EDITOR: editor } }), 'configmap/e edited\n');
      assert.deepEqual((await getJson(['-n', n, 'cm', 'e'])).data, { a: 'after', b: 'keep' });
      // An editor that changes nothing: kubectl says so and nothing is written.
      const noop = await file('noop.sh', '#!/bin/sh\nexit 0\n');
      await chmod(noop, 0o755);
      const r = await k(['-n', n, 'edit', 'configmap', 'e'], { env: { EDITOR: noop, KUBE_EDITOR: noop } });
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stderr, /Edit cancelled, no changes made\./);
    });

    it('patch: json, merge, strategic (merge key and $patch delete)', async () => {
      const n = await ns('patch');
      await ok(['-n', n, 'create', 'configmap', 'p', '--from-literal=a=1', '--from-literal=b=2']);
      assert.equal(
        await ok(['-n', n, 'patch', 'configmap', 'p', '--type', 'json', '-p', '[{"op":"add","path":"/data/j","value":"J"},{"op":"remove","path":"/data/b"}]']),
        'configmap/p patched\n',
      );
      assert.equal(await ok(['-n', n, 'patch', 'configmap', 'p', '--type', 'merge', '-p', '{"data":{"m":"M","a":null}}']), 'configmap/p patched\n');
      assert.equal(await ok(['-n', n, 'patch', 'configmap', 'p', '-p', '{"data":{"s":"S"}}']), 'configmap/p patched\n');
      assert.deepEqual((await getJson(['-n', n, 'cm', 'p'])).data, { j: 'J', m: 'M', s: 'S' });
      const rv = (await getJson(['-n', n, 'cm', 'p'])).metadata.resourceVersion;
      assert.equal(await ok(['-n', n, 'patch', 'configmap', 'p', '--type', 'strategic', '-p', '{"data":{"s":"S"}}']), 'configmap/p patched (no change)\n');
      assert.equal((await getJson(['-n', n, 'cm', 'p'])).metadata.resourceVersion, rv);

      // ServiceAccount.secrets is a list merged by name: a strategic patch adds, a merge patch replaces.
      await ok(['-n', n, 'create', 'serviceaccount', 'sa']);
      await ok(['-n', n, 'patch', 'sa', 'sa', '-p', '{"secrets":[{"name":"one"}]}']);
      await ok(['-n', n, 'patch', 'sa', 'sa', '--type', 'strategic', '-p', '{"secrets":[{"name":"two"}]}']);
      assert.deepEqual((await getJson(['-n', n, 'sa', 'sa'])).secrets, [{ name: 'two' }, { name: 'one' }]);
      await ok(['-n', n, 'patch', 'sa', 'sa', '-p', '{"secrets":[{"name":"two","$patch":"delete"}]}']);
      assert.deepEqual((await getJson(['-n', n, 'sa', 'sa'])).secrets, [{ name: 'one' }]);
      await ok(['-n', n, 'patch', 'sa', 'sa', '--type', 'merge', '-p', '{"secrets":[{"name":"three"}]}']);
      assert.deepEqual((await getJson(['-n', n, 'sa', 'sa'])).secrets, [{ name: 'three' }]);

      await fails(['-n', n, 'patch', 'configmap', 'missing', '-p', '{"data":{"a":"1"}}'], 'Error from server (NotFound): configmaps "missing" not found');
      // A failed JSON patch test is 422 Invalid with upstream's generic message (and no causes).
      await fails(
        ['-n', n, 'patch', 'configmap', 'p', '--type', 'json', '-p', '[{"op":"test","path":"/data/j","value":"nope"}]'],
        kubectl.name === '1.20' ? /^The request is invalid\n$/ : /^The request is invalid: the server rejected our request due to an error in our request\n$/,
      );
      await fails(
        ['-n', n, 'patch', 'configmap', 'p', '--type', 'merge', '-p', '{"data":{"bad key":"x"}}'],
        `The ConfigMap "p" is invalid: data[bad key]: Invalid value: "bad key": a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')\n`,
      );
      assert.deepEqual((await getJson(['-n', n, 'cm', 'p'])).data, { j: 'J', m: 'M', s: 'S' });
    });

    it('label, annotate (--overwrite, key- removal), replace -f', async () => {
      const n = await ns('label');
      await ok(['-n', n, 'create', 'configmap', 'l', '--from-literal=a=1']);
      assert.equal(await ok(['-n', n, 'label', 'configmap', 'l', 'tier=web']), 'configmap/l labeled\n');
      await fails(['-n', n, 'label', 'configmap', 'l', 'tier=db'], "error: 'tier' already has a value (web), and --overwrite is false");
      assert.equal(await ok(['-n', n, 'label', 'configmap', 'l', 'tier=db', '--overwrite']), 'configmap/l labeled\n');
      assert.equal(await ok(['-n', n, 'annotate', 'configmap', 'l', 'note=hi']), 'configmap/l annotated\n');
      await fails(
        ['-n', n, 'annotate', 'configmap', 'l', 'note=bye'],
        "error: --overwrite is false but found the following declared annotation(s): 'note' already has a value (hi)",
      );
      assert.equal(await ok(['-n', n, 'annotate', 'configmap', 'l', 'note=bye', '--overwrite']), 'configmap/l annotated\n');
      let got = await getJson(['-n', n, 'cm', 'l']);
      assert.deepEqual(got.metadata.labels, { tier: 'db' });
      assert.deepEqual(got.metadata.annotations, { note: 'bye' });

      assert.match(await ok(['-n', n, 'label', 'configmap', 'l', 'tier-']), /^configmap\/l (un)?labeled\n$/);
      assert.equal(await ok(['-n', n, 'annotate', 'configmap', 'l', 'note-']), 'configmap/l annotated\n');
      got = await getJson(['-n', n, 'cm', 'l']);
      // Go drops empty maps (omitempty): no `labels: {}` left behind.
      assert.equal(got.metadata.labels, undefined, JSON.stringify(got.metadata));
      assert.equal(got.metadata.annotations, undefined, JSON.stringify(got.metadata));

      // replace -f with what get -o yaml printed, edited.
      const current = await ok(['-n', n, 'get', 'configmap', 'l', '-o', 'yaml']);
      const edited = current.replace(/^ {2}a: "1"$/m, '  a: replaced');
      assert.notEqual(edited, current);
      const replaceFile = await file('replace.yaml', edited);
      assert.equal(await ok(['-n', n, 'replace', '-f', replaceFile]), 'configmap/l replaced\n');
      assert.deepEqual((await getJson(['-n', n, 'cm', 'l'])).data, { a: 'replaced' });
      // The same file again carries a stale resourceVersion: a conflict, exactly as upstream words it.
      await fails(
        ['-n', n, 'replace', '-f', replaceFile],
        `Error from server (Conflict): error when replacing "${replaceFile}": Operation cannot be fulfilled on configmaps "l": the object has been modified; please apply your changes to the latest version and try again`,
      );
      // Without resourceVersion, replace is unconditional.
      const doc = parseYaml(edited) as Obj;
      delete doc.metadata.resourceVersion;
      doc.data = { a: 'forced' };
      assert.equal(await ok(['-n', n, 'replace', '-f', await file('replace2.yaml', toYamlText(doc))]), 'configmap/l replaced\n');
      assert.deepEqual((await getJson(['-n', n, 'cm', 'l'])).data, { a: 'forced' });
    });

    it('get -w streams ADDED, MODIFIED and DELETED', async () => {
      const n = await ns('watch');
      await ok(['-n', n, 'create', 'configmap', 'w0', '--from-literal=a=1']);
      const w = new Background(kubectl.bin, ['-n', n, 'get', 'configmaps', '-w', '--output-watch-events'], env);
      try {
        await w.waitFor((b) => /ADDED\s+w0\s+1\s+/.test(b.stdout), 'initial ADDED w0');
        assert.match(w.stdout, /^EVENT\s+NAME\s+DATA\s+AGE\n/);
        await ok(['-n', n, 'create', 'configmap', 'w1', '--from-literal=a=1']);
        await w.waitFor((b) => /ADDED\s+w1\s+1\s+/.test(b.stdout), 'ADDED w1');
        await ok(['-n', n, 'patch', 'configmap', 'w1', '--type', 'merge', '-p', '{"data":{"b":"2"}}']);
        await w.waitFor((b) => /MODIFIED\s+w1\s+2\s+/.test(b.stdout), 'MODIFIED w1');
        await ok(['-n', n, 'delete', 'configmap', 'w1']);
        await w.waitFor((b) => /DELETED\s+w1\s+2\s+/.test(b.stdout), 'DELETED w1');
        assert.equal(w.code, undefined, 'the watch is still running');
      } finally {
        await w.stop();
      }
      const lines = w.stdout
        .trim()
        .split('\n')
        .map((l) => l.split(/\s+/).slice(0, 3).join(' '));
      assert.deepEqual(lines, ['EVENT NAME DATA', 'ADDED w0 1', 'ADDED w1 1', 'MODIFIED w1 2', 'DELETED w1 2']);

      // -o json watch of a single object prints it, then each change.
      const wj = new Background(kubectl.bin, ['-n', n, 'get', 'configmap', 'w0', '-w', '-o', 'json'], env);
      try {
        await wj.waitFor((b) => b.stdout.includes('"name": "w0"'), 'w0 as JSON');
        await ok(['-n', n, 'label', 'configmap', 'w0', 'seen=yes']);
        await wj.waitFor((b) => b.stdout.includes('"seen": "yes"'), 'the labelled w0');
      } finally {
        await wj.stop();
      }
    });

    it('delete: --wait until finalizers are gone, namespaces terminate, lifecycle admission', async () => {
      const n = await ns('delete');
      await ok(['-n', n, 'create', 'configmap', 'gone', '--from-literal=a=1']);
      assert.equal(await ok(['-n', n, 'delete', 'configmap', 'gone', '--wait']), 'configmap "gone" deleted\n');
      await fails(['-n', n, 'get', 'configmap', 'gone'], 'configmaps "gone" not found');
      await fails(['-n', n, 'delete', 'configmap', 'gone'], 'Error from server (NotFound): configmaps "gone" not found');

      // A finalizer holds the object: delete --wait returns only once it is removed.
      await ok([
        '-n',
        n,
        'create',
        '-f',
        await file('held.yaml', 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: held\n  finalizers: [example.com/hold]\n'),
      ]);
      const del = new Background(kubectl.bin, ['-n', n, 'delete', 'configmap', 'held', '--wait', '--timeout=30s'], env);
      try {
        const deadline = Date.now() + 15_000;
        let held = await getJson(['-n', n, 'cm', 'held']);
        while (!held.metadata.deletionTimestamp && Date.now() < deadline) {
          await new Promise((r) => setTimeout(r, 100));
          held = await getJson(['-n', n, 'cm', 'held']);
        }
        assert.ok(held.metadata.deletionTimestamp, 'deletionTimestamp set');
        await new Promise((r) => setTimeout(r, 500));
        assert.equal(del.code, undefined, `delete --wait returned while the finalizer was there: ${del.stdout} ${del.stderr}`);
        await ok(['-n', n, 'patch', 'configmap', 'held', '--type', 'json', '-p', '[{"op":"remove","path":"/metadata/finalizers"}]']);
        assert.equal(await del.exited, 0, del.stderr);
        assert.equal(del.stdout, 'configmap "held" deleted\n');
      } finally {
        await del.stop();
      }
      await fails(['-n', n, 'get', 'configmap', 'held'], 'configmaps "held" not found');

      await fails(['delete', 'namespace', 'default'], 'Error from server (Forbidden): namespaces "default" is forbidden: this namespace may not be deleted');
      await fails(['-n', 'no-such-ns', 'create', 'configmap', 'x', '--from-literal=a=1'], 'namespaces "no-such-ns" not found');
      await fails(
        ['-n', 'no-such-ns', 'create', '-f', await file('x.yaml', 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n')],
        /Error from server \(NotFound\).*namespaces "no-such-ns" not found/s,
      );

      assert.equal(await ok(['delete', 'namespace', n, '--wait=false']), `namespace "${n}" deleted\n`);
      const terminating = await getJson(['namespace', n]);
      assert.equal(terminating.status?.phase, 'Terminating');
      assert.ok(terminating.metadata.deletionTimestamp);
      assert.match(await ok(['get', 'namespace', n]), new RegExp(`^NAME\\s+STATUS\\s+AGE\\n${n}\\s+Terminating\\s+`));
      await fails(
        ['-n', n, 'create', 'configmap', 'late', '--from-literal=a=1'],
        `configmaps "late" is forbidden: unable to create new content in namespace ${n} because it is being terminated`,
      );
      // What was there is still readable and still there.
      assert.equal(await ok(['-n', n, 'get', 'configmap', '-o', 'name']), '');
    });

    it('explain configmap and configmap.data from the served OpenAPI', async () => {
      const top = await k(['explain', 'configmap', '-v=6']);
      assert.equal(top.code, 0, top.stderr);
      assert.match(top.stdout, /^KIND:\s+ConfigMap\nVERSION:\s+v1\n/);
      assert.match(top.stdout, /DESCRIPTION:\n\s+ConfigMap holds non-confidential configuration data as key\/value pairs\./);
      assert.match(top.stdout, /FIELDS:\n\s+apiVersion\t<string>/);
      assert.match(top.stdout, /^\s+data\t<map\[string\]string>$/m);
      assert.match(top.stdout, /^\s+metadata\t<(Object|ObjectMeta)>$/m);
      // 1.20 reads /openapi/v2 (gnostic protobuf); 1.33 reads /openapi/v3.
      assert.match(
        top.stderr,
        kubectl.name === '1.20'
          ? /GET https:\/\/[^ ]+\/openapi\/v2\?timeout=32s 200 OK/
          : /verb="GET" url="https:\/\/[^ ]+\/openapi\/v3\/api\/v1\?hash=[0-9A-F]{128}&timeout=32s" status="200 OK"/,
      );
      const field = await ok(['explain', 'configmap.data']);
      assert.match(field, /^KIND:\s+ConfigMap\nVERSION:\s+v1\n\nFIELD:\s+data <map\[string\]string>\n/);
      assert.match(field, /DESCRIPTION:\n\s+UTF-8 string values\./);
      await fails(['explain', 'configmap.nope'], /field "nope" does not exist/);
    });

    it('api-resources and api-versions', async () => {
      const res = (await ok(['api-resources'])).trim().split('\n');
      assert.match(res[0]!, /^NAME\s+SHORTNAMES\s+APIVERSION\s+NAMESPACED\s+KIND$/);
      const rows = res.slice(1).map((l) => l.split(/\s+/));
      const expect = [
        ['configmaps', 'cm', 'v1', 'true', 'ConfigMap'],
        ['events', 'ev', 'v1', 'true', 'Event'],
        ['namespaces', 'ns', 'v1', 'false', 'Namespace'],
        ['secrets', 'v1', 'true', 'Secret'],
        ['serviceaccounts', 'sa', 'v1', 'true', 'ServiceAccount'],
        ['leases', 'coordination.k8s.io/v1', 'true', 'Lease'],
        ['events', 'ev', 'events.k8s.io/v1', 'true', 'Event'],
      ];
      for (const e of expect)
        assert.ok(
          rows.some((r) => r.join(' ') === e.join(' ')),
          `${e.join(' ')} in\n${res.join('\n')}`,
        );
      assert.equal(await ok(['api-resources', '--api-group=coordination.k8s.io', '-o', 'name']), 'leases.coordination.k8s.io\n');
      const versions = (await ok(['api-versions'])).trim().split('\n');
      for (const v of ['v1', 'coordination.k8s.io/v1', 'events.k8s.io/v1']) assert.ok(versions.includes(v), versions.join('\n'));
    });

    it('without a client certificate: 401 Unauthorized', async () => {
      const admin = parseYaml(await readFile(server.kubeconfig, 'utf8')) as { users: Array<{ name: string; user: Record<string, string> }> };
      const withUser = async (name: string, user: Record<string, string>): Promise<string> => {
        const kc = { ...admin, users: admin.users.map((u) => ({ ...u, user })) };
        return file(name, toYamlText(kc));
      };
      for (const kc of [
        await withUser('token.kubeconfig', { token: 'not-a-valid-token' }),
        await withUser('basic.kubeconfig', { username: 'admin', password: 'admin' }),
      ]) {
        const r = await k(['get', 'configmaps', '-A'], { env: { KUBECONFIG: kc } });
        assert.equal(r.code, 1, r.stdout);
        assert.equal(r.stdout, '');
        assert.equal(r.stderr, 'error: You must be logged in to the server (Unauthorized)\n');
      }
    });
  });
}
