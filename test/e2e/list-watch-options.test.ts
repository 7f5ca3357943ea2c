// List and watch options as kube-apiserver reads them: ListOptions validation (422 on
// ListOptions.meta.k8s.io with upstream's causes), reads at a revision not reached yet, the limit
// ignored at resourceVersion=0, selector transitions, the initial-events-end bookmark, Table and
// PartialObjectMetadata watch frames, timeoutSeconds and the named-watch field selector.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { adminCredentials, RawClient, watchLines, type KubeStatus, type RawResponse } from '../support/https.js';
import { startTestServer, type TestServer } from '../support/server.js';

const NS = 'default';
const CMS = `/api/v1/namespaces/${NS}/configmaps`;
const JSON_CT = { 'content-type': 'application/json', accept: 'application/json' };

interface Cause {
  reason?: string;
  message?: string;
  field?: string;
}
type Status = KubeStatus & { details?: { causes?: Cause[]; retryAfterSeconds?: number; kind?: string; group?: string } };
interface Obj {
  kind?: string;
  apiVersion?: string;
  metadata: {
    name?: string;
    resourceVersion?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    continue?: string;
    remainingItemCount?: number;
  };
  items?: Obj[];
  columnDefinitions?: unknown[] | null;
  rows?: { cells: unknown[]; object?: Obj }[];
}

