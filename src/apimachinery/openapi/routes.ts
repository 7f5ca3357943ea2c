// The REST routes kube-apiserver publishes for a set of resources, in a neutral form that v2.ts
// and v3.ts render into Swagger 2.0 and OpenAPI 3.0. Which paths, verbs, operation IDs, actions,
// parameters and responses exist follows k8s.io/apiserver's installer, so that clients keyed on
// them (kubectl's dry-run detection, explain, client generators) see what they expect.

import { subresourceKind, type ResourceDescriptor, type SubresourceDescriptor } from '../resource.js';

export type HttpMethod = 'get' | 'put' | 'post' | 'delete' | 'patch';
export type Action = 'get' | 'list' | 'watch' | 'watchlist' | 'post' | 'put' | 'patch' | 'delete' | 'deletecollection';

export interface Param {
  readonly name: string;
  readonly in: 'query' | 'path' | 'body';
  readonly description?: string;
  /** For query and path parameters. */
  readonly type?: 'string' | 'boolean' | 'integer';
  readonly required?: boolean;
  /** For body parameters: the definition name of the body. */
  readonly schema?: string;
}

export interface Response {
  readonly code: string;
  readonly description: string;
  /** Definition name of the response body, if any. */
  readonly schema?: string;
}

export interface Operation {
  readonly method: HttpMethod;
  readonly operationId: string;
  readonly description: string;
  readonly tags: readonly string[];
  readonly action?: Action;
  readonly gvk?: { group: string; version: string; kind: string };
  readonly consumes: readonly string[];
  readonly produces: readonly string[];
  readonly params: readonly Param[];
  readonly responses: readonly Response[];
}

export interface Route {
  readonly path: string;
  readonly operations: readonly Operation[];
}

export interface RouteOptions {
  /** Whether a resource accepts strategic merge patch (built-ins do, custom resources do not). Default: yes. */
  readonly supportsStrategicMergePatch?: (r: ResourceDescriptor) => boolean;
  /**
   * Whether DELETE of one object answers with the object rather than a Status (upstream's
   * ReturnDeletedObject stores). Default: the core resources that do so upstream.
   */
  readonly returnsDeletedObject?: (r: ResourceDescriptor) => boolean;
  /**
   * Whether a resource is a custom resource: its routes are then those of apiextensions-apiserver's
   * CRD OpenAPI builder (customResourceRoutes), not the installer's. Default: no.
   */
  readonly customResource?: (r: ResourceDescriptor) => boolean;
}

const RETURNS_DELETED_OBJECT = new Set(
  ['serviceaccounts', 'pods', 'services', 'persistentvolumeclaims', 'persistentvolumes', 'podtemplates', 'resourcequotas'].map((p) => '/' + p),
);

export const META_PREFIX = 'io.k8s.apimachinery.pkg.apis.meta.v1.';
const STATUS = META_PREFIX + 'Status';
const DELETE_OPTIONS = META_PREFIX + 'DeleteOptions';
const WATCH_EVENT = META_PREFIX + 'WatchEvent';
const PATCH = META_PREFIX + 'Patch';

const JSON_YAML_PB = ['application/json', 'application/yaml', 'application/vnd.kubernetes.protobuf'] as const;
const JSON_YAML = ['application/json', 'application/yaml'] as const;
const STREAMING = [...JSON_YAML_PB, 'application/json;stream=watch', 'application/vnd.kubernetes.protobuf;stream=watch'] as const;
const PATCH_TYPES = ['application/json-patch+json', 'application/merge-patch+json', 'application/strategic-merge-patch+json', 'application/apply-patch+yaml'];

// ---- parameters (descriptions are ours; names, types and placement are upstream's)

const q = (name: string, type: Param['type'], description: string): Param => ({ name, in: 'query', type, description });

