// Regenerates the fixtures of the serve tests from upstream operator-registry (facts only: its test
// catalog and its expected answers). Not run by the tests; run by hand when upstream changes:
//   node --import tsx src/catalog/serve/testdata/gen-upstream-fixtures.ts /work/.mirror/operator-framework+operator-registry/repo
//
// simple/catalog.json: upstream's pkg/server test catalog, which it builds from manifests/ (old
//   package-manifest format) in pkg/server/catalog_build_test.go: per CSV an olm.bundle.object for the
//   CSV and each CRD of its directory, olm.package, olm.gvk(.required) from owned/required CRDs, the
//   olm.properties annotation, properties sorted by type then value; channels from the package manifest,
//   walking replaces (and skips that exist) from each channel's currentCSV; etcdoperator.v0.9.2 has the
//   image fake/etcd-operator:v0.9.2, every other bundle none.
// expected/etcdoperator.v0.9.2.json: csvJson and objects of etcdoperatorV0_9_2(..., includeManifestsAll)
//   in pkg/server/server_test.go.
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { goMarshal } from '../../../golang/json.js';

const repo = process.argv[2] ?? '/work/.mirror/operator-framework+operator-registry/repo';
const out = dirname(fileURLToPath(import.meta.url));
const git = (...args: string[]): string => execFileSync('git', ['-C', repo, ...args], { encoding: 'utf8', maxBuffer: 64 << 20 });

type Obj = Record<string, unknown>;
interface Prop { type: string; value: unknown; text: string }

const files = git('ls-tree', '-r', '--name-only', 'HEAD', 'manifests').trim().split('\n');
const show = (p: string): string => git('show', `HEAD:${p}`);
/** sigs.k8s.io/yaml YAMLToJSON: YAML 1.1 scalars, Go map key order, json.Marshal escaping. */
const yamlToJSON = (text: string): string => goMarshal(parse(text, { version: '1.1' }));

function crdGroup(group: string, name: string): string {
  if (group) return group;
  const i = name.indexOf('.');
  return i >= 0 ? name.slice(i + 1) : '';
}

