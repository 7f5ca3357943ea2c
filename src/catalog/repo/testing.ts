// `kplane catalog test`: the test layers of the catalog repository design.
//   sanity            each operator's template renders, names its own package, validates alone,
//                     and its committed catalog.yaml is what the template renders to
//   integration       the whole catalog/ tree loads and validates
//   interoperability  shared APIs, requirements satisfiable per channel kind, and for each
//                     platform, its channel heads install together (./interop.ts)
import { readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import type { DeclarativeConfig } from '../declcfg/types.js';
import { listOperators } from './generate.js';
import { checkPlatform, checkRequirements, checkSharedAPIs, indexBundles, loadInteropFile, type Finding, type SharedAPI } from './interop.js';
import { CATALOG_DIR, CATALOG_FILE, INTEROP_FILE, VENEER_FILE } from './layout.js';
import { PlatformError, filterCatalogForPlatform, loadPlatform, type Platform } from './platform.js';
import { errorText, runCase, type CaseStatus, type TestCase, type TestSuite } from './report.js';
import type { CatalogTools } from './tools.js';

export interface RepoTestOptions {
  root: string;
  tools: CatalogTools;
  /** platform definition files to check */
  platforms: string[];
  progress?: (line: string) => void;
}

function outcome(findings: Finding[]): { status: CaseStatus; message?: string } {
  if (findings.length === 0) return { status: 'pass' };
  const status: CaseStatus = findings.some((f) => f.severity === 'error') ? 'fail' : 'warn';
  return { status, message: findings.map((f) => `${f.severity}: ${f.message}`).join('\n') };
}

async function suite(name: string, build: (add: (c: TestCase) => void) => Promise<void>): Promise<TestSuite> {
  const s: TestSuite = { name, timestamp: new Date().toISOString(), cases: [] };
  await build((c) => s.cases.push(c));
  return s;
}

export async function runRepoTests(o: RepoTestOptions): Promise<TestSuite[]> {
  const say = o.progress ?? ((): void => {});
  const ops = await listOperators(o.root);

  say('sanity: rendering and validating each operator alone');
  const sanity = await suite('sanity', async (add) => {
    if (ops.length === 0)
      add({ name: `${CATALOG_DIR}/ has operators`, status: 'fail', message: `no ${CATALOG_DIR}/<operator>/${VENEER_FILE} found`, durationMs: 0 });
    for (const op of ops) {
      const rel = join(CATALOG_DIR, op, VENEER_FILE);
      let cfg: DeclarativeConfig | undefined;
      add(
        await runCase(`${op}: template renders`, async () => {
          cfg = await o.tools.renderTemplate(await readFile(join(o.root, rel), 'utf8'));
        }),
      );
      if (!cfg) {
        const message = 'template did not render';
        for (const n of ['names its package', 'validates alone', `${CATALOG_FILE} is up to date`])
          add({ name: `${op}: ${n}`, status: 'skip', message, durationMs: 0 });
        continue;
      }
      const rendered = cfg;
      add(
        await runCase(`${op}: names its package`, async () => {
          const names = rendered.packages.map((p) => p.name);
          if (names.length !== 1 || names[0] !== op) {
            return { status: 'fail', message: `${rel} renders package(s) ${names.join(', ') || 'none'}; the directory must be named after its one package` };
          }
          return undefined;
        }),
      );
      add(await runCase(`${op}: validates alone`, async () => o.tools.validate(rendered)));
      add(
        await runCase(`${op}: ${CATALOG_FILE} is up to date`, async () => {
          let committed: string;
          try {
            committed = await readFile(join(o.root, CATALOG_DIR, op, CATALOG_FILE), 'utf8');
          } catch {
            return { status: 'fail', message: `${join(CATALOG_DIR, op, CATALOG_FILE)} is missing: run "kplane catalog generate"` };
          }
          if (committed !== o.tools.writeYAML(rendered)) {
            return { status: 'fail', message: `${join(CATALOG_DIR, op, CATALOG_FILE)} differs from what ${rel} renders: run "kplane catalog generate"` };
          }
          return undefined;
        }),
      );
    }
  });

  say('integration: loading and validating the whole catalog');
  let whole: DeclarativeConfig | undefined;
  const integration = await suite('integration', async (add) => {
    add(
      await runCase(`${CATALOG_DIR}/ loads`, async () => {
        whole = await o.tools.loadFS(join(o.root, CATALOG_DIR));
      }),
    );
    const cfg = whole;
    if (!cfg) {
      add({ name: `${CATALOG_DIR}/ validates`, status: 'skip', message: 'catalog did not load', durationMs: 0 });
      return;
    }
    add(await runCase(`${CATALOG_DIR}/ validates`, async () => o.tools.validate(cfg)));
    add(
      await runCase(`every operator directory is in the catalog`, async () => {
        const pkgs = new Set(cfg.packages.map((p) => p.name));
        const missing = ops.filter((op) => !pkgs.has(op));
        return missing.length > 0
          ? { status: 'fail', message: `not in the loaded catalog: ${missing.join(', ')} (no ${CATALOG_FILE}, or it is ignored)` }
          : undefined;
      }),
    );
  });

  say('interoperability: shared APIs, requirements, platforms');
  const interop = await suite('interoperability', async (add) => {
    const cfg = whole;
    if (!cfg) {
      add({ name: 'interoperability', status: 'skip', message: 'catalog did not load', durationMs: 0 });
      return;
    }
    let declared: SharedAPI[];
    try {
      declared = await loadInteropFile(join(o.root, INTEROP_FILE));
    } catch (err) {
      add({ name: `${INTEROP_FILE} is valid`, status: 'fail', message: errorText(err), durationMs: 0 });
      declared = [];
    }
    const bundles = indexBundles(cfg);
    const t0 = performance.now();
    const shared = checkSharedAPIs(bundles, declared);
    const ms = performance.now() - t0;
    if (shared.shared.size === 0) add({ name: 'no two packages provide the same API', status: 'pass', durationMs: ms });
    for (const [key, pkgs] of shared.shared) {
      const f = shared.findings.get(key) ?? [];
      add({ name: `API ${key} (${pkgs.join(', ')})`, ...outcome(f), ...(f.length === 0 ? { message: 'declared shared' } : {}), durationMs: 0 });
    }
    const t1 = performance.now();
    const reqs = checkRequirements(bundles);
    const ms1 = (performance.now() - t1) / Math.max(1, reqs.size);
    for (const [pkg, f] of reqs) add({ name: `${pkg}: requirements satisfiable in each channel kind`, ...outcome(f), durationMs: ms1 });
    for (const file of o.platforms) {
      const rel = relative(o.root, file) || file;
      let platform: Platform | undefined;
      add(
        await runCase(`platform ${rel}: channel heads install together`, async () => {
          platform = await loadPlatform(file);
          const r = checkPlatform(cfg, bundles, platform, declared);
          const res = outcome(r.findings);
          const installs = r.heads.map((h) => `${h.package} ${h.bundle.bundle.name} (${h.channel})`).join(', ');
          return {
            status: res.status,
            message: [`platform ${platform.name} installs: ${installs || 'nothing'}`, ...(res.message ? [res.message] : [])].join('\n'),
          };
        }),
      );
      const p = platform;
      if (!p) continue;
      // what `kplane catalog render --platform` gives the platform branch must itself be valid
      add(
        await runCase(`platform ${rel}: branch catalog validates`, async () => {
          let branch: DeclarativeConfig;
          try {
            branch = filterCatalogForPlatform(cfg, p);
          } catch (err) {
            if (err instanceof PlatformError) return { status: 'skip', message: `its channels do not resolve: ${err.message}` };
            throw err;
          }
          o.tools.validate(branch);
          return undefined;
        }),
      );
    }
  });
  return [sanity, integration, interop];
}
