import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { OpenAPISchema } from '../apimachinery/schema.js';
import { BUILTIN_GROUP_VERSIONS } from '../apimachinery/definitions/meta.js';
import { builtinDefinitions, builtinResources } from './builtin.js';

function* refsOf(s: OpenAPISchema | undefined): Generator<string> {
  if (s === undefined) return;
  if (s.$ref !== undefined) yield s.$ref;
  for (const p of Object.values(s.properties ?? {})) yield* refsOf(p);
  if (typeof s.additionalProperties === 'object') yield* refsOf(s.additionalProperties);
  yield* refsOf(s.items);
}

test('every $ref points at an existing definition', () => {
  for (const [name, def] of Object.entries(builtinDefinitions)) {
    for (const ref of refsOf(def)) {
      assert.ok(ref.startsWith('#/definitions/'), `${name}: ${ref}`);
      assert.ok(ref.slice('#/definitions/'.length) in builtinDefinitions, `${name} references missing ${ref}`);
    }
  }
});

test('every descriptor kind and list kind has a definition with its GVK', () => {
  for (const r of builtinResources) {
    for (const [defName, kind] of [
      [r.definitionName, r.kind],
      [r.definitionName + 'List', r.listKind],
    ] as const) {
      const def = builtinDefinitions[defName];
      assert.ok(def, `missing ${defName}`);
      const gvks = def['x-kubernetes-group-version-kind'] ?? [];
      assert.ok(
        gvks.some((g) => g.group === r.group && g.version === r.version && g.kind === kind),
        `${defName} lacks GVK ${r.group}/${r.version} ${kind}`,
      );
    }
  }
});

test('every descriptor group-version has DeleteOptions and WatchEvent GVKs', () => {
  for (const r of builtinResources) {
    assert.ok(BUILTIN_GROUP_VERSIONS.some((gv) => gv.group === r.group && gv.version === r.version));
  }
  for (const kind of ['DeleteOptions', 'WatchEvent']) {
    const gvks = builtinDefinitions['io.k8s.apimachinery.pkg.apis.meta.v1.' + kind]?.['x-kubernetes-group-version-kind'] ?? [];
    for (const gv of BUILTIN_GROUP_VERSIONS) {
      assert.ok(
        gvks.some((g) => g.group === gv.group && g.version === gv.version && g.kind === kind),
        `${kind} ${gv.group}/${gv.version}`,
      );
    }
  }
});

test('patch metadata used by strategic merge patch is present', () => {
  const om = builtinDefinitions['io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta']?.properties;
  assert.equal(om?.ownerReferences?.['x-kubernetes-patch-merge-key'], 'uid');
  assert.equal(om?.finalizers?.['x-kubernetes-patch-strategy'], 'merge');
  const sa = builtinDefinitions['io.k8s.api.core.v1.ServiceAccount']?.properties;
  assert.deepEqual(sa?.secrets?.['x-kubernetes-list-map-keys'], ['name']);
  const secretValues = builtinDefinitions['io.k8s.api.core.v1.Secret']?.properties?.data?.additionalProperties;
  assert.equal(typeof secretValues === 'object' ? secretValues.format : undefined, 'byte');
});

test('every described field has a description', () => {
  for (const [name, def] of Object.entries(builtinDefinitions)) {
    assert.ok(def.description, `${name} has no description`);
    for (const [f, p] of Object.entries(def.properties ?? {})) assert.ok(p.description, `${name}.${f} has no description`);
  }
});
