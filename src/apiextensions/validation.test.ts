// CustomResourceDefinition validation, cases after upstream's
// pkg/apis/apiextensions/validation/validation_test.go and the v1 conversion's hoisting of
// identical per-version fields (which decides the field paths of errors).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { issueString } from '../apimachinery/errors.js';
import { crdStrategy } from './crd-strategy.js';
import { compileJSONPath } from './jsonpath.js';
import type { CRDVersion, CustomResourceDefinition } from './types.js';
import { apiApprovalState, defaultCRD, validateCRD } from './validation.js';

const schema = { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: { a: { type: 'string' } } } } } };

function crd(mut: (c: CustomResourceDefinition) => void = () => {}): CustomResourceDefinition {
  const c: CustomResourceDefinition = {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'plural.group.com' },
    spec: {
      group: 'group.com',
      scope: 'Namespaced',
      names: { plural: 'plural', singular: 'singular', kind: 'Plural', listKind: 'PluralList' },
      versions: [{ name: 'v1', served: true, storage: true, schema: structuredClone(schema) }],
    },
    status: { storedVersions: ['v1'] },
  };
  mut(c);
  defaultCRD(c);
  return c;
}
const errs = (c: CustomResourceDefinition, old?: CustomResourceDefinition): string[] => validateCRD(c, old).map(issueString);
const version = (name: string, extra: Partial<CRDVersion> = {}): CRDVersion => ({
  name,
  served: true,
  storage: false,
  schema: structuredClone(schema),
  ...extra,
});

describe('validateCRD: names and group', () => {
  it('accepts a minimal CRD', () => assert.deepEqual(errs(crd()), []));
  it('name must be <plural>.<group>', () =>
    assert.deepEqual(errs(crd((c) => (c.metadata!.name = 'other.group.com'))), [
      'metadata.name: Invalid value: "other.group.com": must be spec.names.plural+"."+spec.group',
    ]));
  it('group must contain a dot', () =>
    assert.deepEqual(errs(crd((c) => ((c.spec!.group = 'group'), (c.metadata!.name = 'plural.group')))), [
      'spec.group: Invalid value: "group": should be a domain with at least one dot',
    ]));
  it('group is required', () => assert.ok(errs(crd((c) => delete c.spec!.group)).includes('spec.group: Required value')));
  it('scope must be Cluster or Namespaced', () =>
    assert.deepEqual(errs(crd((c) => (c.spec!.scope = 'Foo'))), ['spec.scope: Unsupported value: "Foo": supported values: "Cluster", "Namespaced"']));
  it('names must be DNS-1035 labels (kind may have mixed case)', () => {
    const e = errs(
      crd((c) => {
        c.metadata!.name = 'Plural.group.com';
        c.spec!.names = { plural: 'Plural', singular: 'Singular', kind: 'Plural$', listKind: 'Plural$List', shortNames: ['a.b'], categories: ['Bad'] };
      }),
    );
    assert.ok(
      e.some((x) => x.startsWith('spec.names.plural: Invalid value: "Plural": a DNS-1035 label must consist of lower case')),
      e.join('\n'),
    );
    assert.ok(e.some((x) => x.startsWith('spec.names.singular: Invalid value: "Singular"')));
    assert.ok(e.some((x) => x.startsWith('spec.names.kind: Invalid value: "Plural$": may have mixed case, but should otherwise match: a DNS-1035 label')));
    assert.ok(e.some((x) => x.startsWith('spec.names.shortNames[0]: Invalid value: "a.b"')));
    assert.ok(e.some((x) => x.startsWith('spec.names.categories[0]: Invalid value: "Bad"')));
  });
  it('kind and listKind may not be the same', () =>
    assert.ok(
      errs(crd((c) => (c.spec!.names!.listKind = 'Plural'))).includes('spec.names.listKind: Invalid value: "Plural": kind and listKind may not be the same'),
    ));
  it('defaults singular and listKind from kind', () => {
    const c = crd((c) => (c.spec!.names = { plural: 'plural', kind: 'Plural' }));
    assert.equal(c.spec!.names!.singular, 'plural');
    assert.equal(c.spec!.names!.listKind, 'PluralList');
    assert.equal(c.spec!.conversion?.strategy, 'None');
    assert.deepEqual(errs(c), []);
  });
  it('kind is required', () =>
    assert.ok(errs(crd((c) => (c.spec!.names = { plural: 'plural', singular: 'plural' }))).includes('spec.names.kind: Required value')));
});

