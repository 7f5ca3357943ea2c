// What a new user meets when `kplane serve` cannot start, and the README's other promises about the
// command line: a busy port fails before anything is created, and names the flag (with the npm form
// when run through `npm start`); a data dir held by another server names --data-dir; `kplane --help`
// lines up; `npm run tools -- <group>` installs only that group; the watch cache self-check flag; a
// missing file names its flag; `npm start --flag value` (npm takes the flag) says to put it after --.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { kplaneProcesses } from '../support/kplane-process.js';
import { repoRoot, run } from '../support/tools.js';

const main = join(repoRoot, 'src/cli/main.ts');
const kplane = (args: readonly string[], env: NodeJS.ProcessEnv = {}) =>
  run(process.execPath, ['--import', 'tsx', main, ...args], { env: { npm_lifecycle_event: '', npm_command: '', ...env }, timeoutMs: 60_000 });

let dir = '';
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'kplane-cli-start-'));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('kplane serve on a port in use', () => {
  let busy: Server;
  let port = 0;
  before(async () => {
    busy = createServer();
    await new Promise<void>((ok) => busy.listen(0, '127.0.0.1', ok));
    port = (busy.address() as { port: number }).port;
  });
  after(() => new Promise<void>((ok) => busy.close(() => ok())));

  it('fails before creating the data dir, naming --secure-port', async () => {
    const dataDir = join(dir, 'busy');
    const r = await kplane(['serve', '--data-dir', dataDir, '--secure-port', String(port)]);
    assert.equal(r.code, 1, r.stderr);
    assert.equal(
      r.stderr,
      `kplane: cannot listen on 127.0.0.1:${port}: the address is in use (another kplane server or another program); stop it, or choose another port (kplane serve --secure-port, library option port; 0 picks a free one)\n`,
    );
    assert.equal(existsSync(dataDir), false, 'no data dir, database or pki/ left behind');
  });

  it('through npm start, says how to pass the flag through npm', async () => {
    const dataDir = join(dir, 'busy-npm');
    const r = await kplane(['serve', '--data-dir', dataDir, '--secure-port', String(port)], { npm_lifecycle_event: 'start', npm_command: 'start' });
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /\nkplane: through npm, flags go after "--": npm start -- --secure-port 16443\n$/);
    assert.equal(existsSync(dataDir), false);
  });
});

describe('kplane serve on a data dir another server holds', () => {
  const procs = kplaneProcesses();
  after(() => procs.killAll());

  it('names --data-dir', async () => {
    const dataDir = join(dir, 'shared');
    const first = await procs.start(['serve', '--data-dir', dataDir, '--secure-port', '0', '--controllers=false'], /^kplane is serving on \S+/m);
    const r = await kplane(['serve', '--data-dir', dataDir, '--secure-port', '0'], { npm_lifecycle_event: 'start' });
    assert.equal(r.code, 1, r.stderr);
    assert.match(
      r.stderr,
      /is already open in another process \(another kplane server on the same data path\?\)\. Stop that process, or give this one a different data directory \(kplane serve --data-dir DIR; library: sqlite\(\{ dir \}\)\)\.\n/,
    );
    assert.match(r.stderr, /\nkplane: through npm, flags go after "--": npm start -- --data-dir \.kplane-2\n$/);
    first.child.kill('SIGTERM');
    await first.exited;
  });
});

describe('kplane --help', () => {
  it('lines up the descriptions of every command', async () => {
    const r = await kplane(['--help']);
    assert.equal(r.code, 0);
    const commands = r.stdout.slice(r.stdout.indexOf('Commands:\n') + 'Commands:\n'.length, r.stdout.indexOf('\n\n', r.stdout.indexOf('Commands:')));
    const columns = commands.split('\n').map((l) => /^ {2}\S+ +/.exec(l)?.[0].length);
    assert.deepEqual(
      columns.map((c) => c ?? -1),
      columns.map(() => columns[0]),
      commands,
    );
    assert.match(commands, /^ {2}version {19}Print the version$/m);
    assert.match(r.stdout, /^ {2}-v, --v N {17}log verbosity/m);
  });
});

