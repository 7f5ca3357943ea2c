// Blobs of custom schemas (anything but olm.package/channel/bundle/deprecations), kept for
// api.ExperimentalRegistry/ExperimentalListPackageCustomSchemas, keyed as opm's cache keys them.
import type { Meta } from '../declcfg/types.js';

/** A query or blob whose schema or package name is not a valid key: InvalidArgument when queried. */
export class MetaKeyError extends Error {
  override readonly name = 'MetaKeyError';
}

const VALID_COMPONENT = /^[a-zA-Z0-9][a-zA-Z0-9._-]*$/;
const VALID_COMPONENT_TEXT = '^[a-zA-Z0-9][a-zA-Z0-9._-]*$';

function checkComponent(name: string, value: string): void {
  if (value === '') throw new MetaKeyError(`invalid ${name}: must not be empty`);
  if (!VALID_COMPONENT.test(value)) throw new MetaKeyError(`invalid ${name} ${JSON.stringify(value)}: must match ${VALID_COMPONENT_TEXT}`);
}

/** opm's newValidatedMetaKey: the schema must be set; a package name, when given, must be valid too. */
export function validateMetaKey(schema: string, packageName: string): void {
  checkComponent('schema', schema);
  if (packageName !== '') checkComponent('packageName', packageName);
}

const CORE = new Set(['olm.package', 'olm.channel', 'olm.bundle', 'olm.deprecations']);

export class MetaStore {
  private readonly bySchemaPackage = new Map<string, Record<string, unknown>[]>();

  /** Adds the custom-schema blobs of a catalog; a blob with an invalid key fails like opm's cache build. */
  static fromMetas(metas: readonly Meta[]): MetaStore {
    const store = new MetaStore();
    for (const m of metas) {
      if (CORE.has(m.schema)) continue;
      try {
        validateMetaKey(m.schema, m.package);
      } catch (err) {
        throw new MetaKeyError(`invalid custom schema meta: ${(err as Error).message}`);
      }
      store.add(m.schema, m.package, m.blob);
    }
    return store;
  }

  add(schema: string, packageName: string, blob: Record<string, unknown>): void {
    const k = `${schema}\u0000${packageName}`;
    let list = this.bySchemaPackage.get(k);
    if (!list) this.bySchemaPackage.set(k, (list = []));
    list.push(blob);
  }

  /** The blobs of one schema and package ("" for blobs that name no package). */
  list(schema: string, packageName: string): Record<string, unknown>[] {
    try {
      validateMetaKey(schema, packageName);
    } catch (err) {
      throw new MetaKeyError(`invalid custom schema query: ${(err as Error).message}`);
    }
    return this.bySchemaPackage.get(`${schema}\u0000${packageName}`) ?? [];
  }

  entries(): [schema: string, packageName: string, blobs: Record<string, unknown>[]][] {
    return [...this.bySchemaPackage.entries()].map(([k, v]) => {
      const [schema, pkg] = k.split('\u0000') as [string, string];
      return [schema, pkg, v];
    });
  }
}
