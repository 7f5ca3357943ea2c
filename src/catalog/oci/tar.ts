// tar, as image layers use it: a streaming reader (ustar, pax extended headers, GNU long names) that
// hands each entry's bytes to a sink as they arrive, and a writer of deterministic archives (fixed
// owner, mode and mtime; pax headers only for names that do not fit ustar).
import { OciError } from './errors.js';

export type TarEntryType = 'file' | 'dir' | 'symlink' | 'hardlink' | 'other';

export interface TarHeader {
  readonly path: string;
  readonly type: TarEntryType;
  readonly typeflag: string;
  readonly mode: number;
  readonly size: number;
  readonly linkpath: string;
  readonly mtime: number;
}

/** Receives an entry's content in order; `end` is called once the entry is complete. */
export interface TarSink {
  data(chunk: Buffer): void;
  end(): void;
}

const BLOCK = 512;

/**
 * Push parser: `write` chunks as they come, `end` at the end of the stream. `onEntry` returns a sink
 * for the entry's bytes, or undefined to skip them. Throws CORRUPT_LAYER on a bad header checksum or
 * a truncated archive (what the caller reports against the layer).
 */
export class TarReader {
  private buf: Buffer = Buffer.alloc(0);
  private remaining = 0; // content bytes of the current entry still to come
  private padding = 0; // bytes of block padding after the content
  private sink: TarSink | undefined;
  private meta: Buffer[] | undefined; // collecting a pax/GNU long-name body
  private metaKind = '';
  private pax: Record<string, string> = {};
  private longName: string | undefined;
  private longLink: string | undefined;
  private finished = false;
  private zeroBlocks = 0;
  entries = 0;

  constructor(private readonly onEntry: (h: TarHeader) => TarSink | undefined) {}

  write(chunk: Buffer): void {
    this.buf = this.buf.length ? Buffer.concat([this.buf, chunk]) : chunk;
    let off = 0;
    for (;;) {
      if (this.finished) {
        this.buf = Buffer.alloc(0);
        return;
      }
      if (this.remaining > 0) {
        const n = Math.min(this.remaining, this.buf.length - off);
        if (n === 0) break;
        const part = this.buf.subarray(off, off + n);
        if (this.meta) this.meta.push(Buffer.from(part));
        else this.sink?.data(part);
        this.remaining -= n;
        off += n;
        if (this.remaining > 0) break;
        this.finishEntry();
      }
      if (this.padding > 0) {
        const n = Math.min(this.padding, this.buf.length - off);
        this.padding -= n;
        off += n;
        if (this.padding > 0) break;
      }
      if (this.buf.length - off < BLOCK) break;
      this.header(this.buf.subarray(off, off + BLOCK));
      off += BLOCK;
    }
    this.buf = this.buf.subarray(off);
  }

  /** The stream ended: an entry cut short means the layer is truncated. */
  end(): void {
    if (this.remaining > 0 || this.meta) throw new OciError('CORRUPT_LAYER', 'the tar stream ends in the middle of an entry (truncated)');
    if (!this.finished && this.buf.length > 0 && this.buf.some((b) => b !== 0))
      throw new OciError('CORRUPT_LAYER', 'the tar stream ends with a partial header (truncated)');
  }

  private finishEntry(): void {
    if (this.meta) {
      const body = Buffer.concat(this.meta);
      this.meta = undefined;
      if (this.metaKind === 'x') this.pax = { ...this.pax, ...parsePax(body) };
      else if (this.metaKind === 'L') this.longName = cString(body);
      else if (this.metaKind === 'K') this.longLink = cString(body);
      return;
    }
    this.sink?.end();
    this.sink = undefined;
  }

