import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { validDeclarativeConfig } from './testdata/fixtures.js';
import type { DeclarativeConfig } from './types.js';
import { goJSON, sortedKeysDeep } from '../../golang/json.js';
import { jsonToYAML } from '../../golang/yaml-write.js';
import { writeJSON, writeMermaid, writeYAML } from './write.js';

const testdata = join(fileURLToPath(import.meta.url), '..', 'testdata', 'write');
const expected = (name: string): string => readFileSync(join(testdata, name), 'utf8');

describe('declcfg writers (upstream write_test.go)', () => {
  const cfg = () => validDeclarativeConfig({ includeUnrecognized: true, includeDeprecations: true });

  it('WriteJSON: package order, field order, 4-space indent, others and deprecations', () => {
    assert.equal(writeJSON(cfg()), expected('upstream-valid.json'));
  });

  it('WriteYAML: --- per blob, sorted keys, sequences in mappings not indented', () => {
    assert.equal(writeYAML(cfg()), expected('upstream-valid.yaml'));
  });

  it('mermaid without filters', () => {
    assert.equal(writeMermaid(cfg()), expected('mermaid-no-filters.mmd'));
  });

  it('mermaid with a minimum edge', () => {
    assert.equal(writeMermaid(cfg(), { minEdgeName: 'anakin.v0.1.0' }), expected('mermaid-min-edge.mmd'));
  });

  it('mermaid for one package', () => {
    assert.equal(writeMermaid(cfg(), { specifiedPackageName: 'boba-fett' }), expected('mermaid-package-filter.mmd'));
  });

  it('mermaid: an unknown minimum edge is an error', () => {
    assert.throws(() => writeMermaid(cfg(), { minEdgeName: 'nope' }), { message: 'unknown minimum edge name: "nope"' });
  });
});

describe('writeFS (upstream TestWriteFS)', () => {
  it('per-package files carry their others and deprecations; package-less others go to the root file; loading gives them back', async () => {
    const { mkdtempSync, readFileSync: read, rmSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { loadFS } = await import('./load.js');
    const { writeFS } = await import('./write.js');
    const dir = mkdtempSync(join(tmpdir(), 'kplane-writefs-'));
    try {
      const cfg = validDeclarativeConfig({ includeUnrecognized: true, includeDeprecations: true });
      assert.deepEqual(writeFS(cfg, dir, 'json'), ['anakin/catalog.json', 'boba-fett/catalog.json', 'catalog.json']);
      const anakin = read(join(dir, 'anakin', 'catalog.json'), 'utf8');
      assert.ok(anakin.includes('"schema": "custom.3"') && anakin.includes('"schema": "olm.deprecations"'));
      assert.ok(read(join(dir, 'boba-fett', 'catalog.json'), 'utf8').includes('"schema": "custom.3"'));
      const root = read(join(dir, 'catalog.json'), 'utf8');
      assert.ok(root.includes('"schema": "custom.1"') && root.includes('"schema": "custom.2"'));
      const loaded = await loadFS(dir);
      assert.deepEqual(loaded.others.map((o) => o.schema).sort(), cfg.others.map((o) => o.schema).sort());
      assert.deepEqual(loaded.deprecations, cfg.deprecations);
      assert.throws(() => writeFS({ ...cfg, packages: [{ schema: 'olm.package', name: '../x', defaultChannel: '' }] }, dir, 'yaml'), {
        message: 'invalid package name "../x": must be a single local path element',
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('Go encoders, case by case', () => {
  // Values with awkward strings, keys and numbers, and what Go's encoding/json (indent 4, no HTML
  // escaping) and sigs.k8s.io/yaml's JSONToYAML (go-yaml v2.4.4) wrote for them; "ERR ..." where
  // JSONToYAML failed. Values are decoded as Go decodes them (maps: sorted keys).
  const cases = JSON.parse(readFileSync(join(testdata, 'go-encoder-cases.json'), 'utf8')) as { value: unknown; json: string; yaml: string }[];
  it('JSON: every case byte for byte', () => {
    for (const c of cases) assert.equal(goJSON(sortedKeysDeep(c.value), { indent: '    ' }) + '\n', c.json, JSON.stringify(c.value));
  });
  it('YAML: every case byte for byte (or the same error)', () => {
    for (const c of cases) {
      const v = sortedKeysDeep(c.value);
      if (c.yaml.startsWith('ERR ')) assert.throws(() => jsonToYAML(v), { message: c.yaml.slice(4) }, JSON.stringify(c.value));
      else assert.equal(jsonToYAML(v), c.yaml, JSON.stringify(c.value));
    }
  });
});

describe('mermaid, case by case', () => {
  // Random catalogs (one or two packages, replaces/skips/skipRange edges, deprecations, minimum
  // edge and package filters) and what opm's MermaidWriter wrote for them, recorded from the reference.
  const cases = JSON.parse(readFileSync(join(testdata, 'go-mermaid-cases.json'), 'utf8')) as {
    cfg: Omit<DeclarativeConfig, 'packages' | 'others'>;
    minEdge: string;
    pkg: string;
    expected: string;
  }[];
  it(`${cases.length} recorded graphs byte for byte`, () => {
    for (const c of cases) {
      const cfg: DeclarativeConfig = { packages: [], others: [], ...c.cfg };
      let out: string;
      try {
        out = writeMermaid(cfg, { minEdgeName: c.minEdge, specifiedPackageName: c.pkg, warn: () => undefined });
      } catch (e) {
        out = `ERR ${(e as Error).message}`;
      }
      assert.equal(out, c.expected, JSON.stringify(c));
    }
  });
});
