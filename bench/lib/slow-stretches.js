'use strict';
// Lines the slow deliveries of an open-loop pass up with what the processes were doing at the time: stretches of
// slow deliveries (sent less than a second apart), each with the event-loop stalls and GC pauses that overlap it and
// the cores every process used during it, next to the same for the whole pass.

const { coresBetween } = require('./stalls');

const GAP_MS = 1000;
const fmt = (n, d = 0) => (Number.isFinite(n) ? n.toFixed(d) : 'n/a');

/** Deliveries slower than `thresholdMs`, grouped into stretches: { from, to (wall ms), count, maxMs, atS }. */
function stretchesOf(pass, thresholdMs) {
  const t0 = performance.timeOrigin + pass.startedAt;
  const slow = pass.timeline.filter((d) => d.v > thresholdMs).sort((a, b) => a.atMs - b.atMs);
  const out = [];
  for (const d of slow) {
    const cur = out[out.length - 1];
    if (cur && d.atMs - cur.lastSentMs <= GAP_MS) {
      cur.count += 1;
      cur.maxMs = Math.max(cur.maxMs, d.v);
      cur.to = Math.max(cur.to, t0 + d.atMs + d.v);
      cur.lastSentMs = d.atMs;
    } else {
      out.push({
        atS: d.atMs / 1000,
        from: t0 + d.atMs,
        to: t0 + d.atMs + d.v,
        count: 1,
        maxMs: d.v,
        lastSentMs: d.atMs,
      });
    }
  }
  return out;
}

/** "worker loop 3× max 120 ms, bench gc 1× max 15 ms" for the records overlapping [from, to). */
function stallSummary(records, from, to) {
  const groups = new Map();
  for (const r of records) {
    if (r.at >= to || r.at + r.ms <= from) continue;
    const key = `${r.p} ${r.kind}`;
    const g = groups.get(key) || { n: 0, max: 0, sum: 0 };
    g.n += 1;
    g.max = Math.max(g.max, r.ms);
    g.sum += r.ms;
    groups.set(key, g);
  }
  return [...groups].map(([k, g]) => `${k} ${g.n}× max ${g.max} ms (${g.sum} ms in all)`).join(', ') || 'none';
}

function coresText(c) {
  if (!c) return 'n/a';
  return Object.entries(c)
    .map(([k, v]) => `${k} ${fmt(v, 2)}`)
    .join(' ');
}

/**
 * One line per pass: its stalls and cores over the whole open loop, then its slowest stretches (at most `maxStretches`)
 * with the stalls and cores during each. `passes`: [{ label, l: openLoop result }]; `stalls`: stall records of all
 * processes; `cpuSamples`: a CPU timeline covering the passes; `extra(pass, from, to)` adds a text per stretch.
 */
function explainSlow({ passes, thresholdMs, stalls, cpuSamples, maxStretches = 4, extra }) {
  return passes.map((x) => {
    const from = performance.timeOrigin + x.l.startedAt;
    const to = from + Math.max(...x.l.timeline.map((d) => d.atMs + d.v), 0);
    const stretches = stretchesOf(x.l, thresholdMs);
    const worst = [...stretches].sort((a, b) => b.count - a.count || b.maxMs - a.maxMs).slice(0, maxStretches);
    const parts = worst.map((s) => {
      const more = extra ? extra(x, s.from, s.to) : '';
      return `s ${fmt(s.atS, 1)}: ${s.count} slow, max ${fmt(s.maxMs)} ms; stalls: ${stallSummary(stalls, s.from - 200, s.to)}; cores: ${coresText(coresBetween(cpuSamples, s.from, s.to))}${more ? `; ${more}` : ''}`;
    });
    return (
      `${x.label} open loop, over the pass: stalls ${stallSummary(stalls, from, to)}; cores ${coresText(coresBetween(cpuSamples, from, to))}. ` +
      `${stretches.reduce((n, s) => n + s.count, 0)} deliveries slower than ${fmt(thresholdMs)} ms in ${stretches.length} stretch(es)${parts.length ? `, the largest: ${parts.join(' | ')}` : ''}`
    );
  });
}

module.exports = { explainSlow, stretchesOf };
