'use strict';
// A local SML zone: an authoritative DNS server on loopback (UDP) answering the U-NAPTR questions of SML lookups
// (src/peppol/sml.ts) from a zone file, so `npm start`'s demo parties resolve to our own SMP without any real DNS.
// The zone file is JSON, `{ "<NAPTR name>": [{ order, preference, flags, service, regexp, replacement }] }`, written by
// `admin seed-demo --sml-zone-file` (src/main/seed-demo.ts); it is read on every question, so a registration counts
// at once. Names not in it answer NXDOMAIN; other record types of a name in it answer an empty NOERROR.
const dgram = require('node:dgram');
const fs = require('node:fs');

const TYPE_NAPTR = 35;
const CLASS_IN = 1;
const RCODE_FORMERR = 1;
const RCODE_NXDOMAIN = 3;
const TTL_SECONDS = 60;

/** Reads the zone file; a missing or unreadable file is an empty zone. Names are compared lower-cased. */
function readZone(file) {
  try {
    const raw = JSON.parse(fs.readFileSync(file, 'utf8'));
    const zone = new Map();
    for (const [name, records] of Object.entries(raw)) zone.set(name.toLowerCase().replace(/\.$/, ''), records);
    return zone;
  } catch {
    return new Map();
  }
}

/** The question of a query: its name, type and the byte offset where the question section ends. */
function parseQuestion(msg) {
  if (msg.length < 12 || msg.readUInt16BE(4) < 1) return undefined;
  const labels = [];
  let at = 12;
  for (;;) {
    if (at >= msg.length) return undefined;
    const len = msg[at];
    if (len === 0) break;
    if (len > 63 || at + 1 + len > msg.length) return undefined;
    labels.push(msg.toString('latin1', at + 1, at + 1 + len));
    at += 1 + len;
  }
  at += 1;
  if (at + 4 > msg.length) return undefined;
  return { name: labels.join('.').toLowerCase(), type: msg.readUInt16BE(at), end: at + 4 };
}

function characterString(s) {
  const b = Buffer.from(String(s), 'utf8');
  if (b.length > 255) throw new Error('character-string longer than 255 bytes');
  return Buffer.concat([Buffer.from([b.length]), b]);
}

function domainName(name) {
  const labels = String(name || '')
    .replace(/\.$/, '')
    .split('.')
    .filter((l) => l.length > 0);
  return Buffer.concat([...labels.map(characterString), Buffer.from([0])]);
}

/** NAPTR RDATA (RFC 3403 §4.1). */
function naptrRdata(r) {
  const head = Buffer.alloc(4);
  head.writeUInt16BE(r.order, 0);
  head.writeUInt16BE(r.preference, 2);
  return Buffer.concat([
    head,
    characterString(r.flags),
    characterString(r.service),
    characterString(r.regexp),
    domainName(r.replacement),
  ]);
}

/** The answer to one query message (header flags: QR, AA, the query's opcode and RD). */
function answer(msg, zoneFile) {
  const header = Buffer.alloc(12);
  header.writeUInt16BE(msg.length >= 2 ? msg.readUInt16BE(0) : 0, 0);
  const query = msg.length >= 4 ? msg.readUInt16BE(2) : 0;
  const flags = 0x8000 | (query & 0x7800) | 0x0400 | (query & 0x0100);
  const q = parseQuestion(msg);
  if (!q) {
    header.writeUInt16BE(flags | RCODE_FORMERR, 2);
    return header;
  }
  const question = msg.subarray(12, q.end);
  header.writeUInt16BE(1, 4);
  const records = readZone(zoneFile).get(q.name.replace(/\.$/, ''));
  if (!records) {
    header.writeUInt16BE(flags | RCODE_NXDOMAIN, 2);
    return Buffer.concat([header, question]);
  }
  const answers = q.type === TYPE_NAPTR ? records : [];
  header.writeUInt16BE(flags, 2);
  header.writeUInt16BE(answers.length, 6);
  const rrs = answers.map((r) => {
    const rdata = naptrRdata(r);
    const rr = Buffer.alloc(12);
    rr.writeUInt16BE(0xc00c, 0); // the name: a pointer to the question's
    rr.writeUInt16BE(TYPE_NAPTR, 2);
    rr.writeUInt16BE(CLASS_IN, 4);
    rr.writeUInt32BE(TTL_SECONDS, 6);
    rr.writeUInt16BE(rdata.length, 10);
    return Buffer.concat([rr, rdata]);
  });
  return Buffer.concat([header, question, ...rrs]);
}

/**
 * Starts the server. Options: zoneFile (required), host (default 127.0.0.1), port (0 = any free one).
 * Resolves { host, port, address: 'host:port' (for PEPPOL_DNS_SERVERS), close() }.
 */
function startLocalSml({ zoneFile, host = '127.0.0.1', port = 0 }) {
  if (!zoneFile) throw new Error('startLocalSml needs a zoneFile');
  const socket = dgram.createSocket('udp4');
  socket.on('message', (msg, peer) => {
    let reply;
    try {
      reply = answer(msg, zoneFile);
    } catch {
      return; // a record that cannot be encoded: no answer, the resolver times out and reports a DNS failure
    }
    socket.send(reply, peer.port, peer.address);
  });
  return new Promise((resolve, reject) => {
    socket.once('error', reject);
    socket.bind(port, host, () => {
      socket.off('error', reject);
      const bound = socket.address().port;
      resolve({
        host,
        port: bound,
        address: `${host}:${bound}`,
        close: () => new Promise((done) => socket.close(() => done())),
      });
    });
  });
}

module.exports = { startLocalSml };
