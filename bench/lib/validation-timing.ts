import { performance } from 'node:perf_hooks';
import type { ValidateOptions, Validator } from '../../src/validation';

/**
 * Timing of the validate path for benchmarks (kept out of src/: only benchmarks and their test use it): validates
 * each document `iterations` times (after warm-up runs, which load the packs and let the JIT settle) and reports
 * per-document latency percentiles.
 */

export interface BenchmarkOptions {
  iterations?: number;
  warmup?: number;
  validateOptions?: ValidateOptions;
}

export interface DocumentTiming {
  name: string;
  bytes: number;
  isValid: boolean;
  assertions: number;
  /** Milliseconds per run, sorted ascending. */
  runsMs: number[];
  medianMs: number;
  p95Ms: number;
  minMs: number;
  maxMs: number;
}

export interface BenchmarkReport {
  documents: DocumentTiming[];
  totalRuns: number;
  totalMs: number;
  /** Peak resident set size seen between runs, in bytes. */
  peakRssBytes: number;
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  const k = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[k] as number;
}

export async function benchmarkValidation(
  validator: Validator,
  documents: ReadonlyArray<{ name: string; content: Buffer }>,
  options: BenchmarkOptions = {},
): Promise<BenchmarkReport> {
  const iterations = Math.max(1, options.iterations ?? 5);
  const warmup = Math.max(0, options.warmup ?? 1);
  let peakRss = process.memoryUsage().rss;
  const out: DocumentTiming[] = [];
  const t0 = performance.now();
  let totalRuns = 0;
  for (const d of documents) {
    for (let k = 0; k < warmup; k++) await validator.validate(d.content, options.validateOptions);
    const runs: number[] = [];
    let last;
    for (let k = 0; k < iterations; k++) {
      const t = performance.now();
      last = await validator.validate(d.content, options.validateOptions);
      runs.push(performance.now() - t);
      peakRss = Math.max(peakRss, process.memoryUsage().rss);
      totalRuns++;
    }
    runs.sort((a, b) => a - b);
    out.push({
      name: d.name,
      bytes: d.content.length,
      isValid: last?.isValid ?? false,
      assertions: last?.assertions.length ?? 0,
      runsMs: runs,
      medianMs: percentile(runs, 50),
      p95Ms: percentile(runs, 95),
      minMs: runs[0] ?? 0,
      maxMs: runs[runs.length - 1] ?? 0,
    });
  }
  return { documents: out, totalRuns, totalMs: performance.now() - t0, peakRssBytes: peakRss };
}
