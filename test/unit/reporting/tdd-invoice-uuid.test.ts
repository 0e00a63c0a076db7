import { nameBasedUuid } from '../../../src/ids/name-uuid';
import { tddInvoiceUuid } from '../../../src/reporting/tdd';

describe('TDD Invoice UUID (TDT-017)', () => {
  // The four test vectors of the ViDA TDD 1.1.0 specification, chapter "Invoice UUID calculation".
  it.each([
    ['DE811569869', '380', 'INV-2025-0046', '2025-02-10', '62fd54e5-8689-57a6-95a7-600c86734ea0'],
    ['BE0477472701', '380', 'INV-2025-0001', '2025-01-10', '81270c84-bfb1-5a12-8314-8887ee7d3e27'],
    ['DE811569869', '389', 'INV-2025-0046', '2025-02-10', '936d1327-0863-5632-ac82-30001c004e01'],
    ['FR40303265045', '261', 'CN-2025-0003', '2025-02-05', '9a787cd0-ef99-5bd1-ad5d-daf020699cf2'],
  ])('%s %s %s %s → %s', (sellerVatIdentifier, typeCode, number, issueDate, expected) => {
    expect(tddInvoiceUuid({ sellerVatIdentifier, typeCode, number, issueDate })).toBe(expected);
  });

  it('trims each part but keeps inner spaces and case', () => {
    const plain = tddInvoiceUuid({
      sellerVatIdentifier: 'DE811569869',
      typeCode: '380',
      number: 'INV-2025-0046',
      issueDate: '2025-02-10',
    });
    expect(
      tddInvoiceUuid({
        sellerVatIdentifier: '\n  DE811569869\n',
        typeCode: ' 380 ',
        number: '\tINV-2025-0046 ',
        issueDate: '2025-02-10',
      }),
    ).toBe(plain);
    const spaced = tddInvoiceUuid({
      sellerVatIdentifier: 'ATU99887766',
      typeCode: '380',
      number: 'NW-HP-001 - AT-DK',
      issueDate: '2026-02-10',
    });
    expect(spaced).not.toBe(
      tddInvoiceUuid({
        sellerVatIdentifier: 'ATU99887766',
        typeCode: '380',
        number: 'NW-HP-001 -  AT-DK',
        issueDate: '2026-02-10',
      }),
    );
    expect(spaced).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  it('refuses a missing part, naming the business term', () => {
    expect(() =>
      tddInvoiceUuid({ sellerVatIdentifier: ' ', typeCode: '380', number: 'X', issueDate: '2025-02-10' }),
    ).toThrow(/BT-31/);
    expect(() =>
      tddInvoiceUuid({ sellerVatIdentifier: 'DE1', typeCode: '380', number: 'X', issueDate: '10.02.2025' }),
    ).toThrow(/BT-2/);
  });

  it('leaves the JSON-named ids of the gateway unchanged', () => {
    // nameBasedUuid now delegates to uuidV5; its ids must stay what they were.
    expect(nameBasedUuid('6ba7b811-9dad-11d1-80b4-00c04fd430c8', ['a', 'b'])).toBe(
      'fa76a074-c31f-50e5-a8f3-5550ba2ed593',
    );
  });
});
