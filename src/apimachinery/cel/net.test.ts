// Addresses from the documentation ranges (RFC 5737, RFC 3849) and loopback.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { assertCelFails as fails, celEvaluate as evaluate } from '../../../test/support/cel.js';

describe('the ip library', () => {
  it('parses as netip does, and prints canonical forms', () => {
    assert.equal(evaluate("ip('192.0.2.1').family()"), 4n);
    assert.equal(evaluate("ip('2001:db8::1').family()"), 6n);
    assert.equal(evaluate("string(ip('2001:0DB8:0:0:1:0:0:1'))"), '2001:db8::1:0:0:1');
    assert.equal(evaluate("string(ip('2001:db8:0:0:0:0:2:1'))"), '2001:db8::2:1');
    assert.equal(evaluate("string(ip('::'))"), '::');
    assert.equal(evaluate("ip.isCanonical('2001:db8::1')"), true);
    assert.equal(evaluate("ip.isCanonical('2001:DB8::1')"), false);
    assert.equal(evaluate("ip('192.0.2.1') == ip('192.0.2.1')"), true);
    assert.equal(evaluate("isIP('192.0.2.256')"), false);
    assert.equal(evaluate("isIP('fe80::1%eth0')"), false);
  });

  it("refuses what upstream refuses, with upstream's messages", () => {
    fails("ip('192.0.2.256')", 'IP Address "192.0.2.256" parse error during conversion from string: ParseAddr("192.0.2.256"): IPv4 field has value >255');
    fails(
      "ip('192.0.02.1')",
      'IP Address "192.0.02.1" parse error during conversion from string: ParseAddr("192.0.02.1"): IPv4 field has octet with leading zero',
    );
    fails("ip('192.0.2')", 'IP Address "192.0.2" parse error during conversion from string: ParseAddr("192.0.2"): IPv4 address too short');
    fails("ip('nope')", 'IP Address "nope" parse error during conversion from string: ParseAddr("nope"): unable to parse IP');
    // IPv6 as netip.parseIPv6 reads it, with the rest of the text where it stopped.
    const bad = (s: string, why: string): void => fails(`ip('${s}')`, `IP Address "${s}" parse error during conversion from string: ParseAddr("${s}"): ${why}`);
    bad('2001:db8::g', 'each colon-separated field must have at least one digit (at "g")');
    bad('1::2::3', 'multiple :: in address (at ":3")');
    bad('12345::1', 'IPv6 field has value >=2^16 (at "12345::1")');
    bad('1:2:3:4:5:6:7', 'address string too short');
    bad('1:2:3:4:5:6:7:8:9', 'trailing garbage after address (at "9")');
    bad('1:2:3:4::5:6:7:8', 'the :: must expand to at least one field of zeros');
    bad('2001:db8:', 'colon must be followed by more characters (at ":")');
    bad('2001:db8:192.0.2.1', 'embedded IPv4 address must replace the final 2 fields of the address (at "192.0.2.1")');
    bad('::192.0.2', 'ParseAddr("192.0.2"): IPv4 address too short (at "192.0.2")');
    bad('fe80::1%', 'zone must be a non-empty string');
    bad('%eth0', 'missing IPv6 address');
    bad('192.0..2', 'IPv4 field must have at least one digit (at ".2")');
    bad('192.0.2.x', 'unexpected character (at "x")');
    bad('300.1', 'IPv4 field has value >255');
    assert.equal(evaluate("string(ip('2001:db8::192.0.2.1'))"), '2001:db8::c000:201');
    assert.equal(evaluate("string(ip('1:0:0:0:0:0:0:8'))"), '1::8');
    fails("ip('fe80::1%eth0')", 'IP address "fe80::1%eth0" with zone value is not allowed');
    fails("ip('::ffff:192.0.2.1')", 'IPv4-mapped IPv6 address "::ffff:192.0.2.1" is not allowed');
  });

  it('classifies addresses as netip does', () => {
    assert.equal(evaluate("ip('127.0.0.1').isLoopback()"), true);
    assert.equal(evaluate("ip('::1').isLoopback()"), true);
    assert.equal(evaluate("ip('0.0.0.0').isUnspecified()"), true);
    assert.equal(evaluate("ip('224.0.0.1').isLinkLocalMulticast()"), true);
    assert.equal(evaluate("ip('ff02::1').isLinkLocalMulticast()"), true);
    assert.equal(evaluate("ip('169.254.1.1').isLinkLocalUnicast()"), true);
    assert.equal(evaluate("ip('fe80::1').isLinkLocalUnicast()"), true);
    assert.equal(evaluate("ip('192.0.2.1').isGlobalUnicast()"), true);
    assert.equal(evaluate("ip('255.255.255.255').isGlobalUnicast()"), false);
    assert.equal(evaluate("ip('ff05::1').isGlobalUnicast()"), false);
  });
});

describe('the cidr library', () => {
  it('contains addresses and prefixes; masks; prints', () => {
    assert.equal(evaluate("cidr('192.0.2.0/24').containsIP(ip('192.0.2.77'))"), true);
    assert.equal(evaluate("cidr('192.0.2.0/24').containsIP('198.51.100.1')"), false);
    assert.equal(evaluate("cidr('2001:db8::/32').containsIP('192.0.2.1')"), false);
    assert.equal(evaluate("cidr('192.0.2.0/24').containsCIDR(cidr('192.0.2.128/25'))"), true);
    assert.equal(evaluate("cidr('192.0.2.128/25').containsCIDR('192.0.2.0/24')"), false);
    assert.equal(evaluate("cidr('192.0.2.77/24').ip() == ip('192.0.2.77')"), true);
    assert.equal(evaluate("string(cidr('192.0.2.77/24').masked())"), '192.0.2.0/24');
    assert.equal(evaluate("string(cidr('2001:db8::1/32').masked())"), '2001:db8::/32');
    assert.equal(evaluate("cidr('2001:db8::/32').prefixLength()"), 32n);
    assert.equal(evaluate("cidr('192.0.2.0/24') == cidr('192.0.2.0/24')"), true);
    assert.equal(evaluate("isCIDR('192.0.2.0/33')"), false);
  });

  it("refuses what upstream refuses, with upstream's messages", () => {
    // Upstream wraps a parse error twice (parseCIDR, then stringToCIDR).
    const pre = 'network address parse error during conversion from string: '.repeat(2);
    fails("cidr('192.0.2.0')", `${pre}netip.ParsePrefix("192.0.2.0"): no '/'`);
    fails("cidr('192.0.2.0/33')", `${pre}netip.ParsePrefix("192.0.2.0/33"): prefix length out of range`);
    fails("cidr('192.0.2.0/x')", `${pre}netip.ParsePrefix("192.0.2.0/x"): bad bits after slash: "x"`);
    fails(
      "cidr('::ffff:192.0.2.0/120')",
      'network address parse error during conversion from string: IPv4-mapped IPv6 address "::ffff:192.0.2.0/120" is not allowed',
    );
  });
});
