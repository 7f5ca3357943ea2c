// serviceaccounts/token: the TokenRequest subresource (pkg/registry/core/serviceaccount/storage/token.go).
// POST a TokenRequest, get it back with status.token signed by the control plane's key. Served only
// when the control plane has a token issuer, as upstream installs TokenREST only with one.
import { badRequest, conflict, fieldIssue, invalid, type FieldIssue } from '../../../apimachinery/errors.js';
import type { KubeObject } from '../../../apimachinery/types.js';
import { tokenClaims, type TokenIssuer } from '../../../auth/serviceaccount/token.js';
import type { ResourceRegistration } from '../../registry.js';
import type { SubresourceCreateInput, SubresourceCreateResult } from '../../strategy.js';
import { tokenRequestDefinitions, tokenRequestGoFieldTypes } from './tokenrequest-definitions.js';

const GK = { group: 'authentication.k8s.io', kind: 'TokenRequest' };
/** ValidateTokenRequest's floor (MinTokenAgeSec) and ceiling. */
const MIN_TOKEN_AGE_SECONDS = 10 * 60;
const MAX_TOKEN_AGE_SECONDS = 2 ** 32;
/** SetDefaults_TokenRequestSpec: an hour. */
const DEFAULT_EXPIRATION_SECONDS = 60 * 60;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** metav1.Time on the wire: RFC 3339 at second precision, UTC. */
const rfc3339 = (ms: number): string => new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');

/** schema.FromAPIVersionAndKind(...).String(): `group/version, Kind=kind`. */
function gvkOf(apiVersion: string, kind: string): { group: string; version: string; kind: string; text: string } {
  const slash = apiVersion.indexOf('/');
  const group = slash >= 0 ? apiVersion.slice(0, slash) : '';
  const version = slash >= 0 ? apiVersion.slice(slash + 1) : apiVersion;
  return { group, version, kind, text: `${group}/${version}, Kind=${kind}` };
}

