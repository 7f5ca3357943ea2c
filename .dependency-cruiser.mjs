// The import boundaries of src/ (docs/architecture.md, "Layers"). `npm run check:layers` runs it
// and `npm test` runs that first. A finding names the rule that failed; the rule's comment says
// what to do about it.
//
// Layers, bottom to top. A file may import its own layer's folder and every layer below it, never
// one above it nor a sibling in its own layer (siblings are independent parts: if two of them need
// the same thing, it belongs in a layer below both).
/** @type {Layer[]} */
const LAYERS = [
  // Go's behaviour (JSON, YAML, strconv, durations) and process tuning: depend on nothing of ours.
  { name: 'base', folders: ['golang', 'runtime'] },
  // component-base's parts built on Go's behaviour: feature gates.
  { name: 'component', folders: ['featuregate'] },
  // The etcd-shaped Storage and its backends; API machinery: pure functions on API objects, no I/O.
  // Neither needs the other: storage holds bytes under keys, apimachinery never does I/O.
  { name: 'foundation', folders: ['storage', 'apimachinery'] },
  // The typed client (HTTPS, loopback) and the admission interfaces and chain.
  { name: 'interfaces', folders: ['client', 'admission'] },
  // Identity and access: authenticators (tokens, ServiceAccount JWTs, OIDC), RBAC's rule evaluation,
  // token signing. Used by the registry (TokenRequest), the server's filters and the controllers.
  { name: 'auth', folders: ['auth'] },
  // The generic store, strategies and the built-in kinds.
  { name: 'registry', folders: ['registry'] },
  // What is built on the registry: the HTTP server, CRDs, controllers, catalogs.
  { name: 'features', folders: ['server', 'apiextensions', 'controllers', 'catalog'] },
  // Assembly: createControlPlane, the API modules and the controllers it starts; the `kplane` entry.
  { name: 'controlplane', folders: ['controlplane'], files: ['controlplane.ts', 'index.ts', 'webhook.ts'] },
  // Test kits shipped for others to run against their clusters (the CCM test kit): they drive any
  // kube-compatible server through the client, and may use kplane's own parts for local drivers.
  { name: 'testkits', folders: ['ccm-testing'] },
  // `kplane` subcommands: argument parsing and wiring only.
  { name: 'cli', folders: ['cli'] },
];

// Test code: *.test.ts, *.test-support.ts, testdata/ and the storage conformance suite in src/,
// and everything under test/. Tests stand above every layer: a test may import any src/ file,
// test/support and fixtures (a loopback client test drives a real ApiServer; OpenAPI tests use the
// real kinds' definitions), so the rules below constrain what ships, not how it is proven. Source
// never imports test code (no-source-to-test), and the package excludes it.
const TEST = '(\\.test\\.ts$|\\.test-support\\.ts$|/testdata/|^src/storage/conformance/|^test/)';

/** @typedef {{ name: string, folders: string[], files?: string[] }} Layer */

/** @param {string} s */
const re = (s) => s.replace(/[.]/g, '\\.');
/** @param {Layer} layer */
const pathsOf = (layer) => [...layer.folders.map((f) => `^src/${re(f)}/`), ...(layer.files ?? []).map((f) => `^src/${re(f)}$`)];
/** @param {string[]} paths */
const anyOf = (paths) => `(${paths.join('|')})`;

const layerRules = LAYERS.flatMap((layer, i) => {
  const below = LAYERS.slice(0, i);
  const belowText = below.map((l) => [...l.folders, ...(l.files ?? [])].join(', ')).join(' < ') || 'nothing';
  return pathsOf(layer).map((own) => {
    // The controlplane layer's files are one part (the assembly and its entry), not siblings.
    const allowed = anyOf([...(layer.files ? pathsOf(layer) : [own]), ...below.flatMap(pathsOf)]);
    const name = own
      .replace(/^\^src\//, '')
      .replace(/\/$|\$$/, '')
      .replace(/\\/g, '');
    return {
      name: `layer-${name}`,
      comment:
        `src/${name} is in layer "${layer.name}": it may import its own folder and the layers below (${belowText}), ` +
        'never a sibling or a layer above. Move what both sides need down to a layer both may import, or ' +
        'have the upper layer pass it in (a parameter, an interface it implements). docs/architecture.md, "Layers".',
      severity: 'error',
      from: { path: own, pathNot: TEST },
      to: { path: '^src/', pathNot: `${allowed}|${TEST}` },
    };
  });
});

/** @type {import('dependency-cruiser').IConfiguration} */
export default {
  forbidden: [
    ...layerRules,
    {
      name: 'cli-main-lazy',
      comment:
        "src/cli/main.ts is the `kplane` dispatcher: it loads each command's module with import() when that " +
        'command runs, so that `kplane catalog ...` or `kplane backup` does not load the server first (about 2 s ' +
        'of CPU per process under tsx). Import the command module dynamically in its case, or put the code ' +
        "in the command's own module. src/runtime is light and may be imported statically.",
      severity: 'error',
      from: { path: '^src/cli/main\\.ts$' },
      to: { path: '^src/', pathNot: '^src/runtime/', dependencyTypesNot: ['dynamic-import', 'type-only'] },
    },
    {
      name: 'no-circular',
      comment:
        'An import cycle in src/ (test files aside). Break it by moving what both files need into a ' +
        'third file that imports neither (usually types into a types.ts), or by passing a dependency in.',
      severity: 'error',
      from: { path: '^src/', pathNot: TEST },
      to: { circular: true, viaOnly: { pathNot: TEST } },
    },
    {
      name: 'no-source-to-test',
      comment:
        'Shipped source imports test code (a *.test.ts, *.test-support.ts, testdata/, the storage ' +
        'conformance suite or test/). The package leaves those out, so the import would fail for users: ' +
        'move what is shared into the source, or the import into a test file.',
      severity: 'error',
      from: { path: '^src/', pathNot: TEST },
      to: { path: TEST },
    },
    {
      name: 'no-unresolvable',
      comment: 'An import that does not resolve to a file: a typo, a moved file, or a .ts path that should end in .js.',
      severity: 'error',
      from: { path: '^src/' },
      to: { couldNotResolve: true, dependencyTypesNot: ['type-only'] },
    },
  ],
  options: {
    doNotFollow: { path: ['node_modules', TEST] },
    includeOnly: '^(src|test|bench)/',
    moduleSystems: ['es6'],
    tsPreCompilationDeps: true,
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['kplane-source', 'import', 'types', 'default'],
      extensions: ['.ts', '.js', '.mjs', '.json'],
    },
    reporterOptions: { text: { highlightFocused: true } },
    cache: false,
  },
};
