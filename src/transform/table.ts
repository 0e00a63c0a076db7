import { PINT_BILLING_SOURCES, PINT_SELF_BILLING, PINT_TARGETS } from '../en16931/pint';

/**
 * The transformation table, as data: for a source format (base id, without -invoice / -creditnote) and a target
 * format, either the converter that does it or why it is not supported. The first matching row wins; a pair no row
 * names is not supported. `listTransformations()` turns it into a readable listing (docs, API report).
 */

export type Converter = 'en16931';

export interface TransformationRow {
  /** Source base ids; '*' matches any. */
  from: readonly string[] | '*';
  /** Target base ids; '*' matches any. */
  to: readonly string[] | '*';
  converter?: Converter;
  /** Why the pair is refused (400). */
  notSupported?: string;
}

/** EN 16931 sources the model reads without loss of core content. */
export const EN16931_UBL_SOURCES = [
  'en16931-ubl',
  'peppol-bis3-ubl',
  'nlcius-ubl',
  // The G-account extension's second payment is not EN 16931: it stays in the report's unmapped list.
  'nlcius-gaccount-ubl',
  'xrechnung-ubl',
  'xrechnung-extension-ubl',
  'xrechnung-cvd-ubl',
] as const;
export const EN16931_CII_SOURCES = [
  'en16931-cii',
  'peppol-bis3-cii',
  'nlcius-cii',
  'xrechnung-cii',
  'xrechnung-extension-cii',
  'xrechnung-cvd-cii',
  'facturx-en16931',
  'facturx-basic',
  'facturx-extended',
  'facturx-extended-ctc-fr',
  'facturx-xrechnung',
] as const;
export const FATTURAPA = 'fatturapa-1.2';
export const EN16931_TARGETS = [
  'en16931-ubl',
  'peppol-bis3-ubl',
  'nlcius-ubl',
  'xrechnung-ubl',
  'en16931-cii',
  'nlcius-cii',
  'xrechnung-cii',
] as const;
/** Why Peppol BIS Billing 3 is written in UBL only (docs/decisions.md): its CII rules are not published current. */
export const PEPPOL_BIS3_CII_REFUSAL =
  'OpenPeppol publishes no current validation rules for BIS Billing 3 in CII (the last on Maven Central are release ' +
  '3.0.15 of 2023), so the gateway does not write a document it cannot check against the rules in force; use ' +
  'peppol-bis3-ubl';
/** ebInterface versions the EN 16931 model reads (one structure; 6.1 adds below-the-line items). */
export const EBINTERFACE_SOURCES = ['ebinterface-6.1', 'ebinterface-6.0', 'ebinterface-5.0'] as const;
const EBINTERFACE_4 = ['ebinterface-4.3', 'ebinterface-4.2', 'ebinterface-4.1', 'ebinterface-4.0'];
/** The ebInterface version the gateway writes. */
export const EBINTERFACE_TARGETS = ['ebinterface-6.1'] as const;

/**
 * Dialects read into the model by their own readers (their catalogue entries, src/formats/catalogue.ts): Svefaktura 1.0
 * (UBL 1.0), the PINT
 * billing flavours (EN 16931 content only, checked on reading), SETU Invoice (NLCIUS with staffing conventions).
 */
export const DIALECT_SOURCES = ['svefaktura-1.0', ...PINT_BILLING_SOURCES, 'setu-invoice-ubl'] as const;

/** Factur-X PDF/A-3 targets the gateway writes (the CII embedded in a rendering of the invoice). */
export const FACTURX_PDF_TARGETS = [
  'facturx-basic',
  'facturx-en16931',
  'facturx-extended',
  'facturx-xrechnung',
] as const;
const PINT_OTHER_TARGETS = ['pint-ubl', 'pint-jp-ubl', 'pint-sg-ubl', 'pint-my-ubl', 'pint-ae-ubl', 'pint-om-ubl'];
const DICO = ['dico-insbou004', 'dico-sales005'];

