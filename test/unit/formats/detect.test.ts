import { GatewayError } from '../../../src/core/gateway-error';
import {
  classify,
  detectFormat,
  detectFormatFromDocument,
  factsFromDocument,
  factsFromXml,
  type DetectedFormat,
  type DocumentFacts,
} from '../../../src/formats/detect';
import {
  CII_URN,
  FORMATS,
  NLCIUS,
  PEPPOL_BIS3,
  XRECHNUNG_3,
  XRECHNUNG_3_CVD,
  XRECHNUNG_3_EXTENSION,
  getFormat,
  listFormats,
} from '../../../src/formats/format-ids';
import { NS } from '../../../src/formats/xml/namespaces';
import { parseXml } from '../../../src/formats/xml/secure-parser';

// --- minimal documents -----------------------------------------------------------------------------------------------

type UblRoot = 'Invoice' | 'CreditNote' | 'ApplicationResponse' | 'Order' | 'OrderResponse';

function ubl(
  root: UblRoot,
  customizationId: string | undefined,
  opts: { extra?: string; rootAttrs?: string; profileId?: string } = {},
): string {
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<${root} xmlns="urn:oasis:names:specification:ubl:schema:xsd:${root}-2" xmlns:cbc="${NS.cbc}" ` +
      `xmlns:cac="${NS.cac}"${opts.rootAttrs ?? ''}>`,
    customizationId === undefined ? '' : `  <cbc:CustomizationID>${customizationId}</cbc:CustomizationID>`,
    `  <cbc:ProfileID>${opts.profileId ?? 'urn:fdc:peppol.eu:2017:poacc:billing:01:1.0'}</cbc:ProfileID>`,
    '  <cbc:ID>INV-1</cbc:ID>',
    opts.extra ?? '',
    `</${root}>`,
  ].join('\n');
}

function cii(guidelineId: string | undefined, typeCode = '380'): string {
  return [
    `<rsm:CrossIndustryInvoice xmlns:rsm="${NS.rsm}" xmlns:ram="${NS.ram}" xmlns:udt="${NS.udt}">`,
    '  <rsm:ExchangedDocumentContext>',
    '    <ram:BusinessProcessSpecifiedDocumentContextParameter><ram:ID>A1</ram:ID></ram:BusinessProcessSpecifiedDocumentContextParameter>',
    guidelineId === undefined
      ? ''
      : `    <ram:GuidelineSpecifiedDocumentContextParameter><ram:ID>${guidelineId}</ram:ID></ram:GuidelineSpecifiedDocumentContextParameter>`,
    '  </rsm:ExchangedDocumentContext>',
    `  <rsm:ExchangedDocument><ram:ID>1</ram:ID><ram:TypeCode>${typeCode}</ram:TypeCode></rsm:ExchangedDocument>`,
    '  <rsm:SupplyChainTradeTransaction/>',
    '</rsm:CrossIndustryInvoice>',
  ].join('\n');
}

function zugferd1(profile: string, typeCode = '380'): string {
  return [
    `<rsm:CrossIndustryDocument xmlns:rsm="${NS.zf1Rsm}" xmlns:ram="${NS.zf1Ram}">`,
    '  <rsm:SpecifiedExchangedDocumentContext>',
    `    <ram:GuidelineSpecifiedDocumentContextParameter><ram:ID>urn:ferd:CrossIndustryDocument:invoice:1p0:${profile}</ram:ID></ram:GuidelineSpecifiedDocumentContextParameter>`,
    '  </rsm:SpecifiedExchangedDocumentContext>',
    `  <rsm:HeaderExchangedDocument><ram:ID>1</ram:ID><ram:TypeCode>${typeCode}</ram:TypeCode></rsm:HeaderExchangedDocument>`,
    '</rsm:CrossIndustryDocument>',
  ].join('\n');
}

const fattura = (versione: string): string =>
  `<?xml version="1.0" encoding="UTF-8"?>\n<p:FatturaElettronica versione="${versione}" xmlns:p="${NS.fatturaPA12}" ` +
  `xmlns:ds="http://www.w3.org/2000/09/xmldsig#">` +
  '<FatturaElettronicaHeader><DatiTrasmissione><FormatoTrasmissione>' +
  versione +
  '</FormatoTrasmissione></DatiTrasmissione></FatturaElettronicaHeader>' +
  '<FatturaElettronicaBody/></p:FatturaElettronica>';

/** Detects with both strategies and requires the same answer. */
function detectBoth(xml: string | Buffer, opts: { sourceFormat?: string } = {}): DetectedFormat {
  const bytes = typeof xml === 'string' ? Buffer.from(xml, 'utf8') : xml;
  const viaDom = detectFormat(bytes, { ...opts, strategy: 'dom' });
  const viaStream = detectFormat(bytes, { ...opts, strategy: 'stream' });
  expect(viaStream).toEqual(viaDom);
  return viaDom;
}

function refusedBoth(xml: string, opts: { sourceFormat?: string } = {}): GatewayError {
  const errors = (['dom', 'stream'] as const).map((strategy) => {
    try {
      detectFormat(Buffer.from(xml, 'utf8'), { ...opts, strategy });
    } catch (e) {
      return e;
    }
    throw new Error(`expected ${strategy} detection to fail`);
  });
  expect(errors[0]).toBeInstanceOf(GatewayError);
  const [a, b] = errors as [GatewayError, GatewayError];
  expect({ code: b.code, message: b.message }).toEqual({ code: a.code, message: a.message });
  return a;
}

// --- formats the corpus lacks
// ------------------------------------------------------------------------------------------

describe('detectFormat: hand-written documents', () => {
  it.each<[string, string, Partial<DetectedFormat>]>([
    [
      'Peppol BIS 3 credit note',
      ubl('CreditNote', PEPPOL_BIS3),
      { id: 'peppol-bis3-ubl-creditnote', documentType: 'CreditNote', urn: PEPPOL_BIS3, version: '3.0' },
    ],
    [
      'Peppol self-billing invoice',
      ubl('Invoice', 'urn:cen.eu:en16931:2017#compliant#urn:fdc:peppol.eu:2017:poacc:selfbilling:3.0', {
        profileId: 'urn:fdc:peppol.eu:2017:poacc:selfbilling:01:1.0',
      }),
      { id: 'peppol-selfbilling-ubl-invoice', profileId: 'urn:fdc:peppol.eu:2017:poacc:selfbilling:01:1.0' },
    ],
    [
      'Peppol self-billing credit note',
      ubl('CreditNote', 'urn:cen.eu:en16931:2017#compliant#urn:fdc:peppol.eu:2017:poacc:selfbilling:3.0'),
      { id: 'peppol-selfbilling-ubl-creditnote' },
    ],
    [
      'NLCIUS credit note with G-account',
      ubl('CreditNote', `${NLCIUS}#conformant#urn:fdc:nen.nl:gaccount:v1.0`),
      { id: 'nlcius-gaccount-ubl-creditnote' },
    ],
    [
      'XRechnung 3.0 UBL credit note',
      ubl('CreditNote', XRECHNUNG_3),
      { id: 'xrechnung-ubl-creditnote', version: '3.0', urn: XRECHNUNG_3 },
    ],
    [
      'XRechnung 3.0 extension UBL',
      ubl('Invoice', XRECHNUNG_3_EXTENSION),
      { id: 'xrechnung-extension-ubl-invoice', version: '3.0' },
    ],
    ['XRechnung CVD UBL', ubl('Invoice', XRECHNUNG_3_CVD), { id: 'xrechnung-cvd-ubl-invoice', version: '3.0' }],
    [
      'EN 16931 CIUS not in the registry',
      ubl('Invoice', 'urn:cen.eu:en16931:2017#compliant#urn:fdc:example.org:cius:1.0'),
      { id: 'en16931-ubl-invoice', customizationId: 'urn:cen.eu:en16931:2017#compliant#urn:fdc:example.org:cius:1.0' },
    ],
    [
      'PINT generic',
      ubl('Invoice', 'urn:peppol:pint:billing-1', { profileId: 'urn:peppol:bis:billing' }),
      { id: 'pint-ubl-invoice', urn: 'urn:peppol:pint:billing-1' },
    ],
    ['PINT of a jurisdiction not listed', ubl('Invoice', 'urn:peppol:pint:billing-1@xx-1'), { id: 'pint-ubl-invoice' }],
    ['PINT EU', ubl('Invoice', 'urn:peppol:pint:billing-1@eu-1'), { id: 'pint-eu-ubl-invoice' }],
    [
      'PINT EU credit note',
      ubl('CreditNote', 'urn:peppol:pint:billing-1@eu-1'),
      { id: 'pint-eu-ubl-creditnote', documentType: 'CreditNote' },
    ],
    ['PINT A-NZ', ubl('Invoice', 'urn:peppol:pint:billing-1@aunz-1'), { id: 'pint-aunz-ubl-invoice' }],
    ['PINT Japan', ubl('Invoice', 'urn:peppol:pint:billing-1@jp-1'), { id: 'pint-jp-ubl-invoice' }],
    ['PINT Singapore', ubl('Invoice', 'urn:peppol:pint:billing-1@sg-1'), { id: 'pint-sg-ubl-invoice' }],
    ['PINT Malaysia', ubl('Invoice', 'urn:peppol:pint:billing-1@my-1'), { id: 'pint-my-ubl-invoice' }],
    ['PINT UAE', ubl('Invoice', 'urn:peppol:pint:billing-1@ae-1'), { id: 'pint-ae-ubl-invoice' }],
    ['PINT Oman', ubl('Invoice', 'urn:peppol:pint:billing-1@om-1'), { id: 'pint-om-ubl-invoice' }],
    [
      'PINT self-billing generic',
      ubl('Invoice', 'urn:peppol:pint:selfbilling-1'),
      { id: 'pint-selfbilling-ubl-invoice' },
    ],
    [
      'PINT A-NZ self-billing',
      ubl('Invoice', 'urn:peppol:pint:selfbilling-1@aunz-1'),
      { id: 'pint-aunz-selfbilling-ubl-invoice' },
    ],
    [
      'PINT Japan self-billing',
      ubl('CreditNote', 'urn:peppol:pint:selfbilling-1@jp-1'),
      { id: 'pint-jp-selfbilling-ubl-creditnote' },
    ],
    [
      'PINT Malaysia self-billing',
      ubl('Invoice', 'urn:peppol:pint:selfbilling-1@my-1'),
      { id: 'pint-my-selfbilling-ubl-invoice' },
    ],
    [
      'PINT UAE self-billing',
      ubl('Invoice', 'urn:peppol:pint:selfbilling-1@ae-1'),
      { id: 'pint-ae-selfbilling-ubl-invoice' },
    ],
    [
      'PINT Japan non-tax invoice',
      ubl('Invoice', 'urn:peppol:pint:nontaxinvoice-1@jp-1'),
      { id: 'pint-jp-nontax-ubl-invoice' },
    ],
    [
      'SETU: NLCIUS CustomizationID and the SETU extension namespace on the root',
      ubl('Invoice', NLCIUS, { rootAttrs: ` xmlns:setu="${NS.setuInvoiceExtension}"` }),
      { id: 'setu-invoice-ubl', customizationId: NLCIUS },
    ],
    [
      'SETU: extension namespace declared deep in the document',
      ubl('Invoice', NLCIUS, {
        extra:
          `<cac:InvoiceLine><cbc:ID>1</cbc:ID><cbc:Note xmlns:s="${NS.setuInvoiceExtension}">week ` +
          `36</cbc:Note></cac:InvoiceLine>`,
      }),
      { id: 'setu-invoice-ubl' },
    ],
    [
      'SETU: its own identifier in the CustomizationID',
      ubl('Invoice', `${NLCIUS}#compliant#urn:fdc:setu.nl:invoice:v2.2`),
      { id: 'setu-invoice-ubl', version: '2.2' },
    ],
    [
      'SETU with G-account',
      ubl('Invoice', `${NLCIUS}#conformant#urn:fdc:nen.nl:gaccount:v1.0`, {
        rootAttrs: ` xmlns:setu="${NS.setuInvoiceExtension}"`,
      }),
      { id: 'setu-invoice-ubl' },
    ],
    [
      'Peppol Invoice Response',
      ubl('ApplicationResponse', 'urn:fdc:peppol.eu:poacc:trns:invoice_response:3', {
        profileId: 'urn:fdc:peppol.eu:poacc:bis:invoice_response:3',
      }),
      { id: 'peppol-invoice-response', documentType: 'ApplicationResponse' },
    ],
    [
      'Peppol Message Level Response',
      ubl('ApplicationResponse', 'urn:fdc:peppol.eu:poacc:trns:mlr:3'),
      { id: 'peppol-mlr', documentType: 'ApplicationResponse' },
    ],
    [
      'Peppol MLS',
      ubl('ApplicationResponse', 'urn:peppol:edec:mls:1.0', { profileId: 'urn:peppol:edec:mls' }),
      { id: 'peppol-mls', documentType: 'MessageLevelStatus' },
    ],
    [
      'Peppol Order',
      ubl('Order', 'urn:fdc:peppol.eu:poacc:trns:order:3', { profileId: 'urn:fdc:peppol.eu:poacc:bis:order_only:3' }),
      { id: 'peppol-order', documentType: 'Order' },
    ],
    [
      'Peppol Order with a national extension',
      ubl('Order', 'urn:fdc:peppol.eu:poacc:trns:order:3:extended:urn:fdc:anskaffelser.no:2019:ehf:spec:3.0'),
      { id: 'peppol-order' },
    ],
    [
      'Peppol Order Response',
      ubl('OrderResponse', 'urn:fdc:peppol.eu:poacc:trns:order_response:3', {
        profileId: 'urn:fdc:peppol.eu:poacc:bis:ordering:3',
      }),
      { id: 'peppol-order-response', documentType: 'OrderResponse' },
    ],
    [
      'Factur-X BASIC WL',
      cii('urn:factur-x.eu:1p0:basicwl'),
      { id: 'facturx-basicwl', version: '1.0', profileId: 'A1' },
    ],
    ['ZUGFeRD 2.0 BASIC WL', cii('urn:zugferd.de:2p0:basicwl'), { id: 'facturx-basicwl', version: '2.0' }],
    ['ZUGFeRD 2.0 MINIMUM', cii('urn:zugferd.de:2p0:minimum'), { id: 'facturx-minimum', version: '2.0' }],
    [
      'ZUGFeRD 2.0 BASIC',
      cii('urn:cen.eu:en16931:2017#compliant#urn:zugferd.de:2p0:basic'),
      { id: 'facturx-basic', version: '2.0' },
    ],
    [
      'Factur-X EXTENDED-CTC-FR',
      cii('urn:cen.eu:en16931:2017#conformant#urn.cpro.gouv.fr:1p0:extended-ctc-fr'),
      { id: 'facturx-extended-ctc-fr' },
    ],
    [
      'XRechnung CII credit note (TypeCode 381)',
      cii(XRECHNUNG_3, '381'),
      { id: 'xrechnung-cii', documentType: 'CreditNote', version: '3.0' },
    ],
    ['XRechnung extension CII', cii(XRECHNUNG_3_EXTENSION), { id: 'xrechnung-extension-cii', version: '3.0' }],
    ['XRechnung CVD CII', cii(XRECHNUNG_3_CVD), { id: 'xrechnung-cvd-cii' }],
    ['Peppol BIS 3 in CII', cii(PEPPOL_BIS3, '384'), { id: 'peppol-bis3-cii', documentType: 'Invoice' }],
    [
      'EN 16931 CII partial credit note (TypeCode 396)',
      cii('urn:cen.eu:en16931:2017', '396'),
      { id: 'en16931-cii', documentType: 'CreditNote', urn: CII_URN },
    ],
    [
      'FatturaPA to the public administration',
      fattura('FPA12'),
      {
        id: 'fatturapa-1.2',
        syntax: 'FatturaPA',
        version: 'FPA12',
        rootName: 'FatturaElettronica',
        rootNamespace: NS.fatturaPA12,
      },
    ],
    ['FatturaPA B2B', fattura('FPR12'), { id: 'fatturapa-1.2', version: 'FPR12' }],
    [
      'ebInterface 6.1 credit memo',
      '<Invoice xmlns="http://www.ebinterface.at/schema/6p1/" DocumentType="CreditMemo" GeneratingSystem="x" ' +
        'InvoiceCurrency="EUR" Language="ger"/>',
      { id: 'ebinterface-6.1', documentType: 'CreditNote', syntax: 'ebInterface' },
    ],
    [
      'Svefaktura 1.0',
      '<Invoice xmlns="urn:sfti:documents:BasicInvoice:1:0" ' +
        'xmlns:cbc="urn:oasis:names:tc:ubl:CommonBasicComponents:1:0"><cbc:ID>1</cbc:ID></Invoice>',
      { id: 'svefaktura-1.0', syntax: 'Svefaktura' },
    ],
    [
      'DICO INSBOU004',
      '<Invoice xmlns="http://www.gs1.nl/factuur/insbou/004"><InvoiceType>380</InvoiceType><InvoiceNumber>F1</InvoiceNumber></Invoice>',
      { id: 'dico-insbou004', syntax: 'DICO' },
    ],
    [
      'DICO SALES005',
      '<Invoice xmlns="http://www.ketenstandaard.nl/factuur/SALES/005"><InvoiceNumber>F1</InvoiceNumber></Invoice>',
      { id: 'dico-sales005', syntax: 'DICO' },
    ],
  ])('%s', (_name, xml, expected) => {
    expect(detectBoth(xml)).toEqual(expect.objectContaining(expected));
  });

  it('returns the full shape, with BT-24 and BT-23', () => {
    expect(detectBoth(ubl('Invoice', PEPPOL_BIS3))).toEqual({
      id: 'peppol-bis3-ubl-invoice',
      name: 'Peppol BIS Billing 3.0 Invoice',
      syntax: 'UBL',
      documentType: 'Invoice',
      urn: PEPPOL_BIS3,
      rootName: 'Invoice',
      rootNamespace: NS.ublInvoice,
      customizationId: PEPPOL_BIS3,
      profileId: 'urn:fdc:peppol.eu:2017:poacc:billing:01:1.0',
      version: '3.0',
    });
  });
});

