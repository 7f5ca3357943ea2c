// --encryption-provider-config: the apiserver.config.k8s.io/v1 EncryptionConfiguration file, read
// and validated as kube-apiserver does (pkg/server/options/encryptionconfig/config.go and
// pkg/apis/apiserver/validation/validation_encryption.go), turned into one transformer per
// group resource. Every message that reaches the operator is upstream's.
import { readFileSync } from 'node:fs';
import { decodeStdBase64 } from '../../golang/base64.js';
import { looksLikeJSON, yamlToJSON } from '../../golang/yaml-read.js';
import { cbcTransformer, gcmTransformer } from './aes.js';
import { secretboxTransformer } from './secretbox.js';
import { identityTransformer, PrefixTransformers, type PrefixTransformer, type TransformationMetrics, type Transformer } from './transformer.js';

export const CONFIG_API_VERSION = 'apiserver.config.k8s.io/v1';
export const CONFIG_KIND = 'EncryptionConfiguration';

export interface Key {
  readonly name: string;
  readonly secret: string;
}
export interface KeysConfiguration {
  readonly keys: readonly Key[];
}
export interface ProviderConfiguration {
  readonly aesgcm?: KeysConfiguration;
  readonly aescbc?: KeysConfiguration;
  readonly secretbox?: KeysConfiguration;
  readonly identity?: Record<string, never>;
  readonly kms?: Record<string, unknown>;
}
export interface ResourceConfiguration {
  readonly resources: readonly string[];
  readonly providers: readonly ProviderConfiguration[];
}
export interface EncryptionConfiguration {
  readonly resources: readonly ResourceConfiguration[];
}

/** A config file that cannot be used; the message names the file (or the field) as upstream's does. */
export class EncryptionConfigError extends Error {
  override readonly name = 'EncryptionConfigError';
  readonly code = 'KPL_ENCRYPTION_CONFIG';
}

export interface GroupResource {
  readonly group: string;
  readonly resource: string;
}

/** The transformer of each group resource (value.ResourceTransformers). */
export interface ResourceTransformers {
  transformerForResource(gr: GroupResource): Transformer;
}

const PREFIX_AESCBC = 'k8s:enc:aescbc:v1:';
const PREFIX_AESGCM = 'k8s:enc:aesgcm:v1:';
const PREFIX_SECRETBOX = 'k8s:enc:secretbox:v1:';

// ---- loading -----------------------------------------------------------------------------------

/**
 * LoadEncryptionConfig: reads, decodes (strictly), validates and builds. Throws an
 * EncryptionConfigError whose message is upstream's ("error while parsing file: ...",
 * "error while building transformers: ...").
 */
export function loadEncryptionConfig(path: string, metrics?: TransformationMetrics): ResourceTransformers {
  let config: EncryptionConfiguration;
  try {
    config = readEncryptionConfig(path);
    const issues = validateEncryptionConfiguration(config);
    if (issues.length > 0) throw new EncryptionConfigError(aggregate(issues));
  } catch (e) {
    throw new EncryptionConfigError(`error while parsing file: ${(e as Error).message}`);
  }
  try {
    return buildTransformers(config, metrics);
  } catch (e) {
    throw new EncryptionConfigError(`error while building transformers: ${(e as Error).message}`);
  }
}

/** loadConfig's read and decode steps (no validation). */
export function readEncryptionConfig(path: string): EncryptionConfiguration {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    const why = err.code === 'ENOENT' ? 'no such file or directory' : err.code === 'EACCES' ? 'permission denied' : err.message;
    throw new EncryptionConfigError(
      `error while loading file: error reading encryption provider configuration file ${JSON.stringify(path)}: open ${path}: ${why}`,
    );
  }
  if (text.length === 0) throw new EncryptionConfigError(`error while loading file: encryption provider configuration file ${JSON.stringify(path)} is empty`);
  try {
    return decodeEncryptionConfig(text);
  } catch (e) {
    throw new EncryptionConfigError(`error decoding encryption provider configuration file ${JSON.stringify(path)}: ${(e as Error).message}`);
  }
}

