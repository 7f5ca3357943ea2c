#!/usr/bin/env node
// npm run build: dist/ from src/, from scratch (a file moved or deleted in src/ leaves nothing
// behind), so `npm pack` always packs what src/ holds now.
//   1. tsc -p tsconfig.build.json: JavaScript, .d.ts, source maps and declaration maps;
//   2. the files the code reads from disk next to itself at run time (new URL('./x', import.meta.url)):
//      every file under src/ that is not TypeScript, not documentation and not under testdata/
//      (today the .proto files and the worker threads' plain-JS bootstrap, runtime/thread-entry.mjs).
// Globs rather than a list, so files moved inside src/ need no edit here.
//
// --if-stale (npm start's prestart): build only when dist/ is missing or older than a file it is
// built from (src/ but tests and testdata, the tsconfigs, this script), so the first `npm start`
// after `npm install` builds, and later ones start at once unless the source changed.
import { spawn } from 'node:child_process';
import { copyFileSync, mkdirSync, readdirSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const src = join(root, 'src');
const dist = join(root, 'dist');

/** @param {string} name */
function isAsset(name) {
  return !name.endsWith('.ts') && !name.endsWith('.md') && !name.startsWith('.');
}

/**
 * @param {string} dir
 * @param {string[]} out
 * @returns {string[]}
 */
function assets(dir, out) {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) {
      if (e.name !== 'testdata' && e.name !== 'node_modules') assets(p, out);
    } else if (e.isFile() && isAsset(e.name)) out.push(p);
  }
  return out;
}

/** The newest modification time among the files dist/ is built from. */
function newestInput() {
  let newest = 0;
  /** @param {string} dir */
  const walk = (dir) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory()) {
        if (e.name !== 'testdata' && e.name !== 'node_modules') walk(p);
      } else if (e.isFile() && !e.name.endsWith('.test.ts') && !e.name.endsWith('.test-support.ts')) newest = Math.max(newest, statSync(p).mtimeMs);
    }
  };
  walk(src);
  for (const f of ['tsconfig.json', 'tsconfig.build.json', 'scripts/build.mjs']) newest = Math.max(newest, statSync(join(root, f)).mtimeMs);
  return newest;
}

// Written last, so an interrupted build is never taken for a finished one, and dated when the build
// started, so a file saved during the build makes the next --if-stale build again. Not packed.
const stamp = join(dist, '.build-stamp');
const USAGE = 'usage: node scripts/build.mjs [--if-stale]   (npm run build)';
for (const a of process.argv.slice(2)) {
  if (a === '--help' || a === '-h') {
    console.log(USAGE);
    process.exit(0);
  }
  if (a !== '--if-stale') {
    console.error(`build: unknown argument '${a}'\n${USAGE}`);
    process.exit(2);
  }
}
if (process.argv.includes('--if-stale')) {
  let built = 0;
  try {
    built = statSync(stamp).mtimeMs;
  } catch {
    // not built yet: stale
  }
  if (built >= newestInput()) process.exit(0);
  console.error(built ? '[build] src/ changed since dist/ was built: building it again' : '[build] dist/ is not built yet: building it (once)');
}

const started = Date.now();
rmSync(dist, { recursive: true, force: true });
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
// tsc prints nothing until it is done (1–3 minutes on 2 cores), so say that it is still working.
console.error('[build] compiling src/ with tsc (1–3 minutes on a 2-core machine) …');
const heartbeat = setInterval(() => console.error(`[build] still compiling: ${Math.round((Date.now() - started) / 1000)} s`), 15_000);
/** @type {number} */
const code = await new Promise((resolveExit) => {
  const child = spawn(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json')], { cwd: root, stdio: 'inherit' });
  child.on('error', (/** @type {Error} */ err) => {
    console.error(`[build] could not run tsc: ${err.message}`);
    resolveExit(1);
  });
  child.on('exit', (c, signal) => resolveExit(signal ? 1 : (c ?? 1)));
});
clearInterval(heartbeat);
if (code !== 0) {
  console.error(`[build] tsc failed (exit ${code}); dist/ is incomplete: fix the errors above and run npm run build`);
  process.exit(code);
}
const copied = assets(src, []);
for (const from of copied) {
  const to = join(dist, relative(src, from));
  mkdirSync(dirname(to), { recursive: true });
  copyFileSync(from, to);
}
writeFileSync(stamp, `${new Date(started).toISOString()}\n`);
utimesSync(stamp, started / 1000, started / 1000);
console.error(
  `[build] dist/ from src/ in ${((Date.now() - started) / 1000).toFixed(1)} s; ${copied.length} assets copied: ${copied.map((p) => relative(src, p)).join(', ')}`,
);
