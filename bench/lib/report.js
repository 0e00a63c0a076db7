'use strict';
// Text report of benchmark results: environment, one table of load passes per suite, extra figures, and PASS/MISS
// lines against the targets.

const { formatBytes } = require('./invoices');

function fmtMs(v) {
  if (v === undefined || Number.isNaN(v)) return '-';
  return v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v.toFixed(2);
}

function fmtNum(v, digits = 1) {
  if (v === undefined || Number.isNaN(v)) return '-';
  return v >= 100 ? v.toFixed(0) : v.toFixed(digits);
}

function fmtValue(value, unit) {
  if (unit === 'bytes') return formatBytes(value);
  if (unit === 'ms') return `${fmtMs(value)} ms`;
  if (unit === 'req/s') return `${fmtNum(value)} req/s`;
  if (value && typeof value === 'object')
    return Object.entries(value)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ');
  return `${value}${unit ? ` ${unit}` : ''}`;
}

function table(header, rows) {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => String(r[i]).length)));
  // First column left-aligned (labels), the rest right-aligned (numbers).
  const line = (cells) =>
    cells.map((c, i) => (i === 0 ? String(c).padEnd(widths[i]) : String(c).padStart(widths[i]))).join('  ');
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

function scenarioTable(scenarios) {
  const header = [
    'pass',
    'conc',
    'secs',
    '2xx',
    'req/s',
    'MiB/s in',
    'p50 ms',
    'p90 ms',
    'p99 ms',
    'max ms',
    'non-2xx',
    'errors',
    'cut',
  ];
  const rows = scenarios.map((s) => [
    s.label,
    s.connections,
    fmtNum(s.durationS),
    s.ok,
    fmtNum(s.rps),
    s.requestBytesPerS ? fmtNum(s.requestBytesPerS / (1024 * 1024)) : '-',
    fmtMs(s.latencyMs.p50),
    fmtMs(s.latencyMs.p90),
    fmtMs(s.latencyMs.p99),
    fmtMs(s.latencyMs.max),
    s.non2xx,
    s.errors,
    s.abandoned,
  ]);
  return table(header, rows);
}

function targetLine(t) {
  // Most targets are ceilings; `atLeast` marks a floor (e.g. a speed-up).
  const cmp = t.atLeast ? '≥' : '<';
  if (t.pass === undefined)
    return `N/A   ${t.label}: not judged${t.why ? ` (${t.why})` : ''}; reading ${fmtValue(t.measured, t.unit)} (target ${cmp} ${fmtValue(t.target, t.unit)})`;
  return `${t.pass ? 'PASS' : 'MISS'}  ${t.label}: ${fmtValue(t.measured, t.unit)} (target ${cmp} ${fmtValue(t.target, t.unit)})`;
}

const CPU_COLUMNS = [
  ['api', 'API'],
  ['worker', 'worker'],
  ['database', 'database'],
  ['temporal', 'Temporal'],
  ['loadGenerator', 'load gen'],
];

function pctOf(v) {
  return v === undefined || Number.isNaN(v) ? '-' : `${Math.round(100 * v)}%`;
}

/** CPU milliseconds per 2xx request by process, and how busy the machine was (and with what else) during the pass. */
function cpuTable(scenarios) {
  const withCpu = scenarios.filter((s) => s.cpu);
  if (!withCpu.length) return undefined;
  const cols = CPU_COLUMNS.filter(([k]) => withCpu.some((s) => s.cpu.perRequestMs[k] !== undefined));
  const header = ['CPU ms per 2xx request', ...cols.map(([, h]) => h), 'machine busy', 'other programs'];
  const rows = withCpu.map((s) => [
    s.label,
    ...cols.map(([k]) => fmtMs(s.cpu.perRequestMs[k])),
    pctOf(s.cpu.machineBusyShare),
    pctOf(s.cpu.othersShare),
  ]);
  return table(header, rows);
}

function environmentLines(env) {
  return [
    `cores        ${env.cores} × ${env.cpuModel}`,
    `memory       ${formatBytes(env.memoryBytes)}`,
    `os           ${env.os}`,
    `node         ${env.node}`,
    `database     ${env.database}`,
    `temporal     ${env.temporal}`,
    `load         autocannon ${env.autocannon}, in the benchmark process on the same machine`,
    `load avg     ${env.loadAverage.start.map((v) => v.toFixed(2)).join(' ')} at start, ${env.loadAverage.end ? env.loadAverage.end.map((v) => v.toFixed(2)).join(' ') : '-'} at end (1/5/15 min)`,
    `mode         ${env.mode}`,
  ];
}

function renderReport(report) {
  const out = [];
  out.push('', 'Invoice Gateway benchmarks', '==========================', ...environmentLines(report.environment));
  for (const s of report.suites) {
    out.push('', `${s.name}: ${s.title}`, '-'.repeat(Math.min(100, s.name.length + s.title.length + 2)));
    if (s.error) out.push(`BROKEN: ${s.error}`);
    if (s.scenarios && s.scenarios.length) {
      out.push(scenarioTable(s.scenarios));
      const c = cpuTable(s.scenarios);
      if (c) out.push('', c);
    }
    for (const t of s.tables || []) {
      out.push(
        '',
        t.title,
        table(
          t.header,
          t.rows.map((r) => r.map((c, i) => (i === 0 || typeof c !== 'number' ? c : fmtMs(c)))),
        ),
      );
    }
    for (const f of s.figures || []) out.push(`${f.label}: ${fmtValue(f.value, f.unit)}`);
    for (const n of s.notes || []) out.push(`note: ${n}`);
    for (const p of s.problems || []) out.push(`PROBLEM: ${p}`);
  }
  const targets = report.suites.flatMap((s) => (s.targets || []).map((t) => ({ ...t, suite: s.name })));
  if (targets.length) {
    out.push('', 'Targets', '-------', ...targets.map(targetLine));
  }
  if (report.profiles && report.profiles.length) {
    out.push('', 'CPU profiles', '------------');
    for (const p of report.profiles) out.push(p.text, '');
  }
  out.push(
    '',
    'Latency: time from the first request byte sent to the last response byte received, 2xx answers only; ' +
      'req/s and MiB/s count 2xx answers over the pass. Closed loop: each client sends its next request when the previous one is answered. ' +
      '"cut": requests still in flight when the pass ended, left out of every figure.',
    'CPU ms per 2xx request: CPU time of each process (all threads, from /proc) over the pass (intake: and the wait for ' +
      'the worker after it), divided by the 2xx answers. "other programs": share of all cores used by processes outside ' +
      'the benchmark during the pass; the gateway competes with them for the same cores.',
    `Results written to ${report.resultsFile}`,
    report.ok ? 'Benchmark completed.' : 'Benchmark BROKEN: see the errors above (exit code 1).',
    '',
  );
  return out.join('\n');
}

module.exports = { renderReport, scenarioTable, cpuTable, targetLine, fmtMs, fmtValue, table };
