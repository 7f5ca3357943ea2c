// The hand-written etcd codec against protobufjs reading etcd's own .proto files (as shipped with
// the etcd3 package): what we encode, protobufjs decodes to the same request; what protobufjs
// encodes as etcd would, we decode to the same values.
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { before, describe, it } from 'node:test';
import protobuf from 'protobufjs';
import {
  CompareResult,
  CompareTarget,
  GRPC_PREFIX,
  WATCH_PROGRESS_REQUEST,
  decodeRangeResponse,
  decodeTxnResponse,
  decodeWatchResponse,
  encodeCompactionRequest,
  encodeRangeRequest,
  encodeTxnRequest,
  encodeWatchCreateRequest,
} from './etcd-proto.js';

const protoDir = join(dirname(createRequire(import.meta.url).resolve('etcd3/package.json')), 'proto');
let root: protobuf.Root;
const type = (name: string): protobuf.Type => root.lookupType(name);
/** protobufjs's view of a framed message of ours, int64s as numbers, enums as numbers. */
const decoded = (name: string, framed: Buffer): Record<string, unknown> => {
  assert.equal(framed[0], 0);
  assert.equal(framed.readUInt32BE(1), framed.length - GRPC_PREFIX);
  const t = type(name);
  return t.toObject(t.decode(framed.subarray(GRPC_PREFIX)), { longs: Number, defaults: false, oneofs: true }) as Record<string, unknown>;
};
const encoded = (name: string, obj: Record<string, unknown>): Buffer => {
  const t = type(name);
  return Buffer.from(t.encode(t.fromObject(obj)).finish());
};

