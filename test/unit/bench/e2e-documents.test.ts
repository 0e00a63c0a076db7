/* eslint-disable @typescript-eslint/no-require-imports */
import path from 'node:path';
import { DOMParser } from '@xmldom/xmldom';

// The end-to-end benchmark's invoice: the demo invoice grown to an exact size, still balanced, renumbered per upload.

type Built = { body: Buffer; lines: number; withNumber(n: string): Buffer };
const docs = require('../../../bench/lib/e2e-documents') as {
  growInvoiceFile(file: string, bytes: number): Built;
  invoiceWithLinesFile(file: string, lines: number): Built;
  invoiceWithAttachmentFile(file: string, bytes: number): Built & { attachmentBytes: number };
  NUMBER_LENGTH: number;
};

const DEMO_INVOICE = path.join(__dirname, '..', '..', '..', 'scripts', 'demo', 'invoice.xml');
const CBC = 'urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2';
const CAC = 'urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2';

function parse(bytes: Buffer) {
  return new DOMParser().parseFromString(bytes.toString('utf8'), 'text/xml');
}

describe('bench e2e invoice', () => {
  it('is exactly the size asked, with the lines still summing to the document total', () => {
    const inv = docs.growInvoiceFile(DEMO_INVOICE, 10 * 1024);
    expect(inv.body.length).toBe(10 * 1024);
    const doc = parse(inv.body);
    const lines = Array.from(doc.getElementsByTagNameNS(CAC, 'InvoiceLine'));
    expect(lines.length).toBe(inv.lines);
    expect(inv.lines).toBeGreaterThan(2);
    const lineIds = lines.map((l) => l.getElementsByTagNameNS(CBC, 'ID')[0]?.textContent);
    expect(lineIds).toEqual(lines.map((_, i) => String(i + 1)));
    const cents = (s: string | null | undefined) => Math.round(Number(s) * 100);
    const lineSum = lines.reduce(
      (a, l) => a + cents(l.getElementsByTagNameNS(CBC, 'LineExtensionAmount')[0]?.textContent),
      0,
    );
    const total = doc.getElementsByTagNameNS(CAC, 'LegalMonetaryTotal')[0];
    expect(lineSum).toBe(cents(total?.getElementsByTagNameNS(CBC, 'LineExtensionAmount')[0]?.textContent));
  });

  it('gives each copy its own invoice number of the same length', () => {
    const inv = docs.growInvoiceFile(DEMO_INVOICE, 10 * 1024);
    const number = 'E2E-abcdefghij';
    expect(number.length).toBe(docs.NUMBER_LENGTH);
    const copy = inv.withNumber(number);
    expect(copy.length).toBe(inv.body.length);
    expect(parse(copy).documentElement?.getElementsByTagNameNS(CBC, 'ID')[0]?.textContent).toBe(number);
    expect(inv.body.toString('utf8')).toContain('DEMO-2025-0001');
    expect(() => inv.withNumber('short')).toThrow(/characters/);
  });

  it('refuses a size below the source invoice', () => {
    expect(() => docs.growInvoiceFile(DEMO_INVOICE, 1024)).toThrow(/smaller than the source/);
  });

  it('builds the invoice with exactly the lines asked, numbered in order and still summing to the total', () => {
    const inv = docs.invoiceWithLinesFile(DEMO_INVOICE, 1000);
    const doc = parse(inv.body);
    const lines = Array.from(doc.getElementsByTagNameNS(CAC, 'InvoiceLine'));
    expect(lines.length).toBe(1000);
    expect(inv.lines).toBe(1000);
    expect(lines[999]?.getElementsByTagNameNS(CBC, 'ID')[0]?.textContent).toBe('1000');
    const source = parse(docs.growInvoiceFile(DEMO_INVOICE, 10 * 1024).body);
    const total = (d: ReturnType<typeof parse>) =>
      d.getElementsByTagNameNS(CAC, 'LegalMonetaryTotal')[0]?.getElementsByTagNameNS(CBC, 'PayableAmount')[0]
        ?.textContent;
    expect(total(doc)).toBe(total(source));
    expect(() => docs.invoiceWithLinesFile(DEMO_INVOICE, 0)).toThrow(/more than 0/);
  });

  it('builds the attachment invoice at exactly the size asked, the attachment a base64 PDF before the seller', () => {
    const bytes = 5 * 1024 * 1024;
    const inv = docs.invoiceWithAttachmentFile(DEMO_INVOICE, bytes);
    expect(inv.body.length).toBe(bytes);
    const doc = parse(inv.withNumber('E2E-abcdefghij'));
    const ref = doc.getElementsByTagNameNS(CAC, 'AdditionalDocumentReference')[0];
    expect(ref?.nextSibling?.nextSibling).toBe(doc.getElementsByTagNameNS(CAC, 'AccountingSupplierParty')[0]);
    const object = ref?.getElementsByTagNameNS(CBC, 'EmbeddedDocumentBinaryObject')[0];
    expect(object?.getAttribute('mimeCode')).toBe('application/pdf');
    expect(object?.getAttribute('filename')).toBe('timesheet.pdf');
    const decoded = Buffer.from(object?.textContent ?? '', 'base64');
    expect(decoded.length).toBe(inv.attachmentBytes);
    expect(decoded.length).toBeGreaterThan(3.5 * 1024 * 1024);
    expect(decoded.subarray(0, 8).toString('latin1')).toBe('%PDF-1.4');
    expect(doc.documentElement?.getElementsByTagNameNS(CBC, 'ID')[0]?.textContent).toBe('E2E-abcdefghij');
    expect(() => docs.invoiceWithAttachmentFile(DEMO_INVOICE, 6 * 1024)).toThrow(/no room/);
  });
});
