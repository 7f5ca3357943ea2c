#!/usr/bin/env node
// npm test's static checks: typecheck, lint, format:check and check:layers (package.json's scripts),
// run side by side rather than one after the other. Each reads the tree and writes nothing, and each
// is one busy process, so on two cores the phase takes about as long as its longest check (lint).
// Each check's output is printed in one piece when it ends; every check runs even when one fails, so
// a run reports all of them. Exit 1 when any failed.
//
// --then FILE (npm test: scripts/run-tests.mjs) runs `node FILE` in the first slot left with no check
// to start, while the last checks finish: the test phase's tool installs and first files use the core
// lint would leave idle. It is not started when a check has failed by then; its exit code counts.
// Usage: node scripts/checks.mjs [script ...] [--then FILE [arg ...]]
//        (default: all four checks; KPLANE_CHECK_CONCURRENCY, default 2)
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(fileURLToPath(import.meta.url), '..', '..');
// Longest first: with two slots, lint runs alone on one while the others share the second.
const ALL = ['lint', 'typecheck', 'check:layers', 'format:check'];
const args = process.argv.slice(2);
const USAGE = 'usage: node scripts/checks.mjs [script ...] [--then FILE [arg ...]]';
const thenAt = args.indexOf('--then');
const own = thenAt >= 0 ? args.slice(0, thenAt) : args;
if (own.includes('--help') || own.includes('-h')) {
  console.log(USAGE);
  process.exit(0);
}
const flag = own.find((a) => a.startsWith('-'));
if (flag !== undefined) {
  console.error(`checks: unknown option '${flag}'\n${USAGE}`);
  process.exit(2);
}
// What follows --then FILE is FILE's (`npm test -- storage` filters the test files, as before).
const [then, ...thenArgs] = thenAt >= 0 ? args.splice(thenAt).slice(1) : [];
if (thenAt >= 0 && !then) {
  console.error('checks: --then needs a script file');
  process.exit(2);
}
const scripts = args.length ? args : ALL;
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

/**
 * `node file ...args`, its output passed through as it comes.
 * @param {string} file
 * @param {string[]} fileArgs
 * @returns {Promise<boolean>} whether it exited 0
 */
function runThen(file, fileArgs) {
  console.error(`[checks] starting ${file} beside the checks still running`);
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [file, ...fileArgs], { cwd: root, stdio: 'inherit' });
    child.on('error', (e) => {
      console.error(`[checks] ${file}: ${e.message}`);
      resolve(false);
    });
    child.on('close', (code) => resolve(code === 0));
  });
}

const queue = [...scripts];
/** @type {string[]} */
const failed = [];
/** @type {Promise<boolean> | undefined} */
let followUp;
async function worker() {
  for (let s = queue.shift(); s !== undefined; s = queue.shift()) if (!(await runScript(s))) failed.push(s);
  // The first worker with nothing left to start runs the follow-up, unless a check already failed.
  if (then && !followUp && !failed.length) followUp = runThen(then, thenArgs);
}
console.error(`[checks] ${scripts.join(', ')}, ${concurrency} at a time${then ? `, then ${then}` : ''}`);
await Promise.all(Array.from({ length: concurrency }, worker));
if (failed.length) console.error(`[checks] failed: ${failed.join(', ')}`);
const followUpPassed = followUp ? await followUp : !then;
if (then && !followUp) console.error(`[checks] ${then} not run: a check failed first`);
if (failed.length || !followUpPassed) process.exit(1);
