// Expected messages were produced by sigs.k8s.io/json (the decoder kube-apiserver uses) decoding
// into Go structs that mirror the k8s.io/api types, except where noted as Go 1.24 time.Parse
// behaviour (read from Go 1.24's time/format.go; the cross-check ran Go 1.19's time package).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { builtinDefinitions } from '../registry/builtin.js';
import { apiextensionsDefinitions } from '../apiextensions/definitions.js';
import { builtinScheme } from '../controlplane/modules.js';
import { goTypeError as goTypeErrorWith } from './gotypes.js';
import { parseQuantityError } from './quantity.js';
import { parseJson } from './json.js';
import type { Definitions } from './schema.js';

// The Go field types of every built-in kind, as a control plane serving them all holds them.
const fieldTypes = builtinScheme().goFieldTypes;
const goTypeError = (value: unknown, def: string, defs: Definitions): string | undefined => goTypeErrorWith(value, def, defs, fieldTypes);

const LEASE = 'io.k8s.api.coordination.v1.Lease';
const SA = 'io.k8s.api.core.v1.ServiceAccount';
const EVENT = 'io.k8s.api.core.v1.Event';
const EVENTS_V1 = 'io.k8s.api.events.v1.Event';
const NS = 'io.k8s.api.core.v1.Namespace';
const CM = 'io.k8s.api.core.v1.ConfigMap';
const SECRET = 'io.k8s.api.core.v1.Secret';
const META = 'io.k8s.apimachinery.pkg.apis.meta.v1.';
const CORE = 'io.k8s.api.core.v1.';

const check = (def: string, body: string, want: string | undefined, defs: Definitions = builtinDefinitions) =>
  assert.equal(goTypeError(JSON.parse(body), def, defs), want, body);

const ref = (d: string) => ({ $ref: '#/definitions/' + d });
/** A synthetic kind for what the five built-in kinds do not use. */
const widgetDefs: Definitions = {
  ...builtinDefinitions,
  'io.k8s.apimachinery.pkg.util.intstr.IntOrString': { type: 'string', format: 'int-or-string' },
  'io.k8s.apimachinery.pkg.api.resource.Quantity': { type: 'string' },
  [CORE + 'Widget']: {
    type: 'object',
    properties: {
      ios: ref('io.k8s.apimachinery.pkg.util.intstr.IntOrString'),
      crdIos: { 'x-kubernetes-int-or-string': true },
      qty: ref('io.k8s.apimachinery.pkg.api.resource.Quantity'),
      data: { type: 'string', format: 'byte' },
      f64: { type: 'number', format: 'double' },
      f32: { type: 'number', format: 'float' },
      counts: { type: 'object', additionalProperties: { type: 'integer', format: 'int32' } },
      nested: { type: 'array', items: { type: 'array', items: { type: 'string' } } },
      raw: ref('io.k8s.apimachinery.pkg.runtime.RawExtension'),
      refs: { type: 'object', additionalProperties: ref(CORE + 'ObjectReference') },
      times: { type: 'array', items: ref(META + 'Time') },
      blobs: { type: 'object', additionalProperties: { type: 'string', format: 'byte' } },
      any: {},
      obj: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
      inner: ref(CORE + 'Widget'),
      flag: { type: 'boolean' },
    },
  },
};
const W = CORE + 'Widget';

