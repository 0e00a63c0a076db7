import { readUbl, type Invoice } from '../../../src/en16931';
import { parseXml } from '../../../src/formats';
import {
  compareTdd,
  deriveTdd,
  documentScope,
  missingTerms,
  parseTddConfig,
  planTddReports,
  renderTdd,
  TddDerivationError,
  vatCountry,
  type TddConfig,
} from '../../../src/reporting/tdd';
import { corpusFile } from '../../support/corpus';

function config(version: '1.0.0' | '1.1.0' = '1.1.0'): TddConfig {
  return parseTddConfig({
    version,
    serviceProviderId: '000000',
    documentTypeId: 'doc',
    processId: 'proc',
    authorities: {
      NO: { id: 'NO', name: 'Skatteetaten', receiver: '0242:000000-taxsim.no', roles: ['C2', 'C3'] },
      SE: { id: 'SE', receiver: '000000-taxsim.se', roles: ['C3'] },
    },
  });
}

function invoice(): Invoice {
  const inv = readUbl(parseXml(corpusFile('en16931/ubl-examples/ubl-tc434-example2.xml').toString('utf8'))).invoice;
  return {
    ...inv,
    seller: { ...inv.seller, electronicAddress: { schemeId: '0192', value: '123456785' } },
    buyer: { ...inv.buyer, electronicAddress: { schemeId: '0007', value: '5560000001' } },
  };
}

const EXCHANGE = {
  reportType: 'resubmit' as const,
  tddUuid: '8f0a6a4e-3c55-4b43-9b0d-4f5b3b3e2f10',
  transmissionUuid: '1b8d8d2e-6d37-4c5e-8d2a-0a5c1f3c9e77',
  issuedAt: new Date('2026-11-28T10:15:30.123Z'),
};

describe('TDD plan', () => {
  it('reads the VAT country from the VAT identifier, Greece as GR', () => {
    expect(vatCountry('EL123456789')).toBe('GR');
    expect(vatCountry(' atu99887766')).toBe('AT');
    expect(vatCountry('123')).toBeUndefined();
  });

  it('plans C2 for what we send and C3 for what we receive, where the country asks for it', () => {
    const inv = invoice();
    const seller = vatCountry(inv.seller.vatIdentifier);
    expect(seller).toBe('NO');
    const out = planTddReports(inv, 'outbound', config());
    expect(out.reports).toEqual([expect.objectContaining({ role: 'C2', country: 'NO', scope: documentScope(inv) })]);
    const inbound = planTddReports(
      { ...inv, buyer: { ...inv.buyer, vatIdentifier: 'SE556000000101' } },
      'inbound',
      config(),
    );
    expect(inbound.reports).toEqual([expect.objectContaining({ role: 'C3', country: 'SE', scope: 'INTL' })]);
    const notConfigured = planTddReports(
      { ...inv, buyer: { ...inv.buyer, vatIdentifier: 'DK12345674' } },
      'inbound',
      config(),
    );
    expect(notConfigured).toEqual({
      reports: [],
      skipped: [{ role: 'C3', country: 'DK', reason: 'no tax authority is configured for DK' }],
    });
    const wrongRole = planTddReports(
      { ...inv, seller: { ...inv.seller, vatIdentifier: 'SE556000000101' } },
      'outbound',
      config(),
    );
    expect(wrongRole.skipped[0]?.reason).toMatch(/does not require C2/);
  });

  it('tells domestic, intra-community and international apart', () => {
    const inv = invoice();
    const withVat = (s: string, b: string): Invoice => ({
      ...inv,
      seller: { ...inv.seller, vatIdentifier: s },
      buyer: { ...inv.buyer, vatIdentifier: b },
    });
    expect(documentScope(withVat('DE1', 'DE2'))).toBe('D');
    expect(documentScope(withVat('DE1', 'FR2'))).toBe('IC');
    expect(documentScope(withVat('DE1', 'NO2'))).toBe('INTL');
  });

  it('refuses an invalid configuration, naming the field', () => {
    expect(() => parseTddConfig({ ...config(), serviceProviderId: 'x' })).toThrow(/serviceProviderId/);
    expect(() => parseTddConfig({ ...config(), authorities: { xx: {} } })).toThrow(/authorities/);
  });
});

