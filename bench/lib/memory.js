'use strict';
// Resident memory of another process, read from /proc/<pid>/status (Linux). VmRSS is sampled on an interval for the
// peak during a phase; VmHWM is the kernel's own high-water mark since the process started, which catches spikes
// shorter than the interval.

const fs = require('node:fs');

function readStatus(pid) {
  const text = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (key) => {
    const m = new RegExp(`^${key}:\\s+(\\d+) kB$`, 'm').exec(text);
    return m ? Number(m[1]) * 1024 : undefined;
  };
  return { rss: kib('VmRSS'), hwm: kib('VmHWM') };
}

function supported(pid) {
  try {
    return readStatus(pid).rss !== undefined;
  } catch {
    return false;
  }
}

/** Samples VmRSS every `intervalMs` until stop(); stop() returns { samples, peakRss, startRss, endRss, hwm }. */
function sampleRss(pid, intervalMs = 50) {
  const first = readStatus(pid);
  let peak = first.rss;
  let samples = 1;
  let last = first;
  let failed;
  const timer = setInterval(() => {
    try {
      last = readStatus(pid);
      samples += 1;
      if (last.rss > peak) peak = last.rss;
    } catch (e) {
      failed = e;
      clearInterval(timer);
    }
  }, intervalMs);
  return {
    stop() {
      clearInterval(timer);
      if (failed) throw new Error(`reading /proc/${pid}/status failed mid-run: ${failed.message}`);
      const end = readStatus(pid);
      return {
        samples: samples + 1,
        intervalMs,
        startRss: first.rss,
        peakRss: Math.max(peak, end.rss),
        endRss: end.rss,
        hwm: end.hwm,
      };
    },
  };
}

/** Bytes the process has read through read-like calls (sockets included), from /proc/<pid>/io; undefined if unreadable. */
function bytesRead(pid) {
  try {
    const m = /^rchar:\s+(\d+)$/m.exec(fs.readFileSync(`/proc/${pid}/io`, 'utf8'));
    return m ? Number(m[1]) : undefined;
  } catch {
    return undefined;
  }
}

module.exports = { readStatus, supported, sampleRss, bytesRead };
