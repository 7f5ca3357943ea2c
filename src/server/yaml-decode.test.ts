import assert from 'node:assert/strict';
import { test } from 'node:test';
import { StatusError } from '../apimachinery/errors.js';
import { decodeYaml } from './negotiation.js';

const enc = (s: string): Uint8Array => new TextEncoder().encode(s);

test('decodeYaml: unresolved aliases and alias bombs are 400s, not internal errors', () => {
  for (const text of [
    '*\x81',
    'a: *nope',
    `a: &a [x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\n`,
  ]) {
    assert.throws(
      () => decodeYaml(enc(text)),
      (e: unknown) =>
        e instanceof StatusError && e.code === 400 && e.status.reason === 'BadRequest' && /^error converting YAML to JSON: yaml: /.test(e.status.message ?? ''),
      JSON.stringify(text),
    );
  }
  assert.deepEqual(decodeYaml(enc('a: &x 1\nb: *x\n')).value, { a: 1, b: 1 });
});
