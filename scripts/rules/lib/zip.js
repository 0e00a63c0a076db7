'use strict';
// Reads single entries out of a jar (a zip file) with node:zlib only, so extracting rule files needs no unzip or
// jar binary on the machine. Supports what Maven jars use: stored and deflated entries, no zip64, no encryption.

const fs = require('node:fs');
const zlib = require('node:zlib');

const EOCD_SIG = 0x06054b50;
const CDIR_SIG = 0x02014b50;
const LOCAL_SIG = 0x04034b50;
// End of central directory record: 22 bytes plus a comment of at most 65,535 bytes.
const EOCD_MAX_SEARCH = 22 + 0xffff;
// Rule files are at most a few MB; anything far larger in a jar is not what we asked for.
const MAX_ENTRY_BYTES = 64 * 1024 * 1024;

function findEocd(buf) {
  const stop = Math.max(0, buf.length - EOCD_MAX_SEARCH);
  for (let i = buf.length - 22; i >= stop; i--) {
    if (buf.readUInt32LE(i) === EOCD_SIG) return i;
  }
  throw new Error('not a zip file (no end of central directory record)');
}

/** Lists the entries of a zip held in memory: name → { method, compressedSize, size, localOffset }. */
function listEntries(buf) {
  const eocd = findEocd(buf);
  const count = buf.readUInt16LE(eocd + 10);
  let p = buf.readUInt32LE(eocd + 16);
  const entries = new Map();
  for (let k = 0; k < count; k++) {
    if (buf.readUInt32LE(p) !== CDIR_SIG) throw new Error(`corrupt zip: bad central directory entry ${k}`);
    const flags = buf.readUInt16LE(p + 8);
    const method = buf.readUInt16LE(p + 10);
    const compressedSize = buf.readUInt32LE(p + 20);
    const size = buf.readUInt32LE(p + 24);
    const nameLen = buf.readUInt16LE(p + 28);
    const extraLen = buf.readUInt16LE(p + 30);
    const commentLen = buf.readUInt16LE(p + 32);
    const localOffset = buf.readUInt32LE(p + 42);
    const name = buf.toString(flags & 0x800 ? 'utf8' : 'latin1', p + 46, p + 46 + nameLen);
    entries.set(name, { method, compressedSize, size, localOffset, encrypted: (flags & 1) === 1 });
    p += 46 + nameLen + extraLen + commentLen;
  }
  return entries;
}

function readEntry(buf, entry, name) {
  if (entry.encrypted) throw new Error(`${name}: encrypted zip entries are not supported`);
  if (entry.size > MAX_ENTRY_BYTES) throw new Error(`${name}: entry of ${entry.size} bytes is larger than expected`);
  const p = entry.localOffset;
  if (buf.readUInt32LE(p) !== LOCAL_SIG) throw new Error(`${name}: bad local header`);
  const start = p + 30 + buf.readUInt16LE(p + 26) + buf.readUInt16LE(p + 28);
  const raw = buf.subarray(start, start + entry.compressedSize);
  let out;
  if (entry.method === 0) out = Buffer.from(raw);
  else if (entry.method === 8) out = zlib.inflateRawSync(raw, { maxOutputLength: MAX_ENTRY_BYTES });
  else throw new Error(`${name}: unsupported compression method ${entry.method}`);
  if (out.length !== entry.size)
    throw new Error(`${name}: size ${out.length} differs from the directory's ${entry.size}`);
  return out;
}

/** An opened jar: names() and read(name) → Buffer. */
function openZip(file) {
  const buf = fs.readFileSync(file);
  const entries = listEntries(buf);
  return {
    names: () => [...entries.keys()],
    has: (name) => entries.has(name),
    read(name) {
      const e = entries.get(name);
      if (!e) throw new Error(`${file}: no entry ${name}`);
      return readEntry(buf, e, name);
    },
  };
}

module.exports = { openZip };
