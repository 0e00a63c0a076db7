import { emptyInvoice, type Invoice } from '../../../src/en16931';
import { EN16931 } from '../../../src/formats/format-ids';

/**
 * Our own test invoice, filled so that every supported target CIUS accepts it: a seller and buyer in the Netherlands
 * with KVK numbers, seller contact, buyer reference, electronic addresses, SEPA credit transfer. It uses nearly every
 * BG and BT (two VAT rates, allowances and charges at document and line level, price discount with gross price and
 * base quantity, BT-111 in a second currency, an embedded attachment and an external one). Amounts are consistent with
 * the EN 16931 calculation rules (worked out in the comments).
 */
export function fullInvoice(): Invoice {
  const inv = emptyInvoice();
  Object.assign(inv, {
    number: 'INV-2026-0042',
    issueDate: '2026-11-02',
    typeCode: '380',
    currencyCode: 'EUR',
    vatAccountingCurrencyCode: 'USD',
    paymentDueDate: '2026-12-02',
    buyerReference: 'BUYER-REF-7',
    projectReference: 'PRJ-9',
    contractReference: 'CONTRACT-3',
    purchaseOrderReference: 'PO-4711',
    salesOrderReference: 'SO-88',
    receivingAdviceReference: 'RA-1',
    despatchAdviceReference: 'DA-2',
    tenderOrLotReference: 'LOT-5',
    invoicedObjectIdentifier: { value: 'OBJ-77', schemeId: 'ABT' },
    buyerAccountingReference: 'ACC-1',
    paymentTerms: 'Net 30 days',
  } satisfies Partial<Invoice>);
  inv.notes = [{ subjectCode: 'AAI', note: 'Thank you for your order' }];
  inv.processControl = {
    specificationIdentifier: EN16931,
    businessProcessType: 'urn:fdc:peppol.eu:2017:poacc:billing:01:1.0',
  };
  inv.precedingInvoices = [{ reference: 'INV-2026-0001', issueDate: '2026-10-01' }];
  inv.seller = {
    name: 'Voorbeeld Levering B.V.',
    tradingName: 'Voorbeeld',
    identifiers: [{ value: '5790000436101', schemeId: '0088' }],
    legalRegistrationIdentifier: { value: '12345678', schemeId: '0106' },
    vatIdentifier: 'NL123456789B01',
    electronicAddress: { value: '12345678', schemeId: '0106' },
    postalAddress: { line1: 'Hoofdstraat 1', line2: 'Unit 4', city: 'Utrecht', postCode: '3511 AA', countryCode: 'NL' },
    contact: { point: 'Sales desk', telephone: '+31 30 123 4567', email: 'sales@example.nl' },
  };
  inv.buyer = {
    name: 'Koper Diensten B.V.',
    identifier: { value: 'CUST-99' },
    legalRegistrationIdentifier: { value: '87654321', schemeId: '0106' },
    vatIdentifier: 'NL987654321B01',
    electronicAddress: { value: '87654321', schemeId: '0106' },
    postalAddress: { line1: 'Kerkstraat 10', city: 'Amsterdam', postCode: '1017 GA', countryCode: 'NL' },
    contact: { point: 'Accounts payable', email: 'ap@example.nl' },
  };
  inv.payee = {
    name: 'Factoring B.V.',
    identifier: { value: 'PAYEE-1' },
    legalRegistrationIdentifier: { value: '11223344', schemeId: '0106' },
  };
  inv.taxRepresentative = {
    name: 'Fiscaal Vertegenwoordiger B.V.',
    vatIdentifier: 'NL111222333B01',
    postalAddress: { line1: 'Stationsplein 2', city: 'Den Haag', postCode: '2515 BX', countryCode: 'NL' },
  };
  inv.delivery = {
    partyName: 'Koper Magazijn',
    locationIdentifier: { value: '5790000436057', schemeId: '0088' },
    actualDeliveryDate: '2026-10-30',
    address: { line1: 'Havenweg 5', city: 'Rotterdam', postCode: '3011 AA', countryCode: 'NL' },
  };
  inv.invoicingPeriod = { startDate: '2026-10-01', endDate: '2026-10-31' };
  inv.paymentInstructions = {
    meansTypeCode: '58',
    remittanceInformation: 'INV-2026-0042',
    creditTransfers: [{ accountIdentifier: 'NL91ABNA0417164300' }],
  };
  // Document level: 10 % of 100.00 off, 5.00 freight, both at 21 %.
  inv.allowanceCharges = [
    {
      charge: false,
      amount: '10.00',
      baseAmount: '100.00',
      percentage: '10',
      vatCategoryCode: 'S',
      vatRate: '21',
      reason: 'Loyalty discount',
      reasonCode: '95',
    },
    { charge: true, amount: '5.00', vatCategoryCode: 'S', vatRate: '21', reason: 'Freight', reasonCode: 'FC' },
  ];
  inv.lines = [
    {
      // 10 × 10.00 (12.00 gross − 2.00 discount) − 5.00 + 3.00 = 98.00
      identifier: '1',
      note: 'First line',
      objectIdentifier: { value: 'SERIAL-1', schemeId: 'ABT' },
      quantity: '10',
      quantityUnitCode: 'C62',
      netAmount: '98.00',
      purchaseOrderLineReference: '1',
      buyerAccountingReference: 'ACC-L1',
      period: { startDate: '2026-10-01', endDate: '2026-10-15' },
      allowanceCharges: [
        { charge: false, amount: '5.00', baseAmount: '100.00', percentage: '5', reason: 'Volume', reasonCode: '95' },
        { charge: true, amount: '3.00', reason: 'Packing', reasonCode: 'ABL' },
      ],
      price: {
        netPrice: '10.00',
        discount: '2.00',
        grossPrice: '12.00',
        baseQuantity: '1',
        baseQuantityUnitCode: 'C62',
      },
      vat: { categoryCode: 'S', rate: '21' },
      item: {
        name: 'Widget',
        description: 'Blue widget, boxed',
        sellersIdentifier: 'W-1',
        buyersIdentifier: 'B-W-1',
        standardIdentifier: { value: '05012345678900', schemeId: '0160' },
        classificationIdentifiers: [{ value: '43211503', schemeId: 'STI', schemeVersion: '19.05.01' }],
        countryOfOrigin: 'NL',
        attributes: [{ name: 'Colour', value: 'Blue' }],
      },
    },
    {
      // 2 × 50.00 = 100.00
      identifier: '2',
      quantity: '2',
      quantityUnitCode: 'HUR',
      netAmount: '100.00',
      allowanceCharges: [],
      price: { netPrice: '50.00', baseQuantity: '1', baseQuantityUnitCode: 'HUR' },
      vat: { categoryCode: 'S', rate: '9' },
      item: { name: 'Installation', classificationIdentifiers: [], attributes: [] },
    },
  ];
  // 21 %: 98.00 − 10.00 + 5.00 = 93.00 → 19.53; 9 %: 100.00 → 9.00
  inv.vatBreakdown = [
    { taxableAmount: '93.00', taxAmount: '19.53', categoryCode: 'S', rate: '21' },
    { taxableAmount: '100.00', taxAmount: '9.00', categoryCode: 'S', rate: '9' },
  ];
  inv.totals = {
    sumOfLineNetAmounts: '198.00',
    sumOfAllowances: '10.00',
    sumOfCharges: '5.00',
    totalWithoutVat: '193.00',
    totalVatAmount: '28.53',
    totalVatAmountInAccountingCurrency: '31.09',
    totalWithVat: '221.53',
    paidAmount: '21.53',
    amountDueForPayment: '200.00',
  };
  inv.supportingDocuments = [
    {
      reference: 'TIMESHEET-10',
      description: 'Timesheet October',
      attachment: {
        base64: Buffer.from('date;hours\n2026-10-03;2\n').toString('base64'),
        mimeCode: 'text/csv',
        filename: 'timesheet.csv',
      },
    },
    { reference: 'SPEC-1', externalLocation: 'https://example.com/spec.pdf' },
  ];
  return inv;
}

/** The same business as a credit note (BT-3 381) correcting the invoice. */
export function fullCreditNote(): Invoice {
  const inv = fullInvoice();
  inv.number = 'CN-2026-0007';
  inv.typeCode = '381';
  inv.precedingInvoices = [{ reference: 'INV-2026-0042', issueDate: '2026-11-02' }];
  inv.totals = { ...inv.totals, paidAmount: '0.00', amountDueForPayment: '221.53' };
  return inv;
}
