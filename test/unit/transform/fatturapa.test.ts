import { readFileSync } from 'node:fs';
import path from 'node:path';
import { comparableCore, readCii, readUbl, writeCii, writeUbl, type Invoice } from '../../../src/en16931';
import { GatewayError } from '../../../src/core/gateway-error';
import { NS } from '../../../src/formats/xml/namespaces';
import { parseXml } from '../../../src/formats';
import { transformDocument, type TransformResult } from '../../../src/transform';
import { readFatturaPa } from '../../../src/en16931/fatturapa/reader';
import { requirePacks, validator } from '../validation/support';
import { fullCreditNote, fullInvoice } from './fixture';
import { golden, refusal } from './support';

jest.setTimeout(300_000);

/**
 * FatturaPA 1.2 ↔ EN 16931. The FatturaPA fixtures in fatturapa/ are written by hand from the FatturaPA specification
 * (goods at 22 %, a public administration invoice with an exempt N4 line, split payment, CUP/CIG and a discount line, a
 * TD04 credit note sent to a PEC address, a professional's TD06 with social security contribution and withholding tax).
 * Every FatturaPA we write must pass the official FatturaPA XSD; every EN 16931 result the target's official packs.
 */

const FPA = 'fatturapa-1.2';
const FIXTURES = ['goods-22', 'mixed-natura-pa', 'credit-note-td04', 'professional-cassa-ritenuta'] as const;

const fixture = (name: string): string => readFileSync(path.join(__dirname, 'fatturapa', `${name}.xml`), 'utf8');

async function errorsOf(xml: string): Promise<{ validatedAs: string; errors: string[] }> {
  const r = await validator().validate(Buffer.from(xml, 'utf8'));
  return {
    validatedAs: r.format.id,
    errors: r.assertions.filter((a) => a.flag === 'error').map((a) => `${a.ruleId}: ${a.text.slice(0, 200)}`),
  };
}

async function expectValid(result: TransformResult | string, as?: string): Promise<void> {
  const xml = typeof result === 'string' ? result : result.xml;
  const r = await errorsOf(xml);
  expect(r.errors).toEqual([]);
  if (as !== undefined) expect(r.validatedAs).toBe(as);
}

const missingRules = (e: GatewayError): string[] =>
  (e.details?.['missing'] as Array<{ rule: string }>).map((m) => m.rule);
const readFpa = (xml: string): Invoice => readFatturaPa(parseXml(xml)).invoice;

/** An Italian B2B invoice in the model: what the FatturaPA requirements ask for, nothing more. */
function italianInvoice(): Invoice {
  const inv = fullInvoice();
  inv.seller = {
    name: 'Alfa Forniture S.r.l.',
    identifiers: [],
    vatIdentifier: 'IT01234567890',
    postalAddress: {
      line1: 'Via Roma 10',
      city: 'Milano',
      postCode: '20121',
      countrySubdivision: 'MI',
      countryCode: 'IT',
    },
  };
  inv.buyer = {
    name: 'Beta Commercio S.p.A.',
    vatIdentifier: 'IT09876543210',
    electronicAddress: { value: 'ABC1234', schemeId: '0205' },
    postalAddress: {
      line1: 'Corso Italia 5',
      city: 'Roma',
      postCode: '00185',
      countrySubdivision: 'RM',
      countryCode: 'IT',
    },
  };
  delete inv.taxRepresentative;
  delete inv.payee;
  return inv;
}

