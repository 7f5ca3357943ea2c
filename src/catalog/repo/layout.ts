// The layout of a platform catalog repository and the files `kplane catalog init` writes.
//
//   <root>/
//     catalog/                 the file-based catalog root (what the catalog image serves)
//       .indexignore           keeps README.md, OWNERS and veneer.yaml out of the catalog
//       README.md
//       <operator>/veneer.yaml the operator's semver template (source)
//       <operator>/OWNERS      who reviews changes to the operator
//       <operator>/catalog.yaml rendered from veneer.yaml by `kplane catalog generate`
//     platforms/<name>.yaml    platform definitions (./platform.ts)
//     interop.yaml             declared shared APIs (./interop.ts)
//     catalog.Dockerfile       as `opm generate dockerfile catalog`
//     .github/workflows/catalog.yaml
import { mkdir, writeFile, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { DEFAULT_OPM_IMAGE, generateDockerfile } from './dockerfile.js';

export const CATALOG_DIR = 'catalog';
export const PLATFORMS_DIR = 'platforms';
export const VENEER_FILE = 'veneer.yaml';
export const CATALOG_FILE = 'catalog.yaml';
export const OWNERS_FILE = 'OWNERS';
export const INTEROP_FILE = 'interop.yaml';
/** generate's record of what it rendered (not part of the catalog; git-ignored) */
export const STATE_FILE = join('.kplane', 'generate-state.json');

/**
 * opm reads every file under the catalog root that .indexignore does not exclude, and fails on one
 * that is not a YAML or JSON stream of blobs with a schema. The patterns are gitignore-style (as
 * go-git matches them: a pattern without a slash matches any path element, the last matching
 * pattern wins), so the exclusions come after the "!" re-inclusions: a "!*.yaml" placed after
 * "veneer.yaml" would bring every veneer.yaml back into the catalog.
 */
export const INDEXIGNORE = `# Files under catalog/ that are not part of the file-based catalog.
# gitignore-style patterns; the LAST matching pattern wins.
#
# Only YAML and JSON files are catalog content...
*
!*.yaml
!*.yml
!*.json
# ...and of those, the templates are not: keep these lines after "!*.yaml",
# or veneer.yaml comes back into the catalog.
veneer.yaml
README.md
OWNERS
`;

export const CATALOG_README = `# Catalog

One directory per operator:

- \`veneer.yaml\`: the operator's semver template (\`Schema: olm.semver\`), the source you edit.
  List bundle images under \`Candidate\`, \`Fast\` and \`Stable\`.
- \`catalog.yaml\`: rendered from \`veneer.yaml\` by \`kplane catalog generate\`. Do not edit it by
  hand; commit it with the template change.
- \`OWNERS\`: who reviews changes to this operator.

\`.indexignore\` keeps \`veneer.yaml\`, \`README.md\` and \`OWNERS\` out of the catalog image.

Typical change:

    kplane catalog add-bundle my-operator --image registry.example.com/my-operator-bundle:v1.2.0 --channel fast
    kplane catalog generate
    kplane catalog test
`;

// A file, so that git keeps the folder: a clone of the repository has platforms/ to write into.
export const PLATFORMS_README = `# Platforms

One file per platform, \`<name>.yaml\`: the operators it ships and the channel of each.
\`kplane catalog test\` checks every \`platforms/*.yaml\`; \`kplane catalog render catalog --platform
platforms/<name>.yaml\` gives the platform branch's catalog.

    schema: kplane.platform
    name: my-platform
    description: what it is for
    operators:
    - package: my-operator
      channel: stable          # a channel name (stable-v2), or a kind alone: candidate, fast, stable
`;

export const GITIGNORE = `/.kplane/
/reports/
`;

export const CI_WORKFLOW = `# Renders, validates and tests the catalog on every change; builds the catalog image on main.
name: catalog
on:
  pull_request:
  push:
    branches: [main]
env:
  # Where kplane comes from: anything \`npm install\` takes (a git URL or a tarball of a kplane checkout).
  KPLANE_PACKAGE: github:your-org/kplane
jobs:
  catalog:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - uses: actions/setup-node@v4
        with:
          node-version: 20
      - name: Install kplane
        run: npm install --global "$KPLANE_PACKAGE"
      - name: Render every veneer.yaml into its catalog.yaml
        run: kplane catalog generate
      - name: Rendered catalogs are committed
        run: git diff --exit-code -- catalog/
      - name: Validate
        run: kplane catalog validate catalog
      - name: Sanity, integration and interoperability tests
        run: kplane catalog test --junit reports/junit.xml --report-dir reports
      - name: Publish test reports
        if: always()
        uses: actions/upload-artifact@v4
        with:
          name: catalog-test-reports
          path: reports/
      - name: Build the catalog image
        if: github.event_name == 'push'
        run: docker build -f catalog.Dockerfile -t "\${{ vars.CATALOG_IMAGE || 'catalog' }}:\${{ github.sha }}" .
`;

export interface InitOptions {
  baseImage?: string;
  builderImage?: string;
}

export interface InitResult {
  created: string[];
  skipped: string[];
}

/** Lays out a catalog repository in root; existing files are left as they are (reported as skipped). */
export async function initRepo(root: string, opts: InitOptions = {}): Promise<InitResult> {
  const files: [string, string][] = [
    [join(CATALOG_DIR, '.indexignore'), INDEXIGNORE],
    [join(CATALOG_DIR, 'README.md'), CATALOG_README],
    [join('.github', 'workflows', 'catalog.yaml'), CI_WORKFLOW],
    [
      `${CATALOG_DIR}.Dockerfile`,
      generateDockerfile({ baseImage: opts.baseImage ?? DEFAULT_OPM_IMAGE, builderImage: opts.builderImage ?? DEFAULT_OPM_IMAGE, indexDir: CATALOG_DIR }),
    ],
    [join(PLATFORMS_DIR, 'README.md'), PLATFORMS_README],
    ['.gitignore', GITIGNORE],
  ];
  const result: InitResult = { created: [], skipped: [] };
  for (const [rel, content] of files) {
    const path = join(root, rel);
    if (await exists(path)) {
      result.skipped.push(rel);
      continue;
    }
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, content, { flag: 'wx' });
    result.created.push(rel);
  }
  return result;
}

export async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw err;
  }
}

/** The repository root for a command run in cwd: the given dir, else cwd; it must hold catalog/. */
export async function findRepoRoot(dir: string | undefined): Promise<string> {
  const root = dir ?? process.cwd();
  if (!(await exists(join(root, CATALOG_DIR)))) {
    throw new Error(`${join(root, CATALOG_DIR)}: no catalog directory (run "kplane catalog init" first)`);
  }
  return root;
}
