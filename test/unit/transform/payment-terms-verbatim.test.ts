import { transformDocument } from '../../../src/transform';
import { corpusFile } from '../../support/corpus';
import { requirePacks } from '../validation/support';
import { errorsOf } from './support';

jest.setTimeout(180_000);

/**
 * BT-20 is carried as written: XRechnung's structured cash-discount lines (`#SKONTO#TAGE=n#PROZENT=n.nn#`, one per
 * line, the last one ended by a line break; rule BR-DE-18) survive UBL ↔ CII conversion and pass the XRechnung rules
 * after it. Sources: the XRechnung 3.0 test invoices 01.01a (UBL and CII, from Mustang's test set) with their payment
 * terms replaced by two Skonto lines.
 */

const SKONTO = '#SKONTO#TAGE=14#PROZENT=2.00#\n#SKONTO#TAGE=28#PROZENT=1.00#BASISBETRAG=200.00#\n';

function withSkonto(file: string, element: 'cbc:Note' | 'ram:Description'): string {
  const xml = corpusFile(file).toString('utf8');
  const re =
    element === 'cbc:Note'
      ? /(<cac:PaymentTerms>\s*<cbc:Note>)[^<]*(<\/cbc:Note>)/
      : /(<ram:SpecifiedTradePaymentTerms>\s*<ram:Description>)[^<]*(<\/ram:Description>)/;
  if (!re.test(xml)) throw new Error(`no payment terms in ${file}`);
  return xml.replace(re, `$1${SKONTO}$2`);
}

const UBL = withSkonto('facturx/mustang/ubl/01.01a-INVOICE.ubl.xml', 'cbc:Note');
const CII = withSkonto('facturx/mustang/cii/01.01a-INVOICE.cii.xml', 'ram:Description');

function paymentTerms(xml: string): string | undefined {
  return (
    /<cac:PaymentTerms>\s*<cbc:Note>([^<]*)<\/cbc:Note>/.exec(xml)?.[1] ??
    /<ram:SpecifiedTradePaymentTerms>\s*<ram:Description>([^<]*)<\/ram:Description>/.exec(xml)?.[1]
  );
}

describe('BT-20 payment terms carried verbatim (XRechnung Skonto lines, BR-DE-18)', () => {
  beforeAll(() =>
    requirePacks(['ubl-2.1', 'cii-d16b', 'en16931-ubl', 'en16931-cii', 'xrechnung-ubl', 'xrechnung-cii']),
  );

  it.each([
    ['UBL', UBL, 'xrechnung-ubl-invoice'],
    ['CII', CII, 'xrechnung-cii'],
  ])('the %s source with Skonto lines is valid XRechnung 3.0', async (_s, xml, format) => {
    expect(await errorsOf(xml)).toEqual({ format, errors: [] });
  });

  it.each([
    ['UBL → CII', UBL, 'xrechnung-cii'],
    ['CII → UBL', CII, 'xrechnung-ubl'],
  ])('%s keeps the lines and their final line break, and passes the XRechnung rules', async (_s, xml, target) => {
    const out = transformDocument(xml, { targetFormat: target });
    expect(paymentTerms(out.xml)).toBe(SKONTO);
    expect(out.report.notCarried).toEqual([]);
    const r = await errorsOf(out.xml);
    expect(r.errors).toEqual([]);
    // and back again, unchanged
    const back = transformDocument(out.xml, {
      targetFormat: target === 'xrechnung-cii' ? 'xrechnung-ubl' : 'xrechnung-cii',
    });
    expect(paymentTerms(back.xml)).toBe(SKONTO);
    expect((await errorsOf(back.xml)).errors).toEqual([]);
  });

  it('the XRechnung rules do refuse Skonto lines whose final line break is lost (what trimming did)', async () => {
    const trimmed = UBL.replace(SKONTO, SKONTO.trimEnd());
    expect((await errorsOf(trimmed)).errors).toEqual([expect.stringMatching(/^BR-DE-18/)]);
  });
});