describe('goTypeError: coordination/v1 Lease', () => {
  it('accepts well-typed bodies, nulls and unknown (or wrongly cased) fields', () => {
    check(
      LEASE,
      '{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"a","labels":{"a":"b"}},"spec":{"holderIdentity":"x","leaseDurationSeconds":15,"acquireTime":"2024-01-02T03:04:05.123456Z","renewTime":null,"leaseTransitions":0}}',
      undefined,
    );
    check(LEASE, '{"spec":{"holderIdentity":null,"leaseDurationSeconds":null,"renewTime":null},"metadata":null}', undefined);
    check(LEASE, '{"Spec":{"holderIdentity":5},"spec":{"HolderIdentity":5,"bogus":[1]}}', undefined);
    check(LEASE, '{"spec":{"leaseDurationSeconds":-0}}', undefined);
    check(LEASE, 'null', undefined);
  });
  it('names the innermost struct and the full JSON path', () => {
    check(LEASE, '{"spec":{"holderIdentity":5}}', 'json: cannot unmarshal number into Go struct field LeaseSpec.spec.holderIdentity of type string');
    check(
      LEASE,
      '{"spec":{"leaseDurationSeconds":"5"}}',
      'json: cannot unmarshal string into Go struct field LeaseSpec.spec.leaseDurationSeconds of type int32',
    );
    check(LEASE, '{"spec":{"strategy":false}}', 'json: cannot unmarshal bool into Go struct field LeaseSpec.spec.strategy of type v1.CoordinatedLeaseStrategy');
    check(LEASE, '{"spec":5}', 'json: cannot unmarshal number into Go struct field Lease.spec of type v1.LeaseSpec');
    check(LEASE, '{"spec":[]}', 'json: cannot unmarshal array into Go struct field Lease.spec of type v1.LeaseSpec');
    check(LEASE, '{"kind":5}', 'json: cannot unmarshal number into Go struct field Lease.kind of type string');
  });
  it('reports a number that does not fit an int with its literal', () => {
    check(
      LEASE,
      '{"spec":{"leaseDurationSeconds":3000000000}}',
      'json: cannot unmarshal number 3000000000 into Go struct field LeaseSpec.spec.leaseDurationSeconds of type int32',
    );
    check(
      LEASE,
      '{"spec":{"leaseTransitions":-2147483649}}',
      'json: cannot unmarshal number -2147483649 into Go struct field LeaseSpec.spec.leaseTransitions of type int32',
    );
    check(LEASE, '{"spec":{"leaseTransitions":2147483647}}', undefined);
    check(
      LEASE,
      '{"spec":{"leaseDurationSeconds":1.5}}',
      'json: cannot unmarshal number 1.5 into Go struct field LeaseSpec.spec.leaseDurationSeconds of type int32',
    );
    check(LEASE, '{"metadata":{"generation":9007199254740991}}', undefined);
    check(LEASE, '{"metadata":{"generation":-0.5}}', 'json: cannot unmarshal number -0.5 into Go struct field ObjectMeta.metadata.generation of type int64');
    assert.equal(
      goTypeError({ metadata: { generation: 9223372036854775808n } }, LEASE, builtinDefinitions),
      'json: cannot unmarshal number 9223372036854775808 into Go struct field ObjectMeta.metadata.generation of type int64',
    );
    assert.equal(goTypeError({ metadata: { generation: 9223372036854775807n } }, LEASE, builtinDefinitions), undefined);
  });
  it('keeps the first soft error, in document order', () => {
    check(
      LEASE,
      '{"spec":{"leaseTransitions":"x","holderIdentity":5}}',
      'json: cannot unmarshal string into Go struct field LeaseSpec.spec.leaseTransitions of type int32',
    );
    check(LEASE, '{"metadata":{"name":1},"spec":5}', 'json: cannot unmarshal number into Go struct field ObjectMeta.metadata.name of type string');
  });
  it('lets a MicroTime error abort the decode and win over an earlier type error', () => {
    check(LEASE, '{"spec":{"holderIdentity":5,"renewTime":"x"}}', 'parsing time "x" as "2006-01-02T15:04:05.000000Z07:00": cannot parse "x" as "2006"');
    check(LEASE, '{"spec":{"holderIdentity":5,"renewTime":5}}', 'json: cannot unmarshal number into Go struct field LeaseSpec.spec.renewTime of type string');
    check(LEASE, '{"spec":{"renewTime":{}}}', 'json: cannot unmarshal object into Go struct field LeaseSpec.spec.renewTime of type string');
    check(
      LEASE,
      '{"spec":{"acquireTime":"2024-01-01T00:00:00Z"}}',
      'parsing time "2024-01-01T00:00:00Z" as "2006-01-02T15:04:05.000000Z07:00": cannot parse "Z" as ".000000"',
    );
  });
  it('checks ObjectMeta: maps, owner references, managed fields, timestamps', () => {
    check(LEASE, '{"metadata":{"labels":{"a":5,"b":true}}}', 'json: cannot unmarshal number into Go struct field ObjectMeta.metadata.labels of type string');
    check(
      LEASE,
      '{"metadata":{"annotations":[]}}',
      'json: cannot unmarshal array into Go struct field ObjectMeta.metadata.annotations of type map[string]string',
    );
    check(
      LEASE,
      '{"metadata":{"ownerReferences":[{"uid":5}]}}',
      'json: cannot unmarshal number into Go struct field OwnerReference.metadata.ownerReferences.uid of type types.UID',
    );
    check(
      LEASE,
      '{"metadata":{"ownerReferences":[{"controller":"yes"}]}}',
      'json: cannot unmarshal string into Go struct field OwnerReference.metadata.ownerReferences.controller of type bool',
    );
    check(
      LEASE,
      '{"metadata":{"ownerReferences":{}}}',
      'json: cannot unmarshal object into Go struct field ObjectMeta.metadata.ownerReferences of type []v1.OwnerReference',
    );
    check(LEASE, '{"metadata":{"finalizers":[1]}}', 'json: cannot unmarshal number into Go struct field ObjectMeta.metadata.finalizers of type string');
    check(LEASE, '{"metadata":{"uid":1}}', 'json: cannot unmarshal number into Go struct field ObjectMeta.metadata.uid of type types.UID');
    check(
      LEASE,
      '{"metadata":{"managedFields":[{"operation":5}]}}',
      'json: cannot unmarshal number into Go struct field ManagedFieldsEntry.metadata.managedFields.operation of type v1.ManagedFieldsOperationType',
    );
    check(
      LEASE,
      '{"metadata":{"managedFields":[{"fieldsV1":5,"time":"bad"}]}}',
      'parsing time "bad" as "2006-01-02T15:04:05Z07:00": cannot parse "bad" as "2006"',
    );
    check(LEASE, '{"metadata":{"managedFields":[{"fieldsV1":{"f:metadata":{}}}]}}', undefined);
    check(
      LEASE,
      '{"metadata":{"creationTimestamp":5}}',
      'json: cannot unmarshal number into Go struct field ObjectMeta.metadata.creationTimestamp of type string',
    );
    check(LEASE, '{"metadata":{"creationTimestamp":"2024-01-01T00:00:00.123Z","deletionTimestamp":"2024-01-01T00:00:00+01:00"}}', undefined);
  });
  it('reports a value that is not an object at the root without a field', () => {
    check(LEASE, '[1]', 'json: cannot unmarshal array into Go value of type v1.Lease');
    check(LEASE, '"x"', 'json: cannot unmarshal string into Go value of type v1.Lease');
  });
});

