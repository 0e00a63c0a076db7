import { NS } from './xml/namespaces';

/**
 * The vocabulary of the format catalogue (catalogue.ts): identifiers, roots, matchers and the builders entries are
 * written with. Every document format the gateway recognises is an entry of the catalogue. Detection (detect.ts)
 * reads the root element and the specification identifier (BT-24: UBL `cbc:CustomizationID`, CII
 * `GuidelineSpecifiedDocumentContext-
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

export const ZUGFERD1_GUIDELINE = 'urn:ferd:CrossIndustryDocument:invoice:1p0';

/**
 * BT-24 spellings that Factur-X 1.0 / ZUGFeRD 2.x producers wrote besides the published identifiers above, each
 * detected as its profile (the profile's official rules then judge the document, BT-24 included):
 * - the colon form of the first Factur-X 1.0 drafts (2017), kept by early producers until about 2019
 *   (`urn:cen.eu:en16931:2017:compliant:factur-x.eu:1p0:<profile>`; Mustang's validator and FNFE's own BASIC samples
 *   carry it);
 * - the ZUGFeRD 2.0 specification's own spelling with an upper-case `EN16931`;
 * - a `#compliant#` form naming the EN 16931 profile, which some producers write although the profile's identifier is
 *   plain `urn:cen.eu:en16931:2017`.
 */
export const FACTURX_LEGACY_IDS = {
  basic: [
    { id: `${EN16931}:compliant:factur-x.eu:1p0:basic`, version: '1.0' },
    { id: 'urn:cen.eu:EN16931:2017#compliant#urn:zugferd.de:2p0:basic', version: '2.0' },
  ],
  en16931: [
    { id: `${EN16931}:compliant:factur-x.eu:1p0:en16931`, version: '1.0' },
    { id: `${EN16931}#compliant#urn:factur-x.eu:1p0:en16931`, version: '1.0' },
  ],
  extended: [
    { id: `${EN16931}:compliant:factur-x.eu:1p0:extended`, version: '1.0' },
    { id: 'urn:cen.eu:EN16931:2017#conformant#urn:zugferd.de:2p0:extended', version: '2.0' },
  ],
} as const;
/** The ZUGFeRD 2.0 specification's spelling of the EN 16931 (COMFORT) profile's identifier. */
export const ZUGFERD2_EN16931_UPPER = 'urn:cen.eu:EN16931:2017';

export const RETIRED_UBL_ADVICE =
  'Send NLCIUS (SI-UBL 2.0, CustomizationID urn:cen.eu:en16931:2017#compliant#urn:fdc:nen.nl:nlcius:v1.0) or ' +
  'Peppol BIS Billing 3.0 (CustomizationID ' +
  'urn:cen.eu:en16931:2017#compliant#urn:fdc:peppol.eu:2017:poacc:billing:3.0).';

/** Refusal message for SI-UBL 1.x, also used where a document lacks BT-24 but carries SI-UBL 1.x markers. */
export const SI_UBL_1_REFUSAL =
  'SI-UBL 1.2 (and older SI-UBL 1.x) is not allowed on the Peppol network since 1 January 2024. ' + RETIRED_UBL_ADVICE;

/**
 * Retired XRechnung releases: the day KoSIT stopped accepting each (the next release took effect; since 2.1.1 releases
 * take effect on 1 February and 1 August) and its successor.
 */
export const XRECHNUNG_RETIRED: ReadonlyArray<{ version: string; until: string; successor: string }> = [
  { version: '1.2', until: '1 January 2021', successor: '2.0' },
  { version: '2.0', until: '1 February 2022', successor: '2.1' },
  { version: '2.1', until: '1 August 2022', successor: '2.2' },
  { version: '2.2', until: '1 August 2023', successor: '2.3' },
  { version: '2.3', until: '1 February 2024', successor: '3.0' },
];

export function xrechnungRetiredRefusal(r: { version: string; until: string; successor: string }): string {
  return (
    `XRechnung ${r.version} is retired: it has not been accepted since ${r.until}, when XRechnung ${r.successor} ` +
    `replaced it. Send XRechnung 3.0 (CustomizationID ${XRECHNUNG_3}, or ${XRECHNUNG_3_EXTENSION} for the ` +
    'extension).'
  );
}

/** ZUGFeRD 1.0 predates EN 16931; since the German B2B e-invoicing rules of 2025 it is no longer an e-invoice. */
export const ZUGFERD1_REFUSAL =
  'ZUGFeRD 1.0 does not meet EN 16931 and has not been a valid e-invoice in Germany since 1 January 2025 (the ' +
  'Federal Ministry of Finance accepts ZUGFeRD from 2.0.1 on). Send Factur-X 1.0 / ZUGFeRD 2.x (profile BASIC, ' +
  `EN 16931, EXTENDED or XRECHNUNG; e.g. GuidelineID ${EN16931}) or XRechnung 3.0 (${XRECHNUNG_3}).`;

// ---------------------------------------------------------------------------------------------------------------------
// Scores: exact identifier > anchored pattern > prefix > fallback. Combined conditions add on top.

export const EXACT = 300;
export const PATTERN = 250;
export const PREFIX = 200;
export const GENERIC_PREFIX = 150;
export const FALLBACK = 100;

