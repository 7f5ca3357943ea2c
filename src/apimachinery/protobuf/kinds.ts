// Which apiVersion/kind travels as which protobuf message. The table itself belongs to the control
// plane that serves the kinds (apimachinery/scheme.ts); each resource brings its own rows, and the
// meta kinds below are in every table. A kind's messages live in a .proto file in ./proto.

const META = 'k8s.io.apimachinery.pkg.apis.meta.v1';

/** One row of a protobuf kind table. */
export interface ProtobufKind {
  readonly apiVersion: string;
  readonly kind: string;
  /** The message's full proto name, without the leading dot. */
  readonly message: string;
}

/** What the codec asks of a kind table: the message for apiVersion/kind, undefined when it has none. */
export interface ProtobufKinds {
  messageFor(apiVersion: string, kind: string): string | undefined;
}

/** The meta kinds every control plane serves, whatever its resources. */
export const META_PROTOBUF_KINDS: readonly ProtobufKind[] = [
  // metav1.Status is an "unversioned" type upstream: always apiVersion v1.
  { apiVersion: 'v1', kind: 'Status', message: `${META}.Status` },
  { apiVersion: 'meta.k8s.io/v1', kind: 'PartialObjectMetadata', message: `${META}.PartialObjectMetadata` },
  { apiVersion: 'meta.k8s.io/v1', kind: 'PartialObjectMetadataList', message: `${META}.PartialObjectMetadataList` },
  { apiVersion: 'meta.k8s.io/v1beta1', kind: 'PartialObjectMetadata', message: `${META}.PartialObjectMetadata` },
  { apiVersion: 'meta.k8s.io/v1beta1', kind: 'PartialObjectMetadataList', message: 'k8s.io.apimachinery.pkg.apis.meta.v1beta1.PartialObjectMetadataList' },
  { apiVersion: 'meta.k8s.io/v1', kind: 'DeleteOptions', message: `${META}.DeleteOptions` },
  { apiVersion: 'meta.k8s.io/v1', kind: 'WatchEvent', message: `${META}.WatchEvent` },
];

/**
 * Kinds that metav1.AddToGroupVersion registers in every group version, so that e.g. client-go
 * sends `apps/v1 DeleteOptions`. Any apiVersion is accepted for these.
 */
export const EVERY_VERSION_PROTOBUF_KINDS: ReadonlyMap<string, string> = new Map([
  ['DeleteOptions', `${META}.DeleteOptions`],
  ['WatchEvent', `${META}.WatchEvent`],
]);