/** The decoder's part: YAML or JSON, apiVersion and kind checked, unknown fields refused (strict). */
export function decodeEncryptionConfig(text: string): EncryptionConfiguration {
  let doc: unknown;
  if (looksLikeJSON(text, 512)) {
    try {
      doc = JSON.parse(text);
    } catch (e) {
      throw new Error(`couldn't get version/kind; json parse error: ${(e as Error).message}`, { cause: e });
    }
  } else {
    try {
      doc = yamlToJSON(text);
    } catch (e) {
      const m = (e as Error).message;
      throw new Error(`error converting YAML to JSON: ${m.startsWith('yaml:') ? m : `yaml: ${m}`}`, { cause: e });
    }
  }
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) {
    throw new Error(
      `couldn't get version/kind; json parse error: json: cannot unmarshal ${jsonKind(doc)} into Go value of type struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" }`,
    );
  }
  const obj = doc as Record<string, unknown>;
  const kind = typeof obj.kind === 'string' ? obj.kind : '';
  const apiVersion = typeof obj.apiVersion === 'string' ? obj.apiVersion : '';
  const json = JSON.stringify(doc);
  if (kind === '') throw new Error(`Object 'Kind' is missing in '${json}'`);
  if (apiVersion === '') throw new Error(`Object 'apiVersion' is missing in '${json}'`);
  if (apiVersion !== CONFIG_API_VERSION || kind !== CONFIG_KIND) {
    throw new Error(`no kind ${JSON.stringify(kind)} is registered for version ${JSON.stringify(apiVersion)} in scheme "encryptionconfig"`);
  }
  const d = new StrictDecoder();
  const config = d.configuration(obj);
  if (d.typeError) throw new Error(d.typeError);
  if (d.unknown.length > 0) throw new Error(`strict decoding error: ${d.unknown.map((f) => `unknown field ${JSON.stringify(f)}`).join(', ')}`);
  return config;
}

function jsonKind(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'object') return 'object';
  if (typeof v === 'boolean') return 'bool';
  return typeof v;
}

/**
 * sigs.k8s.io/json's strict unmarshal into the v1 types: the first type error (encoding/json's
 * wording), and every unknown field by its path (`resources[0].providers[0].aescbc.keyz`).
 */
class StrictDecoder {
  typeError: string | undefined;
  readonly unknown: string[] = [];

  private fail(v: unknown, goType: string, struct: string, field: string): void {
    this.typeError ??= `json: cannot unmarshal ${jsonKind(v)} into Go struct field ${struct}.${field} of type ${goType}`;
  }

  private object(v: unknown, path: string, known: readonly string[], struct: string, field: string, goType: string): Record<string, unknown> | undefined {
    if (v === null || v === undefined) return undefined;
    if (typeof v !== 'object' || Array.isArray(v)) {
      this.fail(v, goType, struct, field);
      return undefined;
    }
    const o = v as Record<string, unknown>;
    for (const k of Object.keys(o)) if (!known.includes(k)) this.unknown.push(path ? `${path}.${k}` : k);
    return o;
  }

  private array(v: unknown, struct: string, field: string, goType: string): unknown[] {
    if (v === null || v === undefined) return [];
    if (!Array.isArray(v)) {
      this.fail(v, goType, struct, field);
      return [];
    }
    return v;
  }

  private string(v: unknown, struct: string, field: string): string {
    if (v === null || v === undefined) return '';
    if (typeof v !== 'string') {
      this.fail(v, 'string', struct, field);
      return '';
    }
    return v;
  }

  configuration(o: Record<string, unknown>): EncryptionConfiguration {
    this.object(o, '', ['kind', 'apiVersion', 'resources'], 'EncryptionConfiguration', '', 'v1.EncryptionConfiguration');
    const resources = this.array(o.resources, 'EncryptionConfiguration', 'resources', '[]v1.ResourceConfiguration').map((r, i) =>
      this.resource(r, `resources[${i}]`),
    );
    return { resources };
  }

  private resource(v: unknown, path: string): ResourceConfiguration {
    const o = this.object(v, path, ['resources', 'providers'], 'EncryptionConfiguration', 'resources', 'v1.ResourceConfiguration') ?? {};
    const resources = this.array(o.resources, 'ResourceConfiguration', 'resources.resources', '[]string').map((r) =>
      this.string(r, 'ResourceConfiguration', 'resources.resources'),
    );
    const providers = this.array(o.providers, 'ResourceConfiguration', 'resources.providers', '[]v1.ProviderConfiguration').map((p, i) =>
      this.provider(p, `${path}.providers[${i}]`),
    );
    return { resources, providers };
  }

