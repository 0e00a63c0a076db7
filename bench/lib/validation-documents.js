'use strict';
// Valid EN 16931 UBL invoices of a chosen size for the validation benchmark, built from a corpus example
// (ubl-tc434-example4.xml: DKK, standard rate 25 % and 12 %). Unlike the intake payloads these must stay valid, so
// every line is written out with its own quantity and price, and the VAT breakdown and document totals are
// recomputed in integer cents. An attachment is a generated CSV (a real text/csv, base64 in
// cac:AdditionalDocumentReference/cac:Attachment/cbc:EmbeddedDocumentBinaryObject), so the mime code tells the truth.

const fs = require('node:fs');
const path = require('node:path');
const { CORPUS_DIR, MiB } = require('./invoices');

const SOURCE = 'en16931/ubl-examples/ubl-tc434-example4.xml';
const CURRENCY = 'DKK';
const RATES = [25, 12];

function cents(n) {
  const sign = n < 0 ? '-' : '';
  const a = Math.abs(n);
  return `${sign}${Math.floor(a / 100)}.${String(a % 100).padStart(2, '0')}`;
}

/** Line k (1-based): deterministic quantity, unit price (cents) and rate, so every build is byte-identical. */
function lineData(k) {
  const quantity = (k % 7) + 1;
  const priceCents = ((k * 37) % 900) + 125;
  const rate = RATES[k % RATES.length];
  return { quantity, priceCents, amountCents: quantity * priceCents, rate };
}

function lineXml(k) {
  const d = lineData(k);
  return (
    `    <cac:InvoiceLine>\n` +
    `        <cbc:ID>${k}</cbc:ID>\n` +
    `        <cbc:InvoicedQuantity unitCode="EA">${d.quantity}</cbc:InvoicedQuantity>\n` +
    `        <cbc:LineExtensionAmount currencyID="${CURRENCY}">${cents(d.amountCents)}</cbc:LineExtensionAmount>\n` +
    `        <cac:Item>\n` +
    `            <cbc:Description>Office supplies, article ${k}</cbc:Description>\n` +
    `            <cbc:Name>Article ${k}</cbc:Name>\n` +
    `            <cac:SellersItemIdentification>\n` +
    `                <cbc:ID>JB${String(k).padStart(6, '0')}</cbc:ID>\n` +
    `            </cac:SellersItemIdentification>\n` +
    `            <cac:ClassifiedTaxCategory>\n` +
    `                <cbc:ID>S</cbc:ID>\n` +
    `                <cbc:Percent>${d.rate}</cbc:Percent>\n` +
    `                <cac:TaxScheme>\n` +
    `                    <cbc:ID>VAT</cbc:ID>\n` +
    `                </cac:TaxScheme>\n` +
    `            </cac:ClassifiedTaxCategory>\n` +
    `        </cac:Item>\n` +
    `        <cac:Price>\n` +
    `            <cbc:PriceAmount currencyID="${CURRENCY}">${cents(d.priceCents)}</cbc:PriceAmount>\n` +
    `        </cac:Price>\n` +
    `    </cac:InvoiceLine>\n`
  );
}

function totalsXml(lines) {
  const taxable = new Map(RATES.map((r) => [r, 0]));
  let lineSum = 0;
  for (let k = 1; k <= lines; k++) {
    const d = lineData(k);
    lineSum += d.amountCents;
    taxable.set(d.rate, taxable.get(d.rate) + d.amountCents);
  }
  let taxSum = 0;
  const subtotals = [];
  for (const [rate, base] of taxable) {
    if (base === 0) continue;
    // BR-CO-17: category tax = taxable amount × rate / 100, rounded to two decimals.
    const tax = Math.round((base * rate) / 100);
    taxSum += tax;
    subtotals.push(
      `        <cac:TaxSubtotal>\n` +
        `            <cbc:TaxableAmount currencyID="${CURRENCY}">${cents(base)}</cbc:TaxableAmount>\n` +
        `            <cbc:TaxAmount currencyID="${CURRENCY}">${cents(tax)}</cbc:TaxAmount>\n` +
        `            <cac:TaxCategory>\n` +
        `                <cbc:ID>S</cbc:ID>\n` +
        `                <cbc:Percent>${rate}</cbc:Percent>\n` +
        `                <cac:TaxScheme>\n` +
        `                    <cbc:ID>VAT</cbc:ID>\n` +
        `                </cac:TaxScheme>\n` +
        `            </cac:TaxCategory>\n` +
        `        </cac:TaxSubtotal>\n`,
    );
  }
  return (
    `    <cac:TaxTotal>\n` +
    `        <cbc:TaxAmount currencyID="${CURRENCY}">${cents(taxSum)}</cbc:TaxAmount>\n` +
    subtotals.join('') +
    `    </cac:TaxTotal>\n` +
    `    <cac:LegalMonetaryTotal>\n` +
    `        <cbc:LineExtensionAmount currencyID="${CURRENCY}">${cents(lineSum)}</cbc:LineExtensionAmount>\n` +
    `        <cbc:TaxExclusiveAmount currencyID="${CURRENCY}">${cents(lineSum)}</cbc:TaxExclusiveAmount>\n` +
    `        <cbc:TaxInclusiveAmount currencyID="${CURRENCY}">${cents(lineSum + taxSum)}</cbc:TaxInclusiveAmount>\n` +
    `        <cbc:PayableAmount currencyID="${CURRENCY}">${cents(lineSum + taxSum)}</cbc:PayableAmount>\n` +
    `    </cac:LegalMonetaryTotal>\n`
  );
}