describe('detectFormat: reading the identifiers', () => {
  it('reads BT-24 like XPath string(): comments skipped, CDATA and references included, whitespace normalised', () => {
    const tricky = ubl(
      'Invoice',
      '\n  urn:cen.eu:en16931:2017<!-- note -->#compliant#urn:fdc:peppol.eu:2017:<![CDATA[poacc:billing]]>&#58;3.0  \n',
    );
    expect(detectBoth(tricky)).toEqual(
      expect.objectContaining({ id: 'peppol-bis3-ubl-invoice', customizationId: PEPPOL_BIS3 }),
    );
  });

  it('takes BT-24 only from the root’s own child, in the right namespace, whatever the prefixes', () => {
    const decoy = ubl('Invoice', NLCIUS, {
      extra: `<cac:Extra><cbc:CustomizationID>${PEPPOL_BIS3}</cbc:CustomizationID></cac:Extra>`,
    });
    expect(detectBoth(decoy).id).toBe('nlcius-ubl-invoice');
    const otherPrefixes =
      `<i:Invoice xmlns:i="${NS.ublInvoice}"><CustomizationID ` +
      `xmlns="${NS.cbc}">${XRECHNUNG_3}</CustomizationID></i:Invoice>`;
    expect(detectBoth(otherPrefixes).id).toBe('xrechnung-ubl-invoice');
    const wrongNamespace = `<Invoice xmlns="${NS.ublInvoice}"><CustomizationID>${PEPPOL_BIS3}</CustomizationID></Invoice>`;
    expect(refusedBoth(wrongNamespace).message).toMatch(/CustomizationID \(BT-24\) is missing/);
  });

  it('uses the first GuidelineID in document order, even below a later context element', () => {
    const twoContexts =
      `<rsm:CrossIndustryInvoice xmlns:rsm="${NS.rsm}" xmlns:ram="${NS.ram}">` +
      '<rsm:ExchangedDocumentContext><ram:TestIndicator/></rsm:ExchangedDocumentContext>' +
      `<rsm:ExchangedDocumentContext><ram:GuidelineSpecifiedDocumentContextParameter><ram:ID>${XRECHNUNG_3}</ram:ID></ram:GuidelineSpecifiedDocumentContextParameter></rsm:ExchangedDocumentContext>` +
      '</rsm:CrossIndustryInvoice>';
    expect(detectBoth(twoContexts).id).toBe('xrechnung-cii');
  });

  it('gives the same facts from the DOM and from the scanner', () => {
    const xml = ubl('Invoice', NLCIUS, { rootAttrs: ` xmlns:setu="${NS.setuInvoiceExtension}" note="a&#10;b\n c"` });
    const facts: DocumentFacts = factsFromXml(xml);
    expect(facts).toEqual(factsFromDocument(parseXml(xml)));
    expect(facts.rootAttributes).toEqual({ note: 'a b c' });
    expect(facts.declaredNamespaces).toEqual([NS.ublInvoice, NS.cac, NS.cbc, NS.setuInvoiceExtension].sort());
  });

  it('refuses undeclared prefixes in the streaming path as the DOM path does', () => {
    const e = refusedBoth(
      '<Invoice xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2">\n<cbc:ID>1</cbc:ID></Invoice>',
    );
    expect(e.code).toBe('INVALID_XML');
    expect(e.message).toMatch(/^2:1: /);
  });

  it('detects from a DOM the caller already holds', () => {
    expect(detectFormatFromDocument(parseXml(cii('urn:factur-x.eu:1p0:minimum'))).id).toBe('facturx-minimum');
    expect(detectFormatFromDocument(parseXml(cii('urn:cen.eu:en16931:2017')), { container: 'pdf' }).id).toBe(
      'facturx-en16931',
    );
  });

  it('runs the safety checks on the streaming path too', () => {
    const e = refusedBoth('<!DOCTYPE Invoice [<!ENTITY x SYSTEM "file:///etc/passwd">]>\n<Invoice>&x;</Invoice>');
    expect(e.code).toBe('UNSAFE_XML');
  });
});

