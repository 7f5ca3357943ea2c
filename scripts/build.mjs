#!/usr/bin/env node
// npm run build: dist/ from src/, from scratch (a file moved or deleted in src/ leaves nothing
// behind), so `npm pack` always packs what src/ holds now.
//   1. tsc -p tsconfig.build.json: JavaScript, .d.ts, source maps and declaration maps;
//   2. the files the code reads from disk next to itself at run time (new URL('./x', import.meta.url)):
//      every file under src/ that is not TypeScript, not documentation and not under testdata/
//      (today the .proto files and the SQLite writer's plain-JS bootstrap, writer-entry.mjs).
// Globs rather than a list, so files moved inside src/ need no edit here.
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const src = join(root, 'src');
const dist = join(root, 'dist');

function isAsset(name) {
  return !name.endsWith('.ts') && !name.endsWith('.md') && !name.startsWith('.');
}

function assets(dir, out) {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) {
      if (e.name !== 'testdata' && e.name !== 'node_modules') assets(p, out);
    } else if (e.isFile() && isAsset(e.name)) out.push(p);
  }
  return out;
}

const started = Date.now();
rmSync(dist, { recursive: true, force: true });
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
execFileSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json')], { cwd: root, stdio: 'inherit' });
const copied = assets(src, []);
for (const from of copied) {
  const to = join(dist, relative(src, from));
  mkdirSync(dirname(to), { recursive: true });
  copyFileSync(from, to);
}
console.error(`[build] dist/ from src/ in ${((Date.now() - started) / 1000).toFixed(1)} s; ${copied.length} assets copied: ${copied.map((p) => relative(src, p)).join(', ')}`);
