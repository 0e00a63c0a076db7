/* eslint-disable @typescript-eslint/no-require-imports */
import { requirePacks, validator } from './support';

// The validation benchmark's invoices must be valid, or it would time the rejection of broken documents.
const vdocs = require('../../../bench/lib/validation-documents') as {
  invoiceOfSize(bytes: number): { body: Buffer; lines: number };
  invoiceWithAttachment(bytes: number, lines?: number): { body: Buffer; lines: number; attachmentBytes: number };
  buildInvoice(o: { lines: number; attachmentBytes?: number }): { body: Buffer; lines: number };
};

jest.setTimeout(180_000);

describe('validation benchmark documents', () => {
  beforeAll(() => requirePacks(['ubl-2.1', 'en16931-ubl']));

  it('builds invoices of the exact size that pass the schema and the EN 16931 rules', async () => {
    const sized = vdocs.invoiceOfSize(10 * 1024);
    expect(sized.body.length).toBe(10 * 1024);
    expect(sized.lines).toBeGreaterThan(1);
    const attached = vdocs.invoiceWithAttachment(256 * 1024);
    expect(attached.body.length).toBe(256 * 1024);
    expect(attached.body.toString('utf8')).toMatch(
      /<cbc:EmbeddedDocumentBinaryObject mimeCode="text\/csv" filename="timesheet.csv">[A-Za-z0-9+/=]{200000,}</,
    );
    const many = vdocs.buildInvoice({ lines: 40 });
    for (const doc of [sized.body, attached.body, many.body]) {
      const r = await validator().validate(doc);
      expect({ valid: r.isValid, assertions: r.assertions.filter((a) => a.flag === 'error') }).toEqual({
        valid: true,
        assertions: [],
      });
      expect(r.ruleSets.map((s) => s.id)).toEqual(['ubl-2.1', 'en16931-ubl']);
    }
  });

  it('recomputes the totals: a document with a wrong line total is caught by the rules', async () => {
    const good = vdocs.buildInvoice({ lines: 12 }).body.toString('utf8');
    const bad = good.replace(
      /(<cac:LegalMonetaryTotal>\s*<cbc:LineExtensionAmount currencyID="DKK">)([0-9.]+)/,
      (_m, open: string, v: string) => `${open}${(Number(v) + 1).toFixed(2)}`,
    );
    expect(bad).not.toBe(good);
    const r = await validator().validate(bad);
    expect(r.isValid).toBe(false);
    expect(r.assertions.map((a) => a.ruleId)).toContain('BR-CO-10');
  });
});
