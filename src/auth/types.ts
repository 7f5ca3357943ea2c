// The bearer-token authenticator contract (k8s.io/apiserver/pkg/authentication/authenticator.Token):
// the request's `Authorization: Bearer <token>` is offered to each token authenticator in turn
// (static tokens, bootstrap tokens, ServiceAccount JWTs, JWT/OIDC authenticators, as upstream's
// union orders them). The first `user` wins; `none` means "not my kind of token, ask the next";
// `rejected` means the token was this authenticator's and is bad (expired, wrong signature, wrong
// audience, deleted ServiceAccount): the request is a 401 unless another authenticator claims it,
// and never falls back to anonymous.
import type { UserInfo } from '../admission/index.js';

export type { UserInfo };

export type TokenOutcome =
  | { readonly kind: 'user'; readonly user: UserInfo; readonly audiences?: readonly string[] }
  | { readonly kind: 'none' }
  | { readonly kind: 'rejected'; readonly reason: string };

export interface TokenAuthenticator {
  /** Names the authenticator in metrics (`apiserver_authentication_*`) and logs. */
  readonly name: string;
  /**
   * `audiences`: the audiences the caller accepts (a TokenReview's `spec.audiences`); absent, the
   * API server's own (`--api-audiences`). A token valid for none of them is `rejected`; a `user`
   * outcome names in `audiences` those of the accepted ones the token is for (upstream's
   * authenticator.Response.Audiences).
   */
  authenticateToken(token: string, audiences?: readonly string[]): TokenOutcome | Promise<TokenOutcome>;
}
