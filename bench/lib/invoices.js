'use strict';
// Benchmark payloads: real UBL invoices from the shared corpus, grown to an exact byte size with more invoice lines.
// The corpus stays outside the repo; it is read at run time.

const fs = require('node:fs');
const path = require('node:path');

const REPO_ROOT = path.resolve(__dirname, '..', '..');
const CORPUS_DIR = path.resolve(REPO_ROOT, '..', 'shared', 'corpus');
const DEFAULT_SOURCE = 'en16931/ubl-examples/ubl-tc434-example1.xml';

const KiB = 1024;
const MiB = 1024 * 1024;

function readSource(relative = DEFAULT_SOURCE) {
  const file = path.join(CORPUS_DIR, relative);
  if (!fs.existsSync(file)) {
    throw new Error(`benchmark source invoice not found: ${file} (the shared corpus must sit next to the repo)`);
  }
  return fs.readFileSync(file, 'utf8');
}

/**
 * Splits a UBL invoice into the part before the first line, one line (as a template), and the part after the last
 * line. The template's first cbc:ID is the line number, so copies can be numbered.
 */
function splitInvoice(xml) {
  const open = '<cac:InvoiceLine>';
  const close = '</cac:InvoiceLine>';
  const first = xml.indexOf(open);
  const last = xml.lastIndexOf(close);
  if (first < 0 || last < 0) throw new Error('source invoice has no cac:InvoiceLine');
  // Keep each line's indentation with it so the grown document still reads like the original.
  const lineStart = xml.lastIndexOf('\n', first) + 1;
  const firstEnd = xml.indexOf(close, first) + close.length;
  const template = xml.slice(lineStart, firstEnd) + '\n';
  if (!/<cbc:ID>[^<]*<\/cbc:ID>/.test(template)) throw new Error('invoice line template has no cbc:ID');
  const head = xml.slice(0, lineStart);
  const tail = xml.slice(last + close.length).replace(/^\r?\n/, '');
  return { head, template, tail };
}

/**
 * A well-formed UBL invoice of exactly `targetBytes` bytes: the source's header and parties, then numbered copies of
 * its first invoice line, then whitespace before the closing tag to land on the exact size. Totals are not
 * recomputed: intake stores bytes and detects the format; it does not check arithmetic (yet).
 */
function buildUblInvoice(targetBytes, { source = DEFAULT_SOURCE } = {}) {
  const { head, template, tail } = splitInvoice(readSource(source));
  const fixed = Buffer.byteLength(head) + Buffer.byteLength(tail);
  const parts = [head];
  let size = fixed;
  for (let n = 1; ; n++) {
    const line = template.replace(/<cbc:ID>[^<]*<\/cbc:ID>/, `<cbc:ID>${n}</cbc:ID>`);
    const len = Buffer.byteLength(line);
    if (size + len > targetBytes) break;
    parts.push(line);
    size += len;
    if (n > 10_000_000) throw new Error('invoice line loop did not end');
  }
  if (parts.length === 1)
    throw new Error(
      `${targetBytes} bytes is too small for one invoice line (needs ${fixed + Buffer.byteLength(template)})`,
    );
  // Whitespace between elements is insignificant in UBL, so it pads without changing the document's meaning.
  const closeAt = tail.lastIndexOf('</Invoice>');
  if (closeAt < 0) throw new Error('source invoice does not end with </Invoice>');
  const pad = ' '.repeat(targetBytes - size);
  parts.push(tail.slice(0, closeAt), pad, tail.slice(closeAt));
  const out = Buffer.from(parts.join(''), 'utf8');
  if (out.length !== targetBytes) throw new Error(`built ${out.length} bytes, wanted ${targetBytes}`);
  return { body: out, lines: parts.length - 4, source };
}

function formatBytes(n) {
  if (n >= MiB) return `${+(n / MiB).toFixed(1)} MiB`;
  if (n >= KiB) return `${+(n / KiB).toFixed(1)} KiB`;
  return `${n} B`;
}

module.exports = { CORPUS_DIR, DEFAULT_SOURCE, KiB, MiB, buildUblInvoice, splitInvoice, formatBytes };
