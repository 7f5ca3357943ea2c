import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseRequestInfo, queryBool } from './requestinfo.js';

const info = (method: string, url: string) => {
  const u = new URL(url, 'https://x');
  const r = parseRequestInfo(method, u.pathname, u.searchParams);
  return {
    verb: r.verb,
    group: r.apiGroup,
    version: r.apiVersion,
    ns: r.namespace,
    resource: r.resource,
    sub: r.subresource,
    name: r.name,
    res: r.isResourceRequest,
  };
};

describe('parseRequestInfo (cases from upstream requestinfo_test.go)', () => {
  const cases: [string, string, Partial<ReturnType<typeof info>>][] = [
    ['GET', '/api/v1/namespaces', { verb: 'list', resource: 'namespaces', ns: '', name: '' }],
    // Discovery paths are non-resource requests (fewer than three parts after the API prefix).
    ['GET', '/api/v1', { res: false, verb: 'get', version: '', resource: '' }],
    ['GET', '/apis/apps/v1', { res: false, verb: 'get', group: '', version: '' }],
    ['GET', '/apis/apps', { res: false }],
    ['GET', '/api/v1/namespaces/other', { verb: 'get', resource: 'namespaces', ns: 'other', name: 'other' }],
    ['GET', '/api/v1/namespaces/other/configmaps/foo', { verb: 'get', resource: 'configmaps', ns: 'other', name: 'foo' }],
    ['GET', '/api/v1/configmaps', { verb: 'list', resource: 'configmaps', ns: '' }],
    ['GET', '/api/v1/namespaces/other/configmaps?watch=true', { verb: 'watch', resource: 'configmaps', ns: 'other' }],
    ['GET', '/api/v1/watch/namespaces/other/configmaps', { verb: 'watch', resource: 'configmaps', ns: 'other' }],
    // Bool parameters follow runtime.Convert_Slice_string_To_bool: the Python client sends watch=True.
    ['GET', '/api/v1/namespaces/other/configmaps?watch=True', { verb: 'watch' }],
    ['GET', '/api/v1/namespaces/other/configmaps?watch=1', { verb: 'watch' }],
    ['GET', '/api/v1/namespaces/other/configmaps?watch=', { verb: 'watch' }],
    ['GET', '/api/v1/namespaces/other/configmaps?watch=FALSE', { verb: 'list' }],
    ['GET', '/api/v1/namespaces/other/configmaps?watch=0', { verb: 'list' }],
    ['GET', '/api/v1/namespaces/other/configmaps?fieldSelector=metadata.name%3Dfoo', { verb: 'list', name: 'foo' }],
    ['POST', '/api/v1/namespaces/other/configmaps', { verb: 'create', resource: 'configmaps', ns: 'other' }],
    ['PUT', '/api/v1/namespaces/other/finalize', { verb: 'update', resource: 'namespaces', sub: 'finalize', name: 'other' }],
    ['PATCH', '/api/v1/namespaces/other/status', { verb: 'patch', resource: 'namespaces', sub: 'status', name: 'other' }],
    ['DELETE', '/api/v1/namespaces/other/configmaps/foo', { verb: 'delete', name: 'foo' }],
    ['DELETE', '/api/v1/namespaces/other/configmaps', { verb: 'deletecollection', name: '' }],
    [
      'GET',
      '/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/x',
      { verb: 'get', group: 'coordination.k8s.io', version: 'v1', resource: 'leases', name: 'x' },
    ],
    ['GET', '/healthz', { res: false, verb: 'get' }],
    ['GET', '/apis', { res: false }],
    ['GET', '/api', { res: false }],
  ];
  for (const [method, url, want] of cases) {
    it(`${method} ${url}`, () => {
      const got = info(method, url);
      for (const [k, v] of Object.entries(want)) assert.equal(got[k as keyof typeof got], v, `${k} of ${method} ${url}`);
    });
  }
});

describe('queryBool (runtime.Convert_Slice_string_To_bool)', () => {
  it('is false only when absent, "0" or "false" in any case', () => {
    for (const v of [null, '0', 'false', 'False', 'FALSE']) assert.equal(queryBool(v), false, String(v));
    for (const v of ['true', 'True', '1', '', 'yes', 't']) assert.equal(queryBool(v), true, v);
  });
});
