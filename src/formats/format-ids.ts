import { NS } from './xml/namespaces';

/**
 * The format registry: every document format the gateway recognises, as data. Detection (detect.ts) reads the root
 * element and the specification identifier (BT-24: UBL `cbc:CustomizationID`, CII `GuidelineSpecifiedDocumentContext-
 * Parameter/ID`) and picks the entry whose matcher scores highest, so a more specific identifier always beats a more
 * general one (XRechnung extension over XRechnung over plain EN 16931; NLCIUS G-account over NLCIUS; SETU over NLCIUS).
 *
 * Identifiers are taken from the specifications' own artefacts (see reference/formats.md): KoSIT scenarios for
 * XRechnung, the SI-UBL/NLCIUS Schematron (which tests with starts-with), Peppol BIS and PINT rules (starts-with),
 * Mustang/Factur-X for the CII profiles.
 */

export type Syntax = 'UBL' | 'CII' | 'FatturaPA' | 'ebInterface' | 'Svefaktura' | 'DICO' | 'ZUGFeRD1' | 'other';

export type DocumentType =
  'Invoice' | 'CreditNote' | 'ApplicationResponse' | 'Order' | 'OrderResponse' | 'MessageLevelStatus';

export const DOCUMENT_TYPES: readonly DocumentType[] = [
  'Invoice',
  'CreditNote',
  'ApplicationResponse',
  'Order',
  'OrderResponse',
  'MessageLevelStatus',
];

/**
 * How the business document type follows from the root: fixed, from BT-3 (CII `ExchangedDocument/TypeCode`, where one
 * root carries invoices and credit notes), or from the ebInterface `DocumentType` attribute.
 */
export type DocumentTypeRule = DocumentType | 'byTypeCode' | 'byEbInterfaceDocumentType';

export interface RootSpec {
  localName: string;
  namespace: string;
  /** Accepts a family of namespace URIs; `namespace` stays the canonical one. */
  namespacePattern?: RegExp;
  documentType: DocumentTypeRule;
}

export type IdentifierTest = { equals: string } | { startsWith: string } | { contains: string } | { pattern: RegExp };

/** One way of recognising a format; all given conditions must hold. No condition at all: the root alone decides. */
export interface Matcher {
  /** Specificity: the applicable matcher with the highest score wins. */
  score: number;
  /** Test on BT-24 (UBL CustomizationID, CII/ZUGFeRD 1 GuidelineID). */
  customizationId?: IdentifierTest;
  /** A namespace URI that must be declared somewhere in the document. */
  declaresNamespace?: string;
  /** Only applies to XML taken out of a PDF (Factur-X / ZUGFeRD hybrid). */
  container?: 'pdf';
  version?: string;
  /** Capture group of a `pattern` test that holds the version. */
  versionGroup?: number;
}

export interface Refusal {
  code: 'UNKNOWN_FORMAT' | 'UNPROCESSABLE';
  message: string;
}

export interface FormatDefinition {
  id: string;
  name: string;
  syntax: Syntax;
  /** The URN `sourceFormat` / `targetFormat` use for this format. Shared by the invoice and credit note entries. */
  urn: string;
  /** Further URNs or identifiers that select this entry as `sourceFormat`. */
  aliases?: readonly string[];
  roots: readonly RootSpec[];
  match: readonly Matcher[];
  version?: string;
  /** Root attribute holding the version (FatturaPA `versione`). */
  versionAttribute?: string;
  /** Recognised but not accepted. */
  refused?: Refusal;
}

// ---------------------------------------------------------------------------------------------------------------------
// Identifiers

export const EN16931 = 'urn:cen.eu:en16931:2017';
export const PEPPOL_BIS3 = `${EN16931}#compliant#urn:fdc:peppol.eu:2017:poacc:billing:3.0`;
export const PEPPOL_SELF_BILLING = `${EN16931}#compliant#urn:fdc:peppol.eu:2017:poacc:selfbilling:3.0`;
export const NLCIUS = `${EN16931}#compliant#urn:fdc:nen.nl:nlcius:v1.0`;
export const NLCIUS_GACCOUNT = `${NLCIUS}#conformant#urn:fdc:nen.nl:gaccount:v1.0`;
export const XRECHNUNG_3 = `${EN16931}#compliant#urn:xeinkauf.de:kosit:xrechnung_3.0`;
export const XRECHNUNG_3_EXTENSION = `${XRECHNUNG_3}#conformant#urn:xeinkauf.de:kosit:extension:xrechnung_3.0`;
export const XRECHNUNG_3_CVD = `${XRECHNUNG_3}#compliant#urn:xeinkauf.de:kosit:xrechnung:cvd_0.9`;
export const CII_URN = NS.rsm;