  private provider(v: unknown, path: string): ProviderConfiguration {
    const o =
      this.object(v, path, ['aesgcm', 'aescbc', 'secretbox', 'identity', 'kms'], 'ResourceConfiguration', 'resources.providers', 'v1.ProviderConfiguration') ??
      {};
    const out: { -readonly [K in keyof ProviderConfiguration]: ProviderConfiguration[K] } = {};
    for (const name of ['aesgcm', 'aescbc', 'secretbox'] as const) {
      if (o[name] === undefined || o[name] === null) continue;
      const goType = name === 'secretbox' ? 'v1.SecretboxConfiguration' : 'v1.AESConfiguration';
      const c = this.object(o[name], `${path}.${name}`, ['keys'], 'ProviderConfiguration', `resources.providers.${name}`, goType);
      if (!c) continue;
      const structName = name === 'secretbox' ? 'SecretboxConfiguration' : 'AESConfiguration';
      const keys = this.array(c.keys, structName, `resources.providers.${name}.keys`, '[]v1.Key').map((k, i) => {
        const ko = this.object(k, `${path}.${name}.keys[${i}]`, ['name', 'secret'], structName, `resources.providers.${name}.keys`, 'v1.Key') ?? {};
        return {
          name: this.string(ko.name, 'Key', `resources.providers.${name}.keys.name`),
          secret: this.string(ko.secret, 'Key', `resources.providers.${name}.keys.secret`),
        };
      });
      out[name] = { keys };
    }
    if (o.identity !== undefined && o.identity !== null) {
      this.object(o.identity, `${path}.identity`, [], 'ProviderConfiguration', 'resources.providers.identity', 'v1.IdentityConfiguration');
      out.identity = {};
    }
    if (o.kms !== undefined && o.kms !== null) {
      out.kms =
        this.object(
          o.kms,
          `${path}.kms`,
          ['apiVersion', 'name', 'cachesize', 'endpoint', 'timeout'],
          'ProviderConfiguration',
          'resources.providers.kms',
          'v1.KMSConfiguration',
        ) ?? {};
    }
    return out;
  }
}

// ---- validation (ValidateEncryptionConfiguration) ----------------------------------------------

/** One field.Error, rendered as upstream renders it (`<field>: <type>[: <value>]: <detail>`). */
export interface ConfigIssue {
  readonly field: string;
  readonly type: 'Required value' | 'Invalid value';
  /** The bad value already rendered as Go's field.Error prints it; absent for Required. */
  readonly value?: string;
  readonly detail: string;
}

export function issueString(i: ConfigIssue): string {
  return i.value === undefined ? `${i.field}: ${i.type}: ${i.detail}` : `${i.field}: ${i.type}: ${i.value}: ${i.detail}`;
}

/** field.ErrorList.ToAggregate().Error(): one message as is, several in brackets, duplicates once. */
function aggregate(issues: readonly ConfigIssue[]): string {
  const msgs = [...new Set(issues.map(issueString))];
  return msgs.length === 1 ? msgs[0]! : `[${msgs.join(', ')}]`;
}

const AES_KEY_SIZES = [16, 24, 32];
const SECRETBOX_KEY_SIZES = [32];

/** schema.ParseGroupResource: `deployments.apps` is resource deployments of group apps. */
export function parseGroupResource(s: string): GroupResource {
  const i = s.indexOf('.');
  return i < 0 ? { group: '', resource: s } : { group: s.slice(i + 1), resource: s.slice(0, i) };
}

function goStringSlice(xs: readonly string[]): string {
  return `[]string{${xs.map((x) => JSON.stringify(x)).join(', ')}}`;
}

function goProvider(p: ProviderConfiguration): string {
  const ptr = (name: string, v: unknown): string => (v === undefined ? `(*apiserver.${name})(nil)` : `(*apiserver.${name})(0xc000000000)`);
  return (
    `apiserver.ProviderConfiguration{AESGCM:${ptr('AESConfiguration', p.aesgcm)}, AESCBC:${ptr('AESConfiguration', p.aescbc)}, ` +
    `Secretbox:${ptr('SecretboxConfiguration', p.secretbox)}, Identity:${ptr('IdentityConfiguration', p.identity)}, KMS:${ptr('KMSConfiguration', p.kms)}}`
  );
}