describe('validateCRD: versions', () => {
  it('exactly one storage version', () => {
    assert.ok(errs(crd((c) => (c.spec!.versions![0]!.storage = false))).some((e) => e.endsWith('must have exactly one version marked as storage version')));
    assert.ok(
      errs(crd((c) => c.spec!.versions!.push(version('v2', { storage: true })))).some((e) =>
        e.endsWith('must have exactly one version marked as storage version'),
      ),
    );
  });
  it('unique version names', () =>
    assert.ok(
      errs(crd((c) => c.spec!.versions!.push(version('v1')))).some(
        (e) => e.startsWith('spec.versions: Invalid value') && e.endsWith('must contain unique version names'),
      ),
    ));
  it('version names are DNS-1035 labels', () =>
    assert.ok(
      errs(crd((c) => c.spec!.versions!.push(version('V2')))).some((e) => e.startsWith('spec.versions[1].name: Invalid value: "V2": a DNS-1035 label')),
    ));
  it('a schema is required per version', () =>
    assert.ok(errs(crd((c) => delete c.spec!.versions![0]!.schema)).includes('spec.versions[0].schema.openAPIV3Schema: Required value')));
  it('deprecationWarning only for deprecated versions', () => {
    assert.deepEqual(errs(crd((c) => (c.spec!.versions![0]!.deprecationWarning = 'x'))), [
      'spec.versions[0].deprecationWarning: Invalid value: "x": can only be set for deprecated versions',
    ]);
    assert.deepEqual(errs(crd((c) => Object.assign(c.spec!.versions![0]!, { deprecated: true, deprecationWarning: 'x'.repeat(257) }))).length, 1);
    assert.deepEqual(errs(crd((c) => Object.assign(c.spec!.versions![0]!, { deprecated: true, deprecationWarning: 'a\tb' }))), [
      'spec.versions[0].deprecationWarning: Invalid value: "a\\tb": must only contain printable UTF-8 characters; control character found at index 1',
    ]);
    assert.deepEqual(errs(crd((c) => Object.assign(c.spec!.versions![0]!, { deprecated: true, deprecationWarning: 'use v2' }))), []);
  });
  it('storedVersions must include the storage version and be in spec.versions', () => {
    assert.deepEqual(errs(crd((c) => (c.status!.storedVersions = ['v0', 'v1']))), [
      'status.storedVersions[0]: Invalid value: "v0": missing from spec.versions; v0 was previously a storage version, and must remain in spec.versions until a storage migration ensures no data remains persisted in v0 and removes v0 from status.storedVersions',
    ]);
    assert.ok(errs(crd((c) => (c.status!.storedVersions = [])))[0]!.endsWith('must have at least one stored version'));
  });
});

describe('validateCRD: schemas (paths follow the internal form)', () => {
  const nonStructural = { type: 'object', properties: { spec: { properties: { a: { type: 'string' } } } } };
  it('a single version reports at spec.validation (hoisted like upstream)', () =>
    assert.deepEqual(errs(crd((c) => (c.spec!.versions![0]!.schema = { openAPIV3Schema: structuredClone(nonStructural) }))), [
      'spec.validation.openAPIV3Schema.properties[spec].type: Required value: must not be empty for specified object fields',
    ]));
  it('different per-version schemas report at spec.versions[i].schema', () => {
    const e = errs(
      crd((c) => {
        c.spec!.versions!.push(version('v2'));
        c.spec!.versions![1]!.schema = { openAPIV3Schema: structuredClone(nonStructural) };
      }),
    );
    assert.deepEqual(e, ['spec.versions[1].schema.openAPIV3Schema.properties[spec].type: Required value: must not be empty for specified object fields']);
  });
  it('status subresource restricts the root', () =>
    assert.ok(
      errs(
        crd((c) => {
          c.spec!.versions![0]!.subresources = { status: {} };
          c.spec!.versions![0]!.schema!.openAPIV3Schema!.type = 'string';
        }),
      ).some((e) => e.includes('only "object" is allowed as the type at the root of the schema if the status subresource is enabled')),
    ));
  it('an unchanged accepted schema is not re-validated on update', () => {
    const old = crd();
    old.spec!.versions![0]!.schema = { openAPIV3Schema: structuredClone(nonStructural) };
    const next = structuredClone(old);
    next.spec!.versions![0]!.additionalPrinterColumns = [{ name: 'A', type: 'string', jsonPath: '.spec.a' }];
    assert.deepEqual(errs(next, old), []);
  });
});

