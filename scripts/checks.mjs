#!/usr/bin/env node
// npm test's static checks: typecheck, lint, format:check and check:layers (package.json's scripts),
// run side by side rather than one after the other. Each reads the tree and writes nothing, and each
// is one busy process, so on two cores the phase takes about as long as its longest check (lint).
// Each check's output is printed in one piece when it ends; every check runs even when one fails, so
// a run reports all of them. Exit 1 when any failed.
// Usage: node scripts/checks.mjs [script ...]   (default: all four; KPLANE_CHECK_CONCURRENCY, default 2)
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(fileURLToPath(import.meta.url), '..', '..');
// Longest first: with two slots, lint runs alone on one while the others share the second.
const ALL = ['lint', 'typecheck', 'check:layers', 'format:check'];
const scripts = process.argv.length > 2 ? process.argv.slice(2) : ALL;
const concurrency = Math.max(1, Number(process.env.KPLANE_CHECK_CONCURRENCY ?? '2') || 1);
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

/**
 * @param {string} script
 * @returns {Promise<boolean>} whether it passed
 */
function runScript(script) {
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn(npm, ['run', '-s', script], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    /** @type {Buffer[]} */
    const out = [];
    child.stdout.on('data', (/** @type {Buffer} */ d) => out.push(d));
    child.stderr.on('data', (/** @type {Buffer} */ d) => out.push(d));
    child.on('error', (e) => {
      out.push(Buffer.from(`${e.message}\n`));
    });
    child.on('close', (code, signal) => {
      const passed = code === 0;
      const seconds = ((Date.now() - started) / 1000).toFixed(1);
      const text = Buffer.concat(out).toString();
      if (text) process.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
      console.error(`[checks] ${script}: ${passed ? 'ok' : `failed (${signal ?? `exit ${code}`})`} in ${seconds} s`);
      resolve(passed);
    });
  });
}

const queue = [...scripts];
/** @type {string[]} */
const failed = [];
async function worker() {
  for (let s = queue.shift(); s !== undefined; s = queue.shift()) if (!(await runScript(s))) failed.push(s);
}
console.error(`[checks] ${scripts.join(', ')}, ${concurrency} at a time`);
await Promise.all(Array.from({ length: Math.min(concurrency, scripts.length) }, worker));
if (failed.length) {
  console.error(`[checks] failed: ${failed.join(', ')}`);
  process.exit(1);
}
