// The range allocators as upstream's ipallocator/portallocator behave (ranges, static band,
// errors) and as upstream's etcd allocator persists them (a RangeAllocation bitmap updated by
// compare-and-swap: two allocators on one storage, as two API servers on one etcd, never hand
// out one item twice).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MemoryStorage } from '../../../storage/memory/memory-storage.js';
import {
  AllocationError,
  AllocationOperation,
  PersistedRange,
  SnapshotConflictError,
  bitmapSet,
  decodeBitmap,
  encodeBitmap,
  parsePortRange,
  parseServiceCIDR,
} from './allocator.js';

const isAllocationError = (reason: AllocationError['reason'], message: string) => (e: unknown) =>
  e instanceof AllocationError && e.reason === reason && e.message === message;

describe('ranges', () => {
  it('port ranges: size and static band as upstream (30000-32767: 2768 ports, offset 86)', () => {
    const r = parsePortRange('30000-32767');
    assert.equal(r.size, 2768);
    assert.equal(r.offset, 86);
    assert.equal(r.indexOf(30000), 0);
    assert.equal(r.indexOf(29999), undefined);
    assert.equal(parsePortRange('30000+10').size, 11);
    assert.equal(parsePortRange('100-110').offset, 0);
    assert.throws(() => parsePortRange('5-1'), /end port is less than start port/);
    assert.throws(() => parsePortRange('abc'), /invalid port range/);
  });

  it('service CIDRs: network and broadcast never handed out; offset min(max(16, size/16), 256)', () => {
    const r = parseServiceCIDR('127.1.0.0/16');
    assert.equal(r.size, 65534);
    assert.equal(r.offset, 256);
    assert.equal(r.itemAt(0), '127.1.0.1');
    assert.equal(r.indexOf('127.1.0.0'), undefined);
    assert.equal(r.indexOf('127.1.255.255'), undefined);
    assert.equal(r.indexOf('127.1.255.254'), 65533);
    assert.equal(parseServiceCIDR('127.1.0.0/24').offset, 16);
    assert.equal(parseServiceCIDR('127.1.0.0/28').offset, 0);
    assert.equal(parseServiceCIDR('127.1.2.3/24').text, '127.1.2.0/24');
    assert.throws(() => parseServiceCIDR('::1/120'), /only IPv4/);
  });

  it('the bitmap is stored as big.Int.Bytes(): big-endian, bit i = item i, no leading zero bytes', () => {
    const bits = new Uint8Array(4);
    bits[0] = 0b1; // item 0
    bits[1] = 0b10; // item 9
    assert.equal(Buffer.from(encodeBitmap(bits), 'base64').toString('hex'), '0201');
    assert.deepEqual(decodeBitmap(encodeBitmap(bits), 32), bits);
    assert.equal(encodeBitmap(new Uint8Array(4)), '');
  });
});

describe('PersistedRange', () => {
  const ports = (storage = new MemoryStorage(), random?: (n: number) => number) =>
    new PersistedRange(storage, '/registry/ranges/servicenodeports', parsePortRange('30000-30099'), random);

  it('allocate refuses taken and out-of-range items with upstream messages; release frees', async () => {
    const r = ports();
    await r.allocate(30010);
    await assert.rejects(r.allocate(30010), isAllocationError('allocated', 'provided port is already allocated'));
    await assert.rejects(
      r.allocate(31000),
      isAllocationError('not-in-range', 'provided port is not in the valid range. The range of valid ports is 30000-30099'),
    );
    await r.release(30010);
    await r.allocate(30010);
  });

  it('allocateNext prefers the upper band, then the static band, then reports a full range', async () => {
    const r = new PersistedRange(new MemoryStorage(), '/k', parsePortRange('30000-30099'), () => 0);
    // 100 ports: offset 16; the dynamic band is 30016-30099.
    assert.equal(await r.allocateNext(), 30016);
    for (let i = 1; i < 84; i++) await r.allocateNext();
    assert.equal(await r.allocateNext(), 30000);
    for (let i = 1; i < 16; i++) await r.allocateNext();
    await assert.rejects(r.allocateNext(), isAllocationError('full', 'range is full'));
  });

  it('two allocators on one storage (two API servers) never hand out one port twice', async () => {
    const storage = new MemoryStorage();
    const a = ports(storage);
    const b = ports(storage);
    const got = await Promise.all(Array.from({ length: 100 }, (_, i) => (i % 2 ? a : b).allocateNext()));
    assert.equal(new Set(got).size, 100);
    await assert.rejects(a.allocateNext(), /range is full/);
    await b.release(30050);
    assert.equal(await a.allocateNext(), 30050);
  });

  it('replaceWith rebuilds the bitmap and reports items outside the range', async () => {
    const r = ports();
    await r.allocate(30001);
    assert.deepEqual(await r.replaceWith([30002, 30003, 40000]), [40000]);
    assert.deepEqual(await r.allocated(), [30002, 30003]);
  });
  it('replaceSnapshot writes only over the revision it read (the repair loop never loses an allocation)', async () => {
    const storage = new MemoryStorage();
    const r = ports(storage);
    await r.allocate(30001);
    const snap = await r.snapshot();
    assert.equal(snap.range, '30000-30099');
    // Another allocation (here through a second allocator, as another API server) lands in between.
    await ports(storage).allocate(30002);
    const rebuilt = new Uint8Array(snap.bits.length);
    bitmapSet(rebuilt, 1);
    await assert.rejects(r.replaceSnapshot(snap, rebuilt), SnapshotConflictError);
    assert.deepEqual(await r.allocated(), [30001, 30002]);
    const again = await r.snapshot();
    await r.replaceSnapshot(again, rebuilt);
    assert.deepEqual(await r.allocated(), [30001]);
  });
});

describe('AllocationOperation', () => {
  it('revert gives back what was taken; releases wait for commit; a dry run takes nothing', async () => {
    const r = new PersistedRange(new MemoryStorage(), '/k', parsePortRange('30000-30099'));
    await r.allocate(30001);
    const op = new AllocationOperation(false);
    await op.allocate(r, 30002);
    op.releaseDeferred(r, 30001);
    assert.equal(await r.has(30001), true);
    await op.revert();
    assert.deepEqual(await r.allocated(), [30001]);
    const op2 = new AllocationOperation(false);
    await op2.allocate(r, 30002);
    op2.releaseDeferred(r, 30001);
    await op2.commit();
    assert.deepEqual(await r.allocated(), [30002]);
    const dry = new AllocationOperation(true);
    await dry.allocate(r, 30003);
    await assert.rejects(dry.allocate(r, 30002), /already allocated/);
    assert.deepEqual(await r.allocated(), [30002]);
  });
});
