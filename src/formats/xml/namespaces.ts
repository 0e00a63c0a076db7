/**
 * Namespace URIs used by format detection and by the code that reads documents. XPath expressions elsewhere bind their
 * own prefixes to these URIs (see `select`/`text` in secure-parser.ts); the prefixes a document happens to use are
 * never
 * relied upon.
 */
export const NS = {
  xml: 'http://www.w3.org/XML/1998/namespace',
  xmlns: 'http://www.w3.org/2000/xmlns/',

  // UBL 2.x document roots and common components
  ublInvoice: 'urn:oasis:names:specification:ubl:schema:xsd:Invoice-2',
  ublCreditNote: 'urn:oasis:names:specification:ubl:schema:xsd:CreditNote-2',
  ublApplicationResponse: 'urn:oasis:names:specification:ubl:schema:xsd:ApplicationResponse-2',
  ublOrder: 'urn:oasis:names:specification:ubl:schema:xsd:Order-2',
  ublOrderResponse: 'urn:oasis:names:specification:ubl:schema:xsd:OrderResponse-2',
  cac: 'urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2',
  cbc: 'urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2',
  ext: 'urn:oasis:names:specification:ubl:schema:xsd:CommonExtensionComponents-2',

  // UN/CEFACT Cross Industry Invoice D16B (EN 16931-3-3, Factur-X / ZUGFeRD 2.x, XRechnung CII)
  rsm: 'urn:un:unece:uncefact:data:standard:CrossIndustryInvoice:100',
  ram: 'urn:un:unece:uncefact:data:standard:ReusableAggregateBusinessInformationEntity:100',
  udt: 'urn:un:unece:uncefact:data:standard:UnqualifiedDataType:100',
  qdt: 'urn:un:unece:uncefact:data:standard:QualifiedDataType:100',

  // ZUGFeRD 1.0 (CrossIndustryDocument, UN/CEFACT D13B-era components)
  zf1Rsm: 'urn:ferd:CrossIndustryDocument:invoice:1p0',
  zf1Ram: 'urn:un:unece:uncefact:data:standard:ReusableAggregateBusinessInformationEntity:12',

  // Other national syntaxes
  fatturaPA12: 'http://ivaservizi.agenziaentrate.gov.it/docs/xsd/fatture/v1.2',
  svefaktura10: 'urn:sfti:documents:BasicInvoice:1:0',
  svefakturaEnvelope: 'urn:sfti:documents:ObjectEnvelope:1:0',
  dicoInsbou004: 'http://www.gs1.nl/factuur/insbou/004',
  /**
   * DICO SALES005 invoice. Ketenstandaard publishes its XSDs to members only; the URI follows the pattern of the public
   * SALES005 namespaces (`http://www.ketenstandaard.nl/<bericht>/SALES/005`). Detection accepts any message segment.
   */
  dicoSales005Invoice: 'http://www.ketenstandaard.nl/factuur/SALES/005',
  setuInvoiceExtension: 'urn:ns.setu.nl:setu:invoice:extension:v2.0',

  // Envelopes and containers that are not e-invoice formats themselves (named in refusal messages)
  sbdh: 'http://www.unece.org/cefact/namespaces/StandardBusinessDocumentHeader',
  vefaTestSet: 'http://difi.no/xsd/vefa/validator/1.0',
  orderX: 'urn:un:unece:uncefact:data:SCRDMCCBDACIOMessageStructure:100',
} as const;

/** Prefix map for UBL documents, for use with `select`/`text`. */
export const UBL_NS = {
  inv: NS.ublInvoice,
  cn: NS.ublCreditNote,
  cac: NS.cac,
  cbc: NS.cbc,
  ext: NS.ext,
} as const;

/** Prefix map for CII D16B documents, for use with `select`/`text`. */
export const CII_NS = {
  rsm: NS.rsm,
  ram: NS.ram,
  udt: NS.udt,
  qdt: NS.qdt,
} as const;
