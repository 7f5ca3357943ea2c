// Edits of an operator's semver template (catalog/<operator>/veneer.yaml) for add-operator and
// add-bundle. The template is edited as a YAML document, so comments and the author's key
// spelling survive (opm reads the keys case-insensitively: "Candidate" and "candidate" are one key).
import { isMap, isSeq, parseDocument, YAMLMap, YAMLSeq, type Document } from 'yaml';

export const CHANNEL_KINDS = ['candidate', 'fast', 'stable'] as const;
export type ChannelKind = (typeof CHANNEL_KINDS)[number];

export function isChannelKind(s: string): s is ChannelKind {
  return (CHANNEL_KINDS as readonly string[]).includes(s);
}

/** A channel's kind from its name: "stable-v1.2" → stable; names of no known kind → undefined. */
export function channelKindOf(name: string): ChannelKind | undefined {
  const head = name.split('-', 1)[0]!;
  return isChannelKind(head) ? head : undefined;
}

/** The key as written in the issue and opm's README: Candidate, Fast, Stable. */
function keyOf(kind: ChannelKind): string {
  return kind[0]!.toUpperCase() + kind.slice(1);
}

// A package name in a catalog is a DNS-1123 subdomain in practice (it names the CSV's package and
// the directory); reject what would make a confusing directory or image name.
const NAME = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;

export function checkOperatorName(name: string): void {
  if (!NAME.test(name) || name.length > 253) {
    throw new Error(`invalid operator name "${name}": use lower-case letters, digits, "-" and "." (it names catalog/${name}/)`);
  }
}

export function checkImageRef(image: string): void {
  if (image === '' || /\s/.test(image)) throw new Error(`invalid image reference "${image}"`);
}

export interface NewVeneerOptions {
  image: string;
  channels: ChannelKind[];
  generateMajorChannels?: boolean;
  generateMinorChannels?: boolean;
}

export function newVeneer(o: NewVeneerOptions): string {
  const major = o.generateMajorChannels ?? true;
  const minor = o.generateMinorChannels ?? false;
  const lines = ['Schema: olm.semver', `GenerateMajorChannels: ${major}`, `GenerateMinorChannels: ${minor}`];
  for (const kind of CHANNEL_KINDS) {
    if (!o.channels.includes(kind)) continue;
    lines.push(`${keyOf(kind)}:`, '  Bundles:', `  - Image: ${o.image}`);
  }
  return lines.join('\n') + '\n';
}

export function newOwners(owners: string[]): string {
  const list = (xs: string[]): string => (xs.length === 0 ? ' []' : '\n' + xs.map((x) => `- ${x}`).join('\n'));
  return `# Who approves and reviews changes to this operator's catalog entries.\napprovers:${list(owners)}\nreviewers:${list(owners)}\n`;
}

/** Finds a top-level key case-insensitively (as opm reads the template). */
function findKey(map: YAMLMap, want: string): unknown {
  for (const pair of map.items) {
    const k = pair.key as { value?: unknown } | string | null;
    const name = typeof k === 'string' ? k : k && typeof k === 'object' ? k.value : undefined;
    if (typeof name === 'string' && name.toLowerCase() === want.toLowerCase()) return pair.key;
  }
  return undefined;
}

export class VeneerEditError extends Error {
  override readonly name = 'VeneerEditError';
}

/**
 * Adds image to the Bundles of each given channel kind. Fails, leaving the text unchanged, when
 * the image is already listed in one of them.
 */
export function addBundleToVeneer(text: string, path: string, image: string, kinds: ChannelKind[]): string {
  const doc: Document = parseDocument(text);
  if (doc.errors.length > 0) throw new VeneerEditError(`${path}: ${doc.errors[0]!.message}`);
  const root = doc.contents;
  if (!isMap(root)) throw new VeneerEditError(`${path}: not a semver template (expected a mapping)`);
  const schemaKey = findKey(root, 'schema');
  const schema = schemaKey === undefined ? undefined : root.get(schemaKey);
  if (schema !== 'olm.semver') throw new VeneerEditError(`${path}: not a semver template (schema is ${JSON.stringify(schema ?? null)}, want "olm.semver")`);
  for (const kind of kinds) {
    let chKey = findKey(root, kind);
    if (chKey === undefined) {
      root.set(keyOf(kind), doc.createNode({ Bundles: [] }));
      chKey = findKey(root, kind);
    }
    let ch = root.get(chKey);
    if (ch === null || ch === undefined) {
      root.set(chKey, doc.createNode({ Bundles: [] }));
      ch = root.get(chKey);
    }
    if (!isMap(ch)) throw new VeneerEditError(`${path}: ${keyOf(kind)} is not a mapping`);
    let bKey = findKey(ch, 'bundles');
    if (bKey === undefined) {
      ch.set('Bundles', new YAMLSeq());
      bKey = findKey(ch, 'bundles');
    }
    let bundles = ch.get(bKey);
    if (bundles === null || bundles === undefined) {
      ch.set(bKey, new YAMLSeq());
      bundles = ch.get(bKey);
    }
    if (!isSeq(bundles)) throw new VeneerEditError(`${path}: ${keyOf(kind)}.Bundles is not a list`);
    for (const item of bundles.items) {
      if (!isMap(item)) continue;
      const ik = findKey(item, 'image');
      if (ik !== undefined && item.get(ik) === image) {
        throw new VeneerEditError(`${path}: image ${image} is already in ${keyOf(kind)}`);
      }
    }
    // Follow the spelling of the entries already there ("Image" or "image").
    const first = bundles.items.find(isMap);
    const imageKey = first ? String((findKey(first, 'image') as { value?: unknown } | undefined)?.value ?? 'Image') : 'Image';
    bundles.add(doc.createNode({ [imageKey]: image }));
  }
  return doc.toString({ indentSeq: false });
}
