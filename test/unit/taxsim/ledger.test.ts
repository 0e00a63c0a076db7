import { tddInvoiceUuid } from '../../../src/reporting/tdd';
import { isLoopbackAddress } from '../../../src/taxsim/app';
import { Faults, parseFault } from '../../../src/taxsim/faults';
import { Ledger, LedgerFullError, exchangeKeyOf, type ReportRecord } from '../../../src/taxsim/ledger';
import { readTddFacts, TddUnreadableError, type TddFacts } from '../../../src/taxsim/tdd-facts';
import { bis3Tdd } from '../../support/taxsim';

const DK = '0242:000950-taxsim.tax_dk';
const MAX = 1024 * 1024;

function facts(over: Partial<TddFacts>): TddFacts {
  return {
    version: '1.0.0',
    tddUuid: over.tddUuid ?? `tdd-${Math.random()}`,
    typeCode: 'S',
    role: 'C2',
    scope: 'D',
    authorityId: 'DK',
    reportingParty: '0184:DK12345678',
    receivingParty: DK,
    representative: '0242:000001',
    invoiceUuid: '7b0c1a52-0c3a-5c1e-9a55-3a0f1d3a1b01',
    invoiceNumber: '12345',
    invoiceIssueDate: '2019-01-25',
    invoiceTypeCode: '380',
    sellerVat: 'DK12345678',
    buyerVat: 'DK87654321',
    totalWithVat: '100',
    currency: 'DKK',
    ...over,
  };
}

function record(
  ledger: Ledger,
  f: TddFacts,
  verdict: 'accepted' | 'rejected' = 'accepted',
  xml = '<x/>',
): ReportRecord {
  return ledger.record({
    receivedAt: new Date(),
    channel: 'http',
    receiver: DK,
    facts: f,
    xml,
    verdict,
    reasons: [],
    validation: [],
    exchangeKey: exchangeKeyOf(f),
  });
}

/** Records a report when the lifecycle allows it (as the authority does), and says what the lifecycle said. */
function submit(ledger: Ledger, f: TddFacts): string | undefined {
  const refusal = ledger.lifecycleRefusal(f);
  record(ledger, f, refusal ? 'rejected' : 'accepted');
  return refusal?.ruleId;
}

describe('taxsim: reading a Tax Data Document', () => {
  it('reads the envelope and business terms of a TDD the library derived', () => {
    const xml = bis3Tdd({ role: 'C3', receiver: DK, reportType: 'resubmit' });
    const f = readTddFacts(xml, MAX);
    expect(f).toMatchObject({
      version: '1.0.0',
      role: 'C3',
      typeCode: 'R',
      scope: 'D',
      authorityId: 'DK',
      reportingParty: '0184:DK87654321',
      receivingParty: DK,
      representative: '0242:000001',
      invoiceNumber: '12345',
      invoiceIssueDate: '2019-01-25',
      invoiceTypeCode: '380',
    });
    expect(f.invoiceUuid).toBe(
      tddInvoiceUuid({ sellerVatIdentifier: f.sellerVat, typeCode: '380', number: '12345', issueDate: '2019-01-25' }),
    );
    expect(f.sellerVat).toMatch(/^DK/);
    expect(f.buyerVat).toMatch(/^DK/);
    expect(f.transmissionUuid).toBeUndefined();
  });

  it('reads TDD 1.1.0 by its Invoice Transmission UUID (TDT-018)', () => {
    const t = '1b8d8d2e-6d37-4c5e-8d2a-0a5c1f3c9e77';
    const f = readTddFacts(bis3Tdd({ receiver: DK, version: '1.1.0', transmissionUuid: t }), MAX);
    expect(f.version).toBe('1.1.0');
    expect(f.transmissionUuid).toBe(t);
    expect(exchangeKeyOf(f)).toBe(`tdt-018:C2:${t}`);
  });

  it.each([
    ['not XML', 'hello'],
    ['a DTD (XXE)', '<?xml version="1.0"?><!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]><x>&e;</x>'],
    ['another root', '<Invoice xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2"/>'],
  ])('refuses %s', (_what, xml) => {
    expect(() => readTddFacts(xml, MAX)).toThrow(TddUnreadableError);
  });

  it('refuses a document over the size limit', () => {
    expect(() => readTddFacts(bis3Tdd({ receiver: DK }), 1000)).toThrow(/not readable XML/);
  });
});