export const TRANSFORMATIONS: readonly TransformationRow[] = [
  // Refusals that must win over the generic EN 16931 rows below.
  {
    from: ['facturx-minimum', 'facturx-basicwl'],
    to: '*',
    notSupported:
      'Factur-X MINIMUM and BASIC WL carry no invoice lines (BG-25) and are not complete EN 16931 invoices, so no ' +
      'EN 16931 format can be made of them',
  },
  {
    from: ['xrechnung-extension-ubl', 'xrechnung-extension-cii', 'facturx-extended', 'facturx-extended-ctc-fr'],
    to: ['xrechnung-ubl', 'xrechnung-cii', 'en16931-ubl', 'en16931-cii', 'peppol-bis3-ubl', 'nlcius-ubl', 'nlcius-cii'],
    converter: 'en16931',
  },
  { from: [...EN16931_UBL_SOURCES, ...EN16931_CII_SOURCES], to: EN16931_TARGETS, converter: 'en16931' },
  { from: [...EN16931_UBL_SOURCES, ...EN16931_CII_SOURCES], to: FACTURX_PDF_TARGETS, converter: 'en16931' },
  // Every other source the model reads as an EN 16931 invoice: the same CII, in a PDF.
  {
    from: [FATTURAPA, ...EBINTERFACE_SOURCES, ...PINT_BILLING_SOURCES, 'svefaktura-1.0', 'setu-invoice-ubl'],
    to: FACTURX_PDF_TARGETS,
    converter: 'en16931',
  },
  {
    from: '*',
    to: ['facturx-minimum', 'facturx-basicwl'],
    notSupported:
      'Factur-X MINIMUM and BASIC WL drop the invoice lines (BG-25) and are not invoices in the legal sense ' +
      '(Factur-X: AFRelationship Data); the gateway does not turn an invoice into one. Use facturx-basic, ' +
      'facturx-en16931, facturx-extended or facturx-xrechnung',
  },
  {
    from: '*',
    to: ['facturx-extended-ctc-fr'],
    notSupported:
      'Factur-X EXTENDED-CTC-FR adds the French CTC requirements (continuous transaction control), which the ' +
      'gateway does not check yet',
  },
  { from: '*', to: ['peppol-bis3-cii'], notSupported: PEPPOL_BIS3_CII_REFUSAL },
  {
    from: '*',
    to: ['nlcius-gaccount-ubl'],
    notSupported:
      'the NLCIUS G-account extension needs a second payment to a blocked account, which EN 16931 does not hold',
  },
  {
    from: '*',
    to: ['xrechnung-extension-ubl', 'xrechnung-extension-cii', 'xrechnung-cvd-ubl', 'xrechnung-cvd-cii'],
    notSupported: 'XRechnung extension and CVD outputs need data beyond EN 16931 that the model does not carry yet',
  },
  {
    from: '*',
    to: ['peppol-selfbilling-ubl'],
    notSupported: 'self-billing changes who issues the invoice; converting an invoice into one is not a format change',
  },
  {
    from: PINT_SELF_BILLING,
    to: '*',
    notSupported:
      'self-billing (and the Japanese non-tax invoice) changes who issues the document or what it is; converting it ' +
      'into a billing invoice is not a format change',
  },
  {
    from: '*',
    to: PINT_SELF_BILLING,
    notSupported: 'self-billing changes who issues the invoice; converting an invoice into one is not a format change',
  },
  { from: ['pint-eu-ubl'], to: ['pint-eu-ubl'], converter: 'en16931' },
  {
    from: PINT_BILLING_SOURCES,
    to: [...PINT_TARGETS, ...PINT_OTHER_TARGETS],
    notSupported:
      'a PINT invoice converts to the EN 16931 formats (PINT-EU also to itself); moving it to another PINT ' +
      'jurisdiction changes the tax rules it follows, which is not a format change',
  },
  { from: PINT_BILLING_SOURCES, to: EN16931_TARGETS, converter: 'en16931' },
  { from: ['svefaktura-1.0', 'setu-invoice-ubl'], to: [...EN16931_TARGETS, ...PINT_TARGETS], converter: 'en16931' },
  { from: [...EN16931_UBL_SOURCES, ...EN16931_CII_SOURCES], to: PINT_TARGETS, converter: 'en16931' },
  {
    from: '*',
    to: ['pint-ubl'],
    notSupported:
      'the generic PINT billing specification is the base the jurisdictions specialise; a document is sent in its ' +
      "jurisdiction's flavour (pint-eu-ubl for EN 16931 content)",
  },
  {
    from: '*',
    to: ['pint-jp-ubl'],
    notSupported:
      'PINT Japan needs Japanese consumption tax content (qualified invoice issuer registration number T + 13 ' +
      'digits, JP tax categories and per-rate totals in JPY) that an EN 16931 invoice does not hold',
  },
  {
    from: '*',
    to: ['pint-sg-ubl'],
    notSupported:
      'PINT Singapore needs Singapore GST content (GST registration number, SG tax category codes such as SR, ZR, ' +
      'ES33, and GST in SGD) that an EN 16931 invoice does not hold',
  },
  {
    from: '*',
    to: ['pint-my-ubl'],
    notSupported:
      'PINT Malaysia needs MyInvois content (seller and buyer TIN, SST registration, Malaysian tax types and ' +
      'classification codes) that an EN 16931 invoice does not hold',
  },
  {
    from: '*',
    to: ['pint-ae-ubl'],
    notSupported:
      'PINT UAE needs UAE VAT content (TRN of seller and buyer, emirate codes, AED amounts and the UAE transaction ' +
      'type flags) that an EN 16931 invoice does not hold',
  },
  {
    from: '*',
    to: ['pint-om-ubl'],
    notSupported:
      'PINT Oman needs Omani VAT content (VAT and commercial registration numbers, OMR tax amounts) that an EN ' +
      '16931 invoice does not hold',
  },
  // FatturaPA 1.2 ↔ EN 16931 after the Italian mapping (src/transform/fatturapa/).
  { from: ['fatturapa-1.2'], to: EN16931_TARGETS, converter: 'en16931' },
  { from: [...EN16931_UBL_SOURCES, ...EN16931_CII_SOURCES], to: [FATTURAPA], converter: 'en16931' },
  { from: [FATTURAPA], to: [FATTURAPA], notSupported: 'the document is FatturaPA 1.2 already' },
  {
    from: [FATTURAPA],
    to: '*',
    notSupported: 'FatturaPA converts to the EN 16931 formats (UBL, CII and their CIUS) only',
  },
  { from: '*', to: [FATTURAPA], notSupported: 'only EN 16931 invoices (UBL, CII and their CIUS) convert to FatturaPA' },
  { from: EBINTERFACE_SOURCES, to: EN16931_TARGETS, converter: 'en16931' },
  {
    from: [...EN16931_UBL_SOURCES, ...EN16931_CII_SOURCES, ...EBINTERFACE_SOURCES],
    to: EBINTERFACE_TARGETS,
    converter: 'en16931',
  },
  {
    from: EBINTERFACE_4,
    to: '*',
    notSupported:
      'ebInterface 4.x (VAT/VATItem without tax category codes) is not read yet; ebInterface 5.0, 6.0 and 6.1 are',
  },
  {
    from: '*',
    to: ['ebinterface-6.0', 'ebinterface-5.0', ...EBINTERFACE_4],
    notSupported:
      'the gateway writes ebInterface 6.1 only (the current version Austrian recipients accept); choose ' +
      'ebinterface-6.1',
  },
  {
    from: EBINTERFACE_SOURCES,
    to: '*',
    notSupported:
      'ebInterface converts to the EN 16931 formats (UBL, CII and their CIUSes) and to ebInterface 6.1 only',
  },
  { from: '*', to: EBINTERFACE_TARGETS, notSupported: 'ebInterface 6.1 is written from EN 16931 sources only' },
  {
    from: '*',
    to: ['svefaktura-1.0'],
    notSupported:
      'Svefaktura 1.0 is a legacy inbound format (SFTI withdrew it in favour of Peppol BIS Billing 3); no ' +
      'conversion produces it',
  },
  {
    from: ['svefaktura-1.0'],
    to: '*',
    notSupported: 'Svefaktura 1.0 converts to the EN 16931 formats and PINT-EU / PINT A-NZ only',
  },
  {
    from: '*',
    to: ['setu-invoice-ubl'],
    notSupported:
      'SETU Invoice needs staffing data (hour types from the SETU code list, time card and assignment references) ' +
      'that EN 16931 does not hold; send NLCIUS',
  },
  {
    from: ['setu-invoice-ubl'],
    to: '*',
    notSupported: 'SETU Invoice converts to the EN 16931 formats and PINT-EU / PINT A-NZ only',
  },
  {
    from: DICO,
    to: '*',
    notSupported:
      'DICO (SALES005, INSBOU004) is a GS1-style XML whose schemas and samples Ketenstandaard gives only to ' +
      'licensed members; with no public mapping to EN 16931 and no public sample, no reader can be built and ' +
      'tested honestly',
  },
  {
    from: '*',
    to: DICO,
    notSupported: 'DICO (SALES005, INSBOU004) schemas are licence-gated by Ketenstandaard; no conversion produces DICO',
  },
  {
    from: ['zugferd1-basic', 'zugferd1-comfort', 'zugferd1-extended'],
    to: '*',
    notSupported: 'ZUGFeRD 1.0 is retired; send ZUGFeRD 2 / Factur-X',
  },
  {
    from: ['peppol-mls', 'peppol-invoice-response', 'peppol-mlr', 'peppol-order', 'peppol-order-response'],
    to: '*',
    notSupported: 'only invoices and credit notes can be transformed',
  },
];