export const P = {
  pretty: q('pretty', 'string', "If 'true', the output is pretty-printed."),
  namespace: { name: 'namespace', in: 'path', type: 'string', required: true, description: 'Namespace of the objects.' } as Param,
  name: (kind: string): Param => ({ name: 'name', in: 'path', type: 'string', required: true, description: `Name of the ${kind}.` }),
  dryRun: q('dryRun', 'string', 'If "All", the request is fully processed (admission, validation, defaulting) but nothing is persisted.'),
  fieldManager: q('fieldManager', 'string', 'Name of the actor making the change, recorded in managedFields. At most 128 printable characters.'),
  fieldManagerApply: q(
    'fieldManager',
    'string',
    'Name of the actor making the change, recorded in managedFields. At most 128 printable characters. Required for apply patches.',
  ),
  fieldValidation: q(
    'fieldValidation',
    'string',
    'What to do with unknown or duplicate fields in the body: "Ignore" drops them, "Warn" (the default) drops them with a warning header, "Strict" fails the request.',
  ),
  force: q('force', 'boolean', 'For apply patches: take ownership of fields that conflict with other managers. Must be unset for other patch types.'),
  allowWatchBookmarks: q('allowWatchBookmarks', 'boolean', 'Ask for BOOKMARK events on a watch. The server decides when (and whether) to send them.'),
  continue: q('continue', 'string', 'Token from a previous limited list, to fetch the next page.'),
  fieldSelector: q('fieldSelector', 'string', 'Select objects by field values, e.g. metadata.name=foo. Default: everything.'),
  labelSelector: q('labelSelector', 'string', 'Select objects by labels, e.g. app=web,tier!=db. Default: everything.'),
  limit: q('limit', 'integer', 'Maximum number of items to return; if more exist, the list metadata carries a continue token.'),
  resourceVersion: q('resourceVersion', 'string', 'Constrain which resource version the list or watch is served from. Default: the most recent.'),
  resourceVersionMatch: q('resourceVersionMatch', 'string', 'How resourceVersion applies to a list: "Exact" or "NotOlderThan".'),
  sendInitialEvents: q(
    'sendInitialEvents',
    'boolean',
    'With watch=true, first send the current objects as ADDED events, then a bookmark marking the end of that initial state.',
  ),
  timeoutSeconds: q('timeoutSeconds', 'integer', 'Time limit for the list or watch call, whether or not there is activity.'),
  watch: q('watch', 'boolean', 'Watch for changes to the selected objects and stream them as events.'),
  gracePeriodSeconds: q('gracePeriodSeconds', 'integer', "Seconds before the object is deleted; 0 deletes immediately. Default: the kind's own grace period."),
  ignoreStoreReadErrorWithClusterBreakingPotential: q(
    'ignoreStoreReadErrorWithClusterBreakingPotential',
    'boolean',
    'Delete an object that cannot be read from storage, skipping finalizers and admission. Unsafe.',
  ),
  orphanDependents: q('orphanDependents', 'boolean', 'Deprecated, use propagationPolicy. If true, dependents are orphaned.'),
  propagationPolicy: q('propagationPolicy', 'string', 'How dependents are garbage-collected: "Orphan", "Background" or "Foreground".'),
} as const;

const LIST_PARAMS: readonly Param[] = [
  P.allowWatchBookmarks,
  P.continue,
  P.fieldSelector,
  P.labelSelector,
  P.limit,
  P.resourceVersion,
  P.resourceVersionMatch,
  P.sendInitialEvents,
  P.timeoutSeconds,
  P.watch,
];
const DELETE_PARAMS: readonly Param[] = [
  P.dryRun,
  P.gracePeriodSeconds,
  P.ignoreStoreReadErrorWithClusterBreakingPotential,
  P.orphanDependents,
  P.propagationPolicy,
];
const DELETECOLLECTION_PARAMS: readonly Param[] = [
  P.continue,
  P.dryRun,
  P.fieldSelector,
  P.gracePeriodSeconds,
  P.ignoreStoreReadErrorWithClusterBreakingPotential,
  P.labelSelector,
  P.limit,
  P.orphanDependents,
  P.propagationPolicy,
  P.resourceVersion,
  P.resourceVersionMatch,
  P.sendInitialEvents,
  P.timeoutSeconds,
];

// GetOptions, which custom resources' read operations take (built-in ones do not publish it).
const RESOURCE_VERSION_GET = q('resourceVersion', 'string', 'Constrain which resource version the object is served from. Default: the most recent.');

const body = (schema: string, required: boolean): Param =>
  required ? { name: 'body', in: 'body', required: true, schema } : { name: 'body', in: 'body', schema };

// ---- names

