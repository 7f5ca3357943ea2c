import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { gzipSync } from 'node:zlib';
import { isOciError } from './errors.js';
import { TarReader, writeTar } from './tar.js';
import type { TarHeader, TarWriteEntry } from './tar.js';
import { applyLayer, entryComponents } from './unpack.js';

const work = mkdtempSync(join(tmpdir(), 'kplane-unpack-'));
after(() => rmSync(work, { recursive: true, force: true }));
let n = 0;

function layerFile(entries: TarWriteEntry[], gzip = true): { path: string; digest: string } {
  const p = join(work, `layer-${++n}`);
  const tar = writeTar(entries);
  const data = gzip ? gzipSync(tar) : tar;
  writeFileSync(p, data);
  return { path: p, digest: `sha256:${createHash('sha256').update(data).digest('hex')}` };
}

async function apply(root: string, entries: TarWriteEntry[], gzip = true): Promise<void> {
  await applyLayer(root, { ...layerFile(entries, gzip), mediaType: 'application/vnd.oci.image.layer.v1.tar+gzip' });
}

test('tar round trip: long names (pax), ustar prefix, symlinks, content split across chunks', () => {
  const long = `${'d'.repeat(120)}/${'f'.repeat(120)}.yaml`;
  const prefixed = `${'p'.repeat(90)}/${'q'.repeat(90)}`;
  const big = Buffer.alloc(5000, 7);
  const tar = writeTar([
    { path: 'a', type: 'dir' },
    { path: 'a/x.txt', type: 'file', content: Buffer.from('hello') },
    { path: long, type: 'file', content: big },
    { path: prefixed, type: 'file', content: Buffer.from('p') },
    { path: 'a/link', type: 'symlink', linkpath: 'x.txt' },
  ]);
  const seen: (TarHeader & { body: string })[] = [];
  const reader = new TarReader((h) => {
    const parts: Buffer[] = [];
    return { data: (c) => parts.push(Buffer.from(c)), end: () => seen.push({ ...h, body: Buffer.concat(parts).toString('latin1') }) };
  });
  for (let i = 0; i < tar.length; i += 37) reader.write(tar.subarray(i, i + 37));
  reader.end();
  assert.deepEqual(
    seen.map((e) => [e.path, e.type, e.body.length, e.linkpath]),
    [
      ['a/', 'dir', 0, ''],
      ['a/x.txt', 'file', 5, ''],
      [long, 'file', 5000, ''],
      [prefixed, 'file', 1, ''],
      ['a/link', 'symlink', 0, 'x.txt'],
    ],
  );
  assert.equal(seen[2]!.body, big.toString('latin1'));
  assert.equal(reader.entries, 5);
});

test('a truncated archive is corrupt', () => {
  const tar = writeTar([{ path: 'x', type: 'file', content: Buffer.alloc(2000, 1) }]);
  const reader = new TarReader(() => undefined);
  reader.write(tar.subarray(0, 1000));
  assert.throws(
    () => reader.end(),
    (e: unknown) => isOciError(e, 'CORRUPT_LAYER') && /truncated/.test(e.message),
  );
});

test('layers apply in order: whiteouts delete, opaque whiteouts empty a directory of lower content only', async () => {
  const root = join(work, 'root-whiteout');
  mkdirSync(root);
  await apply(root, [
    { path: 'manifests', type: 'dir' },
    { path: 'manifests/a.yaml', type: 'file', content: Buffer.from('a') },
    { path: 'manifests/b.yaml', type: 'file', content: Buffer.from('b') },
    { path: 'metadata', type: 'dir' },
    { path: 'metadata/old.yaml', type: 'file', content: Buffer.from('old') },
  ]);
  await apply(root, [
    { path: 'manifests/.wh.b.yaml', type: 'file' },
    { path: 'manifests/a.yaml', type: 'file', content: Buffer.from('a2') },
    { path: 'metadata/new.yaml', type: 'file', content: Buffer.from('new') },
    { path: 'metadata/.wh..wh..opq', type: 'file' },
  ]);
  assert.deepEqual(readdirSync(join(root, 'manifests')), ['a.yaml']);
  assert.equal(readFileSync(join(root, 'manifests', 'a.yaml'), 'utf8'), 'a2');
  assert.deepEqual(readdirSync(join(root, 'metadata')), ['new.yaml']);
});

test('entries and links cannot reach outside the root', async () => {
  assert.throws(
    () => entryComponents('../etc/passwd'),
    (e: unknown) => isOciError(e, 'UNSAFE_PATH'),
  );
  assert.throws(
    () => entryComponents('a/../../x'),
    (e: unknown) => isOciError(e, 'UNSAFE_PATH'),
  );
  assert.deepEqual(entryComponents('./a/./b/../c'), ['a', 'c']);
  assert.deepEqual(entryComponents('/abs/path'), ['abs', 'path']);

  // A symlink planted in one entry does not redirect a later one out of the root.
  const outside = join(work, 'outside');
  mkdirSync(outside);
  const root = join(work, 'root-symlink');
  mkdirSync(root);
  await apply(root, [
    { path: 'evil', type: 'symlink', linkpath: outside },
    { path: 'evil/planted.txt', type: 'file', content: Buffer.from('x') },
    { path: 'up', type: 'symlink', linkpath: '../../..' },
    { path: 'up/also.txt', type: 'file', content: Buffer.from('y') },
  ]);
  assert.deepEqual(readdirSync(outside), []);
  assert.equal(readlinkSync(join(root, 'evil')), outside, 'the link itself is kept as written');
  assert.equal(readFileSync(join(root, outside, 'planted.txt'), 'utf8'), 'x', 'the absolute target resolved inside the root');
  assert.equal(readFileSync(join(root, 'also.txt'), 'utf8'), 'y', '.. stops at the root');
  assert.ok(lstatSync(join(root, 'up')).isSymbolicLink());
});

test('plain (uncompressed) tar layers and garbage', async () => {
  const root = join(work, 'root-plain');
  mkdirSync(root);
  await apply(root, [{ path: 'configs/x.json', type: 'file', content: Buffer.from('{}') }], false);
  assert.equal(readFileSync(join(root, 'configs', 'x.json'), 'utf8'), '{}');
  const garbage = join(work, 'garbage');
  const bytes = Buffer.from('not a tar at all '.repeat(40));
  writeFileSync(garbage, bytes);
  const digest = `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
  await assert.rejects(
    applyLayer(root, { path: garbage, digest, mediaType: 'application/vnd.oci.image.layer.v1.tar' }),
    (e: unknown) => isOciError(e, 'CORRUPT_LAYER') && e.message.startsWith(`layer ${digest} is corrupt: bad tar header checksum`),
  );
  // The same bytes under another digest: a damaged stored copy, whatever tar makes of it.
  await assert.rejects(
    applyLayer(root, { path: garbage, digest: `sha256:${'1'.repeat(64)}`, mediaType: 'application/vnd.oci.image.layer.v1.tar' }),
    (e: unknown) => isOciError(e, 'DIGEST_MISMATCH') && e.message.includes(`hashes to ${digest}: the stored copy is damaged`),
  );
  assert.equal(existsSync(join(root, 'configs')), true);
});