describe('goTypeError: core/v1 ServiceAccount', () => {
  it('checks slices of structs and their elements', () => {
    check(SA, '{"secrets":[{"name":"a"}],"imagePullSecrets":[{"name":"b"}],"automountServiceAccountToken":false}', undefined);
    check(SA, '{"secrets":"x"}', 'json: cannot unmarshal string into Go struct field ServiceAccount.secrets of type []v1.ObjectReference');
    check(SA, '{"secrets":[5]}', 'json: cannot unmarshal number into Go struct field ServiceAccount.secrets of type v1.ObjectReference');
    check(
      SA,
      '{"secrets":[null,{"name":5}],"automountServiceAccountToken":"true"}',
      'json: cannot unmarshal number into Go struct field ObjectReference.secrets.name of type string',
    );
    check(
      SA,
      '{"automountServiceAccountToken":"true"}',
      'json: cannot unmarshal string into Go struct field ServiceAccount.automountServiceAccountToken of type bool',
    );
    check(
      SA,
      '{"imagePullSecrets":{"name":"x"}}',
      'json: cannot unmarshal object into Go struct field ServiceAccount.imagePullSecrets of type []v1.LocalObjectReference',
    );
  });
});

describe('goTypeError: core/v1 Event', () => {
  it('checks counts, series, references and both time types', () => {
    check(
      EVENT,
      '{"involvedObject":{"kind":"Pod","name":"p"},"count":2,"firstTimestamp":"2024-01-01T00:00:00Z","eventTime":"2024-01-01T00:00:00.000001Z","series":{"count":3,"lastObservedTime":"2024-01-01T00:00:00.000000Z"}}',
      undefined,
    );
    check(EVENT, '{"count":"x"}', 'json: cannot unmarshal string into Go struct field Event.count of type int32');
    check(EVENT, '{"series":{"count":1.5}}', 'json: cannot unmarshal number 1.5 into Go struct field EventSeries.series.count of type int32');
    check(EVENT, '{"series":5}', 'json: cannot unmarshal number into Go struct field Event.series of type v1.EventSeries');
    check(EVENT, '{"reportingComponent":5}', 'json: cannot unmarshal number into Go struct field Event.reportingComponent of type string');
    check(EVENT, '{"source":{"host":[]}}', 'json: cannot unmarshal array into Go struct field EventSource.source.host of type string');
    check(
      EVENT,
      '{"involvedObject":{"uid":5},"firstTimestamp":"2024-01-01T00:00:00.5Z"}',
      'json: cannot unmarshal number into Go struct field ObjectReference.involvedObject.uid of type types.UID',
    );
    check(
      EVENT,
      '{"eventTime":"2024-01-01T00:00:00Z"}',
      'parsing time "2024-01-01T00:00:00Z" as "2006-01-02T15:04:05.000000Z07:00": cannot parse "Z" as ".000000"',
    );
    check(EVENT, '{"series":{"lastObservedTime":5}}', 'json: cannot unmarshal number into Go struct field EventSeries.series.lastObservedTime of type string');
    check(EVENT, '{"lastTimestamp":"2024-02-30T00:00:00Z"}', 'parsing time "2024-02-30T00:00:00Z": day out of range');
  });
});

describe('goTypeError: events.k8s.io/v1 Event', () => {
  it('checks its own field names and types', () => {
    check(EVENTS_V1, '{"eventTime":"2024-01-01T00:00:00.000000Z","regarding":{"kind":"Pod"},"note":"n","deprecatedCount":1}', undefined);
    check(EVENTS_V1, '{"deprecatedCount":2147483648}', 'json: cannot unmarshal number 2147483648 into Go struct field Event.deprecatedCount of type int32');
    check(EVENTS_V1, '{"regarding":[],"note":5}', 'json: cannot unmarshal array into Go struct field Event.regarding of type v1.ObjectReference');
    check(EVENTS_V1, '{"series":{"count":"1"}}', 'json: cannot unmarshal string into Go struct field EventSeries.series.count of type int32');
    check(
      EVENTS_V1,
      '{"deprecatedSource":{"component":true}}',
      'json: cannot unmarshal bool into Go struct field EventSource.deprecatedSource.component of type string',
    );
    check(EVENTS_V1, '{"deprecatedFirstTimestamp":"2024-01-01"}', 'parsing time "2024-01-01" as "2006-01-02T15:04:05Z07:00": cannot parse "" as "T"');
  });
});

describe('goTypeError: core/v1 Namespace', () => {
  it('names the Go named types the schema shows as strings', () => {
    check(NS, '{"spec":{"finalizers":["kubernetes"]},"status":{"phase":"Active","conditions":[{"type":"X","status":"True"}]}}', undefined);
    check(
      NS,
      '{"spec":{"finalizers":"kubernetes"}}',
      'json: cannot unmarshal string into Go struct field NamespaceSpec.spec.finalizers of type []v1.FinalizerName',
    );
    check(NS, '{"spec":{"finalizers":[5]}}', 'json: cannot unmarshal number into Go struct field NamespaceSpec.spec.finalizers of type v1.FinalizerName');
    check(NS, '{"status":{"phase":5}}', 'json: cannot unmarshal number into Go struct field NamespaceStatus.status.phase of type v1.NamespacePhase');
    check(
      NS,
      '{"status":{"conditions":[{"status":true}]}}',
      'json: cannot unmarshal bool into Go struct field NamespaceCondition.status.conditions.status of type v1.ConditionStatus',
    );
    check(
      NS,
      '{"status":{"conditions":{"status":true}}}',
      'json: cannot unmarshal object into Go struct field NamespaceStatus.status.conditions of type []v1.NamespaceCondition',
    );
  });
});

