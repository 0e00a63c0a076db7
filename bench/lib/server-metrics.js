'use strict';
// What the Temporal server did during a pass, from its Prometheus endpoint: counters read before and after, so two
// conditions (a hung receiver and its control) can be compared series by series, per second of their passes.

const http = require('node:http');

/**
 * The counters of a text exposition, "name{labels}" → value: counter families, and the _count of histograms and
 * summaries (how often something was observed); gauges and buckets left out.
 */
function parseCounters(text) {
  const types = new Map();
  const out = new Map();
  for (const line of text.split('\n')) {
    if (line.startsWith('# TYPE ')) {
      const [, , family, type] = line.split(' ');
      types.set(family, type);
      continue;
    }
    if (!line || line.startsWith('#')) continue;
    const cut = line.lastIndexOf(' ');
    const key = line.slice(0, cut);
    const value = Number(line.slice(cut + 1));
    const name = key.split('{')[0];
    const counted =
      types.get(name) === 'counter' ||
      (name.endsWith('_count') && ['histogram', 'summary'].includes(types.get(name.slice(0, -6))));
    if (counted && Number.isFinite(value)) out.set(key, value);
  }
  return out;
}

function fetchText(url, timeoutMs = 10_000) {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { timeout: timeoutMs }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (body += c));
      res.on('end', () =>
        res.statusCode === 200 ? resolve(body) : reject(new Error(`${url} answered ${res.statusCode}`)),
      );
    });
    req.on('timeout', () => req.destroy(new Error(`${url} timed out`)));
    req.on('error', reject);
  });
}

/** A reading of the server's counters now; undefined without an endpoint or when it does not answer. */
async function readCounters(url) {
  if (!url) return undefined;
  try {
    return { at: performance.now(), counters: parseCounters(await fetchText(url)) };
  } catch {
    return undefined;
  }
}

/** Per-second increase of every series between two readings (series that did not move are left out). */
function ratesBetween(a, b) {
  if (!a || !b) return undefined;
  const seconds = (b.at - a.at) / 1000;
  const out = new Map();
  for (const [key, v] of b.counters) {
    const d = v - (a.counters.get(key) ?? 0);
    if (d > 0) out.set(key, d / seconds);
  }
  return out;
}

/** Series whose mean rate differs most between two groups of passes (each a Map from ratesBetween); at most `top`. */
function largestDifferences(groupA, groupB, top = 12) {
  const mean = (group, key) => group.reduce((s, m) => s + (m.get(key) ?? 0), 0) / group.length;
  const keys = new Set([...groupA, ...groupB].flatMap((m) => [...m.keys()]));
  const rows = [];
  for (const key of keys) {
    const a = mean(groupA, key);
    const b = mean(groupB, key);
    rows.push({ key, a, b, diff: b - a });
  }
  return rows.sort((x, y) => Math.abs(y.diff) - Math.abs(x.diff)).slice(0, top);
}

module.exports = { parseCounters, readCounters, ratesBetween, largestDifferences };
