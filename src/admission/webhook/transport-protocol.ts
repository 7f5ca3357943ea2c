// The messages between client.ts and the transport (transport.ts), on the API server's thread or
// on the transport's worker thread.

/** What the thread needs to call an endpoint, sent once per endpoint (and again to a new thread). */
export interface EndpointSpec {
  /** The URL called: the webhook's `url`, or https://<name>.<namespace>.svc:<port><path> for a service. */
  readonly url: string;
  /** The PEM CA bundle trusted; the system's roots without it. */
  readonly ca: string | undefined;
  /** A service: the name its certificate is verified for and the Host header sent (with its port). */
  readonly service: { readonly serverName: string; readonly hostPort: string } | undefined;
}

export type ToTransport =
  | { readonly t: 'open'; readonly ep: number; readonly spec: EndpointSpec }
  /** A call: the body (JSON text) POSTed to the endpoint, dialled at `dial` (a service's resolved address) or its URL. */
  | {
      readonly t: 'call';
      readonly id: number;
      readonly ep: number;
      readonly body: string;
      readonly timeoutSeconds: number;
      readonly dial: { readonly host: string; readonly port: number } | undefined;
    }
  /** The endpoint is no longer used: its connections close once its calls under way have ended. */
  | { readonly t: 'release'; readonly ep: number };

/**
 * A call's end: the answer's body (a 2xx answer), or why it failed. `prefixed` failures are
 * transport failures, shown after the call's `Post "<url>"` as Go's url.Error does; the others
 * (a non-2xx answer) are client-go's StatusError texts, with its code.
 */
export type FromTransport =
  | { readonly id: number; readonly data: string }
  | { readonly id: number; readonly why: string; readonly prefixed: boolean; readonly code: number | undefined };
