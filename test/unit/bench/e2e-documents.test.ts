/* eslint-disable @typescript-eslint/no-require-imports */
import path from 'node:path';
import { DOMParser } from '@xmldom/xmldom';

// The end-to-end benchmark's invoice: the demo invoice grown to an exact size, still balanced, renumbered per upload.

const docs = require('../../../bench/lib/e2e-documents') as {
  growInvoiceFile(file: string, bytes: number): { body: Buffer; lines: number; withNumber(n: string): Buffer };
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
});