/**
 * Same as apiserver's ToValidOperationID: drops characters that are not letters (or digits after
 * the first position) and upper-cases the letter following each dropped run.
 */
export function toValidOperationID(s: string, capitalizeFirst: boolean): string {
  let out = '';
  let capitalize = capitalizeFirst;
  let i = 0;
  for (const ch of s) {
    const isLetter = /\p{L}/u.test(ch) || ch === '_';
    const isDigit = /\p{Nd}/u.test(ch);
    if (isLetter || (i !== 0 && isDigit)) {
      out += capitalize ? ch.toUpperCase() : ch;
      capitalize = false;
    } else {
      capitalize = true;
    }
    i++;
  }
  return out;
}

/** `CoreV1`, `CoordinationV1`, `RbacAuthorizationV1`: the group-version infix of operation IDs. */
export function groupVersionInfix(group: string, version: string): string {
  const g = group === '' ? 'core' : group.replace(/\.k8s\.io$/, '');
  return toValidOperationID(g, true) + toValidOperationID(version, true);
}

/** `core_v1`, `coordination_v1`, `rbacAuthorization_v1`: the tag upstream puts on every operation. */
export function groupVersionTag(group: string, version: string): string {
  const g = group === '' ? 'core' : group.replace(/\.k8s\.io$/, '');
  return toValidOperationID(g, false) + '_' + toValidOperationID(version, false);
}

export function groupTag(group: string): string {
  return toValidOperationID(group === '' ? 'core' : group.replace(/\.k8s\.io$/, ''), false);
}

/** Path prefix of a group-version: `/api/v1` or `/apis/<group>/<version>`. */
export function groupVersionPath(group: string, version: string): string {
  return group === '' ? `/api/${version}` : `/apis/${group}/${version}`;
}

const cap = (s: string) => (s === '' ? s : s[0]!.toUpperCase() + s.slice(1));

// ---- routes

function sortParams(params: readonly Param[]): Param[] {
  return [...params].sort((a, b) => (a.name === b.name ? a.in.localeCompare(b.in) : a.name < b.name ? -1 : 1));
}

