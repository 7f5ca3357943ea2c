import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  isLoopbackHost,
  parseServiceAddress,
  resolveCluster,
  resolveEndpoint,
  serviceResolver,
  staticServiceResolver,
  type ServiceLike,
  type ServiceLookups,
} from './service-resolver.js';

describe('--aggregator-service-address', () => {
  it('parses namespace/name[:port]=host:port, the Service port defaulting to 443', () => {
    assert.deepEqual(parseServiceAddress('wardle/api=127.0.0.1:8443'), { namespace: 'wardle', name: 'api', port: 443, host: '127.0.0.1', targetPort: 8443 });
    assert.deepEqual(parseServiceAddress('wardle/api:8443=[::1]:9443'), { namespace: 'wardle', name: 'api', port: 8443, host: '::1', targetPort: 9443 });
    assert.equal(parseServiceAddress('a/b=localhost:1').host, 'localhost');
  });

  it('refuses other shapes and non-loopback targets, naming the flag', () => {
    assert.throws(
      () => parseServiceAddress('wardle/api'),
      /^Error: --aggregator-service-address: "wardle\/api" must be <namespace>\/<name>\[:<port>\]=<host>:<port>$/,
    );
    assert.throws(() => parseServiceAddress('api=127.0.0.1:1'), /"api" must be <namespace>\/<name>\[:<port>\]/);
    assert.throws(() => parseServiceAddress('a/b=127.0.0.1'), /"127.0.0.1" must be <host>:<port>/);
    assert.throws(() => parseServiceAddress('a/b=127.0.0.1:0'), /target port "0" must be a port number from 1 to 65535/);
    assert.throws(() => parseServiceAddress('a/b:x=127.0.0.1:1'), /service port "x" must be a port number/);
    assert.throws(() => parseServiceAddress('a/b=10.0.0.1:443'), /"10.0.0.1" is not a loopback address/);
    assert.throws(() => parseServiceAddress('a/b=example.com:443'), /"example.com" is not a loopback address/);
  });

  it('resolves by namespace, name and port; the last entry wins', () => {
    const r = staticServiceResolver([
      parseServiceAddress('w/api=127.0.0.1:1'),
      parseServiceAddress('w/api=127.0.0.2:2'),
      parseServiceAddress('w/api:80=127.0.0.1:3'),
    ]);
    assert.deepEqual(r.resolve('w', 'api', 443), { host: '127.0.0.2', port: 2 });
    assert.deepEqual(r.resolve('w', 'api', 80), { host: '127.0.0.1', port: 3 });
    assert.throws(() => r.resolve('w', 'other', 443), /^ServiceResolutionError: service "other" not found$/);
  });

  it('knows loopback hosts', () => {
    for (const h of ['127.0.0.1', '127.1.2.3', '::1', 'localhost']) assert.ok(isLoopbackHost(h), h);
    for (const h of ['128.0.0.1', '::2', '0.0.0.0', 'localhost.example.com']) assert.ok(!isLoopbackHost(h), h);
  });
});

describe('service resolution from Services (proxy.ResolveCluster, proxy.ResolveEndpoint)', () => {
  const services: Record<string, ServiceLike> = {
    'h/api': { spec: { type: 'ClusterIP', clusterIP: '127.1.0.5', ports: [{ name: 'https', port: 443 }] } },
    'h/headless': { spec: { type: 'ClusterIP', clusterIP: 'None', ports: [{ port: 443 }] } },
    'h/ext': { spec: { type: 'ExternalName', externalName: 'localhost' } },
  };
  const lookups: ServiceLookups = {
    service: (ns, name) => services[`${ns}/${name}`],
    endpoints: (_ns, name) =>
      name === 'api'
        ? {
            subsets: [
              { addresses: [], ports: [] },
              { addresses: [{ ip: '127.0.0.9' }], ports: [{ name: 'https', port: 9443 }] },
            ],
          }
        : undefined,
  };

  it('answers the cluster IP and port, or upstream errors', () => {
    assert.deepEqual(resolveCluster(lookups, 'h', 'api', 443), { host: '127.1.0.5', port: 443 });
    assert.deepEqual(resolveCluster(lookups, 'h', 'ext', 8443), { host: 'localhost', port: 8443 });
    assert.throws(() => resolveCluster(lookups, 'h', 'nope', 443), /^ServiceResolutionError: service "nope" not found$/);
    assert.throws(() => resolveCluster(lookups, 'h', 'api', 80), /no service port 80 found for service "api"/);
    assert.throws(() => resolveCluster(lookups, 'h', 'headless', 443), /cannot route to service with ClusterIP "None"/);
  });

  it('answers an endpoint address on the port named as the Service port', () => {
    assert.deepEqual(resolveEndpoint(lookups, 'h', 'api', 443), { host: '127.0.0.9', port: 9443 });
    assert.throws(() => resolveEndpoint(lookups, 'h', 'ext', 443), /unsupported service type "ExternalName"/);
    assert.throws(() => resolveEndpoint(lookups, 'h', 'headless', 443), /endpoints "headless" not found/);
  });

  it('tries the static table first', () => {
    const r = serviceResolver([parseServiceAddress('h/api=127.0.0.1:1')], lookups);
    assert.deepEqual(r.resolve('h', 'api', 443), { host: '127.0.0.1', port: 1 });
    assert.throws(() => serviceResolver([], undefined).resolve('h', 'api', 443), /service "api" not found/);
  });
});