before(async () => {
  root = new protobuf.Root();
  root.resolvePath = (_origin, target) => join(protoDir, target.replace(/^.*\//, ''));
  await root.load('rpc.proto', { keepCase: true });
});

const key = Buffer.from('/registry/configmaps/ns/é-name');
const big = Buffer.alloc(200_000, 7);
const bigRevision = 2 ** 40 + 3;

describe('etcd codec: requests', () => {
  it('txn create-if-absent, update and delete, including a zero create_revision compare', () => {
    const t = decoded(
      'etcdserverpb.TxnRequest',
      encodeTxnRequest({
        compare: [
          { key, target: CompareTarget.Create, result: CompareResult.Equal, value: 0 },
          { key, target: CompareTarget.Mod, result: CompareResult.Equal, value: bigRevision },
          { key, target: CompareTarget.Version, result: CompareResult.Greater, value: 5 },
        ],
        success: [{ put: { key, value: big, prevKv: true } }, { deleteRange: { key, prevKv: true } }],
        failure: [{ range: { key } }],
      }),
    );
    assert.deepEqual(t, {
      compare: [
        { key, target: CompareTarget.Create, create_revision: 0, target_union: 'create_revision' },
        { key, target: CompareTarget.Mod, mod_revision: bigRevision, target_union: 'mod_revision' },
        { key, result: CompareResult.Greater, version: 5, target_union: 'version' }, // target Version is 0, the default
      ],
      success: [
        { request_put: { key, value: big, prev_kv: true }, request: 'request_put' },
        { request_delete_range: { key, prev_kv: true }, request: 'request_delete_range' },
      ],
      failure: [{ request_range: { key }, request: 'request_range' }],
    });
  });

  it('range: prefix, revision, limit, sort by key, count only', () => {
    const end = Buffer.from('/registry/configmaps0');
    assert.deepEqual(decoded('etcdserverpb.RangeRequest', encodeRangeRequest({ key, rangeEnd: end, revision: bigRevision, limit: 10_000, sortByKey: true })), {
      key,
      range_end: end,
      revision: bigRevision,
      limit: 10_000,
      sort_order: 1,
    });
    assert.deepEqual(decoded('etcdserverpb.RangeRequest', encodeRangeRequest({ key, countOnly: true })), { key, count_only: true });
    assert.throws(() => encodeRangeRequest({ key, revision: -1 }), RangeError);
  });

  it('watch create, progress request, compaction', () => {
    const end = Buffer.from('/b');
    assert.deepEqual(decoded('etcdserverpb.WatchRequest', encodeWatchCreateRequest({ key, rangeEnd: end, startRevision: 42, progressNotify: true, prevKv: true })), {
      create_request: { key, range_end: end, start_revision: 42, progress_notify: true, prev_kv: true },
      request_union: 'create_request',
    });
    assert.deepEqual(decoded('etcdserverpb.WatchRequest', WATCH_PROGRESS_REQUEST), { progress_request: {}, request_union: 'progress_request' });
    assert.deepEqual(decoded('etcdserverpb.CompactionRequest', encodeCompactionRequest(bigRevision, true)), { revision: bigRevision, physical: true });
  });
});

describe('etcd codec: responses', () => {
  // Header fields etcd always sends, uint64s near 2^64 included: they must be skipped cleanly.
  const header = { cluster_id: '14841639068965178418', member_id: '10276657743932975437', revision: bigRevision, raft_term: 2 };
  const kv = { key, create_revision: 7, mod_revision: bigRevision, version: 3, value: big, lease: 99 };

  it('txn responses: put with prev_kv, delete with prev_kvs, failed compare with a range', () => {
    const put = decodeTxnResponse(encoded('etcdserverpb.TxnResponse', { header, succeeded: true, responses: [{ response_put: { header, prev_kv: kv } }] }));
    assert.equal(put.revision, bigRevision);
    assert.equal(put.succeeded, true);
    const op = put.responses[0];
    assert.equal(op?.kind, 'put');
    assert.deepEqual(op.kind === 'put' ? op.prevKv : undefined, { key, createRevision: 7, modRevision: bigRevision, version: 3, value: big });

    const del = decodeTxnResponse(encoded('etcdserverpb.TxnResponse', { header, succeeded: true, responses: [{ response_delete_range: { header, deleted: 1, prev_kvs: [kv] } }] }));
    assert.equal(del.responses[0]?.kind === 'delete' && del.responses[0].prevKvs.length, 1);

    const failed = decodeTxnResponse(encoded('etcdserverpb.TxnResponse', { header, succeeded: false, responses: [{ response_range: { header, kvs: [kv], count: 1 } }] }));
    assert.equal(failed.succeeded, false);
    assert.equal(failed.responses[0]?.kind === 'range' && failed.responses[0].kvs[0]?.modRevision, bigRevision);
  });

  it('range responses: kvs, more, count; an empty value and a missing key', () => {
    const r = decodeRangeResponse(encoded('etcdserverpb.RangeResponse', { header, kvs: [kv, { ...kv, value: Buffer.alloc(0) }], more: true, count: 12 }));
    assert.equal(r.revision, bigRevision);
    assert.equal(r.more, true);
    assert.equal(r.count, 12);
    assert.equal(r.kvs.length, 2);
    assert.equal(r.kvs[1]?.value.length, 0);
    assert.deepEqual(decodeRangeResponse(encoded('etcdserverpb.RangeResponse', { header })), { revision: bigRevision, kvs: [], more: false, count: 0 });
  });

  it('watch responses: events with prev_kv, progress, cancellation after compaction', () => {
    const w = decodeWatchResponse(
      encoded('etcdserverpb.WatchResponse', { header, watch_id: 3, events: [{ type: 0, kv }, { type: 1, kv: { key, mod_revision: bigRevision + 1 }, prev_kv: kv }] }),
    );
    assert.equal(w.watchId, 3);
    assert.equal(w.events.length, 2);
    assert.equal(w.events[0]?.type, 0);
    assert.equal(w.events[0]?.prevKv, undefined);
    assert.equal(w.events[1]?.type, 1);
    assert.equal(w.events[1]?.kv?.modRevision, bigRevision + 1);
    assert.equal(w.events[1]?.prevKv?.value.length, big.length);

    const progress = decodeWatchResponse(encoded('etcdserverpb.WatchResponse', { header }));
    assert.deepEqual(progress.events, []);
    assert.equal(progress.revision, bigRevision);

    const canceled = decodeWatchResponse(encoded('etcdserverpb.WatchResponse', { header, canceled: true, compact_revision: 40, cancel_reason: 'mvcc: required revision has been compacted' }));
    assert.equal(canceled.canceled, true);
    assert.equal(canceled.compactRevision, 40);
    assert.match(canceled.cancelReason, /compacted/);
  });

  it('a truncated message fails instead of reading past its end', () => {
    const full = encoded('etcdserverpb.RangeResponse', { header, kvs: [kv] });
    assert.throws(() => decodeRangeResponse(full.subarray(0, full.length - 10)), /truncated/);
  });
});
