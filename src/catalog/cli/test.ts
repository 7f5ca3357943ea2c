// kplane catalog test: the sanity, integration and interoperability layers of a catalog
// repository (../repo/testing.ts), with a report per layer in text and JUnit XML.
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { registryFlagOptions, registryFlagsUsage } from '../oci/flags.js';
import type { TestSuite } from '../repo/report.js';
import { CATALOG_DIR, PLATFORMS_DIR, exists, findRepoRoot } from '../repo/layout.js';
import { countSuite, junitXML, suiteText } from '../repo/report.js';
import { runRepoTests } from '../repo/testing.js';
import { atMostOneArg, failer, parseCommandArgs, toolFlagOptions, toolsFromFlags } from './common.js';

/**
 * What the layers above the catalog pass in: `--install` runs the live interoperability layer,
 * which needs a control plane (src/controlplane/catalog-interop.ts) that this layer may not import.
 */
export interface CatalogCliHooks {
  readonly installLayer?: (catalogDir: string, progress: (line: string) => void) => Promise<TestSuite>;
}

export const usage = `Usage: kplane catalog test [ROOT] [flags]

Run the test layers of the catalog repository ROOT (default: the current directory):
  sanity            each catalog/<operator>/veneer.yaml renders, names its own package, validates
                    alone, and its catalog.yaml is what it renders to
  integration       the whole catalog/ loads and validates
  interoperability  no two packages provide the same group/kind unless declared (interop.yaml);
                    every olm.package.required and olm.gvk.required is satisfiable inside the
                    catalog in the same channel kind; each platform's channel heads install together
Findings about candidate channels only are warnings and do not fail the run.

  --install         also the live layer "interoperability-install": the whole catalog/ installed
                    together into a throw-away kplane (as kplane catalog test interop catalog/)

  kplane catalog test interop CATALOG   installs a built catalog's operators together into a
                                        throw-away kplane and checks them against each other
                                        (kplane catalog test interop --help)
Exit code: 0 when no test failed, 1 otherwise.

Flags:
      --platform FILE      a platform definition to check; repeatable
                           (default: every platforms/*.yaml of the repository)
      --install            run the live interoperability layer too (starts a throw-away kplane)
      --junit FILE         write all layers as JUnit XML
      --report-dir DIR     write <layer>.txt and <layer>.xml for each layer
      --legacy             render templates with the opm v1.23-v1.26 algorithm
      --mirror FROM=TO     pull images under FROM from TO instead; repeatable

${registryFlagsUsage
  .split('\n')
  .filter((l) => !l.trimStart().startsWith('--platform'))
  .join('\n')}`;

export async function run(argv: string[], hooks: CatalogCliHooks = {}): Promise<number> {
  const fail = failer('test');
  const parsed = parseCommandArgs(
    argv,
    {
      ...registryFlagOptions,
      platform: { type: 'string', multiple: true },
      junit: { type: 'string' },
      'report-dir': { type: 'string' },
      install: { type: 'boolean' },
      ...toolFlagOptions,
    },
    fail,
  );
  if (typeof parsed === 'number') return parsed;
  const arg = atMostOneArg(parsed.positionals, fail);
  if (typeof arg === 'number') return arg;
  const v = parsed.values;
  try {
    const root = await findRepoRoot(arg);
    let platforms = v.platform ?? [];
    if (v.platform === undefined && (await exists(join(root, PLATFORMS_DIR)))) {
      platforms = (await readdir(join(root, PLATFORMS_DIR)))
        .filter((f) => f.endsWith('.yaml') || f.endsWith('.yml'))
        .sort()
        .map((f) => join(root, PLATFORMS_DIR, f));
    }
    // --platform is both ours (platform files) and the registry flags' (OS/ARCH); ours wins here.
    const { platform: _ignored, ...registryValues } = v;
    const tools = toolsFromFlags(v, registryValues);
    const progress = (l: string): boolean => process.stderr.write(`${l}\n`);
    if (v.install && !hooks.installLayer) return fail('--install needs the kplane binary (the live layer starts a control plane)');
    const suites = await runRepoTests({ root, tools, platforms, progress });
    if (v.install && hooks.installLayer) {
      progress('interoperability-install: the whole catalog installed together into a throw-away kplane');
      suites.push(await hooks.installLayer(join(root, CATALOG_DIR), progress));
    }
    for (const s of suites) process.stdout.write(suiteText(s) + '\n');
    if (v.junit) {
      await mkdir(dirname(v.junit), { recursive: true });
      await writeFile(v.junit, junitXML(suites));
    }
    if (v['report-dir']) {
      await mkdir(v['report-dir'], { recursive: true });
      for (const s of suites) {
        await writeFile(join(v['report-dir'], `${s.name}.txt`), suiteText(s));
        await writeFile(join(v['report-dir'], `${s.name}.xml`), junitXML([s]));
      }
    }
    const counts = suites.map(countSuite);
    const failed = counts.reduce((a, c) => a + c.failed, 0);
    const warnings = counts.reduce((a, c) => a + c.warnings, 0);
    process.stdout.write(`${failed === 0 ? 'PASS' : 'FAIL'}: ${failed} failed, ${warnings} warnings\n`);
    return failed === 0 ? 0 : 1;
  } catch (err) {
    return fail((err as Error).message);
  }
}
