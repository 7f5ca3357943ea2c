// Graph questions about a channel, shared by validation and the registry gRPC server.
import type { Bundle, Channel, Model } from './types.js';
import { compareGoStrings } from '../../golang/json.js';

/**
 * The channel head: the one bundle no other bundle replaces or skips (opm's Channel.Head).
 * Throws "no channel head found in graph" or "multiple channel heads found in graph: a, b".
 */
export function channelHead(c: Pick<Channel, 'bundles'>): Bundle {
  const incoming = new Set<string>();
  for (const b of c.bundles.values()) {
    if (b.replaces !== '') incoming.add(b.replaces);
    for (const s of b.skips) incoming.add(s);
  }
  const heads: Bundle[] = [];
  for (const b of c.bundles.values()) if (!incoming.has(b.name)) heads.push(b);
  if (heads.length === 0) throw new Error('no channel head found in graph');
  if (heads.length > 1)
    throw new Error(
      `multiple channel heads found in graph: ${heads
        .map((h) => h.name)
        .sort(compareGoStrings)
        .join(', ')}`,
    );
  return heads[0]!;
}

/** Every bundle of the channel whose replaces names the given bundle (opm's GetBundleThatReplaces looks at these). */
export function bundlesReplacing(c: Pick<Channel, 'bundles'>, name: string): Bundle[] {
  const out: Bundle[] = [];
  for (const b of c.bundles.values()) if (b.replaces === name) out.push(b);
  return out;
}

/** Every bundle, in every package and channel, that replaces or skips the named bundle. */
export function entriesReplacingOrSkipping(m: Model, name: string): Bundle[] {
  const out: Bundle[] = [];
  for (const pkg of m.values()) {
    for (const ch of pkg.channels.values()) {
      for (const b of ch.bundles.values()) if (b.replaces === name || b.skips.includes(name)) out.push(b);
    }
  }
  return out;
}
