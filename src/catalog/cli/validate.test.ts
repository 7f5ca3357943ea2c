// `kplane catalog validate` as a real process: exit codes, the logrus line on stderr, -o json|yaml
// on stdout, and cobra-style usage errors, on good and bad catalog directories.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { fatalLine } from './validate.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const bin = join(root, 'bin', 'kplane.js');

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

function kplane(...args: string[]): Promise<Result> {
  return new Promise((resolve) => {
    execFile(process.execPath, [bin, 'catalog', 'validate', ...args], { cwd: root, env: { ...process.env, TZ: 'UTC' } }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

const pkg = (name: string, defaultChannel: string): string => `---
schema: olm.package
name: ${name}
defaultChannel: ${defaultChannel}
`;

function channel(pkgName: string, name: string, entries: { name: string; replaces?: string; skips?: string[]; skipRange?: string }[]): string {
  const lines = entries.map((e) => {
    let s = `  - name: ${e.name}\n`;
    if (e.replaces) s += `    replaces: ${e.replaces}\n`;
    if (e.skips) s += `    skips:\n${e.skips.map((k) => `      - ${k}\n`).join('')}`;
    if (e.skipRange) s += `    skipRange: '${e.skipRange}'\n`;
    return s;
  });
  return `---
schema: olm.channel
package: ${pkgName}
name: ${name}
entries:
${lines.join('')}`;
}

const bundle = (pkgName: string, version: string): string => `---
schema: olm.bundle
name: ${pkgName}.v${version}
package: ${pkgName}
image: quay.io/example/${pkgName}-bundle:v${version}
properties:
  - type: olm.package
    value:
      packageName: ${pkgName}
      version: ${version}
`;

let base: string;
async function catalog(name: string, files: Record<string, string>): Promise<string> {
  const dir = join(base, name);
  for (const [path, text] of Object.entries(files)) {
    await mkdir(dirname(join(dir, path)), { recursive: true });
    await writeFile(join(dir, path), text);
  }
  return dir;
}

/** The message logged by logrus on stderr, unquoted. */
function loggedMessage(stderr: string): string {
  const m = /^time="(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)" level=fatal msg=(".*")\n$/s.exec(stderr);
  assert.ok(m, `not a logrus fatal line: ${JSON.stringify(stderr)}`);
  return JSON.parse(m[2]!) as string;
}

const goodFiles = {
  'foo/catalog.yaml':
    pkg('foo', 'stable') +
    channel('foo', 'stable', [{ name: 'foo.v0.1.0' }, { name: 'foo.v0.2.0', replaces: 'foo.v0.1.0', skipRange: '<0.2.0' }]) +
    channel('foo', 'candidate', [{ name: 'foo.v0.2.0' }]) +
    bundle('foo', '0.1.0') +
    bundle('foo', '0.2.0'),
  'bar/catalog.json':
    JSON.stringify({ schema: 'olm.package', name: 'bar', defaultChannel: 'fast' }) +
    '\n' +
    JSON.stringify({ schema: 'olm.channel', package: 'bar', name: 'fast', entries: [{ name: 'bar.v1.0.0' }] }) +
    '\n' +
    JSON.stringify({
      schema: 'olm.bundle',
      package: 'bar',
      name: 'bar.v1.0.0',
      image: 'bar-bundle:v1.0.0',
      properties: [{ type: 'olm.package', value: { packageName: 'bar', version: '1.0.0' } }],
    }),
};

before(async () => {
  base = await mkdtemp(join(tmpdir(), 'kplane-validate-'));
});
after(async () => {
  await rm(base, { recursive: true, force: true });
});

test('a valid catalog: exit 0, nothing printed', async () => {
  const r = await kplane(await catalog('good', goodFiles));
  assert.deepEqual(r, { code: 0, stdout: '', stderr: '' });
});

test('a replaces cycle: exit 1 and the error tree on stderr as logrus prints it', async () => {
  const dir = await catalog('cycle', {
    'catalog.yaml':
      pkg('foo', 'alpha') +
      channel('foo', 'alpha', [
        { name: 'foo.v0.1.0', replaces: 'foo.v0.3.0' },
        { name: 'foo.v0.2.0', replaces: 'foo.v0.1.0' },
        { name: 'foo.v0.3.0', replaces: 'foo.v0.2.0' },
        { name: 'foo.v0.4.0', replaces: 'foo.v0.3.0' },
      ]) +
      ['0.1.0', '0.2.0', '0.3.0', '0.4.0'].map((v) => bundle('foo', v)).join(''),
  });
  const r = await kplane(dir);
  assert.equal(r.code, 1);
  assert.equal(r.stdout, '');
  assert.equal(
    loggedMessage(r.stderr),
    'invalid index:\n└── invalid package "foo":\n    └── invalid channel "alpha":\n        └── detected cycle in replaces chain of upgrade graph: foo.v0.3.0 -> foo.v0.2.0 -> foo.v0.1.0 -> foo.v0.3.0',
  );
  assert.ok(r.stderr.includes('msg="invalid index:\\n└── invalid package \\"foo\\":\\n'), r.stderr);
});

test('stranded bundles, multiple heads, a bad skipRange and a missing default channel: one tree', async () => {
  const dir = await catalog('tree', {
    'a.yaml':
      pkg('foo', 'alpha') +
      channel('foo', 'alpha', [{ name: 'foo.v0.1.0' }, { name: 'foo.v0.2.0', replaces: 'foo.v0.1.0' }, { name: 'foo.v0.3.0', skips: ['foo.v0.2.0'] }]) +
      channel('foo', 'beta', [{ name: 'foo.v0.1.0' }, { name: 'foo.v0.2.0' }]) +
      ['0.1.0', '0.2.0', '0.3.0'].map((v) => bundle('foo', v)).join(''),
    'b.yaml': pkg('bar', 'missing') + channel('bar', 'fast', [{ name: 'bar.v1.0.0', skipRange: '>v1.0.0' }]) + bundle('bar', '1.0.0'),
  });
  const r = await kplane(dir);
  assert.equal(r.code, 1);
  assert.equal(
    loggedMessage(r.stderr),
    [
      'invalid index:',
      '├── invalid package "foo":',
      '│   ├── invalid channel "alpha":',
      '│   │   └── channel contains one or more stranded bundles: foo.v0.1.0',
      '│   └── invalid channel "beta":',
      '│       └── multiple channel heads found in graph: foo.v0.1.0, foo.v0.2.0',
      '└── invalid package "bar":',
      '    ├── invalid channel "fast":',
      '    │   └── invalid bundle "bar.v1.0.0":',
      '    │       └── invalid skipRange ">v1.0.0": Could not parse Range ">v1.0.0": Could not parse comparator ">v" in ">v1.0.0"',
      '    └── invalid channel "missing":',
      '        └── channel must contain at least one bundle',
    ].join('\n'),
  );
});

test('reference errors stop at the first, with opm message', async () => {
  const cases: [string, Record<string, string>, string][] = [
    [
      'entry-without-bundle',
      {
        'c.yaml':
          pkg('foo', 'alpha') + channel('foo', 'alpha', [{ name: 'foo.v0.1.0' }, { name: 'foo.v0.2.0', replaces: 'foo.v0.1.0' }]) + bundle('foo', '0.1.0'),
      },
      'no olm.bundle blobs found in package "foo" for olm.channel entries [foo.v0.2.0]',
    ],
    ['duplicate-package', { 'a.yaml': pkg('foo', 'alpha'), 'b.yaml': pkg('foo', 'alpha') }, 'duplicate package "foo"'],
    [
      'bundle-without-channel',
      { 'c.yaml': pkg('foo', 'alpha') + channel('foo', 'alpha', [{ name: 'foo.v0.1.0' }]) + bundle('foo', '0.1.0') + bundle('foo', '0.2.0') },
      'package "foo", bundle "foo.v0.2.0" not found in any channel entries',
    ],
    [
      'channel-unknown-package',
      { 'c.yaml': pkg('foo', 'alpha') + channel('bar', 'alpha', [{ name: 'bar.v0.1.0' }]) },
      'unknown package "bar" for channel "alpha"',
    ],
  ];
  const results = await Promise.all(cases.map(async ([name, files]) => kplane(await catalog(name, files))));
  cases.forEach(([name, , message], i) => {
    assert.equal(results[i]!.code, 1, name);
    assert.equal(loggedMessage(results[i]!.stderr), message, name);
  });
});

test('.indexignore keeps files out of the catalog', async () => {
  const dir = await catalog('ignored', { ...goodFiles, '.indexignore': 'broken.yaml\n', 'broken.yaml': pkg('foo', 'alpha') });
  assert.equal((await kplane(dir)).code, 0);
  const bad = await catalog('not-ignored', { ...goodFiles, 'broken.yaml': pkg('foo', 'alpha') });
  const r = await kplane(bad);
  assert.equal(r.code, 1);
  assert.equal(loggedMessage(r.stderr), 'duplicate package "foo"');
});

test('-o json and -o yaml print the result on stdout; the exit code still tells', async () => {
  const good = await catalog('good-o', goodFiles);
  const bad = await catalog('bad-o', { 'a.yaml': pkg('foo', 'alpha'), 'b.yaml': pkg('foo', 'alpha') });
  const [gj, bj, by, gy] = await Promise.all([
    kplane('-o', 'json', good),
    kplane(bad, '--output=json'),
    kplane('--output', 'yaml', bad),
    kplane('-oyaml', good),
  ]);
  assert.deepEqual(gj, { code: 0, stdout: '{\n  "passed": true\n}\n', stderr: '' });
  assert.deepEqual(bj, { code: 1, stdout: '{\n  "passed": false,\n  "error": {\n    "message": "duplicate package \\"foo\\""\n  }\n}\n', stderr: '' });
  assert.deepEqual(by, { code: 1, stdout: 'error:\n  message: duplicate package "foo"\npassed: false\n\n', stderr: '' });
  assert.deepEqual(gy, { code: 0, stdout: 'passed: true\n\n', stderr: '' });
});

test('-o json escapes <, > and & as Go does; -o yaml writes a tree as a literal block', async () => {
  const dir = await catalog('html', {
    'c.yaml': pkg('foo', 'alpha') + channel('foo', 'alpha', [{ name: 'foo.v0.1.0', skipRange: '<1.0.0 >=x' }]) + bundle('foo', '0.1.0'),
  });
  const [j, y] = await Promise.all([kplane('-o', 'json', dir), kplane('-o', 'yaml', dir)]);
  assert.equal(j.code, 1);
  assert.ok(j.stdout.includes(String.raw`invalid skipRange \"\u003c1.0.0 \u003e=x\"`), j.stdout);
  assert.ok(!/[<>]/.test(j.stdout), j.stdout);
  const parsed = JSON.parse(j.stdout) as { passed: boolean; error: { message: string } };
  assert.equal(parsed.passed, false);
  assert.ok(parsed.error.message.startsWith('invalid index:\n└── invalid package "foo":\n'));
  assert.equal(y.code, 1);
  assert.ok(y.stdout.startsWith('error:\n  message: |-\n    invalid index:\n    └── invalid package "foo":\n        └── invalid channel "alpha":\n'), y.stdout);
  assert.ok(y.stdout.endsWith('\npassed: false\n\n'), y.stdout);
});

test('usage errors as cobra reports them', async () => {
  const good = await catalog('good-u', goodFiles);
  const file = join(good, 'foo', 'catalog.yaml');
  const [none, missing, notDir, badOut, unknown] = await Promise.all([
    kplane(),
    kplane(join(base, 'nope')),
    kplane(file),
    kplane('-o', 'xml', good),
    kplane('--frobnicate', good),
  ]);
  const usageTail = '\nUsage:\n  kplane catalog validate <directory> [flags]\n';
  for (const r of [none, missing, notDir, badOut, unknown]) {
    assert.equal(r.code, 1);
    assert.equal(r.stdout, '');
    assert.ok(r.stderr.includes(usageTail), r.stderr);
  }
  assert.ok(none.stderr.startsWith('Error: accepts 1 arg(s), received 0\n'), none.stderr);
  assert.ok(missing.stderr.startsWith(`Error: stat ${join(base, 'nope')}: no such file or directory\n`), missing.stderr);
  assert.ok(notDir.stderr.startsWith(`Error: "${file}" is not a directory\n`), notDir.stderr);
  assert.ok(badOut.stderr.startsWith('Error: invalid --output value "xml", expected (json|yaml)\n'), badOut.stderr);
  assert.ok(unknown.stderr.startsWith('Error: unknown flag: --frobnicate\n'), unknown.stderr);
});

test('--help prints the usage on stdout', async () => {
  const r = await kplane('--help');
  assert.equal(r.code, 0);
  assert.ok(r.stdout.includes('Usage:\n  kplane catalog validate <directory> [flags]'));
  assert.ok(r.stdout.includes('-o, --output string   Output format for validation results (json|yaml)'));
});

test('the logrus line: key=value off a terminal, colored level and padded message on one', () => {
  const now = new Date('2026-11-22T02:30:00Z');
  process.env.TZ = 'UTC';
  assert.equal(
    fatalLine('duplicate package "foo"', { tty: false, now }).replace(/time="[^"]+"/, 'time=T'),
    'time=T level=fatal msg="duplicate package \\"foo\\""\n',
  );
  assert.equal(fatalLine('plain', { tty: false, now }).replace(/time="[^"]+"/, 'time=T'), 'time=T level=fatal msg=plain\n');
  assert.equal(fatalLine('short', { tty: true, now, startedAt: now.getTime() - 3200 }), `\x1b[31mFATA\x1b[0m[0003] ${'short'.padEnd(44)} \n`);
});