export const FACTURX_MINIMUM = 'urn:factur-x.eu:1p0:minimum';
export const FACTURX_BASIC_WL = 'urn:factur-x.eu:1p0:basicwl';
export const FACTURX_BASIC = `${EN16931}#compliant#urn:factur-x.eu:1p0:basic`;
export const FACTURX_EXTENDED = `${EN16931}#conformant#urn:factur-x.eu:1p0:extended`;
export const FACTURX_EXTENDED_CTC_FR = `${EN16931}#conformant#urn.cpro.gouv.fr:1p0:extended-ctc-fr`;

const ZUGFERD1_GUIDELINE = 'urn:ferd:CrossIndustryDocument:invoice:1p0';

const RETIRED_UBL_ADVICE =
  'Send NLCIUS (SI-UBL 2.0, CustomizationID urn:cen.eu:en16931:2017#compliant#urn:fdc:nen.nl:nlcius:v1.0) or ' +
  'Peppol BIS Billing 3.0 (CustomizationID urn:cen.eu:en16931:2017#compliant#urn:fdc:peppol.eu:2017:poacc:billing:3.0).';

/** Refusal message for SI-UBL 1.x, also used where a document lacks BT-24 but carries SI-UBL 1.x markers. */
export const SI_UBL_1_REFUSAL =
  'SI-UBL 1.2 (and older SI-UBL 1.x) is not allowed on the Peppol network since 1 January 2024. ' + RETIRED_UBL_ADVICE;

// ---------------------------------------------------------------------------------------------------------------------
// Scores: exact identifier > anchored pattern > prefix > fallback. Combined conditions add on top.

const EXACT = 300;
const PATTERN = 250;
const PREFIX = 200;
const GENERIC_PREFIX = 150;
const FALLBACK = 100;

const eq = (value: string, extra: Partial<Matcher> = {}): Matcher => ({
  score: EXACT,
  customizationId: { equals: value },
  ...extra,
});
const prefix = (value: string, extra: Partial<Matcher> = {}): Matcher => ({
  score: PREFIX,
  customizationId: { startsWith: value },
  ...extra,
});
const pattern = (re: RegExp, extra: Partial<Matcher> = {}): Matcher => ({
  score: PATTERN,
  customizationId: { pattern: re },
  ...extra,
});
const rootOnly: Matcher = { score: FALLBACK };

// ---------------------------------------------------------------------------------------------------------------------
// Roots

const UBL_INVOICE: RootSpec = { localName: 'Invoice', namespace: NS.ublInvoice, documentType: 'Invoice' };
const UBL_CREDIT_NOTE: RootSpec = { localName: 'CreditNote', namespace: NS.ublCreditNote, documentType: 'CreditNote' };
const CII_ROOT: RootSpec = { localName: 'CrossIndustryInvoice', namespace: NS.rsm, documentType: 'byTypeCode' };
const ZF1_ROOT: RootSpec = { localName: 'CrossIndustryDocument', namespace: NS.zf1Rsm, documentType: 'byTypeCode' };

interface BillingPair {
  id: string;
  name: string;
  urn: string;
  match: readonly Matcher[];
  version?: string;
  refused?: Refusal;
}

/** UBL Invoice and CreditNote are separate schemas (and validation artefacts), so each gets its own entry. */
function ublInvoiceAndCreditNote(p: BillingPair): FormatDefinition[] {
  const common = {
    syntax: 'UBL' as const,
    urn: p.urn,
    match: p.match,
    ...(p.version ? { version: p.version } : {}),
    ...(p.refused ? { refused: p.refused } : {}),
  };
  return [
    { ...common, id: `${p.id}-invoice`, name: `${p.name} Invoice`, roots: [UBL_INVOICE] },
    { ...common, id: `${p.id}-creditnote`, name: `${p.name} Credit Note`, roots: [UBL_CREDIT_NOTE] },
  ];
}