/** A deterministic CSV (a timesheet-like listing) of exactly `bytes` bytes. */
function csvAttachment(bytes) {
  const rows = ['date;article;hours;note\n'];
  let size = rows[0].length;
  for (let k = 1; size < bytes; k++) {
    const row = `2013-04-${String((k % 28) + 1).padStart(2, '0')};JB${String(k).padStart(6, '0')};${(k % 9) + 1};delivery batch ${k}\n`;
    rows.push(row);
    size += row.length;
  }
  return Buffer.from(rows.join(''), 'ascii').subarray(0, bytes);
}

function attachmentXml(csvBytes) {
  const data = csvAttachment(csvBytes).toString('base64');
  return (
    `    <cac:AdditionalDocumentReference>\n` +
    `        <cbc:ID>TS-1</cbc:ID>\n` +
    `        <cbc:DocumentDescription>Timesheet</cbc:DocumentDescription>\n` +
    `        <cac:Attachment>\n` +
    `            <cbc:EmbeddedDocumentBinaryObject mimeCode="text/csv" filename="timesheet.csv">${data}</cbc:EmbeddedDocumentBinaryObject>\n` +
    `        </cac:Attachment>\n` +
    `    </cac:AdditionalDocumentReference>\n`
  );
}

/** The source's header and parties, split where the generated parts go. */
function sourceParts() {
  const file = path.join(CORPUS_DIR, SOURCE);
  if (!fs.existsSync(file))
    throw new Error(`benchmark source invoice not found: ${file} (the shared corpus must sit next to the repo)`);
  const xml = fs.readFileSync(file, 'utf8');
  const afterOrderRef = xml.indexOf('</cac:OrderReference>');
  const taxTotal = xml.indexOf('<cac:TaxTotal>');
  const close = xml.lastIndexOf('</Invoice>');
  if (afterOrderRef < 0 || taxTotal < 0 || close < 0) throw new Error(`${SOURCE} no longer has the expected structure`);
  const headEnd = xml.indexOf('\n', afterOrderRef) + 1;
  // AdditionalDocumentReference follows OrderReference in the UBL 2.1 sequence.
  return {
    head: xml.slice(0, headEnd),
    parties: xml.slice(headEnd, xml.lastIndexOf('\n', taxTotal) + 1),
    close: xml.slice(close),
  };
}

/**
 * A valid invoice with `lines` lines and, when `attachmentBytes` > 0, an embedded CSV of that many bytes; `padTo`
 * appends whitespace before `</Invoice>` (insignificant in UBL) to land on an exact size.
 */
function buildInvoice({ lines, attachmentBytes = 0, padTo }) {
  if (!Number.isInteger(lines) || lines < 1) throw new Error(`an invoice needs at least one line, got ${lines}`);
  const p = sourceParts();
  const parts = [p.head];
  if (attachmentBytes > 0) parts.push(attachmentXml(attachmentBytes));
  parts.push(p.parties, totalsXml(lines));
  for (let k = 1; k <= lines; k++) parts.push(lineXml(k));
  let body = Buffer.from(parts.join('') + p.close, 'utf8');
  if (padTo !== undefined) {
    if (body.length > padTo) throw new Error(`invoice of ${lines} lines is ${body.length} bytes, more than ${padTo}`);
    const at = body.length - Buffer.byteLength(p.close);
    body = Buffer.concat([body.subarray(0, at), Buffer.alloc(padTo - body.length, ' '), body.subarray(at)]);
  }
  return { body, lines, attachmentBytes };
}

/** The most lines that fit in `targetBytes`, padded to exactly that size. */
function invoiceOfSize(targetBytes) {
  const base = buildInvoice({ lines: 1 }).body.length;
  const perLine = Buffer.byteLength(lineXml(1000));
  let lines = Math.max(1, Math.floor((targetBytes - base) / perLine));
  while (lines > 1 && buildInvoice({ lines }).body.length > targetBytes) lines--;
  while (buildInvoice({ lines: lines + 1 }).body.length <= targetBytes) lines++;
  return buildInvoice({ lines, padTo: targetBytes });
}

/** Three lines and a CSV attachment that brings the invoice to exactly `targetBytes`. */
function invoiceWithAttachment(targetBytes, lines = 3) {
  const base = buildInvoice({ lines, attachmentBytes: 1 }).body.length - 4;
  // base64 grows 3 bytes to 4.
  const csv = Math.floor(((targetBytes - base) * 3) / 4);
  return buildInvoice({ lines, attachmentBytes: csv, padTo: targetBytes });
}

/** The four benchmark documents of the validation suite. */
function benchmarkDocuments() {
  return [
    { name: '10 KiB', ...invoiceOfSize(10 * 1024) },
    { name: '100 KiB', ...invoiceOfSize(100 * 1024) },
    { name: '3 MiB, attachment', ...invoiceWithAttachment(3 * MiB) },
    { name: '1,000 lines', ...buildInvoice({ lines: 1000 }) },
  ];
}

module.exports = { SOURCE, buildInvoice, invoiceOfSize, invoiceWithAttachment, benchmarkDocuments, lineData };
