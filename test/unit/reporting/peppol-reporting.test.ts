import { parseXml } from '../../../src/formats';
import {
  aggregateEusr,
  aggregateTsr,
  previousMonth,
  renderEusr,
  renderTsr,
  reportingMonth,
  validateReport,
  type EndUserStatistics,
  type PeppolReportingItem,
  type TransactionStatistics,
} from '../../../src/reporting/peppol';
import { createValidator } from '../../../src/validation';
import { RULES_DIR, requirePacks, validator } from '../validation/support';

const INVOICE =
  'urn:oasis:names:specification:ubl:schema:xsd:Invoice-2::Invoice##urn:cen.eu:en16931:2017#compliant#urn:fdc:peppol.eu:2017:poacc:billing:3.0::2.1';
const CREDIT_NOTE =
  'urn:oasis:names:specification:ubl:schema:xsd:CreditNote-2::CreditNote##urn:cen.eu:en16931:2017#compliant#urn:fdc:peppol.eu:2017:poacc:billing:3.0::2.1';
const MLS =
  'urn:oasis:names:specification:ubl:schema:xsd:ApplicationResponse-2::ApplicationResponse##urn:peppol:edec:mls:1.0::2.1';
const BILLING = 'urn:fdc:peppol.eu:2017:poacc:billing:01:1.0';
const OUR_SEAT = 'POP000001';

let n = 0;
function item(over: Partial<PeppolReportingItem> & Pick<PeppolReportingItem, 'direction'>): PeppolReportingItem {
  n += 1;
  return {
    messageId: `m-${n}@test`,
    exchangedAt: new Date('2026-10-15T12:00:00Z'),
    otherSeatId: 'PDE000123',
    documentTypeScheme: 'busdox-docid-qns',
    documentTypeValue: INVOICE,
    processScheme: 'cenbii-procid-ubl',
    processValue: BILLING,
    transportProtocol: 'peppol-transport-as4-v2_0',
    countryC1: 'BE',
    endUserId: 'iso6523-actorid-upis::0208:0000000001',
    mls: false,
    networkReport: false,
    ...(over.direction === 'received' ? { countryC4: 'NL' } : {}),
    ...over,
  };
}

/** A busy month: several peers, documents, countries and end users (one written in two cases), MLS both ways. */
function busyMonth(): PeppolReportingItem[] {
  return [
    item({ direction: 'sent', endUserId: 'iso6523-actorid-upis::0208:A1' }),
    item({ direction: 'sent', endUserId: 'iso6523-actorid-upis::0208:a1' }),
    item({ direction: 'sent', endUserId: 'iso6523-actorid-upis::0208:A2', documentTypeValue: CREDIT_NOTE }),
    item({ direction: 'sent', endUserId: 'iso6523-actorid-upis::0106:N1', countryC1: 'NL', otherSeatId: 'PFR000777' }),
    item({ direction: 'received', endUserId: 'iso6523-actorid-upis::0208:A1', countryC1: 'DE', countryC4: 'BE' }),
    item({ direction: 'received', endUserId: 'iso6523-actorid-upis::0106:R1', countryC1: 'DE' }),
    item({
      direction: 'received',
      endUserId: 'iso6523-actorid-upis::0106:R1',
      countryC1: 'ZZ',
      otherSeatId: 'PFR000777',
    }),
    item({
      direction: 'received',
      endUserId: 'iso6523-actorid-upis::0106:R2',
      documentTypeValue: MLS,
      processValue: 'urn:peppol:edec:mls',
      mls: true,
    }),
    item({
      direction: 'sent',
      endUserId: 'iso6523-actorid-upis::0208:A1',
      documentTypeValue: MLS,
      processValue: 'urn:peppol:edec:mls',
      mls: true,
    }),
  ];
}

const OCTOBER = reportingMonth('2026-10');

function sumOf(r: TransactionStatistics, type: string, field: 'incoming' | 'outgoing'): number {
  return r.subtotals.filter((s) => s.type === type).reduce((a, s) => a + s[field], 0);
}

