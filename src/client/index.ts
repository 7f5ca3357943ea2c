export type * from './types.js';
export { StatusError, isStatusError } from './types.js';
export { ClientNetworkError, ClientAbortError, isNetworkError, statusErrorFrom, statusErrorFromStatus } from './errors.js';
export { RestClient, resourcePath, groupVersionPath } from './rest.js';
export type { Transport, TransportRequest, TransportResponse, RestClientOptions, HttpMethod } from './rest.js';
export { createHttpsClient, loadKubeconfig } from './https.js';
export type { ClientConfig, HttpsClientOptions, KubeconfigLike } from './https.js';
export { createLoopbackClient } from './loopback.js';
export type { RequestHandler } from './loopback.js';
