import { GatewayError } from '../core/gateway-error';
import { truncateForEcho } from '../core/truncate';
import type { DetectedFormat } from '../formats';

/**
 * Which rule packs validate which detected format, in the order they run: the schema first, then the business rules
 * the specification layers on it (XRechnung after EN 16931, as KoSIT's scenarios do). Where the official artefact
 * bundles the EN 16931 rules with its own (SI-UBL/NLCIUS, Factur-X, Peppol's CEN copy), that artefact is used as
 * published instead of adding the CEN pack a second time.
 */

export interface PackRef {
  id: string;
  /** A version other than the current one (explicit `ruleSet=id@version`). */
  version?: string;
  /** For schema packs: the document root whose schema applies. */
  entry?: string;
}

export interface Selection {
  packs: PackRef[];
}

const UBL = (entry: string): PackRef => ({ id: 'ubl-2.1', entry });
const CII: PackRef = { id: 'cii-d16b', entry: 'CrossIndustryInvoice' };

/** Formats that are recognised but have no pinned official artefact, with the reason. */
const NOT_AVAILABLE: ReadonlyArray<{ test: RegExp; reason: string }> = [
  {
    test: /^peppol-bis3-cii$/,
    reason:
      'OpenPeppol publishes no compiled CII rules for BIS Billing 3 on Maven Central (phive-rules-peppol ships UBL only)',
  },
  {
    test: /^facturx-extended-ctc-fr$/,
    reason: 'the French EXTENDED-CTC-FR profile rules are not in the pinned Factur-X 1.08 package',
  },
  { test: /^zugferd1-/, reason: 'ZUGFeRD 1.0 is retired; its rules are not among the pinned packs' },
  { test: /^dico-/, reason: 'DICO schemas and rules are licence-gated (Ketenstandaard) and cannot be fetched' },
  {
    test: /^pint-selfbilling-ubl-/,
    reason: 'Peppol PINT self-billing has rules per jurisdiction only; give the jurisdiction in the CustomizationID',
  },
  {
    test: /^pint-(eu|sg|om)-selfbilling-ubl-/,
    reason: 'the pinned PINT package has no self-billing rules for this jurisdiction',
  },
];

function stripDocumentType(id: string): string {
  return id.replace(/-(invoice|creditnote)$/, '');
}

function notAvailable(format: DetectedFormat, reason: string): GatewayError {
  return new GatewayError(
    'NOT_IMPLEMENTED',
    `No validation rules are available for ${format.name} (${format.id}): ${reason}`,
    {
      details: { reason: 'RULES_NOT_AVAILABLE', format: format.id },
    },
  );
}

