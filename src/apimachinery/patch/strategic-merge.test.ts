// Cases ported from upstream's strategicpatch/patch_test.go (strategicMergePatchRawTestCases,
// createStrategicMergePatchTestCaseData "patch" halves), against a schema mirroring its MergeItem.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import YAML from 'yaml';
import { isStatusError } from '../errors.js';
import { refTo, type Definitions, type OpenAPISchema } from '../schema.js';
import type { JsonValue } from '../types.js';
import { strategicMergePatch } from './strategic-merge.js';

const str: OpenAPISchema = { type: 'string' };
const int: OpenAPISchema = { type: 'integer' };
const mergeItemList = (extra: Partial<OpenAPISchema> = {}): OpenAPISchema => ({ type: 'array', items: refTo('MergeItem'), ...extra });

const defs: Definitions = {
  MergeItem: {
    type: 'object',
    properties: {
      name: str,
      value: str,
      other: str,
      mergingList: mergeItemList({ 'x-kubernetes-patch-strategy': 'merge', 'x-kubernetes-patch-merge-key': 'name' }),
      nonMergingList: mergeItemList(),
      mergingIntList: { type: 'array', items: int, 'x-kubernetes-patch-strategy': 'merge' },
      nonMergingIntList: { type: 'array', items: int },
      mergeItemPtr: { $ref: '#/definitions/MergeItem', 'x-kubernetes-patch-strategy': 'merge', 'x-kubernetes-patch-merge-key': 'name' },
      simpleMap: { type: 'object', additionalProperties: str },
      replacingItem: { type: 'object', 'x-kubernetes-patch-strategy': 'replace' },
      retainKeysMap: { $ref: '#/definitions/RetainKeysMergeItem', 'x-kubernetes-patch-strategy': 'retainKeys' },
      retainKeysMergingList: mergeItemList({ 'x-kubernetes-patch-strategy': 'merge,retainKeys', 'x-kubernetes-patch-merge-key': 'name' }),
    },
  },
  RetainKeysMergeItem: {
    type: 'object',
    properties: {
      name: str,
      value: str,
      other: str,
      simpleMap: { type: 'object', additionalProperties: str },
      mergingIntList: { type: 'array', items: int, 'x-kubernetes-patch-strategy': 'merge' },
      mergingList: mergeItemList({ 'x-kubernetes-patch-strategy': 'merge', 'x-kubernetes-patch-merge-key': 'name' }),
      nonMergingList: mergeItemList(),
    },
  },
};
const schema = refTo('MergeItem');

interface Case {
  description: string;
  original: JsonValue;
  patch: JsonValue;
  result?: JsonValue;
  error?: string;
}

