export type { Action, HttpMethod, Operation, Param, Response, Route, RouteOptions } from './routes.js';
export { buildRoutes, discoveryRoutes, groupVersionInfix, groupVersionPath, groupVersionTag, resourceRoutes, toValidOperationID } from './routes.js';
export type { OpenAPIV2Input, SwaggerDocument, SwaggerOperation, SwaggerParameter, SwaggerPathItem } from './v2.js';
export { addSharedKindGroupVersions, buildOpenAPIV2, reachableDefinitions } from './v2.js';
export type { OpenAPIV3Document, OpenAPIV3Index, OpenAPIV3Input, OpenAPIV3Service, ServedV3Document, V3Schema } from './v3.js';
export { buildOpenAPIV3, buildOpenAPIV3Service, openAPIHash, toV3Schema, v3DocumentKey } from './v3.js';
export { GNOSTIC_V2_CONTENT_TYPE, GNOSTIC_V2_CONTENT_TYPE_ALT, encodeGnosticV2, gnosticDocumentType } from './gnostic.js';
export type { OpenAPIV2Part, OpenAPIV2Service } from './serve.js';
export { buildOpenAPIV2Service, negotiateOpenAPIV2, negotiateOpenAPIV3 } from './serve.js';
