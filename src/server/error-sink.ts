// ErrorSink in a file of its own: config.ts imports the filters' hook types, and the filters and
// response writers need this, so it cannot live in config.ts without a cycle.
import type { ProtobufKinds } from '../apimachinery/protobuf/index.js';
import type { ApiMetrics } from './metrics.js';

/** Where error answers and post-timeout activity are reported, and whether error bodies may be compressed. */
export interface ErrorSink {
  readonly metrics: ApiMetrics | undefined;
  readonly log: ((msg: string) => void) | undefined;
  /** The server's responseCompression, for errors answered before the compression filter ran. */
  readonly compression: boolean;
  /** The control plane's kind table, to answer a Status as protobuf. */
  readonly scheme: ProtobufKinds;
}