  private header(h: Buffer): void {
    if (h.every((b) => b === 0)) {
      // Two zero blocks end the archive; tolerate one (some writers stop there).
      if (++this.zeroBlocks >= 2) this.finished = true;
      return;
    }
    this.zeroBlocks = 0;
    const stored = parseOctal(h.subarray(148, 156));
    let sum = 0;
    for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 32 : h[i]!;
    if (stored !== sum) throw new OciError('CORRUPT_LAYER', `bad tar header checksum at entry ${this.entries + 1} (not a tar archive, or damaged)`);
    const typeflag = String.fromCharCode(h[156]!) === '\0' ? '0' : String.fromCharCode(h[156]!);
    const size = parseNumeric(h.subarray(124, 136));
    const padded = Math.ceil(size / BLOCK) * BLOCK;
    if (typeflag === 'x' || typeflag === 'L' || typeflag === 'K' || typeflag === 'g') {
      this.meta = typeflag === 'g' ? undefined : [];
      this.metaKind = typeflag;
      this.remaining = size;
      this.padding = padded - size;
      if (typeflag === 'g') {
        // Global pax headers carry nothing we use: skip their body as an unnamed entry.
        this.sink = undefined;
      }
      if (size === 0) this.finishEntry();
      return;
    }
    const magic = h.subarray(257, 262).toString('latin1');
    const name = cString(h.subarray(0, 100));
    const prefix = magic === 'ustar' ? cString(h.subarray(345, 500)) : '';
    const path = this.pax.path ?? this.longName ?? (prefix ? `${prefix}/${name}` : name);
    const linkpath = this.pax.linkpath ?? this.longLink ?? cString(h.subarray(157, 257));
    const realSize = this.pax.size !== undefined ? Number(this.pax.size) : size;
    this.pax = {};
    this.longName = undefined;
    this.longLink = undefined;
    const type: TarEntryType =
      typeflag === '0' || typeflag === '7' ? 'file' : typeflag === '5' ? 'dir' : typeflag === '2' ? 'symlink' : typeflag === '1' ? 'hardlink' : 'other';
    const header: TarHeader = {
      path,
      type,
      typeflag,
      mode: parseOctal(h.subarray(100, 108)),
      size: type === 'file' || type === 'other' ? realSize : 0,
      linkpath,
      mtime: parseNumeric(h.subarray(136, 148)),
    };
    this.entries++;
    this.sink = this.onEntry(header);
    const content = header.size;
    this.remaining = content;
    this.padding = Math.ceil(content / BLOCK) * BLOCK - content;
    if (content === 0) this.finishEntry();
  }
}

function cString(b: Buffer): string {
  const z = b.indexOf(0);
  return b.subarray(0, z < 0 ? b.length : z).toString('utf8');
}

function parseOctal(b: Buffer): number {
  const s = cString(b).trim();
  return s === '' ? 0 : parseInt(s, 8);
}

/** Octal, or GNU base-256 (high bit set) for values that do not fit. */
function parseNumeric(b: Buffer): number {
  if (b[0]! & 0x80) {
    let v = b[0]! & 0x7f;
    for (let i = 1; i < b.length; i++) v = v * 256 + b[i]!;
    return v;
  }
  const v = parseOctal(b);
  if (Number.isNaN(v)) throw new OciError('CORRUPT_LAYER', 'a tar header has a malformed number');
  return v;
}

/** pax records: "LEN key=value\n" each. */
function parsePax(body: Buffer): Record<string, string> {
  const out: Record<string, string> = {};
  let off = 0;
  while (off < body.length) {
    const sp = body.indexOf(0x20, off);
    if (sp < 0) break;
    const len = parseInt(body.subarray(off, sp).toString('latin1'), 10);
    if (!(len > 0)) throw new OciError('CORRUPT_LAYER', 'a pax extended header is malformed');
    const rec = body.subarray(sp + 1, off + len - 1).toString('utf8');
    const eq = rec.indexOf('=');
    if (eq > 0) out[rec.slice(0, eq)] = rec.slice(eq + 1);
    off += len;
  }
  return out;
}

export interface TarWriteEntry {
  /** Relative path; directories end without a slash (one is added). */
  readonly path: string;
  readonly type: 'file' | 'dir' | 'symlink';
  readonly mode?: number;
  readonly content?: Buffer;
  readonly linkpath?: string;
}