describe('goTypeError: core/v1 ConfigMap and Secret (checked against encoding/json of Go 1.19)', () => {
  it('checks data, binaryData, stringData, immutable and type', () => {
    check(CM, '{"data":{"a":"x","b":null},"binaryData":{"c":"YQ==","d":[1,2],"e":null},"immutable":true}', undefined);
    check(CM, '{"data":{"a":1}}', 'json: cannot unmarshal number into Go struct field ConfigMap.data of type string');
    check(CM, '{"data":["a"]}', 'json: cannot unmarshal array into Go struct field ConfigMap.data of type map[string]string');
    check(CM, '{"immutable":"yes"}', 'json: cannot unmarshal string into Go struct field ConfigMap.immutable of type bool');
    check(CM, '{"binaryData":5}', 'json: cannot unmarshal number into Go struct field ConfigMap.binaryData of type map[string][]uint8');
    check(CM, '{"binaryData":{"a":{}}}', 'json: cannot unmarshal object into Go struct field ConfigMap.binaryData of type []uint8');
    check(CM, '{"binaryData":{"a":[1,2,-1]}}', 'json: cannot unmarshal number -1 into Go struct field ConfigMap.binaryData of type uint8');
    check(CM, '{"binaryData":{"a":"YW=x"}}', 'illegal base64 data at input byte 2');
    check(SECRET, '{"data":"x"}', 'json: cannot unmarshal string into Go struct field Secret.data of type map[string][]uint8');
    check(SECRET, '{"data":{"a":[1,"x"]},"type":true}', 'json: cannot unmarshal string into Go struct field Secret.data of type uint8');
    check(SECRET, '{"stringData":"x"}', 'json: cannot unmarshal string into Go struct field Secret.stringData of type map[string]string');
    check(SECRET, '{"type":5}', 'json: cannot unmarshal number into Go struct field Secret.type of type v1.SecretType');
    check(SECRET, '{"kind":5}', 'json: cannot unmarshal number into Go struct field Secret.kind of type string');
    check(SECRET, '[1]', 'json: cannot unmarshal array into Go value of type v1.Secret');
  });
  it('checks metadata as for the other kinds, the first error in document order winning', () => {
    check(CM, '{"metadata":{"name":5}}', 'json: cannot unmarshal number into Go struct field ObjectMeta.metadata.name of type string');
    check(CM, '{"metadata":{"annotations":[]}}', 'json: cannot unmarshal array into Go struct field ObjectMeta.metadata.annotations of type map[string]string');
    check(CM, '{"metadata":{"generation":1.5}}', 'json: cannot unmarshal number 1.5 into Go struct field ObjectMeta.metadata.generation of type int64');
    check(CM, '{"metadata":{"labels":{"a":5}},"data":{"b":1}}', 'json: cannot unmarshal number into Go struct field ObjectMeta.metadata.labels of type string');
    check(CM, '{"data":{"b":1},"metadata":{"labels":{"a":5}}}', 'json: cannot unmarshal number into Go struct field ConfigMap.data of type string');
    check(
      CM,
      '{"metadata":{"ownerReferences":[{"uid":5}]},"binaryData":{"a":"Y"}}',
      'json: cannot unmarshal number into Go struct field OwnerReference.metadata.ownerReferences.uid of type types.UID',
    );
    check(CM, '{"binaryData":{"a":"Y"},"metadata":{"ownerReferences":[{"uid":5}]}}', 'illegal base64 data at input byte 0');
    // A Time's error aborts the decode: it wins over an earlier type error.
    check(CM, '{"data":{"a":1},"metadata":{"creationTimestamp":"x"}}', 'parsing time "x" as "2006-01-02T15:04:05Z07:00": cannot parse "x" as "2006"');
    check(SECRET, '{"metadata":{"finalizers":"x"}}', 'json: cannot unmarshal string into Go struct field ObjectMeta.metadata.finalizers of type []string');
    check(SECRET, '{"metadata":{"uid":5}}', 'json: cannot unmarshal number into Go struct field ObjectMeta.metadata.uid of type types.UID');
    check(
      SECRET,
      '{"metadata":{"labels":{"a":true}},"data":{"a":"Y"}}',
      'json: cannot unmarshal bool into Go struct field ObjectMeta.metadata.labels of type string',
    );
    check(
      SECRET,
      '{"metadata":{"managedFields":[{"operation":1}]}}',
      'json: cannot unmarshal number into Go struct field ManagedFieldsEntry.metadata.managedFields.operation of type v1.ManagedFieldsOperationType',
    );
    check(
      SECRET,
      '{"metadata":{"deletionTimestamp":5},"type":5}',
      'json: cannot unmarshal number into Go struct field ObjectMeta.metadata.deletionTimestamp of type string',
    );
    check(
      SECRET,
      '{"type":5,"metadata":{"deletionGracePeriodSeconds":"30"}}',
      'json: cannot unmarshal number into Go struct field Secret.type of type v1.SecretType',
    );
  });
});