describe('validateCRD: subresources, columns, selectable fields, conversion', () => {
  it('scale paths', () => {
    const e = errs(
      crd(
        (c) =>
          (c.spec!.versions![0]!.subresources = { scale: { specReplicasPath: '.status.x', statusReplicasPath: 'status.y', labelSelectorPath: '.metadata.z' } }),
      ),
    );
    assert.deepEqual(e, [
      'spec.subresources.scale.specReplicasPath: Invalid value: ".status.x": should be a json path under .spec',
      'spec.subresources.scale.statusReplicasPath: Invalid value: "status.y": must be a simple json path starting with .',
      'spec.subresources.scale.labelSelectorPath: Invalid value: ".metadata.z": should be a json path under either .spec or .status',
    ]);
    assert.ok(errs(crd((c) => (c.spec!.versions![0]!.subresources = { scale: {} }))).includes('spec.subresources.scale.specReplicasPath: Required value'));
  });
  it('printer columns', () => {
    const e = errs(
      crd(
        (c) =>
          (c.spec!.versions![0]!.additionalPrinterColumns = [
            { name: '', type: 'color', format: 'x', jsonPath: 'spec' },
            { name: 'b', type: 'string', jsonPath: '.spec[' },
          ]),
      ),
    );
    assert.deepEqual(e.slice(0, 4), [
      'spec.additionalPrinterColumns[0].name: Required value',
      'spec.additionalPrinterColumns[0].type: Invalid value: "color": must be one of boolean,date,integer,number,string',
      'spec.additionalPrinterColumns[0].format: Invalid value: "x": must be one of byte,date,date-time,double,float,int32,int64,password',
      'spec.additionalPrinterColumns[0].JSONPath: Invalid value: "spec": must be a simple json path starting with .',
    ]);
    assert.ok(e[4]!.startsWith('spec.additionalPrinterColumns[1].JSONPath: Invalid value: ".spec[": is not a valid JSONPath'));
  });
  it('selectable fields', () => {
    const e = errs(
      crd(
        (c) =>
          (c.spec!.versions![0]!.selectableFields = [{ jsonPath: '.spec.a' }, { jsonPath: '.spec.nope' }, { jsonPath: '.spec' }, { jsonPath: '.spec.a' }, {}]),
      ),
    );
    assert.deepEqual(e, [
      'spec.selectableFields[1].jsonPath: Invalid value: ".spec.nope": is an invalid path: does not refer to a valid field',
      'spec.selectableFields[2].jsonPath: Invalid value: ".spec": must point to a field of type string, boolean or integer. Enum string fields and strings with formats are allowed.',
      'spec.selectableFields[3].jsonPath: Duplicate value: ".spec.a"',
      'spec.selectableFields[4].jsonPath: Required value',
    ]);
  });
  it('conversion', () => {
    assert.deepEqual(errs(crd((c) => (c.spec!.conversion = { strategy: 'Magic' }))), [
      'spec.conversion.strategy: Unsupported value: "Magic": supported values: "None", "Webhook"',
    ]);
    assert.deepEqual(errs(crd((c) => (c.spec!.conversion = { strategy: 'Webhook' }))), [
      'spec.conversion.webhookClientConfig: Required value: required when strategy is set to Webhook',
      'spec.conversion.conversionReviewVersions: Required value',
    ]);
    assert.deepEqual(
      errs(
        crd((c) => (c.spec!.conversion = { strategy: 'Webhook', webhook: { clientConfig: { url: 'https://x.example/c' }, conversionReviewVersions: ['v1'] } })),
      ),
      [],
    );
    assert.deepEqual(errs(crd((c) => (c.spec!.conversion = { strategy: 'None', webhook: { clientConfig: { url: 'https://x' } } }))), [
      'spec.conversion.webhookClientConfig: Forbidden: should not be set when strategy is not set to Webhook',
    ]);
  });
  it('preserveUnknownFields cannot be true', () =>
    assert.deepEqual(errs(crd((c) => (c.spec!.preserveUnknownFields = true))), [
      'spec.preserveUnknownFields: Invalid value: true: cannot set to true, set x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead',
    ]));
});

