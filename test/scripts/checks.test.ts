// scripts/checks.mjs (npm test's first phase) in a scratch package whose npm scripts pass or fail
// on purpose: a failing check fails the run even when the others pass, the follow-up (--then, the
// test files in npm test) is not started once a check failed, and the follow-up's own exit code
// counts. If any of these broke, `npm test` could pass with a lint or type error.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { repoRoot } from '../support/tools.js';

describe('scripts/checks.mjs', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'kplane-checks-'));
    mkdirSync(join(dir, 'scripts'));
    copyFileSync(join(repoRoot, 'scripts', 'checks.mjs'), join(dir, 'scripts', 'checks.mjs'));
    const scripts = { ok: 'node -e 0', 'ok-too': 'node -e 0', bad: 'node -e "process.exit(3)"' };
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'checks-fixture', private: true, scripts }));
    writeFileSync(
      join(dir, 'then-ok.mjs'),
      `import { writeFileSync } from 'node:fs'; writeFileSync(${JSON.stringify(join(dir, 'ran'))}, process.argv.slice(2).join(' '));`,
    );
    writeFileSync(join(dir, 'then-bad.mjs'), 'process.exit(4);');
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  const run = (concurrency: number, ...args: string[]) => {
    rmSync(join(dir, 'ran'), { force: true });
    const env = { ...process.env, KPLANE_CHECK_CONCURRENCY: String(concurrency) };
    const r = spawnSync(process.execPath, [join(dir, 'scripts', 'checks.mjs'), ...args], { cwd: dir, encoding: 'utf8', env });
    const ran = existsSync(join(dir, 'ran')) ? readFileSync(join(dir, 'ran'), 'utf8') : undefined;
    return { status: r.status, stderr: r.stderr, ran };
  };

  it('passes when every check and the follow-up pass, and hands the follow-up its arguments', () => {
    const r = run(2, 'ok', 'ok-too', '--then', 'then-ok.mjs', 'storage', 'etcd');
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.ran, 'storage etcd');
  });

  it('fails when one check fails, runs the others, and does not start the follow-up after a failure', () => {
    const r = run(1, 'bad', 'ok', '--then', 'then-ok.mjs');
    assert.equal(r.status, 1, r.stderr);
    assert.match(r.stderr, /\[checks\] bad: failed \(exit 3\)/);
    assert.match(r.stderr, /\[checks\] ok: ok in /);
    assert.match(r.stderr, /then-ok\.mjs not run: a check failed first/);
    assert.equal(r.ran, undefined);
  });

  it('fails when a check fails after the follow-up started beside it', () => {
    // Two slots: `ok` ends first and frees one, so the follow-up starts while `bad` still runs.
    const r = run(2, 'bad', 'ok', '--then', 'then-ok.mjs');
    assert.equal(r.status, 1, r.stderr);
    assert.match(r.stderr, /\[checks\] failed: bad/);
  });

  it('fails when the follow-up fails', () => {
    const r = run(2, 'ok', '--then', 'then-bad.mjs');
    assert.equal(r.status, 1, r.stderr);
  });
});