describe('goTypeError: custom unmarshalers, []byte, floats, maps', () => {
  it('IntOrString takes a string or an int32; other values fail as json.Unmarshal into int32', () => {
    check(W, '{"ios":"50%","crdIos":5}', undefined, widgetDefs);
    check(W, '{"ios":1.5}', 'json: cannot unmarshal number 1.5 into Go struct field Widget.ios of type int32', widgetDefs);
    check(W, '{"ios":3000000000}', 'json: cannot unmarshal number 3000000000 into Go struct field Widget.ios of type int32', widgetDefs);
    check(W, '{"flag":5,"ios":true}', 'json: cannot unmarshal bool into Go struct field Widget.ios of type int32', widgetDefs);
    check(W, '{"crdIos":{}}', 'json: cannot unmarshal object into Go struct field Widget.crdIos of type int32', widgetDefs);
  });
  it('Quantity takes a string or a number and reports ParseQuantity errors', () => {
    check(W, '{"qty":"100m","flag":1}', 'json: cannot unmarshal number into Go struct field Widget.flag of type bool', widgetDefs);
    check(W, '{"qty":1.5}', undefined, widgetDefs);
    check(W, '{"flag":1,"qty":"1i"}', "unable to parse quantity's suffix", widgetDefs);
    check(W, '{"qty":"1x"}', "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'", widgetDefs);
    check(W, '{"qty":true}', "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'", widgetDefs);
    check(W, '{"qty":{}}', "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'", widgetDefs);
  });
  it('RawExtension, FieldsV1, untyped and preserve-unknown-fields nodes take anything (objects for maps)', () => {
    check(W, '{"raw":5,"any":[1]}', undefined, widgetDefs);
    check(W, '{"obj":5}', 'json: cannot unmarshal number into Go struct field Widget.obj of type map[string]interface {}', widgetDefs);
  });
  it('[]byte takes base64 strings or arrays of uint8', () => {
    check(W, '{"data":"YWJj","blobs":{"a":"YQ==","b":[1,2]}}', undefined, widgetDefs);
    check(W, '{"data":"YQ="}', 'illegal base64 data at input byte 3', widgetDefs);
    check(W, '{"data":5}', 'json: cannot unmarshal number into Go struct field Widget.data of type []uint8', widgetDefs);
    check(W, '{"data":[1,256]}', 'json: cannot unmarshal number 256 into Go struct field Widget.data of type uint8', widgetDefs);
    check(W, '{"data":[1,-1]}', 'json: cannot unmarshal number -1 into Go struct field Widget.data of type uint8', widgetDefs);
    check(W, '{"data":[1,"a"]}', 'json: cannot unmarshal string into Go struct field Widget.data of type uint8', widgetDefs);
    check(W, '{"blobs":{"a":5}}', 'json: cannot unmarshal number into Go struct field Widget.blobs of type []uint8', widgetDefs);
  });
  it('floats, nested slices, maps of ints and of structs, slices of Time, recursion', () => {
    check(W, '{"f32":1e39}', 'json: cannot unmarshal number 1e+39 into Go struct field Widget.f32 of type float32', widgetDefs);
    check(W, '{"f32":3.4028235e38,"f64":1e300}', undefined, widgetDefs);
    check(W, '{"f64":"x"}', 'json: cannot unmarshal string into Go struct field Widget.f64 of type float64', widgetDefs);
    check(W, '{"counts":{"a":1.5}}', 'json: cannot unmarshal number 1.5 into Go struct field Widget.counts of type int32', widgetDefs);
    check(W, '{"counts":5}', 'json: cannot unmarshal number into Go struct field Widget.counts of type map[string]int32', widgetDefs);
    check(W, '{"nested":[["a",5]]}', 'json: cannot unmarshal number into Go struct field Widget.nested of type string', widgetDefs);
    check(W, '{"nested":[5]}', 'json: cannot unmarshal number into Go struct field Widget.nested of type []string', widgetDefs);
    check(W, '{"refs":{"a":{"uid":5}}}', 'json: cannot unmarshal number into Go struct field ObjectReference.refs.uid of type types.UID', widgetDefs);
    check(W, '{"refs":{"a":5}}', 'json: cannot unmarshal number into Go struct field Widget.refs of type v1.ObjectReference', widgetDefs);
    check(W, '{"times":[5]}', 'json: cannot unmarshal number into Go struct field Widget.times of type string', widgetDefs);
    check(W, '{"times":5}', 'json: cannot unmarshal number into Go struct field Widget.times of type []v1.Time', widgetDefs);
    check(W, '{"inner":{"inner":{"flag":5}}}', 'json: cannot unmarshal number into Go struct field Widget.inner.inner.flag of type bool', widgetDefs);
    check(W, '{"inner":{"inner":5}}', 'json: cannot unmarshal number into Go struct field Widget.inner.inner of type v1.Widget', widgetDefs);
  });
  it('follows definitions changed in place (what a $ref names is looked up again)', () => {
    const defs: Definitions = { [CORE + 'Gadget']: { type: 'object', properties: { part: ref(CORE + 'Part') } }, [CORE + 'Part']: { type: 'string' } };
    check(CORE + 'Gadget', '{"part":5}', 'json: cannot unmarshal number into Go struct field Gadget.part of type string', defs);
    defs[CORE + 'Part'] = { type: 'integer', format: 'int32' };
    check(CORE + 'Gadget', '{"part":"x"}', 'json: cannot unmarshal string into Go struct field Gadget.part of type int32', defs);
    defs[CORE + 'Gadget'] = { type: 'object', properties: { other: { type: 'boolean' } } };
    check(CORE + 'Gadget', '{"part":"x","other":1}', 'json: cannot unmarshal number into Go struct field Gadget.other of type bool', defs);
  });
});

// The request path: the body parsed by parseJson, which records how numbers were written.
const checkText = (def: string, body: string, want: string | undefined, defs: Definitions = builtinDefinitions) =>
  assert.equal(goTypeError(parseJson(body).value, def, defs), want, body);

