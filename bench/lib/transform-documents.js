'use strict';
// The transformation benchmark's documents: valid EN 16931 invoices of about 10 KiB, about 100 KiB and with 1,000
// lines, in UBL 2.1 and in CII D16B. The UBL ones are the validation suite's (bench/lib/validation-documents.js: a
// corpus example rebuilt with generated lines and recomputed totals). The CII ones carry the same business content,
// written by the gateway's own UBL → EN 16931 model → CII path (dist/), with as many lines as keep them within the
// same size; both are padded with insignificant whitespace before the closing root tag to land on the exact size.

const path = require('node:path');
const vdocs = require('./validation-documents');

const DIST = path.resolve(__dirname, '..', '..', 'dist', 'src');

function transformer() {
  return require(path.join(DIST, 'transform', 'index.js')).transformDocument;
}

function padBefore(xml, closeTag, bytes) {
  const body = Buffer.from(xml, 'utf8');
  if (bytes === undefined || body.length >= bytes) return body;
  const at = body.lastIndexOf(closeTag);
  if (at < 0) throw new Error(`no ${closeTag} to pad before`);
  return Buffer.concat([body.subarray(0, at), Buffer.alloc(bytes - body.length, ' '), body.subarray(at)]);
}

function ciiOf(ublBody) {
  return transformer()(ublBody, { targetFormat: 'en16931-cii' }).xml;
}

/** A CII invoice of the most lines whose CII fits in `targetBytes`, padded to exactly that size. */
function ciiOfSize(targetBytes) {
  const sizeOf = (lines) => Buffer.byteLength(ciiOf(vdocs.buildInvoice({ lines }).body));
  const base = sizeOf(1);
  const perLine = sizeOf(2) - base;
  let lines = Math.max(1, Math.floor((targetBytes - base) / perLine) + 1);
  while (lines > 1 && sizeOf(lines) > targetBytes) lines--;
  while (sizeOf(lines + 1) <= targetBytes) lines++;
  const xml = ciiOf(vdocs.buildInvoice({ lines }).body);
  return { body: padBefore(xml, '</rsm:CrossIndustryInvoice>', targetBytes), lines };
}

/** [{ name, direction, body, lines }]: UBL → CII and CII → UBL at 10 KiB, 100 KiB and 1,000 lines. */
function transformDocuments() {
  const ubl = [
    { name: '10 KiB', ...vdocs.invoiceOfSize(10 * 1024) },
    { name: '100 KiB', ...vdocs.invoiceOfSize(100 * 1024) },
    { name: '1,000 lines', ...vdocs.buildInvoice({ lines: 1000 }) },
  ];
  const cii = [
    { name: '10 KiB', ...ciiOfSize(10 * 1024) },
    { name: '100 KiB', ...ciiOfSize(100 * 1024) },
    { name: '1,000 lines', body: Buffer.from(ciiOf(vdocs.buildInvoice({ lines: 1000 }).body), 'utf8'), lines: 1000 },
  ];
  return [
    ...ubl.map((d) => ({ name: d.name, direction: 'ubl2cii', body: d.body, lines: d.lines })),
    ...cii.map((d) => ({ name: d.name, direction: 'cii2ubl', body: d.body, lines: d.lines })),
  ];
}

module.exports = { transformDocuments };