const packages: Obj[] = [];
const channels: Obj[] = [];
const bundles: Obj[] = [];
const pkgDirs = [...new Set(files.map((f) => f.split('/')[1]!))].sort();
for (const pkgDir of pkgDirs) {
  const inPkg = files.filter((f) => f.startsWith(`manifests/${pkgDir}/`));
  const isYAML = (f: string) => /\.ya?ml$/.test(f);
  const manifestFile = inPkg.filter((f) => f.split('/').length === 3 && isYAML(f)).find((f) => (parse(show(f)) as Obj)?.packageName);
  const pm = parse(show(manifestFile!)) as { packageName: string; channels: { name: string; currentCSV: string }[]; defaultChannel?: string };
  const dirs = [`manifests/${pkgDir}`, ...[...new Set(inPkg.filter((f) => f.split('/').length === 4).map((f) => f.split('/').slice(0, 3).join('/')))].sort()];
  const csvs = new Map<string, Obj>();
  for (const dir of dirs) {
    const here = inPkg.filter((f) => dirname(f) === dir && isYAML(f)).sort();
    const csvInfos: { json: string; csv: Obj }[] = [];
    const crds: string[] = [];
    for (const f of here) {
      const json = yamlToJSON(show(f));
      const o = JSON.parse(json) as Obj;
      if (!o || typeof o !== 'object' || !o.kind) continue;
      if (o.kind === 'ClusterServiceVersion') csvInfos.push({ json, csv: o });
      else crds.push(json);
    }
    for (const { json, csv } of csvInfos) {
      const meta = csv.metadata as Obj;
      const spec = csv.spec as Obj;
      const annotations = (meta.annotations ?? {}) as Record<string, string>;
      const name = meta.name as string;
      const props: Prop[] = [];
      const add = (type: string, value: unknown, text = goMarshal(value, false)) => props.push({ type, value, text });
      add('olm.bundle.object', { data: Buffer.from(json).toString('base64') });
      for (const c of crds) add('olm.bundle.object', { data: Buffer.from(c).toString('base64') });
      add('olm.package', { packageName: pm.packageName, version: spec.version }, JSON.stringify({ packageName: pm.packageName, version: spec.version }));
      const crdDefs = (spec.customresourcedefinitions ?? {}) as { owned?: Obj[]; required?: Obj[] };
      const gvk = (d: Obj) => ({ group: crdGroup((d.group as string) ?? '', d.name as string), kind: d.kind, version: d.version });
      for (const d of crdDefs.owned ?? []) if (d.kind) add('olm.gvk', gvk(d), JSON.stringify(gvk(d)));
      for (const d of crdDefs.required ?? []) if (d.kind) add('olm.gvk.required', gvk(d), JSON.stringify(gvk(d)));
      if (annotations['olm.properties']) {
        for (const p of JSON.parse(annotations['olm.properties']) as { type: string; value: unknown }[]) add(p.type, p.value, JSON.stringify(p.value));
      }
      props.sort((a, b) => (a.type !== b.type ? (a.type < b.type ? -1 : 1) : a.text < b.text ? -1 : a.text > b.text ? 1 : 0));
      csvs.set(name, csv);
      bundles.push({
        schema: 'olm.bundle',
        name,
        package: pm.packageName,
        image: name === 'etcdoperator.v0.9.2' ? 'fake/etcd-operator:v0.9.2' : '',
        properties: props.map((p) => ({ type: p.type, value: p.value })),
      });
    }
  }
  for (const ch of [...pm.channels].sort((a, b) => (a.name < b.name ? -1 : 1))) {
    const entries: Obj[] = [];
    const visited = new Set<string>();
    const queue = [ch.currentCSV];
    while (queue.length) {
      const name = queue.shift()!;
      if (visited.has(name)) continue;
      visited.add(name);
      const csv = csvs.get(name);
      if (!csv) {
        entries.push({ name });
        continue;
      }
      const spec = csv.spec as Obj;
      const e: Obj = { name };
      if (spec.replaces) {
        e.replaces = spec.replaces;
        if (!visited.has(spec.replaces as string)) queue.push(spec.replaces as string);
      }
      const skips = (spec.skips ?? []) as string[];
      if (skips.length) {
        e.skips = skips;
        for (const s of skips) if (!visited.has(s) && csvs.has(s)) queue.push(s);
      }
      const sr = ((csv.metadata as Obj).annotations as Record<string, string> | undefined)?.['olm.skipRange'];
      if (sr !== undefined) e.skipRange = sr;
      entries.push(e);
    }
    channels.push({ schema: 'olm.channel', name: ch.name, package: pm.packageName, entries });
  }
  packages.push({ schema: 'olm.package', name: pm.packageName, defaultChannel: pm.defaultChannel ?? (pm.channels.length === 1 ? pm.channels[0]!.name : '') });
}
bundles.sort((a, b) => ((a.name as string) < (b.name as string) ? -1 : 1));
mkdirSync(join(out, 'simple'), { recursive: true });
const blobs = [...packages, ...channels, ...bundles];
writeFileSync(join(out, 'simple', 'catalog.json'), blobs.map((b) => JSON.stringify(b, null, 2)).join('\n') + '\n');

// Expected csvJson and objects of etcdoperator.v0.9.2 (includeManifestsAll), from server_test.go.
const test = show('pkg/server/server_test.go');
const all = test.slice(test.indexOf('case includeManifestsAll:'), test.indexOf('case includeManifestsNone:'));
const literals = [...all.matchAll(/"((?:[^"\\]|\\.)*)"/g)].map((m) => JSON.parse(`"${m[1]}"`) as string);
const csvJson = literals[0]!;
const objects = literals.slice(1).filter((s) => s.startsWith('{'));
objects.splice(2, 0, csvJson); // b.Object = {crd backups, crd clusters, b.CsvJson, crd restores}
mkdirSync(join(out, 'expected'), { recursive: true });
writeFileSync(join(out, 'expected', 'etcdoperator.v0.9.2.json'), JSON.stringify({ csvJson, object: objects }, null, 2) + '\n');
// csvJson of etcdoperatorV0_9_2(..., includeManifestsCSVOnly): the CSV as json.Marshal writes a
// v1alpha1.ClusterServiceVersion (struct field order, omitempty, HTML escaping), for the csv-metadata tests.
const csvOnly = test.slice(test.indexOf('case includeManifestsCSVOnly:'), test.indexOf('b.Object = []string{b.CsvJson}', test.indexOf('case includeManifestsCSVOnly:')));
const csvOnlyJson = JSON.parse(`"${/b\.CsvJson = "((?:[^"\\]|\\.)*)"/.exec(csvOnly)![1]}"`) as string;
writeFileSync(join(out, 'expected', 'etcdoperator.v0.9.2.csv-only.json'), csvOnlyJson + '\n');
console.log(`${packages.length} packages, ${channels.length} channels, ${bundles.length} bundles; expected objects: ${objects.length}`);
