// A control plane's kind tables (upstream's runtime.Scheme, for what kplane needs of it): which
// apiVersion/kind travels as which protobuf message, and the Go types of fields that the OpenAPI
// definitions lose. One Scheme per control plane, filled from the resources it serves when it is
// assembled, so two control planes in one process can serve different kinds. The meta kinds
// (Status, PartialObjectMetadata, DeleteOptions, WatchEvent) are in every Scheme.
import { META_GO_FIELD_TYPES, type GoFieldTypeTable, type GoFieldTypes } from './gotypes.js';
import { EVERY_VERSION_PROTOBUF_KINDS, META_PROTOBUF_KINDS, type ProtobufKind, type ProtobufKinds } from './protobuf/kinds.js';

export class Scheme implements ProtobufKinds {
  /** `apiVersion\0kind` → message full name. */
  private readonly messages = new Map<string, string>();
  /** definition name → JSON field name → Go type (see gotypes.ts). */
  private readonly fieldTypes = new Map<string, Readonly<Record<string, string>>>();

  constructor() {
    this.addProtobufKinds(META_PROTOBUF_KINDS);
    this.addGoFieldTypes(META_GO_FIELD_TYPES);
  }

  /** Adds (or replaces) the protobuf messages used for apiVersion/kinds. */
  addProtobufKinds(kinds: readonly ProtobufKind[]): void {
    for (const k of kinds) this.messages.set(`${k.apiVersion}\u0000${k.kind}`, k.message);
  }

  /** The message full name for apiVersion/kind, or undefined when the kind has no protobuf form here. */
  messageFor(apiVersion: string, kind: string): string | undefined {
    return this.messages.get(`${apiVersion}\u0000${kind}`) ?? EVERY_VERSION_PROTOBUF_KINDS.get(kind);
  }

  /** True when apiVersion/kind has a protobuf form (and so may be served as protobuf). */
  isProtobufKind(apiVersion: string, kind: string): boolean {
    return this.messageFor(apiVersion, kind) !== undefined;
  }

  /** Every apiVersion/kind with a protobuf form (for tests and docs). */
  protobufKinds(): ProtobufKind[] {
    return [...this.messages].map(([key, message]) => {
      const [apiVersion, kind] = key.split('\u0000') as [string, string];
      return { apiVersion, kind, message };
    });
  }

  /**
   * Declares the Go types of fields whose OpenAPI form loses them (a named string type shows as
   * `string`, a named map as `object`), merged into what a definition already has.
   */
  addGoFieldTypes(types: GoFieldTypes): void {
    for (const [name, fields] of Object.entries(types)) this.fieldTypes.set(name, { ...this.fieldTypes.get(name), ...fields });
  }

  /** What goTypeError looks the Go field types up in. */
  get goFieldTypes(): GoFieldTypeTable {
    return this.fieldTypes;
  }
}