describe('FatturaPA → EN 16931', () => {
  beforeAll(() =>
    requirePacks(['fatturapa-xsd', 'ubl-2.1', 'cii-d16b', 'en16931-ubl', 'en16931-cii', 'si-ubl-2.0', 'nlcius-cii']),
  );

  it.each(FIXTURES.map((f) => [f]))('the hand-written fixture %s is valid FatturaPA', async (name) => {
    await expectValid(fixture(name), FPA);
  });

  // Peppol BIS 3 and XRechnung need data FatturaPA does not have (BT-34, BT-10, a seller contact): 422, tested below.
  const TARGETS = ['en16931-ubl', 'en16931-cii', 'nlcius-ubl', 'nlcius-cii'] as const;
  it.each(FIXTURES.flatMap((f) => TARGETS.map((t) => [f, t] as const)))(
    '%s → %s passes the official packs',
    async (name, target) => {
      const result = transformDocument(fixture(name), { targetFormat: target });
      expect(result.report.source).toMatchObject({ id: FPA, syntax: 'FatturaPA' });
      expect(result.report.filled[0]).toMatch(/^BT-24 Specification identifier = "urn:cen.eu:en16931:2017"/);
      golden(`fatturapa-${name}-to-${target}.xml`, result.xml);
      await expectValid(result);
    },
  );

  it('goods at 22 %: parties, SdI code as BT-49, order, lines, VAT, payment', () => {
    const r = transformDocument(fixture('goods-22'), { targetFormat: 'en16931-ubl' });
    const inv = readUbl(parseXml(r.xml)).invoice;
    expect(inv).toMatchObject({
      number: 'FT-2026/17',
      issueDate: '2026-11-02',
      typeCode: '380',
      currencyCode: 'EUR',
      purchaseOrderReference: 'ODA-55',
      paymentDueDate: '2026-12-02',
    });
    expect(inv.notes).toEqual([{ note: 'Fornitura arredi ufficio, ordine di ottobre' }]);
    expect(inv.seller).toMatchObject({
      name: 'Alfa Forniture S.r.l.',
      vatIdentifier: 'IT01234567890',
      legalRegistrationIdentifier: { value: '01234567890', schemeId: '0210' },
      postalAddress: {
        line1: 'Via Roma 10',
        city: 'Milano',
        postCode: '20121',
        countrySubdivision: 'MI',
        countryCode: 'IT',
      },
      contact: { telephone: '0212345678', email: 'fatture@alfa.example.it' },
    });
    expect(inv.buyer).toMatchObject({
      vatIdentifier: 'IT09876543210',
      electronicAddress: { value: 'ABC1234', schemeId: '0205' },
    });
    expect(
      inv.lines.map((l) => [
        l.identifier,
        l.quantity,
        l.quantityUnitCode,
        l.price.netPrice,
        l.netAmount,
        l.vat,
        l.item.sellersIdentifier,
      ]),
    ).toEqual([
      ['1', '4.00', 'H87', '85.00', '340.00', { categoryCode: 'S', rate: '22' }, 'ART-1'],
      ['2', '1.00', 'C62', '250.00', '250.00', { categoryCode: 'S', rate: '22' }, undefined],
    ]);
    expect(inv.vatBreakdown).toEqual([{ taxableAmount: '590.00', taxAmount: '129.80', categoryCode: 'S', rate: '22' }]);
    expect(inv.totals).toMatchObject({
      sumOfLineNetAmounts: '590.00',
      totalWithoutVat: '590.00',
      totalVatAmount: '129.80',
      totalWithVat: '719.80',
      amountDueForPayment: '719.80',
    });
    expect(inv.paymentInstructions).toEqual({
      meansTypeCode: '30',
      creditTransfers: [{ accountIdentifier: 'IT60X0542811101000000123456' }],
    });
    // what EN 16931 has no term for is listed with its text
    expect(r.report.unmapped).toEqual(
      expect.arrayContaining([
        { path: '/FatturaElettronica/FatturaElettronicaHeader/DatiTrasmissione/ProgressivoInvio', text: '00017' },
        {
          path: '/FatturaElettronica/FatturaElettronicaHeader/CedentePrestatore/DatiAnagrafici/RegimeFiscale',
          text: 'RF01',
        },
        { path: '/FatturaElettronica/FatturaElettronicaHeader/CedentePrestatore/IscrizioneREA', text: 'MI1234567LS' },
        { path: '/FatturaElettronica/FatturaElettronicaBody/DatiGenerali/DatiOrdineAcquisto/Data', text: '2026-10-05' },
      ]),
    );
  });

  it(
    'public administration: IPA code, codice fiscale, CUP/CIG, exempt N4 with its legal reference, percentage ' +
      'discount, discount line, split payment',
    () => {
      const r = transformDocument(fixture('mixed-natura-pa'), { targetFormat: 'en16931-cii' });
      const inv = readCii(parseXml(r.xml)).invoice;
      expect(inv.buyer).toMatchObject({
        name: 'Comune di Esempio',
        legalRegistrationIdentifier: { value: '80012345678', schemeId: '0210' },
        electronicAddress: { value: 'UFY9MH', schemeId: '0201' },
      });
      expect(inv.buyer.vatIdentifier).toBeUndefined();
      expect(inv).toMatchObject({
        projectReference: 'J12B34000050006',
        tenderOrLotReference: 'ZAB1234567',
        purchaseOrderReference: 'DET-12-2026',
      });
      expect(inv.lines[0]).toMatchObject({
        quantity: '1',
        quantityUnitCode: 'C62',
        netAmount: '900.00',
        price: { netPrice: '1000.00' },
        allowanceCharges: [
          { charge: false, amount: '100.00', percentage: '10.00', baseAmount: '1000.00', reason: 'Sconto' },
        ],
      });
      expect(inv.lines[1]).toMatchObject({ vat: { categoryCode: 'E', rate: '0' } });
      expect(inv.allowanceCharges).toEqual([
        { charge: false, amount: '50.00', vatCategoryCode: 'S', vatRate: '22', reason: 'Sconto convenzione' },
      ]);
      expect(inv.vatBreakdown).toEqual([
        { taxableAmount: '850.00', taxAmount: '187.00', categoryCode: 'S', rate: '22' },
        {
          taxableAmount: '300.00',
          taxAmount: '0.00',
          categoryCode: 'E',
          rate: '0',
          exemptionReasonText: 'Esente art. 10 n. 20 DPR 633/72',
        },
      ]);
      expect(inv.totals).toMatchObject({
        sumOfLineNetAmounts: '1200.00',
        sumOfAllowances: '50.00',
        totalWithoutVat: '1150.00',
        totalWithVat: '1337.00',
        amountDueForPayment: '1337.00',
      });
      expect(r.report.filled).toContain(
        'BT-129 Invoiced quantity of line 1 = 1 C62 (FatturaPA leaves it out for a single service)',
      );
      // split payment: the buyer pays the VAT to the treasury, which EN 16931 cannot say; both facts are listed
      expect(r.report.unmapped).toEqual(
        expect.arrayContaining([
          {
            path: '/FatturaElettronica/FatturaElettronicaBody/DatiBeniServizi/DatiRiepilogo[1]/EsigibilitaIVA',
            text: 'S',
          },
          expect.objectContaining({
            path: '/FatturaElettronica/FatturaElettronicaBody/DatiPagamento/DettaglioPagamento/ImportoPagamento',
            text: expect.stringMatching(/^1150.00 /),
          }),
        ]),
      );
    },
  );

  it('TD04 is a credit note (381) with its invoice in BG-3 and the PEC address as BT-49', () => {
    const r = transformDocument(fixture('credit-note-td04'), { targetFormat: 'en16931-ubl' });
    expect(r.report.target).toMatchObject({ id: 'en16931-ubl-creditnote', documentType: 'CreditNote' });
    const inv = readUbl(parseXml(r.xml)).invoice;
    expect(inv).toMatchObject({
      typeCode: '381',
      precedingInvoices: [{ reference: 'FT-2026/17', issueDate: '2026-11-02' }],
      buyer: { electronicAddress: { value: 'amministrazione@pec.beta.example.it', schemeId: '0202' } },
    });
  });

  it('a professional fee note: name from Nome/Cognome, cassa previdenziale as a charge, withholding tax listed', () => {
    const r = transformDocument(fixture('professional-cassa-ritenuta'), { targetFormat: 'en16931-ubl' });
    const inv = readUbl(parseXml(r.xml)).invoice;
    expect(inv.seller.name).toBe('Mario Rossi');
    expect(inv.lines[0]).toMatchObject({
      quantity: '10.00',
      quantityUnitCode: 'HUR',
      netAmount: '550.00',
      allowanceCharges: [{ charge: false, amount: '50.00', reason: 'Sconto' }],
    });
    expect(inv.allowanceCharges).toEqual([
      {
        charge: true,
        amount: '22.00',
        baseAmount: '550.00',
        percentage: '4.00',
        vatCategoryCode: 'S',
        vatRate: '22',
        reason: 'Contributo cassa previdenziale TC04',
      },
    ]);
    expect(inv.totals).toMatchObject({
      totalWithoutVat: '572.00',
      totalVatAmount: '125.84',
      totalWithVat: '697.84',
      amountDueForPayment: '697.84',
    });
    const paths = r.report.unmapped.map((u) => u.path);
    expect(paths).toEqual(
      expect.arrayContaining([
        '/FatturaElettronica/FatturaElettronicaBody/DatiGenerali/DatiGeneraliDocumento/DatiRitenuta',
        '/FatturaElettronica/FatturaElettronicaBody/DatiBeniServizi/DettaglioLinee/Ritenuta',
        '/FatturaElettronica/FatturaElettronicaHeader/CedentePrestatore/DatiAnagrafici/Anagrafica/Titolo',
      ]),
    );
    expect(r.report.unmapped).toContainEqual({
      path: '/FatturaElettronica/FatturaElettronicaBody/DatiGenerali/DatiGeneraliDocumento/TipoDocumento',
      text: 'TD06 (read as BT-3 380; the Italian document type is finer than UNTDID 1001)',
    });
    expect(r.report.unmapped).toContainEqual({
      path: '/FatturaElettronica/FatturaElettronicaBody/DatiBeniServizi/DettaglioLinee/UnitaMisura',
      text: 'ore (read as UN/ECE Rec 20 HUR)',
    });
  });

  it('two summaries of one rate (immediate and deferred VAT) are one EN 16931 breakdown', async () => {
    const xml = fixture('goods-22').replace(
      /<DatiRiepilogo>[\s\S]*<\/DatiRiepilogo>/,
      '<DatiRiepilogo><AliquotaIVA>22.00</AliquotaIVA><ImponibileImporto>340.00</ImponibileImporto><Imposta>74.80</Imposta><EsigibilitaIVA>I</EsigibilitaIVA></DatiRiepilogo>' +
        '<DatiRiepilogo><AliquotaIVA>22.00</AliquotaIVA><ImponibileImporto>250.00</ImponibileImporto><Imposta>55.00</Imposta><EsigibilitaIVA>D</EsigibilitaIVA></DatiRiepilogo>',
    );
    const r = transformDocument(xml, { targetFormat: 'en16931-ubl' });
    expect(readUbl(parseXml(r.xml)).invoice.vatBreakdown).toEqual([
      { taxableAmount: '590.00', taxAmount: '129.80', categoryCode: 'S', rate: '22' },
    ]);
    expect(r.report.unmapped).toContainEqual({
      path: '/FatturaElettronica/FatturaElettronicaBody/DatiBeniServizi/DatiRiepilogo[2]',
      text: 'merged into the VAT breakdown of category S at 22 %',
    });
    expect(r.report.unmapped).toContainEqual({
      path: '/FatturaElettronica/FatturaElettronicaBody/DatiBeniServizi/DatiRiepilogo[2]/EsigibilitaIVA',
      text: 'D',
    });
    await expectValid(r);
  });

  it('a prepayment shows as BT-113 when the amount to pay is smaller and nothing was withheld', () => {
    const xml = fixture('goods-22').replace(
      '<ImportoPagamento>719.80</ImportoPagamento>',
      '<ImportoPagamento>619.80</ImportoPagamento>',
    );
    const inv = readFpa(xml);
    expect(inv.totals).toMatchObject({ totalWithVat: '719.80', paidAmount: '100.00', amountDueForPayment: '619.80' });
  });
});

