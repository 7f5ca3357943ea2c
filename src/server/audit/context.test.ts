import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseRequestInfo } from '../requestinfo.js';
import type { Request } from '../request-scope.js';
import type { AuditRuntime } from './context.js';
import { AuditContext } from './context.js';

describe('AuditContext', () => {
  it('records a patch as sent, integers beyond 2^53 exactly', () => {
    const req = { url: '/apis/example.com/v1/namespaces/d/widgets/w', headers: {}, socket: { remoteAddress: '127.0.0.1' } } as unknown as Request;
    const info = parseRequestInfo('PATCH', '/apis/example.com/v1/namespaces/d/widgets/w', new URLSearchParams());
    const ctx = new AuditContext({ level: 'Request', omitStages: [], omitManagedFields: false }, {} as AuditRuntime, req, 'id', 0, info, undefined);
    ctx.requestPatch(Buffer.from('{"spec": {"bytes": 9223372036854775807}}'));
    assert.equal(ctx.event.requestObject, '{"spec":{"bytes":9223372036854775807}}');
  });
});