describe('detectFormat: refusals', () => {
  const SI_UBL_12 =
    'urn:www.cenbii.eu:transaction:biitrns010:ver2.0:extended:urn:www.peppol.eu:bis:peppol4a:ver2.0:extended:urn:www.simplerinvoicing.org:si:si-ubl:ver1.2';

  it('refuses SI-UBL 1.2 with UNKNOWN_FORMAT, naming NLCIUS and BIS Billing 3 and the 2024 cut-off', () => {
    const e = refusedBoth(ubl('Invoice', SI_UBL_12, { profileId: 'urn:www.cenbii.eu:profile:bii04:ver1.0' }));
    expect(e.code).toBe('UNKNOWN_FORMAT');
    expect(e.status).toBe(400);
    expect(e.message).toContain(
      'SI-UBL 1.2 (and older SI-UBL 1.x) is not allowed on the Peppol network since 1 January 2024',
    );
    expect(e.message).toContain('NLCIUS (SI-UBL 2.0');
    expect(e.message).toContain('Peppol BIS Billing 3.0');
    expect(e.message).toContain(SI_UBL_12);
    expect(e.details).toEqual(expect.objectContaining({ format: 'si-ubl-1-invoice', refused: true }));
  });

  it.each([
    [
      'SI-UBL 1.1',
      'urn:www.cenbii.eu:transaction:biitrns010:ver2.0:extended:urn:www.peppol.eu:bis:peppol4a:ver2.0:extended:urn:www.simplerinvoicing.org:si:si-ubl:ver1.1',
    ],
    ['SI-UBL 1.0', 'urn:www.simplerinvoicing.org:si-ubl:invoice:ver1.0.2'],
  ])('refuses %s the same way', (_name, id) => {
    expect(refusedBoth(ubl('Invoice', id)).message).toMatch(/^SI-UBL 1\.x \(retired\) Invoice .*1 January 2024/);
    expect(refusedBoth(ubl('CreditNote', id)).details).toEqual(
      expect.objectContaining({ format: 'si-ubl-1-creditnote' }),
    );
  });

  it.each([
    ['1.2', '1 January 2021', '2.0'],
    ['2.0', '1 February 2022', '2.1'],
    ['2.1', '1 August 2022', '2.2'],
    ['2.2', '1 August 2023', '2.3'],
    ['2.3', '1 February 2024', '3.0'],
  ])('refuses XRechnung %s (UBL, CII, extension) naming the day it stopped being accepted', (v, until, next) => {
    const cius = `urn:cen.eu:en16931:2017#compliant#urn:xoev-de:kosit:standard:xrechnung_${v}`;
    const extension = `${cius}#conformant#urn:xoev-de:kosit:extension:xrechnung_${v}`;
    const cases: Array<[string, string]> = [
      [ubl('Invoice', cius), `xrechnung-${v}-ubl-invoice`],
      [ubl('CreditNote', cius), `xrechnung-${v}-ubl-creditnote`],
      [ubl('Invoice', extension), `xrechnung-${v}-ubl-invoice`],
      [cii(cius), `xrechnung-${v}-cii`],
      [cii(extension, '381'), `xrechnung-${v}-cii`],
    ];
    for (const [doc, format] of cases) {
      const e = refusedBoth(doc);
      expect(e.code).toBe('UNKNOWN_FORMAT');
      expect(e.status).toBe(400);
      expect(e.message).toContain(
        `XRechnung ${v} is retired: it has not been accepted since ${until}, when XRechnung ${next} replaced it. ` +
          'Send XRechnung 3.0 (CustomizationID urn:cen.eu:en16931:2017#compliant#urn:xeinkauf.de:kosit:xrechnung_3.0',
      );
      expect(e.details).toEqual(expect.objectContaining({ format, refused: true }));
    }
  });

  it('keeps XRechnung 3.0 and its extension and CVD accepted', () => {
    expect(detectBoth(cii(XRECHNUNG_3)).id).toBe('xrechnung-cii');
    expect(detectBoth(ubl('Invoice', XRECHNUNG_3_EXTENSION)).id).toBe('xrechnung-extension-ubl-invoice');
    expect(detectBoth(ubl('Invoice', XRECHNUNG_3_CVD)).id).toBe('xrechnung-cvd-ubl-invoice');
  });

  it.each([
    ['basic', '380', 'zugferd1-basic'],
    ['comfort', '380', 'zugferd1-comfort'],
    ['extended', '381', 'zugferd1-extended'],
  ])('refuses ZUGFeRD 1.0 %s naming the 2025 cut-off and what to send', (profile, typeCode, format) => {
    const e = refusedBoth(zugferd1(profile, typeCode));
    expect(e.code).toBe('UNKNOWN_FORMAT');
    expect(e.status).toBe(400);
    expect(e.message).toMatch(
      new RegExp(
        `^ZUGFeRD 1\\.0 ${profile.toUpperCase()} .*not been a valid e-invoice in Germany since 1 January 2025`,
      ),
    );
    expect(e.message).toContain('Send Factur-X 1.0 / ZUGFeRD 2.x');
    expect(e.details).toEqual(expect.objectContaining({ format, refused: true }));
  });

  it('answers a sourceFormat naming a retired format with its refusal; a retired XRechnung named as 3.0 is read', () => {
    const e = refusedBoth(zugferd1('basic'), { sourceFormat: 'zugferd1-basic' });
    expect(e.message).toMatch(/^ZUGFeRD 1\.0 BASIC: .*1 January 2025/);
    expect(e.details).toEqual(expect.objectContaining({ format: 'zugferd1-basic', refused: true }));
    expect(refusedBoth(ubl('Invoice', XRECHNUNG_3), { sourceFormat: 'xrechnung-2.3-ubl-invoice' }).message).toMatch(
      /^XRechnung 2\.3 UBL \(retired\) Invoice: XRechnung 2\.3 is retired/,
    );
    const old = ubl('Invoice', 'urn:cen.eu:en16931:2017#compliant#urn:xoev-de:kosit:standard:xrechnung_2.3');
    expect(detectFormat(old, { sourceFormat: 'xrechnung-ubl-invoice' })).toMatchObject({
      id: 'xrechnung-ubl-invoice',
      version: '2.3',
    });
  });

  it('refuses Peppol BIS 2 / CEN BII documents as retired', () => {
    const e = refusedBoth(
      ubl('Invoice', 'urn:www.cenbii.eu:transaction:biitrns010:ver2.0:extended:urn:www.peppol.eu:bis:peppol5a:ver2.0'),
    );
    expect(e.message).toMatch(/^CEN BII \/ Peppol BIS 1–2 .*predate EN 16931/);
  });

  it('names root QName, namespace and CustomizationID of an unknown document', () => {
    const e = refusedBoth(ubl('Invoice', 'urn:example:custom:1.0'));
    expect(e.code).toBe('UNKNOWN_FORMAT');
    expect(e.message).toBe(
      `document format not recognised: root element <Invoice> in namespace "${NS.ublInvoice}", CustomizationID ` +
        `(BT-24) "urn:example:custom:1.0", ` +
        'ProfileID "urn:fdc:peppol.eu:2017:poacc:billing:01:1.0"; the specification identifier is not one the ' +
        'gateway supports for <Invoice>',
    );
    expect(e.details).toEqual({
      rootName: 'Invoice',
      rootNamespace: NS.ublInvoice,
      customizationId: 'urn:example:custom:1.0',
    });
  });

  it('explains an unknown root, an EN 16931 extension it does not know, and a missing GuidelineID', () => {
    expect(refusedBoth('<x:Rechnung xmlns:x="urn:example:rechnung"/>').message).toBe(
      'document format not recognised: root element <x:Rechnung> in namespace "urn:example:rechnung"; this root ' +
        'element is not a supported document format',
    );
    expect(refusedBoth('<Invoice/>').message).toMatch(/root element <Invoice> in namespace \(none\)/);
    expect(refusedBoth(ubl('Invoice', 'urn:cen.eu:en16931:2017#conformant#urn:example:extension')).message).toMatch(
      /not one the gateway supports/,
    );
    expect(refusedBoth(cii(undefined)).message).toMatch(
      /GuidelineSpecifiedDocumentContextParameter\/ID \(BT-24\) is missing/,
    );
  });
});

