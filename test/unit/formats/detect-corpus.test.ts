import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { requireCorpus } from '../../support/corpus';
import { XMLSerializer } from '@xmldom/xmldom';
import { GatewayError } from '../../../src/core/gateway-error';
import { detectFormat, factsFromDocument, factsFromXml, type DetectedFormat } from '../../../src/formats/detect';
import { parseXml, select } from '../../../src/formats/xml/secure-parser';

/** Real documents written by others, beside the repository (never copied into it). */
const CORPUS = requireCorpus();
const describeCorpus = describe;

function walk(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? walk(p) : [p];
  });
}

type Expected =
  | { id: string; documentType?: DetectedFormat['documentType']; version?: string; container?: 'pdf' }
  | { error: GatewayError['code']; message: RegExp };

const ok = (id: string, extra: Omit<Extract<Expected, { id: string }>, 'id'> = {}): Expected => ({ id, ...extra });
const err = (code: GatewayError['code'], message: RegExp): Expected => ({ error: code, message });

const SI_UBL_12_REFUSED = err(
  'UNKNOWN_FORMAT',
  /SI-UBL 1\.2 .*not allowed on the Peppol network since 1 January 2024.*NLCIUS \(SI-UBL 2\.0.*Peppol BIS Billing 3\.0/,
);
const BT24_MISSING = /CustomizationID \(BT-24\) is missing/;
const ZUGFERD1_REFUSED = err('UNKNOWN_FORMAT', /^ZUGFeRD 1\.0 BASIC .*since 1 January 2025/);
const XRECHNUNG_2_REFUSED = (v: string, until: string): Expected =>
  err('UNKNOWN_FORMAT', new RegExp(`XRechnung ${v.replace('.', '\\.')} is retired: .*since ${until}.*XRechnung 3\\.0`));

/** Factur-X / ZUGFeRD samples from Mustang: a mixed directory, so file by file. */
const MUSTANG: Record<string, Expected> = {
  'EN16931_1_Teilrechnung.pdf': ok('facturx-en16931', { container: 'pdf' }),
  'EN16931_Einfach.pdf': ok('facturx-en16931', { container: 'pdf' }),
  'EXTENDED_Fremdwaehrung_wdis_fx-pdfa4.pdf': ok('facturx-extended', { container: 'pdf', version: '1.0' }),
  'MustangBeispiel20221026.pdf': ok('facturx-en16931', { container: 'pdf' }),
  'MustangGnuaccountingBeispielRE-20170509_505.pdf': ZUGFERD1_REFUSED,
  'ZTESTZUGFERD_1_INVDSS_012015738820PDF-1.pdf': ok('facturx-extended', { container: 'pdf', version: '2.0' }),
  'zugferd_invoice.pdf': ZUGFERD1_REFUSED,
  'MustangGnuaccountingBeispielRE-20170509_505PDF14.pdf': err('UNKNOWN_FORMAT', /no embedded files/),
  'MustangGnuaccountingBeispielRE-20170509_505PDFA3.pdf': err('UNKNOWN_FORMAT', /no embedded files/),
  'MustangGnuaccountingBeispielRE-20170509_505blanko.pdf': err('UNKNOWN_FORMAT', /no embedded files/),
  'MustangGnuaccountingBeispielRE-20171118_506blanko.pdf': err('UNKNOWN_FORMAT', /no embedded files/),
  'MustangGnuaccountingBeispielRE-20190610_507blanko.pdf': err('UNKNOWN_FORMAT', /no embedded files/),
  'MustangGnuaccountingBeispielRE-20201121_508blanko.pdf': err('UNKNOWN_FORMAT', /no embedded files/),
  'MustangGnuaccountingBeispielRE-20201121_508blankoA3.pdf': err('UNKNOWN_FORMAT', /no embedded files/),
  'veraPDFtestsuite6-7-11-t01-fail-a.pdf': err('UNKNOWN_FORMAT', /no embedded files/),
  'ORDER-X_EX01_ORDER_FULL_DATA-COMFORT.pdf': err('UNKNOWN_FORMAT', /embedded files: "order-x\.xml"/),
  'ORDER-X_EX01_ORDER_FULL_DATA-COMFORTorder-x.xml': err(
    'UNKNOWN_FORMAT',
    /<rsm:SCRDMCCBDACIOMessageStructure>.*Order-X order/,
  ),
  'Extended_fremdwaehrung.xml': ok('facturx-extended'),
  'factur-x-extended.xml': ok('facturx-extended'),
  'factur-x.xml': ok('en16931-cii'),
  'factur-x_invoicingPeriod.xml': ok('en16931-cii'),
  'line-total-4-decimals.xml': ok('en16931-cii'),
  'multiple-payment-means.cii.xml': ok('en16931-cii'),
  'testContractReferencedDocument.xml': ok('en16931-cii'),
  'not_validating_full_invoice_based_onTest_EeISI_300_CENfullmodel.cii.xml': ok('en16931-cii'),
  'not_validating_full_invoice_based_onTest_EeISI_300_CENfullmodel.ubl.xml': ok('en16931-ubl-invoice'),
  'XRechnung_internalRecalcBug.xml': ok('xrechnung-cii', { version: '3.0' }),
  'test_invoice_contract.xml': ok('xrechnung-cii', { version: '3.0' }),
  'test_invoice_note.xml': ok('xrechnung-cii', { version: '3.0' }),
  'TESTXRECHNUNG_INVDSS_012015776085.XML': ok('xrechnung-ubl-invoice', { version: '3.0' }),
  // Named XRECHNUNG_* but their CustomizationID is Peppol BIS Billing 3 (Mustang's converted output).
  'XRECHNUNG_Betriebskostenabrechnung.ubl.xml': ok('peppol-bis3-ubl-invoice'),
  'XRECHNUNG_Einfach.ubl.xml': ok('peppol-bis3-ubl-invoice'),
  'XRECHNUNG_Elektron.ubl.xml': ok('peppol-bis3-ubl-invoice'),
  'XRECHNUNG_Reisekostenabrechnung.ubl.xml': ok('peppol-bis3-ubl-invoice'),
  'testout-MustangGnuaccountingBeispielRE-20171118_506fx.ubl.xml': ok('peppol-bis3-ubl-invoice'),
  'testout-XR-Edge.ubl.xml': ok('peppol-bis3-ubl-invoice'),
  'testout-ZF2PushAllowances.ubl.xml': ok('peppol-bis3-ubl-invoice'),
  'testout-ZF2PushEdge.ubl.xml': ok('peppol-bis3-ubl-invoice'),
  'testout-ZF2PushItemChargesAllowances.ubl.xml': ok('peppol-bis3-ubl-invoice'),
  'testout-ZF2new.ubl.xml': ok('peppol-bis3-ubl-invoice'),
  'testout-ZF2newEdge.ubl.xml': ok('peppol-bis3-ubl-invoice'),
  'ubl-conv-ubl-output-factur-x.xml': ok('peppol-bis3-ubl-invoice'),
  'ubl-selfbilled-01.20a-INVOICE_ubl.xml': XRECHNUNG_2_REFUSED('2.3', '1 February 2024'),
  'ubl-creditnote.xml': err('UNKNOWN_FORMAT', BT24_MISSING),
  'cii/01.01a-INVOICE.cii.xml': ok('xrechnung-cii', { version: '3.0' }),
  'cii/02.03a-INVOICE_uncefact.xml': ok('xrechnung-cii', { version: '3.0' }),
  'cii/Factur-X_basic.xml': ok('facturx-basic'),
  'cii/UC11_F202600022_EXTENDED_FX_CII_BT-X-589Only_on_GROUP_Line.xml': ok('facturx-extended'),
  'cii/extended_warenrechnung_based_doublecashdiscount.xml': ok('facturx-extended'),
  'cii/facturFrMinimum.xml': ok('facturx-minimum'),
  'cii/lastschrift_iban_bug.xml': ok('en16931-cii'),
  'cii/minimalDebit.xml': ok('en16931-cii'),
  // A UBL document carrying the Factur-X EXTENDED identifier, which only exists for CII.
  'cii/bt17-response_1760553749128.cii.xml': err(
    'UNKNOWN_FORMAT',
    /<Invoice>.*"urn:cen\.eu:en16931:2017#conformant#urn:factur-x\.eu:1p0:extended"/,
  ),
  'ubl/periods.ubl.xml': err(
    'UNKNOWN_FORMAT',
    /<Invoice>.*#conformant#urn:factur-x\.eu:1p0:extended.*not one the gateway supports/,
  ),
  'ubl/01.01a-INVOICE.ubl.xml': ok('xrechnung-ubl-invoice', { version: '3.0' }),
  'ubl/04.01a-INVOICE_ubl.xml': XRECHNUNG_2_REFUSED('2.2', '1 August 2023'),
  'ubl/BT-128.ubl.xml': ok('peppol-bis3-ubl-invoice'),
  'ubl/UBL-CreditNote-2.1-Example.ubl.xml': err('UNKNOWN_FORMAT', BT24_MISSING),
  'ubl/XRECHNUNG_Betriebskostenabrechnung.ubl.xml': ok('xrechnung-ubl-invoice', { version: '3.0' }),
  'ubl/XRECHNUNG_Einfach.ubl.xml': ok('xrechnung-ubl-invoice', { version: '3.0' }),
  'ubl/XRECHNUNG_Elektron.ubl.xml': ok('xrechnung-ubl-invoice', { version: '3.0' }),
  'ubl/XRECHNUNG_Reisekostenabrechnung.ubl.xml': ok('xrechnung-ubl-invoice', { version: '3.0' }),
  'ubl/XRECHNUNG_teilrechnung.ubl.xml': ok('xrechnung-ubl-invoice', { version: '3.0' }),
  'ubl/not_validating_full_invoice_based_onTest_EeISI_300_CENfullmodel.ubl.xml': ok('en16931-ubl-invoice'),
};

/** Expected outcome per corpus file, by directory and file-name pattern; the first rule that matches applies. */
const RULES: ReadonlyArray<[RegExp, Expected | ((m: RegExpMatchArray) => Expected)]> = [
  [/^SOURCES\.md$/, err('INVALID_XML', /content is not XML/)],
  [/^as4\/dump-raw\.as4out$/, err('INVALID_XML', /invalid UTF-8 byte sequence/)],
  [/^as4\/received-receipts\//, err('INVALID_XML', /content is not XML: expected '<'/)],

  [
    /^ebinterface\/ebinterface\/ebi(\d)(\d)\//,
    (m) => ok(`ebinterface-${m[1]}.${m[2]}`, { version: `${m[1]}.${m[2]}` }),
  ],
  // Pre-EN 16931 UBL used by the ebInterface mapping tests: CEN BII / Peppol BIS 1–2, refused as retired.
  [
    /^ebinterface\/ubl\/creditnote\/creditnote-with-all-elements/,
    err('UNKNOWN_FORMAT', /CustomizationID \(BT-24\) "normalizedString".*not one the gateway supports/),
  ],
  [/^ebinterface\/ubl\/invoice_bad\/\.gitignore$/, err('INVALID_XML', /empty document/)],
  [
    /^ebinterface\/ubl\//,
    err(
      'UNKNOWN_FORMAT',
      /^CEN BII \/ Peppol BIS 1–2 .*CustomizationID "urn:www\.cenbii\.eu:.*NLCIUS.*Peppol BIS Billing 3\.0/,
    ),
  ],

  // ZUGFeRD 1.0 GuidelineIDs on a CII D16B root: neither ZUGFeRD 1.0 nor EN 16931.
  [
    /^en16931\/cii-examples\/(CII-BR-CO-10-RoundingIssue|CII_business_example_02|CII_business_example_Z)\.xml$/,
    err('UNKNOWN_FORMAT', /"urn:ferd:CrossIndustryDocument:invoice:1p0:comfort".*ZUGFeRD 1\.0 identifier/),
  ],
  [/^en16931\/cii-examples\//, ok('en16931-cii', { documentType: 'Invoice', version: '2017' })],
  [/^en16931\/ubl-examples\/(BIS3_Invoice_|FT G2G|issue116)/, ok('peppol-bis3-ubl-invoice', { version: '3.0' })],
  [/^en16931\/ubl-examples\/ubl-tc434-creditnote1\.xml$/, ok('en16931-ubl-creditnote', { documentType: 'CreditNote' })],
  [/^en16931\/ubl-examples\//, ok('en16931-ubl-invoice', { documentType: 'Invoice' })],
  [/^en16931\/unit-tests\/testfiles\/ubl-tc434-test-1\.xml$/, ok('en16931-ubl-invoice')],
  [
    /^en16931\/unit-tests\/testfiles\/(CreditNote-|BIS_Billing_30-Kreditering_med_kreditnota)/,
    ok('peppol-bis3-ubl-creditnote', { documentType: 'CreditNote' }),
  ],
  [/^en16931\/unit-tests\/testfiles\//, ok('peppol-bis3-ubl-invoice', { documentType: 'Invoice' })],
  [
    /^en16931\/unit-tests\/(Invoice-unit-UBL|CreditNote-unit-UBL|cii)\//,
    err('UNKNOWN_FORMAT', /<testSet>.*VEFA validator test set/),
  ],

  [/^facturx\/mustang\/subinvoicelines\//, ok('facturx-extended', { version: '1.0' })],
  [/^facturx\/mustang\/(.+)$/, (m) => MUSTANG[m[1] as string] ?? err('INTERNAL', /no expectation for this file/)],

  [/^nlcius\/si-ubl-2\.0\.3\/README$/, err('INVALID_XML', /content is not XML/)],
  [/^nlcius\/si-ubl-2\.0\.3\/SI-UBL-2\.0_error_no_customizationid\.xml$/, err('UNKNOWN_FORMAT', BT24_MISSING)],
  [
    /^nlcius\/si-ubl-2\.0\.3\/SI-UBL-2\.0_BR-NL-8_(error_CN|ok_381)/,
    ok('nlcius-ubl-creditnote', { documentType: 'CreditNote', version: '1.0' }),
  ],
  [/^nlcius\/si-ubl-2\.0\.3\//, ok('nlcius-ubl-invoice', { documentType: 'Invoice', version: '1.0' })],
  [/^nlcius\/gaccount\//, ok('nlcius-gaccount-ubl-invoice')],
  [/^nlcius\/cii\//, ok('nlcius-cii')],
  // R001 tests "CustomizationID missing": without BT-24 the format is unknown, and the message points at SI-UBL 1.2.
  [
    /^nlcius\/si-ubl-1\.2-rejected\/SI-UBL-INV-1\.2-error-BII2-T10-R001\.xml$/,
    err(
      'UNKNOWN_FORMAT',
      /CustomizationID \(BT-24\) is missing.*pre-EN 16931 CEN BII profile, as used by SI-UBL 1\.2.*1 January 2024/,
    ),
  ],
  [/^nlcius\/si-ubl-1\.2-rejected\//, SI_UBL_12_REFUSED],

  [/^peppol\/mls\/bad\/mls-01b\.xml$/, err('UNKNOWN_FORMAT', /CustomizationID \(BT-24\) "".*is missing/)],
  [/^peppol\/mls\//, ok('peppol-mls', { documentType: 'MessageLevelStatus', version: '1.0' })],
  [/^peppol\/sbdh\/bad\/bad-no-xml\.txt$/, err('INVALID_XML', /content is not XML/)],
  [/^peppol\/sbdh\//, err('UNKNOWN_FORMAT', /<(\w+:)?StandardBusinessDocument>.*SBDH envelope/)],
];

function expectationFor(rel: string): Expected {
  for (const [re, e] of RULES) {
    const m = re.exec(rel);
    if (m) return typeof e === 'function' ? e(m) : e;
  }
  return err('INTERNAL', /no expectation for this file/);
}

function outcome(bytes: Buffer, strategy: 'dom' | 'stream' | 'auto' = 'auto'): DetectedFormat | GatewayError {
  try {
    return detectFormat(bytes, { strategy });
  } catch (e) {
    if (e instanceof GatewayError) return e;
    throw e;
  }
}

const files = walk(CORPUS)
  .map((f) => path.relative(CORPUS, f).split(path.sep).join('/'))
  .sort();

describeCorpus('detectFormat over the shared corpus', () => {
  it('has an expectation for every corpus file', () => {
    expect(files.length).toBeGreaterThan(600);
    expect(
      files.filter(
        (f) => 'error' in expectationFor(f) && (expectationFor(f) as { error: string }).error === 'INTERNAL',
      ),
    ).toEqual([]);
  });

  it.each(files)('%s', (rel) => {
    const expected = expectationFor(rel);
    const got = outcome(readFileSync(path.join(CORPUS, rel)));
    if ('error' in expected) {
      expect(got).toBeInstanceOf(GatewayError);
      const e = got as GatewayError;
      expect({ code: e.code, message: e.message }).toEqual({
        code: expected.error,
        message: expect.stringMatching(expected.message),
      });
    } else {
      expect(got).not.toBeInstanceOf(GatewayError);
      const d = got as DetectedFormat;
      expect(d.id).toBe(expected.id);
      if (expected.documentType) expect(d.documentType).toBe(expected.documentType);
      if (expected.version) expect(d.version).toBe(expected.version);
      expect(d.container).toBe(expected.container);
    }
  });
});

describeCorpus('DOM and streaming detection agree', () => {
  const xmlFiles = files.filter((f) => /\.xml$/i.test(f));

  it.each(xmlFiles)('%s', (rel) => {
    const bytes = readFileSync(path.join(CORPUS, rel));
    let domFacts: unknown;
    try {
      domFacts = factsFromDocument(parseXml(bytes));
    } catch (e) {
      domFacts = (e as GatewayError).code;
    }
    let streamFacts: unknown;
    try {
      streamFacts = factsFromXml(bytes);
    } catch (e) {
      streamFacts = (e as GatewayError).code;
    }
    expect(streamFacts).toEqual(domFacts);

    const viaDom = outcome(bytes, 'dom');
    const viaStream = outcome(bytes, 'stream');
    const summary = (r: DetectedFormat | GatewayError): unknown =>
      r instanceof GatewayError ? { code: r.code, message: r.message } : r;
    expect(summary(viaStream)).toEqual(summary(viaDom));
  });

  it('agree on every document embedded in the EN 16931 conformance test sets (~1,100 fragments)', () => {
    const serializer = new XMLSerializer();
    const sets = files.filter((f) => /^en16931\/unit-tests\/(Invoice-unit-UBL|CreditNote-unit-UBL|cii)\//.test(f));
    let compared = 0;
    const ids = new Map<string, number>();
    for (const rel of sets) {
      const testSet = parseXml(readFileSync(path.join(CORPUS, rel)));
      // Each <test> holds an <assert> and one business document.
      for (const node of select(testSet, '/v:testSet/v:test/*[not(self::v:assert)]', {
        v: 'http://difi.no/xsd/vefa/validator/1.0',
      })) {
        const xml = Buffer.from(serializer.serializeToString(node), 'utf8');
        const dom = outcome(xml, 'dom');
        const stream = outcome(xml, 'stream');
        const key = (r: DetectedFormat | GatewayError): string =>
          r instanceof GatewayError ? `${r.code}: ${r.message}` : JSON.stringify(r);
        expect(key(stream)).toBe(key(dom));
        expect(factsFromXml(xml)).toEqual(factsFromDocument(parseXml(xml)));
        const k = dom instanceof GatewayError ? dom.code : dom.id;
        ids.set(k, (ids.get(k) ?? 0) + 1);
        compared++;
      }
    }
    expect(compared).toBeGreaterThan(1000);
    // The fragments exercise single rules and omit or fake BT-24, so none is a complete, recognisable document.
    expect([...ids.keys()]).toEqual(['UNKNOWN_FORMAT']);
  });
});