const cases = YAML.parse(`
- description: add a field
  original: {name: 1}
  patch: {value: 1}
  result: {name: 1, value: 1}
- description: change a field
  original: {name: 1, value: 1}
  patch: {value: 2}
  result: {name: 1, value: 2}
- description: delete a field with null
  original: {name: 1, value: 1}
  patch: {value: null}
  result: {name: 1}
- description: null for a field that is not there is ignored
  original: {name: 1}
  patch: {value: null}
  result: {name: 1}
- description: "$patch: replace on the whole map"
  original: {name: 1, value: 1, other: a}
  patch: {$patch: replace, value: 2}
  result: {value: 2}
- description: "$patch: delete on the whole map empties it"
  original: {name: 1, value: 1}
  patch: {$patch: delete}
  result: {}
- description: "$patch: delete on a nested map"
  original: {name: 1, simpleMap: {a: x}}
  patch: {simpleMap: {$patch: delete}}
  result: {name: 1, simpleMap: {}}
- description: "$patch: replace on a nested map"
  original: {simpleMap: {a: x, b: y}}
  patch: {simpleMap: {$patch: replace, c: z}}
  result: {simpleMap: {c: z}}
- description: maps without strategy merge key by key, nulls delete
  original: {simpleMap: {a: x, b: y}}
  patch: {simpleMap: {a: null, c: z}}
  result: {simpleMap: {b: y, c: z}}
# Upstream's normalizeElementOrder puts patch items first, in patch order, and slots live-only
# items back next to live neighbours that the patch also names: a new element comes before them.
- description: merging list of maps merges existing items; patch items lead
  original: {mergingList: [{name: 1, value: 1}, {name: 2, value: 2}]}
  patch: {mergingList: [{name: 1, value: 3}, {name: 3, value: 3}]}
  result: {mergingList: [{name: 1, value: 3}, {name: 3, value: 3}, {name: 2, value: 2}]}
- description: a new element of a merging list goes before live-only ones (kubectl patch adding a container)
  original: {mergingList: [{name: old, value: 1}]}
  patch: {mergingList: [{name: new, value: 2}]}
  result: {mergingList: [{name: new, value: 2}, {name: old, value: 1}]}
- description: merging list element field deleted with null
  original: {mergingList: [{name: 1, value: 1, other: a}]}
  patch: {mergingList: [{name: 1, value: null}]}
  result: {mergingList: [{name: 1, other: a}]}
- description: "$patch: delete removes list elements by merge key"
  original: {mergingList: [{name: 1}, {name: 2}, {name: 3}]}
  patch: {mergingList: [{name: 2, $patch: delete}]}
  result: {mergingList: [{name: 1}, {name: 3}]}
- description: "$patch: delete removes every element with that key"
  original: {mergingList: [{name: 1}, {name: 2, value: a}, {name: 2, value: b}]}
  patch: {mergingList: [{name: 2, $patch: delete}]}
  result: {mergingList: [{name: 1}]}
- description: "$patch: delete of a missing element is a no-op"
  original: {mergingList: [{name: 1}]}
  patch: {mergingList: [{name: 9, $patch: delete}]}
  result: {mergingList: [{name: 1}]}
- description: "$patch: replace in a merging list replaces the list"
  original: {mergingList: [{name: 1, value: 1}, {name: 2}]}
  patch: {mergingList: [{name: 3}, {$patch: replace}]}
  result: {mergingList: [{name: 3}]}
- description: "$patch: replace with nothing else empties the list"
  original: {mergingList: [{name: 1}]}
  patch: {mergingList: [{$patch: replace}]}
  result: {mergingList: []}
- description: non-merging list of maps is replaced
  original: {nonMergingList: [{name: 1, value: 1}, {name: 2}]}
  patch: {nonMergingList: [{name: 1, value: 2}]}
  result: {nonMergingList: [{name: 1, value: 2}]}
- description: merging primitive list adds and dedupes
  original: {mergingIntList: [1, 2]}
  patch: {mergingIntList: [2, 3]}
  result: {mergingIntList: [1, 2, 3]}
- description: non-merging primitive list is replaced
  original: {nonMergingIntList: [1, 2]}
  patch: {nonMergingIntList: [3]}
  result: {nonMergingIntList: [3]}
- description: "$deleteFromPrimitiveList removes values"
  original: {mergingIntList: [1, 2, 3]}
  patch: {$deleteFromPrimitiveList/mergingIntList: [1, 3]}
  result: {mergingIntList: [2]}
- description: "$deleteFromPrimitiveList together with additions"
  original: {mergingIntList: [1, 2, 3]}
  patch: {$deleteFromPrimitiveList/mergingIntList: [2], mergingIntList: [4]}
  result: {mergingIntList: [4, 1, 3]}
- description: "$deleteFromPrimitiveList on a missing list leaves the object alone"
  original: {name: a}
  patch: {$deleteFromPrimitiveList/mergingIntList: [1]}
  result: {name: a}
- description: "$setElementOrder orders a merging list of maps"
  original: {mergingList: [{name: 1}, {name: 2}, {name: 3}]}
  patch: {$setElementOrder/mergingList: [{name: 3}, {name: 2}, {name: 1}]}
  result: {mergingList: [{name: 3}, {name: 2}, {name: 1}]}
- description: "$setElementOrder with a change and a new item"
  original: {mergingList: [{name: 1, value: a}, {name: 2, value: b}]}
  patch:
    $setElementOrder/mergingList: [{name: 2}, {name: 4}, {name: 1}]
    mergingList: [{name: 4, value: d}, {name: 1, value: c}]
  result: {mergingList: [{name: 2, value: b}, {name: 4, value: d}, {name: 1, value: c}]}
- description: "$setElementOrder: a live-only item stays ahead of the listed items that followed it"
  original: {mergingList: [{name: 1}, {name: 2}, {name: 3}]}
  patch:
    $setElementOrder/mergingList: [{name: 3}, {name: 1}]
  result: {mergingList: [{name: 2}, {name: 3}, {name: 1}]}
- description: "$setElementOrder on a primitive list"
  original: {mergingIntList: [1, 2, 3]}
  patch: {$setElementOrder/mergingIntList: [3, 4, 1, 2], mergingIntList: [4]}
  result: {mergingIntList: [3, 4, 1, 2]}
- description: "$setElementOrder with a deletion in the patch list"
  original: {mergingList: [{name: 1}, {name: 2}]}
  patch:
    $setElementOrder/mergingList: [{name: 2}]
    mergingList: [{name: 1, $patch: delete}]
  result: {mergingList: [{name: 2}]}
- description: nested merging lists merge recursively
  original: {mergingList: [{name: 1, mergingList: [{name: a, value: x}]}]}
  patch: {mergingList: [{name: 1, mergingList: [{name: b, value: y}]}]}
  result: {mergingList: [{name: 1, mergingList: [{name: b, value: y}, {name: a, value: x}]}]}
- description: replace strategy replaces the map
  original: {replacingItem: {a: 1, b: 2}}
  patch: {replacingItem: {c: 3}}
  result: {replacingItem: {c: 3}}
- description: "$retainKeys drops keys not listed"
  original: {retainKeysMap: {name: a, value: b, other: c}}
  patch: {retainKeysMap: {$retainKeys: [name, value], value: z}}
  result: {retainKeysMap: {name: a, value: z}}
- description: "$retainKeys with nested strategies still merging"
  original: {retainKeysMap: {name: a, mergingIntList: [1], simpleMap: {k: v}}}
  patch: {retainKeysMap: {$retainKeys: [mergingIntList], mergingIntList: [2]}}
  result: {retainKeysMap: {mergingIntList: [2, 1]}}
- description: "$retainKeys inside a merge,retainKeys list element"
  original: {retainKeysMergingList: [{name: 1, value: a, other: b}, {name: 2, value: c}]}
  patch: {retainKeysMergingList: [{name: 1, $retainKeys: [name, other], other: z}]}
  result: {retainKeysMergingList: [{name: 1, other: z}, {name: 2, value: c}]}
- description: "$retainKeys allows null for keys not listed"
  original: {retainKeysMap: {name: a, value: b}}
  patch: {retainKeysMap: {$retainKeys: [name], value: null}}
  result: {retainKeysMap: {name: a}}
- description: a new subtree drops nulls and directives
  original: {name: 1}
  patch: {simpleMap: {a: x, b: null}, mergingList: [{name: 1, $patch: delete}, {name: 2, value: null}]}
  result: {name: 1, simpleMap: {a: x}, mergingList: [{name: 2}]}
- description: type change replaces the value
  original: {name: 1, simpleMap: {a: x}}
  patch: {simpleMap: foo}
  result: {name: 1, simpleMap: foo}
- description: fields unknown to the schema behave like a JSON merge patch
  original: {extra: {a: [1, 2], b: {c: 1}}}
  patch: {extra: {a: [3], b: {c: null, d: 2}}}
  result: {extra: {a: [3], b: {d: 2}}}
- description: "$patch: merge in a map is an unknown patch type"
  original: {simpleMap: {a: x}}
  patch: {simpleMap: {$patch: merge}}
  error: "unknown patch type: merge in map: map[$patch:merge]"
- description: "$patch: merge in a list is not supported"
  original: {mergingList: [{name: 1}]}
  patch: {mergingList: [{$patch: merge}]}
  error: merging lists cannot yet be specified in the patch
- description: "unknown $patch value in a list"
  original: {mergingList: [{name: 1}]}
  patch: {mergingList: [{name: 1, $patch: frob}]}
  error: "unknown patch type: frob in map: map[$patch:frob name:1]"
- description: merging list element without its merge key
  original: {mergingList: [{name: 1}]}
  patch: {mergingList: [{value: 1}]}
  error: "map: map[value:1] does not contain declared merge key: name"
- description: "$retainKeys not a list"
  original: {retainKeysMap: {name: a}}
  patch: {retainKeysMap: {$retainKeys: name}}
  error: invalid patch format of retainKeys
- description: "$retainKeys missing a patched key"
  original: {retainKeysMap: {name: a}}
  patch: {retainKeysMap: {$retainKeys: [name], value: b}}
  error: invalid patch format of retainKeys
- description: "$setElementOrder disagreeing with the patch list"
  original: {mergingList: [{name: 1}, {name: 2}]}
  patch:
    $setElementOrder/mergingList: [{name: 1}]
    mergingList: [{name: 2}]
  error: "The order in patch list:\\n[map[name:2]]\\n doesn't match $setElementOrder list:\\n[map[name:1]]\\n"
- description: bad $deleteFromPrimitiveList key
  original: {mergingIntList: [1]}
  patch: {$deleteFromPrimitiveListmergingIntList: [1]}
  error: invalid patch format of primitive list
`) as Case[];