describe('FatturaPA → EN 16931: 422 and 400', () => {
  it('names what a CIUS needs that FatturaPA does not have (Peppol: BT-34; XRechnung: BT-10, contact)', () => {
    const peppol = refusal(() => transformDocument(fixture('goods-22'), { targetFormat: 'peppol-bis3-ubl' }));
    expect(peppol).toMatchObject({ status: 422, details: { reason: 'CANNOT_CONVERT', target: 'peppol-bis3-ubl' } });
    expect(missingRules(peppol)).toEqual(['PEPPOL-EN16931-R020']);
    expect(
      missingRules(refusal(() => transformDocument(fixture('goods-22'), { targetFormat: 'xrechnung-cii' }))),
    ).toEqual(['BR-DE-5', 'BR-DE-15', 'PEPPOL-EN16931-R020']);
  });

  it(
    'a "non soggetta" (N2.2) line is category O, which EN 16931 forbids beside the seller VAT identifier ' +
      '(BR-O-02)',
    () => {
      const xml = fixture('mixed-natura-pa').replace(/<Natura>N4<\/Natura>/g, '<Natura>N2.2</Natura>');
      const e = refusal(() => transformDocument(xml, { targetFormat: 'en16931-ubl' }));
      expect(e).toMatchObject({ status: 422 });
      expect(missingRules(e)).toEqual(['BR-O-02']);
    },
  );

  it(
    'refuses what has no EN 16931 reading: a batch of two invoices, a discount outside the VAT summary, an unknown ' +
      'unit',
    () => {
      const twoBodies = fixture('goods-22').replace(
        /(<FatturaElettronicaBody>[\s\S]*<\/FatturaElettronicaBody>)/,
        '$1$1',
      );
      expect(refusal(() => transformDocument(twoBodies, { targetFormat: 'en16931-ubl' })).details).toMatchObject({
        reason: 'CANNOT_CONVERT',
        invalid: [{ term: 'BG-25', message: expect.stringContaining('2 FatturaElettronicaBody') }],
      });
      const discount = fixture('goods-22').replace(
        '<ImportoTotaleDocumento>',
        '<ScontoMaggiorazione><Tipo>SC</Tipo><Importo>19.80</Importo></ScontoMaggiorazione><ImportoTotaleDocumento>',
      );
      expect(refusal(() => transformDocument(discount, { targetFormat: 'en16931-ubl' })).details).toMatchObject({
        invalid: [
          {
            term: 'BG-20',
            path: '/FatturaElettronica/FatturaElettronicaBody/DatiGenerali/DatiGeneraliDocumento/ScontoMaggiorazione',
          },
        ],
      });
      const unit = fixture('goods-22').replace('<UnitaMisura>H87</UnitaMisura>', '<UnitaMisura>scatole</UnitaMisura>');
      expect(refusal(() => transformDocument(unit, { targetFormat: 'en16931-ubl' })).details).toMatchObject({
        invalid: [{ term: 'BT-130', message: expect.stringContaining('scatole') }],
      });
    },
  );

  it('a document level discount that is in the single-rate VAT summary is a BG-20 allowance', () => {
    const xml = fixture('goods-22')
      .replace(
        '<ImportoTotaleDocumento>719.80',
        '<ScontoMaggiorazione><Tipo>SC</Tipo><Percentuale>10.00</Percentuale><Importo>59.00</Importo></ScontoMaggiorazione><ImportoTotaleDocumento>647.82',
      )
      .replace(
        '<ImponibileImporto>590.00</ImponibileImporto>\n        <Imposta>129.80</Imposta>',
        '<ImponibileImporto>531.00</ImponibileImporto>\n        <Imposta>116.82</Imposta>',
      );
    const inv = readFpa(xml);
    expect(inv.allowanceCharges).toEqual([
      {
        charge: false,
        amount: '59.00',
        percentage: '10.00',
        baseAmount: '590.00',
        vatCategoryCode: 'S',
        vatRate: '22',
        reason: 'Sconto',
      },
    ]);
    expect(inv.totals).toMatchObject({ totalWithoutVat: '531.00', totalWithVat: '647.82' });
  });

  it.each([
    ['FatturaPA to Factur-X MINIMUM', 'facturx-minimum', /MINIMUM and BASIC WL/],
    ['FatturaPA to PINT', 'pint-eu-ubl', /FatturaPA converts to the EN 16931 formats/],
    ['FatturaPA to FatturaPA', NS.fatturaPA12, /FatturaPA 1.2 already/],
    ['FatturaPA to ebInterface', 'ebinterface-6.1', /FatturaPA converts to the EN 16931 formats/],
  ])('400: %s', (_what, target, why) => {
    const e = refusal(() => transformDocument(fixture('goods-22'), { targetFormat: target }));
    expect(e).toMatchObject({ status: 400, details: { reason: 'TRANSFORMATION_NOT_SUPPORTED' } });
    expect(e.message).toMatch(why);
  });
});

