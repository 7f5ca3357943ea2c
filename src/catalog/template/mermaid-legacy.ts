// `render-veneer semver -o mermaid` as opm v1.26.3 drew it (alpha/declcfg/write.go at v1.26.3,
// MermaidWriter without filters): no class definitions, "replace"/"skip"/"skipRange(...)" edge
// labels, entries below 0.0.0 (pre-releases of 0.0.0) left out. Today's drawing is
// declcfg/write.ts's writeMermaid.
import type { DeclarativeConfig } from '../declcfg/types.js';
import { compareGoStrings } from '../../golang/json.js';
import { goQuote } from '../../golang/strconv.js';
import { Version, parseRange } from '../../golang/semver.js';
import { bundleVersion } from './common.js';

const ZERO = new Version(0n, 0n, 0n);

export function writeLegacyMermaid(cfg: DeclarativeConfig, warn: (line: string) => void = (l) => void process.stderr.write(l)): string {
  // getBundleVersions: the first bundle of each name gives its version
  const versions = new Map<string, Version>();
  for (const b of cfg.bundles) if (!versions.has(b.name)) versions.set(b.name, bundleVersion(b).version);
  const v = (name: string): Version => versions.get(name) ?? ZERO;

  const pkgs = new Map<string, string[]>();
  for (const c of [...cfg.channels].sort((a, b) => compareGoStrings(a.name, b.name))) {
    let out = pkgs.get(c.package);
    if (out === undefined) pkgs.set(c.package, (out = []));
    const channelID = `${c.package}-${c.name}`;
    out.push(`    %% channel ${goQuote(c.name)}\n`, `    subgraph ${channelID}[${goQuote(c.name)}]\n`);
    for (const ce of c.entries) {
      if (!v(ce.name).gte(ZERO)) continue;
      const node = `${channelID}-${ce.name}[${goQuote(ce.name)}]`;
      out.push(`      ${node}\n`);
      if (ce.replaces) out.push(`      ${channelID}-${ce.replaces}[${goQuote(ce.replaces)}]-- replace --> ${node}\n`);
      for (const s of ce.skips ?? []) out.push(`      ${channelID}-${s}[${goQuote(s)}]-- skip --> ${node}\n`);
      if (ce.skipRange) {
        let range;
        try {
          range = parseRange(ce.skipRange);
        } catch (err) {
          warn(`warning: ignoring invalid SkipRange for package/edge ${goQuote(c.package)}/${goQuote(ce.name)}: ${(err as Error).message}\n`);
          continue;
        }
        for (const e of c.entries) {
          if (range(v(e.name))) out.push(`      ${channelID}-${e.name}[${goQuote(e.name)}]-- "skipRange(${ce.skipRange})" --> ${node}\n`);
        }
      }
    }
    out.push('    end\n');
  }

  const parts = ['graph LR\n'];
  for (const name of [...pkgs.keys()].sort(compareGoStrings)) {
    parts.push(`  %% package ${goQuote(name)}\n`, `  subgraph ${goQuote(name)}\n`, ...pkgs.get(name)!, '  end\n');
  }
  return parts.join('');
}
