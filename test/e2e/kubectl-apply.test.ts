// `kubectl apply --server-side` end to end with kubectl 1.20 and 1.33 (one server each): create,
// unchanged re-apply (no write), conflicts with another manager (exit 1 and kubectl's message),
// --force-conflicts, removal of a key the manager stops applying, migration from client-side
// apply, and managedFields as `kubectl get -o yaml` shows them.
import assert from 'node:assert/strict';
import { chmod } from 'node:fs/promises';
import { describe, it } from 'node:test';
import { parse as parseYaml } from 'yaml';
import { ensureTools } from '../support/tools.js';
import { KUBECTLS, useKubectlServer } from '../support/kubectl.js';

ensureTools();

interface Entry {
  manager: string;
  operation: string;
  apiVersion: string;
  time?: string;
  fieldsType: string;
  fieldsV1: Record<string, unknown>;
}
interface Obj {
  metadata: { name: string; resourceVersion?: string; labels?: Record<string, string>; annotations?: Record<string, string>; managedFields?: Entry[] };
  data?: Record<string, string>;
}

const cmYaml = (name: string, data: Record<string, string>, labels?: Record<string, string>): string =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n${
    labels
      ? `  labels:\n${Object.entries(labels)
          .map(([k, v]) => `    ${k}: "${v}"\n`)
          .join('')}`
      : ''
  }data:\n${Object.entries(data)
    .map(([k, v]) => `  ${k}: "${v}"\n`)
    .join('')}`;

for (const kubectl of KUBECTLS) {
  describe(`kubectl ${kubectl.name} apply --server-side`, { timeout: 120_000 }, () => {
    const { k, ok, file } = useKubectlServer(kubectl.bin, `kplane-ssa-${kubectl.name}-`, { storage: 'sqlite' });
    const getCM = async (ns: string, name: string): Promise<Obj> =>
      parseYaml(await ok(['-n', ns, 'get', 'configmap', name, '-o', 'yaml', ...kubectl.showManagedFields])) as Obj;
    const owners = (o: Obj): Record<string, Record<string, unknown>> =>
      Object.fromEntries((o.metadata.managedFields ?? []).map((e) => [`${e.manager}/${e.operation}`, e.fieldsV1]));
    const ns = async (name: string): Promise<string> => {
      await ok(['create', 'namespace', name]);
      return name;
    };

    it('creates, re-applies unchanged without a write, shows managers and FieldsV1', async () => {
      const n = await ns('ssa-create');
      const f = await file('create.yaml', cmYaml('c', { a: '1', b: '2' }, { app: 'x' }));
      assert.equal(await ok(['-n', n, 'apply', '--server-side', '-f', f]), 'configmap/c serverside-applied\n');
      const first = await getCM(n, 'c');
      assert.deepEqual(first.data, { a: '1', b: '2' });
      assert.deepEqual(first.metadata.managedFields?.length, 1);
      const e = first.metadata.managedFields[0]!;
      assert.equal(e.manager, 'kubectl');
      assert.equal(e.operation, 'Apply');
      assert.equal(e.apiVersion, 'v1');
      assert.equal(e.fieldsType, 'FieldsV1');
      assert.deepEqual(e.fieldsV1, { 'f:data': { 'f:a': {}, 'f:b': {} }, 'f:metadata': { 'f:labels': { 'f:app': {} } } });

      assert.equal(await ok(['-n', n, 'apply', '--server-side', '-f', f]), 'configmap/c serverside-applied\n');
      const second = await getCM(n, 'c');
      assert.equal(second.metadata.resourceVersion, first.metadata.resourceVersion, 'an unchanged apply must not write');
      assert.deepEqual(second.metadata.managedFields, first.metadata.managedFields);

      // The raw YAML shows the FieldsV1 keys as kubectl prints them.
      const yaml = await ok(['-n', n, 'get', 'configmap', 'c', '-o', 'yaml', ...kubectl.showManagedFields]);
      assert.match(
        yaml,
        /  managedFields:\n  - apiVersion: v1\n    fieldsType: FieldsV1\n    fieldsV1:\n      f:data:\n        f:a: \{\}\n        f:b: \{\}\n      f:metadata:\n        f:labels:\n          f:app: \{\}\n    manager: kubectl\n    operation: Apply\n    time: "/,
      );
      if (kubectl.name === '1.33') {
        // Current kubectl hides managedFields unless asked.
        assert.doesNotMatch(await ok(['-n', n, 'get', 'configmap', 'c', '-o', 'yaml']), /managedFields/);
      }
      // A server-side dry run of a change reports it but does not store it.
      const changed = await file('create-dry.yaml', cmYaml('c', { a: '1', b: '3' }, { app: 'x' }));
      assert.equal(await ok(['-n', n, 'apply', '--server-side', '--dry-run=server', '-f', changed]), 'configmap/c serverside-applied (server dry run)\n');
      assert.equal((await getCM(n, 'c')).data?.b, '2');
    });

    it('conflicts with another manager (exit 1), --force-conflicts takes the field', async () => {
      const n = await ns('ssa-conflict');
      const f = await file('conflict.yaml', cmYaml('c', { a: '1', b: '2' }));
      await ok(['-n', n, 'apply', '--server-side', '-f', f]);
      assert.equal(await ok(['-n', n, 'patch', 'configmap', 'c', '--type', 'merge', '-p', '{"data":{"a":"patched"}}']), 'configmap/c patched\n');
      const patched = await getCM(n, 'c');
      assert.deepEqual(owners(patched)['kubectl-patch/Update'], { 'f:data': { 'f:a': {} } });
      assert.deepEqual(owners(patched)['kubectl/Apply'], { 'f:data': { 'f:b': {} } });

      const r = await k(['-n', n, 'apply', '--server-side', '-f', f]);
      assert.equal(r.code, 1, r.stderr);
      assert.equal(r.stderr.split('\n')[0], 'error: Apply failed with 1 conflict: conflict with "kubectl-patch" using v1: .data.a');
      assert.match(r.stderr, /re-run the apply\n {2}command with the `--force-conflicts` flag/);
      assert.equal((await getCM(n, 'c')).data?.a, 'patched');

      // Another applier (--field-manager) conflicts with kubectl's own fields too.
      const other = await file('conflict-other.yaml', cmYaml('c', { b: 'other' }));
      const r2 = await k(['-n', n, 'apply', '--server-side', '--field-manager=other', '-f', other]);
      assert.equal(r2.code, 1, r2.stderr);
      assert.equal(r2.stderr.split('\n')[0], 'error: Apply failed with 1 conflict: conflict with "kubectl": .data.b');

      assert.equal(await ok(['-n', n, 'apply', '--server-side', '--force-conflicts', '-f', f]), 'configmap/c serverside-applied\n');
      const forced = await getCM(n, 'c');
      assert.deepEqual(forced.data, { a: '1', b: '2' });
      assert.deepEqual(owners(forced), { 'kubectl/Apply': { 'f:data': { 'f:a': {}, 'f:b': {} } } });
    });

    it('removes a key the manager stops applying, keeps keys others own', async () => {
      const n = await ns('ssa-remove');
      await ok(['-n', n, 'apply', '--server-side', '-f', await file('rm1.yaml', cmYaml('c', { a: '1', b: '2', c: '3' }, { keep: 'y', drop: 'y' }))]);
      await ok(['-n', n, 'apply', '--server-side', '--field-manager=other', '-f', await file('rm-other.yaml', cmYaml('c', { c: '3' }))]);
      await ok(['-n', n, 'apply', '--server-side', '-f', await file('rm2.yaml', cmYaml('c', { a: '1' }, { keep: 'y' }))]);
      const o = await getCM(n, 'c');
      assert.deepEqual(o.data, { a: '1', c: '3' });
      assert.deepEqual(o.metadata.labels, { keep: 'y' });
      assert.deepEqual(owners(o)['kubectl/Apply'], { 'f:data': { 'f:a': {} }, 'f:metadata': { 'f:labels': { 'f:keep': {} } } });
      assert.deepEqual(owners(o)['other/Apply'], { 'f:data': { 'f:c': {} } });
    });

    it('migrates from client-side apply without conflicts', async () => {
      const n = await ns('ssa-migrate');
      const v1 = await file('mig1.yaml', cmYaml('c', { a: '1', b: '2' }, { app: 'x' }));
      const v2 = await file('mig2.yaml', cmYaml('c', { a: '10' }, { app: 'z' }));
      assert.equal(await ok(['-n', n, 'apply', '-f', v1]), 'configmap/c created\n');
      const csa = await getCM(n, 'c');
      assert.deepEqual(Object.keys(owners(csa)), ['kubectl-client-side-apply/Update']);
      assert.deepEqual(owners(csa)['kubectl-client-side-apply/Update'], {
        'f:data': { '.': {}, 'f:a': {}, 'f:b': {} },
        'f:metadata': { 'f:annotations': { '.': {}, 'f:kubectl.kubernetes.io/last-applied-configuration': {} }, 'f:labels': { '.': {}, 'f:app': {} } },
      });

      // Changing fields client-side apply set is no conflict for the "kubectl" manager.
      assert.equal(await ok(['-n', n, 'apply', '--server-side', '-f', v2]), 'configmap/c serverside-applied\n');
      const ssa = await getCM(n, 'c');
      assert.equal(ssa.data?.a, '10');
      assert.deepEqual(ssa.metadata.labels, { app: 'z' });
      assert.deepEqual(owners(ssa)['kubectl/Apply'], { 'f:data': { 'f:a': {} }, 'f:metadata': { 'f:labels': { 'f:app': {} } } });
      // The last-applied annotation follows the server-side configuration.
      assert.deepEqual(JSON.parse(ssa.metadata.annotations?.['kubectl.kubernetes.io/last-applied-configuration'] ?? '{}'), {
        apiVersion: 'v1',
        data: { a: '10' },
        kind: 'ConfigMap',
        metadata: { labels: { app: 'z' }, name: 'c', namespace: n },
      });
      if (kubectl.name === '1.33') {
        // Current kubectl also moves client-side apply's fields to "kubectl" (csaupgrade), so b,
        // which v2 no longer sets, is removed; kubectl 1.20 leaves it with its old owner.
        assert.deepEqual(ssa.data, { a: '10' });
        assert.equal(owners(ssa)['kubectl-client-side-apply/Update'], undefined);
      } else {
        assert.deepEqual(ssa.data, { a: '10', b: '2' });
        assert.deepEqual(owners(ssa)['kubectl-client-side-apply/Update']?.['f:data'], { '.': {}, 'f:b': {} });
      }
      // And another server-side apply of the same file changes nothing.
      assert.equal(await ok(['-n', n, 'apply', '--server-side', '-f', v2]), 'configmap/c serverside-applied\n');
      assert.equal((await getCM(n, 'c')).metadata.resourceVersion, ssa.metadata.resourceVersion);
    });

    it('records kubectl create, label and edit as Update managers', async () => {
      const n = await ns('ssa-updaters');
      assert.equal(await ok(['-n', n, 'create', 'configmap', 'c', '--from-literal=a=1']), 'configmap/c created\n');
      assert.deepEqual(owners(await getCM(n, 'c')), { 'kubectl-create/Update': { 'f:data': { '.': {}, 'f:a': {} } } });
      assert.equal(await ok(['-n', n, 'label', 'configmap', 'c', 'team=x']), 'configmap/c labeled\n');
      const editor = await file('editor.sh', `#!/bin/sh\nsed -i 's/^  a: "1"$/  a: "2"/' "$1"\n`);
      await chmod(editor, 0o755);
      assert.equal(await ok(['-n', n, 'edit', 'configmap', 'c'], { EDITOR: editor }), 'configmap/c edited\n');
      const o = await getCM(n, 'c');
      assert.deepEqual(o.data, { a: '2' });
      assert.deepEqual(owners(o), {
        // kubectl-create keeps the data map it created, not the key someone else changed.
        'kubectl-create/Update': { 'f:data': {} },
        'kubectl-label/Update': { 'f:metadata': { 'f:labels': { '.': {}, 'f:team': {} } } },
        'kubectl-edit/Update': { 'f:data': { 'f:a': {} } },
      });
      // The applier now conflicts with kubectl-edit on a, not on anything else.
      const r = await k(['-n', n, 'apply', '--server-side', '-f', await file('upd.yaml', cmYaml('c', { a: '3' }, { team: 'x' }))]);
      assert.equal(r.code, 1, r.stderr);
      assert.equal(r.stderr.split('\n')[0], 'error: Apply failed with 1 conflict: conflict with "kubectl-edit" using v1: .data.a');
    });
  });
}