describe('list and watch options', { timeout: 90_000 }, () => {
  let server: TestServer;
  let client: RawClient;

  const get = (path: string, headers: Record<string, string> = { accept: 'application/json' }): Promise<RawResponse> => client.request({ path, headers });
  const status = (r: RawResponse, code: number): Status => {
    assert.equal(r.status, code, r.text().slice(0, 600));
    const st = r.json<Status>();
    assert.equal(st.kind, 'Status');
    assert.equal(st.code, code);
    return st;
  };
  const listOptionsInvalid = (r: RawResponse, causes: string[]): void => {
    const st = status(r, 422);
    assert.equal(st.reason, 'Invalid');
    assert.equal(st.details?.group, 'meta.k8s.io');
    assert.equal(st.details?.kind, 'ListOptions');
    assert.deepEqual(
      (st.details?.causes ?? []).map((c) => `${c.field}: ${c.message}`),
      causes,
    );
  };
  const currentRv = async (): Promise<number> => Number((await get(CMS)).json<Obj>().metadata.resourceVersion);
  const create = async (name: string, labels: Record<string, string> = {}): Promise<Obj> => {
    const r = await client.request({
      method: 'POST',
      path: CMS,
      headers: JSON_CT,
      body: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, labels }, data: { a: '1' } }),
    });
    assert.equal(r.status, 201, r.text());
    return r.json<Obj>();
  };

  before(async () => {
    server = await startTestServer({ watchBookmarkIntervalMs: 60_000 });
    client = new RawClient(server.url, adminCredentials(server.dataDir));
    for (let i = 0; i < 5; i++) await create(`seed-${i}`, { app: 'seed' });
  });
  after(async () => {
    client?.close();
    await server?.stop();
  });

  it('list options: sendInitialEvents and resourceVersionMatch with continue are 422s with upstream causes', async () => {
    listOptionsInvalid(await get(`${CMS}?sendInitialEvents=true`), ['sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list']);
    listOptionsInvalid(await get(`${CMS}?sendInitialEvents=false`), ['sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list']);
    const page = (await get(`${CMS}?limit=2`)).json<Obj>();
    assert.ok(page.metadata.continue);
    listOptionsInvalid(await get(`${CMS}?limit=2&continue=${page.metadata.continue}&resourceVersionMatch=NotOlderThan`), [
      'resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided',
      'resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden when continue is provided',
    ]);
    listOptionsInvalid(await get(`${CMS}?limit=2&continue=${page.metadata.continue}&resourceVersionMatch=Exact&resourceVersion=5`), [
      'resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden when continue is provided',
    ]);
    // A continue token that is not one.
    const bad = status(await get(`${CMS}?limit=2&continue=garbage`), 400);
    assert.match(bad.message ?? '', /^invalid continue token: continue key is not valid: /);
  });

  it('watch options: upstream validateWatchOptions causes', async () => {
    const w = `${CMS}?watch=1`;
    listOptionsInvalid(await get(`${w}&resourceVersionMatch=NotOlderThan&resourceVersion=1`), [
      'resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided',
    ]);
    listOptionsInvalid(await get(`${w}&resourceVersionMatch=Exact&resourceVersion=1`), [
      'resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided',
      'resourceVersionMatch: Unsupported value: "Exact": supported values: "NotOlderThan"',
    ]);
    listOptionsInvalid(await get(`${w}&sendInitialEvents=true`), [
      'resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan',
    ]);
    listOptionsInvalid(await get(`${w}&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&continue=abc`), [
      'resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden when continue is provided',
    ]);
  });

  it('parameters read as Go reads them: resourceVersion, limit and timeoutSeconds', async () => {
    const rv = status(await get(`${CMS}?resourceVersion=abc`), 400);
    assert.equal(rv.message, 'invalid resource version: resourceVersion: Invalid value: "abc": strconv.ParseUint: parsing "abc": invalid syntax');
    assert.equal(
      status(await get(`${CMS}?resourceVersion=-1`), 400).message,
      'invalid resource version: resourceVersion: Invalid value: "-1": strconv.ParseUint: parsing "-1": invalid syntax',
    );
    assert.equal(status(await get(`${CMS}?limit=abc`), 400).message, 'strconv.ParseInt: parsing "abc": invalid syntax');
    assert.equal(status(await get(`${CMS}?watch=1&timeoutSeconds=1.5`), 400).message, 'strconv.ParseInt: parsing "1.5": invalid syntax');
    // limit ≤ 0 is no limit.
    const all = (await get(`${CMS}?limit=-1`)).json<Obj>();
    assert.ok((all.items?.length ?? 0) >= 5);
    assert.equal(all.metadata.continue, undefined);
  });

  it('parameters read as strconv reads them: overflow found before a bad character, inputs quoted by strconv.Quote', async () => {
    // Go reads digits left to right and reports the overflow before it meets the "x".
    assert.equal(status(await get(`${CMS}?limit=99999999999999999999x`), 400).message, 'strconv.ParseInt: parsing "99999999999999999999x": value out of range');
    assert.equal(status(await get(`${CMS}?limit=9223372036854775808`), 400).message, 'strconv.ParseInt: parsing "9223372036854775808": value out of range');
    // NumError.Error() and field.Invalid's %q quote with strconv.Quote: \x01, not JSON's \u0001.
    assert.equal(
      status(await get(`${CMS}?resourceVersion=%01`), 400).message,
      'invalid resource version: resourceVersion: Invalid value: "\\x01": strconv.ParseUint: parsing "\\x01": invalid syntax',
    );
    assert.equal(
      status(await get(`${CMS}?resourceVersion=18446744073709551616`), 400).message,
      'invalid resource version: resourceVersion: Invalid value: "18446744073709551616": strconv.ParseUint: parsing "18446744073709551616": value out of range',
    );
  });

  it('an Exact or paged list at a revision not reached yet is a 504 at once; resourceVersion=0 ignores the limit', async () => {
    const far = (await currentRv()) + 1000;
    for (const q of [`resourceVersion=${far}&resourceVersionMatch=Exact`, `resourceVersion=${far}&limit=1`]) {
      const st = status(await get(`${CMS}?${q}`), 504);
      assert.equal(st.reason, 'Timeout');
      assert.match(st.message ?? '', new RegExp(`^Timeout: Too large resource version: ${far}, current: \\d+$`));
      // No retryAfterSeconds: storage's ErrFutureRev at once, not the cacher's answer after its
      // 3 s wait (which carries retryAfterSeconds: 1, see http.test.ts).
      assert.deepEqual(st.details, { causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }] });
    }
    for (const q of ['resourceVersion=0&limit=2', 'resourceVersion=0&resourceVersionMatch=NotOlderThan&limit=2']) {
      const list = (await get(`${CMS}?${q}`)).json<Obj>();
      assert.ok((list.items?.length ?? 0) >= 5, `${q}: ${list.items?.length} items`);
      assert.equal(list.metadata.continue, undefined);
      assert.equal(list.metadata.remainingItemCount, undefined);
    }
  });

  it("an object leaving the selector is DELETED as it was, at the event's resourceVersion", async () => {
    await create('mover', { app: 'y' });
    const rv = await currentRv();
    const w = await client.stream({ path: `${CMS}?watch=1&labelSelector=app%3Dy&resourceVersion=${rv}` });
    try {
      const patched = await client.request({
        method: 'PATCH',
        path: `${CMS}/mover`,
        headers: { 'content-type': 'application/merge-patch+json' },
        body: '{"metadata":{"labels":{"app":"z"}}}',
      });
      assert.equal(patched.status, 200);
      const patchedRv = patched.json<Obj>().metadata.resourceVersion;
      const ev = await w.waitFor((d) => watchLines(d).find((e) => e.type === 'DELETED'), 5_000);
      assert.deepEqual((ev.object.metadata as Obj['metadata']).labels, { app: 'y' });
      assert.equal(ev.object.metadata?.resourceVersion, patchedRv);
    } finally {
      w.close();
    }
  });

  it('the initial-events-end bookmark only for a client that allows bookmarks', async () => {
    const base = `${CMS}?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&labelSelector=app%3Dseed&timeoutSeconds=1`;
    const plain = await client.stream({ path: base });
    await plain.ended;
    const events = watchLines(plain.data());
    assert.equal(events.filter((e) => e.type === 'ADDED').length, 5);
    assert.equal(events.filter((e) => e.type === 'BOOKMARK').length, 0);
    const withBookmarks = await client.stream({ path: `${base}&allowWatchBookmarks=true` });
    await withBookmarks.ended;
    const marks = watchLines(withBookmarks.data()).filter((e) => e.type === 'BOOKMARK');
    assert.equal(marks.length, 1);
    assert.equal((marks[0]!.object.metadata as Obj['metadata']).annotations?.['k8s.io/initial-events-end'], 'true');
  });

  it("Table watch: column definitions on the first frame only, the row's resourceVersion in each, bookmarks as Tables", async () => {
    const table = { accept: 'application/json;as=Table;g=meta.k8s.io;v=v1' };
    const w = await client.stream({
      path: `${CMS}?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&labelSelector=app%3Dseed&timeoutSeconds=1`,
      headers: table,
    });
    await w.ended;
    const frames = watchLines(w.data()) as unknown as { type: string; object: Obj }[];
    assert.equal(frames.length, 6, JSON.stringify(frames.map((f) => f.type)));
    assert.ok(frames.every((f) => f.object.kind === 'Table'));
    assert.ok(Array.isArray(frames[0]!.object.columnDefinitions) && frames[0]!.object.columnDefinitions.length > 0);
    for (const f of frames.slice(1)) assert.equal(f.object.columnDefinitions, null);
    for (const f of frames.slice(0, 5)) assert.equal(f.object.metadata.resourceVersion, f.object.rows?.[0]?.object?.metadata.resourceVersion);
    const bookmark = frames[5]!;
    assert.equal(bookmark.type, 'BOOKMARK');
    assert.equal(bookmark.object.rows?.[0]?.object?.kind, 'PartialObjectMetadata');
    assert.equal(bookmark.object.rows?.[0]?.object?.metadata.annotations?.['k8s.io/initial-events-end'], 'true');
    // PartialObjectMetadata: the bookmark too.
    const pom = await client.stream({
      path: `${CMS}?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&labelSelector=app%3Dseed&timeoutSeconds=1`,
      headers: { accept: 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1' },
    });
    await pom.ended;
    const objs = watchLines(pom.data());
    assert.equal(objs.length, 6);
    assert.ok(
      objs.every((e) => e.object.kind === 'PartialObjectMetadata' && e.object.apiVersion === 'meta.k8s.io/v1'),
      JSON.stringify(objs.at(-1)),
    );
  });

  it('a YAML watch is 406; timeoutSeconds=0 is the default timeout, a negative one ends at once; a named watch refuses another name', async () => {
    // The Status itself is negotiated as any answer: YAML is fine for it.
    const yaml = await get(`${CMS}?watch=1`, { accept: 'application/yaml' });
    assert.equal(yaml.status, 406);
    assert.match(
      yaml.text(),
      /^message: "only the following media types are accepted: application\/json;stream=watch, application\/vnd.kubernetes.protobuf;stream=watch"$/m,
    );
    const rv = await currentRv();
    const zero = await client.stream({ path: `${CMS}?watch=1&timeoutSeconds=0&resourceVersion=${rv}` });
    try {
      await new Promise((r) => setTimeout(r, 300));
      await create('after-zero');
      const ev = await zero.waitFor((d) => watchLines(d).find((e) => e.object.metadata?.name === 'after-zero'), 5_000);
      assert.equal(ev.type, 'ADDED');
    } finally {
      zero.close();
    }
    const negative = await client.stream({ path: `${CMS}?watch=1&timeoutSeconds=-1&resourceVersion=${rv}` });
    await Promise.race([negative.ended, new Promise((_, reject) => setTimeout(() => reject(new Error('a watch with timeoutSeconds=-1 did not end')), 3_000))]);
    const named = `/api/v1/watch/namespaces/${NS}/configmaps/seed-0`;
    assert.equal(status(await get(`${named}?fieldSelector=metadata.name%3Dseed-1`), 400).message, "fieldSelector metadata.name doesn't match requested name");
    assert.equal(
      status(await get(`${named}?fieldSelector=metadata.namespace%3Ddefault`), 400).message,
      "fieldSelector metadata.name doesn't match requested name",
    );
    const same = await client.stream({ path: `${named}?fieldSelector=metadata.name%3Dseed-0&timeoutSeconds=1` });
    await same.ended;
    assert.deepEqual(
      watchLines(same.data()).map((e) => `${e.type} ${e.object.metadata?.name}`),
      ['ADDED seed-0'],
    );
  });

  it('a watch from below the history names the lowest resourceVersion still accepted (410)', async () => {
    await create('before-compaction');
    const compactedTo = await server.cp.storage.currentRevision();
    await create('after-compaction');
    await server.cp.storage.compact(compactedTo);
    // The compacted revision itself is still a valid start (events after it exist); one below is not.
    const ok = await client.stream({ path: `${CMS}?watch=1&resourceVersion=${compactedTo}&timeoutSeconds=1` });
    await ok.ended;
    assert.deepEqual(
      watchLines(ok.data()).map((e) => `${e.type} ${e.object.metadata?.name}`),
      ['ADDED after-compaction'],
    );
    const old = await client.stream({ path: `${CMS}?watch=1&resourceVersion=${compactedTo - 1}` });
    await old.ended;
    const [ev] = watchLines(old.data());
    assert.equal(ev?.type, 'ERROR');
    assert.equal((ev?.object as { message?: string }).message, `too old resource version: ${compactedTo - 1} (${compactedTo})`);
  });

  it("field labels per kind: each kind's own (with upstream's words), events.k8s.io's names, the source fallback", async () => {
    assert.equal(
      status(await get(`${CMS}?fieldSelector=data.a%3D1`), 400).message,
      '"data.a" is not a known field selector: only "metadata.name", "metadata.namespace"',
    );
    assert.equal(status(await get('/api/v1/namespaces?fieldSelector=metadata.namespace%3D'), 400).message, 'field label not supported: metadata.namespace');
    assert.equal((await get('/api/v1/namespaces?fieldSelector=status.phase%3DActive')).status, 200);
    const ev = {
      apiVersion: 'events.k8s.io/v1',
      kind: 'Event',
      metadata: { name: 'ev-sel' },
      eventTime: '2025-03-04T05:06:07.000000Z',
      regarding: { kind: 'ConfigMap', namespace: NS, name: 'seed-0' },
      reason: 'Tested',
      action: 'Testing',
      type: 'Normal',
      reportingController: 'example.com/ctl',
      reportingInstance: 'i-1',
      note: 'n',
    };
    const made = await client.request({ method: 'POST', path: `/apis/events.k8s.io/v1/namespaces/${NS}/events`, headers: JSON_CT, body: JSON.stringify(ev) });
    assert.equal(made.status, 201, made.text());
    const v1 = `/apis/events.k8s.io/v1/namespaces/${NS}/events`;
    assert.equal(status(await get(`${v1}?fieldSelector=involvedObject.name%3Dseed-0`), 400).message, 'field label not supported: involvedObject.name');
    assert.deepEqual(
      (await get(`${v1}?fieldSelector=regarding.name%3Dseed-0`)).json<Obj>().items?.map((i) => i.metadata.name),
      ['ev-sel'],
    );
    // core/v1 `source` is the source component, or the reporting controller when there is none.
    assert.deepEqual(
      (await get(`/api/v1/namespaces/${NS}/events?fieldSelector=source%3Dexample.com%2Fctl`)).json<Obj>().items?.map((i) => i.metadata.name),
      ['ev-sel'],
    );
  });
});
