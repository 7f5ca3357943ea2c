// node --import tsx bench/plot.ts <figure-id> [--out docs/img/<name>.svg] [--since YYYY-MM-DD] [--results DIR]
// node --import tsx bench/plot.ts --list
//
// Draws one figure's history (bench/figures.ts) from the results files in bench/results/ as an SVG
// line chart: runs in date order along x, the figure on y, the goal as a dashed line, each point
// labelled with its commit. Plain SVG, no dependency; it reads in a browser and in GitHub's markdown.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { FIGURES, figureById, seriesOf, type Figure, type Point } from './figures.js';
import { RESULTS_SCHEMA, type BenchResults } from './results.js';
import { exitWithUsage } from './usage.js';

const resultsDir = fileURLToPath(new URL('./results/', import.meta.url));

export function readResults(dir: string): BenchResults[] {
  return (
    readdirSync(dir)
      .filter((f) => f.endsWith('.json'))
      .sort()
      .map((f) => JSON.parse(readFileSync(join(dir, f), 'utf8')) as BenchResults | { schema?: string })
      // bench:compare's files (compare-*.json) sit beside the runs but are not runs.
      .filter((r): r is BenchResults => r.schema === RESULTS_SCHEMA)
  );
}

const esc = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** About five round steps from 0 (or below the lowest value) to above the highest. */
function ticks(lo: number, hi: number): number[] {
  const span = hi - lo || Math.abs(hi) || 1;
  const raw = span / 5;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * mag).find((s) => s >= raw)!;
  const out: number[] = [];
  for (let v = Math.floor(lo / step) * step; v <= hi + step * 1e-9; v += step) out.push(Number(v.toPrecision(12)));
  if (out[out.length - 1]! < hi) out.push(Number((out[out.length - 1]! + step).toPrecision(12)));
  return out;
}

/** A value as labels show it: 0 decimals from 100, 1 from 10, else 2; trailing zeros after the point dropped. */
export function num(v: number): string {
  const t = Math.abs(v) >= 100 ? v.toFixed(0) : Math.abs(v) >= 10 ? v.toFixed(1) : v.toFixed(2);
  return t.includes('.') ? t.replace(/\.?0+$/, '') : t;
}

