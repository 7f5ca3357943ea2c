// A client of operator-registry's api.Registry and grpc.health.v1.Health (what OLM's catalog
// operator and package server dial): one grpc-js channel per catalog address, whose connectivity
// state (IDLE, CONNECTING, READY, TRANSIENT_FAILURE, SHUTDOWN) is what a CatalogSource's
// status.connectionState.lastObservedState reports, as grpc-go's connectivity.State.String().
import * as grpc from '@grpc/grpc-js';
import type { ApiBundle, ApiPackage } from '../api/api.js';
import { loadPackageDefinition } from '../api/api.js';

/** grpc-go's connectivity.State names. */
export type ConnectivityState = 'IDLE' | 'CONNECTING' | 'READY' | 'TRANSIENT_FAILURE' | 'SHUTDOWN';

const STATE_NAMES: Record<grpc.connectivityState, ConnectivityState> = {
  [grpc.connectivityState.IDLE]: 'IDLE',
  [grpc.connectivityState.CONNECTING]: 'CONNECTING',
  [grpc.connectivityState.READY]: 'READY',
  [grpc.connectivityState.TRANSIENT_FAILURE]: 'TRANSIENT_FAILURE',
  [grpc.connectivityState.SHUTDOWN]: 'SHUTDOWN',
};

type Ctor = new (address: string, creds: grpc.ChannelCredentials, options?: grpc.ChannelOptions) => grpc.Client;
let ctors: { registry: Ctor; health: Ctor } | undefined;
function services(): { registry: Ctor; health: Ctor } {
  if (!ctors) {
    const pkg = grpc.loadPackageDefinition(loadPackageDefinition()) as unknown as {
      api: { Registry: Ctor };
      grpc: { health: { v1: { Health: Ctor } } };
    };
    ctors = { registry: pkg.api.Registry, health: pkg.grpc.health.v1.Health };
  }
  return ctors;
}

export interface RegistryClientOptions {
  /** Reconnect backoff (grpc's exponential backoff with jitter), first and largest pause. */
  readonly initialBackoffMs?: number;
  readonly maxBackoffMs?: number;
  /** Deadline of each call (default 30 s). */
  readonly callTimeoutMs?: number;
}

type Unary = (req: unknown, meta: grpc.Metadata, opts: grpc.CallOptions, cb: (err: grpc.ServiceError | null, res: unknown) => void) => grpc.ClientUnaryCall;
type Streaming = (req: unknown, opts: grpc.CallOptions) => grpc.ClientReadableStream<unknown>;

export class RegistryClient {
  private readonly registry: grpc.Client;
  private readonly health: grpc.Client;
  private readonly callTimeoutMs: number;
  private closed = false;

  constructor(
    readonly address: string,
    opts: RegistryClientOptions = {},
  ) {
    const { registry, health } = services();
    const channelOptions: grpc.ChannelOptions = {
      'grpc.initial_reconnect_backoff_ms': opts.initialBackoffMs ?? 1000,
      'grpc.max_reconnect_backoff_ms': opts.maxBackoffMs ?? 30_000,
    };
    this.registry = new registry(address, grpc.credentials.createInsecure(), channelOptions);
    // The health client shares the registry client's channel.
    this.health = new health(address, grpc.credentials.createInsecure(), { ...channelOptions, channelOverride: this.registry.getChannel() });
    this.callTimeoutMs = opts.callTimeoutMs ?? 30_000;
  }

  /** The channel's state; `connect` starts connecting an IDLE channel. */
  state(connect = false): ConnectivityState {
    return STATE_NAMES[this.registry.getChannel().getConnectivityState(connect)];
  }

  /** Calls `onChange` at every state change until closed. */
  watchState(onChange: (state: ConnectivityState) => void): void {
    const channel = this.registry.getChannel();
    const loop = (current: grpc.connectivityState): void => {
      if (this.closed) return;
      channel.watchConnectivityState(current, Infinity, () => {
        if (this.closed) return;
        const next = channel.getConnectivityState(false);
        onChange(STATE_NAMES[next]);
        if (next !== grpc.connectivityState.SHUTDOWN) loop(next);
      });
    };
    loop(channel.getConnectivityState(true));
  }

  private deadline(): grpc.CallOptions {
    return { deadline: Date.now() + this.callTimeoutMs };
  }

  private unary<T>(client: grpc.Client, method: string, req: unknown): Promise<T> {
    const fn = (client as unknown as Record<string, Unary>)[method]!.bind(client);
    return new Promise((resolve, reject) => {
      fn(req, new grpc.Metadata(), this.deadline(), (err, res) => (err ? reject(err) : resolve(res as T)));
    });
  }

  private async stream<T>(method: string, req: unknown): Promise<T[]> {
    const fn = (this.registry as unknown as Record<string, Streaming>)[method]!.bind(this.registry);
    const out: T[] = [];
    for await (const m of fn(req, this.deadline())) out.push(m as T);
    return out;
  }

  /** grpc.health.v1.Health/Check of the whole server (service ""). */
  async healthCheck(): Promise<string> {
    const res = await this.unary<{ status: string }>(this.health, 'Check', { service: '' });
    return res.status;
  }

  async listPackages(): Promise<string[]> {
    return (await this.stream<{ name: string }>('ListPackages', {})).map((p) => p.name);
  }

  getPackage(name: string): Promise<ApiPackage> {
    return this.unary<ApiPackage>(this.registry, 'GetPackage', { name });
  }

  getBundleForChannel(pkgName: string, channelName: string): Promise<ApiBundle> {
    return this.unary<ApiBundle>(this.registry, 'GetBundleForChannel', { pkgName, channelName });
  }

  getBundle(pkgName: string, channelName: string, csvName: string): Promise<ApiBundle> {
    return this.unary<ApiBundle>(this.registry, 'GetBundle', { pkgName, channelName, csvName });
  }

  listBundles(): Promise<ApiBundle[]> {
    return this.stream<ApiBundle>('ListBundles', {});
  }

  close(): void {
    this.closed = true;
    this.health.close();
    this.registry.close();
  }
}

/** A gRPC error's text as grpc-go prints it: `rpc error: code = Unavailable desc = ...`. */
export function grpcErrorText(e: unknown): string {
  const err = e as Partial<grpc.ServiceError>;
  if (typeof err?.code === 'number') {
    const name = grpc.status[err.code] ?? String(err.code);
    const code = name
      .toLowerCase()
      .split('_')
      .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
      .join('');
    return `rpc error: code = ${code} desc = ${err.details ?? ''}`;
  }
  return e instanceof Error ? e.message : String(e);
}
