// Request bodies decoded as kube-apiserver's decoder reads them into Go structs, through real
// clients (raw HTTPS, kubectl 1.33, the Python client) against a real server:
// - a CustomResourceDefinition (create, update, /status, patches) with a field of the wrong JSON
//   type, JSONSchemaProps' own unmarshalers included: Go's 400 (422 on `patch` after a patch);
// - a number written `1.0` or `1e3` in an integer field of a typed kind (Lease, Event, ConfigMap
//   metadata, CRD schema): Go's 400 naming the literal, as strconv.ParseInt refuses it;
// - a CRD schema's default/enum/example integer a double cannot hold: refused (400) rather than
//   rounded; one that a double holds is kept exactly in the CRD, its OpenAPI and defaulted objects.
// Expected texts were printed by sigs.k8s.io/json (Go) decoding into mirrors of the upstream types.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { waitServed } from '../support/crd.js';
import { adminCredentials, RawClient, type RawResponse } from '../support/https.js';
import { kubectlSession, type KubectlSession } from '../support/kubectl.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { ensureTools, run, tools } from '../support/tools.js';

ensureTools();

interface Status {
  kind: string;
  status: string;
  reason: string;
  code: number;
  message: string;
  details?: { causes?: { reason: string; message: string; field?: string }[] };
}

const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const JSON_CT = { 'content-type': 'application/json', accept: 'application/json' };
const DECODE = 'CustomResourceDefinition in version "v1" cannot be handled as a CustomResourceDefinition: ';
const SCHEMA = 'JSONSchemaProps.spec.versions.schema.openAPIV3Schema';

/** A CRD `<plural>.typed.example.com` as JSON text, its one version's schema given as JSON text. */
const crdText = (plural: string, schema: string, spec = ''): string =>
  `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"${plural}.typed.example.com"},` +
  `"spec":{"group":"typed.example.com","scope":"Namespaced","names":{"plural":"${plural}","kind":"K${plural}"},${spec}` +
  `"versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":${schema}}}]}}`;
const GOOD_SCHEMA = '{"type":"object","properties":{"spec":{"type":"object","properties":{"n":{"type":"integer"}}}}}';