test('at least 30 ported cases', () => assert.ok(cases.length >= 30));

for (const c of cases) {
  test(`smp: ${c.description}`, () => {
    const before = structuredClone(c.original);
    const patchBefore = structuredClone(c.patch);
    if (c.error !== undefined) {
      assert.throws(
        () => strategicMergePatch(c.original, c.patch, schema, defs),
        (e: unknown) => isStatusError(e) && e.code === 400 && e.status.message === c.error,
      );
    } else {
      assert.deepEqual(strategicMergePatch(c.original, c.patch, schema, defs), c.result);
    }
    assert.deepEqual(c.original, before, 'original must not be modified');
    assert.deepEqual(c.patch, patchBefore, 'patch must not be modified');
  });
}

test('lists of lists are rejected with 422 like upstream', () => {
  assert.throws(
    () => strategicMergePatch({ mergingIntList: [[1]] }, { mergingIntList: [[2]] }, schema, defs),
    (e: unknown) => isStatusError(e) && e.code === 422 && e.reason === 'Invalid',
  );
});

test('a non-object patch is a 400; null is a no-op', () => {
  assert.throws(
    () => strategicMergePatch({}, [1], schema, defs),
    (e: unknown) => isStatusError(e) && e.code === 400,
  );
  assert.deepEqual(strategicMergePatch({ a: 1 }, null, schema, defs), { a: 1 });
});
