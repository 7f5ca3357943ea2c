import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const url = (rel: string): string => JSON.stringify(new URL(rel, import.meta.url).href);

/** Setup code that calls disableAllocationSitePretenuring() with `env` as its environment. */
const disableWith = (env: Record<string, string>): string =>
  `(await import(${url('./v8-pretenuring.ts')})).disableAllocationSitePretenuring(${JSON.stringify(env)})`;

/**
 * In a fresh process: awaits `setup` (an expression), lets 3,000,000 objects from one allocation
 * site survive (which makes V8 pretenure the site), then counts how many of 1,000 new objects from
 * the same site are born in the old generation. `off` is what `setup` evaluated to.
 */
function oldAtBirth(setup: string): { old: number; off: unknown } {
  const code = `
    const off = await ${setup};
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
  return JSON.parse(out.trim().split('\n').pop()!) as { old: number; off: unknown };
}

describe('disableAllocationSitePretenuring', () => {
  it('without it (KPLANE_V8_PRETENURING=1), V8 pretenures a literal whose objects survived: later objects are born old', () => {
    // V8's decision depends on when its scavenges fall (it tenures only at a scavenge of a full-size
    // young generation); one run in about ten here did not pretenure, so up to three attempts.
    const setup = disableWith({ KPLANE_V8_PRETENURING: '1' });
    let r = oldAtBirth(setup);
    for (let attempt = 1; attempt < 3 && r.old <= 900; attempt++) r = oldAtBirth(setup);
    assert.equal(r.off, false);
    assert.ok(r.old > 900, `expected V8 to pretenure the site (the behaviour this module turns off); ${r.old} of 1000 born old`);
  });

  it('with it, objects from such a literal are born young', () => {
    const r = oldAtBirth(disableWith({}));
    assert.equal(r.off, true);
    assert.equal(r.old, 0);
  });

  it('the library entries turn it off for the process: createControlPlane and serveCatalog', () => {
    const controlPlane = `(async () => {
      const { createControlPlane } = await import(${url('../controlplane/controlplane.ts')});
      const { sqlite } = await import(${url('../storage/factories.ts')});
      const { mkdtempSync, rmSync } = await import('node:fs');
      const { join } = await import('node:path');
      const { tmpdir } = await import('node:os');
      const dir = mkdtempSync(join(tmpdir(), 'kplane-pretenuring-test-'));
      await createControlPlane({ storage: sqlite({ dir: join(dir, 'db') }), dataDir: dir, port: 0 });
      rmSync(dir, { recursive: true, force: true });
    })()`;
    assert.equal(oldAtBirth(controlPlane).old, 0, 'createControlPlane');
    const catalog = `(async () => {
      const { serveCatalog } = await import(${url('../catalog/serve/index.ts')});
      const running = await serveCatalog(${JSON.stringify(fileURLToPath(new URL('../catalog/serve/testdata/deprecations', import.meta.url)))});
      await running.stop(0);
    })()`;
    assert.equal(oldAtBirth(catalog).old, 0, 'serveCatalog');
  });
});
