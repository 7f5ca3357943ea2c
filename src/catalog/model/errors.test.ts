// The validation error tree prints as opm's (alpha/model/error_test.go cases).
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { goQuote } from '../../golang/strconv.js';
import { ValidationError } from './errors.js';

const e = (m: string): Error => new Error(m);

test('empty tree prints nothing and is not an error', () => {
  assert.equal(new ValidationError('').format(), '');
  assert.equal(new ValidationError('hello').orUndefined(), undefined);
});

test('message only', () => {
  assert.equal(new ValidationError('hello').format(), 'hello');
});

test('with sub-errors', () => {
  assert.equal(new ValidationError('hello', [e('world'), e('foobar')]).format(), 'hello:\n├── world\n└── foobar');
});

test('with an empty leaf validation error', () => {
  const v = new ValidationError('hello', [new ValidationError('foo', []), new ValidationError('bar', [e('bar1'), e('bar2')])]);
  assert.equal(v.format(), 'hello:\n├── foo\n└── bar:\n    ├── bar1\n    └── bar2');
});

test('with sub-sub-errors', () => {
  const v = new ValidationError('hello', [new ValidationError('foo', [e('foo1'), e('foo2')]), new ValidationError('bar', [e('bar1'), e('bar2')])]);
  assert.equal(v.format(), 'hello:\n├── foo:\n│   ├── foo1\n│   └── foo2\n└── bar:\n    ├── bar1\n    └── bar2');
});

test('a node reached again through a cycle is left out', () => {
  const l1 = new ValidationError('l1');
  l1.subErrors.push(e('err1'), new ValidationError('l2', [e('err3'), l1, e('err4')]), e('err2'));
  assert.equal(l1.format(), 'l1:\n├── err1\n├── l2:\n│   ├── err3\n│   └── err4\n└── err2');
});

test('deep trees keep the vertical lines of unfinished ancestors', () => {
  const v = new ValidationError('a', [new ValidationError('b', [new ValidationError('c', [e('d1'), e('d2')]), e('c2')]), e('b2')]);
  assert.equal(v.format(), 'a:\n├── b:\n│   ├── c:\n│   │   ├── d1\n│   │   └── d2\n│   └── c2\n└── b2');
});

test('orUndefined fixes the message to the printed tree', () => {
  const v = new ValidationError('invalid index', [e('x')]).orUndefined()!;
  assert.equal(v.message, 'invalid index:\n└── x');
});

test('goQuote quotes like Go %q', () => {
  assert.equal(goQuote('a"b\\c\nd\te'), '"a\\"b\\\\c\\nd\\te"');
  assert.equal(goQuote('└── ü'), '"└── ü"');
  assert.equal(goQuote('\x01\x7f'), '"\\x01\\x7f"');
});