describe('taxsim: lifecycle per Invoice UUID and reporter role', () => {
  const ledger = () => new Ledger({ maxReports: 100, maxBytes: MAX });

  it('accepts S, then R and D; refuses a second S and anything after D', () => {
    const l = ledger();
    expect(submit(l, facts({ typeCode: 'S' }))).toBeUndefined();
    expect(submit(l, facts({ typeCode: 'S' }))).toBe('TAXSIM-LC-01');
    expect(submit(l, facts({ typeCode: 'R' }))).toBeUndefined();
    expect(submit(l, facts({ typeCode: 'R' }))).toBeUndefined();
    expect(submit(l, facts({ typeCode: 'D' }))).toBeUndefined();
    for (const typeCode of ['S', 'R', 'D']) expect(submit(l, facts({ typeCode }))).toBe('TAXSIM-LC-03');
  });

  it('refuses R and D before an accepted S; a refused S does not count', () => {
    const l = ledger();
    expect(submit(l, facts({ typeCode: 'R' }))).toBe('TAXSIM-LC-02');
    expect(submit(l, facts({ typeCode: 'D' }))).toBe('TAXSIM-LC-02');
    record(l, facts({ typeCode: 'S' }), 'rejected');
    expect(l.lifecycleRefusal(facts({ typeCode: 'R' }))?.ruleId).toBe('TAXSIM-LC-02');
    expect(submit(l, facts({ typeCode: 'S' }))).toBeUndefined();
    expect(l.lifecycleRefusal(facts({ typeCode: 'R' }))).toBeUndefined();
  });

  it('keeps the roles and the invoices apart', () => {
    const l = ledger();
    expect(submit(l, facts({ role: 'C2', typeCode: 'S' }))).toBeUndefined();
    expect(submit(l, facts({ role: 'C3', typeCode: 'S' }))).toBeUndefined();
    expect(submit(l, facts({ role: 'C2', typeCode: 'D' }))).toBeUndefined();
    expect(submit(l, facts({ role: 'C3', typeCode: 'R' }))).toBeUndefined();
    expect(submit(l, facts({ invoiceUuid: '0c9b6f43-2d71-5f0b-8d1e-0c7b2f9a4e11', typeCode: 'S' }))).toBeUndefined();
    // The Invoice UUID is compared without regard to case.
    expect(submit(l, facts({ invoiceUuid: '7B0C1A52-0C3A-5C1E-9A55-3A0F1D3A1B01', role: 'C3', typeCode: 'S' }))).toBe(
      'TAXSIM-LC-01',
    );
  });

  it('names an unknown type code', () => {
    expect(ledger().lifecycleRefusal(facts({ typeCode: 'X' }))?.ruleId).toBe('TAXSIM-LC-04');
  });

  it('finds an exchange again by its key or its AS4 MessageId, and a repeat is not counted', () => {
    const l = ledger();
    const f = facts({ tddUuid: 'a1a1a1a1-0000-4000-8000-000000000001' });
    const first = l.record({
      receivedAt: new Date(),
      channel: 'as4',
      receiver: DK,
      facts: f,
      xml: '<x/>',
      verdict: 'accepted',
      reasons: [],
      validation: [],
      exchangeKey: exchangeKeyOf(f),
      as4MessageId: 'm-1@x',
    });
    expect(l.findExchange({ exchangeKey: 'tdt-003:a1a1a1a1-0000-4000-8000-000000000001' })?.id).toBe(first.id);
    expect(l.findExchange({ as4MessageId: 'm-1@x' })?.id).toBe(first.id);
    expect(l.findExchange({ exchangeKey: 'tdt-003:other', as4MessageId: 'm-2@x' })).toBeUndefined();
    const repeat = l.record({ ...first, receivedAt: new Date(), duplicateOf: first.id });
    expect(repeat.id).not.toBe(first.id);
    // Still one accepted S in the lifecycle: an R is allowed, a second S is not.
    expect(l.lifecycleRefusal(facts({ typeCode: 'R' }))).toBeUndefined();
    expect(l.lifecycleRefusal(facts({ typeCode: 'S' }))?.ruleId).toBe('TAXSIM-LC-01');
  });

  it('is bounded: reports beyond the limit are refused until a reset', () => {
    const l = new Ledger({ maxReports: 2, maxBytes: MAX });
    record(l, facts({}));
    record(l, facts({ invoiceUuid: 'b' }));
    expect(() => record(l, facts({ invoiceUuid: 'c' }))).toThrow(LedgerFullError);
    l.reset();
    expect(l.size).toBe(0);
    record(l, facts({}));
    const small = new Ledger({ maxReports: 10, maxBytes: 10 });
    expect(() => record(small, facts({}), 'accepted', '<a>0123456789</a>')).toThrow(/bytes/);
  });
});

