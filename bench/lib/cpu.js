'use strict';
// CPU accounting from /proc (Linux): CPU seconds each gateway process (API, worker, database, Temporal) and the load
// generator used over a pass, and how busy the whole machine was. On a shared machine this separates "the gateway is
// slow" from "the gateway did not get the cores": CPU per request does not depend on what else runs.

const { execFileSync } = require('node:child_process');
const fs = require('node:fs');

let ticksPerSecond;
function clockTicks() {
  if (ticksPerSecond === undefined) {
    try {
      ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8', timeout: 5000 }).trim()) || 100;
    } catch {
      ticksPerSecond = 100;
    }
  }
  return ticksPerSecond;
}

/** utime + stime of one process (all its threads), in seconds; undefined once it is gone. */
function processCpuSeconds(pid) {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name may contain spaces and parentheses; fields are counted after its closing parenthesis.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / clockTicks();
  } catch {
    return undefined;
  }
}

/**
 * utime + stime of a process, of its children it has waited for (cutime + cstime) and of its live descendants: a
 * PostgreSQL server forks a backend per connection, and all of them are the database's CPU.
 */
function processTreeCpuSeconds(pid) {
  const stats = new Map();
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${d}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      stats.set(Number(d), {
        ppid: Number(f[1]),
        self: Number(f[11]) + Number(f[12]),
        reaped: Number(f[13]) + Number(f[14]),
      });
    } catch {
      // gone
    }
  }
  const root = stats.get(pid);
  if (!root) return undefined;
  let ticks = root.self + root.reaped;
  const queue = [pid];
  while (queue.length) {
    const parent = queue.pop();
    for (const [p, s] of stats) {
      if (s.ppid !== parent) continue;
      ticks += s.self + s.reaped;
      queue.push(p);
    }
  }
  return ticks / clockTicks();
}

/** CPU seconds of a named entry: one process, or several (an array) of which each is counted with its descendants. */
function entryCpuSeconds(pid) {
  if (!Array.isArray(pid)) return processCpuSeconds(pid);
  let total = 0;
  for (const p of pid) {
    const s = processTreeCpuSeconds(p);
    if (s === undefined) return undefined;
    total += s;
  }
  return total;
}

/** Busy, iowait and total CPU seconds of the whole machine since boot (all cores). */
function machineCpuSeconds() {
  const line = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0];
  const v = line.trim().split(/\s+/).slice(1).map(Number);
  const [user, nice, system, idle, iowait = 0, irq = 0, softirq = 0, steal = 0] = v;
  const busy = user + nice + system + irq + softirq + steal;
  return { busy: busy / clockTicks(), iowait: iowait / clockTicks(), total: (busy + idle + iowait) / clockTicks() };
}

function supported() {
  try {
    machineCpuSeconds();
    return processCpuSeconds(process.pid) !== undefined;
  } catch {
    return false;
  }
}

/** Direct children of this process that are local servers started by scripts/lib/services, by kind. */
function findServerPids() {
  const out = {};
  let entries = [];
  try {
    entries = fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d));
  } catch {
    return out;
  }
  let ferretdb;
  let postgres;
  for (const d of entries) {
    try {
      const stat = fs.readFileSync(`/proc/${d}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid !== process.pid) continue;
      const cmd = fs.readFileSync(`/proc/${d}/cmdline`, 'utf8').split('\0');
      const exe = cmd[0] || '';
      if (/ferretdb/.test(exe)) ferretdb = Number(d);
      else if (/\/postgres$/.test(exe)) postgres = Number(d);
      else if (/mongod$/.test(exe)) out.database = Number(d);
      else if (/temporal$/.test(exe) && cmd.includes('start-dev')) out.temporal = Number(d);
    } catch {
      // gone, or not ours to read
    }
  }
  // FerretDB on PostgreSQL: the database is FerretDB plus the PostgreSQL server and its backends.
  if (ferretdb) out.database = postgres ? [ferretdb, postgres] : ferretdb;
  return out;
}

/** A point-in-time reading for `pids` ({ name: pid }); pass two readings to cpuBetween. */
function snapshot(pids) {
  const procs = {};
  for (const [name, pid] of Object.entries(pids)) if (pid) procs[name] = entryCpuSeconds(pid);
  const self = process.cpuUsage();
  return { at: process.hrtime.bigint(), machine: machineCpuSeconds(), procs, self: (self.user + self.system) / 1e6 };
}

/**
 * CPU used between two readings: seconds per named process, by the load generator (this process), by everything else
 * on the machine, and the wall time. `cores` lets callers express it as a share of the machine.
 */
function cpuBetween(a, b) {
  const wallS = Number(b.at - a.at) / 1e9;
  const perProcess = {};
  let ours = 0;
  for (const name of Object.keys(a.procs)) {
    if (a.procs[name] === undefined || b.procs[name] === undefined) continue;
    perProcess[name] = b.procs[name] - a.procs[name];
    ours += perProcess[name];
  }
  const loadGenerator = b.self - a.self;
  const machineBusy = b.machine.busy - a.machine.busy;
  const machineTotal = b.machine.total - a.machine.total;
  return {
    wallS,
    perProcess,
    loadGenerator,
    machineBusy,
    machineTotal,
    // What other programs on the machine took: the gateway competes with it for the same cores.
    others: Math.max(0, machineBusy - ours - loadGenerator),
  };
}

module.exports = {
  supported,
  findServerPids,
  snapshot,
  cpuBetween,
  processCpuSeconds,
  processTreeCpuSeconds,
  machineCpuSeconds,
  clockTicks,
};

/**
 * Runs `pass` (a load pass) and then `settle` (waiting for follow-up work such as the worker's backlog), reading CPU
 * before, between and after. Returns the pass result, the settle result, and both CPU windows.
 */
async function measureCpu(pids, pass, settle) {
  if (!supported()) return { result: await pass(), settled: settle ? await settle() : undefined };
  const a = snapshot(pids);
  const result = await pass();
  const b = snapshot(pids);
  const settled = settle ? await settle() : undefined;
  const c = settle ? snapshot(pids) : b;
  return { result, settled, duringPass: cpuBetween(a, b), passAndSettle: cpuBetween(a, c) };
}

/**
 * Per-request CPU cost (ms) of each process over the pass and its follow-up work, the load generator's own cost,
 * and how much of the machine other programs took during the pass.
 */
function cpuCost(measured, requests, cores) {
  const { duringPass, passAndSettle } = measured;
  if (!duringPass || requests <= 0) return undefined;
  const perRequestMs = {};
  for (const [name, s] of Object.entries(passAndSettle.perProcess)) perRequestMs[name] = (1000 * s) / requests;
  perRequestMs.loadGenerator = (1000 * duringPass.loadGenerator) / requests;
  const capacity = duringPass.wallS * cores;
  return {
    window: passAndSettle.wallS > duringPass.wallS ? 'the pass and the wait for the worker after it' : 'the pass',
    windowS: passAndSettle.wallS,
    perRequestMs,
    // Shares of the whole machine (all cores) during the pass itself.
    machineBusyShare: capacity > 0 ? duringPass.machineBusy / capacity : undefined,
    othersShare: capacity > 0 ? duringPass.others / capacity : undefined,
  };
}

module.exports.measureCpu = measureCpu;
module.exports.cpuCost = cpuCost;
