'use strict';
// What a process was doing when a delivery was slow: event-loop stalls (a 10 ms ticker that fired late) and long GC
// pauses of the gateway's Node processes and of the benchmark itself, and every process's CPU over time. Times are
// wall-clock milliseconds (performance.timeOrigin + performance.now()), comparable across processes.

const fs = require('node:fs');
const { PerformanceObserver } = require('node:perf_hooks');
const cpu = require('./cpu');

const TICK_MS = 10;
const STALL_MS = 25;
const GC_MS = 10;

const wallNow = () => performance.timeOrigin + performance.now();

/**
 * Records stalls of this process: { p, kind: 'loop' | 'gc', at, ms }. With `file` each record is appended as a JSON
 * line (the gateway's processes, read back by the benchmark); without, they are kept in `records`.
 */
function startStallMonitor({ name, file }) {
  const records = [];
  const emit = (r) => {
    if (file) fs.appendFileSync(file, `${JSON.stringify(r)}\n`);
    else records.push(r);
  };
  let last = performance.now();
  const ticker = setInterval(() => {
    const now = performance.now();
    const late = now - last - TICK_MS;
    if (late >= STALL_MS)
      emit({ p: name, kind: 'loop', at: performance.timeOrigin + last + TICK_MS, ms: Math.round(late) });
    last = now;
  }, TICK_MS);
  ticker.unref();
  const gc = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      if (e.duration >= GC_MS)
        emit({ p: name, kind: 'gc', at: performance.timeOrigin + e.startTime, ms: Math.round(e.duration) });
    }
  });
  gc.observe({ entryTypes: ['gc'] });
  return {
    records,
    stop() {
      clearInterval(ticker);
      gc.disconnect();
    },
  };
}

/** A file's text, or '' when it is not there (a process that never wrote it). */
function readIfThere(file) {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

/** Reads the JSON lines a preloaded monitor wrote; a torn last line (the process was writing) is skipped. */
function readStallFile(file) {
  const out = [];
  const text = readIfThere(file);
  for (const line of text.split('\n')) {
    if (!line) continue;
    try {
      out.push(JSON.parse(line));
    } catch {
      // torn line
    }
  }
  return out;
}

/**
 * Samples the CPU seconds of `pids` ({ name: pid }), of this process ("bench") and the machine's busy and iowait
 * seconds every `everyMs`; stop() returns the samples { at, procs, machine }.
 */
function startCpuTimeline(pids, everyMs = 250) {
  const samples = [];
  const take = () => {
    const s = cpu.snapshot(pids);
    samples.push({ at: wallNow(), procs: { ...s.procs, bench: s.self }, machine: s.machine });
  };
  take();
  const timer = setInterval(take, everyMs);
  timer.unref();
  return {
    stop() {
      clearInterval(timer);
      take();
      return samples;
    },
  };
}

/** Cores each process used between wall times `from` and `to`, from the timeline samples that span it. */
function coresBetween(samples, from, to) {
  const first = [...samples].reverse().find((s) => s.at <= from) || samples[0];
  const last = samples.find((s) => s.at >= to) || samples[samples.length - 1];
  const wallS = (last.at - first.at) / 1000;
  if (!first || !last || wallS <= 0) return undefined;
  const out = {};
  for (const name of Object.keys(first.procs)) {
    const a = first.procs[name];
    const b = last.procs[name];
    if (a !== undefined && b !== undefined) out[name] = (b - a) / wallS;
  }
  out.machine = (last.machine.busy - first.machine.busy) / wallS;
  out.iowait = (last.machine.iowait - first.machine.iowait) / wallS;
  return out;
}

/** Wall-clock ms at which a process started (Linux /proc), or undefined. */
function processStartMs(pid) {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const ticks = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]);
    const btime = Number(/^btime (\d+)$/m.exec(fs.readFileSync('/proc/stat', 'utf8'))[1]);
    return btime * 1000 + (ticks * 1000) / cpu.clockTicks();
  } catch {
    return undefined;
  }
}

/**
 * The garbage collections a Go server printed with GODEBUG=gctrace=1 ("gc 12 @3.456s 2%: a+b+c ms clock, …"), as
 * records like the stall monitor's: { p: name, kind: 'gc', at, ms: wall time of the cycle (mostly its concurrent
 * mark, when the collector takes a quarter of the cores and makes allocating goroutines assist), liveMb: the heap
 * marked live by it }; those shorter than `minMs` are left out.
 */
function readGoGcTrace(logFile, pid, name, minMs = 50) {
  const started = processStartMs(pid);
  if (started === undefined) return [];
  const out = [];
  for (const m of readIfThere(logFile).matchAll(
    /^gc \d+ @([\d.]+)s \d+%: ([\d.]+)\+([\d.]+)\+([\d.]+) ms clock.*? (\d+)->(\d+)->(\d+) MB/gm,
  )) {
    const ms = Number(m[2]) + Number(m[3]) + Number(m[4]);
    if (ms >= minMs)
      out.push({ p: name, kind: 'gc', at: started + Number(m[1]) * 1000, ms: Math.round(ms), liveMb: Number(m[7]) });
  }
  return out;
}

module.exports = { startStallMonitor, readStallFile, startCpuTimeline, coresBetween, wallNow, readGoGcTrace };
