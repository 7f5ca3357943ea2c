// Table output (`as=Table`, what `kubectl get` asks for) as kube-apiserver answers it, kind by kind:
// the column definitions of pkg/printers/internalversion's AddHandlers (descriptions are the
// types' SwaggerDoc texts; `format` is always on the wire), the cells of its print functions with
// their edge cases (events without a name, a count or a lastTimestamp, series, sources), the default
// convertor of kinds without printers (CRDs: Name, Created At), the custom-resource convertor
// (additionalPrinterColumns: descriptions, JSONPath values per type, dates as ages, <invalid>,
// <unknown>, missing values as null), and how kubectl 1.20 and 1.33 print them (`get`, `get -o wide`).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { waitServed } from '../support/crd.js';
import type { RawClient } from '../support/https.js';
import { KUBECTLS, useKubectlServer } from '../support/kubectl.js';
import { ensureTools } from '../support/tools.js';

ensureTools();

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
/** A metav1.Time `ms` before now, in whole seconds. */
const ago = (ms: number): string => new Date(Date.now() - ms).toISOString().replace(/\.\d+Z$/, 'Z');
/** A metav1.MicroTime `ms` before now. */
const agoMicro = (ms: number): string => new Date(Date.now() - ms).toISOString().replace(/Z$/, '000Z');

const NAME_DESC =
  'Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names';
const CREATED_DESC =
  'CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata';

interface Column {
  name: string;
  type: string;
  format: string;
  description: string;
  priority: number;
}
const col = (name: string, description: string, o: Partial<Column> = {}): Column => ({ name, type: 'string', format: '', description, priority: 0, ...o });
const NAME = col('Name', NAME_DESC, { format: 'name' });
const AGE = col('Age', CREATED_DESC);

interface Table {
  kind: string;
  apiVersion: string;
  metadata: { resourceVersion?: string };
  columnDefinitions: Column[];
  rows: { cells: unknown[]; object?: { kind?: string; apiVersion?: string; metadata?: { name?: string } } }[];
}

const TABLE = 'application/json;as=Table;v=v1;g=meta.k8s.io';

async function table(raw: RawClient, path: string): Promise<Table> {
  const res = await raw.request({ path, headers: { accept: TABLE } });
  assert.equal(res.status, 200, res.text().slice(0, 500));
  return res.json<Table>();
}

async function post(raw: RawClient, path: string, body: unknown): Promise<void> {
  const res = await raw.request({
    method: 'POST',
    path,
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify(body),
  });
  assert.equal(res.status, 201, res.text().slice(0, 500));
}

const CRD = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'widgets.tf.example.com' },
  spec: {
    group: 'tf.example.com',
    scope: 'Namespaced',
    names: { plural: 'widgets', singular: 'widget', kind: 'Widget' },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        additionalPrinterColumns: [
          { name: 'Replicas', type: 'string', jsonPath: '.spec.replicas' },
          { name: 'Ratio', type: 'string', jsonPath: '.spec.ratio' },
          { name: 'Selector', type: 'string', jsonPath: '.spec.selector' },
          { name: 'Count', type: 'integer', format: 'int32', jsonPath: '.spec.count' },
          { name: 'Ready', type: 'boolean', jsonPath: '.spec.ready' },
          { name: 'Started', type: 'date', jsonPath: '.spec.started' },
          { name: 'Maybe', type: 'string', jsonPath: '.spec.maybe' },
          { name: 'Note', type: 'string', jsonPath: '.spec.note', priority: 1, description: 'A note.' },
        ],
        schema: {
          openAPIV3Schema: {
            type: 'object',
            properties: {
              spec: {
                type: 'object',
                properties: {
                  replicas: { type: 'integer' },
                  ratio: { type: 'number' },
                  selector: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
                  count: { type: 'number' },
                  ready: { type: 'boolean' },
                  started: { type: 'string' },
                  maybe: { type: 'string', nullable: true },
                  note: { type: 'string' },
                },
              },
            },
          },
        },
      },
    ],
  },
};

const widget = (name: string, spec: Record<string, unknown>): unknown => ({
  apiVersion: 'tf.example.com/v1',
  kind: 'Widget',
  metadata: { name, namespace: 'default' },
  spec,
});