describe('detectFormat: sourceFormat', () => {
  it('forces a known format by id, also where detection alone fails', () => {
    const d = detectBoth(cii('urn:example:unknown-guideline'), { sourceFormat: 'xrechnung-cii' });
    expect(d).toEqual(
      expect.objectContaining({ id: 'xrechnung-cii', customizationId: 'urn:example:unknown-guideline', syntax: 'CII' }),
    );
    expect(detectBoth(cii('urn:example:x'), { sourceFormat: '  XRechnung-CII ' }).id).toBe('xrechnung-cii');
  });

  it('forces by URN, resolving invoice or credit note from the root', () => {
    expect(detectBoth(ubl('CreditNote', undefined), { sourceFormat: PEPPOL_BIS3 }).id).toBe(
      'peppol-bis3-ubl-creditnote',
    );
    expect(detectBoth(ubl('Invoice', undefined), { sourceFormat: PEPPOL_BIS3 }).id).toBe('peppol-bis3-ubl-invoice');
    expect(detectBoth(cii('urn:example:x'), { sourceFormat: CII_URN }).id).toBe('en16931-cii');
    expect(detectBoth(cii('urn:example:x'), { sourceFormat: PEPPOL_BIS3 }).id).toBe('peppol-bis3-cii');
  });

  it('keeps the detected details when the forced format agrees', () => {
    expect(detectBoth(cii(XRECHNUNG_3), { sourceFormat: XRECHNUNG_3 })).toEqual(
      expect.objectContaining({ id: 'xrechnung-cii', version: '3.0' }),
    );
  });

  it('refuses an unknown sourceFormat', () => {
    const e = refusedBoth(ubl('Invoice', PEPPOL_BIS3), { sourceFormat: 'urn:example:nope' });
    expect(e.code).toBe('UNKNOWN_FORMAT');
    expect(e.status).toBe(400);
    expect(e.message).toBe('sourceFormat "urn:example:nope" is not a known format id or URN');
    expect(e.details).toEqual({ sourceFormat: 'urn:example:nope', reason: 'unknown-source-format' });
    // Retired formats cannot be forced either: naming one answers its refusal.
    expect(refusedBoth(ubl('Invoice', PEPPOL_BIS3), { sourceFormat: 'si-ubl-1-invoice' }).message).toMatch(
      /^SI-UBL 1\.x \(retired\) Invoice: .*1 January 2024/,
    );
  });

  it('refuses a sourceFormat whose syntax does not match the root element', () => {
    const e = refusedBoth(ubl('Invoice', PEPPOL_BIS3), { sourceFormat: 'fatturapa-1.2' });
    expect(e.code).toBe('UNKNOWN_FORMAT');
    expect(e.message).toBe(
      `sourceFormat "fatturapa-1.2" (FatturaPA) expects root element <FatturaElettronica> in "${NS.fatturaPA12}", ` +
        `but the document has root element <Invoice> in namespace "${NS.ublInvoice}"`,
    );
    expect(e.details).toEqual(expect.objectContaining({ reason: 'source-format-mismatch' }));
    const cross = refusedBoth(cii(PEPPOL_BIS3), { sourceFormat: 'peppol-bis3-ubl-invoice' });
    expect(cross.message).toMatch(
      /expects root element <Invoice> in "urn:oasis:names:specification:ubl:schema:xsd:Invoice-2", but the document has root element <rsm:CrossIndustryInvoice>/,
    );
    expect(refusedBoth(ubl('CreditNote', PEPPOL_BIS3), { sourceFormat: 'peppol-bis3-ubl-invoice' }).details).toEqual(
      expect.objectContaining({ reason: 'source-format-mismatch' }),
    );
  });
});

