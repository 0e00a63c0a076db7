import {
  PEPPOL_TRANSPORT_AS4_V2,
  UNKNOWN_COUNTRY,
  type EndUserCounts,
  type EndUserStatistics,
  type EusrSubset,
  type PeppolReportingItem,
  type ReportingMonth,
  type SubtotalKey,
  type TransactionStatistics,
  type TsrSubtotal,
} from './types';

/** The items exchanged within the month (UTC, start inclusive, end exclusive). */
export function itemsOfMonth(items: readonly PeppolReportingItem[], period: ReportingMonth): PeppolReportingItem[] {
  const from = period.start.getTime();
  const to = period.end.getTime();
  return items.filter((i) => i.exchangedAt.getTime() >= from && i.exchangedAt.getTime() < to);
}

const spKey = (i: PeppolReportingItem): SubtotalKey => ({
  metaSchemeID: 'SP',
  schemeID: 'CertSubjectCN',
  value: i.otherSeatId,
});
const dtKey = (i: PeppolReportingItem): SubtotalKey => ({
  metaSchemeID: 'DT',
  schemeID: i.documentTypeScheme,
  value: i.documentTypeValue,
});
const prKey = (i: PeppolReportingItem): SubtotalKey => ({
  metaSchemeID: 'PR',
  schemeID: i.processScheme,
  value: i.processValue,
});
const ccKey = (schemeID: string, value: string): SubtotalKey => ({ metaSchemeID: 'CC', schemeID, value });

/** Groups by the keys a function gives (compared by scheme and value), in a stable order: by the keys' text. */
function groupBy(
  items: readonly PeppolReportingItem[],
  keysOf: (i: PeppolReportingItem) => SubtotalKey[],
): Array<{ keys: SubtotalKey[]; items: PeppolReportingItem[] }> {
  const groups = new Map<string, { keys: SubtotalKey[]; items: PeppolReportingItem[] }>();
  for (const item of items) {
    const keys = keysOf(item);
    const id = JSON.stringify(keys.map((k) => [k.metaSchemeID, k.schemeID, k.value]));
    const group = groups.get(id);
    if (group) group.items.push(item);
    else groups.set(id, { keys, items: [item] });
  }
  return [...groups.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, g]) => g);
}

function inOut(items: readonly PeppolReportingItem[]): { incoming: number; outgoing: number } {
  let incoming = 0;
  for (const i of items) if (i.direction === 'received') incoming++;
  return { incoming, outgoing: items.length - incoming };
}

/**
 * The Transaction Statistics Report 1.0 of a month: every message exchanged in it (MLS and our own network reports
 * included), totals and the three subtotal types. `PerSP-DT-PR-CC` counts received messages only (their C4 country is
 * ours to know; the specification requires `Outgoing` 0 there).
 */
export function aggregateTsr(
  all: readonly PeppolReportingItem[],
  period: ReportingMonth,
  reporterSeatId: string,
): TransactionStatistics {
  const items = itemsOfMonth(all, period);
  const subtotals: TsrSubtotal[] = [];
  for (const g of groupBy(items, (i) => [
    { metaSchemeID: 'TP', schemeID: 'Peppol', value: i.transportProtocol || PEPPOL_TRANSPORT_AS4_V2 },
  ]))
    subtotals.push({ type: 'PerTP', keys: g.keys, ...inOut(g.items) });
  for (const g of groupBy(items, (i) => [spKey(i), dtKey(i), prKey(i)]))
    subtotals.push({ type: 'PerSP-DT-PR', keys: g.keys, ...inOut(g.items) });
  const received = items.filter((i) => i.direction === 'received');
  for (const g of groupBy(received, (i) => [
    spKey(i),
    dtKey(i),
    prKey(i),
    ccKey('SenderCountry', i.countryC1 || UNKNOWN_COUNTRY),
    ccKey('ReceiverCountry', i.countryC4 || UNKNOWN_COUNTRY),
  ]))
    subtotals.push({ type: 'PerSP-DT-PR-CC', keys: g.keys, incoming: g.items.length, outgoing: 0 });
  return { period, reporterSeatId, total: inOut(items), subtotals };
}

/** Participant identifiers are case-insensitive: one end user however its id was written. */
const endUserKey = (i: PeppolReportingItem): string => i.endUserId.trim().toLowerCase();

/** The end user's country: the sender's (C1) for a sent message, the receiver's (C4) for a received one. */
const endUserCountry = (i: PeppolReportingItem): string =>
  (i.direction === 'sent' ? i.countryC1 : i.countryC4) || UNKNOWN_COUNTRY;

function endUsers(items: readonly PeppolReportingItem[]): EndUserCounts {
  const sending = new Set<string>();
  const receiving = new Set<string>();
  for (const i of items) (i.direction === 'sent' ? sending : receiving).add(endUserKey(i));
  return {
    sending: sending.size,
    receiving: receiving.size,
    sendingOrReceiving: new Set([...sending, ...receiving]).size,
  };
}

/** Whether a message counts for the EUSR: MLS and our own network reports have no end user. */
export function countsForEusr(i: PeppolReportingItem): boolean {
  return !i.mls && !i.networkReport;
}

/**
 * The End User Statistics Report 1.1 of a month: distinct end users that sent or received business documents (MLS
 * and network reports left out), the full set and the four subset types.
 */
export function aggregateEusr(
  all: readonly PeppolReportingItem[],
  period: ReportingMonth,
  reporterSeatId: string,
): EndUserStatistics {
  const items = itemsOfMonth(all, period).filter(countsForEusr);
  const subsets: EusrSubset[] = [];
  const add = (type: EusrSubset['type'], keysOf: (i: PeppolReportingItem) => SubtotalKey[]) => {
    for (const g of groupBy(items, keysOf)) subsets.push({ type, keys: g.keys, ...endUsers(g.items) });
  };
  const euc = (i: PeppolReportingItem) => ccKey('EndUserCountry', endUserCountry(i));
  add('PerDT-PR', (i) => [dtKey(i), prKey(i)]);
  add('PerDT-PR-EUC', (i) => [dtKey(i), prKey(i), euc(i)]);
  add('PerDT-EUC', (i) => [dtKey(i), euc(i)]);
  add('PerEUC', (i) => [euc(i)]);
  return { period, reporterSeatId, fullSet: endUsers(items), subsets };
}
