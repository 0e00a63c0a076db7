import type { ModelReader, ModelWriter, TargetFlavour } from '../en16931/codec-types';
import {
  EBINTERFACE_RULES,
  EN16931_CORE,
  FACTURX_BASIC_RULES,
  NLCIUS_CII_RULES,
  NLCIUS_RULES,
  PEPPOL_PROCESS,
  PEPPOL_PROCESS_PATTERN,
  PEPPOL_RULES,
  XRECHNUNG_RULES,
} from '../en16931/cius-requirements';
import { readCii } from '../en16931/cii-reader';
import { writeCii } from '../en16931/cii-writer';
import { readEbInterface } from '../en16931/ebinterface-reader';
import { EBINTERFACE_61_NS, writeEbInterface } from '../en16931/ebinterface-writer';
import { writeFacturXPdf } from '../en16931/facturx-pdf-writer';
import { readFatturaPa } from '../en16931/fatturapa/reader';
import { FATTURAPA_RULES } from '../en16931/fatturapa/requirements';
import { writeFatturaPa } from '../en16931/fatturapa/writer';
import { adaptAunz, PINT_AUNZ, PINT_AUNZ_RULES, PINT_EU, PINT_PROCESS, readPint } from '../en16931/pint';
import { readSetu } from '../en16931/setu-reader';
import { readSvefaktura } from '../en16931/svefaktura-reader';
import { readUbl } from '../en16931/ubl-reader';
import { writeUbl } from '../en16931/ubl-writer';
import {
  applicationResponse,
  baseFormatId,
  CII_ROOT,
  CII_URN,
  ebInterface,
  EN16931,
  EN16931_UNKNOWN_CIUS,
  eq,
  EXACT,
  FACTURX_BASIC,
  FACTURX_BASIC_WL,
  FACTURX_EXTENDED,
  FACTURX_EXTENDED_CTC_FR,
  FACTURX_LEGACY_IDS,
  FACTURX_MINIMUM,
  FALLBACK,
  GENERIC_PREFIX,
  NLCIUS,
  NLCIUS_GACCOUNT,
  pattern,
  PATTERN,
  PEPPOL_BIS3,
  PEPPOL_SELF_BILLING,
  PEPPOL_SYNTAX_VERSIONS,
  PINT_JURISDICTIONS,
  prefix,
  RETIRED_UBL_ADVICE,
  rootOnly,
  SI_UBL_1_REFUSAL,
  UBL_ANY_ROOTS,
  UBL_INVOICE,
  ublInvoiceAndCreditNote,
  XR_CIUS,
  XR_CVD,
  XR_EXTENSION,
  XRECHNUNG_3,
  XRECHNUNG_3_CVD,
  XRECHNUNG_3_EXTENSION,
  XRECHNUNG_RETIRED,
  xrechnungRetiredRefusal,
  ZF1_ROOT,
  ZUGFERD2_EN16931_UPPER,
  ZUGFERD1_GUIDELINE,
  ZUGFERD1_REFUSAL,
  type FormatDefinition,
  type Matcher,
  type Syntax,
} from './vocabulary';
import { NS } from './xml/namespaces';

/**
 * The format catalogue: one entry per format, holding everything the gateway knows about it.
 *
 * - `formats`: detection (roots, BT-24 matchers, version), the id and the URN `sourceFormat` / `targetFormat` use;
 *   UBL formats have one definition per root (Invoice, CreditNote), detected as `<id>-invoice` / `<id>-creditnote`.
 * - `peppolSyntaxVersion`: the syntax version of its Peppol document type identifier (UBL 2.1, CII D16B).
 * - `rules`: the official rule packs validating it, in the order they run, as `id@version` coordinates of
 *   transforms/rules-manifest.json (`previous`: older versions a transition window may still accept), or why none.
 * - `reader`: how it enters the EN 16931 model (by syntax unless the format needs its own).
 * - `target` and `writer`: when the gateway writes it, the CIUS identifiers and requirements, and the writer.
 *
 * Detection, validation (src/validation/selection.ts) and transformation (src/transform) read this list; adding a
 * CIUS is one entry here (and its rows in src/transform/table.ts when it converts). test/unit/formats/catalogue.test.ts
 * keeps every entry complete and consistent. The order is detection's listing order.
 */

/** A rule pack as `id@version` of transforms/rules-manifest.json. */
export type PackCoordinate = `${string}@${string}`;

/**
 * Assertions of a pack whose flag a format's scenario sets otherwise than the artefact (KoSIT's `customLevel` in the
 * XRechnung validator configuration): rule id → flag. The pack runs unchanged; its findings are re-levelled.
 */
export type RuleLevels = Readonly<Record<string, 'error' | 'warning'>>;

/**
 * One rule pack of an entry. `entry` picks the schema of a schema pack: a fixed name, `ROOT` (the document's root
 * element) or `VERSION` (the detected version, ebInterface).
 */
export interface RulePackUse {
  pack: PackCoordinate;
  entry?: string;
  levels?: RuleLevels;
}

export const ROOT = '<root>';
export const VERSION = '<version>';

