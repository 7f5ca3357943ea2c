// `--emulated-version` (KEP-4330, component-base/compatibility): a component may emulate up to three
// minor versions before its own; `kube=1.31` or `1.31` names kplane's own component.
import { Version } from './version.js';

/** The checks of the compatibility registry: emulation within [binary−3, binary], never before 1.30. */
export function validateEmulationVersion(binary: Version, emulation: Version): string | undefined {
  const max = binary.majorMinorOnly();
  let min = binary.subtractMinor(3);
  if (min.lessThan(Version.majorMinor(1, 30))) min = Version.majorMinor(1, 30);
  if (emulation.greaterThan(max) || emulation.lessThan(min))
    return `emulation version ${emulation.toString()} is not between [${min.toString()}, ${max.toString()}]`;
  return undefined;
}

/**
 * Parses `--emulated-version`: `1.31`, `kube=1.31`, or a list of `component=version` of which only
 * `component` concerns this binary (others are refused, as upstream refuses unknown components).
 */
export function parseEmulatedVersionFlag(value: string, component = 'kube'): Version | { error: string } {
  let found: Version | undefined;
  for (const item of value.split(',')) {
    const text = item.trim();
    if (text === '') continue;
    const eq = text.indexOf('=');
    const name = eq < 0 ? component : text.slice(0, eq).trim();
    const ver = eq < 0 ? text : text.slice(eq + 1).trim();
    if (name !== component) return { error: `component not registered: ${name}` };
    try {
      found = Version.parse(ver);
    } catch (e) {
      return { error: (e as Error).message };
    }
  }
  if (!found) return { error: `no version given for ${component}` };
  return found;
}