export const eq = (value: string, extra: Partial<Matcher> = {}): Matcher => ({
  score: EXACT,
  customizationId: { equals: value },
  ...extra,
});
export const prefix = (value: string, extra: Partial<Matcher> = {}): Matcher => ({
  score: PREFIX,
  customizationId: { startsWith: value },
  ...extra,
});
export const pattern = (re: RegExp, extra: Partial<Matcher> = {}): Matcher => ({
  score: PATTERN,
  customizationId: { pattern: re },
  ...extra,
});
export const rootOnly: Matcher = { score: FALLBACK };

// ---------------------------------------------------------------------------------------------------------------------
// Roots

export const UBL_INVOICE: RootSpec = { localName: 'Invoice', namespace: NS.ublInvoice, documentType: 'Invoice' };
export const UBL_CREDIT_NOTE: RootSpec = {
  localName: 'CreditNote',
  namespace: NS.ublCreditNote,
  documentType: 'CreditNote',
};
export const CII_ROOT: RootSpec = { localName: 'CrossIndustryInvoice', namespace: NS.rsm, documentType: 'byTypeCode' };
export const ZF1_ROOT: RootSpec = {
  localName: 'CrossIndustryDocument',
  namespace: NS.zf1Rsm,
  documentType: 'byTypeCode',
};

export interface BillingPair {
  id: string;
  name: string;
  urn: string;
  match: readonly Matcher[];
  version?: string;
  refused?: Refusal;
}

/** UBL Invoice and CreditNote are separate schemas (and validation artefacts), so each gets its own entry. */
export function ublInvoiceAndCreditNote(p: BillingPair): FormatDefinition[] {
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
export const XR_BASE = String.raw`^urn:cen\.eu:en16931:2017#compliant#urn:(?:xeinkauf\.de:kosit|xoev-de:kosit:standard):xrechnung_(\d+\.\d+)`;
export const XR_CIUS = new RegExp(`${XR_BASE}$`);
export const XR_EXTENSION = new RegExp(
  `${XR_BASE}#conformant#urn:(?:xeinkauf\\.de|xoev-de):kosit:extension:xrechnung_\\d+\\.\\d+$`,
);
export const XR_CVD = new RegExp(`${XR_BASE}#compliant#urn:xeinkauf\\.de:kosit:xrechnung:cvd_\\d+\\.\\d+$`);
/**
 * An EN 16931 CIUS this registry does not know: still EN 16931-compliant by definition. No extension (#conformant#).
 */
export const EN16931_UNKNOWN_CIUS = /^urn:cen\.eu:en16931:2017#compliant#[^#]+$/;

export const PINT_JURISDICTIONS: ReadonlyArray<{ code: string; name: string; selfBilling: boolean }> = [
  { code: 'eu', name: 'Europe', selfBilling: false },
  { code: 'aunz', name: 'Australia / New Zealand', selfBilling: true },
  { code: 'jp', name: 'Japan', selfBilling: true },
  { code: 'sg', name: 'Singapore', selfBilling: false },
  { code: 'my', name: 'Malaysia', selfBilling: true },
  { code: 'ae', name: 'United Arab Emirates', selfBilling: true },
  { code: 'om', name: 'Oman', selfBilling: false },
];

export function ebInterface(version: string): FormatDefinition {
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

export function applicationResponse(documentType: DocumentType): RootSpec {
  return { localName: 'ApplicationResponse', namespace: NS.ublApplicationResponse, documentType };
}

export const UBL_ANY_ROOTS: readonly RootSpec[] = [
  UBL_INVOICE,
  UBL_CREDIT_NOTE,
  applicationResponse('ApplicationResponse'),
  { localName: 'Order', namespace: NS.ublOrder, documentType: 'Order' },
  { localName: 'OrderResponse', namespace: NS.ublOrderResponse, documentType: 'OrderResponse' },
];

/** What detection found: one catalogue format definition, with what the document itself says. */
export interface DetectedFormat {
  /** Stable registry id, e.g. 'peppol-bis3-ubl-invoice', 'xrechnung-cii', 'facturx-en16931', 'fatturapa-1.2'. */
  id: string;
  name: string;
  syntax: Syntax;
  documentType: DocumentType;
  /** The URN the transform endpoint's sourceFormat / targetFormat uses for this format. */
  urn: string;
  /** Local name of the root element. */
  rootName: string;
  rootNamespace: string;
  /** BT-24 specification identifier: UBL cbc:CustomizationID, CII / ZUGFeRD 1 GuidelineID. */
  customizationId?: string;
  /** BT-23 business process: UBL cbc:ProfileID, CII BusinessProcessSpecifiedDocumentContextParameter/ID. */
  profileId?: string;
  version?: string;
  /** Set when the XML came out of a Factur-X / ZUGFeRD PDF. */
  container?: 'pdf';
  /** Name of the PDF attachment the XML was read from. */
  attachmentFilename?: string;
}

/**
 * The syntax version of a Peppol document type identifier (`…::<syntax version>`), per syntax; syntaxes not exchanged
 * under such an identifier have none.
 */
export const PEPPOL_SYNTAX_VERSIONS: Readonly<Partial<Record<Syntax, string>>> = { UBL: '2.1', CII: 'D16B' };

/** The base id of a detected format id (UBL entries add -invoice / -creditnote). */
export const baseFormatId = (id: string): string => id.replace(/-(invoice|creditnote)$/, '');