export async function createToken(issuer: TokenIssuer, input: SubresourceCreateInput): Promise<SubresourceCreateResult> {
  const { name, body } = input;
  const namespace = input.namespace;
  if (!namespace) throw badRequest('namespace is required');
  const meta = isObject(body.metadata) ? body.metadata : {};
  const reqName = typeof meta.name === 'string' ? meta.name : '';
  const reqNamespace = typeof meta.namespace === 'string' ? meta.namespace : '';
  if (reqName && reqName !== name) throw invalid(GK, name, [fieldIssue.invalid('metadata.name', reqName, 'must match the service account name if specified')]);
  if (reqNamespace && reqNamespace !== namespace) {
    throw invalid(GK, name, [fieldIssue.invalid('metadata.namespace', reqNamespace, 'must match the service account namespace if specified')]);
  }
  const sa = await input.get('serviceaccounts', namespace, name);
  // TokenRequestServiceAccountUIDValidation (on by default upstream): a request naming another
  // incarnation of the ServiceAccount is a conflict; without a UID it gets the account's.
  const saUid = sa.metadata?.uid ?? '';
  const reqUid = typeof meta.uid === 'string' ? meta.uid : '';
  if (reqUid && reqUid !== saUid) {
    throw conflict(
      { group: GK.group, resource: GK.kind },
      name,
      `the UID in the token request (${reqUid}) does not match the UID of the service account (${saUid})`,
    );
  }
  const uid = reqUid || saUid;
  const spec: Record<string, unknown> = isObject(body['spec']) ? { ...body['spec'] } : {};
  if (!Array.isArray(spec['audiences']) || spec['audiences'].length === 0) spec['audiences'] = [...issuer.apiAudiences];
  if (spec['expirationSeconds'] === undefined || spec['expirationSeconds'] === null) spec['expirationSeconds'] = DEFAULT_EXPIRATION_SECONDS;
  const nowMs = Date.now();
  const issues: FieldIssue[] = [];
  let expirationSeconds = Number(spec['expirationSeconds']);
  if (expirationSeconds < MIN_TOKEN_AGE_SECONDS) {
    issues.push(fieldIssue.invalid('spec.expirationSeconds', expirationSeconds, 'may not specify a duration less than 10 minutes'));
  }
  if (expirationSeconds > MAX_TOKEN_AGE_SECONDS) {
    issues.push(fieldIssue.invalid('spec.expirationSeconds', expirationSeconds, 'may not specify a duration larger than 2^32 seconds'));
  }
  if (issues.length) throw invalid(GK, '', issues);
  // Validating admission of the request as completed here (name, namespace, creation time, spec
  // defaulted, no status), after the static validation, as upstream's TokenREST calls it.
  const request: KubeObject = {
    kind: 'TokenRequest',
    apiVersion: 'authentication.k8s.io/v1',
    metadata: { name: reqName || name, namespace: reqNamespace || namespace, ...(uid ? { uid } : {}), creationTimestamp: rfc3339(nowMs) },
    spec: { ...spec },
    // Cleared, as Go prints an empty TokenRequestStatus.
    status: { token: '', expirationTimestamp: null },
  };
  const admitted = input.validate(request);
  if (admitted) await admitted;

  let secret: KubeObject | undefined;
  const ref = isObject(spec['boundObjectRef']) ? spec['boundObjectRef'] : undefined;
  if (ref) {
    const refName = typeof ref['name'] === 'string' ? ref['name'] : '';
    const refUid = typeof ref['uid'] === 'string' ? ref['uid'] : '';
    const gvk = gvkOf(typeof ref['apiVersion'] === 'string' ? ref['apiVersion'] : '', typeof ref['kind'] === 'string' ? ref['kind'] : '');
    let uid: string;
    if (gvk.group === '' && gvk.kind === 'Pod') {
      // kplane serves no pods: the lookup answers as a get of a pod that is not there.
      const pod = await input.get('pods', namespace, refName);
      uid = pod.metadata?.uid ?? '';
    } else if (gvk.group === '' && gvk.kind === 'Node') {
      const node = await input.get('nodes', undefined, refName);
      uid = node.metadata?.uid ?? '';
    } else if (gvk.group === '' && gvk.kind === 'Secret') {
      secret = await input.get('secrets', namespace, refName);
      uid = secret.metadata?.uid ?? '';
    } else {
      throw badRequest(`cannot bind token to object of type ${gvk.text}`);
    }
    if (refUid !== '' && uid !== refUid) {
      throw conflict(
        { group: gvk.group, resource: gvk.kind },
        refName,
        `the UID in the bound object reference (${refUid}) does not match the UID in record. The object might have been deleted and then recreated`,
      );
    }
  }

  const warnings: string[] = [];
  if (issuer.maxExpirationSeconds > 0 && expirationSeconds > issuer.maxExpirationSeconds) {
    warnings.push(`requested expiration of ${expirationSeconds} seconds shortened to ${issuer.maxExpirationSeconds} seconds`);
    expirationSeconds = issuer.maxExpirationSeconds;
  }
  spec['expirationSeconds'] = expirationSeconds;
  const claims = tokenClaims({
    issuer: issuer.issuer,
    serviceAccount: sa,
    ...(secret ? { secret } : {}),
    expirationSeconds,
    audiences: spec['audiences'] as string[],
    nowSeconds: Math.floor(nowMs / 1000),
  });
  let token: string;
  try {
    token = await issuer.sign(claims);
  } catch (e) {
    throw new Error(`failed to generate token: ${(e as Error).message}`, { cause: e });
  }
  const object: KubeObject = {
    kind: 'TokenRequest',
    apiVersion: 'authentication.k8s.io/v1',
    metadata: { name: reqName || name, namespace: reqNamespace || namespace, ...(uid ? { uid } : {}), creationTimestamp: rfc3339(nowMs) },
    spec,
    status: { token, expirationTimestamp: rfc3339(nowMs + expirationSeconds * 1000) },
  };
  return { object, warnings };
}

/** The ServiceAccount registration with serviceaccounts/token served by `issuer`. */
export function withTokenRequest(reg: ResourceRegistration, issuer: TokenIssuer): ResourceRegistration {
  return {
    ...reg,
    descriptor: {
      ...reg.descriptor,
      subresources: [
        ...reg.descriptor.subresources.filter((s) => s.name !== 'token'),
        { name: 'token', kind: 'TokenRequest', group: 'authentication.k8s.io', version: 'v1', verbs: ['create'] },
      ],
    },
    strategy: {
      ...reg.strategy,
      subresources: {
        ...reg.strategy.subresources,
        token: {
          // Nothing of the ServiceAccount is written through it.
          merge: (_incoming, current) => current,
          create: (input) => createToken(issuer, input),
        },
      },
    },
    definitions: { ...reg.definitions, ...tokenRequestDefinitions },
    goFieldTypes: { ...reg.goFieldTypes, ...tokenRequestGoFieldTypes },
    // kubectl 1.33 sends its TokenRequest as protobuf.
    protobufKinds: [
      ...(reg.protobufKinds ?? []),
      { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', message: 'k8s.io.api.authentication.v1.TokenRequest' },
    ],
  };
}
