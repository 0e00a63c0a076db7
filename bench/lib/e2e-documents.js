'use strict';
// The end-to-end benchmark's invoices: the demo invoice (scripts/demo/invoice.xml, Peppol BIS Billing 3.0 from the
// demo sender to the demo receiver) grown to an exact size or line count with zero-amount lines, so its totals, VAT
// breakdown and every business rule still hold, or carrying an embedded attachment (an AdditionalDocumentReference
// with a base64 PDF, BT-125) up to an exact size; a new invoice number (same length) for every upload.

const fs = require('node:fs');

const INVOICE_NUMBER = '<cbc:ID>DEMO-2025-0001</cbc:ID>';
const NUMBER_LENGTH = 'DEMO-2025-0001'.length;

function zeroLine(n) {
  return (
    `  <cac:InvoiceLine>\n` +
    `    <cbc:ID>${n}</cbc:ID>\n` +
    `    <cbc:InvoicedQuantity unitCode="C62">1</cbc:InvoicedQuantity>\n` +
    `    <cbc:LineExtensionAmount currencyID="EUR">0.00</cbc:LineExtensionAmount>\n` +
    `    <cac:Item>\n` +
    `      <cbc:Name>Sample ${n}</cbc:Name>\n` +
    `      <cac:ClassifiedTaxCategory>\n` +
    `        <cbc:ID>S</cbc:ID>\n` +
    `        <cbc:Percent>21</cbc:Percent>\n` +
    `        <cac:TaxScheme>\n` +
    `          <cbc:ID>VAT</cbc:ID>\n` +
    `        </cac:TaxScheme>\n` +
    `      </cac:ClassifiedTaxCategory>\n` +
    `    </cac:Item>\n` +
    `    <cac:Price>\n` +
    `      <cbc:PriceAmount currencyID="EUR">0.00</cbc:PriceAmount>\n` +
    `    </cac:Price>\n` +
    `  </cac:InvoiceLine>\n`
  );
}

/** The source's parts around its invoice lines: everything up to the last line, and `</Invoice>` on. */
function splitSource(source) {
  const closeTag = '</Invoice>';
  const lastLineEnd = source.lastIndexOf('</cac:InvoiceLine>');
  const closeAt = source.lastIndexOf(closeTag);
  if (lastLineEnd < 0 || closeAt < lastLineEnd) throw new Error('source invoice has no line or no </Invoice>');
  if (!source.includes(INVOICE_NUMBER)) throw new Error(`source invoice has no ${INVOICE_NUMBER}`);
  const headEnd = source.indexOf('\n', lastLineEnd) + 1;
  const head = source.slice(0, headEnd);
  return { head, tail: source.slice(closeAt), existing: (head.match(/<cac:InvoiceLine>/g) || []).length };
}

/** The built text's bytes, its line count, and `withNumber(number)`: a copy under another number of the same length. */
function finish(text, lines) {
  const body = Buffer.from(text, 'utf8');
  const at = body.indexOf(INVOICE_NUMBER) + '<cbc:ID>'.length;
  return {
    body,
    lines,
    withNumber(number) {
      if (number.length !== NUMBER_LENGTH) throw new Error(`invoice number must have ${NUMBER_LENGTH} characters`);
      const copy = Buffer.from(body);
      copy.write(number, at, 'latin1');
      return copy;
    },
  };
}

/**
 * The source invoice (text) grown to exactly `targetBytes`: its own lines, then zero-amount lines numbered after
 * them, then spaces before `</Invoice>`.
 */
function growInvoice(source, targetBytes) {
  const { head, tail, existing } = splitSource(source);
  const parts = [head];
  let size = Buffer.byteLength(head) + Buffer.byteLength(tail);
  if (size > targetBytes) throw new Error(`${targetBytes} bytes is smaller than the source invoice (${size})`);
  for (let n = existing + 1; ; n++) {
    const line = zeroLine(n);
    const len = Buffer.byteLength(line);
    if (size + len > targetBytes) break;
    parts.push(line);
    size += len;
  }
  parts.push(' '.repeat(targetBytes - size), tail);
  const built = finish(parts.join(''), parts.length - 3 + existing);
  if (built.body.length !== targetBytes) throw new Error(`built ${built.body.length} bytes, wanted ${targetBytes}`);
  return built;
}

