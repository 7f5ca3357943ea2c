// Kube protobuf wire format for kplane's built-in kinds. See proto/README.md for the field rules
// and codec.ts for the envelope and watch framing.
export {
  PROTOBUF_MEDIA_TYPE,
  PROTOBUF_WATCH_MEDIA_TYPE,
  PROTOBUF_MAGIC,
  NOT_ACCEPTABLE_MESSAGE,
  encodeObject,
  decodeObject,
  encodeWatchEvent,
  decodeWatchEvent,
  decodeWatchFrames,
  splitWatchFrames,
} from './codec.js';
export type { WatchEventType, DecodedWatchEvent } from './codec.js';
export { META_PROTOBUF_KINDS } from './kinds.js';
export type { ProtobufKind, ProtobufKinds } from './kinds.js';
