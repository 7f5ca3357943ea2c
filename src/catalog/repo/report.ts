// Test reports of `kplane catalog test`: one suite per layer (sanity, integration,
// interoperability, platform), each case passed, failed, warned (a finding that does not fail the
// run, such as a candidate-channel bundle failing interoperability) or skipped. Written as text for
// people and as JUnit XML for CI.

export type CaseStatus = 'pass' | 'fail' | 'warn' | 'skip';

export interface TestCase {
  readonly name: string;
  readonly status: CaseStatus;
  /** what went wrong or what to know; one finding a line */
  readonly message?: string;
  readonly durationMs: number;
}

export interface TestSuite {
  readonly name: string;
  readonly cases: TestCase[];
  /** start of the suite, ISO 8601 */
  readonly timestamp: string;
}

export interface SuiteCounts {
  tests: number;
  passed: number;
  failed: number;
  warnings: number;
  skipped: number;
  durationMs: number;
}

export function countSuite(s: TestSuite): SuiteCounts {
  const c: SuiteCounts = { tests: s.cases.length, passed: 0, failed: 0, warnings: 0, skipped: 0, durationMs: 0 };
  for (const t of s.cases) {
    c.durationMs += t.durationMs;
    if (t.status === 'pass') c.passed++;
    else if (t.status === 'fail') c.failed++;
    else if (t.status === 'warn') c.warnings++;
    else c.skipped++;
  }
  return c;
}

/** Runs fn as one test case, timing it; a thrown error fails the case with its message. */
export async function runCase(name: string, fn: () => Promise<{ status: CaseStatus; message?: string } | void>): Promise<TestCase> {
  const t0 = performance.now();
  try {
    const r = await fn();
    const durationMs = performance.now() - t0;
    return r ? { name, status: r.status, ...(r.message !== undefined ? { message: r.message } : {}), durationMs } : { name, status: 'pass', durationMs };
  } catch (err) {
    return { name, status: 'fail', message: errorText(err), durationMs: performance.now() - t0 };
  }
}

export function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

const LABEL: Record<CaseStatus, string> = { pass: 'PASS', fail: 'FAIL', warn: 'WARN', skip: 'SKIP' };

export function suiteText(s: TestSuite): string {
  const c = countSuite(s);
  const lines = [`${s.name}: ${c.passed} passed, ${c.failed} failed, ${c.warnings} warnings, ${c.skipped} skipped (${seconds(c.durationMs)}s)`];
  for (const t of s.cases) {
    lines.push(`  ${LABEL[t.status]}  ${t.name}`);
    if (t.message) for (const l of t.message.split('\n')) lines.push(`        ${l}`);
  }
  return lines.join('\n') + '\n';
}

export function junitXML(suites: TestSuite[], name = 'kplane catalog test'): string {
  const all = suites.map(countSuite);
  const sum = (k: keyof SuiteCounts): number => all.reduce((a, c) => a + c[k], 0);
  const out: string[] = ['<?xml version="1.0" encoding="UTF-8"?>'];
  out.push(
    `<testsuites name="${attr(name)}" tests="${sum('tests')}" failures="${sum('failed')}" errors="0" skipped="${sum('skipped')}" time="${seconds(sum('durationMs'))}">`,
  );
  suites.forEach((s, i) => {
    const c = all[i]!;
    out.push(
      `  <testsuite name="${attr(s.name)}" tests="${c.tests}" failures="${c.failed}" errors="0" skipped="${c.skipped}" time="${seconds(c.durationMs)}" timestamp="${attr(s.timestamp)}">`,
    );
    if (c.warnings > 0) out.push(`    <properties>`, `      <property name="warnings" value="${c.warnings}"/>`, `    </properties>`);
    for (const t of s.cases) {
      const open = `    <testcase classname="${attr(s.name)}" name="${attr(t.name)}" time="${seconds(t.durationMs)}"`;
      if (t.status === 'pass' && !t.message) {
        out.push(`${open}/>`);
        continue;
      }
      out.push(`${open}>`);
      const msg = t.message ?? '';
      if (t.status === 'fail') out.push(`      <failure message="${attr(firstLine(msg))}" type="failure">${text(msg)}</failure>`);
      else if (t.status === 'skip') out.push(`      <skipped message="${attr(firstLine(msg))}"/>`);
      else if (t.status === 'warn')
        out.push(
          `      <system-out>${text(
            msg
              .split('\n')
              .map((l) => (/^(warning|error): /.test(l) ? l : `warning: ${l}`))
              .join('\n'),
          )}</system-out>`,
        );
      else out.push(`      <system-out>${text(msg)}</system-out>`);
      out.push(`    </testcase>`);
    }
    out.push(`  </testsuite>`);
  });
  out.push('</testsuites>');
  return out.join('\n') + '\n';
}

function seconds(ms: number): string {
  return (ms / 1000).toFixed(3);
}

function firstLine(s: string): string {
  const i = s.indexOf('\n');
  return i < 0 ? s : s.slice(0, i);
}

// XML 1.0 allows no control characters other than tab, newline and carriage return.
const INVALID_XML = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/g;

function text(s: string): string {
  return s.replace(INVALID_XML, '\uFFFD').replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

function attr(s: string): string {
  return text(s).replace(/"/g, '&quot;').replace(/\n/g, '&#10;');
}
