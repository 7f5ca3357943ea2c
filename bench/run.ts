// npm run bench [-- --only create,get,... ] [--quick] [--cpu-prof] [--json [out.json]]
//
// kplane and its baselines, side by side. This process is the load generator; every server under
// test runs in a child process (bench/server.ts, bench/sqlite-raw.ts, etcd), so on a 2-core
// machine the server's event loop and the load generator's each get about one core (the OS
// schedules them; nothing is pinned). All traffic is HTTPS with client certificates on 127.0.0.1.
//
// This file parses the command line, starts what scenarios share, runs the selected scenarios
// (bench/scenarios/, one module per scenario or family) and prints the summary.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { cpus, loadavg, totalmem, tmpdir, release } from 'node:os';
import { join } from 'node:path';
import {
  CRUD_POOL,
  FULL,
  QUICK,
  Recorder,
  ServerProc,
  benchDir,
  children,
  credsOf,
  fmt,
  type Config,
  type ScenarioContext,
  type SharedServers,
} from './context.js';
import { RESULTS_SCHEMA, resultsFileName, withAmount, type BenchResults, type Goal, type Row } from './results.js';
import { crudOpsOf } from './scenarios/crud.js';
import { SCENARIOS, SCENARIO_NAMES, type ScenarioName } from './scenarios/index.js';
import { exitWithUsage, UsageError } from './usage.js';

// ---- command line ------------------------------------------------------------------------------

/** `--json` without a file: bench/results/<UTC date and time>-<short commit>.json. */
const DEFAULT_JSON = '';

const USAGE = `usage: npm run bench -- [--quick] [--only ${SCENARIO_NAMES.join(',')}] [--concurrency 1,16,64] [--cpu-prof] [--json [FILE]] [--help]`;

function parseArgs(argv: string[]): { only: Set<ScenarioName>; quick: boolean; cpuProf: boolean; json: string | undefined; concurrency: number[] | undefined } {
  let only = new Set<ScenarioName>(SCENARIO_NAMES);
  let concurrency: number[] | undefined;
  let quick = false;
  let cpuProf = false;
  let json: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const value = (): string => (a.includes('=') ? a.slice(a.indexOf('=') + 1) : (argv[++i] ?? ''));
    if (a === '--quick') quick = true;
    else if (a === '--cpu-prof') cpuProf = true;
    else if (a === '--only' || a.startsWith('--only=')) {
      const names = value().split(',').filter(Boolean);
      for (const n of names)
        if (!(SCENARIO_NAMES as readonly string[]).includes(n)) throw new UsageError(`--only: unknown scenario '${n}'; known: ${SCENARIO_NAMES.join(',')}`);
      if (names.length === 0) throw new UsageError('--only needs scenario names');
      only = new Set(names as ScenarioName[]);
    } else if (a === '--json') json = argv[i + 1] === undefined || argv[i + 1]!.startsWith('--') ? DEFAULT_JSON : argv[++i]!;
    else if (a.startsWith('--json=')) json = value();
    else if (a === '--concurrency' || a.startsWith('--concurrency=')) {
      const given = value();
      concurrency = given.split(',').map(Number);
      if (concurrency.length === 0 || !concurrency.every((c) => Number.isInteger(c) && c > 0))
        throw new UsageError(`--concurrency must be whole numbers above 0, such as 1,16,64, not '${given}'`);
    } else if (a === '--help' || a === '-h') {
      console.log(USAGE);
      process.exit(0);
    } else throw new UsageError(`unknown argument '${a}'`);
  }
  return { only, quick, cpuProf, json, concurrency };
}

// ---- the shared servers ------------------------------------------------------------------------

/**
 * kplane (SQLite) and the bare baseline for the scenarios marked `shared`. Every kplane server of
 * the run shares dataDir, hence one PKI; the bare baseline serves kplane's serving certificate; the
 * load generator uses kplane's admin client certificate. The CRUD rounds' objects are preloaded
 * here, before any of those scenarios runs.
 */
async function startShared(cfg: Config, only: ReadonlySet<string>, dataDir: string, cpuProfDir: string | undefined): Promise<SharedServers> {
  const kplane = await ServerProc.start('kplane-sqlite', { dataDir, storageDir: join(dataDir, 'db'), ...(cpuProfDir ? { cpuProfDir } : {}) });
  const kp = kplane.started.pki!;
  const creds = credsOf(kplane);
  const bare = await ServerProc.start('bare', { dataDir, tls: { key: kp.servingKey, cert: kp.servingCert, ca: kp.ca } });
  const crudOps = crudOpsOf(only);
  for (const ns of ['bench-create', 'bench-open']) await kplane.ensureNamespace(ns);
  for (const srv of [kplane, bare]) {
    if (crudOps.includes('get')) await srv.preload('bench-get', CRUD_POOL, 'pool-');
    if (crudOps.includes('update')) await srv.preload('bench-update', CRUD_POOL, 'pool-');
    if (crudOps.includes('list')) await srv.preload('bench-list', cfg.listPool, 'item-');
  }
  return { kplane, bare, creds };
}

// ---- main --------------------------------------------------------------------------------------

