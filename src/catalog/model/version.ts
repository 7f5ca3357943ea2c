// The version questions the model asks, answered by the shared blang/semver implementation
// (../semver.ts), plus opm's release identifiers (alpha/model/versionrelease.go).
import { goQuote } from '../../golang/strconv.js';
import { newPRVersion, parse, parseRange as semverParseRange, type Range, type Version } from '../../golang/semver.js';

export function parseVersion(s: string): Version {
  return parse(s);
}

export function parseRange(s: string): Range {
  return semverParseRange(s);
}

/** Whether a bundle version (already known to parse) carries build metadata. */
export function versionHasBuild(s: string): boolean {
  try {
    return parse(s).build.length > 0;
  } catch {
    return false;
  }
}

const RELEASE_MAX_LENGTH = 20;

/**
 * opm's NewRelease: dot-separated pre-release identifiers, at most 20 characters (the CSV CRD's
 * limit). Every bad segment is reported, one per line, as Go's errors.Join prints them.
 */
export function parseRelease(s: string): string[] {
  if (s === '') return [];
  if (Buffer.byteLength(s) > RELEASE_MAX_LENGTH) {
    throw new Error(`invalid release ${goQuote(s)}: exceeds maximum length of ${RELEASE_MAX_LENGTH} characters`);
  }
  const errs: string[] = [];
  const segments = s.split('.');
  segments.forEach((seg, i) => {
    try {
      newPRVersion(seg);
    } catch (err) {
      errs.push(`segment ${i}: ${(err as Error).message}`);
    }
  });
  if (errs.length > 0) throw new Error(`invalid release ${goQuote(s)}: ${errs.join('\n')}`);
  return segments;
}