const CRD = 'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition';
const crdDefs: Definitions = { ...builtinDefinitions, ...apiextensionsDefinitions };
/** A CRD body whose one version has `schema` (JSON text) as openAPIV3Schema. */
const crdWith = (schema: string) =>
  `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"as.g"},"spec":{"group":"g","scope":"Namespaced","names":{"plural":"as","kind":"A"},"versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":${schema}}}]}}`;
const crdSpec = (spec: string) => `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"as.g"},"spec":${spec}}`;
const SCHEMA = 'JSONSchemaProps.spec.versions.schema.openAPIV3Schema';

// Every expected message below was printed by sigs.k8s.io/json (its Go 1.19 sync, built with Go
// 1.19) decoding into Go structs that mirror apiextensions-apiserver/pkg/apis/apiextensions/v1
// (types.go, types_jsonschema.go, and marshal.go's UnmarshalJSON methods calling
// k8s.io/apimachinery/pkg/util/json.Unmarshal), as kube-apiserver's strict JSON serializer does.
describe('goTypeError: apiextensions.k8s.io/v1 CustomResourceDefinition', () => {
  const C = (schema: string, want: string | undefined) => checkText(CRD, crdWith(schema), want, crdDefs);
  it('names the struct, the JSON path and the Go type (named types included); accepts well-typed definitions and nulls', () => {
    C(
      '{"type":"object","properties":{"a":{"type":"array","items":{"type":"integer","maximum":1e3,"default":1.5,"enum":[1,"a",{},[],null]}},"m":{"additionalProperties":false,"x-kubernetes-validations":[{"rule":"true","reason":"FieldValueInvalid"}]}}}',
      undefined,
    );
    C('{"type":null,"items":null,"additionalProperties":null,"dependencies":{"a":null},"default":null,"enum":[null],"properties":{"a":null}}', undefined);
    checkText(
      CRD,
      crdSpec(
        '{"versions":[{"subresources":{"status":{},"scale":{"specReplicasPath":".spec.n","statusReplicasPath":".status.n"}},"additionalPrinterColumns":[{"priority":0}]}],"conversion":{"strategy":"Webhook","webhook":{"clientConfig":{"caBundle":"AQID","service":{"port":443}}}}}',
      ),
      undefined,
      crdDefs,
    );
    checkText(
      CRD,
      crdSpec('{"versions":"x"}'),
      'json: cannot unmarshal string into Go struct field CustomResourceDefinitionSpec.spec.versions of type []v1.CustomResourceDefinitionVersion',
      crdDefs,
    );
    checkText(
      CRD,
      crdSpec('{"names":{"plural":5}}'),
      'json: cannot unmarshal number into Go struct field CustomResourceDefinitionNames.spec.names.plural of type string',
      crdDefs,
    );
    checkText(
      CRD,
      crdSpec('{"versions":[{"served":"yes"}]}'),
      'json: cannot unmarshal string into Go struct field CustomResourceDefinitionVersion.spec.versions.served of type bool',
      crdDefs,
    );
    checkText(
      CRD,
      crdSpec('{"scope":5}'),
      'json: cannot unmarshal number into Go struct field CustomResourceDefinitionSpec.spec.scope of type v1.ResourceScope',
      crdDefs,
    );
    checkText(
      CRD,
      crdSpec('{"conversion":{"strategy":1}}'),
      'json: cannot unmarshal number into Go struct field CustomResourceConversion.spec.conversion.strategy of type v1.ConversionStrategyType',
      crdDefs,
    );
    checkText(
      CRD,
      crdSpec('{"versions":[{"subresources":{"status":[]}}]}'),
      'json: cannot unmarshal array into Go struct field CustomResourceSubresources.spec.versions.subresources.status of type v1.CustomResourceSubresourceStatus',
      crdDefs,
    );
    checkText(
      CRD,
      crdSpec('{"conversion":{"webhook":{"clientConfig":{"service":{"port":"443"}}}}}'),
      'json: cannot unmarshal string into Go struct field ServiceReference.spec.conversion.webhook.clientConfig.service.port of type int32',
      crdDefs,
    );
    checkText(CRD, crdSpec('{"conversion":{"webhook":{"clientConfig":{"caBundle":"!!"}}}}'), 'illegal base64 data at input byte 0', crdDefs);
    checkText(
      CRD,
      '{"status":{"conditions":[{"type":5,"status":true}]}}',
      'json: cannot unmarshal number into Go struct field CustomResourceDefinitionCondition.status.conditions.type of type v1.CustomResourceDefinitionConditionType',
      crdDefs,
    );
    checkText(
      CRD,
      '{"status":{"storedVersions":"v1"}}',
      'json: cannot unmarshal string into Go struct field CustomResourceDefinitionStatus.status.storedVersions of type []string',
      crdDefs,
    );
    C('{"type":5}', `json: cannot unmarshal number into Go struct field ${SCHEMA}.type of type string`);
    C('{"$schema":5}', `json: cannot unmarshal number into Go struct field ${SCHEMA}.$schema of type v1.JSONSchemaURL`);
    C('{"properties":[]}', `json: cannot unmarshal array into Go struct field ${SCHEMA}.properties of type map[string]v1.JSONSchemaProps`);
    C('{"properties":{"a":5}}', `json: cannot unmarshal number into Go struct field ${SCHEMA}.properties of type v1.JSONSchemaProps`);
    C('{"properties":{"a":{"type":5}}}', `json: cannot unmarshal number into Go struct field ${SCHEMA}.properties.type of type string`);
    C('{"enum":"x"}', `json: cannot unmarshal string into Go struct field ${SCHEMA}.enum of type []v1.JSON`);
    C('{"allOf":[5]}', `json: cannot unmarshal number into Go struct field ${SCHEMA}.allOf of type v1.JSONSchemaProps`);
    C('{"dependencies":"x"}', `json: cannot unmarshal string into Go struct field ${SCHEMA}.dependencies of type v1.JSONSchemaDependencies`);
    C('{"definitions":5}', `json: cannot unmarshal number into Go struct field ${SCHEMA}.definitions of type v1.JSONSchemaDefinitions`);
    C('{"x-kubernetes-validations":"x"}', `json: cannot unmarshal string into Go struct field ${SCHEMA}.x-kubernetes-validations of type v1.ValidationRules`);
    C(
      '{"x-kubernetes-validations":[{"rule":"x","reason":5}]}',
      'json: cannot unmarshal number into Go struct field ValidationRule.spec.versions.schema.openAPIV3Schema.x-kubernetes-validations.reason of type v1.FieldValueErrorReason',
    );
    C('{"maxLength":"5"}', `json: cannot unmarshal string into Go struct field ${SCHEMA}.maxLength of type int64`);
    C('{"maximum":"1"}', `json: cannot unmarshal string into Go struct field ${SCHEMA}.maximum of type float64`);
  });
  it('JSONSchemaPropsOrBool: true, false or a schema; anything else is "boolean or JSON schema expected", which aborts the decode', () => {
    C('{"additionalProperties":true,"additionalItems":false}', undefined);
    C('{"additionalProperties":5}', 'boolean or JSON schema expected');
    C('{"additionalProperties":"true"}', 'boolean or JSON schema expected');
    C('{"additionalItems":[]}', 'boolean or JSON schema expected');
    // The first soft error would be type's; the nested decode's error aborts and wins.
    C('{"type":5,"additionalProperties":5}', 'boolean or JSON schema expected');
    C('{"additionalProperties":{"items":{"additionalProperties":"x"}}}', 'boolean or JSON schema expected');
  });
  it('nested decodes (items, additionalProperties, dependencies) report under the outermost such field, with the innermost type', () => {
    C('{"additionalProperties":{"type":5}}', `json: cannot unmarshal number into Go struct field ${SCHEMA}.additionalProperties of type string`);
    C(
      '{"additionalProperties":{"items":{"properties":{"b":{"type":7}}}}}',
      `json: cannot unmarshal number into Go struct field ${SCHEMA}.additionalProperties of type string`,
    );
    C(
      '{"properties":{"a":{"items":{"items":{"items":[{"additionalProperties":{"maxItems":1.5}}]}}}}}',
      `json: cannot unmarshal number 1.5 into Go struct field ${SCHEMA}.properties.items of type int64`,
    );
    C('{"items":{"type":5}}', `json: cannot unmarshal number into Go struct field ${SCHEMA}.items of type string`);
    C('{"items":[{"type":5}]}', `json: cannot unmarshal number into Go struct field ${SCHEMA}.items of type string`);
    C('{"items":[5]}', `json: cannot unmarshal number into Go struct field ${SCHEMA}.items of type v1.JSONSchemaProps`);
    C('{"dependencies":{"a":[1]}}', `json: cannot unmarshal number into Go struct field ${SCHEMA}.dependencies of type string`);
    C('{"dependencies":{"a":{"type":1}}}', `json: cannot unmarshal number into Go struct field ${SCHEMA}.dependencies of type string`);
    // A soft error inside a nested decode aborts the outer one: it wins over an earlier soft error.
    C('{"maxLength":"x","items":{"type":5}}', `json: cannot unmarshal number into Go struct field ${SCHEMA}.items of type string`);
    C('{"items":{"type":5},"maxLength":"x"}', `json: cannot unmarshal number into Go struct field ${SCHEMA}.items of type string`);
    // JSONSchemaPropsOrArray and OrStringArray ignore values that are neither an object nor an array.
    C('{"items":5,"dependencies":{"a":5,"b":"x","c":true}}', undefined);
    C('{"items":"ab"}', undefined);
  });
});