/** Objects whose table rows do not depend on when the test runs (times far enough in the past). */
async function seed(raw: RawClient): Promise<void> {
  const EV = '/api/v1/namespaces/default/events';
  // No name in involvedObject, no lastTimestamp, count 0, only a host as source.
  await post(raw, EV, {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { name: 'e1' },
    involvedObject: { kind: 'Node', name: '' },
    reason: 'Rebooted',
    type: 'Warning',
    message: '  node rebooted \n',
    source: { host: 'n1' },
    firstTimestamp: ago(10 * DAY + HOUR),
    count: 0,
  });
  // A series: its time and count win over lastTimestamp and count.
  await post(raw, EV, {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { name: 'e2' },
    involvedObject: { kind: 'Pod', namespace: 'default', name: 'web', fieldPath: 'spec.containers{app}' },
    reason: 'BackOff',
    type: 'Normal',
    message: 'back-off',
    source: { component: 'kubelet', host: 'n2' },
    firstTimestamp: ago(30 * DAY + HOUR),
    lastTimestamp: ago(20 * DAY + HOUR),
    count: 7,
    series: { count: 4, lastObservedTime: agoMicro(3 * DAY + 5 * HOUR + 60_000) },
  });
  // The new API: eventTime only, reporting controller and instance as the source.
  await post(raw, '/apis/events.k8s.io/v1/namespaces/default/events', {
    apiVersion: 'events.k8s.io/v1',
    kind: 'Event',
    metadata: { name: 'e3' },
    regarding: { kind: 'Pod', namespace: 'default', name: 'web' },
    reason: 'Pulled',
    type: 'Normal',
    note: 'pulled',
    action: 'Pull',
    eventTime: agoMicro(9 * DAY + HOUR),
    reportingController: 'kubelet',
    reportingInstance: 'n3',
  });
  await post(raw, '/api/v1/namespaces/default/serviceaccounts', {
    apiVersion: 'v1',
    kind: 'ServiceAccount',
    metadata: { name: 'sa1' },
    secrets: [{ name: 'a' }, { name: 'b' }],
  });
  await post(raw, '/apis/coordination.k8s.io/v1/namespaces/default/leases', {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: { name: 'nobody' },
    spec: {},
  });
  await post(raw, '/apis/coordination.k8s.io/v1/namespaces/default/leases', {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: { name: 'held' },
    spec: { holderIdentity: 'me' },
  });
  await post(raw, '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', CRD);
  await waitServed(raw, '/apis/tf.example.com/v1/widgets');
  const W = '/apis/tf.example.com/v1/namespaces/default/widgets';
  await post(
    raw,
    W,
    widget('w1', {
      replicas: 3,
      ratio: 1234567.5,
      selector: { b: 'x<y', a: [1, 0.5] },
      count: 2.9,
      ready: true,
      started: ago(10 * DAY + HOUR),
      maybe: null,
      note: 'hello',
    }),
  );
  await post(raw, W, widget('w2', { ratio: 0.00001, started: '2020-01-01', maybe: 'yes' }));
  await post(raw, W, widget('w3', { ratio: 0.25, started: '' }));
}

const AGE_CELL = /^(\d+s|\d+m\d*s?)$/;