export type RuleSpec =
  | {
      packs: readonly RulePackUse[];
      /** Previous versions of these packs kept for a transition window (RULES_ACCEPTED_PREVIOUS). */
      previous?: readonly PackCoordinate[];
    }
  | { notAvailable: string };

export interface CatalogueEntry {
  /** Base id (without -invoice / -creditnote). */
  id: string;
  syntax: Syntax;
  /** Detection: one definition per root. */
  formats: readonly FormatDefinition[];
  /** Syntax version of the Peppol document type identifier; absent where the syntax is not exchanged under one. */
  peppolSyntaxVersion?: string;
  rules: RuleSpec;
  reader?: ModelReader;
  /** What the gateway writes when this format is the target. */
  target?: TargetFlavour;
  writer?: ModelWriter;
}

// ---------------------------------------------------------------------------------------------------------------------
// Readers and writers by syntax (an entry overrides them where its format needs its own)

const READERS_BY_SYNTAX: Partial<Record<Syntax, ModelReader>> = {
  UBL: (doc) => readUbl(doc),
  CII: (doc) => readCii(doc),
  FatturaPA: (doc) => readFatturaPa(doc),
  ebInterface: (doc) => readEbInterface(doc),
};

const WRITERS_BY_SYNTAX: Partial<Record<Syntax, ModelWriter>> = {
  UBL: (inv, target) => writeUbl(inv, target.taxSchemeId !== undefined ? { taxSchemeId: target.taxSchemeId } : {}),
  CII: (inv) => writeCii(inv),
  FatturaPA: (inv) => writeFatturaPa(inv),
  ebInterface: (inv) => writeEbInterface(inv),
};

/** Factur-X targets: the CII embedded in a PDF/A-3 with a rendering of the invoice. */
const FACTURX_WRITER: ModelWriter = (inv, target, options) =>
  writeFacturXPdf(inv, target, options?.date ? { date: options.date } : {});

interface EntrySpec {
  formats: FormatDefinition | readonly FormatDefinition[];
  rules: RuleSpec;
  /** Overrides the syntax's reader. */
  reader?: ModelReader;
  target?: Omit<TargetFlavour, 'id' | 'syntax'>;
}