const matches = (set: readonly string[] | '*', id: string): boolean => set === '*' || set.includes(id);

export type Lookup = { converter: Converter } | { notSupported: string };

export function lookupTransformation(from: string, to: string): Lookup {
  for (const row of TRANSFORMATIONS) {
    if (!matches(row.from, from) || !matches(row.to, to)) continue;
    if (row.converter) return { converter: row.converter };
    return { notSupported: row.notSupported ?? 'not supported' };
  }
  return { notSupported: `no transformation from ${from} to ${to} is in the transformation table` };
}

export interface TransformationListing {
  from: string;
  to: string;
  supported: boolean;
  reason?: string;
}

/**
 * Every pair of the table's written targets (EN 16931 family, PINT, FatturaPA, ebInterface), for documentation and
 * reports.
 */
export function listTransformations(): TransformationListing[] {
  const out: TransformationListing[] = [];
  for (const from of [
    ...EN16931_UBL_SOURCES,
    ...EN16931_CII_SOURCES,
    FATTURAPA,
    ...EBINTERFACE_SOURCES,
    'facturx-minimum',
    'facturx-basicwl',
    ...DIALECT_SOURCES,
  ]) {
    for (const to of [...EN16931_TARGETS, ...PINT_TARGETS, FATTURAPA, ...EBINTERFACE_TARGETS, ...FACTURX_PDF_TARGETS]) {
      const l = lookupTransformation(from, to);
      out.push(
        'converter' in l ? { from, to, supported: true } : { from, to, supported: false, reason: l.notSupported },
      );
    }
  }
  return out;
}