describe('goTypeError: numbers as the body wrote them (parseJson records their text)', () => {
  it('an integer field refuses a fraction, an exponent or an overflow by the literal, as strconv.ParseInt does', () => {
    checkText(
      LEASE,
      '{"spec":{"leaseDurationSeconds":1.0}}',
      'json: cannot unmarshal number 1.0 into Go struct field LeaseSpec.spec.leaseDurationSeconds of type int32',
    );
    checkText(
      LEASE,
      '{"spec":{"leaseDurationSeconds":1e3}}',
      'json: cannot unmarshal number 1e3 into Go struct field LeaseSpec.spec.leaseDurationSeconds of type int32',
    );
    checkText(
      LEASE,
      '{"spec":{"leaseDurationSeconds":1E2}}',
      'json: cannot unmarshal number 1E2 into Go struct field LeaseSpec.spec.leaseDurationSeconds of type int32',
    );
    checkText(
      LEASE,
      '{"spec":{"leaseDurationSeconds":-0.5}}',
      'json: cannot unmarshal number -0.5 into Go struct field LeaseSpec.spec.leaseDurationSeconds of type int32',
    );
    checkText(
      LEASE,
      '{"spec":{"leaseDurationSeconds":12345678901234567}}',
      'json: cannot unmarshal number 12345678901234567 into Go struct field LeaseSpec.spec.leaseDurationSeconds of type int32',
    );
    checkText(
      LEASE,
      '{"spec":{"leaseDurationSeconds":100000000000000000000000}}',
      'json: cannot unmarshal number 100000000000000000000000 into Go struct field LeaseSpec.spec.leaseDurationSeconds of type int32',
    );
    checkText(
      LEASE,
      '{"metadata":{"generation":1.0e0}}',
      'json: cannot unmarshal number 1.0e0 into Go struct field ObjectMeta.metadata.generation of type int64',
    );
    checkText(
      LEASE,
      '{"metadata":{"generation":9223372036854775808}}',
      'json: cannot unmarshal number 9223372036854775808 into Go struct field ObjectMeta.metadata.generation of type int64',
    );
    checkText(LEASE, '{"metadata":{"generation":9223372036854775807},"spec":{"leaseDurationSeconds":-0,"leaseTransitions":-2147483648}}', undefined);
    checkText(
      CRD,
      crdSpec('{"versions":[{"additionalPrinterColumns":[{"priority":1.0}]}]}'),
      'json: cannot unmarshal number 1.0 into Go struct field CustomResourceColumnDefinition.spec.versions.additionalPrinterColumns.priority of type int32',
      crdDefs,
    );
    checkText(CRD, crdWith('{"maxLength":1e3}'), `json: cannot unmarshal number 1e3 into Go struct field ${SCHEMA}.maxLength of type int64`, crdDefs);
    checkText(CRD, crdWith('{"items":{"minItems":2.0}}'), `json: cannot unmarshal number 2.0 into Go struct field ${SCHEMA}.items of type int64`, crdDefs);
    checkText(
      CRD,
      crdSpec('{"conversion":{"webhook":{"clientConfig":{"caBundle":[1.0]}}}}'),
      'json: cannot unmarshal number 1.0 into Go struct field WebhookClientConfig.spec.conversion.webhook.clientConfig.caBundle of type uint8',
      crdDefs,
    );
  });
  it('a float field refuses an overflow with the literal; IntOrString and Quantity see the literal too', () => {
    checkText(CRD, crdWith('{"maximum":1e400}'), `json: cannot unmarshal number 1e400 into Go struct field ${SCHEMA}.maximum of type float64`, crdDefs);
    checkText(CRD, crdWith('{"maximum":1.0,"minimum":-1e308,"multipleOf":0.5}'), undefined, crdDefs);
    checkText(W, '{"f32":1e39}', 'json: cannot unmarshal number 1e39 into Go struct field Widget.f32 of type float32', widgetDefs);
    checkText(W, '{"ios":5.0}', 'json: cannot unmarshal number 5.0 into Go struct field Widget.ios of type int32', widgetDefs);
    checkText(W, '{"qty":1e3,"crdIos":2E1}', 'json: cannot unmarshal number 2E1 into Go struct field Widget.crdIos of type int32', widgetDefs);
    checkText(W, '{"counts":{"a":7,"b":7.0}}', 'json: cannot unmarshal number 7.0 into Go struct field Widget.counts of type int32', widgetDefs);
    // Values built in code (or by a patch) have no record: their numbers are what String(n) writes.
    assert.equal(goTypeError({ spec: { leaseDurationSeconds: 1.0 } }, LEASE, builtinDefinitions), undefined);
    assert.equal(goTypeError(JSON.parse('{"spec":{"leaseDurationSeconds":1e3}}'), LEASE, builtinDefinitions), undefined);
    // A record is used only while the value is still the one parsed.
    const v = parseJson('{"spec":{"leaseDurationSeconds":1.0,"leaseTransitions":2.5}}').value as { spec: Record<string, number> };
    v.spec.leaseDurationSeconds = 4;
    v.spec.leaseTransitions = 2;
    assert.equal(goTypeError(v, LEASE, builtinDefinitions), undefined);
  });
});

