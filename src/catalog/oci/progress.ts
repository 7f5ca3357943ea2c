// The progress display of long pulls, on stderr: one line per layer, "bytes / total", redrawn in
// place on a terminal; nothing at all when stderr is not a terminal (logs stay clean) unless the
// plain mode is asked for, which prints one line per finished layer.

export type PullProgress =
  | { readonly kind: 'resolved'; readonly ref: string; readonly digest: string; readonly layers: readonly { digest: string; size: number; cached: boolean }[] }
  | { readonly kind: 'layer'; readonly digest: string; readonly size: number; readonly bytes: number; readonly done: boolean; readonly cached: boolean }
  | { readonly kind: 'unpacked'; readonly root: string };

export type ProgressMode = 'auto' | 'tty' | 'plain' | 'none';

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let v = n / 1024;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v.toFixed(v < 10 ? 1 : 0)} ${units[i]}`;
}

interface Writable {
  write(s: string): unknown;
  readonly isTTY?: boolean;
}

/**
 * A progress callback for pullImage that draws on `out` (stderr by default), or undefined when the
 * mode (auto: a terminal only; $KPLANE_PROGRESS overrides auto) says to stay quiet.
 */
export function progressPrinter(mode: ProgressMode = 'auto', out: Writable = process.stderr): ((e: PullProgress) => void) | undefined {
  if (mode === 'auto') {
    const env = process.env.KPLANE_PROGRESS;
    mode = env === 'plain' || env === 'tty' || env === 'none' ? env : out.isTTY ? 'tty' : 'none';
  }
  if (mode === 'none') return undefined;
  const plain = mode === 'plain';
  let order: string[] = [];
  const state = new Map<string, { size: number; bytes: number; done: boolean; cached: boolean }>();
  let drawn = 0;
  let lastDraw = 0;
  const line = (d: string): string => {
    const s = state.get(d)!;
    const status = s.cached ? 'cached' : s.done ? 'done' : 'downloading';
    return `${d.slice(0, 19)}  ${formatBytes(s.bytes)} / ${formatBytes(s.size)}  ${status}`;
  };
  const draw = (force: boolean): void => {
    const now = Date.now();
    if (!force && now - lastDraw < 100) return;
    lastDraw = now;
    let s = drawn > 0 ? `\x1b[${drawn}A` : '';
    for (const d of order) s += `\x1b[2K${line(d)}\n`;
    drawn = order.length;
    out.write(s);
  };
  return (e) => {
    if (e.kind === 'resolved') {
      order = e.layers.map((l) => l.digest);
      for (const l of e.layers) state.set(l.digest, { size: l.size, bytes: l.cached ? l.size : 0, done: l.cached, cached: l.cached });
      const total = e.layers.reduce((a, l) => a + l.size, 0);
      out.write(`Pulling ${e.ref} (${e.digest.slice(0, 19)}): ${e.layers.length} layer${e.layers.length === 1 ? '' : 's'}, ${formatBytes(total)}\n`);
      drawn = 0;
      if (!plain) draw(true);
      return;
    }
    if (e.kind === 'layer') {
      const s = state.get(e.digest);
      if (!s) return;
      s.bytes = e.bytes;
      s.done = e.done;
      if (plain) {
        if (e.done) out.write(`${line(e.digest)}\n`);
      } else draw(e.done);
      return;
    }
    if (plain) out.write(`Unpacked into ${e.root}\n`);
  };
}