/** Routes of one resource (collection, item, watch, all-namespaces and subresource paths). */
export function resourceRoutes(r: ResourceDescriptor, options: RouteOptions = {}): Route[] {
  if (options.customResource?.(r)) return customResourceRoutes(r);
  const gvPath = groupVersionPath(r.group, r.version);
  const infix = groupVersionInfix(r.group, r.version);
  const tags = [groupVersionTag(r.group, r.version)];
  const gvk = { group: r.group, version: r.version, kind: r.kind };
  const def = r.definitionName;
  const listDef = r.definitionName + 'List';
  const ns = r.namespaced ? 'Namespaced' : '';
  const scopePath = r.namespaced ? `${gvPath}/namespaces/{namespace}` : gvPath;
  const scopeParams = r.namespaced ? [P.namespace] : [];
  const has = (v: string) => r.verbs.includes(v);
  const smp = options.supportsStrategicMergePatch?.(r) ?? true;
  const deleted = (options.returnsDeletedObject?.(r) ?? RETURNS_DELETED_OBJECT.has(`${r.group}/${r.plural}`)) ? def : STATUS;
  const patchTypes = smp ? PATCH_TYPES : PATCH_TYPES.filter((t) => t !== 'application/strategic-merge-patch+json');

  const op = (
    method: HttpMethod,
    verbPrefix: string,
    rest: string,
    action: Action,
    description: string,
    params: readonly Param[],
    responses: readonly Response[],
    extra: { consumes?: readonly string[]; produces?: readonly string[]; gvk?: Operation['gvk'] } = {},
  ): Operation => ({
    method,
    operationId: verbPrefix + infix + rest,
    description,
    tags,
    action,
    gvk: extra.gvk ?? gvk,
    consumes: extra.consumes ?? ['*/*'],
    produces: extra.produces ?? JSON_YAML_PB,
    params: sortParams(params),
    responses,
  });
  const ok = (schema: string): Response => ({ code: '200', description: 'OK', schema });
  const created = (schema: string): Response => ({ code: '201', description: 'Created', schema });
  const accepted = (schema: string): Response => ({ code: '202', description: 'Accepted', schema });
  const unauthorized: Response = { code: '401', description: 'Unauthorized' };

  const routes: Route[] = [];
  const add = (path: string, common: readonly Param[], ops: Operation[]) => {
    if (ops.length === 0) return;
    routes.push({ path, operations: ops.map((o) => ({ ...o, params: sortParams([...common, ...o.params]) })) });
  };
  const nameParam = P.name(r.kind);

  // Collection: list, create, deletecollection.
  const collection: Operation[] = [];
  if (has('deletecollection')) {
    collection.push(
      op(
        'delete',
        'delete',
        `Collection${ns}${r.kind}`,
        'deletecollection',
        `delete collection of ${r.kind}`,
        [body(DELETE_OPTIONS, false), ...DELETECOLLECTION_PARAMS],
        [ok(STATUS), unauthorized],
      ),
    );
  }
  if (has('list')) {
    collection.push(
      op('get', 'list', `${ns}${r.kind}`, 'list', `list or watch objects of kind ${r.kind}`, LIST_PARAMS, [ok(listDef), unauthorized], { produces: STREAMING }),
    );
  }
  if (has('create')) {
    collection.push(
      op(
        'post',
        'create',
        `${ns}${r.kind}`,
        'post',
        `create ${article(r.kind)} ${r.kind}`,
        [body(def, true), P.dryRun, P.fieldManager, P.fieldValidation],
        [ok(def), created(def), accepted(def), unauthorized],
      ),
    );
  }
  add(`${scopePath}/${r.plural}`, [...scopeParams, P.pretty], collection);

  // Item: read, replace, patch, delete.
  const item: Operation[] = [];
  if (has('delete')) {
    item.push(
      op(
        'delete',
        'delete',
        `${ns}${r.kind}`,
        'delete',
        `delete ${article(r.kind)} ${r.kind}`,
        [body(DELETE_OPTIONS, false), ...DELETE_PARAMS],
        [ok(deleted), accepted(deleted), unauthorized],
      ),
    );
  }
  if (has('get')) item.push(op('get', 'read', `${ns}${r.kind}`, 'get', `read the specified ${r.kind}`, [], [ok(def), unauthorized]));
  if (has('patch')) {
    item.push(
      op(
        'patch',
        'patch',
        `${ns}${r.kind}`,
        'patch',
        `partially update the specified ${r.kind}`,
        [body(PATCH, true), P.dryRun, P.fieldManagerApply, P.fieldValidation, P.force],
        [ok(def), created(def), unauthorized],
        { consumes: patchTypes },
      ),
    );
  }
  if (has('update')) {
    item.push(
      op(
        'put',
        'replace',
        `${ns}${r.kind}`,
        'put',
        `replace the specified ${r.kind}`,
        [body(def, true), P.dryRun, P.fieldManager, P.fieldValidation],
        [ok(def), created(def), unauthorized],
      ),
    );
  }
  add(`${scopePath}/${r.plural}/{name}`, [nameParam, ...scopeParams, P.pretty], item);

  // Subresources.
  for (const sub of r.subresources)
    routes.push(...subresourceRoute(r, sub, { scopePath, scopeParams, ns, infix, tags, patchTypes, op, ok, created, unauthorized, nameParam }));

  // Watch (deprecated watch paths, still published upstream) and all-namespaces list/watch.
  const listCommon = [...LIST_PARAMS, P.pretty];
  if (has('watch')) {
    const watchScope = r.namespaced ? `${gvPath}/watch/namespaces/{namespace}` : `${gvPath}/watch`;
    add(
      `${watchScope}/${r.plural}`,
      [...scopeParams, ...listCommon],
      [
        op(
          'get',
          'watch',
          `${ns}${r.kind}List`,
          'watchlist',
          `watch individual changes to a list of ${r.kind}. deprecated: use the 'watch' parameter with a list operation instead.`,
          [],
          [ok(WATCH_EVENT), unauthorized],
          { produces: STREAMING },
        ),
      ],
    );
    add(
      `${watchScope}/${r.plural}/{name}`,
      [nameParam, ...scopeParams, ...listCommon],
      [
        op(
          'get',
          'watch',
          `${ns}${r.kind}`,
          'watch',
          `watch changes to an object of kind ${r.kind}. deprecated: use the 'watch' parameter with a list operation instead, filtered to a single item with the 'fieldSelector' parameter.`,
          [],
          [ok(WATCH_EVENT), unauthorized],
          { produces: STREAMING },
        ),
      ],
    );
  }
  if (r.namespaced && has('list')) {
    add(`${gvPath}/${r.plural}`, listCommon, [
      op('get', 'list', `${r.kind}ForAllNamespaces`, 'list', `list or watch objects of kind ${r.kind}`, [], [ok(listDef), unauthorized], {
        produces: STREAMING,
      }),
    ]);
  }
  if (r.namespaced && has('watch')) {
    add(`${gvPath}/watch/${r.plural}`, listCommon, [
      op(
        'get',
        'watch',
        `${r.kind}ListForAllNamespaces`,
        'watchlist',
        `watch individual changes to a list of ${r.kind}. deprecated: use the 'watch' parameter with a list operation instead.`,
        [],
        [ok(WATCH_EVENT), unauthorized],
        { produces: STREAMING },
      ),
    ]);
  }
  return routes;
}

