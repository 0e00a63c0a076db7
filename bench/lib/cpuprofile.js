'use strict';
// Summary of a V8 .cpuprofile (from node --cpu-prof): where the time went, by function (self and inclusive time) and
// by origin (project file, npm package, Node internals), so a missed target points at code rather than a flame graph.

const fs = require('node:fs');
const path = require('node:path');

function originOf(url, root) {
  if (!url) return '(native/V8)';
  if (url.startsWith('node:')) return 'node internals';
  const file = url.startsWith('file://') ? decodeURIComponent(url.slice('file://'.length)) : url;
  const nm = file.lastIndexOf('/node_modules/');
  if (nm >= 0) {
    const rest = file.slice(nm + '/node_modules/'.length).split('/');
    return `npm ${rest[0].startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]}`;
  }
  return path.relative(root, file) || file;
}

function frameName(cf, root) {
  const where = originOf(cf.url, root);
  const fn = cf.functionName || '(anonymous)';
  if (!cf.url) return fn;
  const file = cf.url.startsWith('file://') ? path.relative(root, decodeURIComponent(cf.url.slice(7))) : cf.url;
  return `${fn} ${where.startsWith('npm ') ? `${where.slice(4)}:` : ''}${where.startsWith('npm ') ? path.basename(file) : file}:${cf.lineNumber + 1}`;
}

/** Aggregates one profile; times in ms. `root` makes project paths relative. */
function summarizeProfile(profile, root) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of profile.nodes) for (const c of n.children || []) parent.set(c, n.id);
  const self = new Map();
  const inclusive = new Map();
  const origin = new Map();
  let total = 0;
  let idle = 0;
  const samples = profile.samples || [];
  const deltas = profile.timeDeltas || [];
  for (let i = 0; i < samples.length; i++) {
    // timeDeltas[i] is the gap before sample i; it is the best estimate of the time sample i stands for.
    const ms = Math.max(0, (deltas[i + 1] ?? deltas[i] ?? 0) / 1000);
    const node = byId.get(samples[i]);
    if (!node) continue;
    total += ms;
    const fn = node.callFrame.functionName;
    if (fn === '(idle)' || fn === '(program)' || fn === '(garbage collector)') {
      const key = fn;
      self.set(key, (self.get(key) || 0) + ms);
      if (fn === '(idle)') idle += ms;
      origin.set(key, (origin.get(key) || 0) + ms);
      continue;
    }
    // Native frames (no script) say little alone ("run"); name the JS function that called them.
    let key = frameName(node.callFrame, root);
    if (!node.callFrame.url && parent.has(node.id)) {
      const caller = byId.get(parent.get(node.id)).callFrame;
      if (caller.functionName !== '(root)') key = `${key} [native, from ${frameName(caller, root)}]`;
    }
    self.set(key, (self.get(key) || 0) + ms);
    const o = originOf(node.callFrame.url, root);
    origin.set(o, (origin.get(o) || 0) + ms);
    const seen = new Set();
    for (let id = node.id; id !== undefined; id = parent.get(id)) {
      const cf = byId.get(id).callFrame;
      if (cf.functionName === '(root)') break;
      const k = frameName(cf, root);
      if (seen.has(k)) continue;
      seen.add(k);
      inclusive.set(k, (inclusive.get(k) || 0) + ms);
    }
  }
  const sorted = (m) => [...m.entries()].sort((a, b) => b[1] - a[1]);
  return {
    totalMs: total,
    idleMs: idle,
    busyMs: total - idle,
    self: sorted(self),
    inclusive: sorted(inclusive),
    origin: sorted(origin),
  };
}

function pct(part, whole) {
  return whole > 0 ? `${((100 * part) / whole).toFixed(1)}%` : '-';
}

/** Text block for the report: busy time split by origin, top self-time functions, top project functions inclusive. */
function renderProfile(file, summary, { top = 12 } = {}) {
  const busy = summary.busyMs;
  const lines = [
    `${file}: ${(summary.totalMs / 1000).toFixed(1)} s sampled, ${(busy / 1000).toFixed(1)} s busy (not idle)`,
  ];
  lines.push('  busy time by origin:');
  for (const [k, v] of summary.origin.filter(([k]) => k !== '(idle)').slice(0, top))
    lines.push(`    ${pct(v, busy).padStart(6)}  ${k}`);
  lines.push('  top functions by self time:');
  for (const [k, v] of summary.self.filter(([k]) => k !== '(idle)').slice(0, top))
    lines.push(`    ${pct(v, busy).padStart(6)}  ${k}`);
  const project = summary.inclusive.filter(
    ([k]) => / (dist|src|api|activities|workflows)\//.test(k) && !k.includes('node_modules'),
  );
  lines.push('  project functions by inclusive time (self + callees):');
  for (const [k, v] of project.slice(0, top)) lines.push(`    ${pct(v, busy).padStart(6)}  ${k}`);
  return lines.join('\n');
}

function summarizeFile(file, root) {
  return summarizeProfile(JSON.parse(fs.readFileSync(file, 'utf8')), root);
}

module.exports = { summarizeProfile, summarizeFile, renderProfile, originOf };