/** A deterministic archive: owner 0:0, mtime 0, entries in the order given, two zero blocks at the end. */
export function writeTar(entries: readonly TarWriteEntry[]): Buffer {
  const out: Buffer[] = [];
  for (const e of entries) {
    const name = e.type === 'dir' ? `${e.path.replace(/\/+$/, '')}/` : e.path;
    const content = e.type === 'file' ? (e.content ?? Buffer.alloc(0)) : Buffer.alloc(0);
    const link = e.linkpath ?? '';
    const split = splitUstarName(name);
    const pax: Record<string, string> = {};
    if (!split) pax.path = name;
    if (Buffer.byteLength(link) > 100) pax.linkpath = link;
    if (Object.keys(pax).length) {
      const body = paxBody(pax);
      out.push(
        headerBlock({ name: 'PaxHeader', prefix: '', typeflag: 'x', size: body.length, mode: 0o644, linkname: '' }),
        body,
        Buffer.alloc((BLOCK - (body.length % BLOCK)) % BLOCK),
      );
    }
    const typeflag = e.type === 'file' ? '0' : e.type === 'dir' ? '5' : '2';
    const mode = e.mode ?? (e.type === 'dir' ? 0o755 : e.type === 'symlink' ? 0o777 : 0o644);
    out.push(
      headerBlock({
        name: split?.name ?? name.slice(0, 100),
        prefix: split?.prefix ?? '',
        typeflag,
        size: content.length,
        mode,
        linkname: link.length <= 100 ? link : '',
      }),
      content,
      Buffer.alloc((BLOCK - (content.length % BLOCK)) % BLOCK),
    );
  }
  out.push(Buffer.alloc(BLOCK * 2));
  return Buffer.concat(out);
}

function splitUstarName(name: string): { name: string; prefix: string } | undefined {
  if (Buffer.byteLength(name) <= 100) return { name, prefix: '' };
  for (let i = name.indexOf('/'); i >= 0; i = name.indexOf('/', i + 1)) {
    const prefix = name.slice(0, i);
    const rest = name.slice(i + 1);
    if (Buffer.byteLength(prefix) <= 155 && Buffer.byteLength(rest) <= 100 && rest !== '') return { name: rest, prefix };
  }
  return undefined;
}

function paxBody(rec: Record<string, string>): Buffer {
  let s = '';
  for (const [k, v] of Object.entries(rec)) {
    const tail = ` ${k}=${v}\n`;
    let len = Buffer.byteLength(tail) + 1;
    while (String(len).length + Buffer.byteLength(tail) !== len) len = String(len).length + Buffer.byteLength(tail);
    s += `${len}${tail}`;
  }
  return Buffer.from(s);
}

function headerBlock(h: { name: string; prefix: string; typeflag: string; size: number; mode: number; linkname: string }): Buffer {
  const b = Buffer.alloc(BLOCK);
  b.write(h.name, 0, 100, 'utf8');
  b.write(octal(h.mode, 8), 100, 'latin1');
  b.write(octal(0, 8), 108, 'latin1'); // uid
  b.write(octal(0, 8), 116, 'latin1'); // gid
  b.write(octal(h.size, 12), 124, 'latin1');
  b.write(octal(0, 12), 136, 'latin1'); // mtime
  b.write('        ', 148, 'latin1'); // checksum placeholder
  b.write(h.typeflag, 156, 'latin1');
  b.write(h.linkname, 157, 100, 'utf8');
  b.write('ustar\u000000', 257, 'latin1');
  b.write(h.prefix, 345, 155, 'utf8');
  let sum = 0;
  for (const x of b) sum += x;
  b.write(`${sum.toString(8).padStart(6, '0')}\u0000 `, 148, 'latin1');
  return b;
}

function octal(n: number, width: number): string {
  return `${n.toString(8).padStart(width - 1, '0')}\u0000`;
}
