// listItemElement's one-key-field shortcut writes what keyElement writes for the same key.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { DEDUCED, type ListAtom } from './atoms.js';
import { keyElement } from './fieldpath.js';
import { listItemElement } from './typed.js';

test('a list-map item with one key field is named as keyElement names it', () => {
  fc.assert(
    fc.property(fc.constantFrom('name', 'a<b>&c', 'ünï', '\u2028', 'x"y'), fc.jsonValue(), (name, v) => {
      const list: ListAtom = { atomic: false, keys: [name], elem: DEDUCED };
      const value = v;
      assert.equal(listItemElement(list, { [name]: value, other: 1 }), keyElement({ [name]: value }));
    }),
  );
  const list: ListAtom = { atomic: false, keys: ['name'], elem: DEDUCED };
  assert.throws(() => listItemElement(list, { other: 1 }), /omits all key fields \["name"\]/);
});
