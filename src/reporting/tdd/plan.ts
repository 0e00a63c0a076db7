import type { Invoice } from '../../en16931/model';
import type {
  PlannedTddReport,
  SkippedTddReport,
  TddConfig,
  TddDocumentScope,
  TddPlan,
  TddReporterRole,
} from './types';

/** EU member states (ISO 3166-1 alpha-2; Greece as GR). */
const EU = new Set('AT BE BG CY CZ DE DK EE ES FI FR GR HR HU IE IT LT LU LV MT NL PL PT RO SE SI SK'.split(' '));

/** The country that issued a VAT identifier: its two-letter prefix (EL is Greece), when it has one. */
export function vatCountry(vatId: string | undefined): string | undefined {
  const m = /^\s*([A-Za-z]{2})/.exec(vatId ?? '');
  if (!m) return undefined;
  const cc = m[1]!.toUpperCase();
  return cc === 'EL' ? 'GR' : cc;
}

/** The seller's VAT country (BT-31), else its address country (BT-40). */
export function sellerCountry(inv: Invoice): string | undefined {
  return vatCountry(inv.seller.vatIdentifier) ?? inv.seller.postalAddress?.countryCode?.toUpperCase();
}

/** The buyer's VAT country (BT-48), else its address country (BT-55). */
export function buyerCountry(inv: Invoice): string | undefined {
  return vatCountry(inv.buyer.vatIdentifier) ?? inv.buyer.postalAddress?.countryCode?.toUpperCase();
}

/**
 * TDT-006: D when seller and buyer are in one country, IC when both are in different EU member states, INTL
 * otherwise (one of them outside the EU, or a country unknown).
 */
export function documentScope(inv: Invoice): TddDocumentScope {
  const s = sellerCountry(inv);
  const b = buyerCountry(inv);
  if (s !== undefined && s === b) return 'D';
  if (s !== undefined && b !== undefined && EU.has(s) && EU.has(b)) return 'IC';
  return 'INTL';
}

export type TddDirection = 'outbound' | 'inbound';

/**
 * Which Tax Data Documents a document needs: an invoice we send is reported by us as C2 to the authority of the
 * seller's VAT country, an invoice we receive as C3 to the authority of the buyer's VAT country, each where the
 * configuration lists that country for that role. Everything left out is in `skipped` with the reason.
 */
export function planTddReports(inv: Invoice, direction: TddDirection, config: TddConfig): TddPlan {
  const role: TddReporterRole = direction === 'outbound' ? 'C2' : 'C3';
  const country = role === 'C2' ? sellerCountry(inv) : buyerCountry(inv);
  const reports: PlannedTddReport[] = [];
  const skipped: SkippedTddReport[] = [];
  const party = role === 'C2' ? 'seller (BT-31, BT-40)' : 'buyer (BT-48, BT-55)';
  if (country === undefined) {
    skipped.push({ role, reason: `the ${party} has no VAT identifier prefix or country code` });
    return { reports, skipped };
  }
  const authority = config.authorities[country];
  if (!authority) skipped.push({ role, country, reason: `no tax authority is configured for ${country}` });
  else if (!authority.roles.includes(role))
    skipped.push({ role, country, reason: `${country} does not require ${role} reports (configuration)` });
  else reports.push({ role, country, authority, scope: documentScope(inv) });
  return { reports, skipped };
}