describe('reporting months (UTC)', () => {
  it('covers the calendar month in UTC, last day included', () => {
    expect(OCTOBER.start.toISOString()).toBe('2026-10-01T00:00:00.000Z');
    expect(OCTOBER.end.toISOString()).toBe('2026-11-01T00:00:00.000Z');
    expect([OCTOBER.startDate, OCTOBER.endDate]).toEqual(['2026-10-01', '2026-10-31']);
    expect(reportingMonth('2028-02').endDate).toBe('2028-02-29');
    expect(reportingMonth('2026-12').end.toISOString()).toBe('2027-01-01T00:00:00.000Z');
    expect(() => reportingMonth('2026-13')).toThrow(/YYYY-MM/);
    expect(previousMonth(new Date('2027-01-05T10:00:00Z'))).toBe('2026-12');
    expect(previousMonth(new Date('2026-11-01T00:00:00Z'))).toBe('2026-10');
  });

  it('counts a message by its UTC instant: the last millisecond of the month in, the first of the next out', () => {
    const items = [
      item({ direction: 'sent', exchangedAt: new Date('2026-09-30T23:59:59.999Z') }),
      item({ direction: 'sent', exchangedAt: new Date('2026-10-01T00:00:00.000Z') }),
      // 00:30 on 1 November in Brussels (UTC+1) is still October in UTC.
      item({ direction: 'received', exchangedAt: new Date('2026-10-31T23:30:00.000Z') }),
      item({ direction: 'received', exchangedAt: new Date('2026-11-01T00:00:00.000Z') }),
    ];
    const tsr = aggregateTsr(items, OCTOBER, OUR_SEAT);
    expect(tsr.total).toEqual({ incoming: 1, outgoing: 1 });
    expect(aggregateEusr(items, OCTOBER, OUR_SEAT).fullSet.sendingOrReceiving).toBe(1);
  });
});

describe('TSR aggregation', () => {
  const tsr = aggregateTsr(busyMonth(), OCTOBER, OUR_SEAT);

  it('counts every message, MLS included', () => {
    expect(tsr.total).toEqual({ incoming: 4, outgoing: 5 });
  });

  it('adds every subtotal type up to the totals (PerSP-DT-PR-CC: incoming only, outgoing 0)', () => {
    for (const type of ['PerTP', 'PerSP-DT-PR']) {
      expect(sumOf(tsr, type, 'incoming')).toBe(tsr.total.incoming);
      expect(sumOf(tsr, type, 'outgoing')).toBe(tsr.total.outgoing);
    }
    expect(sumOf(tsr, 'PerSP-DT-PR-CC', 'incoming')).toBe(tsr.total.incoming);
    expect(sumOf(tsr, 'PerSP-DT-PR-CC', 'outgoing')).toBe(0);
  });

  it('keys each group once: one transport, peers × document types × processes, with C1 and C4 countries', () => {
    expect(tsr.subtotals.filter((s) => s.type === 'PerTP')).toEqual([
      {
        type: 'PerTP',
        keys: [{ metaSchemeID: 'TP', schemeID: 'Peppol', value: 'peppol-transport-as4-v2_0' }],
        incoming: 4,
        outgoing: 5,
      },
    ]);
    const spdtpr = tsr.subtotals.filter((s) => s.type === 'PerSP-DT-PR');
    const ids = spdtpr.map((s) => s.keys.map((k) => k.value).join('|'));
    expect(new Set(ids).size).toBe(ids.length);
    const invoicesToDe = spdtpr.find((s) => s.keys[0]?.value === 'PDE000123' && s.keys[1]?.value === INVOICE);
    expect(invoicesToDe).toMatchObject({ incoming: 2, outgoing: 2 });
    const cc = tsr.subtotals.filter((s) => s.type === 'PerSP-DT-PR-CC');
    expect(
      cc.map((s) =>
        s.keys
          .slice(3)
          .map((k) => `${k.schemeID}=${k.value}`)
          .join(' '),
      ),
    ).toEqual(expect.arrayContaining(['SenderCountry=DE ReceiverCountry=BE', 'SenderCountry=ZZ ReceiverCountry=NL']));
  });

  it('renders zero totals and no subtotals for a month without traffic', () => {
    const empty = aggregateTsr([], OCTOBER, OUR_SEAT);
    expect(empty.total).toEqual({ incoming: 0, outgoing: 0 });
    expect(empty.subtotals).toEqual([]);
  });
});

