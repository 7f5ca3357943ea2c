// JUnit XML as ginkgo v2's reporter writes it (onsi/ginkgo reporters/junit_report.go), so a
// provider's CI publishes the kit's results as it publishes k/k e2e results, and TestGrid-style
// tools compare them by the upstream test names: one <testsuite>, one <testcase> per half,
// named "[It] <upstream text> [<id>] [<half>]", <skipped message="skipped - why"/> and
// <failure message=... type="failed"/>.
import type { CcmTestCase, TestResult } from './types.js';

export interface JUnitOptions {
  /** testsuite name and testcase classname (ginkgo: the suite description). */
  readonly suiteName?: string;
  /** When the run started (the testsuite's timestamp). */
  readonly startedAt: Date;
  /** The whole run's wall time. */
  readonly durationMs: number;
  /** For the upstream names; a result whose test is not here is named by its id alone. */
  readonly tests?: readonly CcmTestCase[];
  /** Written as ginkgo writes its SuiteConfig: focus and skip strings. */
  readonly focus?: readonly string[];
  readonly skip?: readonly string[];
}

const escapeAttr = (s: string): string =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/\n/g, '&#xA;').replace(/\t/g, '&#x9;');
const escapeText = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
// XML 1.0 has no place for most control characters; a failure message may carry some.
// biome-ignore lint/suspicious/noControlCharactersInRegex: the point is to remove them
const xmlSafe = (s: string): string => s.replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/g, '\uFFFD');
const seconds = (ms: number): string => String(ms / 1000);

/** The testcase name of a result: what ginkgo writes for `It(upstream)`, with the kit's id and half. */
export function junitName(r: Pick<TestResult, 'id' | 'half'>, test?: CcmTestCase): string {
  return `[It] ${test ? `${test.upstream} ` : ''}[${r.id}] [${r.half}]`;
}

export function junitReport(results: readonly TestResult[], opts: JUnitOptions): string {
  const suite = opts.suiteName ?? 'kplane ccm-test';
  const byId = new Map((opts.tests ?? []).map((t) => [t.id, t]));
  const failures = results.filter((r) => r.outcome === 'failed').length;
  const skipped = results.filter((r) => r.outcome === 'skipped').length;
  const time = seconds(opts.durationMs);
  // ginkgo's format: local time without a zone, to the second.
  const timestamp = opts.startedAt.toISOString().slice(0, 19);
  const props: [string, string][] = [
    ['SuiteSucceeded', String(failures === 0)],
    ['FocusStrings', (opts.focus ?? []).join(',')],
    ['SkipStrings', (opts.skip ?? []).join(',')],
  ];
  const out: string[] = ['<?xml version="1.0" encoding="UTF-8"?>'];
  out.push(`<testsuites tests="${results.length}" disabled="${skipped}" errors="0" failures="${failures}" time="${time}">`);
  out.push(
    `  <testsuite name="${escapeAttr(suite)}" package="kplane/ccm-testing" tests="${results.length}" disabled="0" skipped="${skipped}" errors="0" failures="${failures}" time="${time}" timestamp="${timestamp}">`,
  );
  out.push('    <properties>');
  for (const [name, value] of props) out.push(`      <property name="${name}" value="${escapeAttr(xmlSafe(value))}"></property>`);
  out.push('    </properties>');
  for (const r of results) {
    const name = escapeAttr(xmlSafe(junitName(r, byId.get(r.id))));
    const head = `    <testcase name="${name}" classname="${escapeAttr(suite)}" status="${r.outcome}" time="${seconds(r.durationMs)}">`;
    if (r.outcome === 'passed') {
      out.push(`${head}</testcase>`);
      continue;
    }
    out.push(head);
    if (r.outcome === 'skipped') out.push(`      <skipped message="${escapeAttr(xmlSafe(`skipped${r.message ? ` - ${r.message}` : ''}`))}"></skipped>`);
    else {
      const msg = xmlSafe(r.message ?? 'failed');
      const source = byId.get(r.id)?.source;
      out.push(`      <failure message="${escapeAttr(msg)}" type="failed">${escapeText(`${msg}${source ? `\nupstream: ${source}` : ''}`)}</failure>`);
    }
    out.push('    </testcase>');
  }
  out.push('  </testsuite>');
  out.push('</testsuites>');
  return `${out.join('\n')}\n`;
}
