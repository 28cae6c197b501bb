/** Order statistics for benchmark samples. */
export interface Summary {
  n: number;
  median: number;
  p95: number;
  max: number;
  min: number;
}

export function quantile(sorted: number[], q: number): number {
  if (sorted.length === 0) return NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[i]!;
}

export function summarize(samples: number[], digits = 1): Summary {
  const sorted = [...samples].sort((a, b) => a - b);
  const round = (x: number) => Number(x.toFixed(digits));
  return {
    n: sorted.length,
    median: round(quantile(sorted, 0.5)),
    p95: round(quantile(sorted, 0.95)),
    max: round(sorted.at(-1) ?? NaN),
    min: round(sorted[0] ?? NaN),
  };
}