describe('Table JSON per kind, as kube-apiserver answers', { concurrency: false, timeout: 60_000 }, () => {
  const env = useKubectlServer(KUBECTLS[1].bin, 'kplane-table-fidelity-json-');

  it('seeds events, a service account, leases, a CRD and custom resources', async () => {
    await seed(env.raw);
  });

  it('core/v1 and events.k8s.io/v1 events: printEvent columns and cells', async () => {
    const cols = [
      col('Last Seen', 'The time at which the most recent occurrence of this event was recorded.'),
      col('Type', 'Type of this event (Normal, Warning), new types could be added in the future'),
      col('Reason', "This should be a short, machine understandable string that gives the reason for the transition into the object's current status."),
      col('Object', 'The object that this event is about.'),
      col(
        'Subobject',
        'If referring to a piece of an object instead of an entire object, this string should contain a valid JSON/Go field access statement, such as desiredState.manifest.containers[2]. For example, if the object reference is to a container within a pod, this would take on a value like: "spec.containers{name}" (where "name" refers to the name of the container that triggered the event) or if no container name is specified "spec.containers[2]" (container with index 2 in this pod). This syntax is chosen only to have some well-defined way of referencing a part of an object.',
        { priority: 1 },
      ),
      col('Source', 'The component reporting this event. Should be a short machine understandable string.', { priority: 1 }),
      col('Message', 'A human-readable description of the status of this operation.'),
      col('First Seen', 'The time at which the event was first recorded. (Time of server receipt is in TypeMeta.)', { priority: 1 }),
      col('Count', 'The number of times this event has occurred.', { priority: 1 }),
      { ...NAME, priority: 1 },
    ];
    const rows = [
      ['10d', 'Warning', 'Rebooted', 'node', '', ', n1', 'node rebooted', '10d', 1, 'e1'],
      ['3d5h', 'Normal', 'BackOff', 'pod/web', 'spec.containers{app}', 'kubelet, n2', 'back-off', '30d', 4, 'e2'],
      ['9d', 'Normal', 'Pulled', 'pod/web', '', 'kubelet, n3', 'pulled', '9d', 1, 'e3'],
    ];
    for (const path of ['/api/v1/namespaces/default/events', '/apis/events.k8s.io/v1/namespaces/default/events']) {
      const t = await table(env.raw, path);
      assert.deepEqual(t.columnDefinitions, cols, path);
      assert.deepEqual(
        t.rows.map((r) => r.cells),
        rows,
        path,
      );
      assert.deepEqual(
        t.rows.map((r) => [r.object?.kind, r.object?.apiVersion]),
        rows.map(() => ['PartialObjectMetadata', 'meta.k8s.io/v1']),
      );
    }
  });

  it('namespaces, service accounts and leases', async () => {
    const ns = await table(env.raw, '/api/v1/namespaces/default');
    assert.deepEqual(ns.columnDefinitions, [NAME, col('Status', 'The status of the namespace'), AGE]);
    assert.deepEqual(ns.rows[0]!.cells.slice(0, 2), ['default', 'Active']);
    assert.match(String(ns.rows[0]!.cells[2]), AGE_CELL);

    const sa = await table(env.raw, '/api/v1/namespaces/default/serviceaccounts/sa1');
    assert.deepEqual(
      sa.columnDefinitions.map((c) => [c.name, c.type, c.format, c.priority]),
      [
        ['Name', 'string', 'name', 0],
        ['Secrets', 'string', '', 0],
        ['Age', 'string', '', 0],
      ],
    );
    assert.match(
      sa.columnDefinitions[1]!.description,
      /^Secrets is a list of the secrets in the same namespace that pods running using this ServiceAccount are allowed to use\. Pods are only limited/,
    );
    assert.deepEqual(sa.columnDefinitions[2], AGE);
    assert.deepEqual(sa.rows[0]!.cells.slice(0, 2), ['sa1', 2]);

    const leases = await table(env.raw, '/apis/coordination.k8s.io/v1/namespaces/default/leases');
    assert.deepEqual(leases.columnDefinitions, [
      NAME,
      col(
        'Holder',
        'holderIdentity contains the identity of the holder of a current lease. If Coordinated Leader Election is used, the holder identity must be equal to the elected LeaseCandidate.metadata.name field.',
      ),
      AGE,
    ]);
    assert.deepEqual(
      leases.rows.map((r) => r.cells.slice(0, 2)),
      [
        ['held', 'me'],
        ['nobody', ''],
      ],
    );
  });

  it('configmaps and secrets: their columns (pkg/printers: the field docs as descriptions)', async () => {
    const configMapData =
      "Data contains the configuration data. Each key must consist of alphanumeric characters, '-', '_' or '.'. Values with non-UTF-8 byte sequences must use the BinaryData field. The keys stored in Data must not overlap with the keys in the BinaryData field, this is enforced during validation process.";
    const secretType =
      'Used to facilitate programmatic handling of secret data. More info: https://kubernetes.io/docs/concepts/configuration/secret/#secret-types';
    const secretData =
      "Data contains the secret data. Each key must consist of alphanumeric characters, '-', '_' or '.'. The serialized form of the secret data is a base64 encoded string, representing the arbitrary (possibly non-string) data value here. Described in https://tools.ietf.org/html/rfc4648#section-4";
    assert.deepEqual((await table(env.raw, '/api/v1/namespaces/default/configmaps')).columnDefinitions, [NAME, col('Data', configMapData), AGE]);
    assert.deepEqual((await table(env.raw, '/api/v1/namespaces/default/secrets')).columnDefinitions, [
      NAME,
      col('Type', secretType),
      col('Data', secretData),
      AGE,
    ]);
  });

  it('CRDs: the default convertor (Name, Created At as RFC 3339)', async () => {
    const res = await env.raw.request({
      path: '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.tf.example.com',
      headers: { accept: 'application/json' },
    });
    const created = res.json<{ metadata: { creationTimestamp: string } }>().metadata.creationTimestamp;
    const t = await table(env.raw, '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.tf.example.com');
    assert.deepEqual(t.columnDefinitions, [NAME, col('Created At', CREATED_DESC, { type: 'date' })]);
    assert.deepEqual(t.rows[0]!.cells, ['widgets.tf.example.com', created]);
    assert.match(created, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  });

  it('custom resources: additionalPrinterColumns, values per type, dates, missing values', async () => {
    const t = await table(env.raw, '/apis/tf.example.com/v1/namespaces/default/widgets');
    const desc = (p: string): string => `Custom resource definition column (in JSONPath format): ${p}`;
    assert.deepEqual(t.columnDefinitions, [
      NAME,
      col('Replicas', desc('.spec.replicas')),
      col('Ratio', desc('.spec.ratio')),
      col('Selector', desc('.spec.selector')),
      col('Count', desc('.spec.count'), { type: 'integer', format: 'int32' }),
      col('Ready', desc('.spec.ready'), { type: 'boolean' }),
      col('Started', desc('.spec.started'), { type: 'date' }),
      col('Maybe', desc('.spec.maybe')),
      col('Note', 'A note.', { priority: 1 }),
    ]);
    assert.deepEqual(
      t.rows.map((r) => r.cells),
      [
        ['w1', '3', '1.2345675e+06', '{"a":[1,0.5],"b":"x\\u003cy"}', 2, true, '10d', '<no value>', 'hello'],
        ['w2', null, '1e-05', null, null, null, '<invalid>', 'yes', null],
        ['w3', null, '0.25', null, null, null, '<unknown>', null, null],
      ],
    );
    // Without additionalPrinterColumns: Name and serveDefaultColumnsIfEmpty's Age (a date).
    const none = {
      ...CRD,
      metadata: { name: 'plains.tf.example.com' },
      spec: {
        ...CRD.spec,
        names: { plural: 'plains', singular: 'plain', kind: 'Plain' },
        versions: [{ ...CRD.spec.versions[0]!, additionalPrinterColumns: [] }],
      },
    };
    await post(env.raw, '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', none);
    await waitServed(env.raw, '/apis/tf.example.com/v1/plains');
    await post(env.raw, '/apis/tf.example.com/v1/namespaces/default/plains', {
      apiVersion: 'tf.example.com/v1',
      kind: 'Plain',
      metadata: { name: 'p' },
      spec: {},
    });
    const plain = await table(env.raw, '/apis/tf.example.com/v1/namespaces/default/plains');
    assert.deepEqual(plain.columnDefinitions, [NAME, col('Age', CREATED_DESC, { type: 'date' })]);
    assert.equal(plain.rows[0]!.cells[0], 'p');
    assert.match(String(plain.rows[0]!.cells[1]), AGE_CELL);
  });

  it('includeObject: None leaves rows without object, Object embeds the object as served', async () => {
    const none = await table(env.raw, '/apis/coordination.k8s.io/v1/namespaces/default/leases/held?includeObject=None');
    assert.equal(none.rows[0]!.object, undefined);
    assert.deepEqual(none.rows[0]!.cells.slice(0, 2), ['held', 'me']);
    const whole = await table(env.raw, '/apis/events.k8s.io/v1/namespaces/default/events/e1?includeObject=Object');
    assert.deepEqual(
      [whole.rows[0]!.object?.kind, whole.rows[0]!.object?.apiVersion, whole.rows[0]!.object?.metadata?.name],
      ['Event', 'events.k8s.io/v1', 'e1'],
    );
    assert.equal(whole.metadata.resourceVersion !== undefined && whole.metadata.resourceVersion !== '', true);
  });
});

/** kubectl's table text as rows of cells, cut at the header's column starts (cells may be empty). */
function parseTable(out: string): string[][] {
  const lines = out.split('\n').filter((l) => l.trim() !== '');
  const header = lines[0] ?? '';
  const starts: number[] = [];
  for (const m of header.matchAll(/\S+(?: \S+)*/g)) starts.push(m.index);
  return lines.map((l) => starts.map((s, i) => l.slice(s, i + 1 < starts.length ? starts[i + 1] : undefined).trim()));
}

for (const kubectl of KUBECTLS) {
  describe(`kubectl ${kubectl.name} get prints what it prints against kube-apiserver`, { concurrency: false, timeout: 90_000 }, () => {
    const env = useKubectlServer(kubectl.bin, `kplane-table-fidelity-${kubectl.name}-`);
    const { ok } = env;

    it('seeds', async () => {
      await seed(env.raw);
    });

    it('get events and get events -o wide', async () => {
      assert.deepEqual(parseTable(await ok(['get', 'events', '-n', 'default'])), [
        ['LAST SEEN', 'TYPE', 'REASON', 'OBJECT', 'MESSAGE'],
        ['10d', 'Warning', 'Rebooted', 'node', 'node rebooted'],
        ['3d5h', 'Normal', 'BackOff', 'pod/web', 'back-off'],
        ['9d', 'Normal', 'Pulled', 'pod/web', 'pulled'],
      ]);
      assert.deepEqual(parseTable(await ok(['get', 'events', '-n', 'default', '-o', 'wide'])), [
        ['LAST SEEN', 'TYPE', 'REASON', 'OBJECT', 'SUBOBJECT', 'SOURCE', 'MESSAGE', 'FIRST SEEN', 'COUNT', 'NAME'],
        ['10d', 'Warning', 'Rebooted', 'node', '', ', n1', 'node rebooted', '10d', '1', 'e1'],
        ['3d5h', 'Normal', 'BackOff', 'pod/web', 'spec.containers{app}', 'kubelet, n2', 'back-off', '30d', '4', 'e2'],
        ['9d', 'Normal', 'Pulled', 'pod/web', '', 'kubelet, n3', 'pulled', '9d', '1', 'e3'],
      ]);
    });

    it('get serviceaccounts and leases', async () => {
      const sa = parseTable(await ok(['get', 'serviceaccount', 'sa1', '-n', 'default']));
      assert.deepEqual(
        sa.map((r) => r.slice(0, 2)),
        [
          ['NAME', 'SECRETS'],
          ['sa1', '2'],
        ],
      );
      const leases = parseTable(await ok(['get', 'leases', '-n', 'default']));
      assert.deepEqual(
        leases.map((r) => r.slice(0, 2)),
        [
          ['NAME', 'HOLDER'],
          ['held', 'me'],
          ['nobody', ''],
        ],
      );
    });

    it('get crd: NAME and CREATED AT', async () => {
      const out = parseTable(await ok(['get', 'crd', 'widgets.tf.example.com']));
      assert.deepEqual(out[0], ['NAME', 'CREATED AT']);
      assert.equal(out[1]![0], 'widgets.tf.example.com');
      assert.match(out[1]![1]!, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    });

    it('get widgets and get widgets -o wide', async () => {
      assert.deepEqual(parseTable(await ok(['get', 'widgets', '-n', 'default'])), [
        ['NAME', 'REPLICAS', 'RATIO', 'SELECTOR', 'COUNT', 'READY', 'STARTED', 'MAYBE'],
        ['w1', '3', '1.2345675e+06', '{"a":[1,0.5],"b":"x\\u003cy"}', '2', 'true', '10d', '<no value>'],
        // kubectl prints a null cell as nothing.
        ['w2', '', '1e-05', '', '', '', '<invalid>', 'yes'],
        ['w3', '', '0.25', '', '', '', '<unknown>', ''],
      ]);
      const wide = parseTable(await ok(['get', 'widgets', '-n', 'default', '-o', 'wide']));
      assert.deepEqual(
        wide.map((r) => [r[0], r[r.length - 1]]),
        [
          ['NAME', 'NOTE'],
          ['w1', 'hello'],
          ['w2', ''],
          ['w3', ''],
        ],
      );
    });
  });
}