describe('npm run tools', () => {
  it('installs one group when asked: -- kubectl', async () => {
    const r = await run('npm', ['run', 'tools', '--', 'kubectl'], { timeoutMs: 300_000 });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /\[install-tools\] kubectl-1\.20: Client Version: v1\.20/);
    assert.match(r.stderr, /\[install-tools\] kubectl: Client Version: v1\.33/);
    assert.doesNotMatch(r.stderr, /etcd|python3|docker-registry|h2load/);
  });

  it('refuses a group it does not know, naming the groups', async () => {
    const r = await run('npm', ['run', 'tools', '--', 'kubeclt'], { timeoutMs: 60_000 });
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /install-tools: unknown group "kubeclt"; groups: kubectl etcd python catalog bench \(none: all\)/);
  });
});

describe('kplane serve --watch-cache-consistency-check-interval', () => {
  const procs = kplaneProcesses();
  after(() => procs.killAll());

  it('refuses what is not a Go duration, naming the flag', async () => {
    const r = await kplane(['serve', '--data-dir', join(dir, 'check-bad'), '--secure-port', '0', '--watch-cache-consistency-check-interval', 'soon']);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /^kplane: invalid argument "soon" for "--watch-cache-consistency-check-interval" flag: /);
  });

  it('runs the self-check that often (its passes are logged at -v=3)', async () => {
    const server = await procs.start(
      ['serve', '--data-dir', join(dir, 'check'), '--secure-port', '0', '--controllers=false', '--watch-cache-consistency-check-interval=200ms', '-v=3'],
      /^kplane is serving on \S+/m,
    );
    for (let i = 0; i < 200 && !/"Cache consistency check passed" group="" resource="configmaps"/.test(server.log()); i++)
      await new Promise((r) => setTimeout(r, 50));
    assert.match(
      server.log(),
      /^I\d{4} [^\n]*\] "Cache consistency check passed" group="" resource="configmaps" resourceVersion="\d+" digest="[0-9a-f]{16}"$/m,
    );
    server.child.kill('SIGTERM');
    await server.exited;
  });
});

describe('kplane serve --modules', () => {
  it('refuses a module it does not know before creating the data dir, naming the flag and the known modules', async () => {
    const dataDir = join(dir, 'modules-bad');
    const r = await kplane(['serve', '--data-dir', dataDir, '--secure-port', '0', '--modules', 'nosuch']);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /^kplane: invalid argument "nosuch" for "--modules" flag: unknown module "nosuch" \(known: /);
    assert.equal(existsSync(dataDir), false);
  });
});

describe('kplane serve with a mistake on the command line', () => {
  it('a file flag naming a missing file names the flag and the path, before creating the data dir', async () => {
    const dataDir = join(dir, 'missing-file');
    const r = await kplane(['serve', '--data-dir', dataDir, '--secure-port', '0', '--token-auth-file', 'nosuch-tokens.csv']);
    assert.equal(r.code, 2, r.stderr);
    assert.equal(r.stderr, `kplane: --token-auth-file=nosuch-tokens.csv: no such file (${join(repoRoot, 'nosuch-tokens.csv')})\n`);
    assert.equal(existsSync(dataDir), false);
  });

  it('npm start --secure-port 16443 (npm keeps the flag) gives the command with "--"', async () => {
    const r = await kplane(['serve', '16443'], { npm_lifecycle_event: 'start', npm_config_secure_port: 'true' });
    assert.equal(r.code, 2, r.stderr);
    assert.equal(
      r.stderr,
      'kplane: unexpected argument "16443": npm took --secure-port as its own option; through npm, flags go after "--": npm start -- --secure-port 16443\n',
    );
  });
});