export function selectRulePacks(format: DetectedFormat): Selection {
  for (const n of NOT_AVAILABLE) if (n.test.test(format.id)) throw notAvailable(format, n.reason);
  const base = stripDocumentType(format.id);
  const root = format.rootName;
  switch (base) {
    case 'en16931-ubl':
      return { packs: [UBL(root), { id: 'en16931-ubl' }] };
    case 'peppol-bis3-ubl':
      return { packs: [UBL(root), { id: 'peppol-cen-en16931-ubl' }, { id: 'peppol-bis3-ubl' }] };
    case 'peppol-selfbilling-ubl':
      return { packs: [UBL(root), { id: 'peppol-cen-en16931-ubl' }, { id: 'peppol-selfbilling-ubl' }] };
    case 'nlcius-ubl':
    // SETU Invoice is NLCIUS-based; SETU's own Schematron is not published on Maven Central.
    case 'setu-invoice-ubl':
      return { packs: [UBL(root), { id: 'si-ubl-2.0' }] };
    case 'nlcius-gaccount-ubl':
      return { packs: [UBL(root), { id: 'si-ubl-2.0-gaccount' }] };
    case 'xrechnung-ubl':
    case 'xrechnung-extension-ubl':
    case 'xrechnung-cvd-ubl':
      return { packs: [UBL(root), { id: 'en16931-ubl' }, { id: 'xrechnung-ubl' }] };
    case 'peppol-mls':
      return { packs: [UBL('ApplicationResponse'), { id: 'peppol-mls' }] };
    case 'peppol-invoice-response':
      return { packs: [UBL('ApplicationResponse'), { id: 'peppol-invoice-response' }] };
    case 'peppol-mlr':
      return { packs: [UBL('ApplicationResponse'), { id: 'peppol-mlr' }] };
    case 'peppol-order':
      return { packs: [UBL('Order'), { id: 'peppol-order' }] };
    case 'peppol-order-response':
      return { packs: [UBL('OrderResponse'), { id: 'peppol-order-response' }] };
    case 'en16931-cii':
      return { packs: [CII, { id: 'en16931-cii' }] };
    case 'xrechnung-cii':
    case 'xrechnung-extension-cii':
    case 'xrechnung-cvd-cii':
    case 'facturx-xrechnung':
      return { packs: [CII, { id: 'en16931-cii' }, { id: 'xrechnung-cii' }] };
    case 'nlcius-cii':
      return { packs: [CII, { id: 'nlcius-cii' }] };
    case 'facturx-minimum':
    case 'facturx-basicwl':
    case 'facturx-basic':
    case 'facturx-en16931':
    case 'facturx-extended': {
      const profile = base.slice('facturx-'.length);
      return { packs: [{ id: 'facturx-xsd', entry: profile }, { id: base }] };
    }
    case 'fatturapa-1.2':
      return { packs: [{ id: 'fatturapa-xsd', entry: 'FatturaElettronica' }] };
    case 'svefaktura-1.0':
      return { packs: [{ id: 'svefaktura-xsd', entry: 'Invoice' }, { id: 'svefaktura' }] };
    default: {
      if (base.startsWith('ebinterface-') && format.version)
        return { packs: [{ id: 'ebinterface-xsd', entry: format.version }] };
      // PINT: each jurisdiction's package holds the base PINT rules and its own (EU adds the EN 16931-aligned ones).
      const pint = /^pint(?:-(eu|aunz|jp|sg|my|ae|om))?(-selfbilling|-nontax)?-ubl$/.exec(base);
      if (pint) {
        const id = pint[1] ? `pint-${pint[1]}${pint[2] ?? ''}` : 'pint';
        return { packs: [UBL(root), { id }] };
      }
      throw notAvailable(format, 'no rule packs are mapped to this format');
    }
  }
}

/**
 * An explicit `ruleSet`: comma-separated pack ids (`id` or `id@version`), run in the given order. Schema packs take
 * the entry for the document's root. The version, when given, must be the pinned one.
 */
export function parseRuleSet(
  ruleSet: string,
  format: DetectedFormat,
  pinned: (id: string) => Array<{ version: string; kind: 'xsd' | 'schematron'; entries?: string[] }>,
): Selection {
  const packs: PackRef[] = [];
  for (const given of ruleSet
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const [id, version] = given.split('@') as [string, string | undefined];
    // Quoted back in refusals: bounded, as is the document's root name.
    const raw = truncateForEcho(given);
    const shownId = truncateForEcho(id);
    const versions = pinned(id);
    if (versions.length === 0)
      throw new GatewayError('BAD_REQUEST', `ruleSet: unknown rule pack "${shownId}"`, {
        details: { reason: 'UNKNOWN_RULE_SET', ruleSet: raw },
      });
    const def = version === undefined ? versions[0]! : versions.find((v) => v.version === version);
    if (!def) {
      throw new GatewayError(
        'BAD_REQUEST',
        `ruleSet: rule pack ${shownId} is pinned at version ${versions.map((v) => v.version).join(' or ')}, not ${truncateForEcho(version ?? '')}`,
        {
          details: { reason: 'UNKNOWN_RULE_SET', ruleSet: raw },
        },
      );
    }
    if (def.kind === 'xsd') {
      const entry =
        def.entries?.find((e) => e === format.rootName) ?? (def.entries?.length === 1 ? def.entries[0] : undefined);
      if (!entry)
        throw new GatewayError(
          'BAD_REQUEST',
          `ruleSet: schema pack ${shownId} has no schema for <${truncateForEcho(format.rootName)}>`,
          { details: { reason: 'UNKNOWN_RULE_SET', ruleSet: raw } },
        );
      packs.push({ id, entry, ...(def !== versions[0] ? { version: def.version } : {}) });
    } else packs.push({ id, ...(def !== versions[0] ? { version: def.version } : {}) });
  }
  if (packs.length === 0)
    throw new GatewayError('BAD_REQUEST', 'ruleSet names no rule pack', { details: { reason: 'UNKNOWN_RULE_SET' } });
  return { packs };
}
