// `kplane catalog test interop CATALOG`: argument parsing and reports around
// controlplane/catalog-interop.ts (a throw-away kplane installs the whole catalog).
import { mkdir, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { countSuite, junitXML, suiteText } from '../catalog/repo/report.js';
import { runInteropInstall } from '../controlplane/catalog-interop.js';
import { parseGoDuration } from '../golang/time.js';

export const usage = `Usage: kplane catalog test interop CATALOG [flags]

Installs every package of the file-based catalog directory CATALOG together into a throw-away
kplane (in this process, on 127.0.0.1, nothing kept), through OLM's objects, and checks:
  - each default channel's upgrade edges apply, from the channel's tail to its head
  - every package's default channel head resolves and installs with the others (InstallPlan
    Complete, RBAC applied, CSV Succeeded)
  - no two operators own the same CRD or API; every required CRD is owned by one of them
  - every alm-examples custom resource is accepted by the server and reads back unchanged
Exit code: 0 when no check failed, 1 otherwise.

Flags:
      --timeout DURATION   how long one wait may take (the catalog, a resolution, an install,
                           an upgrade) (default 2m)
      --package NAME       check only this package (and what it depends on); repeatable
                           (default: every package of the catalog)
      --skip-upgrades      do not check the upgrade edges
      --junit FILE         write the report as JUnit XML
      --report-dir DIR     write interoperability-install.txt and .xml there
`;

export async function catalogTestInterop(argv: string[]): Promise<number> {
  const fail = (msg: string, code = 1): number => {
    process.stderr.write(`kplane catalog test interop: ${msg}\n`);
    return code;
  };
  if (argv.includes('-h') || argv.includes('--help')) {
    process.stdout.write(usage);
    return 0;
  }
  let values: { timeout?: string; 'skip-upgrades'?: boolean; junit?: string; 'report-dir'?: string; package?: string[] };
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        timeout: { type: 'string' },
        'skip-upgrades': { type: 'boolean' },
        junit: { type: 'string' },
        'report-dir': { type: 'string' },
        package: { type: 'string', multiple: true },
      },
    }));
  } catch (err) {
    return fail((err as Error).message, 2);
  }
  if (positionals.length !== 1) return fail(`accepts 1 arg(s), received ${positionals.length}`, 2);
  const catalogDir = positionals[0]!;
  let timeoutMs = 120_000;
  if (values.timeout !== undefined) {
    const d = parseGoDuration(values.timeout);
    if ('error' in d) return fail(`invalid argument ${JSON.stringify(values.timeout)} for "--timeout" flag: ${d.error}`, 2);
    if (d.ns <= 0n) return fail(`invalid argument ${JSON.stringify(values.timeout)} for "--timeout" flag: must be positive`, 2);
    timeoutMs = Number(d.ns / 1_000_000n);
  }
  try {
    if (!(await stat(catalogDir)).isDirectory()) return fail(`${catalogDir}: not a directory`);
  } catch {
    return fail(`${catalogDir}: no such directory`);
  }
  try {
    const suite = await runInteropInstall({
      catalogDir,
      timeoutMs,
      upgrades: values['skip-upgrades'] !== true,
      ...(values.package ? { packages: values.package } : {}),
      progress: (l) => process.stderr.write(`${l}\n`),
    });
    process.stdout.write(suiteText(suite) + '\n');
    if (values.junit) {
      await mkdir(dirname(values.junit), { recursive: true });
      await writeFile(values.junit, junitXML([suite]));
    }
    if (values['report-dir']) {
      await mkdir(values['report-dir'], { recursive: true });
      await writeFile(join(values['report-dir'], `${suite.name}.txt`), suiteText(suite));
      await writeFile(join(values['report-dir'], `${suite.name}.xml`), junitXML([suite]));
    }
    const c = countSuite(suite);
    process.stdout.write(`${c.failed === 0 ? 'PASS' : 'FAIL'}: ${c.failed} failed, ${c.warnings} warnings\n`);
    return c.failed === 0 ? 0 : 1;
  } catch (err) {
    return fail((err as Error).message);
  }
}
