import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { jsonToYAML } from './yaml-write.js';

// Strings that must be quoted exactly when go-yaml would read them back as something else; each
// expectation is what sigs.k8s.io/yaml v1.6.0's JSONToYAML (go-yaml v2.4.4) printed under Go.
describe('golang/yaml-write: quoting follows the reader (golang/yaml-read.ts resolve)', () => {
  it('quotes what resolve.go reads as a number, and only that', () => {
    const long = '-0b' + '1'.repeat(70);
    assert.deepEqual(
      ['.5_0', '0b-101', long, '1e400', '1:20', '1_0e1_0', '2001-02-30', '2001-02-03'].map((a) => jsonToYAML({ a })),
      ['a: ".5_0"\n', 'a: "0b-101"\n', `a: ${long}\n`, 'a: 1e400\n', 'a: "1:20"\n', 'a: "1_0e1_0"\n', 'a: 2001-02-30\n', 'a: "2001-02-03"\n'],
    );
  });
});
