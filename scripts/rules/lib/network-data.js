'use strict';
// The Peppol network data of transforms/rules-manifest.json (its `network` entry): the OpenPeppol code lists
// (participant identifier schemes, document types, processes, transport profiles) and the Peppol PKI trust stores,
// taken from pinned Maven Central jars exactly as rule packs are (jar and every file checked against its sha256).
// The code lists are read into one JSON file, codelists.json, which src/peppol/network-rules loads; the trust stores
// are copied as they are (the runtime checks them against the manifest again when it loads them).

const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');
const { DOMParser } = require('@xmldom/xmldom');
const { canonicalJson, sha256 } = require('./manifest');
const { openZip } = require('./zip');

const NETWORK_DIR = '_network';
const STAMP = 'network.json';
const CODE_LISTS_FILE = 'codelists.json';
const CODE_LIST_KINDS = {
  participantSchemes: 'Participant identifier schemes',
  documentTypes: 'Document types',
  processes: 'Processes',
  transportProfiles: 'Transport profiles',
};
const SHA256 = /^[0-9a-f]{64}$/;

/** Where the network data of one manifest version lives: <rulesDir>/_network/<version>. */
function networkDataDir(rulesDir, network) {
  return path.join(rulesDir, NETWORK_DIR, network.version);
}

function checkNetwork(manifest, { pinned }) {
  const n = manifest.network;
  if (!n) throw new Error('rules manifest: network entry missing');
  if (!/^[A-Za-z0-9][A-Za-z0-9.+_-]*$/.test(n.version || '')) throw new Error('rules manifest: network.version');
  if (!Array.isArray(n.sources) || n.sources.length === 0) throw new Error('rules manifest: network.sources missing');
  for (const s of n.sources) {
    if (!manifest.artifacts[s.artifact]) throw new Error(`rules manifest: network: unknown artifact ${s.artifact}`);
    if (!Array.isArray(s.include) || s.include.length === 0)
      throw new Error(`rules manifest: network: source ${s.artifact} has no include`);
    if (pinned)
      for (const [f, h] of Object.entries(s.sha256 || {}))
        if (!SHA256.test(h)) throw new Error(`rules manifest: network: ${f} has no valid sha256`);
  }
  return n;
}

function networkFingerprint(manifest) {
  const artifacts = {};
  for (const s of manifest.network.sources) artifacts[s.artifact] = manifest.artifacts[s.artifact];
  return sha256(canonicalJson({ network: manifest.network, artifacts }));
}

/** The files of a source: the pinned list, or (while pinning) every entry that an include names or starts. */
function sourceFiles(source, zip, pin) {
  if (!pin) return Object.keys(source.sha256 || {});
  const want = zip
    .names()
    .filter(
      (n) => !n.endsWith('/') && source.include.some((inc) => (inc.endsWith('/') ? n.startsWith(inc) : n === inc)),
    )
    .filter((n) => !/\.(md5|sha256|md)$/.test(n));
  if (want.length === 0) throw new Error(`network: nothing in ${source.artifact} matches ${source.include.join(', ')}`);
  return want.sort();
}

// ---------------------------------------------------------------------------------------------------------------
// The code lists (OpenPeppol eDEC code list XML, as shipped in peppol-id's external/codelists/)

function attrs(el, names) {
  const out = {};
  for (const [key, attr] of Object.entries(names)) {
    const v = el.getAttribute(attr);
    if (v) out[key] = v;
  }
  return out;
}

const COMMON = {
  state: 'state',
  initialRelease: 'initial-release',
  deprecationRelease: 'deprecation-release',
  removalDate: 'removal-date',
};

function parseCodeList(kind, xml, file) {
  const doc = new DOMParser({ onError: () => undefined }).parseFromString(xml, 'text/xml');
  const root = doc.documentElement;
  if (!root) throw new Error(`network: ${file} is not XML`);
  const version = root.getAttribute('version');
  const children = (local) => Array.from(root.getElementsByTagName(local));
  let entries;
  if (kind === 'participantSchemes') {
    entries = children('participant-identifier-scheme').map((e) => ({
      ...attrs(e, { icd: 'iso6523', schemeId: 'schemeid', country: 'country', name: 'scheme-name' }),
      ...attrs(e, COMMON),
    }));
  } else if (kind === 'documentTypes') {
    entries = children('document-type').map((e) => ({
      ...attrs(e, { name: 'name', scheme: 'scheme', value: 'value' }),
      ...attrs(e, COMMON),
      processes: Array.from(e.getElementsByTagName('process-id')).map((p) => ({
        scheme: p.getAttribute('scheme'),
        value: p.getAttribute('value'),
      })),
    }));
  } else if (kind === 'processes') {
    entries = children('process').map((e) => ({
      ...attrs(e, { scheme: 'scheme', value: 'value' }),
      ...attrs(e, COMMON),
    }));
  } else {
    entries = children('transport-profile').map((e) => ({
      ...attrs(e, { id: 'profile-id', protocol: 'protocol', profileVersion: 'profile-version' }),
      ...attrs(e, COMMON),
    }));
  }
  const expected = Number(root.getAttribute('entry-count'));
  if (!version || entries.length === 0 || (Number.isFinite(expected) && expected !== entries.length))
    throw new Error(`network: ${file}: version ${version}, ${entries.length} entries of ${expected} announced`);
  return { version, entries };
}