interface SubCtx {
  scopePath: string;
  scopeParams: Param[];
  ns: string;
  infix: string;
  tags: string[];
  patchTypes: string[];
  op: (
    method: HttpMethod,
    verbPrefix: string,
    rest: string,
    action: Action,
    description: string,
    params: readonly Param[],
    responses: readonly Response[],
    extra?: { consumes?: readonly string[]; produces?: readonly string[]; gvk?: Operation['gvk'] },
  ) => Operation;
  ok: (s: string) => Response;
  created: (s: string) => Response;
  unauthorized: Response;
  nameParam: Param;
}

function subresourceRoute(r: ResourceDescriptor, sub: SubresourceDescriptor, c: SubCtx): Route[] {
  // The body of a subresource is the parent kind unless the subresource says otherwise (scale).
  const { definitionName: def, ...gvk } = subresourceKind(r, sub);
  const rest = `${c.ns}${r.kind}${cap(toValidOperationID(sub.name, true))}`;
  const ops: Operation[] = [];
  const has = (v: string) => sub.verbs.includes(v);
  if (has('get')) ops.push(c.op('get', 'read', rest, 'get', `read ${sub.name} of the specified ${r.kind}`, [], [c.ok(def), c.unauthorized], { gvk }));
  if (has('patch')) {
    ops.push(
      c.op(
        'patch',
        'patch',
        rest,
        'patch',
        `partially update ${sub.name} of the specified ${r.kind}`,
        [body(PATCH, true), P.dryRun, P.fieldManagerApply, P.fieldValidation, P.force],
        [c.ok(def), c.created(def), c.unauthorized],
        { consumes: c.patchTypes, gvk },
      ),
    );
  }
  if (has('update')) {
    ops.push(
      c.op(
        'put',
        'replace',
        rest,
        'put',
        `replace ${sub.name} of the specified ${r.kind}`,
        [body(def, true), P.dryRun, P.fieldManager, P.fieldValidation],
        [c.ok(def), c.created(def), c.unauthorized],
        { gvk },
      ),
    );
  }
  if (has('create')) {
    ops.push(
      c.op(
        'post',
        'create',
        rest,
        'post',
        `create ${sub.name} of ${article(r.kind)} ${r.kind}`,
        [body(def, true), P.dryRun, P.fieldManager, P.fieldValidation],
        [c.ok(def), c.created(def), { code: '202', description: 'Accepted', schema: def }, c.unauthorized],
        { gvk },
      ),
    );
  }
  if (ops.length === 0) return [];
  const common = [c.nameParam, ...c.scopeParams, P.pretty];
  return [{ path: `${c.scopePath}/${r.plural}/{name}/${sub.name}`, operations: ops.map((o) => ({ ...o, params: sortParams([...common, ...o.params]) })) }];
}

/**
 * Routes of a custom resource as apiextensions-apiserver's CRD OpenAPI builder publishes them
 * (controller/openapi/builder: generateBuilder, buildRoute), which differ from the installer's: no
 * watch paths; JSON and YAML only (no protobuf, no watch streams), also for request bodies; patch
 * answers 200 only; read takes GetOptions (`resourceVersion`); deletecollection takes ListOptions
 * and no body; every operation, status and scale included, carries the custom resource's GVK.
 */