function entry(spec: EntrySpec): CatalogueEntry {
  const formats: readonly FormatDefinition[] = Array.isArray(spec.formats)
    ? (spec.formats as readonly FormatDefinition[])
    : [spec.formats as FormatDefinition];
  const first = formats[0]!;
  const id = baseFormatId(first.id);
  const reader = spec.reader ?? READERS_BY_SYNTAX[first.syntax];
  const peppolSyntaxVersion = PEPPOL_SYNTAX_VERSIONS[first.syntax];
  const out: CatalogueEntry = {
    id,
    syntax: first.syntax,
    formats,
    ...(peppolSyntaxVersion ? { peppolSyntaxVersion } : {}),
    rules: spec.rules,
    ...(reader ? { reader } : {}),
  };
  if (spec.target) {
    const target: TargetFlavour = { id, syntax: first.syntax, ...spec.target };
    const writer = target.facturx ? FACTURX_WRITER : WRITERS_BY_SYNTAX[first.syntax];
    return { ...out, target, ...(writer ? { writer } : {}) };
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------------------------
// Rule packs

const UBL_SCHEMA = (entry: string = ROOT): RulePackUse => ({ pack: 'ubl-2.1@2.1', entry });
const CII_SCHEMA: RulePackUse = { pack: 'cii-d16b@D16B', entry: 'CrossIndustryInvoice' };
const rules = (pack: PackCoordinate): RulePackUse => ({ pack });
const EN16931_UBL = rules('en16931-ubl@1.3.16');
const EN16931_CII = rules('en16931-cii@1.3.16');
const PEPPOL_CEN_UBL = rules('peppol-cen-en16931-ubl@2026.5');
const PEPPOL_CEN_UBL_PREVIOUS: PackCoordinate = 'peppol-cen-en16931-ubl@2025.11';
const FACTURX_XSD = (profile: string): RulePackUse => ({ pack: 'facturx-xsd@2.4', entry: profile });
const facturx = (profile: string): RuleSpec => ({
  packs: [FACTURX_XSD(profile), rules(`facturx-${profile}@2.4`)],
});

/**
 * XRechnung's scenarios re-level some EN 16931 rules (the KoSIT validator configuration's `customLevel`, which
 * phive-rules-xrechnung 4.2.3 reproduces for 3.0.2; "information" is a warning here). Every scenario: BR-CL-21 and
 * BR-CL-23 (code lists that lag their registries) are warnings. CVD: BR-CL-13 too (BT-158's scheme `CVD` is not in
 * UNTDID 7143; BR-TMP-CVD-01 decides instead). Extension: the code lists it widens (BR-CL-10, -11, -24, -25, -26: XR01–
 * XR03 schemes, `application/xml` attachments) and, in UBL, BR-CO-16 and UBL-CR-470 (third-party payments, BG-DEX-09,
 * which BR-DEX-09 checks). In CII, three syntax rules the CEN artefact flags as warnings are errors (one payment terms
 * element, one description, one tax per line).
 */
const XR_LEVELS = { 'BR-CL-21': 'warning', 'BR-CL-23': 'warning' } as const;
const XR_CII_LEVELS = { ...XR_LEVELS, 'CII-SR-452': 'error', 'CII-SR-453': 'error', 'CII-SR-454': 'error' } as const;
const XR_EXTENSION_CODE_LISTS = ['BR-CL-10', 'BR-CL-11', 'BR-CL-24', 'BR-CL-25', 'BR-CL-26'] as const;
const relevel = (ids: readonly string[]) => Object.fromEntries(ids.map((id) => [id, 'warning' as const]));
const xrechnungRules = (syntax: 'ubl' | 'cii', levels: RuleLevels): RuleSpec => ({
  packs:
    syntax === 'ubl'
      ? [UBL_SCHEMA(), { ...EN16931_UBL, levels }, rules('xrechnung-ubl@3.0.2')]
      : [CII_SCHEMA, { ...EN16931_CII, levels }, rules('xrechnung-cii@3.0.2')],
});
const XRECHNUNG_UBL_RULES = xrechnungRules('ubl', XR_LEVELS);
const XRECHNUNG_CII_RULES = xrechnungRules('cii', XR_CII_LEVELS);
const XRECHNUNG_CVD_UBL_RULES = xrechnungRules('ubl', { ...XR_LEVELS, ...relevel(['BR-CL-13']) });
const XRECHNUNG_CVD_CII_RULES = xrechnungRules('cii', { ...XR_CII_LEVELS, ...relevel(['BR-CL-13']) });
const XRECHNUNG_EXTENSION_UBL_RULES = xrechnungRules('ubl', {
  ...XR_LEVELS,
  ...relevel([...XR_EXTENSION_CODE_LISTS, 'BR-CO-16', 'UBL-CR-470']),
});
const XRECHNUNG_EXTENSION_CII_RULES = xrechnungRules('cii', { ...XR_CII_LEVELS, ...relevel(XR_EXTENSION_CODE_LISTS) });

// ---------------------------------------------------------------------------------------------------------------------
// Targets' shared parts

const PINT_BILLING_PROCESS = /^urn:peppol:bis:billing$/;
const XRECHNUNG_TARGET = {
  family: 'xrechnung',
  specificationId: XRECHNUNG_3,
  defaultProcess: PEPPOL_PROCESS,
  requirements: [...EN16931_CORE, ...XRECHNUNG_RULES],
} as const;
const PEPPOL_BIS3_TARGET = {
  family: 'peppol-bis3',
  specificationId: PEPPOL_BIS3,
  defaultProcess: PEPPOL_PROCESS,
  acceptsProcess: PEPPOL_PROCESS_PATTERN,
  requirements: [...EN16931_CORE, ...PEPPOL_RULES],
} as const;

// ---------------------------------------------------------------------------------------------------------------------
// PINT: a generic entry per specification and one per jurisdiction; each jurisdiction's package holds the base PINT
// rules and its own (EU adds the EN 16931-aligned ones).

const PINT_PACK_VERSIONS: Readonly<Record<string, string>> = {
  eu: '1.0.1',
  aunz: '1.1.2',
  jp: '1.1.2',
  sg: '1.4.0',
  my: '1.3.0',
  ae: '2026.5',
  om: '1.0.0',
};

function pintEntries(): CatalogueEntry[] {
  const out: CatalogueEntry[] = [
    // The generic PINT entries also take jurisdictions not listed here: PINT rules test the prefix.
    entry({
      formats: ublInvoiceAndCreditNote({
        id: 'pint-ubl',
        name: 'Peppol PINT Billing',
        urn: 'urn:peppol:pint:billing-1',
        version: '1',
        match: [{ score: GENERIC_PREFIX, customizationId: { startsWith: 'urn:peppol:pint:billing-1' } }],
      }),
      rules: { packs: [UBL_SCHEMA(), rules('pint@1.1.2')] },
      reader: readPint,
    }),
    entry({
      formats: ublInvoiceAndCreditNote({
        id: 'pint-selfbilling-ubl',
        name: 'Peppol PINT Self-Billing',
        urn: 'urn:peppol:pint:selfbilling-1',
        version: '1',
        match: [{ score: GENERIC_PREFIX, customizationId: { startsWith: 'urn:peppol:pint:selfbilling-1' } }],
      }),
      rules: {
        notAvailable:
          'Peppol PINT self-billing has rules per jurisdiction only; give the jurisdiction in the CustomizationID',
      },
    }),
  ];
  for (const j of PINT_JURISDICTIONS) {
    const billing = `urn:peppol:pint:billing-1@${j.code}-1`;
    const version = PINT_PACK_VERSIONS[j.code]!;
    out.push(
      entry({
        formats: ublInvoiceAndCreditNote({
          id: `pint-${j.code}-ubl`,
          name: `Peppol PINT ${j.name} Billing`,
          urn: billing,
          version: '1',
          match: [prefix(billing)],
        }),
        rules: { packs: [UBL_SCHEMA(), rules(`pint-${j.code}@${version}`)] },
        reader: readPint,
        ...(PINT_TARGETS_BY_CODE[j.code] ? { target: PINT_TARGETS_BY_CODE[j.code] } : {}),
      }),
    );
    if (j.selfBilling) {
      const sb = `urn:peppol:pint:selfbilling-1@${j.code}-1`;
      out.push(
        entry({
          formats: ublInvoiceAndCreditNote({
            id: `pint-${j.code}-selfbilling-ubl`,
            name: `Peppol PINT ${j.name} Self-Billing`,
            urn: sb,
            version: '1',
            match: [prefix(sb)],
          }),
          rules: { packs: [UBL_SCHEMA(), rules(`pint-${j.code}-selfbilling@${version}`)] },
        }),
      );
    }
  }
  const nonTax = 'urn:peppol:pint:nontaxinvoice-1@jp-1';
  out.push(
    entry({
      formats: ublInvoiceAndCreditNote({
        id: 'pint-jp-nontax-ubl',
        name: 'Peppol PINT Japan Non-tax Invoice',
        urn: nonTax,
        version: '1',
        match: [prefix(nonTax)],
      }),
      rules: { packs: [UBL_SCHEMA(), rules('pint-jp-nontax@1.1.2')] },
    }),
  );
  return out;
}

const PINT_TARGETS_BY_CODE: Readonly<Record<string, Omit<TargetFlavour, 'id' | 'syntax'>>> = {
  // PINT-EU carries the EN 16931 and Peppol rules unchanged (its jurisdiction-aligned rules are BIS Billing 3's).
  eu: {
    name: 'Peppol PINT Europe Billing',
    family: 'pint',
    specificationId: PINT_EU,
    defaultProcess: PINT_PROCESS,
    acceptsProcess: PINT_BILLING_PROCESS,
    requirements: [...EN16931_CORE, ...PEPPOL_RULES],
  },
  aunz: {
    name: 'Peppol PINT Australia / New Zealand Billing',
    family: 'pint',
    specificationId: PINT_AUNZ,
    defaultProcess: PINT_PROCESS,
    acceptsProcess: PINT_BILLING_PROCESS,
    requirements: [
      ...EN16931_CORE,
      ...PEPPOL_RULES.filter((r) => r.rule !== 'PEPPOL-EN16931-R002'),
      ...PINT_AUNZ_RULES,
    ],
    taxSchemeId: 'GST',
    adapt: adaptAunz,
  },
};

/** Matchers for the older or variant BT-24 spellings of a Factur-X / ZUGFeRD profile (see FACTURX_LEGACY_IDS). */
const legacy = (profile: keyof typeof FACTURX_LEGACY_IDS): Matcher[] =>
  FACTURX_LEGACY_IDS[profile].map((v) => eq(v.id, { version: v.version }));

// ---------------------------------------------------------------------------------------------------------------------
// The catalogue

const UNAVAILABLE_ZUGFERD1: RuleSpec = {
  notAvailable: 'ZUGFeRD 1.0 is retired; its rules are not among the pinned packs',
};
const UNAVAILABLE_DICO: RuleSpec = {
  notAvailable: 'DICO schemas and rules are licence-gated (Ketenstandaard) and cannot be fetched',
};
const NOT_MAPPED: RuleSpec = { notAvailable: 'no rule packs are mapped to this format' };

export const FORMAT_CATALOGUE: readonly CatalogueEntry[] = Object.freeze([
  // --- UBL 2.1 billing -------------------------------------------------------------------------------------------
  entry({
    formats: ublInvoiceAndCreditNote({
      id: 'en16931-ubl',
      name: 'EN 16931 UBL 2.1',
      urn: EN16931,
      version: '2017',
      match: [eq(EN16931), { score: FALLBACK, customizationId: { pattern: EN16931_UNKNOWN_CIUS } }],
    }),
    rules: { packs: [UBL_SCHEMA(), EN16931_UBL] },
    target: { name: 'EN 16931 UBL 2.1', family: 'en16931', specificationId: EN16931, requirements: EN16931_CORE },
  }),
  entry({
    formats: ublInvoiceAndCreditNote({
      id: 'peppol-bis3-ubl',
      name: 'Peppol BIS Billing 3.0',
      urn: PEPPOL_BIS3,
      version: '3.0',
      match: [prefix(PEPPOL_BIS3)],
    }),
    rules: {
      packs: [UBL_SCHEMA(), PEPPOL_CEN_UBL, rules('peppol-bis3-ubl@2026.5')],
      previous: [PEPPOL_CEN_UBL_PREVIOUS, 'peppol-bis3-ubl@2025.11'],
    },
    target: { name: 'Peppol BIS Billing 3.0', ...PEPPOL_BIS3_TARGET },
  }),
  entry({
    formats: ublInvoiceAndCreditNote({
      id: 'peppol-selfbilling-ubl',
      name: 'Peppol BIS Self-Billing 3.0',
      urn: PEPPOL_SELF_BILLING,
      version: '3.0',
      match: [prefix(PEPPOL_SELF_BILLING)],
    }),
    rules: {
      packs: [UBL_SCHEMA(), PEPPOL_CEN_UBL, rules('peppol-selfbilling-ubl@2026.5')],
      previous: [PEPPOL_CEN_UBL_PREVIOUS],
    },
  }),
  entry({
    formats: ublInvoiceAndCreditNote({
      id: 'nlcius-ubl',
      name: 'NLCIUS (SI-UBL 2.0)',
      urn: NLCIUS,
      version: '1.0',
      match: [prefix(NLCIUS)],
    }),
    rules: { packs: [UBL_SCHEMA(), rules('si-ubl-2.0@2.0.3.12')] },
    target: {
      name: 'NLCIUS (SI-UBL 2.0)',
      family: 'nlcius',
      specificationId: NLCIUS,
      requirements: [...EN16931_CORE, ...NLCIUS_RULES],
    },
  }),
  entry({
    formats: ublInvoiceAndCreditNote({
      id: 'nlcius-gaccount-ubl',
      name: 'NLCIUS (SI-UBL 2.0) with G-account extension',
      urn: NLCIUS_GACCOUNT,
      version: '1.0',
      match: [prefix(NLCIUS_GACCOUNT, { score: EXACT })],
    }),
    rules: { packs: [UBL_SCHEMA(), rules('si-ubl-2.0-gaccount@1.0.12')] },
  }),
  entry({
    formats: ublInvoiceAndCreditNote({
      id: 'xrechnung-ubl',
      name: 'XRechnung UBL',
      urn: XRECHNUNG_3,
      match: [pattern(XR_CIUS, { versionGroup: 1 })],
    }),
    rules: XRECHNUNG_UBL_RULES,
    target: { name: 'XRechnung 3.0 UBL', ...XRECHNUNG_TARGET },
  }),
  entry({
    formats: ublInvoiceAndCreditNote({
      id: 'xrechnung-extension-ubl',
      name: 'XRechnung Extension UBL',
      urn: XRECHNUNG_3_EXTENSION,
      match: [pattern(XR_EXTENSION, { versionGroup: 1 })],
    }),
    rules: XRECHNUNG_EXTENSION_UBL_RULES,
  }),
  entry({
    formats: ublInvoiceAndCreditNote({
      id: 'xrechnung-cvd-ubl',
      name: 'XRechnung CVD (Clean Vehicles Directive) UBL',
      urn: XRECHNUNG_3_CVD,
      match: [pattern(XR_CVD, { versionGroup: 1 })],
    }),
    rules: XRECHNUNG_CVD_UBL_RULES,
  }),
  ...pintEntries(),
  entry({
    formats: {
      // SETU Invoice carries the NLCIUS CustomizationID; its own identifier is optional (SETU rule Invoice.4 only
      // warns).
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
    // SETU Invoice is NLCIUS-based; SETU's own Schematron is not published on Maven Central.
    rules: { packs: [UBL_SCHEMA(), rules('si-ubl-2.0@2.0.3.12')] },
    reader: (doc) => readSetu(doc),
  }),

  // --- Peppol post-award messages (UBL) ----------------------------------------------------------------------------
  entry({
    formats: {
      id: 'peppol-mls',
      name: 'Peppol Message Level Status',
      syntax: 'UBL',
      urn: 'urn:peppol:edec:mls:1.0',
      roots: [applicationResponse('MessageLevelStatus')],
      match: [prefix('urn:peppol:edec:mls')],
      version: '1.0',
    },
    rules: { packs: [UBL_SCHEMA('ApplicationResponse'), rules('peppol-mls@1.0.0')] },
  }),
  entry({
    formats: {
      id: 'peppol-invoice-response',
      name: 'Peppol Invoice Response 3',
      syntax: 'UBL',
      urn: 'urn:fdc:peppol.eu:poacc:trns:invoice_response:3',
      roots: [applicationResponse('ApplicationResponse')],
      match: [prefix('urn:fdc:peppol.eu:poacc:trns:invoice_response:3')],
      version: '3',
    },
    rules: { packs: [UBL_SCHEMA('ApplicationResponse'), rules('peppol-invoice-response@2026.5')] },
  }),
  entry({
    formats: {
      id: 'peppol-mlr',
      name: 'Peppol Message Level Response 3',
      syntax: 'UBL',
      urn: 'urn:fdc:peppol.eu:poacc:trns:mlr:3',
      roots: [applicationResponse('ApplicationResponse')],
      match: [prefix('urn:fdc:peppol.eu:poacc:trns:mlr:3')],
      version: '3',
    },
    rules: { packs: [UBL_SCHEMA('ApplicationResponse'), rules('peppol-mlr@2026.5')] },
  }),
  entry({
    formats: {
      id: 'peppol-order',
      name: 'Peppol Order 3',
      syntax: 'UBL',
      urn: 'urn:fdc:peppol.eu:poacc:trns:order:3',
      roots: [{ localName: 'Order', namespace: NS.ublOrder, documentType: 'Order' }],
      match: [prefix('urn:fdc:peppol.eu:poacc:trns:order:3')],
      version: '3',
    },
    rules: { packs: [UBL_SCHEMA('Order'), rules('peppol-order@2026.5')] },
  }),
  entry({
    formats: {
      id: 'peppol-order-response',
      name: 'Peppol Order Response 3',
      syntax: 'UBL',
      urn: 'urn:fdc:peppol.eu:poacc:trns:order_response:3',
      roots: [{ localName: 'OrderResponse', namespace: NS.ublOrderResponse, documentType: 'OrderResponse' }],
      match: [prefix('urn:fdc:peppol.eu:poacc:trns:order_response:3')],
      version: '3',
    },
    rules: { packs: [UBL_SCHEMA('OrderResponse'), rules('peppol-order-response@2026.5')] },
  }),

  // --- CII D16B ----------------------------------------------------------------------------------------------------
  entry({
    formats: {
      // Plain EN 16931 CII; the same GuidelineID is the Factur-X/ZUGFeRD "EN 16931 (COMFORT)" profile, reported as
      // facturx-en16931 when the XML comes out of a PDF (whose validation adds the Factur-X rules).
      id: 'en16931-cii',
      name: 'EN 16931 CII D16B',
      syntax: 'CII',
      urn: CII_URN,
      aliases: [EN16931],
      roots: [CII_ROOT],
      match: [
        eq(EN16931),
        eq(ZUGFERD2_EN16931_UPPER),
        { score: FALLBACK, customizationId: { pattern: EN16931_UNKNOWN_CIUS } },
      ],
      version: '2017',
    },
    rules: { packs: [CII_SCHEMA, EN16931_CII] },
    target: { name: 'EN 16931 CII D16B', family: 'en16931', specificationId: EN16931, requirements: EN16931_CORE },
  }),
  entry({
    formats: {
      id: 'facturx-minimum',
      name: 'Factur-X / ZUGFeRD MINIMUM',
      syntax: 'CII',
      urn: FACTURX_MINIMUM,
      roots: [CII_ROOT],
      match: [eq(FACTURX_MINIMUM, { version: '1.0' }), eq('urn:zugferd.de:2p0:minimum', { version: '2.0' })],
    },
    rules: facturx('minimum'),
  }),
  entry({
    formats: {
      id: 'facturx-basicwl',
      name: 'Factur-X / ZUGFeRD BASIC WL',
      syntax: 'CII',
      urn: FACTURX_BASIC_WL,
      roots: [CII_ROOT],
      match: [eq(FACTURX_BASIC_WL, { version: '1.0' }), eq('urn:zugferd.de:2p0:basicwl', { version: '2.0' })],
    },
    rules: facturx('basicwl'),
  }),
  entry({
    formats: {
      id: 'facturx-basic',
      name: 'Factur-X / ZUGFeRD BASIC',
      syntax: 'CII',
      urn: FACTURX_BASIC,
      roots: [CII_ROOT],
      match: [
        eq(FACTURX_BASIC, { version: '1.0' }),
        eq(`${EN16931}#compliant#urn:zugferd.de:2p0:basic`, { version: '2.0' }),
        ...legacy('basic'),
      ],
    },
    rules: facturx('basic'),
    target: {
      name: 'Factur-X / ZUGFeRD BASIC (PDF/A-3)',
      family: 'facturx',
      specificationId: FACTURX_BASIC,
      requirements: [...EN16931_CORE, ...FACTURX_BASIC_RULES],
      facturx: { conformanceLevel: 'BASIC', filename: 'factur-x.xml', relationship: 'Alternative' },
    },
  }),
  entry({
    formats: {
      id: 'facturx-en16931',
      name: 'Factur-X / ZUGFeRD EN 16931 (COMFORT)',
      syntax: 'CII',
      urn: EN16931,
      roots: [CII_ROOT],
      match: [
        eq(EN16931, { container: 'pdf', score: EXACT + 50 }),
        eq(ZUGFERD2_EN16931_UPPER, { container: 'pdf', score: EXACT + 50, version: '2.0' }),
        // These name Factur-X themselves, so bare XML carrying them is Factur-X too.
        ...legacy('en16931'),
      ],
      version: '2017',
    },
    rules: facturx('en16931'),
    // Factur-X PDFs: the embedded CII is the EN 16931 content.
    target: {
      name: 'Factur-X / ZUGFeRD EN 16931 (PDF/A-3)',
      family: 'facturx',
      specificationId: EN16931,
      requirements: EN16931_CORE,
      facturx: { conformanceLevel: 'EN 16931', filename: 'factur-x.xml', relationship: 'Alternative' },
    },
  }),
  entry({
    formats: {
      id: 'facturx-extended',
      name: 'Factur-X / ZUGFeRD EXTENDED',
      syntax: 'CII',
      urn: FACTURX_EXTENDED,
      roots: [CII_ROOT],
      match: [
        eq(FACTURX_EXTENDED, { version: '1.0' }),
        eq(`${EN16931}#conformant#urn:zugferd.de:2p0:extended`, { version: '2.0' }),
        ...legacy('extended'),
      ],
    },
    rules: facturx('extended'),
    // EXTENDED is a superset of EN 16931, so every EN 16931 invoice is a valid EXTENDED one.
    target: {
      name: 'Factur-X / ZUGFeRD EXTENDED (PDF/A-3)',
      family: 'facturx',
      specificationId: FACTURX_EXTENDED,
      requirements: EN16931_CORE,
      facturx: { conformanceLevel: 'EXTENDED', filename: 'factur-x.xml', relationship: 'Alternative' },
    },
  }),
  entry({
    formats: {
      id: 'facturx-extended-ctc-fr',
      name: 'Factur-X EXTENDED-CTC-FR',
      syntax: 'CII',
      urn: FACTURX_EXTENDED_CTC_FR,
      roots: [CII_ROOT],
      match: [eq(FACTURX_EXTENDED_CTC_FR, { version: '1.0' })],
    },
    rules: { notAvailable: 'the French EXTENDED-CTC-FR profile rules are not in the pinned Factur-X 1.08 package' },
  }),
  entry({
    formats: {
      id: 'facturx-xrechnung',
      name: 'Factur-X / ZUGFeRD XRECHNUNG',
      syntax: 'CII',
      urn: XRECHNUNG_3,
      roots: [CII_ROOT],
      match: [pattern(XR_CIUS, { versionGroup: 1, container: 'pdf', score: PATTERN + 50 })],
    },
    rules: XRECHNUNG_CII_RULES,
    // XRECHNUNG adds the XRechnung CIUS rules.
    target: {
      name: 'Factur-X / ZUGFeRD XRECHNUNG (PDF/A-3)',
      ...XRECHNUNG_TARGET,
      family: 'facturx',
      facturx: { conformanceLevel: 'XRECHNUNG', filename: 'xrechnung.xml', relationship: 'Alternative' },
    },
  }),
  entry({
    formats: {
      id: 'xrechnung-cii',
      name: 'XRechnung CII',
      syntax: 'CII',
      urn: XRECHNUNG_3,
      roots: [CII_ROOT],
      match: [pattern(XR_CIUS, { versionGroup: 1 })],
    },
    rules: XRECHNUNG_CII_RULES,
    target: { name: 'XRechnung 3.0 CII', ...XRECHNUNG_TARGET },
  }),
  entry({
    formats: {
      id: 'xrechnung-extension-cii',
      name: 'XRechnung Extension CII',
      syntax: 'CII',
      urn: XRECHNUNG_3_EXTENSION,
      roots: [CII_ROOT],
      match: [pattern(XR_EXTENSION, { versionGroup: 1 })],
    },
    rules: XRECHNUNG_EXTENSION_CII_RULES,
  }),
  entry({
    formats: {
      id: 'xrechnung-cvd-cii',
      name: 'XRechnung CVD (Clean Vehicles Directive) CII',
      syntax: 'CII',
      urn: XRECHNUNG_3_CVD,
      roots: [CII_ROOT],
      match: [pattern(XR_CVD, { versionGroup: 1 })],
    },
    rules: XRECHNUNG_CVD_CII_RULES,
  }),
  entry({
    formats: {
      id: 'nlcius-cii',
      name: 'NLCIUS CII',
      syntax: 'CII',
      urn: NLCIUS,
      roots: [CII_ROOT],
      match: [prefix(NLCIUS)],
      version: '1.0',
    },
    rules: { packs: [CII_SCHEMA, rules('nlcius-cii@1.0.3.12')] },
    target: {
      name: 'NLCIUS CII',
      family: 'nlcius',
      specificationId: NLCIUS,
      requirements: [...EN16931_CORE, ...NLCIUS_CII_RULES],
    },
  }),
  entry({
    formats: {
      id: 'peppol-bis3-cii',
      name: 'Peppol BIS Billing 3.0 CII',
      syntax: 'CII',
      urn: PEPPOL_BIS3,
      roots: [CII_ROOT],
      match: [prefix(PEPPOL_BIS3)],
      version: '3.0',
    },
    // Not a target either (src/transform/table.ts): the gateway writes only what it can check with the rules in force.
    rules: {
      notAvailable:
        'OpenPeppol publishes no current CII rules for BIS Billing 3: the last on Maven Central are release 3.0.15 ' +
        '(2023, phive-rules-peppol up to 3.1.5), withdrawn since; the gateway does not judge a document by withdrawn ' +
        'rules',
    },
  }),

  // --- ZUGFeRD 1.0 -------------------------------------------------------------------------------------------------
  ...(['basic', 'comfort', 'extended'] as const).map((profile) =>
    entry({
      formats: {
        id: `zugferd1-${profile}`,
        name: `ZUGFeRD 1.0 ${profile.toUpperCase()}`,
        syntax: 'ZUGFeRD1',
        urn: `${ZUGFERD1_GUIDELINE}:${profile}`,
        roots: [ZF1_ROOT],
        match: [eq(`${ZUGFERD1_GUIDELINE}:${profile}`)],
        version: '1.0',
        refused: { code: 'UNKNOWN_FORMAT', message: ZUGFERD1_REFUSAL },
      },
      rules: UNAVAILABLE_ZUGFERD1,
    }),
  ),

  // --- National syntaxes identified by their root
  // ---------------------------------------------------------------------
  entry({
    formats: {
      id: 'fatturapa-1.2',
      name: 'FatturaPA 1.2',
      syntax: 'FatturaPA',
      urn: NS.fatturaPA12,
      roots: [{ localName: 'FatturaElettronica', namespace: NS.fatturaPA12, documentType: 'Invoice' }],
      match: [rootOnly],
      // FPA12 (public administration) or FPR12 (B2B/B2C)
      versionAttribute: 'versione',
    },
    rules: { packs: [{ pack: 'fatturapa-xsd@1.2.2', entry: 'FatturaElettronica' }] },
    // BT-24 is not written (FatturaPA names itself by namespace and versione), so BR-01 does not apply.
    target: {
      name: 'FatturaPA 1.2',
      family: 'fatturapa',
      specificationId: '',
      requirements: [...EN16931_CORE.filter((r) => r.rule !== 'BR-01'), ...FATTURAPA_RULES],
    },
  }),
  ...['4.0', '4.1', '4.2', '4.3', '5.0', '6.0', '6.1'].map((version) =>
    entry({
      formats: ebInterface(version),
      rules: { packs: [{ pack: 'ebinterface-xsd@8.1.0', entry: VERSION }] },
      ...(version === '6.1'
        ? {
            target: {
              name: 'ebInterface 6.1',
              family: 'ebinterface',
              specificationId: EBINTERFACE_61_NS,
              requirements: [...EN16931_CORE, ...EBINTERFACE_RULES],
            },
          }
        : {}),
    }),
  ),
  entry({
    formats: {
      id: 'svefaktura-1.0',
      name: 'Svefaktura 1.0',
      syntax: 'Svefaktura',
      urn: NS.svefaktura10,
      roots: [{ localName: 'Invoice', namespace: NS.svefaktura10, documentType: 'Invoice' }],
      match: [rootOnly],
      version: '1.0',
    },
    rules: { packs: [{ pack: 'svefaktura-xsd@1.0', entry: 'Invoice' }, rules('svefaktura@1.0')] },
    reader: (doc) => readSvefaktura(doc),
  }),
  entry({
    formats: {
      id: 'dico-insbou004',
      name: 'DICO INSBOU004 invoice',
      syntax: 'DICO',
      urn: NS.dicoInsbou004,
      roots: [{ localName: 'Invoice', namespace: NS.dicoInsbou004, documentType: 'Invoice' }],
      match: [rootOnly],
      version: 'INSBOU004',
    },
    rules: UNAVAILABLE_DICO,
  }),
  entry({
    formats: {
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
    rules: UNAVAILABLE_DICO,
  }),

  // --- Recognised and refused
  // ------------------------------------------------------------------------------------------
  entry({
    formats: ublInvoiceAndCreditNote({
      id: 'si-ubl-1',
      name: 'SI-UBL 1.x (retired)',
      urn: 'urn:www.simplerinvoicing.org:si:si-ubl:ver1.2',
      match: [
        { score: EXACT + 50, customizationId: { contains: 'urn:www.simplerinvoicing.org:si:si-ubl:' } },
        { score: EXACT + 50, customizationId: { contains: 'urn:www.simplerinvoicing.org:si-ubl:' } },
      ],
      refused: { code: 'UNKNOWN_FORMAT', message: SI_UBL_1_REFUSAL },
    }),
    rules: NOT_MAPPED,
  }),
  // XRechnung 1.2 and 2.x (UBL and CII, the extension included): each release named with the day it stopped being
  // accepted.
  ...XRECHNUNG_RETIRED.flatMap((r) => {
    const id = `xrechnung-${r.version}`;
    const refused = { code: 'UNKNOWN_FORMAT', message: xrechnungRetiredRefusal(r) } as const;
    const match = [
      {
        score: EXACT + 50,
        customizationId: {
          pattern: new RegExp(
            String.raw`^urn:cen\.eu:en16931:2017#compliant#urn:(?:xoev-de:kosit:standard|xeinkauf\.de:kosit):` +
              String.raw`xrechnung_${r.version.replace('.', '\\.')}(?:#.*)?$`,
          ),
        },
      },
    ];
    const urn = `${EN16931}#compliant#urn:xoev-de:kosit:standard:xrechnung_${r.version}`;
    return [
      entry({
        formats: ublInvoiceAndCreditNote({
          id: `${id}-ubl`,
          name: `XRechnung ${r.version} UBL (retired)`,
          urn,
          version: r.version,
          match,
          refused,
        }),
        rules: NOT_MAPPED,
      }),
      entry({
        formats: {
          id: `${id}-cii`,
          name: `XRechnung ${r.version} CII (retired)`,
          syntax: 'CII',
          urn,
          roots: [CII_ROOT],
          match,
          version: r.version,
          refused,
        },
        rules: NOT_MAPPED,
      }),
    ];
  }),
  entry({
    formats: {
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
    rules: NOT_MAPPED,
  }),
]);

// ---------------------------------------------------------------------------------------------------------------------
// Lookups

const BY_ID = new Map(FORMAT_CATALOGUE.map((e) => [e.id, e]));

/** The entry of a base id or a detected format id (`…-invoice` / `…-creditnote`). */
export function catalogueEntry(formatId: string): CatalogueEntry | undefined {
  return BY_ID.get(baseFormatId(formatId));
}