describe("goTypeError: a CRD schema's default, enum and example hold any integers (apiextensions JSON keeps the bytes)", () => {
  it('accepts int64s past 2^53 (bigints) and numbers past int64 there; a float64 bound is a number', () => {
    checkText(
      CRD,
      crdWith(
        '{"type":"object","properties":{"n":{"type":"integer","default":9007199254740993,"enum":[1,1152921504606846976,12345678901234567890],"example":{"a":[-9223372036854775807]}}}}',
      ),
      undefined,
      crdDefs,
    );
    checkText(CRD, crdWith('{"type":"integer","maximum":9223372036854775807,"minimum":-9223372036854775808}'), undefined, crdDefs);
    // A decode error is reported as before.
    checkText(
      CRD,
      crdWith('{"type":5,"default":9007199254740993}'),
      `json: cannot unmarshal number into Go struct field ${SCHEMA}.type of type string`,
      crdDefs,
    );
  });
});

describe('parseQuantityError', () => {
  it('accepts what ParseQuantity accepts', () => {
    for (const s of ['0', '1', '-1', '+1.5', '.5', '1.', '100m', '1Ki', '1.5Gi', '1e3', '1E-3', '1e+9', '1E', '000', '-', '1.k'])
      assert.equal(parseQuantityError(s), undefined, s);
  });
  it('reports format, suffix and numeric errors', () => {
    const FORMAT = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
    assert.equal(parseQuantityError(''), FORMAT);
    assert.equal(parseQuantityError('abc'), FORMAT);
    assert.equal(parseQuantityError('1Mx'), FORMAT);
    assert.equal(parseQuantityError('1i'), "unable to parse quantity's suffix");
    assert.equal(parseQuantityError('1e'), "unable to parse quantity's suffix");
    assert.equal(parseQuantityError('1KiB'), FORMAT);
    assert.equal(parseQuantityError('.e-10'), 'unable to parse numeric part of quantity');
  });
});