export function customResourceRoutes(r: ResourceDescriptor): Route[] {
  const gvPath = groupVersionPath(r.group, r.version);
  const infix = groupVersionInfix(r.group, r.version);
  const tags = [groupVersionTag(r.group, r.version)];
  const gvk = { group: r.group, version: r.version, kind: r.kind };
  const ns = r.namespaced ? 'Namespaced' : '';
  const scopePath = r.namespaced ? `${gvPath}/namespaces/{namespace}` : gvPath;
  const scopeParams = r.namespaced ? [P.namespace] : [];
  const patchTypes = PATCH_TYPES.filter((t) => t !== 'application/strategic-merge-patch+json');
  const ok = (schema: string): Response => ({ code: '200', description: 'OK', schema });
  const unauthorized: Response = { code: '401', description: 'Unauthorized' };
  const op = (
    method: HttpMethod,
    operationId: string,
    action: Action,
    description: string,
    params: readonly Param[],
    responses: readonly Response[],
  ): Operation => ({
    method,
    operationId,
    description,
    tags,
    action,
    gvk,
    consumes: method === 'patch' ? patchTypes : JSON_YAML,
    produces: JSON_YAML,
    params,
    responses: [...responses, unauthorized],
  });
  const routes: Route[] = [];
  const add = (path: string, common: readonly Param[], ops: Operation[]) => {
    routes.push({ path, operations: ops.map((o) => ({ ...o, params: sortParams([...common, P.pretty, ...o.params]) })) });
  };
  // The operations on one object (the object itself, or its status or scale).
  const objectOps = (sub: string, def: string): Operation[] => {
    const rest = `${ns}${r.kind}${toValidOperationID(sub, true)}`;
    const of = sub === '' ? '' : ` ${sub} of`;
    return [
      op('get', `read${infix}${rest}`, 'get', `read${of} the specified ${r.kind}`, [RESOURCE_VERSION_GET], [ok(def)]),
      op(
        'put',
        `replace${infix}${rest}`,
        'put',
        `replace${of} the specified ${r.kind}`,
        [body(def, true), P.dryRun, P.fieldManager, P.fieldValidation],
        [ok(def), { code: '201', description: 'Created', schema: def }],
      ),
      op(
        'patch',
        `patch${infix}${rest}`,
        'patch',
        `partially update${of} the specified ${r.kind}`,
        [body(PATCH, true), P.dryRun, P.fieldManagerApply, P.fieldValidation, P.force],
        [ok(def)],
      ),
    ];
  };

  if (r.namespaced) {
    add(
      `${gvPath}/${r.plural}`,
      [],
      [op('get', `list${infix}${r.kind}ForAllNamespaces`, 'list', `list objects of kind ${r.kind}`, LIST_PARAMS, [ok(r.definitionName + 'List')])],
    );
  }
  add(`${scopePath}/${r.plural}`, scopeParams, [
    op('get', `list${infix}${ns}${r.kind}`, 'list', `list objects of kind ${r.kind}`, LIST_PARAMS, [ok(r.definitionName + 'List')]),
    op(
      'post',
      `create${infix}${ns}${r.kind}`,
      'post',
      `create ${article(r.kind)} ${r.kind}`,
      [body(r.definitionName, true), P.dryRun, P.fieldManager, P.fieldValidation],
      [
        ok(r.definitionName),
        { code: '201', description: 'Created', schema: r.definitionName },
        { code: '202', description: 'Accepted', schema: r.definitionName },
      ],
    ),
    op('delete', `delete${infix}Collection${ns}${r.kind}`, 'deletecollection', `delete collection of ${r.kind}`, LIST_PARAMS, [ok(STATUS)]),
  ]);
  const item = `${scopePath}/${r.plural}/{name}`;
  const itemParams = [P.name(r.kind), ...scopeParams];
  add(item, itemParams, [
    ...objectOps('', r.definitionName),
    op(
      'delete',
      `delete${infix}${ns}${r.kind}`,
      'delete',
      `delete ${article(r.kind)} ${r.kind}`,
      [body(DELETE_OPTIONS, false), ...DELETE_PARAMS],
      [ok(STATUS), { code: '202', description: 'Accepted', schema: STATUS }],
    ),
  ]);
  for (const sub of r.subresources) {
    add(`${item}/${sub.name}`, itemParams, objectOps(sub.name, subresourceKind(r, sub).definitionName));
  }
  return routes;
}