describe('TDD derive and render', () => {
  it('asks C3 for the VAT terms of ibr-tdd-90..93 and C2 not', () => {
    const inv = invoice();
    const bare: Invoice = {
      ...inv,
      vatAccountingCurrencyCode: 'SEK',
      totals: { ...inv.totals, totalVatAmount: undefined, totalWithVat: undefined },
      vatBreakdown: inv.vatBreakdown.map((v) => ({ ...v, taxAmount: undefined, categoryCode: undefined })),
    };
    expect(missingTerms(bare, 'C2')).toEqual([]);
    const c3 = missingTerms(bare, 'C3');
    expect(c3).toEqual(
      expect.arrayContaining([
        'BT-110 Invoice total VAT amount',
        'BT-112 Invoice total amount with VAT',
        'BT-117 VAT category tax amount (VAT breakdown 1)',
        'BT-118 VAT category code (VAT breakdown 1)',
        'BT-111 Invoice total VAT amount in accounting currency',
      ]),
    );
    const plan = planTddReports(bare, 'inbound', config());
    expect(() =>
      deriveTdd(
        { ...bare, buyer: { ...bare.buyer, vatIdentifier: 'NO999999999MVA' } },
        plan.reports[0]!,
        EXCHANGE,
        config(),
      ),
    ).toThrow(TddDerivationError);
  });

  it('needs the reporting party as a Peppol participant id', () => {
    const inv = { ...invoice() };
    inv.seller = { ...inv.seller, electronicAddress: undefined };
    const plan = planTddReports(inv, 'outbound', config());
    expect(() => deriveTdd(inv, plan.reports[0]!, EXCHANGE, config())).toThrow(/BT-34 Seller electronic address/);
  });

  it('writes the envelope; TDD 1.1.0 carries the Invoice Transmission UUID (TDT-018), 1.0.0 does not', () => {
    const inv = invoice();
    const plan = planTddReports(inv, 'outbound', config());
    const xml = renderTdd(deriveTdd(inv, plan.reports[0]!, EXCHANGE, config('1.1.0')));
    expect(xml).toContain('<pxs:TaxDataTypeCode>R</pxs:TaxDataTypeCode>');
    expect(xml).toContain('<pxs:ReporterRole>C2</pxs:ReporterRole>');
    expect(xml).toContain('<cbc:EndpointID schemeID="0242">000000-taxsim.no</cbc:EndpointID>');
    expect(xml).toContain('<cbc:ID schemeID="0242">000000</cbc:ID>');
    expect(xml).toContain('<cbc:IssueDate>2026-11-28</cbc:IssueDate>');
    expect(xml).toContain('<cbc:IssueTime>10:15:30.123Z</cbc:IssueTime>');
    expect(xml).toMatch(
      /<pxs:ReportedTransaction>\s*<pxs:TransmissionUUID>1b8d8d2e-6d37-4c5e-8d2a-0a5c1f3c9e77<\/pxs:TransmissionUUID>\s*<pxs:ReportedDocument>/,
    );
    const v100 = renderTdd(deriveTdd(inv, plan.reports[0]!, EXCHANGE, config('1.0.0')));
    expect(v100).not.toContain('TransmissionUUID');
    // The seller's name and addresses are not reported: only country and VAT id.
    expect(v100).not.toContain(inv.seller.name!);
  });
});

describe('TDD compare', () => {
  it('ignores what is fresh per exchange and names the term of every other difference', () => {
    const inv = invoice();
    const plan = planTddReports(inv, 'outbound', config());
    const a = renderTdd(deriveTdd(inv, plan.reports[0]!, EXCHANGE, config()));
    const b = renderTdd(
      deriveTdd(
        { ...inv, number: `${inv.number!}-X`, totals: { ...inv.totals, amountDueForPayment: '1.5' } },
        plan.reports[0]!,
        {
          ...EXCHANGE,
          tddUuid: '00000000-0000-4000-8000-000000000000',
          transmissionUuid: '00000000-0000-4000-8000-000000000001',
          issuedAt: new Date('2027-01-01T00:00:00Z'),
        },
        config(),
      ),
    );
    const terms = compareTdd(a, b).map((d) => d.term);
    expect(terms).toEqual(
      expect.arrayContaining(['BT-1 Invoice number', 'TDT-017 Invoice UUID', 'BT-115 Amount due for payment']),
    );
    expect(terms).toHaveLength(3);
    expect(compareTdd(a.replace(/>(\d+)\.00</g, '>$1<'), a)).toEqual([]);
  });
});
