'use strict';
// A local SMTP server that keeps what it receives (smtp-server): the e-mail channel's peer in tests and the mailbox
// of `npm start`'s demo. Loopback only, no AUTH, no STARTTLS. Each accepted message is kept in memory and, with
// `dir`, written there as <n>-<time>.eml (open it in any mail client). `answer(stage, session, address)` may return
// { code, message } to refuse a MAIL FROM, RCPT TO or DATA (tests script 421 / 550 answers with it).
const fs = require('node:fs');
const path = require('node:path');
const { SMTPServer } = require('smtp-server');

const MAX_MESSAGE_BYTES = 64 * 1024 * 1024;

function refusal(answer) {
  if (!answer) return null;
  const err = new Error(answer.message || `refused with ${answer.code}`);
  err.responseCode = answer.code;
  return err;
}

/**
 * Starts the sink on 127.0.0.1. Options: port (0 = any free one), dir (write .eml files), answer (see above),
 * delay (stage, session, address) → ms before answering RCPT, maxBytes. Resolves { host, port, messages, close() };
 * messages: [{ seq, from, to, raw, file? }].
 */
function startSmtpSink({
  port = 0,
  dir,
  answer = () => undefined,
  delay = () => undefined,
  maxBytes = MAX_MESSAGE_BYTES,
} = {}) {
  const messages = [];
  if (dir) fs.mkdirSync(dir, { recursive: true });
  const server = new SMTPServer({
    name: 'smtp-sink.localhost',
    banner: 'Invoice Gateway local SMTP sink',
    authOptional: true,
    disabledCommands: ['AUTH', 'STARTTLS'],
    size: maxBytes,
    logger: false,
    onMailFrom(address, session, callback) {
      callback(refusal(answer('mail', session, address.address)));
    },
    onRcptTo(address, session, callback) {
      // A slow server: the answer to RCPT comes after `delay` ms (a client may go away meanwhile).
      const ms = delay('rcpt', session, address.address);
      const reply = () => callback(refusal(answer('rcpt', session, address.address)));
      if (ms) setTimeout(reply, ms);
      else reply();
    },
    onData(stream, session, callback) {
      const chunks = [];
      stream.on('data', (c) => chunks.push(c));
      stream.on('end', () => {
        if (stream.sizeExceeded) {
          const err = new Error(`message larger than ${maxBytes} bytes`);
          err.responseCode = 552;
          callback(err);
          return;
        }
        const refused = refusal(answer('data', session));
        if (refused) {
          callback(refused);
          return;
        }
        const raw = Buffer.concat(chunks);
        const seq = messages.length + 1;
        const message = {
          seq,
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          raw,
        };
        if (dir) {
          message.file = path.join(dir, `${String(seq).padStart(4, '0')}-${Date.now()}.eml`);
          fs.writeFileSync(message.file, raw);
        }
        messages.push(message);
        callback(null, `queued as ${seq}`);
      });
    },
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', reject);
      // A client that misbehaves must not bring the sink down.
      server.on('error', () => {});
      resolve({
        host: '127.0.0.1',
        port: server.server.address().port,
        messages,
        close: () => new Promise((done) => server.close(() => done())),
      });
    });
  });
}

module.exports = { startSmtpSink };
