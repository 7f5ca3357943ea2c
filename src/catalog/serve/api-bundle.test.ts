// modelBundleToApi, transcribed from upstream's pkg/api/conversion_test.go (TestConvertModelBundleToAPIBundle)
// plus the csv-metadata and error paths of model_to_api.go.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Property } from '../declcfg/types.js';
import type { Bundle, Channel, Package } from '../model/types.js';
import { modelBundleToApi } from './api-bundle.js';

const crdbackups = `{"apiVersion":"apiextensions.k8s.io/v1beta1","kind":"CustomResourceDefinition","metadata":{"name":"etcdbackups.etcd.database.coreos.com"},"spec":{"group":"etcd.database.coreos.com","names":{"kind":"EtcdBackup","listKind":"EtcdBackupList","plural":"etcdbackups","singular":"etcdbackup"},"scope":"Namespaced","version":"v1beta2"}}`;
const crdclusters = `{"apiVersion":"apiextensions.k8s.io/v1beta1","kind":"CustomResourceDefinition","metadata":{"name":"etcdclusters.etcd.database.coreos.com"},"spec":{"group":"etcd.database.coreos.com","names":{"kind":"EtcdCluster","listKind":"EtcdClusterList","plural":"etcdclusters","shortNames":["etcdclus","etcd"],"singular":"etcdcluster"},"scope":"Namespaced","version":"v1beta2"}}`;
const crdrestores = `{"apiVersion":"apiextensions.k8s.io/v1beta1","kind":"CustomResourceDefinition","metadata":{"name":"etcdrestores.etcd.database.coreos.com"},"spec":{"group":"etcd.database.coreos.com","names":{"kind":"EtcdRestore","listKind":"EtcdRestoreList","plural":"etcdrestores","singular":"etcdrestore"},"scope":"Namespaced","version":"v1beta2"}}`;
const csvJSON = `{"apiVersion":"operators.coreos.com/v1alpha1","kind":"ClusterServiceVersion","metadata":{"name":"etcdoperator.v0.9.4","namespace":"placeholder"},"spec":{"version":"0.9.4"}}`;
const obj = (json: string): Property => ({ type: 'olm.bundle.object', value: { data: Buffer.from(json).toString('base64') } });

function modelBundle(properties: Property[], over: Partial<Bundle> = {}): Bundle {
  const pkg: Package = { name: 'etcd', description: 'etcd from the package', channels: new Map() };
  const ch: Channel = { package: pkg, name: 'singlenamespace-alpha', bundles: new Map(), properties: [] };
  return {
    package: pkg,
    channel: ch,
    name: 'etcdoperator.v0.9.4',
    image: 'quay.io/operatorhubio/etcd:v0.9.4',
    replaces: 'etcdoperator.v0.9.2',
    skips: [],
    skipRange: '',
    properties,
    relatedImages: [{ name: 'etcdv0.9.4', image: 'quay.io/coreos/etcd-operator@sha256:66a37fd61a06a43969854ee6d3e21087a98b93838e284a6086b13917f96b0d9b' }],
    objects: [crdbackups, crdclusters, csvJSON, crdrestores],
    csvJSON,
    version: '0.9.4',
    ...over,
  };
}

const upstreamProps: Property[] = [
  { type: 'olm.package', value: { packageName: 'etcd', version: '0.9.4' } },
  { type: 'olm.package.required', value: { packageName: 'test', versionRange: '>=1.2.3 <2.0.0-0' } },
  { type: 'olm.gvk.required', value: { group: 'testapi.coreos.com', kind: 'Testapi', version: 'v1' } },
  { type: 'olm.gvk', value: { group: 'etcd.database.coreos.com', kind: 'EtcdBackup', version: 'v1beta2' } },
  obj(crdbackups),
  obj(crdclusters),
  obj(csvJSON),
  obj(crdrestores),
];