/**
 * The table as Markdown (docs/transformations.md, kept equal by a test): the supported pairs per source, then every
 * refusal row with its reason.
 */
export function renderTransformationTable(): string {
  const out: string[] = [
    '# Transformations',
    '',
    'Generated from `src/transform/table.ts` (a test keeps this file equal to it). `POST /api/v1/generic/transform`',
    'takes a target format URN or id; a URN both syntaxes share resolves to the source syntax unless `targetSyntax` ' +
      'says',
    'otherwise. The `facturx-*` targets answer a PDF/A-3 with the CII embedded (`factur-x.xml`, or `xrechnung.xml` for',
    'XRECHNUNG). Choices: [decisions.md](decisions.md) "Transformation" and "Factur-X / ZUGFeRD PDF output".',
    '',
    '## Supported',
    '',
    '| Source format | Target formats |',
    '| --- | --- |',
  ];
  const supported = listTransformations().filter((l) => l.supported);
  for (const from of [...new Set(supported.map((l) => l.from))]) {
    out.push(
      `| \`${from}\` | ${supported
        .filter((l) => l.from === from)
        .map((l) => `\`${l.to}\``)
        .join(', ')} |`,
    );
  }
  out.push(
    '',
    '## Not supported (400 `TRANSFORMATION_NOT_SUPPORTED`)',
    '',
    '| Source | Target | Why |',
    '| --- | --- | --- |',
  );
  const list = (set: readonly string[] | '*'): string => (set === '*' ? 'any' : set.map((s) => `\`${s}\``).join(', '));
  for (const row of TRANSFORMATIONS)
    if (row.notSupported) out.push(`| ${list(row.from)} | ${list(row.to)} | ${row.notSupported} |`);
  out.push('', 'Any pair not listed above is not supported either.', '');
  return out.join('\n');
}