export function validateEncryptionConfiguration(c: EncryptionConfiguration): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  if (c.resources.length === 0) return [{ field: 'resources', type: 'Required value', detail: 'at least one resources is required' }];
  c.resources.forEach((conf, i) => {
    const r = `resources[${i}].resources`;
    const p = `resources[${i}].providers`;
    if (conf.resources.length === 0) issues.push({ field: r, type: 'Required value', detail: `at least one ${r} is required` });
    issues.push(...validateResourceOverlap(conf.resources, r), ...validateResourceNames(conf.resources, r));
    if (conf.providers.length === 0) issues.push({ field: p, type: 'Required value', detail: `at least one ${p} is required` });
    conf.providers.forEach((provider, j) => {
      const path = `${p}[${j}]`;
      const found = (['kms', 'aesgcm', 'aescbc', 'secretbox', 'identity'] as const).filter((k) => provider[k] !== undefined).length;
      if (found === 0) {
        issues.push({
          field: path,
          type: 'Invalid value',
          value: goProvider(provider),
          detail: 'provider does not contain any of the expected providers: KMS, AESGCM, AESCBC, Secretbox, Identity',
        });
      } else if (found > 1) {
        issues.push({
          field: path,
          type: 'Invalid value',
          value: goProvider(provider),
          detail: 'more than one provider specified in a single element, should split into different list elements',
        });
      }
      if (provider.kms) return;
      if (provider.aesgcm) issues.push(...validateKeys(provider.aesgcm.keys, `${path}.aesgcm.keys`, AES_KEY_SIZES));
      else if (provider.aescbc) issues.push(...validateKeys(provider.aescbc.keys, `${path}.aescbc.keys`, AES_KEY_SIZES));
      else if (provider.secretbox) issues.push(...validateKeys(provider.secretbox.keys, `${path}.secretbox.keys`, SECRETBOX_KEY_SIZES));
    });
  });
  return issues;
}

function validateResourceOverlap(resources: readonly string[], field: string): ConfigIssue[] {
  if (resources.length < 2) return [];
  const rs = resources.map(parseGroupResource);
  let hasOverlap = false;
  let hasDuplicate = false;
  for (let i = 0; i < rs.length; i++) {
    for (let j = 0; j < rs.length; j++) {
      if (i === j) continue;
      const r1 = rs[i]!;
      const r2 = rs[j]!;
      if (r1.group === r2.group && r1.resource === r2.resource && !hasDuplicate) {
        hasDuplicate = true;
        continue;
      }
      if (hasOverlap) continue;
      if (r1.group === '*' && r1.resource === '*') {
        hasOverlap = true;
        continue;
      }
      if (r1.group !== r2.group) continue;
      if (r1.resource === '*' || r2.resource === '*') hasOverlap = true;
    }
  }
  const out: ConfigIssue[] = [];
  const value = goStringSlice(resources);
  if (hasDuplicate) out.push({ field, type: 'Invalid value', value, detail: 'the same resource cannot be specified multiple times' });
  if (hasOverlap) {
    out.push({
      field,
      type: 'Invalid value',
      value,
      detail: "using overlapping resources such as 'secrets' and '*.' in the same resource list is not allowed as they will be masked",
    });
  }
  return out;
}

function validateResourceNames(resources: readonly string[], field: string): ConfigIssue[] {
  const out: ConfigIssue[] = [];
  resources.forEach((res, j) => {
    const f = `${field}[${j}]`;
    const invalid = (detail: string): void => void out.push({ field: f, type: 'Invalid value', value: JSON.stringify(res), detail });
    if (res.toLowerCase() !== res) return invalid('resource name should not contain capital letters');
    if (res === '*') return invalid("use '*.' to encrypt all the resources from core API group or *.* to encrypt all resources");
    if (res === 'apiserveripinfo' || res === 'serviceipallocations' || res === 'servicenodeportallocations') {
      return invalid('resources which do not have REST API/s cannot be encrypted');
    }
    const gr = parseGroupResource(res);
    if (gr.group === 'events.k8s.io') {
      return invalid("'*.events.k8s.io' objects are stored using the 'events' API group in etcd. Use 'events' instead in the config file");
    }
    if (gr.group === 'extensions') return invalid("'extensions' group has been removed and cannot be used for encryption");
    if (gr.group === '*' && gr.resource !== '*') return invalid('encrypting the same resource across groups is not supported');
    return undefined;
  });
  return out;
}

