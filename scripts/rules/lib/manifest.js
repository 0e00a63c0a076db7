'use strict';
// The rule-pack manifest (transforms/rules-manifest.json): reading, structural checks and the pack fingerprint.
// src/validation/manifest.ts computes the same fingerprint; a unit test compares the two.

const crypto = require('node:crypto');
const fs = require('node:fs');

const SHA256 = /^[0-9a-f]{64}$/;
const ID = /^[a-z0-9][a-z0-9.-]*$/;
// group:artifact:version, with an optional :classifier (test-sources jars of official test documents).
const COORDINATES = /^[A-Za-z0-9_.-]+:[A-Za-z0-9_.-]+:[A-Za-z0-9_.-]+(?::[A-Za-z0-9_.-]+)?$/;

/** JSON with object keys sorted at every level: a stable text to hash. */
function canonicalJson(value) {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const keys = Object.keys(value).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(value[k])}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

function sha256(data) {
  return crypto.createHash('sha256').update(data).digest('hex');
}

/** Fingerprint of a pack: its manifest entry plus the coordinates and checksums of the jars it reads. */
function packFingerprint(manifest, pack) {
  const artifacts = {};
  for (const s of pack.sources) {
    const a = manifest.artifacts[s.artifact];
    artifacts[s.artifact] = { coordinates: a.coordinates, sha256: a.sha256 };
  }
  return sha256(canonicalJson({ pack, artifacts }));
}

function fail(msg) {
  throw new Error(`rules manifest: ${msg}`);
}

/** Structural checks; `pinned` additionally requires every checksum to be present. */
function checkManifest(m, { pinned }) {
  if (m.manifestVersion !== 1) fail('manifestVersion must be 1');
  if (!m.artifacts || typeof m.artifacts !== 'object') fail('artifacts missing');
  for (const [name, a] of Object.entries(m.artifacts)) {
    if (!COORDINATES.test(a.coordinates || ''))
      fail(`artifact ${name}: coordinates must be group:artifact:version[:classifier]`);
    if (pinned && !SHA256.test(a.sha256 || ''))
      fail(`artifact ${name}: sha256 not pinned (run npm run rules:fetch -- --pin)`);
  }
  for (const [id, t] of Object.entries(m.tools || {})) {
    if (!Array.isArray(t.classpath) || t.classpath.length === 0) fail(`tool ${id}: classpath missing`);
    for (const a of t.classpath) if (!m.artifacts[a]) fail(`tool ${id}: unknown artifact ${a}`);
  }
  for (const [id, x] of Object.entries(m.samples || {})) {
    if (!m.artifacts[x.artifact]) fail(`samples ${id}: unknown artifact ${x.artifact}`);
    if (typeof x.prefix !== 'string' || x.prefix === '') fail(`samples ${id}: prefix missing`);
  }
  const seen = new Set();
  for (const p of m.packs || []) {
    if (!ID.test(p.id || '')) fail(`pack id "${p.id}" is not a lower-case id`);
    // One id may be listed in several versions (a transition window); the first listed is the current one.
    if (seen.has(`${p.id}@${p.version}`)) fail(`pack ${p.id} ${p.version} listed twice`);
    seen.add(`${p.id}@${p.version}`);
    if (!p.version) fail(`pack ${p.id}: version missing`);
    if (p.kind !== 'xsd' && p.kind !== 'schematron') fail(`pack ${p.id}: kind must be xsd or schematron`);
    if (!Array.isArray(p.sources) || p.sources.length === 0) fail(`pack ${p.id}: sources missing`);
    for (const s of p.sources) {
      if (!m.artifacts[s.artifact]) fail(`pack ${p.id}: unknown artifact ${s.artifact}`);
      if (!Array.isArray(s.include) || s.include.length === 0)
        fail(`pack ${p.id}: source ${s.artifact} has no include`);
      if (pinned) {
        const files = Object.entries(s.sha256 || {});
        if (files.length === 0)
          fail(`pack ${p.id}: files of ${s.artifact} not pinned (run npm run rules:fetch -- --pin)`);
        for (const [f, h] of files) if (!SHA256.test(h)) fail(`pack ${p.id}: ${f} has no valid sha256`);
      }
    }
    if (p.kind === 'xsd' && (!p.entries || Object.keys(p.entries).length === 0))
      fail(`pack ${p.id}: xsd pack without entries`);
    if (p.kind === 'schematron' && (!Array.isArray(p.xslt) || p.xslt.length === 0))
      fail(`pack ${p.id}: schematron pack without xslt`);
  }
  return m;
}

function readManifest(file, opts = { pinned: true }) {
  let m;
  try {
    m = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (e) {
    fail(`cannot read ${file}: ${e.message}`);
  }
  return checkManifest(m, opts);
}

/** Every file a pack uses, as { artifact, path, sha256 } (sha256 undefined while unpinned). */
function packFiles(pack) {
  const out = [];
  for (const s of pack.sources)
    for (const [path, sha] of Object.entries(s.sha256 || {})) out.push({ artifact: s.artifact, path, sha256: sha });
  return out;
}

module.exports = { canonicalJson, sha256, packFingerprint, checkManifest, readManifest, packFiles, SHA256 };
