// `kplane catalog generate`: renders each catalog/<operator>/veneer.yaml into catalog.yaml when the
// template (or the rendered file) changed since the last run, then validates the whole catalog.
//
// What was rendered is recorded in .kplane/generate-state.json (per operator: a hash of the
// template and of the catalog.yaml written from it). An operator is rendered again when its
// template changed, its catalog.yaml is missing or was edited, or the render mode changed. A
// catalog.yaml is replaced whole (write to a temporary file, then rename), and only after its
// template rendered without error: a failed render never leaves a partial or stale-mixed file.
import { createHash } from 'node:crypto';
import { mkdir, readFile, readdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { writeFileAtomic } from './atomic.js';
import { CATALOG_DIR, CATALOG_FILE, STATE_FILE, VENEER_FILE, exists } from './layout.js';
import type { CatalogTools } from './tools.js';

export interface GenerateOptions {
  root: string;
  tools: CatalogTools;
  /** render every template, changed or not */
  force?: boolean;
  /** only these operators (directory names) */
  operators?: string[];
  /** recorded with the hashes: changing the mode (e.g. legacy) renders everything again */
  mode?: string;
  progress?: (line: string) => void;
}

export interface OperatorOutcome {
  operator: string;
  status: 'rendered' | 'unchanged' | 'failed';
  error?: string;
  bundles?: number;
  channels?: number;
}

export interface GenerateResult {
  operators: OperatorOutcome[];
  /** the whole catalog's validation error (opm's tree), if any */
  validationError?: string;
  ok: boolean;
}

interface State {
  version: 1;
  operators: Record<string, { veneer: string; catalog: string; mode: string }>;
}

const sha256 = (s: string): string => createHash('sha256').update(s).digest('hex');

async function readState(root: string): Promise<State> {
  try {
    const s = JSON.parse(await readFile(join(root, STATE_FILE), 'utf8')) as State;
    if (s.version === 1 && s.operators && typeof s.operators === 'object') return s;
  } catch {
    // missing or unreadable: everything is rendered again, which is always correct
  }
  return { version: 1, operators: {} };
}

async function readIfExists(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

/** Operator directories under catalog/ that hold a veneer.yaml, sorted. */
export async function listOperators(root: string): Promise<string[]> {
  const dir = join(root, CATALOG_DIR);
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true })) {
    if (e.isDirectory() && (await exists(join(dir, e.name, VENEER_FILE)))) out.push(e.name);
  }
  return out.sort();
}

export async function generate(o: GenerateOptions): Promise<GenerateResult> {
  const say = o.progress ?? ((): void => {});
  const mode = o.mode ?? 'default';
  const all = await listOperators(o.root);
  for (const op of o.operators ?? []) {
    if (!all.includes(op)) throw new Error(`operator "${op}" not found: no ${join(CATALOG_DIR, op, VENEER_FILE)}`);
  }
  const ops = o.operators ? all.filter((x) => o.operators!.includes(x)) : all;
  const state = await readState(o.root);
  const outcomes: OperatorOutcome[] = [];
  let i = 0;
  for (const op of ops) {
    i++;
    const tag = `[${i}/${ops.length}] ${op}`;
    const veneerPath = join(o.root, CATALOG_DIR, op, VENEER_FILE);
    const catalogPath = join(o.root, CATALOG_DIR, op, CATALOG_FILE);
    const veneer = await readFile(veneerPath, 'utf8');
    const current = await readIfExists(catalogPath);
    const prev = state.operators[op];
    if (!o.force && prev && prev.mode === mode && prev.veneer === sha256(veneer) && current !== undefined && prev.catalog === sha256(current)) {
      say(`${tag}: unchanged`);
      outcomes.push({ operator: op, status: 'unchanged' });
      continue;
    }
    say(`${tag}: rendering ${join(CATALOG_DIR, op, VENEER_FILE)}`);
    try {
      const cfg = await o.tools.renderTemplate(veneer);
      const text = o.tools.writeYAML(cfg);
      if (text !== current) await writeFileAtomic(catalogPath, text);
      state.operators[op] = { veneer: sha256(veneer), catalog: sha256(text), mode };
      const verb = text === current ? 'rendered (catalog.yaml already up to date)' : `wrote ${join(CATALOG_DIR, op, CATALOG_FILE)}`;
      say(`${tag}: ${verb}: ${cfg.bundles.length} bundles, ${cfg.channels.length} channels`);
      outcomes.push({ operator: op, status: 'rendered', bundles: cfg.bundles.length, channels: cfg.channels.length });
    } catch (err) {
      const msg = (err as Error).message;
      say(`${tag}: FAILED`);
      // The state entry (if any) stays: catalog.yaml was not touched, so it still describes the
      // file and the template that made it; a changed template shows by its hash next time.
      outcomes.push({ operator: op, status: 'failed', error: msg });
    }
  }
  await mkdir(dirname(join(o.root, STATE_FILE)), { recursive: true });
  await writeFileAtomic(join(o.root, STATE_FILE), JSON.stringify(state, null, 2) + '\n');

  const result: GenerateResult = { operators: outcomes, ok: outcomes.every((x) => x.status !== 'failed') };
  say(`validating ${CATALOG_DIR}/`);
  try {
    const cfg = await o.tools.loadFS(join(o.root, CATALOG_DIR));
    o.tools.validate(cfg);
    say(`${CATALOG_DIR}/ is valid: ${cfg.packages.length} packages, ${cfg.channels.length} channels, ${cfg.bundles.length} bundles`);
  } catch (err) {
    result.validationError = (err as Error).message;
    result.ok = false;
  }
  return result;
}
