// The repository's command-line scripts answer --help with their usage (exit 0) and a flag they do
// not know with one line naming it, then the usage (exit 2), instead of a stack trace: `npm run soak
// -- --help` crashed with ERR_PARSE_ARGS_UNKNOWN_OPTION. All are started at once; none gets far
// enough to do any work.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { repoRoot } from '../support/tools.js';

interface Ran {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

function run(args: readonly string[]): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const env = { ...process.env, NODE_OPTIONS: '--conditions=kplane-source' };
    const child = spawn(process.execPath, args, { cwd: repoRoot, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

const tsx = (file: string, ...args: string[]): string[] => ['--import', 'tsx', join(repoRoot, file), ...args];
const mjs = (file: string, ...args: string[]): string[] => [join(repoRoot, file), ...args];

/** [name printed before the message, command line without the flag, usage's first words] */
const SCRIPTS: readonly [string, (...args: string[]) => string[], string][] = [
  ['soak', (...a) => tsx('scripts/soak.ts', ...a), 'usage: npm run soak --'],
  ['bench', (...a) => tsx('bench/run.ts', ...a), 'usage: npm run bench --'],
  ['bench:compare', (...a) => tsx('bench/compare.ts', ...a), 'usage: npm run bench:compare --'],
  ['plot', (...a) => tsx('bench/plot.ts', ...a), 'usage: node --import tsx bench/plot.ts'],
  ['build', (...a) => mjs('scripts/build.mjs', ...a), 'usage: node scripts/build.mjs'],
  ['checks', (...a) => mjs('scripts/checks.mjs', ...a), 'usage: node scripts/checks.mjs'],
  ['run-tests', (...a) => mjs('scripts/run-tests.mjs', ...a), 'usage: node scripts/run-tests.mjs'],
];

describe('scripts and bench entry points: --help and unknown flags', () => {
  it('an unknown flag is named in one line before the usage, exit 2; soak --help prints the usage, exit 0', async () => {
    // One process each, all at once: tsx's start-up is most of the time.
    const [help, badValue, ...results] = await Promise.all([
      run(tsx('scripts/soak.ts', '--help')),
      run(tsx('scripts/soak.ts', '--minutes', 'soon')),
      ...SCRIPTS.map(([, cmd]) => run(cmd('--no-such-flag'))),
    ]);
    assert.equal(help.code, 0, help.stderr);
    assert.ok(help.stdout.startsWith('usage: npm run soak --'), help.stdout);
    assert.equal(badValue.code, 2);
    assert.match(badValue.stderr, /^soak: --minutes must be a positive number, not 'soon'\nusage: npm run soak --/);
    SCRIPTS.forEach(([name, , usage], i) => {
      const bad = results[i]!;
      assert.equal(bad.code, 2, `${name} --no-such-flag exited ${bad.code}: ${bad.stderr}`);
      const [first, second] = bad.stderr.split('\n');
      assert.match(first ?? '', new RegExp(`^${name}: .*'--no-such-flag'`), `${name}'s first line`);
      assert.ok(second?.startsWith(usage), `${name}'s second line is the usage: ${bad.stderr}`);
      assert.doesNotMatch(bad.stderr, /\n\s+at /, `${name} printed a stack trace`);
    });
  });
});