describe('validateCRD: protected groups and updates', () => {
  const k8s = (ann?: string) =>
    crd((c) => {
      c.spec!.group = 'x.k8s.io';
      c.metadata!.name = 'plural.x.k8s.io';
      if (ann !== undefined) c.metadata!.annotations = { 'api-approved.kubernetes.io': ann };
    });
  it('needs the approval annotation', () => {
    assert.deepEqual(errs(k8s()), [
      'metadata.annotations[api-approved.kubernetes.io]: Required value: protected groups must have approval annotation "api-approved.kubernetes.io", see https://github.com/kubernetes/enhancements/pull/1111',
    ]);
    assert.deepEqual(errs(k8s('https://github.com/kubernetes/kubernetes/pull/78458')), []);
    assert.deepEqual(errs(k8s('unapproved, experimental')), []);
    assert.match(
      errs(k8s('maybe'))[0]!,
      /^metadata.annotations\[api-approved.kubernetes.io\]: Invalid value: "maybe": protected groups must have approval annotation "api-approved.kubernetes.io" with either a URL or a reason starting with "unapproved"/,
    );
    assert.equal(apiApprovalState({ 'api-approved.kubernetes.io': 'https://x.io/1' }).state, 'Approved');
  });
  it('group and plural are immutable; scope and kind once established', () => {
    const old = crd();
    const next = crd((c) => {
      c.spec!.group = 'other.com';
      c.spec!.scope = 'Cluster';
    });
    assert.deepEqual(errs(next, old), ['spec.group: Invalid value: "other.com": field is immutable']);
    old.status!.conditions = [{ type: 'Established', status: 'True' }];
    assert.deepEqual(errs(next, old), [
      'spec.scope: Invalid value: "Cluster": field is immutable',
      'spec.group: Invalid value: "other.com": field is immutable',
    ]);
  });
});

describe('crdStrategy', () => {
  const s = crdStrategy();
  it('resets status and sets generation and storedVersions on create', () => {
    const c = crd((c) => (c.status = { conditions: [{ type: 'Established', status: 'True' }] }));
    s.prepareForCreate(c);
    assert.deepEqual(c.status, { storedVersions: ['v1'] });
    assert.equal(c.metadata!.generation, 1);
  });
  it('keeps status and bumps generation only on spec changes', () => {
    const old = crd();
    old.metadata!.generation = 3;
    old.status = { storedVersions: ['v1'], conditions: [{ type: 'Established', status: 'True' }] };
    const same = crd((c) => (c.metadata!.labels = { a: 'b' }));
    s.prepareForUpdate(same, old);
    assert.equal(same.metadata!.generation, 3);
    assert.deepEqual(same.status, old.status);
    const changed = crd((c) => {
      c.spec!.versions![0]!.storage = false;
      c.spec!.versions!.push(version('v2', { storage: true }));
    });
    s.prepareForUpdate(changed, old);
    assert.equal(changed.metadata!.generation, 4);
    assert.deepEqual(changed.status!.storedVersions, ['v1', 'v2']);
  });
  it('malformed bodies are a 400, not a 500', () =>
    assert.throws(
      () => s.validate({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: 'a.b.c' }, spec: { versions: 'x' } }),
      (e: unknown) => (e as { code?: number }).code === 400,
    ));
});

describe('jsonpath', () => {
  const obj = {
    spec: {
      a: 1,
      l: [
        { n: 'x', v: 1 },
        { n: 'y', v: 2 },
      ],
      'k.d': 'dot',
    },
    status: { conditions: [{ type: 'Ready', status: 'True' }] },
  };
  it('evaluates the subset printer columns use', () => {
    assert.deepEqual(compileJSONPath('.spec.a').find(obj), [1]);
    assert.deepEqual(compileJSONPath('.spec.l[1].n').find(obj), ['y']);
    assert.deepEqual(compileJSONPath('.spec.l[*].v').find(obj), [1, 2]);
    assert.deepEqual(compileJSONPath(".spec['k.d']").find(obj), ['dot']);
    assert.deepEqual(compileJSONPath('.status.conditions[?(@.type=="Ready")].status').find(obj), ['True']);
    assert.deepEqual(compileJSONPath('.spec.l[?(@.v > 1)].n').find(obj), ['y']);
    assert.deepEqual(compileJSONPath('..n').find(obj), ['x', 'y']);
    assert.deepEqual(compileJSONPath('.spec.missing').find(obj), []);
    assert.throws(() => compileJSONPath('.spec[0'));
  });
});
