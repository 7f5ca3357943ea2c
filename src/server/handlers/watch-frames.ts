// The frames of a watch stream: each event as a JSON line, a YAML document or a protobuf
// WatchEvent, its object transformed to a Table row or PartialObjectMetadata when asked.
import { encodeWatchEvent } from '../../apimachinery/protobuf/index.js';
import type { KubeObject } from '../../apimachinery/types.js';
import type { RegisteredResource } from '../../registry/registry.js';
import { partialObjectMetadata, toTable, type IncludeObject } from '../../registry/table.js';
import { toYaml, type OutputChoice } from '../negotiation.js';
import { stringifyJSON } from '../../golang/json-int64.js';

/** JSON of objects sent on watches, by object identity (decoded objects are shared and read-only). */
const watchJsonByObject = new WeakMap<KubeObject, string>();

/** One watch's encoder: it remembers whether the Table columns went out already. */
export class WatchFrames {
  // Like upstream's watchEmbeddedEncoder: only the first Table carries the column definitions.
  private tableHeadersSent = false;

  constructor(
    private readonly r: RegisteredResource,
    private readonly choice: OutputChoice,
    private readonly includeObject: IncludeObject,
  ) {}

  encode(type: string, obj: KubeObject): Uint8Array | string {
    const choice = this.choice;
    let out: KubeObject = obj;
    // Bookmarks are transformed too (a metadata-only client must be able to decode them).
    if (type !== 'ERROR') {
      if (choice.transform === 'Table') {
        const table = toTable(this.r.store.strategy, [obj], {
          includeObject: this.includeObject,
          apiVersion: `meta.k8s.io/${choice.transformVersion}`,
          listMeta: obj.metadata?.resourceVersion ? { resourceVersion: obj.metadata.resourceVersion } : {},
          noHeaders: this.tableHeadersSent,
        });
        this.tableHeadersSent = true;
        out = table as unknown as KubeObject;
      } else if (choice.transform === 'PartialObjectMetadata') out = partialObjectMetadata(obj, `meta.k8s.io/${choice.transformVersion}`);
    }
    if (choice.format === 'protobuf') return encodeWatchEvent(type as 'ADDED', out, this.r.scheme);
    if (choice.format === 'yaml') return `---\n${toYaml({ type, object: out })}`;
    // Decoded objects are shared and read-only: one event fanned out to many watchers is serialised once.
    if (out === obj) {
      let json = watchJsonByObject.get(obj);
      if (json === undefined) watchJsonByObject.set(obj, (json = stringifyJSON(obj)));
      return `{"type":"${type}","object":${json}}\n`;
    }
    return `{"type":"${type}","object":${stringifyJSON(out)}}\n`;
  }
}
