// kubectl 1.20 and 1.33 on custom resources, beyond crd.test.ts: `diff` against a live custom
// resource (server-side dry run of a merge patch), `edit` with an EDITOR script, `get all` for a
// CRD in the `all` category (a namespace holding only custom resources) and `explain` of a nested
// field of the kind.
import assert from 'node:assert/strict';
import { waitServed } from '../support/crd.js';
import { chmod, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ensureTools } from '../support/tools.js';
import { KUBECTLS, useKubectlServer } from '../support/kubectl.js';

ensureTools();

const CRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: gadgets.tools.example.com
spec:
  group: tools.example.com
  scope: Namespaced
  names: {plural: gadgets, singular: gadget, kind: Gadget, categories: [all]}
  versions:
  - name: v1
    served: true
    storage: true
    additionalPrinterColumns:
    - {name: Color, type: string, jsonPath: .spec.color}
    schema:
      openAPIV3Schema:
        type: object
        description: A Gadget is a small tool.
        properties:
          spec:
            type: object
            properties:
              color: {type: string, description: 'The color of the gadget, one of red or blue.'}
              size:
                type: object
                description: How big the gadget is.
                properties:
                  width: {type: integer, description: Width in millimetres.}
`;

const gadget = (name: string, color: string, width = 10): string =>
  `apiVersion: tools.example.com/v1\nkind: Gadget\nmetadata:\n  name: ${name}\n  namespace: only-crs\nspec:\n  color: ${color}\n  size:\n    width: ${width}\n`;

for (const kubectl of KUBECTLS) {
  describe(`kubectl ${kubectl.name} diff, edit, get all and explain on custom resources`, { concurrency: false, timeout: 85_000 }, () => {
    const env = useKubectlServer(kubectl.bin, `kplane-crd-kubectl-${kubectl.name}-`);

    const { k, ok, file } = env;

    it('sets up the CRD and custom resources in a namespace of their own', async () => {
      await ok(['create', '-f', await file('crd.yaml', CRD)]);
      await ok(['wait', '--for', 'condition=established', '--timeout=10s', 'crd/gadgets.tools.example.com']);
      await waitServed(env.raw, '/apis/tools.example.com/v1/gadgets');
      await ok(['create', 'namespace', 'only-crs']);
      await ok(['apply', '-f', await file('g1.yaml', gadget('g1', 'red'))]);
      await ok(['apply', '-f', await file('g2.yaml', gadget('g2', 'blue'))]);
    });

    it('diff: no output and exit 0 when unchanged, a unified diff and exit 1 when changed', async () => {
      const same = await k(['diff', '-f', join(env.dir, 'g1.yaml')]);
      assert.equal(same.code, 0, same.stderr);
      assert.equal(same.stdout, '');
      const changed = await k(['diff', '-f', await file('g1-changed.yaml', gadget('g1', 'green', 12))]);
      assert.equal(changed.code, 1, changed.stderr);
      assert.match(changed.stdout, /^diff -u -N /m);
      assert.match(changed.stdout, /^-  color: red$/m);
      assert.match(changed.stdout, /^\+  color: green$/m);
      assert.match(changed.stdout, /^-    width: 10$/m);
      assert.match(changed.stdout, /^\+    width: 12$/m);
      // The diff is a server-side dry run: nothing changed.
      assert.equal(await ok(['-n', 'only-crs', 'get', 'gadget', 'g1', '-o', 'jsonpath={.spec.color}']), 'red');
      // A new object diffs against nothing.
      const fresh = await k(['diff', '-f', await file('g3.yaml', gadget('g3', 'red'))]);
      assert.equal(fresh.code, 1, fresh.stderr);
      assert.match(fresh.stdout, /^\+kind: Gadget$/m);
      assert.equal((await env.raw.request({ path: '/apis/tools.example.com/v1/namespaces/only-crs/gadgets/g3' })).status, 404);
    });

    it('edit with an EDITOR script changes the custom resource', async () => {
      const editor = await file('editor.sh', `#!/bin/sh\nsed -i 's/^  color: blue$/  color: purple/' "$1"\n`);
      await chmod(editor, 0o755);
      assert.equal(await ok(['-n', 'only-crs', 'edit', 'gadget', 'g2'], { EDITOR: editor }), 'gadget.tools.example.com/g2 edited\n');
      const obj = JSON.parse(await ok(['-n', 'only-crs', 'get', 'gadget', 'g2', '-o', 'json'])) as {
        spec: { color: string };
        metadata: { generation: number; managedFields?: { manager: string }[] };
      };
      assert.equal(obj.spec.color, 'purple');
      assert.equal(obj.metadata.generation, 2);
      // An edit that breaks the schema is refused and kubectl says why.
      const bad = await file('bad-editor.sh', `#!/bin/sh\nsed -i 's/^    width: 10$/    width: wide/' "$1"\n`);
      await chmod(bad, 0o755);
      const r = await k(['-n', 'only-crs', 'edit', 'gadget', 'g2'], { EDITOR: bad });
      assert.notEqual(r.code, 0);
      assert.match(r.stderr, /error: gadgets\.tools\.example\.com "g2" is invalid/);
      // kubectl keeps the edited copy with the server's causes in its header comments.
      const copy = /A copy of your changes has been stored to "([^"]+)"/.exec(r.stderr)?.[1];
      assert.ok(copy, r.stderr);
      const kept = await readFile(copy, 'utf8');
      await rm(copy, { force: true });
      if (kubectl.name === '1.20') {
        // kubectl 1.20 validates against /openapi/v2 itself before sending.
        assert.match(
          kept,
          /# \* <nil>: Invalid value: "The edited file failed validation": ValidationError\(Gadget\.spec\.size\.width\): invalid type for com\.example\.tools\.v1\.Gadget\.spec\.size\.width: got "string", expected "integer"/,
        );
      } else {
        assert.match(kept, /# \* spec\.size\.width: Invalid value: "string": spec\.size\.width in body must be of type integer: "string"/);
      }
      assert.equal(
        (JSON.parse(await ok(['-n', 'only-crs', 'get', 'gadget', 'g2', '-o', 'json'])) as { spec: { size: { width: number } } }).spec.size.width,
        10,
      );
      // An edit that changes nothing is reported as such.
      const noop = await file('noop-editor.sh', '#!/bin/sh\ntrue\n');
      await chmod(noop, 0o755);
      assert.match((await k(['-n', 'only-crs', 'edit', 'gadget', 'g2'], { EDITOR: noop })).stderr, /Edit cancelled, no changes made\./);
    });

    it('an integer past 2^53 is kept exactly, as kube-apiserver keeps an int64 (create, replace)', async () => {
      await ok(['create', '-f', await file('g5.yaml', gadget('g5', 'red').replace('width: 10', 'width: 9007199254740993'))]);
      assert.equal(await ok(['-n', 'only-crs', 'get', 'gadget', 'g5', '-o', 'jsonpath={.spec.size.width}']), '9007199254740993');
      await ok(['apply', '-f', await file('g6.yaml', gadget('g6', 'red'))]);
      await ok(['replace', '-f', await file('g6-big.yaml', gadget('g6', 'red').replace('width: 10', 'width: 12345678901234567'))]);
      assert.equal(await ok(['-n', 'only-crs', 'get', 'gadget', 'g6', '-o', 'jsonpath={.spec.size.width}']), '12345678901234567');
      await ok(['-n', 'only-crs', 'delete', 'gadget', 'g5', 'g6']);
    });

    it('get all lists the custom resources of a CRD in the "all" category', async () => {
      const out = await ok(['-n', 'only-crs', 'get', 'all']);
      assert.match(out, /^NAME\s+COLOR\s*$/m);
      // One kind only: kubectl prints names without the kind prefix.
      assert.match(out, /^g1\s+red\s*$/m);
      assert.match(out, /^g2\s+purple\s*$/m);
      assert.equal(out.trim().split('\n').length, 3, out);
      assert.equal(
        (await ok(['-n', 'only-crs', 'get', 'all', '-o', 'name'])).trim().split('\n').sort().join(' '),
        'gadget.tools.example.com/g1 gadget.tools.example.com/g2',
      );
    });

    it('explain <kind>.spec.<field> reads the CRD schema', async () => {
      const color = await ok(['explain', 'gadget.spec.color']);
      assert.match(color, /KIND:\s+Gadget/);
      assert.match(color, /FIELD:\s+color\s+<string>/);
      assert.match(color, /The color of the gadget, one of red or blue\./);
      const size = await ok(['explain', 'gadgets.spec.size']);
      assert.match(size, /How big the gadget is\./);
      assert.match(size, /width\s+<integer>/);
      assert.match(await ok(['explain', 'gadget.spec.size.width']), /Width in millimetres\./);
      const missing = await k(['explain', 'gadget.spec.nope']);
      assert.notEqual(missing.code, 0);
      assert.match(missing.stderr, /field "nope" does not exist/);
    });
  });
}
