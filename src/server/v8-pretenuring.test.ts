import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const moduleUrl = new URL('./v8-pretenuring.ts', import.meta.url).href;
const controlPlaneUrl = new URL('../controlplane.ts', import.meta.url).href;
const factoriesUrl = new URL('../storage/factories.ts', import.meta.url).href;

/**
 * In a fresh process: runs `setup` (by default disableAllocationSitePretenuring() with `env` as its environment),
 * lets 3,000,000 objects from one allocation site survive (which makes V8 pretenure the site),
 * then counts how many of 1,000 new objects from the same site are born in the old generation.
 */
function oldAtBirth(env: Record<string, string>, setup = `disableAllocationSitePretenuring(${JSON.stringify(env)})`): { old: number; off: boolean } {
  const code = `
    import { disableAllocationSitePretenuring } from ${JSON.stringify(moduleUrl)};
    const off = await (async () => ${setup})();
    const young = new Function('o', 'return %InYoungGeneration(o)');
    const make = (i) => ({ i, a: null, b: null });
    const keep = [];
    for (let i = 0; i < 3_000_000; i++) keep.push(make(i));
    let old = 0;
    for (let i = 0; i < 1000; i++) { const o = make(i); if (!young(o)) old++; }
    console.log(JSON.stringify({ old, off, kept: keep.length }));`;
  const out = execFileSync(process.execPath, ['--allow-natives-syntax', '--import', 'tsx', '--input-type=module', '-e', code], {
    cwd: fileURLToPath(new URL('../..', import.meta.url)),
    encoding: 'utf8',
  });
  return JSON.parse(out.trim().split('\n').pop()!) as { old: number; off: boolean };
}

describe('disableAllocationSitePretenuring', () => {
  it('without it (KPLANE_V8_PRETENURING=1), V8 pretenures a literal whose objects survived: later objects are born old', () => {
    // V8's decision depends on when its scavenges fall (it tenures only at a scavenge of a full-size
    // young generation); one run in about ten here did not pretenure, so up to three attempts.
    let r = oldAtBirth({ KPLANE_V8_PRETENURING: '1' });
    for (let attempt = 1; attempt < 3 && r.old <= 900; attempt++) r = oldAtBirth({ KPLANE_V8_PRETENURING: '1' });
    assert.equal(r.off, false);
    assert.ok(r.old > 900, `expected V8 to pretenure the site (the behaviour this module turns off); ${r.old} of 1000 born old`);
  });

  it('with it, objects from such a literal are born young', () => {
    const r = oldAtBirth({});
    assert.equal(r.off, true);
    assert.equal(r.old, 0);
  });


  it('createControlPlane turns it off for the process (the library, not only the CLI)', () => {
    const setup = `(async () => {
      const { createControlPlane } = await import(${JSON.stringify(controlPlaneUrl)});
      const { sqlite } = await import(${JSON.stringify(factoriesUrl)});
      const { mkdtempSync, rmSync } = await import('node:fs');
      const { join } = await import('node:path');
      const { tmpdir } = await import('node:os');
      const dir = mkdtempSync(join(tmpdir(), 'kplane-pretenuring-test-'));
      await createControlPlane({ storage: sqlite({ dir: join(dir, 'db') }), dataDir: dir, port: 0 });
      rmSync(dir, { recursive: true, force: true });
      return true;
    })()`;
    assert.equal(oldAtBirth({}, setup).old, 0);
  });
});
