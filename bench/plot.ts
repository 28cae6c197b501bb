/** A dependency-free SVG line chart of per-turn time against turn number, one line per contestant. */
export interface PlotSeries {
  label: string;
  color: string;
  values: number[];
}

const W = 720;
const H = 360;
const M = { left: 56, right: 16, top: 28, bottom: 44 };

export function lineChartSvg(title: string, series: PlotSeries[], options: { window?: number; yLabel?: string } = {}): string {
  const window = options.window ?? 10;
  // A rolling median per `window` turns: single slow turns (a GC, a continue-as-new) would hide the trend.
  const smoothed = series.map((s) => ({ ...s, values: rollingMedian(s.values, window) }));
  const n = Math.max(...smoothed.map((s) => s.values.length));
  const yMax = niceCeil(Math.max(...smoothed.flatMap((s) => s.values)));
  const x = (i: number) => M.left + (i / Math.max(1, n - 1)) * (W - M.left - M.right);
  const y = (v: number) => H - M.bottom - (v / yMax) * (H - M.top - M.bottom);
  const ticks = [0, 0.25, 0.5, 0.75, 1].map((f) => f * yMax);
  const xTicks = [0, 0.25, 0.5, 0.75, 1].map((f) => Math.round(f * (n - 1)));
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="12">`,
    `<rect width="${W}" height="${H}" fill="white"/>`,
    `<text x="${W / 2}" y="18" text-anchor="middle" font-size="14">${escape(title)}</text>`,
    ...ticks.map((t) => `<line x1="${M.left}" x2="${W - M.right}" y1="${y(t)}" y2="${y(t)}" stroke="#ddd"/><text x="${M.left - 6}" y="${y(t) + 4}" text-anchor="end">${round(t)}</text>`),
    ...xTicks.map((i) => `<text x="${x(i)}" y="${H - M.bottom + 16}" text-anchor="middle">${i + 1}</text>`),
    `<text x="${W / 2}" y="${H - 8}" text-anchor="middle">turn</text>`,
    `<text x="14" y="${H / 2}" text-anchor="middle" transform="rotate(-90 14 ${H / 2})">${escape(options.yLabel ?? 'ms per turn')}</text>`,
    ...smoothed.map((s) => `<polyline fill="none" stroke="${s.color}" stroke-width="2" points="${s.values.map((v, i) => `${x(i).toFixed(1)},${y(v).toFixed(1)}`).join(' ')}"/>`),
    ...smoothed.map(
      (s, k) => `<rect x="${M.left + 10}" y="${M.top + 6 + k * 18}" width="12" height="3" fill="${s.color}"/><text x="${M.left + 28}" y="${M.top + 11 + k * 18}">${escape(s.label)}</text>`,
    ),
    '</svg>',
  ];
  return parts.join('\n') + '\n';
}

function rollingMedian(values: number[], window: number): number[] {
  return values.map((_, i) => {
    const slice = values.slice(Math.max(0, i - window + 1), i + 1).sort((a, b) => a - b);
    return slice[Math.floor(slice.length / 2)]!;
  });
}

function niceCeil(v: number): number {
  if (!(v > 0)) return 1;
  const p = 10 ** Math.floor(Math.log10(v));
  return [1, 2, 2.5, 5, 10].map((m) => m * p).find((c) => c >= v)!;
}

const round = (v: number) => (v >= 10 ? v.toFixed(0) : v.toFixed(1));
const escape = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;');

export interface BarSeries {
  label: string;
  color: string;
  /** One value per group; NaN draws no bar (not measured) and says so. */
  values: number[];
}

/** A dependency-free SVG bar chart: one group per category, one bar per series in each. */
export function groupedBarChartSvg(title: string, groups: string[], series: BarSeries[], options: { yMax?: number; yLabel?: string } = {}): string {
  const width = Math.max(W, 120 + groups.length * Math.max(110, series.length * 22 + 30));
  const height = H + 60;
  const bottom = M.bottom + 40;
  const top = M.top + 20;
  const yMax = options.yMax ?? niceCeil(Math.max(...series.flatMap((s) => s.values.filter((v) => !Number.isNaN(v)))));
  const plotW = width - M.left - M.right;
  const groupW = plotW / Math.max(1, groups.length);
  const barW = Math.min(22, (groupW - 20) / Math.max(1, series.length));
  const y = (v: number) => height - bottom - (v / yMax) * (height - top - bottom);
  const ticks = [0, 0.25, 0.5, 0.75, 1].map((f) => f * yMax);
  const tick = (t: number) => (yMax <= 1 ? t.toFixed(2) : round(t));
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="${width}" height="${height}" fill="white"/>`,
    `<text x="${width / 2}" y="18" text-anchor="middle" font-size="14">${escape(title)}</text>`,
    ...ticks.map((t) => `<line x1="${M.left}" x2="${width - M.right}" y1="${y(t)}" y2="${y(t)}" stroke="#ddd"/><text x="${M.left - 6}" y="${y(t) + 4}" text-anchor="end">${tick(t)}</text>`),
    `<text x="14" y="${(height - bottom + top) / 2}" text-anchor="middle" transform="rotate(-90 14 ${(height - bottom + top) / 2})">${escape(options.yLabel ?? '')}</text>`,
  ];
  groups.forEach((g, gi) => {
    const x0 = M.left + gi * groupW + (groupW - barW * series.length) / 2;
    series.forEach((s, si) => {
      const v = s.values[gi]!;
      const x = x0 + si * barW;
      if (Number.isNaN(v)) parts.push(`<text x="${x + barW / 2}" y="${y(0) - 4}" text-anchor="middle" font-size="9" fill="#888">n/a</text>`);
      else
        parts.push(
          `<rect x="${x.toFixed(1)}" y="${y(v).toFixed(1)}" width="${(barW - 2).toFixed(1)}" height="${(y(0) - y(v)).toFixed(1)}" fill="${s.color}"/>`,
          `<text x="${(x + barW / 2 - 1).toFixed(1)}" y="${(y(v) - 3).toFixed(1)}" text-anchor="middle" font-size="9">${v.toFixed(2)}</text>`,
        );
    });
    parts.push(`<text x="${M.left + gi * groupW + groupW / 2}" y="${height - bottom + 16}" text-anchor="middle" font-size="11">${escape(g)}</text>`);
  });
  for (const [k, s] of series.entries()) {
    parts.push(`<rect x="${M.left + 10 + k * 150}" y="${height - 22}" width="12" height="10" fill="${s.color}"/><text x="${M.left + 28 + k * 150}" y="${height - 13}">${escape(s.label)}</text>`);
  }
  parts.push('</svg>');
  return parts.join('\n') + '\n';
}