describe('typed request bodies as Go decodes them', { concurrency: false, timeout: 120_000 }, () => {
  let server: TestServer;
  let raw: RawClient;
  let kc: KubectlSession;
  let dir: string;

  before(async () => {
    server = await startTestServer({ storage: 'memory' });
    raw = new RawClient(server.url, adminCredentials(server.dataDir));
    dir = await mkdtemp(join(tmpdir(), 'kplane-typed-'));
    kc = kubectlSession(tools.kubectl, server.kubeconfig, dir);
    assert.equal((await raw.request({ method: 'POST', path: '/api/v1/namespaces', headers: JSON_CT, body: '{"metadata":{"name":"typed"}}' })).status, 201);
  });
  after(async () => {
    raw?.close();
    await server?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const send = (method: string, path: string, body: string, contentType = 'application/json'): Promise<RawResponse> =>
    raw.request({ method, path, headers: { 'content-type': contentType, accept: 'application/json' }, body });
  const status = (r: RawResponse, code: number, reason: string): Status => {
    assert.equal(r.status, code, r.text());
    const st = r.json<Status>();
    assert.equal(st.kind, 'Status');
    assert.equal(st.reason, reason);
    assert.equal(st.code, code);
    return st;
  };
  const python = async (code: string): Promise<Record<string, unknown>> => {
    const r = await run(tools.python, ['-c', code, server.kubeconfig], { timeoutMs: 45_000, env: { PYTHONDONTWRITEBYTECODE: '1' } });
    assert.equal(r.code, 0, `python failed\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
    return JSON.parse(r.stdout) as Record<string, unknown>;
  };

  describe('CustomResourceDefinitions', () => {
    it("a field of the wrong JSON type anywhere → 400 with Go's decode error, nothing stored", async () => {
      const cases: [string, string, string][] = [
        [
          'versions',
          crdText('versions', GOOD_SCHEMA).replace(/"versions":\[.*\]\}\}$/, '"versions":"x"}}'),
          'json: cannot unmarshal string into Go struct field CustomResourceDefinitionSpec.spec.versions of type []v1.CustomResourceDefinitionVersion',
        ],
        [
          'plurals',
          crdText('plurals', GOOD_SCHEMA).replace('"plural":"plurals"', '"plural":5'),
          'json: cannot unmarshal number into Go struct field CustomResourceDefinitionNames.spec.names.plural of type string',
        ],
        [
          'serveds',
          crdText('serveds', GOOD_SCHEMA).replace('"served":true', '"served":"yes"'),
          'json: cannot unmarshal string into Go struct field CustomResourceDefinitionVersion.spec.versions.served of type bool',
        ],
        ['types', crdText('types', '{"type":5}'), `json: cannot unmarshal number into Go struct field ${SCHEMA}.type of type string`],
        [
          'nesteds',
          crdText('nesteds', '{"type":"object","properties":{"a":{"type":"array","items":{"type":"object","properties":{"b":{"type":7}}}}}}'),
          `json: cannot unmarshal number into Go struct field ${SCHEMA}.properties.items of type string`,
        ],
        ['bools', crdText('bools', '{"type":"object","additionalProperties":"yes"}'), 'boolean or JSON schema expected'],
        ['enums', crdText('enums', '{"type":"string","enum":"a"}'), `json: cannot unmarshal string into Go struct field ${SCHEMA}.enum of type []v1.JSON`],
        [
          'rules',
          crdText('rules', '{"type":"object","x-kubernetes-validations":[{"rule":"true","reason":5}]}'),
          'json: cannot unmarshal number into Go struct field ValidationRule.spec.versions.schema.openAPIV3Schema.x-kubernetes-validations.reason of type v1.FieldValueErrorReason',
        ],
        [
          'ports',
          crdText(
            'ports',
            GOOD_SCHEMA,
            '"conversion":{"strategy":"Webhook","webhook":{"conversionReviewVersions":["v1"],"clientConfig":{"service":{"namespace":"n","name":"s","port":"443"}}}},',
          ),
          'json: cannot unmarshal string into Go struct field ServiceReference.spec.conversion.webhook.clientConfig.service.port of type int32',
        ],
      ];
      for (const [plural, body, why] of cases) {
        const st = status(await send('POST', CRDS, body), 400, 'BadRequest');
        assert.equal(st.message, DECODE + why, plural);
        assert.equal((await raw.request({ path: `${CRDS}/${plural}.typed.example.com` })).status, 404, plural);
      }
      // What Go accepts stays accepted: nulls, true/false for JSONSchemaPropsOrBool.
      const r = await send(
        'POST',
        CRDS,
        crdText(
          'lenients',
          '{"type":"object","properties":{"spec":{"type":"object","additionalProperties":true,"description":null,"x-kubernetes-preserve-unknown-fields":null}}}',
        ),
      );
      assert.equal(r.status, 201, r.text());
    });

    it("kubectl 1.33 create -f: the server's 400 in kubectl's words", async () => {
      const file = await kc.file(
        'served.yaml',
        `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: kubectls.typed.example.com}
spec:
  group: typed.example.com
  scope: Namespaced
  names: {plural: kubectls, kind: Kubectl}
  versions:
  - name: v1
    served: "yes"
    storage: true
    schema: {openAPIV3Schema: {type: object}}
`,
      );
      const r = await kc.k(['create', '-f', file]);
      assert.notEqual(r.code, 0, r.stdout);
      assert.match(
        r.stderr,
        new RegExp(
          `Error from server \\(BadRequest\\): error when creating "${file.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}": ` +
            'CustomResourceDefinition in version "v1" cannot be handled as a CustomResourceDefinition: json: cannot unmarshal string into Go struct field CustomResourceDefinitionVersion.spec.versions.served of type bool',
        ),
      );
    });

    it('update and /status bodies → 400; patches whose result does not decode → 422 on `patch`; the CRD unchanged', async () => {
      const name = 'updates.typed.example.com';
      assert.equal((await send('POST', CRDS, crdText('updates', GOOD_SCHEMA))).status, 201);
      await waitServed(raw, '/apis/typed.example.com/v1/updates');
      const current = (await raw.request({ path: `${CRDS}/${name}` })).json<{ metadata: { resourceVersion: string }; spec: unknown }>();
      const rv = current.metadata.resourceVersion;

      const put = crdText('updates', '{"type":"object","properties":{"spec":{"type":"object","maxProperties":"3"}}}').replace(
        '"metadata":{',
        `"metadata":{"resourceVersion":"${rv}",`,
      );
      let st = status(await send('PUT', `${CRDS}/${name}`, put), 400, 'BadRequest');
      assert.equal(st.message, DECODE + `json: cannot unmarshal string into Go struct field ${SCHEMA}.properties.maxProperties of type int64`);

      const statusPut = JSON.stringify({ ...current, status: { conditions: [{ type: 'Established', status: true }] } });
      st = status(await send('PUT', `${CRDS}/${name}/status`, statusPut), 400, 'BadRequest');
      assert.equal(
        st.message,
        DECODE + 'json: cannot unmarshal bool into Go struct field CustomResourceDefinitionCondition.status.conditions.status of type v1.ConditionStatus',
      );

      // Upstream's patcher decodes the patched JSON (JSON and merge patch): NewInvalid(GroupKind{}, "",
      // patch: Invalid value: <patched JSON>: <decode error>).
      for (const [ct, body, why] of [
        [
          'application/merge-patch+json',
          '{"spec":{"versions":"x"}}',
          'json: cannot unmarshal string into Go struct field CustomResourceDefinitionSpec.spec.versions of type []v1.CustomResourceDefinitionVersion',
        ],
        [
          'application/json-patch+json',
          '[{"op":"replace","path":"/spec/versions/0/schema/openAPIV3Schema/additionalProperties","value":1}]',
          'boolean or JSON schema expected',
        ],
      ] as const) {
        st = status(await send('PATCH', `${CRDS}/${name}`, body, ct), 422, 'Invalid');
        const cause = st.details?.causes?.[0];
        assert.equal(cause?.field, 'patch', ct);
        assert.ok(cause?.message.endsWith(`: ${why}`), `${ct}: ${cause?.message}`);
        assert.ok(st.message.startsWith(' "" is invalid: patch: Invalid value: "{'), st.message);
      }
      // A strategic merge patch's result is converted from a map upstream (DefaultUnstructuredConverter,
      // other words), also a 422 on `patch`.
      st = status(await send('PATCH', `${CRDS}/${name}`, '{"spec":{"names":{"kind":false}}}', 'application/strategic-merge-patch+json'), 422, 'Invalid');
      assert.equal(st.details?.causes?.[0]?.field, 'patch');
      const after = (await raw.request({ path: `${CRDS}/${name}` })).json<{ metadata: { resourceVersion: string }; spec: unknown }>();
      assert.deepEqual(after.spec, current.spec);
    });
  });

  describe('numbers as the body wrote them', () => {
    it("`1.0`, `1e3`, `-0.5` or an overflow in an integer field → Go's 400 with the literal (core, events, coordination, CRD)", async () => {
      const cases: [string, string, string][] = [
        [
          '/apis/coordination.k8s.io/v1/namespaces/typed/leases',
          '{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"l1"},"spec":{"leaseDurationSeconds":1.0}}',
          'Lease in version "v1" cannot be handled as a Lease: json: cannot unmarshal number 1.0 into Go struct field LeaseSpec.spec.leaseDurationSeconds of type int32',
        ],
        [
          '/apis/coordination.k8s.io/v1/namespaces/typed/leases',
          '{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"l2"},"spec":{"leaseTransitions":1e3}}',
          'Lease in version "v1" cannot be handled as a Lease: json: cannot unmarshal number 1e3 into Go struct field LeaseSpec.spec.leaseTransitions of type int32',
        ],
        [
          '/api/v1/namespaces/typed/configmaps',
          '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c1","generation":-0.5}}',
          'ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal number -0.5 into Go struct field ObjectMeta.metadata.generation of type int64',
        ],
        [
          '/api/v1/namespaces/typed/events',
          '{"apiVersion":"v1","kind":"Event","metadata":{"name":"e1"},"involvedObject":{"kind":"Pod","name":"p","namespace":"typed"},"count":2.0}',
          'Event in version "v1" cannot be handled as a Event: json: cannot unmarshal number 2.0 into Go struct field Event.count of type int32',
        ],
        [
          '/apis/events.k8s.io/v1/namespaces/typed/events',
          '{"apiVersion":"events.k8s.io/v1","kind":"Event","metadata":{"name":"e2"},"eventTime":"2024-01-01T00:00:00.000000Z","deprecatedCount":12345678901234567}',
          'Event in version "v1" cannot be handled as a Event: json: cannot unmarshal number 12345678901234567 into Go struct field Event.deprecatedCount of type int32',
        ],
        [
          CRDS,
          crdText('floats', '{"type":"object","maxProperties":1E1}'),
          DECODE + 'json: cannot unmarshal number 1E1 into Go struct field JSONSchemaProps.spec.versions.schema.openAPIV3Schema.maxProperties of type int64',
        ],
      ];
      for (const [path, body, message] of cases) {
        const st = status(await send('POST', path, body), 400, 'BadRequest');
        assert.equal(st.message, message, body);
      }
      assert.equal((await raw.request({ path: '/apis/coordination.k8s.io/v1/namespaces/typed/leases/l1' })).status, 404);
      // kubectl sends YAML `1.0` as 1 (sigs.k8s.io/yaml reads a float64 and writes it back): accepted, as upstream.
      const file = await kc.file(
        'lease.yaml',
        'apiVersion: coordination.k8s.io/v1\nkind: Lease\nmetadata: {name: from-yaml, namespace: typed}\nspec: {holderIdentity: me, leaseDurationSeconds: 1.0}\n',
      );
      await kc.ok(['create', '-f', file]);
      const got = (await raw.request({ path: '/apis/coordination.k8s.io/v1/namespaces/typed/leases/from-yaml' })).json<{
        spec: { leaseDurationSeconds: number };
      }>();
      assert.equal(got.spec.leaseDurationSeconds, 1);
      // A JSON merge patch keeps its numbers' text in the patched JSON upstream: `1.0` is the decoder's error, a 422 on `patch`.
      const st = status(
        await send(
          'PATCH',
          '/apis/coordination.k8s.io/v1/namespaces/typed/leases/from-yaml',
          '{"spec":{"leaseDurationSeconds":2.0}}',
          'application/merge-patch+json',
        ),
        422,
        'Invalid',
      );
      assert.equal(st.details?.causes?.[0]?.field, 'patch');
      assert.ok(
        st.details?.causes?.[0]?.message.endsWith(': json: cannot unmarshal number 2.0 into Go struct field LeaseSpec.spec.leaseDurationSeconds of type int32'),
        st.details?.causes?.[0]?.message,
      );
      const unchanged = (await raw.request({ path: '/apis/coordination.k8s.io/v1/namespaces/typed/leases/from-yaml' })).json<{
        spec: { leaseDurationSeconds: number };
      }>();
      assert.equal(unchanged.spec.leaseDurationSeconds, 1);
      // So does a JSON patch: evanphx/json-patch keeps a value's raw text through add, replace, copy
      // and move (checked with json-patch v4.12.0 under Go 1.19), and the patched text is decoded.
      for (const [patch, literal] of [
        ['[{"op":"replace","path":"/spec/leaseDurationSeconds","value":1.0}]', '1.0'],
        ['[{"op":"add","path":"/spec/x","value":3e0},{"op":"move","from":"/spec/x","path":"/spec/leaseDurationSeconds"}]', '3e0'],
        [
          '[{"op":"add","path":"/spec/x","value":4.00},{"op":"copy","from":"/spec/x","path":"/spec/leaseDurationSeconds"},{"op":"remove","path":"/spec/x"}]',
          '4.00',
        ],
      ]) {
        const jp = status(
          await send('PATCH', '/apis/coordination.k8s.io/v1/namespaces/typed/leases/from-yaml', patch!, 'application/json-patch+json'),
          422,
          'Invalid',
        );
        assert.equal(jp.details?.causes?.[0]?.field, 'patch', patch);
        assert.ok(
          jp.details?.causes?.[0]?.message.endsWith(
            `: json: cannot unmarshal number ${literal!} into Go struct field LeaseSpec.spec.leaseDurationSeconds of type int32`,
          ),
          jp.details?.causes?.[0]?.message,
        );
      }
      // Its `test` compares a raw number by its text: `1.0` is not the stored `1` (the generic 422).
      const tested = status(
        await send(
          'PATCH',
          '/apis/coordination.k8s.io/v1/namespaces/typed/leases/from-yaml',
          '[{"op":"test","path":"/spec/leaseDurationSeconds","value":1.0}]',
          'application/json-patch+json',
        ),
        422,
        'Invalid',
      );
      assert.equal(tested.message, 'the server rejected our request due to an error in our request');
      const stillOne = (await raw.request({ path: '/apis/coordination.k8s.io/v1/namespaces/typed/leases/from-yaml' })).json<{
        metadata: { resourceVersion: string };
        spec: { leaseDurationSeconds: number };
      }>();
      assert.equal(stillOne.spec.leaseDurationSeconds, 1);
      // A number written as String(value) gives it back is applied as ever.
      const applied = await send(
        'PATCH',
        '/apis/coordination.k8s.io/v1/namespaces/typed/leases/from-yaml',
        '[{"op":"test","path":"/spec/leaseDurationSeconds","value":1},{"op":"replace","path":"/spec/leaseDurationSeconds","value":5}]',
        'application/json-patch+json',
      );
      assert.equal(applied.status, 200, applied.text());
      assert.equal(applied.json<{ spec: { leaseDurationSeconds: number } }>().spec.leaseDurationSeconds, 5);
    });

    it('the Python client (json.dumps writes a float as 15.0): the same 400 as an ApiException', async () => {
      const out = await python(`
import json, sys
from kubernetes import client, config
from kubernetes.client.rest import ApiException
config.load_kube_config(config_file=sys.argv[1])
api = client.ApiClient()
out = {}
try:
    client.CoordinationV1Api(api).create_namespaced_lease("typed", {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": "py"}, "spec": {"holderIdentity": "me", "leaseDurationSeconds": 15.0}})
    out["lease"] = "created"
except ApiException as e:
    out["lease"] = {"http": e.status, "body": json.loads(e.body)}
out["fixed"] = client.CoordinationV1Api(api).create_namespaced_lease("typed", {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": "py"}, "spec": {"holderIdentity": "me", "leaseDurationSeconds": 15}}).spec.lease_duration_seconds
print(json.dumps(out))
`);
      const lease = out['lease'] as { http: number; body: Status };
      assert.equal(lease.http, 400);
      assert.equal(lease.body.reason, 'BadRequest');
      assert.equal(
        lease.body.message,
        'Lease in version "v1" cannot be handled as a Lease: json: cannot unmarshal number 15.0 into Go struct field LeaseSpec.spec.leaseDurationSeconds of type int32',
      );
      assert.equal(out['fixed'], 15);
    });
  });

  describe("a CRD schema's default, enum and example integers", () => {
    it('int64s past 2^53 are kept exactly (raw JSON, kubectl, JSON patch), as upstream keeps the raw JSON; so are the others', async () => {
      const made = await send(
        'POST',
        CRDS,
        crdText(
          'inexacts',
          '{"type":"object","properties":{"spec":{"type":"object","properties":{"n":{"type":"integer","default":9007199254740993},"m":{"type":"integer","enum":[1,9223372036854775807]}}}}}',
        ),
      );
      assert.equal(made.status, 201, made.text());
      const inexacts = (await raw.request({ path: `${CRDS}/inexacts.typed.example.com` })).text();
      assert.ok(inexacts.includes('"n":{"type":"integer","default":9007199254740993}'), inexacts);
      assert.ok(inexacts.includes('"m":{"type":"integer","enum":[1,9223372036854775807]}'), inexacts);
      // kubectl converts YAML to JSON keeping int64s exact (sigs.k8s.io/yaml), so the server sees the integer as written.
      const file = await kc.file(
        'inexact.yaml',
        `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: yamls.typed.example.com}
spec:
  group: typed.example.com
  scope: Namespaced
  names: {plural: yamls, kind: Yaml}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: integer, example: 1152921504606846976}
`,
      );
      await kc.ok(['create', '-f', file]);
      assert.match((await raw.request({ path: `${CRDS}/yamls.typed.example.com` })).text(), /"size":\{"example":1152921504606846976,"type":"integer"\}/);

      // One a double holds is kept exactly: in the stored CRD, its OpenAPI and the objects it defaults.
      const schema =
        '{"type":"object","properties":{"spec":{"type":"object","properties":{"n":{"type":"integer","default":9007199254740991,"enum":[-9007199254740991,9007199254740991,7]},"f":{"type":"number","default":12345678901234567890,"example":0.1}}}}}';
      assert.equal((await send('POST', CRDS, crdText('exacts', schema))).status, 201);
      await waitServed(raw, '/apis/typed.example.com/v1/namespaces/typed/exacts');
      const crd = (await raw.request({ path: `${CRDS}/exacts.typed.example.com` })).text();
      // Upstream converts the raw JSON through int64/float64 (util/json) and back with json.Marshal:
      // the integer as sent, the number past int64 as its float64 prints (also 12345678901234567000 in Go).
      assert.ok(crd.includes('"n":{"type":"integer","default":9007199254740991,"enum":[-9007199254740991,9007199254740991,7]}'), crd);
      assert.ok(crd.includes('"f":{"type":"number","default":12345678901234567000,"example":0.1}'), crd);
      const v3 = (await raw.request({ path: '/openapi/v3/apis/typed.example.com/v1' })).text();
      assert.ok(v3.includes('"default":9007199254740991'), 'OpenAPI v3 publishes the default exactly');
      assert.ok(v3.includes('"enum":[-9007199254740991,9007199254740991,7]'), 'and the enum');
      const created = await send(
        'POST',
        '/apis/typed.example.com/v1/namespaces/typed/exacts',
        '{"apiVersion":"typed.example.com/v1","kind":"Kexacts","metadata":{"name":"o"},"spec":{}}',
      );
      assert.equal(created.status, 201, created.text());
      for (const field of ['"n":9007199254740991', '"f":12345678901234567000']) assert.ok(created.text().includes(field), created.text());
      const got = (await raw.request({ path: '/apis/typed.example.com/v1/namespaces/typed/exacts/o' })).text();
      assert.ok(got.includes('"n":9007199254740991'), got);
      // A JSON patch carries its integers exactly too.
      const patched = await send(
        'PATCH',
        `${CRDS}/exacts.typed.example.com`,
        '[{"op":"replace","path":"/spec/versions/0/schema/openAPIV3Schema/properties/spec/properties/n/enum","value":[7,9007199254740991,9007199254740993]}]',
        'application/json-patch+json',
      );
      assert.equal(patched.status, 200, patched.text());
      assert.ok((await raw.request({ path: `${CRDS}/exacts.typed.example.com` })).text().includes('"enum":[7,9007199254740991,9007199254740993]'));
    });
  });
});
