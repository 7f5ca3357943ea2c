// WithAuditInit and WithCacheControl: every answer carries an audit ID (the client's when it sent
// one) and is private unless a handler says otherwise. Both run before anything can fail, so even
// a request refused for its path carries them; the timeout answer keeps exactly these two.
import { randomUUID } from 'node:crypto';
import { header, type Filter } from '../request-scope.js';

export const withAuditInit: Filter = (next) => (s) => {
  s.res.setHeader('Audit-Id', header(s.req, 'audit-id') || randomUUID());
  s.res.setHeader('Cache-Control', 'no-cache, private');
  return next(s);
};
