import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { assertCelFails as fails, celEvaluate as evaluate } from '../../../test/support/cel.js';

describe('the semver library', () => {
  it('parses, normalizes and reads versions', () => {
    assert.equal(evaluate("semver('1.2.3').major()"), 1n);
    assert.equal(evaluate("semver('1.2.3').minor()"), 2n);
    assert.equal(evaluate("semver('1.2.3-alpha.1+build.5').patch()"), 3n);
    assert.equal(evaluate("semver('v1.2', true) == semver('1.2.0')"), true);
    assert.equal(evaluate("semver('01.01.01', true) == semver('1.1.1')"), true);
    assert.equal(evaluate("isSemver('1.0.0')"), true);
    assert.equal(evaluate("isSemver('v1.0')"), false);
    assert.equal(evaluate("isSemver('v1.0', true)"), true);
    assert.equal(evaluate("isSemver('hello')"), false);
  });

  it('orders as semver 2.0 does: prereleases first, numeric parts before alphanumeric ones, build metadata ignored', () => {
    assert.equal(evaluate("semver('1.2.3').compareTo(semver('1.2.3'))"), 0n);
    assert.equal(evaluate("semver('1.2.3').compareTo(semver('2.0.0'))"), -1n);
    assert.equal(evaluate("semver('1.2.3').compareTo(semver('0.1.2'))"), 1n);
    assert.equal(evaluate("semver('1.0.0-alpha').isLessThan(semver('1.0.0'))"), true);
    assert.equal(evaluate("semver('1.0.0-alpha.1').isLessThan(semver('1.0.0-alpha.beta'))"), true);
    assert.equal(evaluate("semver('1.0.0-alpha').isLessThan(semver('1.0.0-alpha.1'))"), true);
    assert.equal(evaluate("semver('1.0.0-rc.10').isGreaterThan(semver('1.0.0-rc.9'))"), true);
    assert.equal(evaluate("semver('1.0.0+a') == semver('1.0.0+b')"), true);
  });

  it('refuses what blang/semver refuses, with its messages', () => {
    fails("semver('200K')", 'No Major.Minor.Patch elements found');
    fails("semver('01.2.3')", 'Major number must not contain leading zeroes "01"');
    fails("semver('1.x.3')", 'Invalid character(s) found in minor number "x"');
    fails("semver('1.2.3-')", 'Prerelease is empty');
    fails("semver('1.2.3-01')", 'Numeric PreRelease version must not contain leading zeroes "01"');
    fails("semver('1.2-rc', true)", 'short version cannot contain PreRelease/Build meta data');
    fails("semver('')", 'Version string empty');
  });
});
