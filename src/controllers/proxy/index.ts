export { ProxyHost, NodeProxy, startNodeProxy } from './proxy.js';
export type { NodeProxyOptions, ProxyHostOptions, StartNodeProxyOptions } from './proxy.js';
export { categorizeEndpoints, endpointsFor, localReadyEndpoints, SERVICE_NAME_LABEL } from './endpoints.js';
export type { Endpoint, EndpointSlice, Categorized } from './endpoints.js';
export { Picker, TcpListener, UdpListener } from './forward.js';
export type { Backend, Listener, Route } from './forward.js';
export { ProxierHealthServer, ServiceHealthServer, goTimeString } from './health.js';
