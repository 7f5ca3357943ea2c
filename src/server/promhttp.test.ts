import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { negotiateMetricsEncoding, parseAcceptSpecs } from './promhttp.js';

describe('promhttp content-encoding negotiation', () => {
  // Expected answers were produced by client_golang's vendored gddo NegotiateContentEncoding with
  // promhttp's offers (identity, gzip), run on the same headers.
  const cases: [string[], 'gzip' | 'identity'][] = [
    [[], 'identity'],
    [['gzip'], 'gzip'],
    [['gzip, deflate, br'], 'gzip'],
    [['br, gzip'], 'gzip'],
    [['GZIP'], 'identity'], // compared exactly
    [['x-gzip'], 'identity'],
    [['*'], 'identity'], // identity is offered first and ties keep it
    [['gzip;q=0.5, identity;q=0.4'], 'gzip'],
    [['gzip;q=0.5, identity;q=0.5'], 'identity'],
    [['gzip;q=0.5, *;q=0.6'], 'identity'],
    [['identity;q=0, gzip;q=0.1'], 'gzip'],
    [['gzip;q=0'], 'identity'], // nothing acceptable: promhttp writes identity
    [['identity;q=0'], 'identity'],
    [['gzip ; q=1'], 'gzip'],
    [['gzip;level=1'], 'identity'], // a parameter other than q ends the header's parsing
    [['deflate;level=1, gzip'], 'identity'],
    [['gzip;q=2'], 'identity'], // no quality: the spec is dropped
    [['gzip;q=1.5'], 'gzip'],
    [['deflate', 'gzip'], 'gzip'], // every Accept-Encoding header counts
    [['br', 'identity;q=0.9', 'gzip;q=0.95'], 'gzip'],
    [[',gzip'], 'identity'],
  ];
  for (const [headers, want] of cases) {
    it(`${JSON.stringify(headers)} → ${want}`, () => assert.equal(negotiateMetricsEncoding(headers), want));
  }

  it('parses q values as header.expectQuality does', () => {
    assert.deepEqual(parseAcceptSpecs(['a;q=0.125, b;q=1.000, c;q=0., d;q=.5, e']), [
      { value: 'a', q: 0.125 },
      { value: 'b', q: 1 },
      { value: 'c', q: 0 },
    ]);
    assert.deepEqual(parseAcceptSpecs(['text/plain;q=0.5']), [{ value: 'text/plain', q: 0.5 }]);
  });
});