describe('EN 16931 → FatturaPA', () => {
  beforeAll(() => requirePacks(['fatturapa-xsd']));

  it(
    'the full EN 16931 invoice (UBL) becomes a valid FPR12 FatturaPA, reporting every term FatturaPA cannot ' + 'hold',
    async () => {
      const r = transformDocument(writeUbl(fullInvoice()).xml, { targetFormat: NS.fatturaPA12 });
      expect(r.report.target).toEqual({ id: FPA, name: 'FatturaPA 1.2', syntax: 'FatturaPA', documentType: 'Invoice' });
      expect(r.report.changed).toEqual([
        'BT-42 Seller contact telephone number written without spaces and separators: "+31301234567"',
      ]);
      golden('invoice-to-fatturapa-1.2.xml', r.xml);
      await expectValid(r, FPA);
      expect(r.xml).toContain('versione="FPR12"');
      expect(r.xml).toContain('<CodiceDestinatario>XXXXXXX</CodiceDestinatario>');
      // document level allowance and charge are discount / ancillary charge lines, so the VAT summary adds up
      expect(r.xml).toMatch(
        /<NumeroLinea>3<\/NumeroLinea>\s*<TipoCessionePrestazione>SC<\/TipoCessionePrestazione>\s*<Descrizione>Loyalty discount<\/Descrizione>\s*<PrezzoUnitario>-10.00<\/PrezzoUnitario>/,
      );
      expect(r.xml).toMatch(
        /<TipoCessionePrestazione>AC<\/TipoCessionePrestazione>\s*<Descrizione>Freight<\/Descrizione>/,
      );
      expect(r.xml).toMatch(
        /<AliquotaIVA>21.00<\/AliquotaIVA>\s*<ImponibileImporto>93.00<\/ImponibileImporto>\s*<Imposta>19.53<\/Imposta>/,
      );
      expect(r.report.notCarried).toEqual(
        expect.arrayContaining([
          'BT-10 Buyer reference: FatturaPA has no element for it',
          'BT-49 Buyer electronic address: scheme 0106 is no SdI address ' +
            '(FatturaPA routes by CodiceDestinatario or PEC)',
          'BT-148 Item gross price of line 1: FatturaPA has one unit price; the net price (BT-146) is written',
          'BG-24 Supporting document "SPEC-1": Allegati holds embedded documents only',
        ]),
      );
      expect(r.report.filled).toEqual(
        expect.arrayContaining([
          'RegimeFiscale = "RF01" (ordinary VAT regime; EN 16931 does not say which regime the seller is in)',
        ]),
      );
    },
  );

  it('the full credit note (CII) becomes a valid TD04', async () => {
    const r = transformDocument(writeCii(fullCreditNote()).xml, { targetFormat: FPA });
    golden('creditnote-to-fatturapa-1.2.xml', r.xml);
    await expectValid(r, FPA);
    expect(r.xml).toContain('<TipoDocumento>TD04</TipoDocumento>');
    expect(r.xml).toMatch(
      /<DatiFattureCollegate>\s*<IdDocumento>INV-2026-0042<\/IdDocumento>\s*<Data>2026-11-02<\/Data>/,
    );
  });

  it('round trip: the model read back equals the original on everything FatturaPA carries', () => {
    const r = transformDocument(writeUbl(fullInvoice()).xml, { targetFormat: FPA });
    const back = readFpa(r.xml);
    const expected = carriedPart(fullInvoice());
    expect(JSON.parse(comparableCore(normalise(back)))).toEqual(JSON.parse(comparableCore(normalise(expected))));
  });

  it('round trip FatturaPA → UBL → FatturaPA keeps the Italian invoice', () => {
    for (const name of ['goods-22', 'credit-note-td04', 'mixed-natura-pa'] as const) {
      const ubl = transformDocument(fixture(name), { targetFormat: 'en16931-ubl' }).xml;
      const again = transformDocument(ubl, { targetFormat: FPA });
      expect(again.report.notCarried.filter((n) => !/^BT-(139|144) reason/.test(n))).toEqual([]);
      expect(JSON.parse(comparableCore(normalise(readFpa(again.xml))))).toEqual(
        JSON.parse(comparableCore(normalise(readFpa(fixture(name))))),
      );
    }
  });

  it('an Italian buyer: SdI code (FPR12), IPA code (FPA12) or PEC, written in DatiTrasmissione', async () => {
    const inv = italianInvoice();
    const b2b = transformDocument(writeUbl(inv).xml, { targetFormat: FPA });
    expect(b2b.xml).toMatch(
      /<FormatoTrasmissione>FPR12<\/FormatoTrasmissione>\s*<CodiceDestinatario>ABC1234<\/CodiceDestinatario>/,
    );
    await expectValid(b2b, FPA);
    inv.buyer.electronicAddress = { value: 'UFY9MH', schemeId: '0201' };
    const pa = transformDocument(writeUbl(inv).xml, { targetFormat: FPA });
    expect(pa.xml).toContain('versione="FPA12"');
    expect(pa.xml).toMatch(
      /<FormatoTrasmissione>FPA12<\/FormatoTrasmissione>\s*<CodiceDestinatario>UFY9MH<\/CodiceDestinatario>/,
    );
    await expectValid(pa, FPA);
    inv.buyer.electronicAddress = { value: 'beta@pec.example.it', schemeId: '0202' };
    const pec = transformDocument(writeUbl(inv).xml, { targetFormat: FPA });
    expect(pec.xml).toMatch(
      /<CodiceDestinatario>0000000<\/CodiceDestinatario>\s*<PECDestinatario>beta@pec.example.it<\/PECDestinatario>/,
    );
    await expectValid(pec, FPA);
  });

  it('zero-rate categories get their Natura and the exemption reason as RiferimentoNormativo', async () => {
    const inv = italianInvoice();
    inv.allowanceCharges = [];
    inv.lines = [inv.lines[1]!];
    inv.lines[0]!.vat = { categoryCode: 'E', rate: '0' };
    inv.vatBreakdown = [
      {
        taxableAmount: '100.00',
        taxAmount: '0.00',
        categoryCode: 'E',
        rate: '0',
        exemptionReasonText: 'Esente art. 10 DPR 633/72',
      },
    ];
    inv.totals = {
      sumOfLineNetAmounts: '100.00',
      totalWithoutVat: '100.00',
      totalVatAmount: '0.00',
      totalWithVat: '100.00',
      amountDueForPayment: '100.00',
    };
    const r = transformDocument(writeUbl(inv).xml, { targetFormat: FPA });
    expect(r.xml).toMatch(
      /<AliquotaIVA>0.00<\/AliquotaIVA>\s*<Natura>N4<\/Natura>\s*<ImponibileImporto>100.00<\/ImponibileImporto>\s*<Imposta>0.00<\/Imposta>\s*<RiferimentoNormativo>Esente art. 10 DPR 633\/72<\/RiferimentoNormativo>/,
    );
    await expectValid(r, FPA);
  });

  it('422 names the FatturaPA fields the document cannot fill', () => {
    const inv = italianInvoice();
    delete inv.buyer.electronicAddress;
    delete inv.seller.vatIdentifier;
    inv.seller.postalAddress!.postCode = 'I-20121';
    inv.lines[1]!.vat = { categoryCode: 'L', rate: '7' };
    const e = refusal(() => transformDocument(writeCii(inv).xml, { targetFormat: FPA }));
    expect(e).toMatchObject({ status: 422, details: { reason: 'CANNOT_CONVERT', target: FPA } });
    expect(missingRules(e)).toEqual(['FatturaPA 1.2.1.1', 'FatturaPA 1.1.4', 'FatturaPA 1.2.2', 'FatturaPA 2.2.1.14']);
    expect(e.message).toContain('FatturaPA 1.1.4 (BT-49, BT-49-1)');
    const noBuyerId = italianInvoice();
    delete noBuyerId.buyer.vatIdentifier;
    expect(missingRules(refusal(() => transformDocument(writeUbl(noBuyerId).xml, { targetFormat: FPA })))).toEqual([
      'FatturaPA 1.4.1',
    ]);
    noBuyerId.buyer.legalRegistrationIdentifier = { value: 'RSSMRA80A01H501U', schemeId: '0210' };
    expect(transformDocument(writeUbl(noBuyerId).xml, { targetFormat: FPA }).xml).toMatch(
      /<CessionarioCommittente>\s*<DatiAnagrafici>\s*<CodiceFiscale>RSSMRA80A01H501U<\/CodiceFiscale>/,
    );
  });

  it('a payment means FatturaPA has no code for is refused, BT-1 over 20 characters too', () => {
    const inv = italianInvoice();
    inv.paymentInstructions = { meansTypeCode: '1', creditTransfers: [] };
    inv.number = 'INVOICE-NUMBER-2026-000042';
    expect(missingRules(refusal(() => transformDocument(writeUbl(inv).xml, { targetFormat: FPA })))).toEqual([
      'FatturaPA 2.1.1.4',
      'FatturaPA 2.4.2.2',
    ]);
  });
});