async function main(): Promise<void> {
  let args: ReturnType<typeof parseArgs>;
  try {
    args = parseArgs(process.argv.slice(2));
  } catch (err) {
    if (err instanceof UsageError) exitWithUsage('bench', USAGE, err.message);
    throw err;
  }
  const base = args.quick ? QUICK : FULL;
  const cfg: Config = args.concurrency ? { ...base, concurrency: args.concurrency, etcdConcurrency: args.concurrency } : base;
  const selected = SCENARIOS.filter((s) => s.names.some((n) => args.only.has(n as ScenarioName)));
  // The real components some scenarios drive (etcd, h2load, nghttpd, the registry) go to .tools/.
  if (selected.some((s) => s.tools)) execFileSync('bash', [join(benchDir, '..', 'scripts', 'install-tools.sh')], { stdio: ['ignore', 'inherit', 'inherit'] });
  const cpu = cpus();
  const started = new Date();
  const git = gitState();
  console.log(`kplane bench ${args.quick ? '(quick)' : '(full)'} — ${started.toISOString()}`);
  console.log(`machine: ${cpu.length} × ${cpu[0]?.model ?? '?'}, ${(totalmem() / 2 ** 30).toFixed(1)} GiB RAM, linux ${release()}, node ${process.version}`);
  const loadStart = loadavg();
  console.log(
    `scenarios: ${[...args.only].join(',')}; load average at start ${loadStart.map((l) => l.toFixed(2)).join(' ')} (other work on the machine skews results)`,
  );
  const dataDir = await mkdtemp(join(tmpdir(), 'kplane-bench-'));
  const cpuProfDir = args.cpuProf ? join(benchDir, 'profiles') : undefined;
  if (cpuProfDir) {
    await mkdir(cpuProfDir, { recursive: true });
    console.log(`server CPU profiles → ${cpuProfDir}`);
  }
  const rows: Row[] = [];
  const goals: Goal[] = [];
  const runAll = async (scenarios: typeof SCENARIOS, shared: SharedServers | undefined): Promise<void> => {
    for (const scenario of scenarios) {
      const ctx: ScenarioContext = { cfg, quick: args.quick, only: args.only, dataDir, cpuProfDir, shared, rec: new Recorder() };
      const result = await scenario.run(ctx);
      rows.push(...result.rows);
      goals.push(...result.goals);
    }
  };
  try {
    const onShared = selected.filter((s) => s.shared);
    if (onShared.length) {
      const shared = await startShared(cfg, args.only, dataDir, cpuProfDir);
      try {
        await runAll(onShared, shared);
      } finally {
        await shared.kplane.stop();
        await shared.bare.stop();
      }
    }
    await runAll(
      selected.filter((s) => !s.shared),
      undefined,
    );
  } finally {
    for (const c of children) c.kill('SIGKILL');
    await rm(dataDir, { recursive: true, force: true });
  }
  const elapsedSeconds = Math.round((Date.now() - started.getTime()) / 1000);
  const loadEnd = loadavg();
  printSummary(started, args.quick, rows, goals);
  if (args.json !== undefined) {
    const results: BenchResults = {
      schema: RESULTS_SCHEMA,
      date: started.toISOString(),
      commit: git.commit,
      dirty: git.dirty,
      machine: { cpus: cpu.length, ...(cpu[0] ? { model: cpu[0].model } : {}), memoryBytes: totalmem(), kernel: release(), node: process.version },
      config: args.quick ? 'quick' : 'full',
      scenarios: [...args.only],
      ...(args.concurrency ? { concurrency: args.concurrency } : {}),
      elapsedSeconds,
      loadAverage: { start: loadStart, end: loadEnd },
      rows: rows.map(withAmount),
      goals,
    };
    const out = args.json === DEFAULT_JSON ? join(benchDir, 'results', resultsFileName(started, git.commit)) : args.json;
    await mkdir(join(out, '..'), { recursive: true });
    await writeFile(out, `${JSON.stringify(results, null, 2)}\n`);
    console.log(`\nresults → ${out}`);
  }
}

/** The commit the work tree is on and whether it has changes (bench/results/ aside); nulls without git. */
function gitState(): { commit: string | null; dirty: boolean | null } {
  const repo = join(benchDir, '..');
  if (!existsSync(join(repo, '.git'))) return { commit: null, dirty: null };
  try {
    const commit = execFileSync('git', ['-C', repo, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
    const status = execFileSync('git', ['-C', repo, 'status', '--porcelain', '--', '.', ':(exclude)bench/results', ':(exclude)bench/profiles'], {
      encoding: 'utf8',
    });
    return { commit, dirty: status.trim() !== '' };
  } catch {
    return { commit: null, dirty: null };
  }
}

function printSummary(started: Date, quick: boolean, rows: readonly Row[], goals: readonly Goal[]): void {
  const elapsed = ((Date.now() - started.getTime()) / 1000).toFixed(0);
  console.log(
    `\n## Results (${started.toISOString().slice(0, 10)}, ${cpus().length} CPUs, node ${process.version}${quick ? ', QUICK mode: small counts' : ''}, ${elapsed} s, load average at end ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')})\n`,
  );
  console.log('| scenario | target | operation | conc. | ops/s | p50 ms | p99 ms | value | note |');
  console.log('|---|---|---|---|---:|---:|---:|---|---|');
  for (const r of rows) {
    console.log(
      `| ${r.scenario} | ${r.target} | ${r.op} | ${r.concurrency} | ${fmt(r.opsPerSec)} | ${fmt(r.p50, 2)} | ${fmt(r.p99, 2)} | ${r.value ?? ''} | ${r.note ?? ''}${r.errors ? ` errors=${r.errors}` : ''} |`,
    );
  }
  if (goals.length) {
    console.log('\n| goal | target | measured | |');
    console.log('|---|---|---|---|');
    for (const g of goals) console.log(`| ${g.name} | ${g.target} | ${g.measured} | ${g.met ? 'met' : 'MISSED'} |`);
  }
}

main().catch((e: unknown) => {
  console.error(e);
  for (const c of children) c.kill('SIGKILL');
  process.exit(1);
});
