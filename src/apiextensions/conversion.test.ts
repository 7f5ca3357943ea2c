// The conversion webhook's checks of an answer (webhook_converter.go), against a loopback HTTPS
// webhook whose answer each case sets.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { StatusError } from '../apimachinery/errors.js';
import type { KubeObject } from '../apimachinery/types.js';
import { createCertificateAuthority, issueCertificate } from '../server/certs.js';
import { parseServiceAddress, serviceResolver } from '../admission/webhook/service-resolver.js';
import { ConversionWebhook } from './conversion.js';

type Answer = (review: { apiVersion: string; request: { uid: string; desiredAPIVersion: string; objects: KubeObject[] } }) => unknown;

describe('ConversionWebhook', () => {
  const ca = createCertificateAuthority({ commonName: 'conv-unit-ca' });
  let server: Server;
  let url = '';
  let answer: Answer = () => ({});
  let calls = 0;

  before(async () => {
    const cert = issueCertificate(ca, { commonName: 'conv', hosts: ['127.0.0.1', 'conv.ns.svc'], usage: 'server' });
    server = createServer({ cert: cert.certPem, key: cert.keyPem }, (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        calls++;
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify(answer(JSON.parse(Buffer.concat(chunks).toString('utf8')) as Parameters<Answer>[0])));
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `https://127.0.0.1:${(server.address() as AddressInfo).port}/convert`;
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  const webhook = (reviewVersions: string[]): ConversionWebhook =>
    new ConversionWebhook({
      metadata: { name: 'things.example.com' },
      spec: {
        conversion: {
          strategy: 'Webhook',
          webhook: { conversionReviewVersions: reviewVersions, clientConfig: { url, caBundle: Buffer.from(ca.certPem).toString('base64') } },
        },
      },
    });

  const thing = (name: string, extra: Record<string, unknown> = {}): KubeObject => ({
    apiVersion: 'example.com/v1',
    kind: 'Thing',
    metadata: { name, namespace: 'ns', uid: `uid-${name}`, generation: 3, labels: { a: '1' } },
    ...extra,
  });

  /** Converts every object to the desired version, with `edit` applied to each. */
  const converting =
    (edit: (o: KubeObject, i: number) => KubeObject = (o) => o, uid?: string): Answer =>
    (review) => ({
      apiVersion: review.apiVersion,
      kind: 'ConversionReview',
      response: {
        uid: uid ?? review.request.uid,
        result: { status: 'Success' },
        convertedObjects: review.request.objects.map((o, i) => edit({ ...o, apiVersion: review.request.desiredAPIVersion }, i)),
      },
    });

  const rejects = async (p: Promise<unknown>, message: string | RegExp): Promise<void> => {
    await assert.rejects(p, (e: unknown) => {
      assert.ok(e instanceof StatusError);
      assert.equal(e.status.code, 500);
      assert.equal(e.status.reason, undefined);
      if (typeof message === 'string') assert.equal(e.status.message, message);
      else assert.match(e.status.message ?? '', message);
      return true;
    });
  };

  it('keeps the answer’s labels and annotations and restores the rest of metadata', async () => {
    answer = converting((o) => ({ ...o, metadata: { ...o.metadata, generation: 99, labels: { b: '2' }, annotations: { n: 'x' } }, spec: { v: 2 } }));
    const [out] = await webhook(['v1']).convert([thing('a')], 'example.com/v2');
    assert.deepEqual(out, {
      apiVersion: 'example.com/v2',
      kind: 'Thing',
      metadata: { name: 'a', namespace: 'ns', uid: 'uid-a', generation: 3, labels: { b: '2' }, annotations: { n: 'x' } },
      spec: { v: 2 },
    });
  });

  it('sends nothing for objects already in the desired version', async () => {
    const before = calls;
    const objs = [thing('a', { apiVersion: 'example.com/v2' })];
    assert.deepEqual(await webhook(['v1']).convert(objs, 'example.com/v2'), objs);
    assert.equal(calls, before);
  });

  it('v1beta1 reviews are not checked for the uid; v1 reviews are', async () => {
    answer = converting(undefined, 'other');
    const [out] = await webhook(['v9', 'v1beta1']).convert([thing('a')], 'example.com/v2');
    assert.equal(out!.apiVersion, 'example.com/v2');
    await rejects(
      webhook(['v1']).convert([thing('a')], 'example.com/v2'),
      /^conversion webhook for example\.com\/v1, Kind=Thing failed: expected response\.uid="[^"]+", got "other"$/,
    );
  });

  it('a Failure result without a message', async () => {
    answer = (review) => ({ apiVersion: review.apiVersion, kind: 'ConversionReview', response: { uid: review.request.uid, result: { status: 'Failure' } } });
    await rejects(
      webhook(['v1']).convert([thing('a')], 'example.com/v2'),
      "conversion webhook for example.com/v1, Kind=Thing failed: response.result.status was 'Failure', not 'Success'",
    );
  });

  it('a wrong kind, a wrong apiVersion, an invalid label, a renamed list item', async () => {
    const w = webhook(['v1']);
    answer = converting((o) => ({ ...o, kind: 'Other' }));
    await rejects(
      w.convert([thing('a')], 'example.com/v2'),
      'conversion webhook for example.com/v1, Kind=Thing returned invalid object at index 0: invalid kind (expected Thing, received Other)',
    );
    answer = converting((o) => ({ ...o, apiVersion: 'example.com/v3' }));
    await rejects(
      w.convert([thing('a'), thing('b')], 'example.com/v2'),
      'conversion webhook for example.com/v1, Kind=Thing returned invalid converted object at index 1: invalid groupVersion (expected example.com/v2, received example.com/v3)',
    );
    answer = converting((o) => ({ ...o, metadata: { ...o.metadata, labels: { a: 'not a valid value!' } } }));
    await rejects(
      w.convert([thing('a')], 'example.com/v2'),
      /^conversion webhook for example\.com\/v1, Kind=Thing returned invalid metadata: metadata\.labels: Invalid value: "not a valid value!"/,
    );
    answer = converting((o, i) => (i === 1 ? { ...o, metadata: { ...o.metadata, name: 'renamed' } } : o));
    await rejects(
      w.convert([thing('a'), thing('b')], 'example.com/v2'),
      'conversion webhook for example.com/v1, Kind=Thing returned invalid converted object at index 2: must have the same name: b != renamed',
    );
  });

  it('a URL that refuses connections', async () => {
    const down = new ConversionWebhook({
      metadata: { name: 'x' },
      spec: { conversion: { strategy: 'Webhook', webhook: { conversionReviewVersions: ['v1'], clientConfig: { url: 'https://127.0.0.1:1/c' } } } },
    });
    await rejects(
      down.convert([thing('a')], 'example.com/v2'),
      'conversion webhook for example.com/v1, Kind=Thing failed: Post "https://127.0.0.1:1/c?timeout=30s": dial tcp 127.0.0.1:1: connect: connection refused',
    );
    down.release();
  });

  it('a service reference, resolved at each call and verified for <name>.<namespace>.svc', async () => {
    const port = Number(new URL(url).port);
    const bySvc = (name: string): ConversionWebhook =>
      new ConversionWebhook(
        {
          metadata: { name: 'things.example.com' },
          spec: {
            conversion: {
              strategy: 'Webhook',
              webhook: {
                conversionReviewVersions: ['v1'],
                clientConfig: { service: { namespace: 'ns', name, port: 8443, path: '/convert' }, caBundle: Buffer.from(ca.certPem).toString('base64') },
              },
            },
          },
        },
        undefined,
        serviceResolver([parseServiceAddress(`ns/conv:8443=127.0.0.1:${port}`), parseServiceAddress(`ns/other:8443=127.0.0.1:${port}`)], undefined),
      );
    answer = converting();
    const w = bySvc('conv');
    const [out] = await w.convert([thing('a')], 'example.com/v2');
    assert.equal(out?.apiVersion, 'example.com/v2');
    w.release();
    const wrongName = bySvc('other');
    await rejects(
      wrongName.convert([thing('a')], 'example.com/v2'),
      'conversion webhook for example.com/v1, Kind=Thing failed: Post "https://other.ns.svc:8443/convert?timeout=30s": tls: failed to verify certificate: x509: certificate is valid for other names, not other.ns.svc',
    );
    wrongName.release();
    const missing = bySvc('missing');
    await rejects(
      missing.convert([thing('a')], 'example.com/v2'),
      'conversion webhook for example.com/v1, Kind=Thing failed: Post "https://missing.ns.svc:8443/convert?timeout=30s": service "missing" not found',
    );
    missing.release();
  });
});