describe('EUSR aggregation', () => {
  const eusr = aggregateEusr(busyMonth(), OCTOBER, OUR_SEAT);

  it('counts distinct end users (case-insensitive ids), MLS left out', () => {
    // Sending: A1 (twice, two cases), A2, N1 — the MLS A1 sent does not add one. Receiving: A1, R1 (twice); R2 only
    // received an MLS and is not counted. A1 both sent and received.
    expect(eusr.fullSet).toEqual({ sending: 3, receiving: 2, sendingOrReceiving: 4 });
    expect(JSON.stringify(eusr.subsets)).not.toContain('mls');
  });

  it('never writes an end user id into the report', () => {
    expect(renderEusr(eusr)).not.toMatch(/0208:|0106:/);
  });

  it('keeps every subset within the full set and counts end users per key', () => {
    for (const s of eusr.subsets) {
      expect(s.sending).toBeLessThanOrEqual(eusr.fullSet.sending);
      expect(s.receiving).toBeLessThanOrEqual(eusr.fullSet.receiving);
      expect(s.sendingOrReceiving).toBeGreaterThan(0);
      expect(s.sendingOrReceiving).toBeLessThanOrEqual(s.sending + s.receiving);
    }
    const perEuc = Object.fromEntries(
      eusr.subsets.filter((s) => s.type === 'PerEUC').map((s) => [s.keys[0]?.value, s]),
    );
    // BE: A1, A2 sending (C1 BE), A1 receiving (C4 BE); NL: N1 sending, R1 receiving.
    expect(perEuc['BE']).toMatchObject({ sending: 2, receiving: 1, sendingOrReceiving: 2 });
    expect(perEuc['NL']).toMatchObject({ sending: 1, receiving: 1, sendingOrReceiving: 2 });
    expect(new Set(eusr.subsets.map((s) => s.type))).toEqual(
      new Set(['PerDT-PR', 'PerDT-PR-EUC', 'PerDT-EUC', 'PerEUC']),
    );
  });

  it('leaves network reports out: their sender is our own service provider id', () => {
    const only = aggregateEusr([item({ direction: 'sent', networkReport: true })], OCTOBER, OUR_SEAT);
    expect(only.fullSet).toEqual({ sending: 0, receiving: 0, sendingOrReceiving: 0 });
    expect(aggregateTsr([item({ direction: 'sent', networkReport: true })], OCTOBER, OUR_SEAT).total.outgoing).toBe(1);
  });
});

describe('rendering', () => {
  it('writes the TSR header, totals and keys in the TSR namespace', () => {
    const doc = parseXml(renderTsr(aggregateTsr(busyMonth(), OCTOBER, OUR_SEAT)));
    const root = doc.documentElement!;
    expect(root.namespaceURI).toBe('urn:fdc:peppol:transaction-statistics-report:1.0');
    const text = (name: string) => root.getElementsByTagName(name).item(0)?.textContent;
    expect(text('StartDate')).toBe('2026-10-01');
    expect(text('EndDate')).toBe('2026-10-31');
    expect(root.getElementsByTagName('ReporterID').item(0)?.getAttribute('schemeID')).toBe('CertSubjectCN');
    expect(text('ReporterID')).toBe(OUR_SEAT);
    expect(root.getElementsByTagName('Subtotal').length).toBeGreaterThan(2);
  });

  it('escapes what it writes: a hostile identifier stays text', () => {
    const xml = renderTsr(
      aggregateTsr([item({ direction: 'sent', processValue: 'a</Key><Evil/>&' })], OCTOBER, OUR_SEAT),
    );
    const keys = parseXml(xml).documentElement!.getElementsByTagName('Key');
    const values = Array.from({ length: keys.length }, (_, k) => keys.item(k)?.textContent);
    expect(values).toContain('a</Key><Evil/>&');
    expect(parseXml(xml).documentElement!.getElementsByTagName('Evil').length).toBe(0);
  });
});