function article(kind: string): string {
  return /^[AEIOU]/.test(kind) ? 'an' : 'a';
}

/** Discovery routes: /api/, /api/v1/, /apis/, /apis/<group>/, /apis/<group>/<version>/. */
export function discoveryRoutes(groupVersions: readonly { group: string; version: string }[]): Route[] {
  const routes: Route[] = [];
  const unauthorized: Response = { code: '401', description: 'Unauthorized' };
  const get = (operationId: string, description: string, tag: string, schema: string): Operation => ({
    method: 'get',
    operationId,
    description,
    tags: [tag],
    consumes: JSON_YAML_PB,
    produces: JSON_YAML_PB,
    params: [],
    responses: [{ code: '200', description: 'OK', schema }, unauthorized],
  });
  const groups = new Map<string, string[]>();
  for (const gv of groupVersions) {
    const vs = groups.get(gv.group) ?? [];
    if (!vs.includes(gv.version)) vs.push(gv.version);
    groups.set(gv.group, vs);
  }
  if (groups.has('')) {
    routes.push({ path: '/api/', operations: [get('getCoreAPIVersions', 'get available API versions', 'core', META_PREFIX + 'APIVersions')] });
  }
  if ([...groups.keys()].some((g) => g !== '')) {
    routes.push({ path: '/apis/', operations: [get('getAPIVersions', 'get available API versions', 'apis', META_PREFIX + 'APIGroupList')] });
  }
  for (const [group, versions] of groups) {
    if (group !== '') {
      routes.push({
        path: `/apis/${group}/`,
        operations: [
          get(
            `get${toValidOperationID(group.replace(/\.k8s\.io$/, ''), true)}APIGroup`,
            'get information of a group',
            groupTag(group),
            META_PREFIX + 'APIGroup',
          ),
        ],
      });
    }
    for (const version of versions) {
      routes.push({
        path: `${groupVersionPath(group, version)}/`,
        operations: [
          get(
            `get${groupVersionInfix(group, version)}APIResources`,
            'get available resources',
            groupVersionTag(group, version),
            META_PREFIX + 'APIResourceList',
          ),
        ],
      });
    }
  }
  return routes;
}

/**
 * Every route for the given resources: discovery first, then each resource's routes. Custom
 * resources' group-versions get no discovery routes: upstream serves their discovery outside the
 * documented (go-restful) routes.
 */
export function buildRoutes(resources: readonly ResourceDescriptor[], options: RouteOptions = {}): Route[] {
  const gvs = resources.filter((r) => !options.customResource?.(r)).map((r) => ({ group: r.group, version: r.version }));
  const routes = [...discoveryRoutes(gvs)];
  for (const r of resources) routes.push(...resourceRoutes(r, options));
  const seen = new Set<string>();
  for (const r of routes) {
    if (seen.has(r.path)) throw new Error(`duplicate OpenAPI path ${r.path}`);
    seen.add(r.path);
  }
  return routes;
}

/**
 * Parameters every operation of a route shares (by name and location, never the body) move to the
 * path item, as kube-openapi does; the rest stay on their operations.
 */
export function splitCommonParams(route: Route): { common: Param[]; operations: Operation[] } {
  const key = (p: Param) => `${p.in}:${p.name}`;
  const counts = new Map<string, number>();
  const first = new Map<string, Param>();
  for (const o of route.operations) {
    for (const p of o.params) {
      counts.set(key(p), (counts.get(key(p)) ?? 0) + 1);
      if (!first.has(key(p))) first.set(key(p), p);
    }
  }
  const commonKeys = new Set([...counts].filter(([k, n]) => n === route.operations.length && !k.startsWith('body:')).map(([k]) => k));
  const common = sortParams([...commonKeys].map((k) => first.get(k)!));
  const operations = route.operations.map((o) => ({ ...o, params: o.params.filter((p) => !commonKeys.has(key(p))) }));
  return { common, operations };
}
