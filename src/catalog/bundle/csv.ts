// The ClusterServiceVersion accessors opm's registry package uses (pkg/registry/csv.go): the spec
// is read as a map of raw members (exact key match), and each member is then decoded into a Go
// struct (case-insensitive field match), with the same failures.
import { field, isObject, stringField } from '../../golang/json.js';
import { cannotUnmarshal, UNEXPECTED_END_OF_JSON } from '../../golang/json-errors.js';
import { formatFloat64 } from '../../golang/strconv.js';

/** One entry of spec.customresourcedefinitions or spec.apiservicedefinitions (registry.DefinitionKey). */
export interface DefinitionKey {
  group: string;
  kind: string;
  name: string;
  version: string;
}

/** registry.APIKey */
export interface APIKey {
  group: string;
  version: string;
  kind: string;
  plural: string;
}

export function apiKeyString(k: APIKey): string {
  return `${k.group}/${k.version}/${k.kind} (${k.plural})`;
}

export function apiKeyId(k: APIKey): string {
  return JSON.stringify([k.group, k.version, k.kind, k.plural]);
}

export class CSV {
  constructor(
    /** the decoded CSV object */
    readonly object: Record<string, unknown>,
  ) {}

  get name(): string {
    const md = this.object['metadata'];
    const n = isObject(md) ? md['name'] : undefined;
    return typeof n === 'string' ? n : '';
  }

  get annotations(): Record<string, string> {
    const md = this.object['metadata'];
    const a = isObject(md) ? md['annotations'] : undefined;
    const out: Record<string, string> = {};
    if (isObject(a)) for (const [k, v] of Object.entries(a)) if (typeof v === 'string') out[k] = v;
    return out;
  }

  /** json.Unmarshal(csv.Spec, &map[string]*json.RawMessage) */
  spec(): Record<string, unknown> {
    if (!('spec' in this.object)) throw new Error(UNEXPECTED_END_OF_JSON);
    const s = this.object['spec'];
    if (s === null) return {};
    if (!isObject(s)) throw new Error(cannotUnmarshal(s, 'map[string]*json.RawMessage'));
    return s;
  }

  private specString(key: string): string {
    const v = this.spec()[key];
    if (v === undefined || v === null) return '';
    if (typeof v !== 'string') throw new Error(cannotUnmarshal(v, 'string'));
    return v;
  }

  version(): string {
    return this.specString('version');
  }

  /** spec.release: a string, or a number formatted as Go's %d / %g. */
  release(): string {
    const v = this.spec()['release'];
    if (v === undefined || v === null) return '';
    if (typeof v === 'string') return v;
    if (typeof v === 'number') return Number.isInteger(v) ? v.toFixed(0) : formatFloat64(v);
    throw new Error('release field must be a string or number');
  }

  /** GetCustomResourceDefintions: [owned, required] */
  crdDefinitions(): [DefinitionKey[], DefinitionKey[]] {
    return this.definitions('customresourcedefinitions', '');
  }

  /** GetApiServiceDefinitions: [owned, required] */
  apiServiceDefinitions(): [DefinitionKey[], DefinitionKey[]] {
    return this.definitions('apiservicedefinitions', 'error unmarshaling into object map: ');
  }

  private definitions(key: string, specErrPrefix: string): [DefinitionKey[], DefinitionKey[]] {
    let spec: Record<string, unknown>;
    try {
      spec = this.spec();
    } catch (e) {
      throw new Error(`${specErrPrefix}${(e as Error).message}`, { cause: e });
    }
    const raw = spec[key];
    if (raw === undefined || raw === null) return [[], []];
    if (!isObject(raw))
      throw new Error(
        cannotUnmarshal(raw, 'struct { Owned []*registry.DefinitionKey "json:\\"owned\\""; Required []*registry.DefinitionKey "json:\\"required\\"" }'),
      );
    const list = (name: string): DefinitionKey[] => {
      const v = field(raw, name);
      if (v === undefined || v === null) return [];
      if (!Array.isArray(v)) throw new Error(cannotUnmarshal(v, '[]*registry.DefinitionKey', { struct: '', field: name }));
      return v.map((d) => ({
        group: stringField(d, 'group', `.${name}`),
        kind: stringField(d, 'kind', `.${name}`),
        name: stringField(d, 'name', `.${name}`),
        version: stringField(d, 'version', `.${name}`),
      }));
    };
    return [list('owned'), list('required')];
  }

  /** spec.relatedImages as declcfg.RelatedImage values (name, image), duplicates kept. */
  relatedImages(): Array<{ name: string; image: string }> {
    const raw = this.spec()['relatedImages'];
    if (raw === undefined || raw === null) return [];
    if (!Array.isArray(raw)) throw new Error(cannotUnmarshal(raw, '[]declcfg.RelatedImage'));
    return raw.map((r) => ({ name: stringField(r, 'name', 'RelatedImage'), image: stringField(r, 'image', 'RelatedImage') }));
  }

  /**
   * GetOperatorImages: the images of every container and init container of the deployment install
   * strategy (a set; empty when the strategy is not "deployment").
   */
  operatorImages(): Set<string> {
    const spec = this.spec();
    const images = new Set<string>();
    const install = field(spec, 'install');
    if (install !== undefined && install !== null && !isObject(install))
      throw new Error(cannotUnmarshal(install, 'registry.strategy', { struct: 'csvSpec', field: 'Install' }));
    if (stringField(install, 'strategy', 'strategy') !== 'deployment') return images;
    const deployments = field(field(install, 'spec'), 'deployments');
    if (deployments === undefined || deployments === null) return images;
    if (!Array.isArray(deployments))
      throw new Error(cannotUnmarshal(deployments, '[]registry.dep', { struct: 'strategySpec', field: 'Install.spec.Deployments' }));
    for (const d of deployments) {
      const podSpec = field(field(field(d, 'spec'), 'template'), 'spec');
      for (const list of ['containers', 'initContainers']) {
        const cs = field(podSpec, list);
        if (cs === undefined || cs === null) continue;
        if (!Array.isArray(cs))
          throw new Error(cannotUnmarshal(cs, '[]v1.Container', { struct: 'PodSpec', field: `Install.spec.Deployments.Spec.template.spec.${list}` }));
        for (const c of cs) images.add(stringField(c, 'image', 'Container.Install.spec.Deployments.Spec.template.spec.containers'));
      }
    }
    return images;
  }
}
