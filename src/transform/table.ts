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
export const EN16931_TARGETS = ['en16931-ubl', 'peppol-bis3-ubl', 'nlcius-ubl', 'xrechnung-ubl', 'en16931-cii', 'peppol-bis3-cii', 'nlcius-cii', 'xrechnung-cii'] as const;

/** Factur-X PDF/A-3 targets the gateway writes (the CII embedded in a rendering of the invoice). */
export const FACTURX_PDF_TARGETS = ['facturx-basic', 'facturx-en16931', 'facturx-extended', 'facturx-xrechnung'] as const;
const PINT = ['pint-ubl', 'pint-selfbilling-ubl', 'pint-eu-ubl', 'pint-aunz-ubl', 'pint-jp-ubl', 'pint-sg-ubl', 'pint-my-ubl', 'pint-ae-ubl', 'pint-om-ubl'];

export const TRANSFORMATIONS: readonly TransformationRow[] = [
  // Refusals that must win over the generic EN 16931 rows below.
  {
    from: ['facturx-minimum', 'facturx-basicwl'],
    to: '*',
    notSupported: 'Factur-X MINIMUM and BASIC WL carry no invoice lines (BG-25) and are not complete EN 16931 invoices, so no EN 16931 format can be made of them',
  },
  {
    from: ['xrechnung-extension-ubl', 'xrechnung-extension-cii', 'facturx-extended', 'facturx-extended-ctc-fr'],
    to: ['xrechnung-ubl', 'xrechnung-cii', 'en16931-ubl', 'en16931-cii', 'peppol-bis3-ubl', 'peppol-bis3-cii', 'nlcius-ubl', 'nlcius-cii'],
    converter: 'en16931',
  },
  { from: [...EN16931_UBL_SOURCES, ...EN16931_CII_SOURCES], to: EN16931_TARGETS, converter: 'en16931' },
  { from: [...EN16931_UBL_SOURCES, ...EN16931_CII_SOURCES], to: FACTURX_PDF_TARGETS, converter: 'en16931' },
  {
    from: '*',
    to: ['facturx-minimum', 'facturx-basicwl'],
    notSupported: 'Factur-X MINIMUM and BASIC WL drop the invoice lines (BG-25) and are not invoices in the legal sense (Factur-X: AFRelationship Data); the gateway does not turn an invoice into one. Use facturx-basic, facturx-en16931, facturx-extended or facturx-xrechnung',
  },
  { from: '*', to: ['facturx-extended-ctc-fr'], notSupported: 'Factur-X EXTENDED-CTC-FR adds the French CTC requirements (continuous transaction control), which the gateway does not check yet' },
  { from: '*', to: ['nlcius-gaccount-ubl'], notSupported: 'the NLCIUS G-account extension needs a second payment to a blocked account, which EN 16931 does not hold' },
  { from: '*', to: ['xrechnung-extension-ubl', 'xrechnung-extension-cii', 'xrechnung-cvd-ubl', 'xrechnung-cvd-cii'], notSupported: 'XRechnung extension and CVD outputs need data beyond EN 16931 that the model does not carry yet' },
  { from: '*', to: ['peppol-selfbilling-ubl'], notSupported: 'self-billing changes who issues the invoice; converting an invoice into one is not a format change' },
  { from: '*', to: PINT, notSupported: 'Peppol PINT conversions are not built yet' },
  { from: PINT, to: '*', notSupported: 'Peppol PINT conversions are not built yet' },
  { from: ['fatturapa-1.2'], to: '*', notSupported: 'FatturaPA conversions are not built yet' },
  { from: '*', to: ['fatturapa-1.2'], notSupported: 'FatturaPA conversions are not built yet' },
  { from: ['ebinterface-4.0', 'ebinterface-4.1', 'ebinterface-4.2', 'ebinterface-4.3', 'ebinterface-5.0', 'ebinterface-6.0', 'ebinterface-6.1'], to: '*', notSupported: 'ebInterface conversions are not built yet' },
  { from: '*', to: ['ebinterface-6.1', 'ebinterface-6.0', 'ebinterface-5.0', 'ebinterface-4.3', 'ebinterface-4.2', 'ebinterface-4.1', 'ebinterface-4.0'], notSupported: 'ebInterface conversions are not built yet' },
  { from: ['svefaktura-1.0'], to: '*', notSupported: 'Svefaktura 1.0 conversion (to BIS Billing 3) is not built yet' },
  { from: '*', to: ['svefaktura-1.0'], notSupported: 'Svefaktura 1.0 is a legacy inbound format; no conversion produces it' },
  { from: ['setu-invoice-ubl'], to: '*', notSupported: 'SETU Invoice conversions (hour types and staffing extensions) are not built yet' },
  { from: '*', to: ['setu-invoice-ubl'], notSupported: 'SETU Invoice conversions are not built yet' },
  { from: ['dico-insbou004', 'dico-sales005'], to: '*', notSupported: 'DICO conversions are not built yet (its schemas are licence-gated)' },
  { from: '*', to: ['dico-insbou004', 'dico-sales005'], notSupported: 'DICO conversions are not built yet (its schemas are licence-gated)' },
  { from: ['zugferd1-basic', 'zugferd1-comfort', 'zugferd1-extended'], to: '*', notSupported: 'ZUGFeRD 1.0 is retired; send ZUGFeRD 2 / Factur-X' },
  { from: ['peppol-mls', 'peppol-invoice-response', 'peppol-mlr', 'peppol-order', 'peppol-order-response'], to: '*', notSupported: 'only invoices and credit notes can be transformed' },
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

/** Every supported pair of the table (the EN 16931 family), for documentation and reports. */
export function listTransformations(): TransformationListing[] {
  const out: TransformationListing[] = [];
  for (const from of [...EN16931_UBL_SOURCES, ...EN16931_CII_SOURCES, 'facturx-minimum', 'facturx-basicwl']) {
    for (const to of [...EN16931_TARGETS, ...FACTURX_PDF_TARGETS]) {
      const l = lookupTransformation(from, to);
      out.push('converter' in l ? { from, to, supported: true } : { from, to, supported: false, reason: l.notSupported });
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
    'takes a target format URN or id; a URN both syntaxes share resolves to the source syntax unless `targetSyntax` says',
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
    out.push(`| \`${from}\` | ${supported.filter((l) => l.from === from).map((l) => `\`${l.to}\``).join(', ')} |`);
  }
  out.push('', '## Not supported (400 `TRANSFORMATION_NOT_SUPPORTED`)', '', '| Source | Target | Why |', '| --- | --- | --- |');
  const list = (set: readonly string[] | '*'): string => (set === '*' ? 'any' : set.map((s) => `\`${s}\``).join(', '));
  for (const row of TRANSFORMATIONS) if (row.notSupported) out.push(`| ${list(row.from)} | ${list(row.to)} | ${row.notSupported} |`);
  out.push('', 'Any pair not listed above is not supported either.', '');
  return out.join('\n');
}
