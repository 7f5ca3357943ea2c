// Log levels and formats of `kplane serve`, as kube's components have them: `-v`/`--v` and
// `--logging-format text|json`. A namespace full of objects is deleted through kubectl 1.33; the
// garbage collector's per-object lines ("Deleting item") show only from -v=2, and JSON lines are
// component-base's shape.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { kplaneProcesses } from '../support/kplane-process.js';
import { kubectlSession } from '../support/kubectl.js';
import { repoRoot, run, tools } from '../support/tools.js';

const procs = kplaneProcesses();
const dirs: string[] = [];
after(async () => {
  procs.killAll();
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

const DEPENDENTS = 12;
const SERVING = /^kplane is serving on https:\/\/\S+/m;

/**
 * Starts `kplane serve <flags>`, fills a namespace with an owner ConfigMap and its dependents,
 * deletes the owner (the collector deletes the dependents, one by one) and then the namespace,
 * and returns what the server wrote to stderr.
 */
async function deleteANamespaceOfObjects(flags: readonly string[]): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'kplane-logging-'));
  dirs.push(dir);
  const server = await procs.start(['serve', '--data-dir', join(dir, 'data'), '--secure-port', '0', ...flags], SERVING);
  const kc = kubectlSession(tools.kubectl, join(dir, 'data', 'admin.kubeconfig'), dir, 60_000);
  await kc.ok(['create', 'namespace', 'busy']);
  await kc.ok(['-n', 'busy', 'create', 'configmap', 'owner']);
  const uid = (await kc.ok(['-n', 'busy', 'get', 'configmap', 'owner', '-o', 'jsonpath={.metadata.uid}'])).trim();
  const items = Array.from({ length: DEPENDENTS }, (_, i) => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: `dep-${i}`, labels: { set: 'deps' }, ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid }] },
  }));
  await kc.ok(['-n', 'busy', 'create', '-f', await kc.file('deps.json', JSON.stringify({ apiVersion: 'v1', kind: 'List', items }))]);
  await kc.ok(['-n', 'busy', 'delete', 'configmap', 'owner']);
  await kc.ok(['-n', 'busy', 'wait', '--for=delete', 'configmap', '-l', 'set=deps', '--timeout=60s']);
  await kc.ok(['delete', 'namespace', 'busy', '--timeout=60s']);
  server.child.kill('SIGTERM');
  await server.exited;
  return server.log();
}

describe('kplane serve logs with levels', () => {
  it('at the default level, no line per deleted object; start-up and shutdown are logged', async () => {
    const log = await deleteANamespaceOfObjects([]);
    // No line names a dependent the collector deleted.
    assert.doesNotMatch(log, /dep-\d+/);
    assert.match(
      log,
      /^I\d{4} \d\d:\d\d:\d\d\.\d{6} +\d+ garbagecollector\] "All resource monitors have synced\. Proceeding to collect garbage" resources=\d+$/m,
    );
    assert.match(log, /^I\d{4} \d\d:\d\d:\d\d\.\d{6} +\d+ kplane\] "Received signal, shutting down" signal="SIGTERM"$/m);
  });

  it('with -v=2, one klog line per object the garbage collector deletes', async () => {
    const log = await deleteANamespaceOfObjects(['-v=2']);
    const lines = log.split('\n').filter((l) => l.includes('"Deleting item"'));
    assert.equal(lines.length, DEPENDENTS, log);
    for (const l of lines)
      assert.match(
        l,
        /^I\d{4} \d\d:\d\d:\d\d\.\d{6} +\d+ garbagecollector\] "Deleting item" item="\[v1\/ConfigMap, namespace: busy, name: dep-\d+, uid: [0-9a-f-]+\]" propagationPolicy="Background"$/,
      );
  });

  it('with --logging-format=json, every line is a JSON object of component-base shape', async () => {
    const log = await deleteANamespaceOfObjects(['--logging-format=json', '--v', '2']);
    const entries = log
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    for (const e of entries) {
      assert.equal(typeof e.ts, 'number', JSON.stringify(e));
      assert.equal(typeof e.msg, 'string', JSON.stringify(e));
      assert.ok(typeof e.v === 'number' || typeof e.err === 'string', JSON.stringify(e));
    }
    const deletions = entries.filter((e) => e.msg === 'Deleting item');
    assert.equal(deletions.length, DEPENDENTS);
    for (const d of deletions) {
      assert.equal(d.v, 2);
      assert.equal(d.logger, 'garbagecollector');
      assert.equal(d.propagationPolicy, 'Background');
      assert.match(String(d.item), /^\[v1\/ConfigMap, namespace: busy, name: dep-\d+, uid: /);
    }
    assert.ok(entries.some((e) => e.msg === 'Received signal, shutting down' && e.v === 0 && e.signal === 'SIGTERM'));
  });

  it('a bad --logging-format or -v is refused before anything starts', async () => {
    const main = join(repoRoot, 'src/cli/main.ts');
    const format = await run(process.execPath, ['--import', 'tsx', main, 'serve', '--logging-format', 'xml']);
    assert.equal(format.code, 2);
    assert.equal(format.stderr, 'kplane: invalid argument "xml" for "--logging-format" flag: Unsupported log format; permitted formats: "json", "text"\n');
    const v = await run(process.execPath, ['--import', 'tsx', main, 'controller-manager', '-v', 'two']);
    assert.equal(v.code, 1);
    assert.match(v.stderr, /invalid argument "two" for "-v, --v" flag: strconv\.ParseInt: parsing "two": invalid syntax/);
  });
});
