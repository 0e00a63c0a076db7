import type { Identifier, Invoice } from '../../en16931/model';
import { tddProfileOf } from './config';
import { invoiceUuidOf } from './invoice-uuid';
import { DEFAULT_TDD_PROFILE, tddProfile } from './profiles';
import {
  TDD_TYPE_CODES,
  type ParticipantId,
  type PlannedTddReport,
  type TaxDataDocument,
  type TddConfig,
  type TddExchange,
  type TddProfileId,
} from './types';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The invoice lacks what the report needs: the missing business terms, by number. */
export class TddDerivationError extends Error {
  constructor(
    readonly missing: readonly string[],
    role: string,
  ) {
    super(`cannot derive the ${role} Tax Data Document: ${missing.join('; ')}`);
    this.name = 'TddDerivationError';
  }
}

const present = (v: string | undefined): boolean => v !== undefined && v.trim() !== '';

/**
 * What each reporter role needs from the invoice. Both roles: the terms of the Invoice UUID and the TDD structure
 * (BT-1, BT-2, BT-3, BT-5, BT-24, BT-31, a non-empty buyer, a VAT breakdown, lines). C3 (the buyer is liable for the
 * VAT) also: BT-110, BT-112, BT-117 / BT-118 / BT-119 per VAT breakdown and BT-111 when BT-6 is given (TDD 1.1.0
 * ibr-tdd-90..93). BT-119 is not asked of category "O", which has no rate. The profile adds its own required terms
 * (`requiredTerms`: the Slovak profile asks for BT-44, its BR-07).
 */
export function missingTerms(inv: Invoice, role: 'C2' | 'C3', profile: TddProfileId = DEFAULT_TDD_PROFILE): string[] {
  const missing: string[] = [];
  const need = (term: string, v: string | undefined): void => {
    if (!present(v)) missing.push(term);
  };
  need('BT-1 Invoice number', inv.number);
  need('BT-2 Invoice issue date', inv.issueDate);
  need('BT-3 Invoice type code', inv.typeCode);
  need('BT-5 Invoice currency code', inv.currencyCode);
  need('BT-24 Specification identifier', inv.processControl.specificationIdentifier);
  // An input of the Invoice UUID (TDT-017); the specification gives no UUID without it, so a "not subject to VAT"
  // invoice without BT-31 (BR-O-02) cannot be reported yet.
  need('BT-31 Seller VAT identifier', inv.seller.vatIdentifier);
  if (![inv.buyer.vatIdentifier, inv.buyer.postalAddress?.countryCode, inv.buyer.name].some(present))
    missing.push('BG-7 Buyer: one of BT-48, BT-55, BT-44');
  if (inv.vatBreakdown.length === 0) missing.push('BG-23 VAT breakdown');
  if (inv.lines.length === 0) missing.push('BG-25 Invoice line');
  if (tddProfile(profile).requiredTerms.includes('BT-44')) need(`BT-44 Buyer name (${profile}: BR-07)`, inv.buyer.name);
  if (role === 'C3') {
    need('BT-110 Invoice total VAT amount', inv.totals.totalVatAmount);
    need('BT-112 Invoice total amount with VAT', inv.totals.totalWithVat);
    inv.vatBreakdown.forEach((v, k) => {
      const n = `VAT breakdown ${k + 1}`;
      need(`BT-117 VAT category tax amount (${n})`, v.taxAmount);
      need(`BT-118 VAT category code (${n})`, v.categoryCode);
      if (v.categoryCode !== 'O') need(`BT-119 VAT category rate (${n})`, v.rate);
    });
    if (present(inv.vatAccountingCurrencyCode))
      need('BT-111 Invoice total VAT amount in accounting currency', inv.totals.totalVatAmountInAccountingCurrency);
  }
  return missing;
}

function participant(term: string, id: Identifier | undefined, missing: string[]): ParticipantId {
  if (!id || !present(id.value) || !present(id.schemeId)) {
    missing.push(`${term} with its scheme identifier (the reporting party's Peppol participant id)`);
    return { schemeId: '', value: '' };
  }
  return { schemeId: id.schemeId!.trim(), value: id.value.trim() };
}

/** `0242:000000-x` or `000000-x` → scheme 0242 participant id. */
function spidParticipant(v: string): ParticipantId {
  return { schemeId: '0242', value: v.startsWith('0242:') ? v.slice(5) : v };
}

/**
 * Derives one planned report from the EN 16931 model: pure, so a retried step gets the same document for the same
 * exchange. The reporting party is the seller's electronic address (BT-34) for C2 and the buyer's (BT-49) for C3.
 * The profile is the authority's (`vida-1` when it names none), which must have the configured version.
 */
export function deriveTdd(
  inv: Invoice,
  report: PlannedTddReport,
  exchange: TddExchange,
  config: TddConfig,
): TaxDataDocument {
  const profile = tddProfileOf(report.authority);
  const missing = missingTerms(inv, report.role, profile.id);
  const reportingParty = participant(
    report.role === 'C2' ? 'BT-34 Seller electronic address' : 'BT-49 Buyer electronic address',
    report.role === 'C2' ? inv.seller.electronicAddress : inv.buyer.electronicAddress,
    missing,
  );
  if (missing.length > 0) throw new TddDerivationError(missing, report.role);
  for (const [name, v] of [
    ['TDT-003 TDD UUID', exchange.tddUuid],
    ['TDT-018 Invoice Transmission UUID', exchange.transmissionUuid],
  ] as const)
    if (!UUID.test(v)) throw new Error(`${name} ${v} is not a UUID`);
  if (Number.isNaN(exchange.issuedAt.getTime())) throw new Error('TDT-004 / TDT-005: issuedAt is not a valid time');
  if (!profile.versions[config.version])
    throw new Error(`the Tax Data Document profile ${profile.id} has no version ${config.version}`);
  const iso = exchange.issuedAt.toISOString();
  return {
    profile: profile.id,
    version: config.version,
    uuid: exchange.tddUuid,
    issueDate: iso.slice(0, 10),
    issueTime: iso.slice(11),
    typeCode: TDD_TYPE_CODES[exchange.reportType],
    scope: report.scope,
    role: report.role,
    authority: { id: report.authority.id, ...(report.authority.name ? { name: report.authority.name } : {}) },
    reportingParty,
    receivingParty: spidParticipant(report.authority.receiver),
    representative: spidParticipant(config.serviceProviderId),
    invoiceUuid: invoiceUuidOf(inv),
    transmissionUuid: exchange.transmissionUuid,
    invoice: inv,
  };
}