// XRechnung: KoSIT compares exact strings per release; any major.minor is recognised here and reported as `version`,
// including the 1.x/2.x identifiers of the xoev-de namespace, so validation can refuse a retired release precisely.
const XR_BASE = String.raw`^urn:cen\.eu:en16931:2017#compliant#urn:(?:xeinkauf\.de:kosit|xoev-de:kosit:standard):xrechnung_(\d+\.\d+)`;
const XR_CIUS = new RegExp(`${XR_BASE}$`);
const XR_EXTENSION = new RegExp(
  `${XR_BASE}#conformant#urn:(?:xeinkauf\\.de|xoev-de):kosit:extension:xrechnung_\\d+\\.\\d+$`,
);
const XR_CVD = new RegExp(`${XR_BASE}#compliant#urn:xeinkauf\\.de:kosit:xrechnung:cvd_\\d+\\.\\d+$`);
/** An EN 16931 CIUS this registry does not know: still EN 16931-compliant by definition. No extension (#conformant#). */
const EN16931_UNKNOWN_CIUS = /^urn:cen\.eu:en16931:2017#compliant#[^#]+$/;

const PINT_JURISDICTIONS: ReadonlyArray<{ code: string; name: string; selfBilling: boolean }> = [
  { code: 'eu', name: 'Europe', selfBilling: false },
  { code: 'aunz', name: 'Australia / New Zealand', selfBilling: true },
  { code: 'jp', name: 'Japan', selfBilling: true },
  { code: 'sg', name: 'Singapore', selfBilling: false },
  { code: 'my', name: 'Malaysia', selfBilling: true },
  { code: 'ae', name: 'United Arab Emirates', selfBilling: true },
  { code: 'om', name: 'Oman', selfBilling: false },
];

function pintFormats(): FormatDefinition[] {
  const out: FormatDefinition[] = [];
  // The generic PINT entries also take jurisdictions not listed here: PINT rules test the prefix.
  out.push(
    ...ublInvoiceAndCreditNote({
      id: 'pint-ubl',
      name: 'Peppol PINT Billing',
      urn: 'urn:peppol:pint:billing-1',
      version: '1',
      match: [{ score: GENERIC_PREFIX, customizationId: { startsWith: 'urn:peppol:pint:billing-1' } }],
    }),
    ...ublInvoiceAndCreditNote({
      id: 'pint-selfbilling-ubl',
      name: 'Peppol PINT Self-Billing',
      urn: 'urn:peppol:pint:selfbilling-1',
      version: '1',
      match: [{ score: GENERIC_PREFIX, customizationId: { startsWith: 'urn:peppol:pint:selfbilling-1' } }],
    }),
  );
  for (const j of PINT_JURISDICTIONS) {
    const billing = `urn:peppol:pint:billing-1@${j.code}-1`;
    out.push(
      ...ublInvoiceAndCreditNote({
        id: `pint-${j.code}-ubl`,
        name: `Peppol PINT ${j.name} Billing`,
        urn: billing,
        version: '1',
        match: [prefix(billing)],
      }),
    );
    if (j.selfBilling) {
      const sb = `urn:peppol:pint:selfbilling-1@${j.code}-1`;
      out.push(
        ...ublInvoiceAndCreditNote({
          id: `pint-${j.code}-selfbilling-ubl`,
          name: `Peppol PINT ${j.name} Self-Billing`,
          urn: sb,
          version: '1',
          match: [prefix(sb)],
        }),
      );
    }
  }
  const nonTax = 'urn:peppol:pint:nontaxinvoice-1@jp-1';
  out.push(
    ...ublInvoiceAndCreditNote({
      id: 'pint-jp-nontax-ubl',
      name: 'Peppol PINT Japan Non-tax Invoice',
      urn: nonTax,
      version: '1',
      match: [prefix(nonTax)],
    }),
  );
  return out;
}

function ebInterface(version: string): FormatDefinition {
  const ns = `http://www.ebinterface.at/schema/${version.replace('.', 'p')}/`;
  return {
    id: `ebinterface-${version}`,
    name: `ebInterface ${version}`,
    syntax: 'ebInterface',
    urn: ns,
    roots: [{ localName: 'Invoice', namespace: ns, documentType: 'byEbInterfaceDocumentType' }],
    match: [rootOnly],
    version,
  };
}

