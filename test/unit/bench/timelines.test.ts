/* eslint-disable @typescript-eslint/no-require-imports */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

// The webhook benchmark's diagnostics: Prometheus counters per pass, Go GC traces and slow-delivery stretches.

type Counters = Map<string, number>;
const metrics = require('../../../bench/lib/server-metrics') as {
  parseCounters(text: string): Counters;
  ratesBetween(a: { at: number; counters: Counters }, b: { at: number; counters: Counters }): Counters;
  largestDifferences(a: Counters[], b: Counters[], top?: number): { key: string; a: number; b: number; diff: number }[];
};
const stalls = require('../../../bench/lib/stalls') as {
  readGoGcTrace(
    file: string,
    pid: number,
    name: string,
    minMs?: number,
  ): { p: string; kind: string; at: number; ms: number }[];
};
const slow = require('../../../bench/lib/slow-stretches') as {
  stretchesOf(
    pass: { startedAt: number; timeline: { atMs: number; v: number }[] },
    thresholdMs: number,
  ): { atS: number; count: number; maxMs: number }[];
};

describe('server metrics', () => {
  const exposition = (n: number) =>
    [
      '# TYPE persistence_requests counter',
      `persistence_requests{operation="UpdateWorkflowExecution"} ${10 + n}`,
      '# TYPE memory_heapinuse gauge',
      `memory_heapinuse{service_name="history"} ${1e6 * n}`,
      '# TYPE task_latency histogram',
      `task_latency_bucket{le="0.1"} ${n}`,
      `task_latency_sum ${0.5 * n}`,
      `task_latency_count ${2 * n}`,
    ].join('\n');

  it('keeps counters and histogram counts, not gauges, buckets or sums', () => {
    expect([...metrics.parseCounters(exposition(1)).keys()]).toEqual([
      'persistence_requests{operation="UpdateWorkflowExecution"}',
      'task_latency_count',
    ]);
  });

  it('gives per-second rates and ranks the series that differ most between two groups', () => {
    const at = (ms: number, n: number) => ({ at: ms, counters: metrics.parseCounters(exposition(n)) });
    const control = metrics.ratesBetween(at(0, 0), at(2000, 4));
    const hung = metrics.ratesBetween(at(0, 0), at(2000, 10));
    expect(control.get('persistence_requests{operation="UpdateWorkflowExecution"}')).toBe(2);
    const rows = metrics.largestDifferences([control], [hung]);
    expect(rows.map((r) => [r.key, r.diff])).toEqual([
      ['task_latency_count', 6],
      ['persistence_requests{operation="UpdateWorkflowExecution"}', 3],
    ]);
  });
});

describe('Go GC traces', () => {
  it('reads the cycles at or above the bound, timed from the process start', () => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'gctrace-')), 'temporal.log');
    fs.writeFileSync(
      file,
      [
        'gc 1 @0.009s 11%: 1.5+3.0+0.003 ms clock, 3.1+0.022/1.8/0+0.006 ms cpu, 3->5->3 MB, 4 MB goal, 2 P',
        '{"level":"warn","msg":"not a gc line"}',
        'gc 183 @454.752s 3%: 3.1+806+0.10 ms clock, 6.2+3.5/420/59+0.21 ms cpu, 250->275->139 MB, 277 MB goal, 2 P',
      ].join('\n'),
    );
    const gcs = stalls.readGoGcTrace(file, process.pid, 'temporal');
    expect(gcs).toHaveLength(1);
    expect(gcs[0]).toMatchObject({ p: 'temporal', kind: 'gc', ms: 809 });
    // This process started before now and well within the last hour.
    const startedAt = gcs[0]!.at - 454_752;
    expect(startedAt).toBeLessThanOrEqual(Date.now());
    expect(startedAt).toBeGreaterThan(Date.now() - 3_600_000);
  });
});

describe('slow stretches', () => {
  it('groups slow deliveries sent less than a second apart', () => {
    const timeline = [
      { atMs: 100, v: 300 },
      { atMs: 150, v: 90 },
      { atMs: 900, v: 250 },
      { atMs: 5_000, v: 400 },
    ];
    expect(slow.stretchesOf({ startedAt: 0, timeline }, 200).map((s) => [s.atS, s.count, s.maxMs])).toEqual([
      [0.1, 2, 300],
      [5, 1, 400],
    ]);
  });
});