describe('modelBundleToApi', () => {
  it('converts as opm (conversion_test.go)', () => {
    assert.deepEqual(modelBundleToApi(modelBundle(upstreamProps)), {
      csvName: 'etcdoperator.v0.9.4',
      packageName: 'etcd',
      channelName: 'singlenamespace-alpha',
      bundlePath: 'quay.io/operatorhubio/etcd:v0.9.4',
      providedApis: [{ group: 'etcd.database.coreos.com', version: 'v1beta2', kind: 'EtcdBackup' }],
      requiredApis: [{ group: 'testapi.coreos.com', version: 'v1', kind: 'Testapi' }],
      version: '0.9.4',
      skipRange: '',
      dependencies: [
        { type: 'olm.package', value: '{"packageName":"test","version":">=1.2.3 <2.0.0-0"}' },
        { type: 'olm.gvk', value: '{"group":"testapi.coreos.com","kind":"Testapi","version":"v1"}' },
      ],
      properties: [
        { type: 'olm.package', value: '{"packageName":"etcd","version":"0.9.4"}' },
        { type: 'olm.package.required', value: '{"packageName":"test","versionRange":">=1.2.3 <2.0.0-0"}' },
        { type: 'olm.gvk.required', value: '{"group":"testapi.coreos.com","kind":"Testapi","version":"v1"}' },
        { type: 'olm.gvk', value: '{"group":"etcd.database.coreos.com","kind":"EtcdBackup","version":"v1beta2"}' },
      ],
      replaces: 'etcdoperator.v0.9.2',
      skips: [],
      csvJson: csvJSON,
      object: [crdbackups, crdclusters, csvJSON, crdrestores],
    });
  });

  it('takes objects and the CSV from olm.bundle.object when the loader left them empty', () => {
    const b = modelBundleToApi(modelBundle(upstreamProps, { objects: [], csvJSON: '' }));
    assert.deepEqual(b.object, [crdbackups, crdclusters, csvJSON, crdrestores]);
    assert.equal(b.csvJson, csvJSON);
  });

  it('makes up the CSV from olm.csv.metadata (and it is the only object) when there is no CSV', () => {
    const props: Property[] = [
      { type: 'olm.package', value: { packageName: 'etcd', version: '0.9.4' } },
      { type: 'olm.csv.metadata', value: { displayName: 'etcd', annotations: { b: '2', a: '1' } } },
    ];
    const b = modelBundleToApi(modelBundle(props, { objects: [], csvJSON: '' }));
    assert.equal(
      b.csvJson,
      '{"kind":"ClusterServiceVersion","apiVersion":"operators.coreos.com/v1alpha1","metadata":{"name":"etcdoperator.v0.9.4","creationTimestamp":null,"annotations":{"a":"1","b":"2"}},' +
        '"spec":{"install":{"strategy":"deployment","spec":{"deployments":null}},"version":"0.9.4","customresourcedefinitions":{},"apiservicedefinitions":{},"displayName":"etcd",' +
        '"description":"etcd from the package","provider":{},"cleanup":{"enabled":false},' +
        '"relatedImages":[{"name":"etcdv0.9.4","image":"quay.io/coreos/etcd-operator@sha256:66a37fd61a06a43969854ee6d3e21087a98b93838e284a6086b13917f96b0d9b"}]},"status":{"cleanup":{}}}',
    );
    assert.deepEqual(b.object, [b.csvJson]);
    assert.deepEqual(b.properties, [{ type: 'olm.package', value: '{"packageName":"etcd","version":"0.9.4"}' }], 'csv metadata is not a served property');
  });

  it("rejects what opm's parseProperties rejects", () => {
    assert.throws(() => modelBundleToApi(modelBundle([])), { message: 'parse properties: expected exactly 1 property of type "olm.package", found 0' });
    const two: Property[] = [upstreamProps[0]!, { type: 'olm.csv.metadata', value: {} }, { type: 'olm.csv.metadata', value: {} }];
    assert.throws(() => modelBundleToApi(modelBundle(two)), { message: 'parse properties: expected at most 1 property of type "olm.csv.metadata", found 2' });
  });

  it('carries the bundle deprecation', () => {
    assert.deepEqual(modelBundleToApi(modelBundle(upstreamProps, { deprecation: { message: 'gone' } })).deprecation, { message: 'gone' });
  });
});