function applicationResponse(documentType: DocumentType): RootSpec {
  return { localName: 'ApplicationResponse', namespace: NS.ublApplicationResponse, documentType };
}

const UBL_ANY_ROOTS: readonly RootSpec[] = [
  UBL_INVOICE,
  UBL_CREDIT_NOTE,
  applicationResponse('ApplicationResponse'),
  { localName: 'Order', namespace: NS.ublOrder, documentType: 'Order' },
  { localName: 'OrderResponse', namespace: NS.ublOrderResponse, documentType: 'OrderResponse' },
];

// ---------------------------------------------------------------------------------------------------------------------
// The registry

export const FORMATS: readonly FormatDefinition[] = Object.freeze([
  // --- UBL 2.1 billing -------------------------------------------------------------------------------------------
  ...ublInvoiceAndCreditNote({
    id: 'en16931-ubl',
    name: 'EN 16931 UBL 2.1',
    urn: EN16931,
    version: '2017',
    match: [eq(EN16931), { score: FALLBACK, customizationId: { pattern: EN16931_UNKNOWN_CIUS } }],
  }),
  ...ublInvoiceAndCreditNote({
    id: 'peppol-bis3-ubl',
    name: 'Peppol BIS Billing 3.0',
    urn: PEPPOL_BIS3,
    version: '3.0',
    match: [prefix(PEPPOL_BIS3)],
  }),
  ...ublInvoiceAndCreditNote({
    id: 'peppol-selfbilling-ubl',
    name: 'Peppol BIS Self-Billing 3.0',
    urn: PEPPOL_SELF_BILLING,
    version: '3.0',
    match: [prefix(PEPPOL_SELF_BILLING)],
  }),
  ...ublInvoiceAndCreditNote({
    id: 'nlcius-ubl',
    name: 'NLCIUS (SI-UBL 2.0)',
    urn: NLCIUS,
    version: '1.0',
    match: [prefix(NLCIUS)],
  }),
  ...ublInvoiceAndCreditNote({
    id: 'nlcius-gaccount-ubl',
    name: 'NLCIUS (SI-UBL 2.0) with G-account extension',
    urn: NLCIUS_GACCOUNT,
    version: '1.0',
    match: [prefix(NLCIUS_GACCOUNT, { score: EXACT })],
  }),
  ...ublInvoiceAndCreditNote({
    id: 'xrechnung-ubl',
    name: 'XRechnung UBL',
    urn: XRECHNUNG_3,
    match: [pattern(XR_CIUS, { versionGroup: 1 })],
  }),
  ...ublInvoiceAndCreditNote({
    id: 'xrechnung-extension-ubl',
    name: 'XRechnung Extension UBL',
    urn: XRECHNUNG_3_EXTENSION,
    match: [pattern(XR_EXTENSION, { versionGroup: 1 })],
  }),
  ...ublInvoiceAndCreditNote({
    id: 'xrechnung-cvd-ubl',
    name: 'XRechnung CVD (Clean Vehicles Directive) UBL',
    urn: XRECHNUNG_3_CVD,
    match: [pattern(XR_CVD, { versionGroup: 1 })],
  }),
  ...pintFormats(),
  {
    // SETU Invoice carries the NLCIUS CustomizationID; its own identifier is optional (SETU rule Invoice.4 only warns).
    id: 'setu-invoice-ubl',
    name: 'SETU Invoice 2.x (NLCIUS-based, staffing)',
    syntax: 'UBL',
    urn: 'urn:fdc:setu.nl:invoice:v2.2',
    aliases: [NS.setuInvoiceExtension],
    roots: [UBL_INVOICE],
    match: [
      { score: EXACT + 100, customizationId: { pattern: /urn:fdc:setu\.nl:invoice:v(\d+\.\d+)/ }, versionGroup: 1 },
      { score: EXACT + 100, customizationId: { startsWith: NLCIUS }, declaresNamespace: NS.setuInvoiceExtension },
    ],
  },

  // --- Peppol post-award messages (UBL) ----------------------------------------------------------------------------
  {
    id: 'peppol-mls',
    name: 'Peppol Message Level Status',
    syntax: 'UBL',
    urn: 'urn:peppol:edec:mls:1.0',
    roots: [applicationResponse('MessageLevelStatus')],
    match: [prefix('urn:peppol:edec:mls')],
    version: '1.0',
  },
  {
    id: 'peppol-invoice-response',
    name: 'Peppol Invoice Response 3',
    syntax: 'UBL',
    urn: 'urn:fdc:peppol.eu:poacc:trns:invoice_response:3',
    roots: [applicationResponse('ApplicationResponse')],
    match: [prefix('urn:fdc:peppol.eu:poacc:trns:invoice_response:3')],
    version: '3',
  },
  {
    id: 'peppol-mlr',
    name: 'Peppol Message Level Response 3',
    syntax: 'UBL',
    urn: 'urn:fdc:peppol.eu:poacc:trns:mlr:3',
    roots: [applicationResponse('ApplicationResponse')],
    match: [prefix('urn:fdc:peppol.eu:poacc:trns:mlr:3')],
    version: '3',
  },
  {
    id: 'peppol-order',
    name: 'Peppol Order 3',
    syntax: 'UBL',
    urn: 'urn:fdc:peppol.eu:poacc:trns:order:3',
    roots: [{ localName: 'Order', namespace: NS.ublOrder, documentType: 'Order' }],
    match: [prefix('urn:fdc:peppol.eu:poacc:trns:order:3')],
    version: '3',
  },
  {
    id: 'peppol-order-response',
    name: 'Peppol Order Response 3',
    syntax: 'UBL',
    urn: 'urn:fdc:peppol.eu:poacc:trns:order_response:3',
    roots: [{ localName: 'OrderResponse', namespace: NS.ublOrderResponse, documentType: 'OrderResponse' }],
    match: [prefix('urn:fdc:peppol.eu:poacc:trns:order_response:3')],
    version: '3',
  },

  // --- CII D16B ----------------------------------------------------------------------------------------------------
  {
    // Plain EN 16931 CII; the same GuidelineID is the Factur-X/ZUGFeRD "EN 16931 (COMFORT)" profile, reported as
    // facturx-en16931 when the XML comes out of a PDF (whose validation adds the Factur-X rules).
    id: 'en16931-cii',
    name: 'EN 16931 CII D16B',
    syntax: 'CII',
    urn: CII_URN,
    aliases: [EN16931],
    roots: [CII_ROOT],
    match: [eq(EN16931), { score: FALLBACK, customizationId: { pattern: EN16931_UNKNOWN_CIUS } }],
    version: '2017',
  },
  {
    id: 'facturx-minimum',
    name: 'Factur-X / ZUGFeRD MINIMUM',
    syntax: 'CII',
    urn: FACTURX_MINIMUM,
    roots: [CII_ROOT],
    match: [eq(FACTURX_MINIMUM, { version: '1.0' }), eq('urn:zugferd.de:2p0:minimum', { version: '2.0' })],
  },
  {
    id: 'facturx-basicwl',
    name: 'Factur-X / ZUGFeRD BASIC WL',
    syntax: 'CII',
    urn: FACTURX_BASIC_WL,
    roots: [CII_ROOT],
    match: [eq(FACTURX_BASIC_WL, { version: '1.0' }), eq('urn:zugferd.de:2p0:basicwl', { version: '2.0' })],
  },
  {
    id: 'facturx-basic',
    name: 'Factur-X / ZUGFeRD BASIC',
    syntax: 'CII',
    urn: FACTURX_BASIC,
    roots: [CII_ROOT],
    match: [
      eq(FACTURX_BASIC, { version: '1.0' }),
      eq(`${EN16931}#compliant#urn:zugferd.de:2p0:basic`, { version: '2.0' }),
    ],
  },
  {
    id: 'facturx-en16931',
    name: 'Factur-X / ZUGFeRD EN 16931 (COMFORT)',
    syntax: 'CII',
    urn: EN16931,
    roots: [CII_ROOT],
    match: [eq(EN16931, { container: 'pdf', score: EXACT + 50 })],
    version: '2017',
  },
  {
    id: 'facturx-extended',
    name: 'Factur-X / ZUGFeRD EXTENDED',
    syntax: 'CII',
    urn: FACTURX_EXTENDED,
    roots: [CII_ROOT],
    match: [
      eq(FACTURX_EXTENDED, { version: '1.0' }),
      eq(`${EN16931}#conformant#urn:zugferd.de:2p0:extended`, { version: '2.0' }),
    ],
  },
  {
    id: 'facturx-extended-ctc-fr',
    name: 'Factur-X EXTENDED-CTC-FR',
    syntax: 'CII',
    urn: FACTURX_EXTENDED_CTC_FR,
    roots: [CII_ROOT],
    match: [eq(FACTURX_EXTENDED_CTC_FR, { version: '1.0' })],
  },
  {
    id: 'facturx-xrechnung',
    name: 'Factur-X / ZUGFeRD XRECHNUNG',
    syntax: 'CII',
    urn: XRECHNUNG_3,
    roots: [CII_ROOT],
    match: [pattern(XR_CIUS, { versionGroup: 1, container: 'pdf', score: PATTERN + 50 })],
  },
  {
    id: 'xrechnung-cii',
    name: 'XRechnung CII',
    syntax: 'CII',
    urn: XRECHNUNG_3,
    roots: [CII_ROOT],
    match: [pattern(XR_CIUS, { versionGroup: 1 })],
  },
  {
    id: 'xrechnung-extension-cii',
    name: 'XRechnung Extension CII',
    syntax: 'CII',
    urn: XRECHNUNG_3_EXTENSION,
    roots: [CII_ROOT],
    match: [pattern(XR_EXTENSION, { versionGroup: 1 })],
  },
  {
    id: 'xrechnung-cvd-cii',
    name: 'XRechnung CVD (Clean Vehicles Directive) CII',
    syntax: 'CII',
    urn: XRECHNUNG_3_CVD,
    roots: [CII_ROOT],
    match: [pattern(XR_CVD, { versionGroup: 1 })],
  },
  {
    id: 'nlcius-cii',
    name: 'NLCIUS CII',
    syntax: 'CII',
    urn: NLCIUS,
    roots: [CII_ROOT],
    match: [prefix(NLCIUS)],
    version: '1.0',
  },
  {
    id: 'peppol-bis3-cii',
    name: 'Peppol BIS Billing 3.0 CII',
    syntax: 'CII',
    urn: PEPPOL_BIS3,
    roots: [CII_ROOT],
    match: [prefix(PEPPOL_BIS3)],
    version: '3.0',
  },

  // --- ZUGFeRD 1.0 -------------------------------------------------------------------------------------------------
  {
    id: 'zugferd1-basic',
    name: 'ZUGFeRD 1.0 BASIC',
    syntax: 'ZUGFeRD1',
    urn: `${ZUGFERD1_GUIDELINE}:basic`,
    roots: [ZF1_ROOT],
    match: [eq(`${ZUGFERD1_GUIDELINE}:basic`)],
    version: '1.0',
  },
  {
    id: 'zugferd1-comfort',
    name: 'ZUGFeRD 1.0 COMFORT',
    syntax: 'ZUGFeRD1',
    urn: `${ZUGFERD1_GUIDELINE}:comfort`,
    roots: [ZF1_ROOT],
    match: [eq(`${ZUGFERD1_GUIDELINE}:comfort`)],
    version: '1.0',
  },
  {
    id: 'zugferd1-extended',
    name: 'ZUGFeRD 1.0 EXTENDED',
    syntax: 'ZUGFeRD1',
    urn: `${ZUGFERD1_GUIDELINE}:extended`,
    roots: [ZF1_ROOT],
    match: [eq(`${ZUGFERD1_GUIDELINE}:extended`)],
    version: '1.0',
  },

  // --- National syntaxes identified by their root ---------------------------------------------------------------------
  {
    id: 'fatturapa-1.2',
    name: 'FatturaPA 1.2',
    syntax: 'FatturaPA',
    urn: NS.fatturaPA12,
    roots: [{ localName: 'FatturaElettronica', namespace: NS.fatturaPA12, documentType: 'Invoice' }],
    match: [rootOnly],
    // FPA12 (public administration) or FPR12 (B2B/B2C)
    versionAttribute: 'versione',
  },
  ...['4.0', '4.1', '4.2', '4.3', '5.0', '6.0', '6.1'].map(ebInterface),
  {
    id: 'svefaktura-1.0',
    name: 'Svefaktura 1.0',
    syntax: 'Svefaktura',
    urn: NS.svefaktura10,
    roots: [{ localName: 'Invoice', namespace: NS.svefaktura10, documentType: 'Invoice' }],
    match: [rootOnly],
    version: '1.0',
  },
  {
    id: 'dico-insbou004',
    name: 'DICO INSBOU004 invoice',
    syntax: 'DICO',
    urn: NS.dicoInsbou004,
    roots: [{ localName: 'Invoice', namespace: NS.dicoInsbou004, documentType: 'Invoice' }],
    match: [rootOnly],
    version: 'INSBOU004',
  },
  {
    id: 'dico-sales005',
    name: 'DICO SALES005 invoice',
    syntax: 'DICO',
    urn: NS.dicoSales005Invoice,
    roots: [
      {
        localName: 'Invoice',
        namespace: NS.dicoSales005Invoice,
        namespacePattern: /^https?:\/\/www\.ketenstandaard\.nl\/[A-Za-z]+\/SALES\/005\/?$/i,
        documentType: 'Invoice',
      },
    ],
    match: [rootOnly],
    version: 'SALES005',
  },

  // --- Recognised and refused ------------------------------------------------------------------------------------------
  ...ublInvoiceAndCreditNote({
    id: 'si-ubl-1',
    name: 'SI-UBL 1.x (retired)',
    urn: 'urn:www.simplerinvoicing.org:si:si-ubl:ver1.2',
    match: [
      { score: EXACT + 50, customizationId: { contains: 'urn:www.simplerinvoicing.org:si:si-ubl:' } },
      { score: EXACT + 50, customizationId: { contains: 'urn:www.simplerinvoicing.org:si-ubl:' } },
    ],
    refused: { code: 'UNKNOWN_FORMAT', message: SI_UBL_1_REFUSAL },
  }),
  {
    id: 'cen-bii-legacy',
    name: 'CEN BII / Peppol BIS 1–2 (pre-EN 16931, retired)',
    syntax: 'UBL',
    urn: 'urn:www.cenbii.eu:transaction',
    roots: UBL_ANY_ROOTS,
    match: [prefix('urn:www.cenbii.eu:')],
    refused: {
      code: 'UNKNOWN_FORMAT',
      message:
        'CEN BII / Peppol BIS 1 and 2 documents predate EN 16931 and are no longer accepted. ' + RETIRED_UBL_ADVICE,
    },
  },
]);

