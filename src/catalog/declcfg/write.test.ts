import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { validDeclarativeConfig } from './testdata/fixtures.js';
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