/** The source invoice with exactly `lines` invoice lines: its own, then zero-amount lines numbered after them. */
function invoiceWithLines(source, lines) {
  const { head, tail, existing } = splitSource(source);
  if (lines < existing) throw new Error(`the source invoice has ${existing} lines, more than ${lines}`);
  const parts = [head];
  for (let n = existing + 1; n <= lines; n++) parts.push(zeroLine(n));
  parts.push(tail);
  return finish(parts.join(''), lines);
}

/**
 * The source invoice with one embedded attachment (BT-122..BT-125: an AdditionalDocumentReference whose
 * EmbeddedDocumentBinaryObject is a base64 PDF of pseudo-random content) making it exactly `targetBytes`, the rest
 * spaces before `</Invoice>`. The reference goes where UBL's sequence puts it: before AccountingSupplierParty.
 */
function invoiceWithAttachment(source, targetBytes) {
  const { existing } = splitSource(source);
  const at = source.indexOf('<cac:AccountingSupplierParty>');
  if (at < 0) throw new Error('source invoice has no AccountingSupplierParty');
  const open =
    '<cac:AdditionalDocumentReference>\n' +
    '    <cbc:ID>ATT-1</cbc:ID>\n' +
    '    <cbc:DocumentDescription>Timesheet</cbc:DocumentDescription>\n' +
    '    <cac:Attachment>\n' +
    '      <cbc:EmbeddedDocumentBinaryObject mimeCode="application/pdf" filename="timesheet.pdf">';
  const close = '</cbc:EmbeddedDocumentBinaryObject>\n    </cac:Attachment>\n  </cac:AdditionalDocumentReference>\n  ';
  const head = source.slice(0, at) + open;
  const tail = close + source.slice(at);
  const room = targetBytes - Buffer.byteLength(head) - Buffer.byteLength(tail);
  if (room < 1024) throw new Error(`${targetBytes} bytes leaves no room for an attachment`);
  const rawBytes = Math.floor(room / 4) * 3;
  // Deterministic filler (a PDF header, then a xorshift stream): base64 of it does not compress much, as a scan would not.
  const raw = Buffer.alloc(rawBytes);
  const header = Buffer.from('%PDF-1.4\n');
  header.copy(raw);
  let x = 0x9e3779b9;
  for (let i = header.length; i < rawBytes; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    raw[i] = x & 0xff;
  }
  const b64 = raw.toString('base64');
  const closeAt = tail.lastIndexOf('</Invoice>');
  const padding = ' '.repeat(room - b64.length);
  const text = head + b64 + tail.slice(0, closeAt) + padding + tail.slice(closeAt);
  const built = finish(text, existing);
  if (built.body.length !== targetBytes) throw new Error(`built ${built.body.length} bytes, wanted ${targetBytes}`);
  return { ...built, attachmentBytes: rawBytes };
}

function growInvoiceFile(file, targetBytes) {
  return growInvoice(fs.readFileSync(file, 'utf8'), targetBytes);
}

function invoiceWithLinesFile(file, lines) {
  return invoiceWithLines(fs.readFileSync(file, 'utf8'), lines);
}

function invoiceWithAttachmentFile(file, targetBytes) {
  return invoiceWithAttachment(fs.readFileSync(file, 'utf8'), targetBytes);
}

module.exports = {
  growInvoice,
  growInvoiceFile,
  invoiceWithLines,
  invoiceWithLinesFile,
  invoiceWithAttachment,
  invoiceWithAttachmentFile,
  NUMBER_LENGTH,
};
