// Which apiVersion/kind travels as which protobuf message. To serve another built-in kind as
// protobuf: add its messages to a .proto file in ./proto and a row here (or call
// registerProtobufKind from the module that adds the kind).

const CORE = 'k8s.io.api.core.v1';
const META = 'k8s.io.apimachinery.pkg.apis.meta.v1';

/** [apiVersion, kind, message full name]. Every kind's List is listed explicitly. */
const builtins: ReadonlyArray<readonly [string, string, string]> = [
  ['v1', 'Namespace', `${CORE}.Namespace`],
  ['v1', 'NamespaceList', `${CORE}.NamespaceList`],
  ['v1', 'ConfigMap', `${CORE}.ConfigMap`],
  ['v1', 'ConfigMapList', `${CORE}.ConfigMapList`],
  ['v1', 'Secret', `${CORE}.Secret`],
  ['v1', 'SecretList', `${CORE}.SecretList`],
  ['v1', 'ServiceAccount', `${CORE}.ServiceAccount`],
  ['v1', 'ServiceAccountList', `${CORE}.ServiceAccountList`],
  ['v1', 'Event', `${CORE}.Event`],
  ['v1', 'EventList', `${CORE}.EventList`],
  ['events.k8s.io/v1', 'Event', 'k8s.io.api.events.v1.Event'],
  ['events.k8s.io/v1', 'EventList', 'k8s.io.api.events.v1.EventList'],
  ['coordination.k8s.io/v1', 'Lease', 'k8s.io.api.coordination.v1.Lease'],
  ['coordination.k8s.io/v1', 'LeaseList', 'k8s.io.api.coordination.v1.LeaseList'],
  // metav1.Status is an "unversioned" type upstream: always apiVersion v1.
  ['v1', 'Status', `${META}.Status`],
  ['meta.k8s.io/v1', 'PartialObjectMetadata', `${META}.PartialObjectMetadata`],
  ['meta.k8s.io/v1', 'PartialObjectMetadataList', `${META}.PartialObjectMetadataList`],
  ['meta.k8s.io/v1beta1', 'PartialObjectMetadata', `${META}.PartialObjectMetadata`],
  ['meta.k8s.io/v1beta1', 'PartialObjectMetadataList', 'k8s.io.apimachinery.pkg.apis.meta.v1beta1.PartialObjectMetadataList'],
  ['meta.k8s.io/v1', 'DeleteOptions', `${META}.DeleteOptions`],
  ['meta.k8s.io/v1', 'WatchEvent', `${META}.WatchEvent`],
];

/**
 * Kinds that metav1.AddToGroupVersion registers in every group version, so that e.g. client-go
 * sends `apps/v1 DeleteOptions`. Any apiVersion is accepted for these.
 */
const everyVersion: ReadonlyMap<string, string> = new Map([
  ['DeleteOptions', `${META}.DeleteOptions`],
  ['WatchEvent', `${META}.WatchEvent`],
]);

const table = new Map<string, string>(builtins.map(([v, k, m]) => [`${v}\u0000${k}`, m]));

/** Adds (or replaces) the protobuf message used for one apiVersion/kind. */
export function registerProtobufKind(apiVersion: string, kind: string, message: string): void {
  table.set(`${apiVersion}\u0000${kind}`, message);
}

/** The message full name for apiVersion/kind, or undefined when the kind has no protobuf form. */
export function messageFor(apiVersion: string, kind: string): string | undefined {
  return table.get(`${apiVersion}\u0000${kind}`) ?? everyVersion.get(kind);
}

/** All registered kinds (for tests and docs). */
export function protobufKinds(): Array<{ apiVersion: string; kind: string; message: string }> {
  return [...table].map(([key, message]) => {
    const [apiVersion, kind] = key.split('\u0000') as [string, string];
    return { apiVersion, kind, message };
  });
}