function validateKeys(keys: readonly Key[], field: string, sizes: readonly number[]): ConfigIssue[] {
  if (keys.length === 0) return [{ field, type: 'Required value', detail: 'at least one keys is required' }];
  const out: ConfigIssue[] = [];
  keys.forEach((key, i) => {
    const f = `${field}[${i}]`;
    if (key.name === '') out.push({ field: `${f}.name`, type: 'Required value', detail: 'name is a mandatory field for a key' });
    if (key.secret === '') {
      out.push({ field: `${f}.secret`, type: 'Required value', detail: 'secret is a mandatory field for a key' });
      return;
    }
    // The secret itself never appears in a message: upstream prints "REDACTED" in its place.
    const secret = decodeStdBase64(key.secret);
    if (typeof secret === 'number') {
      out.push({ field: `${f}.secret`, type: 'Invalid value', value: '"REDACTED"', detail: 'secrets must be base64 encoded' });
      return;
    }
    if (!sizes.includes(secret.length)) {
      out.push({
        field: `${f}.secret`,
        type: 'Invalid value',
        value: '"REDACTED"',
        detail: `secret is not of the expected length, got ${secret.length}, expected one of [${sizes.join(' ')}]`,
      });
    }
  });
  return out;
}

// ---- building (getTransformerOverridesAndKMSPluginProbes) --------------------------------------

function grString(gr: GroupResource): string {
  return gr.group === '' ? gr.resource : `${gr.resource}.${gr.group}`;
}

/** grYAMLString: the core group's wildcard is written `*.`. */
function grYAMLString(gr: GroupResource): string {
  return gr.group === '' && gr.resource === '*' ? '*.' : grString(gr);
}

function keyedTransformer(
  prefix: string,
  keys: readonly Key[],
  make: (key: Buffer) => Transformer,
  noMatch: string,
  metrics?: TransformationMetrics,
): PrefixTransformer {
  const perKey = keys.map((k) => {
    const secret = decodeStdBase64(k.secret) as Buffer;
    return { prefix: Buffer.from(`${k.name}:`), transformer: make(secret) };
  });
  return { prefix: Buffer.from(prefix), transformer: new PrefixTransformers(perKey, noMatch, metrics) };
}

export function buildTransformers(config: EncryptionConfiguration, metrics?: TransformationMetrics): ResourceTransformers {
  const byResource = new Map<string, PrefixTransformer[]>();
  const keyOf = (gr: GroupResource): string => `${gr.group}/${gr.resource}`;
  config.resources.forEach((rc, i) => {
    const providers: PrefixTransformer[] = rc.providers.map((p, j) => {
      if (p.aesgcm)
        return keyedTransformer(PREFIX_AESGCM, p.aesgcm.keys, gcmTransformer, 'no matching key was found for the provided AES transformer', metrics);
      if (p.aescbc)
        return keyedTransformer(PREFIX_AESCBC, p.aescbc.keys, cbcTransformer, 'no matching key was found for the provided AES transformer', metrics);
      if (p.secretbox) {
        return keyedTransformer(
          PREFIX_SECRETBOX,
          p.secretbox.keys,
          secretboxTransformer,
          'no matching key was found for the provided Secretbox transformer',
          metrics,
        );
      }
      if (p.identity) return { prefix: new Uint8Array(0), transformer: identityTransformer };
      if (p.kms) {
        // Not upstream's: kplane has no KMS plugin client (gRPC over a unix socket).
        const name = typeof p.kms.name === 'string' ? p.kms.name : '';
        throw new Error(
          `resources[${i}].providers[${j}].kms: could not configure KMS plugin ${JSON.stringify(name)}: KMS providers are not supported by kplane; use aescbc, aesgcm or secretbox`,
        );
      }
      throw new Error('provider does not contain any of the expected providers: KMS, AESGCM, AESCBC, Secretbox, Identity');
    });
    for (const res of rc.resources) {
      const gr = parseGroupResource(res);
      const anyInGroup = { group: gr.group, resource: '*' };
      if (byResource.has(keyOf(anyInGroup)))
        throw new Error(`resource ${JSON.stringify(grYAMLString(gr))} is masked by earlier rule ${JSON.stringify(grYAMLString(anyInGroup))}`);
      if (byResource.has('*/*')) throw new Error(`resource ${JSON.stringify(grYAMLString(gr))} is masked by earlier rule "*.*"`);
      byResource.set(keyOf(gr), [...(byResource.get(keyOf(gr)) ?? []), ...providers]);
    }
  });
  const transformers = new Map<string, Transformer>();
  for (const [k, list] of byResource) transformers.set(k, new PrefixTransformers(list, 'no matching prefix found', metrics));
  return {
    // transformerFromOverrides: the resource, else its group's wildcard, else *.*, else identity.
    transformerForResource(gr) {
      return transformers.get(keyOf(gr)) ?? transformers.get(`${gr.group}/*`) ?? transformers.get('*/*') ?? identityTransformer;
    },
  };
}