/** codelists.json from the extracted files: every kind of CODE_LIST_KINDS must be there exactly once. */
function buildCodeLists(filesDir, names, source) {
  const out = { source, lists: {} };
  for (const [kind, title] of Object.entries(CODE_LIST_KINDS)) {
    const hits = names.filter(
      (n) => path.basename(n).startsWith(`Peppol Code Lists - ${title} v`) && n.endsWith('.xml'),
    );
    if (hits.length !== 1) throw new Error(`network: expected one "${title}" code list, found ${hits.length}`);
    const file = hits[0];
    out.lists[kind] = {
      file: path.basename(file),
      ...parseCodeList(kind, fs.readFileSync(path.join(filesDir, file), 'utf8'), file),
    };
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------------------

function safeJoin(root, rel) {
  const out = path.resolve(root, rel);
  if (!out.startsWith(root + path.sep)) throw new Error(`unsafe path in manifest: ${rel}`);
  return out;
}

function upToDate(dir, fingerprint) {
  try {
    const stamp = JSON.parse(fs.readFileSync(path.join(dir, STAMP), 'utf8'));
    return (
      stamp.fingerprint === fingerprint &&
      fs.existsSync(path.join(dir, CODE_LISTS_FILE)) &&
      Object.keys(stamp.files).every((f) => fs.existsSync(path.join(dir, 'files', f)))
    );
  } catch {
    return false;
  }
}

/**
 * Makes the network data of the manifest ready in <rulesDir>/_network/<version>; `ensureJars` is fetch.js's (Maven,
 * pinned jar checksums). While pinning, missing file checksums are filled into the manifest object.
 */
async function ensureNetworkData(manifest, rulesDir, { pin, log, ensureJars, force }) {
  const network = checkNetwork(manifest, { pinned: !pin });
  const dir = networkDataDir(rulesDir, network);
  const needsPin = pin && network.sources.some((s) => Object.keys(s.sha256 || {}).length === 0);
  if (!force && !needsPin && upToDate(dir, networkFingerprint(manifest))) return { dir, built: false };
  const names = [...new Set(network.sources.map((s) => s.artifact))];
  const jars = await ensureJars(manifest, names, path.join(rulesDir, '_jars'), { pin, log });
  const build = path.join(
    rulesDir,
    NETWORK_DIR,
    `.${network.version}.build-${process.pid}-${crypto.randomBytes(4).toString('hex')}`,
  );
  fs.rmSync(build, { recursive: true, force: true });
  const filesDir = path.join(build, 'files');
  const written = {};
  try {
    for (const source of network.sources) {
      const zip = openZip(jars[source.artifact]);
      const list = sourceFiles(source, zip, pin);
      if (pin) source.sha256 = Object.fromEntries(list.map((n) => [n, source.sha256?.[n] ?? '']));
      for (const name of list) {
        const data = zip.read(name);
        const actual = sha256(data);
        if (pin && !source.sha256[name]) source.sha256[name] = actual;
        else if (actual !== source.sha256[name])
          throw new Error(
            `network data: ${source.artifact}!${name} has sha256 ${actual}, pinned ${source.sha256[name]}`,
          );
        const out = safeJoin(filesDir, name);
        fs.mkdirSync(path.dirname(out), { recursive: true });
        fs.writeFileSync(out, data);
        written[name] = actual;
      }
    }
    const codeListSource = network.sources.find((s) => Object.keys(s.sha256).some((n) => n.endsWith('.xml')));
    const codeLists = buildCodeLists(
      filesDir,
      Object.keys(written),
      codeListSource ? manifest.artifacts[codeListSource.artifact].coordinates : 'unknown',
    );
    fs.writeFileSync(path.join(build, CODE_LISTS_FILE), `${JSON.stringify(codeLists)}\n`);
    const stamp = { version: network.version, fingerprint: networkFingerprint(manifest), files: written };
    fs.writeFileSync(path.join(build, STAMP), `${JSON.stringify(stamp, null, 2)}\n`);
    fs.rmSync(dir, { recursive: true, force: true });
    fs.mkdirSync(path.dirname(dir), { recursive: true });
    fs.renameSync(build, dir);
  } catch (e) {
    fs.rmSync(build, { recursive: true, force: true });
    throw e;
  }
  log(`network data ${network.version} ready in ${dir}`);
  return { dir, built: true };
}

module.exports = { ensureNetworkData, networkDataDir, parseCodeList, NETWORK_DIR, CODE_LISTS_FILE };