describe('format registry', () => {
  const listed = listFormats();

  it('lists every format once, as data', () => {
    const ids = listed.map((f) => f.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const f of listed) {
      expect(f.urn).not.toBe('');
      expect(f.documentTypes.length).toBeGreaterThan(0);
      expect(f.refused).toBeUndefined();
    }
    expect(ids).toEqual(
      expect.arrayContaining([
        'en16931-ubl-invoice',
        'en16931-ubl-creditnote',
        'peppol-bis3-ubl-invoice',
        'peppol-bis3-ubl-creditnote',
        'peppol-selfbilling-ubl-invoice',
        'nlcius-ubl-invoice',
        'nlcius-gaccount-ubl-invoice',
        'nlcius-cii',
        'xrechnung-ubl-invoice',
        'xrechnung-extension-ubl-invoice',
        'xrechnung-cvd-ubl-invoice',
        'xrechnung-cii',
        'xrechnung-extension-cii',
        'xrechnung-cvd-cii',
        'pint-ubl-invoice',
        'pint-eu-ubl-invoice',
        'pint-jp-nontax-ubl-invoice',
        'en16931-cii',
        'facturx-minimum',
        'facturx-basicwl',
        'facturx-basic',
        'facturx-en16931',
        'facturx-extended',
        'facturx-xrechnung',
        'fatturapa-1.2',
        'ebinterface-4.0',
        'ebinterface-6.1',
        'svefaktura-1.0',
        'setu-invoice-ubl',
        'dico-insbou004',
        'dico-sales005',
        'peppol-mls',
        'peppol-invoice-response',
        'peppol-order',
        'peppol-order-response',
      ]),
    );
    expect(listed.find((f) => f.id === 'en16931-cii')).toEqual({
      id: 'en16931-cii',
      name: 'EN 16931 CII D16B',
      syntax: 'CII',
      urn: CII_URN,
      documentTypes: ['Invoice', 'CreditNote'],
      version: '2017',
    });
    expect(
      listFormats({ includeRefused: true })
        .filter((f) => f.refused)
        .map((f) => f.id),
    ).toEqual([
      'zugferd1-basic',
      'zugferd1-comfort',
      'zugferd1-extended',
      'si-ubl-1-invoice',
      'si-ubl-1-creditnote',
      ...['1.2', '2.0', '2.1', '2.2', '2.3'].flatMap((v) => [
        `xrechnung-${v}-ubl-invoice`,
        `xrechnung-${v}-ubl-creditnote`,
        `xrechnung-${v}-cii`,
      ]),
      'cen-bii-legacy',
    ]);
    expect(getFormat('PEPPOL-BIS3-UBL-INVOICE')?.urn).toBe(PEPPOL_BIS3);
  });

  it('recognises every registered identifier as its own entry (no entry shadows another)', () => {
    let checked = 0;
    for (const def of FORMATS) {
      for (const root of def.roots) {
        for (const m of def.match) {
          const test = m.customizationId;
          const sample =
            test === undefined
              ? undefined
              : 'equals' in test
                ? test.equals
                : 'startsWith' in test
                  ? test.startsWith
                  : 'contains' in test
                    ? test.contains
                    : test.pattern.test(def.urn)
                      ? def.urn
                      : undefined;
          if (test !== undefined && sample === undefined) continue;
          const facts: DocumentFacts = {
            rootLocalName: root.localName,
            rootNamespace: root.namespace,
            rootQName: root.localName,
            rootAttributes: {},
            ...(sample !== undefined ? { customizationId: sample } : {}),
            declaredNamespaces: m.declaresNamespace ? [m.declaresNamespace] : [],
          };
          if (def.refused) {
            expect(() => classify(facts, m.container)).toThrow(def.refused.message);
          } else {
            expect(`${def.id} ← ${sample ?? '(root)'}: ${classify(facts, m.container).id}`).toBe(
              `${def.id} ← ${sample ?? '(root)'}: ${def.id}`,
            );
          }
          checked++;
        }
      }
    }
    expect(checked).toBeGreaterThan(80);
  });
});
