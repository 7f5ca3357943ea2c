import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { rewriteHas } from './source.js';

describe('rewriteHas', () => {
  it('rewrites has() whose operand is not a chain from a variable', () => {
    // `has` becomes spaces: the operand keeps its columns.
    assert.equal(rewriteHas('has(a[0].b)'), '   (a[0].?b.hasValue())');
    assert.equal(rewriteHas("has(a['k'].b.c) && x"), "   (a['k'].b.?c.hasValue()) && x");
    assert.equal(rewriteHas('has(f(x).y)'), '   (f(x).?y.hasValue())');
    assert.equal(rewriteHas('has ( a[0] . b )'), '    ( a[0] .?b.hasValue())');
    // Nested, inside the operand.
    assert.equal(rewriteHas('has(a[has(b[0].c) ? 0 : 1].d)'), '   (a[   (b[0].?c.hasValue()) ? 0 : 1].?d.hasValue())');
  });

  it('leaves chains from a variable, non-selections, method calls, literals and comments alone', () => {
    for (const src of [
      'has(a.b)',
      'has(a.b.c) || has(.a.b)',
      'has(a[0])',
      'has(a[0].?b)',
      'x.has(a[0].b)',
      'hasx(a[0].b)',
      '\'has(a[0].b)\' == r"has(b[0].c)"',
      'true // has(a[0].b)',
      'has(a[0].b',
      'has(a[0].b] + (c)',
      'self.all(x, has(x.name))',
    ]) {
      assert.equal(rewriteHas(src), src, src);
    }
  });
});
