'use strict';
// The end-to-end benchmark's invoice: the demo invoice (scripts/demo/invoice.xml, Peppol BIS Billing 3.0 from the
// demo sender to the demo receiver) grown to an exact size with zero-amount lines, so its totals, VAT breakdown and
// every business rule still hold, and a new invoice number (same length) for every upload.

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

/**
 * The source invoice (text) grown to exactly `targetBytes`: its own lines, then zero-amount lines numbered after
 * them, then spaces before `</Invoice>`. Returns the bytes and `withNumber(number)`, a copy under another invoice
 * number of the same length.
 */
function growInvoice(source, targetBytes) {
  const closeTag = '</Invoice>';
  const lastLineEnd = source.lastIndexOf('</cac:InvoiceLine>');
  const closeAt = source.lastIndexOf(closeTag);
  if (lastLineEnd < 0 || closeAt < lastLineEnd) throw new Error('source invoice has no line or no </Invoice>');
  if (!source.includes(INVOICE_NUMBER)) throw new Error(`source invoice has no ${INVOICE_NUMBER}`);
  const headEnd = source.indexOf('\n', lastLineEnd) + 1;
  const head = source.slice(0, headEnd);
  const tail = source.slice(closeAt);
  const existing = (head.match(/<cac:InvoiceLine>/g) || []).length;
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
  const text = parts.join('');
  const body = Buffer.from(text, 'utf8');
  if (body.length !== targetBytes) throw new Error(`built ${body.length} bytes, wanted ${targetBytes}`);
  const at = body.indexOf(INVOICE_NUMBER) + '<cbc:ID>'.length;
  return {
    body,
    lines: parts.length - 3 + existing,
    withNumber(number) {
      if (number.length !== NUMBER_LENGTH) throw new Error(`invoice number must have ${NUMBER_LENGTH} characters`);
      const copy = Buffer.from(body);
      copy.write(number, at, 'latin1');
      return copy;
    },
  };
}

function growInvoiceFile(file, targetBytes) {
  return growInvoice(fs.readFileSync(file, 'utf8'), targetBytes);
}

module.exports = { growInvoice, growInvoiceFile, NUMBER_LENGTH };