/** The chart as an SVG document. */
export function renderSvg(figure: Figure, points: readonly Point[]): string {
  const W = 860;
  const H = 420;
  const m = { left: 100, right: 24, top: 56, bottom: 112 };
  const pw = W - m.left - m.right;
  const ph = H - m.top - m.bottom;
  const values = points.map((p) => p.value);
  const goal = figure.goal?.value;
  const hiData = Math.max(...values, goal ?? -Infinity);
  const loData = Math.min(0, ...values);
  const yt = ticks(loData, hiData * 1.08);
  const y0 = yt[0]!;
  const y1 = yt[yt.length - 1]!;
  const y = (v: number): number => m.top + ph - ((v - y0) / (y1 - y0)) * ph;
  const step = points.length > 1 ? pw / (points.length - 1) : 0;
  const x = (i: number): number => m.left + (points.length > 1 ? i * step : pw / 2);
  const out: string[] = [];
  out.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="Helvetica, Arial, sans-serif" font-size="12">`,
  );
  out.push(`<rect width="${W}" height="${H}" fill="#ffffff"/>`);
  out.push(`<text x="${m.left}" y="22" font-size="15" font-weight="bold" fill="#222">${esc(figure.title)}</text>`);
  out.push(
    `<text x="${m.left}" y="40" font-size="11" fill="#666">${esc(`${points.length} runs from ${points[0]?.date.slice(0, 10) ?? '-'}, in date order (evenly spaced), quick runs left out; points labelled by commit; bench/results/*.json`)}</text>`,
  );
  // Grid and y axis.
  for (const t of yt) {
    out.push(`<line x1="${m.left}" y1="${y(t).toFixed(1)}" x2="${W - m.right}" y2="${y(t).toFixed(1)}" stroke="#e6e6e6"/>`);
    out.push(`<text x="${m.left - 8}" y="${(y(t) + 4).toFixed(1)}" text-anchor="end" fill="#444">${esc(num(t))}</text>`);
  }
  out.push(`<line x1="${m.left}" y1="${m.top}" x2="${m.left}" y2="${m.top + ph}" stroke="#444"/>`);
  out.push(`<line x1="${m.left}" y1="${m.top + ph}" x2="${W - m.right}" y2="${m.top + ph}" stroke="#444"/>`);
  out.push(`<text transform="translate(18 ${m.top + ph / 2}) rotate(-90)" text-anchor="middle" fill="#222">${esc(figure.unit)}</text>`);
  out.push(`<text x="${m.left + pw / 2}" y="${H - 8}" text-anchor="middle" fill="#222">run (UTC date and time of its start)</text>`);
  // Goal line.
  if (figure.goal) {
    const gy = y(figure.goal.value).toFixed(1);
    out.push(`<line x1="${m.left}" y1="${gy}" x2="${W - m.right}" y2="${gy}" stroke="#c0392b" stroke-width="1.5" stroke-dasharray="6 4"/>`);
    out.push(`<text x="${W - m.right - 4}" y="${(Number(gy) - 6).toFixed(1)}" text-anchor="end" fill="#c0392b">${esc(figure.goal.label)}</text>`);
  }
  // The line, the points and their labels.
  if (points.length > 1)
    out.push(
      `<polyline fill="none" stroke="#2c6fbb" stroke-width="2" points="${points.map((p, i) => `${x(i).toFixed(1)},${y(p.value).toFixed(1)}`).join(' ')}"/>`,
    );
  points.forEach((p, i) => {
    const px = x(i).toFixed(1);
    const py = y(p.value).toFixed(1);
    const met = figure.goal ? (figure.goal.meets === 'above' ? p.value >= figure.goal.value : p.value <= figure.goal.value) : true;
    const when = `${p.date.slice(5, 10)} ${p.date.slice(11, 16)}`.trim();
    const tip = `${p.date.slice(0, 16).replace('T', ' ')} UTC, ${p.commit ?? 'commit unknown'}: ${num(p.value)} ${figure.unit}${p.source ? ` (${p.source})` : ''}`;
    out.push(
      `<g><title>${esc(tip)}</title><circle cx="${px}" cy="${py}" r="4.5" fill="${met ? '#2c6fbb' : '#ffffff'}" stroke="#2c6fbb" stroke-width="2"/></g>`,
    );
    out.push(`<text x="${px}" y="${(Number(py) - 9).toFixed(1)}" text-anchor="middle" font-size="10" fill="#333">${esc(num(p.value))}</text>`);
    out.push(
      `<text transform="translate(${px} ${m.top + ph + 14}) rotate(-40)" text-anchor="end" font-size="10" fill="#444"><tspan fill="#2c6fbb">${esc(p.commit ?? '?')}</tspan> ${esc(when)}</text>`,
    );
  });
  if (figure.goal) out.push(`<text x="${W - m.right}" y="22" text-anchor="end" font-size="11" fill="#666">filled: goal met; hollow: missed</text>`);
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}

const PLOT_USAGE = 'usage: node --import tsx bench/plot.ts <figure-id> [--out FILE.svg] [--since YYYY-MM-DD] [--results DIR] | --list | --help';

function main(argv: string[]): void {
  let id: string | undefined;
  let outPath: string | undefined;
  let dir = resultsDir;
  let since = '';
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const value = (): string => {
      const v = argv[++i];
      if (v === undefined || v.startsWith('--')) exitWithUsage('plot', PLOT_USAGE, `${a} needs a value`);
      return v;
    };
    if (a === '--out') outPath = value();
    else if (a === '--results') dir = value();
    else if (a === '--since') since = value();
    else if (a === '--help' || a === '-h') {
      console.log(PLOT_USAGE);
      return;
    } else if (a === '--list') {
      for (const f of FIGURES) console.log(`${f.id.padEnd(24)} ${f.title} (${f.unit})`);
      return;
    } else if (!a.startsWith('-') && id === undefined) id = a;
    else exitWithUsage('plot', PLOT_USAGE, `unknown argument '${a}'`);
  }
  if (!id) exitWithUsage('plot', PLOT_USAGE, 'name a figure (--list shows them)');
  const figure = figureById(id);
  if (!figure) exitWithUsage('plot', PLOT_USAGE, `unknown figure '${id}'; known: ${FIGURES.map((f) => f.id).join(', ')}`);
  const points = seriesOf(figure, readResults(dir)).filter((p) => p.date >= since);
  if (points.length === 0) throw new Error(`no run in ${dir} has ${id}`);
  const svg = renderSvg(figure, points);
  if (outPath) {
    writeFileSync(outPath, svg);
    console.log(`${id}: ${points.length} points → ${outPath}`);
  } else process.stdout.write(svg);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) main(process.argv.slice(2));
