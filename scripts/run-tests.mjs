#!/usr/bin/env node
// npm test: installs the real components the tests drive (kubectl 1.20 and 1.33, helm, etcd,
// python3-kubernetes) when missing, then runs every *.test.ts under src/, test/ and bench/ with node:test.
// Usage: node scripts/run-tests.mjs [path-substring ...]   (filters the test files)
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(fileURLToPath(import.meta.url), '..', '..');
const filters = process.argv.slice(2);
const USAGE = 'usage: node scripts/run-tests.mjs [path-substring ...]   (npm test -- <path-substring ...>)';
if (filters.includes('--help') || filters.includes('-h')) {
  console.log(USAGE);
  process.exit(0);
}
// Every argument is a part of a test file's path; a flag here is a mistake (a node --test option?).
const flag = filters.find((f) => f.startsWith('-'));
if (flag !== undefined) {
  console.error(`run-tests: unknown option '${flag}' (arguments filter the test files by path)\n${USAGE}`);
  process.exit(2);
}

/**
 * @param {string} dir
 * @param {string[]} out
 * @returns {string[]}
 */
function find(dir, out) {
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name.startsWith('.')) continue;
    const p = join(dir, name);
    if (statSync(p).isDirectory()) find(p, out);
    else if (name.endsWith('.test.ts')) out.push(relative(root, p));
  }
  return out;
}

const files = [...find(join(root, 'src'), []), ...find(join(root, 'test'), []), ...find(join(root, 'bench'), [])]
  .filter((f) => filters.length === 0 || filters.some((x) => f.includes(x)))
  .sort();
// Longest first, by the durations a full run recorded (scripts/test-durations-reporter.mjs): with N
// parallel slots, a long file started last would run alone at the end. A file not in the record
// (a new one) counts as long, since new files are mostly end-to-end tests.
const durationsFile = join(root, 'scripts', 'test-durations.json');
/** @type {Record<string, number>} */
const recorded = {};
if (existsSync(durationsFile)) Object.assign(recorded, /** @type {unknown} */ (JSON.parse(readFileSync(durationsFile, 'utf8'))));
const UNKNOWN_SECONDS = 30;
files.sort((a, b) => (recorded[b] ?? UNKNOWN_SECONDS) - (recorded[a] ?? UNKNOWN_SECONDS));
if (files.length === 0) {
  console.error('no test files matched');
  process.exit(1);
}
console.error(`[run-tests] installing tools if missing`);
execFileSync('bash', [join(root, 'scripts', 'install-tools.sh')], { stdio: ['ignore', 'inherit', 'inherit'] });
console.error(`[run-tests] ${files.length} test files`);
const concurrency = process.env.KPLANE_TEST_CONCURRENCY ?? '2';
// The tests run the TypeScript source, with no build: the `kplane-source` export condition makes
// `import 'kplane'` (the examples) and bin/kplane.js resolve to src/. Set in NODE_OPTIONS, so that
// every node process a test starts (the CLI, the examples, worker threads) runs from source too.
const nodeOptions = [process.env.NODE_OPTIONS, '--conditions=kplane-source'].filter(Boolean).join(' ');
const r = spawnSync(
  process.execPath,
  [
    '--import',
    'tsx',
    '--test',
    `--test-concurrency=${concurrency}`,
    '--test-reporter=spec',
    '--test-reporter-destination=stdout',
    `--test-reporter=${join(root, 'scripts', 'test-durations-reporter.mjs')}`,
    `--test-reporter-destination=${join(root, '.test-durations.json')}`,
    ...files,
  ],
  {
    cwd: root,
    stdio: 'inherit',
    env: { ...process.env, NODE_OPTIONS: nodeOptions },
  },
);
process.exit(r.status ?? 1);