describe('validation with the official TSR 1.0 and EUSR 1.1 artefacts', () => {
  beforeAll(() => requirePacks(['peppol-tsr-xsd', 'peppol-tsr', 'peppol-eusr-xsd', 'peppol-eusr']));

  const errors = (r: Awaited<ReturnType<typeof validateReport>>) =>
    r.assertions.filter((a) => a.flag === 'error').map((a) => `${a.ruleId}: ${a.text}`);

  it.each([
    ['a month without traffic', [] as PeppolReportingItem[]],
    ['a busy month', busyMonth()],
  ])('accepts the TSR and the EUSR of %s', async (_what, items) => {
    const tsr = await validateReport(validator(), 'tsr', renderTsr(aggregateTsr(items, OCTOBER, OUR_SEAT)));
    expect(errors(tsr)).toEqual([]);
    expect(tsr.ruleSets.map((r) => r.id)).toEqual(['peppol-tsr-xsd', 'peppol-tsr']);
    expect(tsr.isValid).toBe(true);
    const eusr = await validateReport(validator(), 'eusr', renderEusr(aggregateEusr(items, OCTOBER, OUR_SEAT)));
    expect(errors(eusr)).toEqual([]);
    expect(eusr.ruleSets.map((r) => r.id)).toEqual(['peppol-eusr-xsd', 'peppol-eusr']);
    expect(eusr.isValid).toBe(true);
  });

  it("evaluates the reports' xsl:key rules (one subtotal or subset per key) compiled, as SaxonJS does", async () => {
    const saxon = createValidator({ rulesDir: RULES_DIR, rulesEngine: 'saxon-js' });
    const tsr = aggregateTsr(busyMonth(), OCTOBER, OUR_SEAT);
    const eusr = aggregateEusr(busyMonth(), OCTOBER, OUR_SEAT);
    const cases: Array<['tsr' | 'eusr', string]> = [
      ['tsr', renderTsr(tsr)],
      ['tsr', renderTsr({ ...tsr, subtotals: [...tsr.subtotals, ...tsr.subtotals] })],
      ['eusr', renderEusr(eusr)],
      ['eusr', renderEusr({ ...eusr, subsets: [...eusr.subsets, ...eusr.subsets] })],
    ];
    const keyed: string[] = [];

    for (const [kind, xml] of cases) {
      const compiled = await validateReport(validator(), kind, xml);
      expect(compiled.ruleSets.filter((r) => r.engine !== undefined).map((r) => r.engine)).toEqual(['compiled']);
      const reference = await validateReport(saxon, kind, xml);
      const strip = (r: typeof compiled) =>
        r.assertions.map(({ ruleId, flag, location, text }) => ({ ruleId, flag, location, text }));
      expect(strip(compiled)).toEqual(strip(reference));
      keyed.push(...errors(compiled));
    }
    // The duplicated reports break the key rules: each key now finds two subtotals / subsets.
    expect(keyed.length).toBeGreaterThan(0);
  });

  it('refuses a TSR whose subtotals do not add up to the total', async () => {
    const good = aggregateTsr(busyMonth(), OCTOBER, OUR_SEAT);
    const broken: TransactionStatistics = {
      ...good,
      subtotals: good.subtotals.map((s, k) => (k === 1 ? { ...s, outgoing: s.outgoing + 1 } : s)),
    };
    expect(broken.subtotals[1]?.type).toBe('PerSP-DT-PR');
    const r = await validateReport(validator(), 'tsr', renderTsr(broken));
    expect(r.isValid).toBe(false);
    expect(errors(r).join('\n')).toMatch(/SCH-TSR-09/);
  });

  it('refuses a TSR with outgoing messages in PerSP-DT-PR-CC, and a Seat ID that is none', async () => {
    const good = aggregateTsr(busyMonth(), OCTOBER, 'not-a-seat');
    const r = await validateReport(validator(), 'tsr', renderTsr(good));
    expect(errors(r).join('\n')).toMatch(/SCH-TSR-18/);
    const cc: TransactionStatistics = {
      ...aggregateTsr(busyMonth(), OCTOBER, OUR_SEAT),
    };
    cc.subtotals = cc.subtotals.map((s) => (s.type === 'PerSP-DT-PR-CC' ? { ...s, outgoing: 1 } : s));
    expect(errors(await validateReport(validator(), 'tsr', renderTsr(cc))).join('\n')).toMatch(/SCH-TSR-43/);
  });

  it('refuses an EUSR whose subset counts more end users than the full set', async () => {
    const good = aggregateEusr(busyMonth(), OCTOBER, OUR_SEAT);
    const broken: EndUserStatistics = { ...good, fullSet: { ...good.fullSet, sending: 1 } };
    const r = await validateReport(validator(), 'eusr', renderEusr(broken));
    expect(r.isValid).toBe(false);
    expect(errors(r).join('\n')).toMatch(/SCH-EUSR-03/);
  });

  it('refuses a report the schema does not allow (a negative count)', async () => {
    const xml = renderTsr(aggregateTsr([], OCTOBER, OUR_SEAT)).replace(
      '<Incoming>0</Incoming>',
      '<Incoming>-1</Incoming>',
    );
    const r = await validateReport(validator(), 'tsr', xml);
    expect(r.isValid).toBe(false);
    expect(r.assertions.some((a) => a.artifact === 'schema')).toBe(true);
  });
});