/** The fixture as FatturaPA can carry it: what the writer lists in notCarried is removed, the rest written as read. */
function carriedPart(src: Invoice): Invoice {
  const inv = JSON.parse(JSON.stringify(src)) as Invoice;
  delete inv.vatAccountingCurrencyCode;
  delete inv.totals.totalVatAmountInAccountingCurrency;
  delete inv.buyerReference;
  delete inv.salesOrderReference;
  delete inv.despatchAdviceReference;
  delete inv.paymentTerms;
  inv.notes = inv.notes.map((n) => ({ note: n.note }));
  delete inv.processControl.businessProcessType;
  inv.seller = {
    name: inv.seller.name,
    identifiers: [],
    vatIdentifier: inv.seller.vatIdentifier,
    postalAddress: { line1: 'Hoofdstraat 1', city: 'Utrecht', countryCode: 'NL' },
    contact: { telephone: '+31301234567', email: 'sales@example.nl' },
  };
  inv.buyer = {
    name: inv.buyer.name,
    vatIdentifier: inv.buyer.vatIdentifier,
    postalAddress: { line1: 'Kerkstraat 10', city: 'Amsterdam', countryCode: 'NL' },
  };
  inv.payee = { name: 'Factoring B.V.' };
  inv.taxRepresentative = { name: 'Fiscaal Vertegenwoordiger B.V.', vatIdentifier: 'NL111222333B01' };
  inv.delivery = {
    actualDeliveryDate: '2026-10-30',
    address: { line1: 'Havenweg 5', city: 'Rotterdam', countryCode: 'NL' },
  };
  delete inv.invoicingPeriod;
  inv.invoicedObjectIdentifier = { value: 'OBJ-77' };
  inv.paymentInstructions = {
    meansTypeCode: '30',
    remittanceInformation: 'INV-2026-0042',
    creditTransfers: [{ accountIdentifier: 'NL91ABNA0417164300' }],
  };
  inv.allowanceCharges = inv.allowanceCharges.map((a) => ({
    charge: a.charge,
    amount: a.amount,
    vatCategoryCode: a.vatCategoryCode,
    vatRate: a.vatRate,
    reason: a.reason,
  }));
  for (const l of inv.lines) {
    l.price = { netPrice: l.price.netPrice };
    // reasons are FatturaPA's own words; a percentage survives where its base is the line's quantity × net price
    l.allowanceCharges = l.allowanceCharges.map((a) => ({
      charge: a.charge,
      amount: a.amount,
      reason: a.charge ? 'Maggiorazione' : 'Sconto',
      ...(a.percentage !== undefined ? { percentage: a.percentage, baseAmount: a.baseAmount } : {}),
    }));
    if (l.objectIdentifier) l.objectIdentifier = { value: l.objectIdentifier.value };
    l.item.classificationIdentifiers = l.item.classificationIdentifiers.map((c) => ({
      value: c.value,
      schemeId: c.schemeId,
    }));
  }
  inv.supportingDocuments = [
    {
      reference: 'timesheet.csv',
      description: 'Timesheet October',
      attachment: { ...inv.supportingDocuments[0]!.attachment!, filename: 'timesheet.csv' },
    },
  ];
  return inv;
}