// ---------------------------------------------------------------------------------------------------------------------
// Lookups

export interface FormatListing {
  id: string;
  name: string;
  syntax: Syntax;
  urn: string;
  documentTypes: DocumentType[];
  version?: string;
  refused?: boolean;
}

export function documentTypesOf(def: FormatDefinition): DocumentType[] {
  const out = new Set<DocumentType>();
  for (const r of def.roots) {
    if (r.documentType === 'byTypeCode' || r.documentType === 'byEbInterfaceDocumentType') {
      out.add('Invoice');
      out.add('CreditNote');
    } else out.add(r.documentType);
  }
  return DOCUMENT_TYPES.filter((t) => out.has(t));
}

/** The registry as data. Refused (retired) formats are left out unless asked for. */
export function listFormats(opts: { includeRefused?: boolean } = {}): FormatListing[] {
  return FORMATS.filter((f) => opts.includeRefused || !f.refused).map((f) => ({
    id: f.id,
    name: f.name,
    syntax: f.syntax,
    urn: f.urn,
    documentTypes: documentTypesOf(f),
    ...(f.version ? { version: f.version } : {}),
    ...(f.refused ? { refused: true } : {}),
  }));
}

export function getFormat(id: string): FormatDefinition | undefined {
  const key = id.trim().toLowerCase();
  return FORMATS.find((f) => f.id === key);
}

/** Entries a `sourceFormat` value (id, URN or alias) names; several when a URN covers invoice and credit note. */
export function findFormats(idOrUrn: string): FormatDefinition[] {
  const key = idOrUrn.trim();
  const lower = key.toLowerCase();
  return FORMATS.filter((f) => f.id === lower || f.urn === key || (f.aliases ?? []).includes(key));
}
