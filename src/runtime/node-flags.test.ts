import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { NODE_FLAGS } from './node-flags.js';

const root = join(fileURLToPath(new URL('.', import.meta.url)), '..', '..');

describe('node flags', () => {
  it('npm start and bin/kplane.js pass exactly NODE_FLAGS', () => {
    const start = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts.start!;
    assert.equal(start, `node ${NODE_FLAGS.join(' ')} dist/cli/main.js serve`);
    const shebang = readFileSync(join(root, 'bin', 'kplane.js'), 'utf8').split('\n')[0];
    assert.equal(shebang, `#!/usr/bin/env -S node ${NODE_FLAGS.join(' ')}`);
  });

  it('a process started through bin/kplane.js runs with them', () => {
    // `kplane version` through the shebang line, as npm's bin link or ./bin/kplane.js runs it; a
    // preloaded script prints the process's node flags. NODE_OPTIONS keeps what it holds (under
    // npm test, the kplane-source condition: the CLI runs from src/, no build needed).
    const dir = mkdtempSync(join(tmpdir(), 'kplane-flags-'));
    try {
      const probe = join(dir, 'probe.cjs');
      writeFileSync(probe, "process.stdout.write('execArgv=' + JSON.stringify(process.execArgv) + '\\n');\n");
      const out = execFileSync(join(root, 'bin', 'kplane.js'), ['version'], {
        encoding: 'utf8',
        env: { ...process.env, NODE_OPTIONS: [process.env.NODE_OPTIONS, `--require ${probe}`].filter(Boolean).join(' ') },
      });
      const line = out.split('\n').find((l) => l.startsWith('execArgv='));
      assert.ok(line, out);
      const argv = JSON.parse(line.slice('execArgv='.length)) as string[];
      for (const f of NODE_FLAGS) assert.ok(argv.includes(f), `${f} in ${line}`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