/** Decimal spellings FatturaPA fixes ("10.00" for 10) and a key order; values are compared, not their lexical form. */
function normalise(inv: Invoice): Invoice {
  const n = (v: string | undefined): string | undefined =>
    v === undefined ? v : v.includes('.') ? v.replace(/0+$/, '').replace(/\.$/, '') : v;
  const copy = JSON.parse(JSON.stringify(inv)) as Invoice;
  for (const l of copy.lines) {
    l.quantity = n(l.quantity);
    l.price.netPrice = n(l.price.netPrice);
    l.netAmount = n(l.netAmount);
    for (const a of l.allowanceCharges) {
      a.amount = n(a.amount) as string;
      if (a.percentage !== undefined) a.percentage = n(a.percentage);
      if (a.baseAmount !== undefined) a.baseAmount = n(a.baseAmount);
    }
  }
  for (const a of copy.allowanceCharges) a.amount = n(a.amount) as string;
  for (const v of copy.vatBreakdown) {
    v.taxableAmount = n(v.taxableAmount);
    v.taxAmount = n(v.taxAmount);
  }
  for (const k of Object.keys(copy.totals) as Array<keyof Invoice['totals']>) copy.totals[k] = n(copy.totals[k]);
  return copy;
}

describe('FatturaPA input never fails with anything but a clear 4xx', () => {
  // Every element's text of every fixture replaced, one at a time, by a value of the wrong kind.
  const cases = FIXTURES.flatMap((name) => {
    const xml = fixture(name);
    const texts = [...xml.matchAll(/<([A-Za-z]+)>[^<]+<\/\1>/g)];
    return texts.map((m, k) => [name, k, m.index] as const);
  });

  it('mutates enough', () => expect(cases.length).toBeGreaterThan(150));

  it.each(cases)('%s element #%d', (name, _k, index) => {
    const xml = fixture(name);
    const start = xml.indexOf('>', index) + 1;
    const end = xml.indexOf('<', start);
    const mutated = `${xml.slice(0, start)}-x,1e3${xml.slice(end)}`;
    try {
      const r = transformDocument(mutated, { targetFormat: 'en16931-ubl' });
      expect(r.xml.startsWith('<?xml')).toBe(true);
    } catch (e) {
      if (!(e instanceof GatewayError)) throw e;
      expect([400, 422]).toContain(e.status);
    }
  });
});

describe('self-billing', () => {
  it('BT-3 389 is an ordinary invoice issued by the buyer (SoggettoEmittente CC), and reads back as 389', () => {
    const inv = italianInvoice();
    inv.typeCode = '389';
    const r = transformDocument(writeUbl(inv).xml, { targetFormat: FPA });
    expect(r.xml).toMatch(
      /<\/CessionarioCommittente>\s*<SoggettoEmittente>CC<\/SoggettoEmittente>\s*<\/FatturaElettronicaHeader>/,
    );
    expect(r.xml).toContain('<TipoDocumento>TD01</TipoDocumento>');
    expect(readFpa(r.xml).typeCode).toBe('389');
    const thirdParty = readFatturaPa(parseXml(r.xml.replace('<SoggettoEmittente>CC<', '<SoggettoEmittente>TZ<')));
    expect(thirdParty.invoice.typeCode).toBe('380');
    expect(thirdParty.unmapped).toContainEqual({
      path: '/FatturaElettronica/FatturaElettronicaHeader/SoggettoEmittente',
      text: 'TZ (who issued the invoice has no EN 16931 term beyond BT-3 389)',
    });
  });
});
