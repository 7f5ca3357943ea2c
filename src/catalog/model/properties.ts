// Typed views of bundle properties, as operator-registry's property.Parse makes them. Values arrive
// already parsed from JSON, so the only failures left are type mismatches, reported in the words of
// Go's encoding/json (which opm's messages embed).
import {
  PropertyBundleObject,
  PropertyChannel,
  PropertyCSVMetadata,
  PropertyGVK,
  PropertyGVKRequired,
  PropertyPackage,
  PropertyPackageRequired,
  type Property,
} from '../declcfg/types.js';
import { base64Error } from '../../golang/base64.js';
import { cannotUnmarshal, UNEXPECTED_END_OF_JSON } from '../../golang/json-errors.js';
import type { ParsedProperties } from './types.js';

/** opm's property.ParseError. */
export class PropertyParseError extends Error {
  override readonly name = 'PropertyParseError';
  readonly code = 'KPL_ERR_CATALOG_PROPERTY';
  constructor(
    readonly index: number,
    readonly type: string,
    cause: string,
  ) {
    super(`parse property[${index}] of type "${type}": ${cause}`);
  }
}

type FieldKind = 'string' | 'bytes' | 'object';

/**
 * Decodes value into a struct of string fields like Go's json.Unmarshal: keys match field names
 * exactly or, failing that, case-insensitively; unknown keys are ignored; null leaves a field empty.
 * Throws Go's UnmarshalTypeError text for the first mismatch.
 */
function decodeStruct(value: unknown, goType: string, fields: Record<string, FieldKind>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const f of Object.keys(fields)) out[f] = '';
  if (value === null || value === undefined) return out;
  if (typeof value !== 'object' || Array.isArray(value)) {
    throw new Error(cannotUnmarshal(value, `property.${goType}`));
  }
  const names = Object.keys(fields);
  let firstErr: string | undefined;
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    const field = names.find((n) => n === k) ?? names.find((n) => n.toLowerCase() === k.toLowerCase());
    if (field === undefined || v === null) continue;
    const kind = fields[field]!;
    if (kind === 'object') continue;
    if (typeof v !== 'string') {
      firstErr ??= cannotUnmarshal(v, kind === 'bytes' ? '[]uint8' : 'string', { struct: goType, field });
      continue;
    }
    const bad = kind === 'bytes' ? base64Error(v) : undefined;
    if (bad !== undefined) {
      firstErr ??= bad;
      continue;
    }
    out[field] = v;
  }
  if (firstErr !== undefined) throw new Error(firstErr);
  return out;
}

/** opm's property.Parse: sorts properties by type into typed lists; others are kept as they are. */
export function parseProperties(props: readonly Property[] | undefined): ParsedProperties {
  const out: ParsedProperties = {
    packages: [],
    packagesRequired: [],
    gvks: [],
    gvksRequired: [],
    bundleObjects: [],
    channels: [],
    csvMetadatas: [],
    others: [],
  };
  (props ?? []).forEach((p, i) => {
    try {
      // a property without a value holds no JSON at all (Go's nil json.RawMessage)
      if (p.value === undefined) throw new Error(UNEXPECTED_END_OF_JSON);
      switch (p.type) {
        case PropertyPackage: {
          const v = decodeStruct(p.value, 'Package', { packageName: 'string', version: 'string', release: 'string' });
          out.packages.push(
            v.release ? { packageName: v.packageName!, version: v.version!, release: v.release } : { packageName: v.packageName!, version: v.version! },
          );
          break;
        }
        case PropertyPackageRequired: {
          const v = decodeStruct(p.value, 'PackageRequired', { packageName: 'string', versionRange: 'string' });
          out.packagesRequired.push({ packageName: v.packageName!, versionRange: v.versionRange! });
          break;
        }
        case PropertyGVK: {
          const v = decodeStruct(p.value, 'GVK', { group: 'string', kind: 'string', version: 'string' });
          out.gvks.push({ group: v.group!, kind: v.kind!, version: v.version! });
          break;
        }
        case PropertyGVKRequired: {
          const v = decodeStruct(p.value, 'GVKRequired', { group: 'string', kind: 'string', version: 'string' });
          out.gvksRequired.push({ group: v.group!, kind: v.kind!, version: v.version! });
          break;
        }
        case PropertyBundleObject: {
          const v = decodeStruct(p.value, 'BundleObject', { data: 'bytes' });
          out.bundleObjects.push({ data: v.data! });
          break;
        }
        case PropertyCSVMetadata: {
          decodeStruct(p.value, 'CSVMetadata', {});
          out.csvMetadatas.push((p.value ?? {}) as Record<string, unknown>);
          break;
        }
        case PropertyChannel: {
          const v = decodeStruct(p.value, 'Channel', { channelName: 'string' });
          out.channels.push({ channelName: v.channelName! });
          break;
        }
        default:
          out.others.push(p);
      }
    } catch (err) {
      if (err instanceof PropertyParseError) throw err;
      throw new PropertyParseError(i, p.type, (err as Error).message);
    }
  });
  return out;
}