describe('taxsim: matching the C2 and C3 reports of one invoice', () => {
  const accept = (l: Ledger, xml: string) => record(l, readTddFacts(xml, MAX), 'accepted', xml);

  it('matches the supplier and the buyer reports of the same invoice term by term', () => {
    const l = new Ledger({ maxReports: 10, maxBytes: 10 * MAX });
    const c2 = accept(l, bis3Tdd({ role: 'C2', receiver: DK }));
    expect(l.matchOf(c2)).toMatchObject({ status: 'awaiting C3', c2: c2.id, differences: [] });
    const c3 = accept(l, bis3Tdd({ role: 'C3', receiver: DK }));
    expect(l.matchOf(c2)).toEqual({
      invoiceUuid: c2.facts!.invoiceUuid,
      status: 'matched',
      c2: c2.id,
      c3: c3.id,
      differences: [],
    });
  });

  it('shows where the buyer reported other terms than the supplier', () => {
    const l = new Ledger({ maxReports: 10, maxBytes: 10 * MAX });
    const c2 = accept(l, bis3Tdd({ role: 'C2', receiver: DK }));
    accept(
      l,
      bis3Tdd({
        role: 'C3',
        receiver: DK,
        invoice: (inv) => ({ ...inv, totals: { ...inv.totals, totalWithVat: '9999.00' } }),
      }),
    );
    const m = l.matchOf(c2)!;
    expect(m.status).toBe('differs');
    expect(m.differences).toEqual([
      expect.objectContaining({
        path: 'ReportedTransaction/ReportedDocument/MonetaryTotal/TaxInclusiveAmount',
        term: 'BT-112 Invoice total amount with VAT',
        actual: '9999.00',
      }),
    ]);
  });

  it('a disregarded report leaves the match', () => {
    const l = new Ledger({ maxReports: 10, maxBytes: 10 * MAX });
    const c2 = accept(l, bis3Tdd({ role: 'C2', receiver: DK }));
    accept(l, bis3Tdd({ role: 'C3', receiver: DK }));
    accept(l, bis3Tdd({ role: 'C2', receiver: DK, reportType: 'disregard' }));
    expect(l.matchOf(c2)?.status).toBe('awaiting C2');
  });
});

describe('taxsim: faults', () => {
  it('answers 500 the given number of times, then recovers', () => {
    const f = new Faults();
    const p = parseFault({ mode: 'http-500', count: 2 });
    expect(p.ok).toBe(true);
    if (p.ok) f.set(p.fault);
    expect([f.takeHttp500(), f.takeHttp500(), f.takeHttp500()]).toEqual([true, true, false]);
    expect(f.current).toEqual({ mode: 'none' });
  });

  it('rejects with the reason until switched off, or the given number of times', () => {
    const f = new Faults();
    const c2 = { role: 'C2' };
    f.set({ mode: 'reject', reason: 'closed for audit' });
    expect([f.takeReject(c2), f.takeReject({})]).toEqual(['closed for audit', 'closed for audit']);
    f.set({ mode: 'reject', reason: 'once', count: 1 });
    expect([f.takeReject(c2), f.takeReject(c2)]).toEqual(['once', undefined]);
    f.set({ mode: 'slow', delayMs: 50 });
    expect([f.takeDelay(), f.takeHttp500(), f.takeReject(c2)]).toEqual([50, false, undefined]);
  });

  it('rejects only reports of the given role, which alone count down', () => {
    const f = new Faults();
    const parsed = parseFault({ mode: 'reject', reason: 'suppliers only', count: 1, role: 'C2' });
    expect(parsed.ok).toBe(true);
    if (parsed.ok) f.set(parsed.fault);
    expect([f.takeReject({ role: 'C3' }), f.takeReject({}), f.takeReject({ role: 'C2' })]).toEqual([
      undefined,
      undefined,
      'suppliers only',
    ]);
    expect(f.current).toEqual({ mode: 'none' });
    expect(parseFault({ mode: 'reject', role: 'C4' }).ok).toBe(false);
  });

  it.each([
    ['delayMs', { mode: 'slow', delayMs: 10 * 60_000 }],
    ['count', { mode: 'http-500', count: 100_000 }],
    ['reason', { mode: 'reject', reason: 'x'.repeat(600) }],
    ['mode', { mode: 'explode' }],
    ['(body)', { mode: 'none', extra: 1 }],
  ])('refuses a fault whose %s is out of bounds or unknown', (path, body) => {
    const p = parseFault(body);
    expect(p.ok).toBe(false);
    if (!p.ok) expect(p.problems.join(' ')).toContain(path);
  });
});

describe('taxsim: faults and reset are for loopback peers only', () => {
  it.each([
    ['127.0.0.1', true],
    ['127.8.9.10', true],
    ['::1', true],
    ['::ffff:127.0.0.1', true],
    ['192.0.2.2', false],
    ['::ffff:192.0.2.2', false],
    ['fd00::2', false],
    ['1127.0.0.1', false],
    [undefined, false],
  ])('%s is loopback: %s', (address, expected) => {
    expect(isLoopbackAddress(address)).toBe(expected);
  });
});
