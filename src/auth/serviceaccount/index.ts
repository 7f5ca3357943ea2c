// ServiceAccount tokens: keys, signing, the authenticator and the OIDC discovery documents.
export * from './keys.js';
export * from './token.js';
export * from './authenticator.js';
export * from './openid.js';
