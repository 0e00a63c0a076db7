import { compare as compareDecimal, isDecimal } from './decimal';
import type { Requirement } from './codec-types';
import type { Invoice } from './model';

/**
 * What the EN 16931 flavours the gateway writes require of a document: the norm's mandatory terms, and what each CIUS
 * requires beyond the norm. A requirement the document does not meet refuses the conversion (422) with its rule and
 * term; nothing is invented to satisfy it. The format catalogue (src/formats/catalogue.ts) gives each target its set.
 */

export const PEPPOL_PROCESS = 'urn:fdc:peppol.eu:2017:poacc:billing:01:1.0';
export const PEPPOL_PROCESS_PATTERN = /^urn:fdc:peppol\.eu:2017:poacc:billing:[0-9]{2}:1\.0$/;

const present = (v: string | undefined): boolean => v !== undefined && v.trim() !== '';

const VAT_REQUIRING_CATEGORIES = new Set(['S', 'Z', 'E', 'AE', 'K', 'G', 'L', 'M']);

/**
 * The norm's own mandatory terms (EN 16931-1 BR-01..BR-16, BR-21..BR-26, BR-CO-04): without them no target syntax can
 * be written validly, whatever the CIUS.
 */
export const EN16931_CORE: Requirement[] = [
  {
    rule: 'BR-01',
    terms: ['BT-24'],
    message: 'Specification identifier (BT-24) must be provided',
    holds: (i) => present(i.processControl.specificationIdentifier),
  },
  {
    rule: 'BR-02',
    terms: ['BT-1'],
    message: 'Invoice number (BT-1) must be provided',
    holds: (i) => present(i.number),
  },
  {
    rule: 'BR-03',
    terms: ['BT-2'],
    message: 'Invoice issue date (BT-2) must be provided',
    holds: (i) => present(i.issueDate),
  },
  {
    rule: 'BR-04',
    terms: ['BT-3'],
    message: 'Invoice type code (BT-3) must be provided',
    holds: (i) => present(i.typeCode),
  },
  {
    rule: 'BR-05',
    terms: ['BT-5'],
    message: 'Invoice currency code (BT-5) must be provided',
    holds: (i) => present(i.currencyCode),
  },
  {
    rule: 'BR-06',
    terms: ['BT-27'],
    message: 'Seller name (BT-27) must be provided',
    holds: (i) => present(i.seller.name),
  },
  {
    rule: 'BR-07',
    terms: ['BT-44'],
    message: 'Buyer name (BT-44) must be provided',
    holds: (i) => present(i.buyer.name),
  },
  {
    rule: 'BR-09',
    terms: ['BT-40'],
    message: 'Seller country code (BT-40) must be provided',
    holds: (i) => present(i.seller.postalAddress?.countryCode),
  },
  {
    rule: 'BR-11',
    terms: ['BT-55'],
    message: 'Buyer country code (BT-55) must be provided',
    holds: (i) => present(i.buyer.postalAddress?.countryCode),
  },
  {
    rule: 'BR-12',
    terms: ['BT-106'],
    message: 'Sum of invoice line net amounts (BT-106) must be provided',
    holds: (i) => present(i.totals.sumOfLineNetAmounts),
  },
  {
    rule: 'BR-13',
    terms: ['BT-109'],
    message: 'Invoice total amount without VAT (BT-109) must be provided',
    holds: (i) => present(i.totals.totalWithoutVat),
  },
  {
    rule: 'BR-14',
    terms: ['BT-112'],
    message: 'Invoice total amount with VAT (BT-112) must be provided',
    holds: (i) => present(i.totals.totalWithVat),
  },
  {
    rule: 'BR-15',
    terms: ['BT-115'],
    message: 'Amount due for payment (BT-115) must be provided',
    holds: (i) => present(i.totals.amountDueForPayment),
  },
  {
    rule: 'BR-16',
    terms: ['BG-25'],
    message: 'At least one invoice line (BG-25) must be provided',
    holds: (i) => i.lines.length > 0,
  },
  {
    rule: 'BR-21',
    terms: ['BT-126'],
    message: 'Every invoice line needs an identifier (BT-126)',
    holds: (i) => i.lines.every((l) => present(l.identifier)),
  },
  {
    rule: 'BR-22',
    terms: ['BT-129'],
    message: 'Every invoice line needs an invoiced quantity (BT-129)',
    holds: (i) => i.lines.every((l) => present(l.quantity)),
  },
  {
    rule: 'BR-23',
    terms: ['BT-130'],
    message: 'Every invoice line needs a quantity unit of measure (BT-130)',
    holds: (i) => i.lines.every((l) => present(l.quantityUnitCode)),
  },
  {
    rule: 'BR-24',
    terms: ['BT-131'],
    message: 'Every invoice line needs a net amount (BT-131)',
    holds: (i) => i.lines.every((l) => present(l.netAmount)),
  },
  {
    rule: 'BR-25',
    terms: ['BT-153'],
    message: 'Every invoice line needs an item name (BT-153)',
    holds: (i) => i.lines.every((l) => present(l.item.name)),
  },
  {
    rule: 'BR-26',
    terms: ['BT-146'],
    message: 'Every invoice line needs an item net price (BT-146)',
    holds: (i) => i.lines.every((l) => present(l.price.netPrice)),
  },
  {
    rule: 'BR-CO-04',
    terms: ['BT-151'],
    message: 'Every invoice line needs a VAT category code (BT-151)',
    holds: (i) => i.lines.every((l) => present(l.vat.categoryCode)),
  },
  {
    // Matters for sources with their own tax codes: an Italian "non soggetta" (Natura N1, N2.x, N7) line is category O,
    // but the Italian seller always has a VAT identifier.
    rule: 'BR-O-02',
    terms: ['BT-151', 'BT-31', 'BT-63', 'BT-48'],
    message:
      'With a line in VAT category O (not subject to VAT) the seller VAT identifier (BT-31), tax representative VAT ' +
      'identifier (BT-63) and buyer VAT identifier (BT-48) must not be given',
    holds: (i) =>
      !i.lines.some((l) => l.vat.categoryCode === 'O') ||
      (!present(i.seller.vatIdentifier) &&
        !present(i.taxRepresentative?.vatIdentifier) &&
        !present(i.buyer.vatIdentifier)),
  },
];

export const PEPPOL_RULES: Requirement[] = [
  {
    rule: 'PEPPOL-EN16931-R002',
    terms: ['BG-1'],
    message: 'At most one invoice note (BG-1) is allowed, unless seller and buyer are both German',
    holds: (i) =>
      i.notes.length <= 1 ||
      (i.seller.postalAddress?.countryCode === 'DE' && i.buyer.postalAddress?.countryCode === 'DE'),
  },
  {
    rule: 'PEPPOL-EN16931-R003',
    terms: ['BT-10', 'BT-13'],
    message: 'A buyer reference (BT-10) or purchase order reference (BT-13) must be provided',
    holds: (i) => present(i.buyerReference) || present(i.purchaseOrderReference),
  },
  {
    rule: 'PEPPOL-EN16931-R020',
    terms: ['BT-34'],
    message: 'Seller electronic address (BT-34) must be provided',
    holds: (i) => present(i.seller.electronicAddress?.value),
  },
  {
    rule: 'PEPPOL-EN16931-R010',
    terms: ['BT-49'],
    message: 'Buyer electronic address (BT-49) must be provided',
    holds: (i) => present(i.buyer.electronicAddress?.value),
  },
];

const amountDue = (i: Invoice): boolean => {
  const due = i.totals.amountDueForPayment;
  return due !== undefined && isDecimal(due) && compareDecimal(due, '0') > 0;
};
const isNl = (code: string | undefined): boolean => code === 'NL';
const sellerNl = (i: Invoice): boolean => isNl(i.seller.postalAddress?.countryCode);
const kvkOrOin = (scheme: string | undefined): boolean => scheme === '0106' || scheme === '0190';
const fullAddress = (a: Invoice['seller']['postalAddress']): boolean =>
  present(a?.line1) && present(a?.city) && present(a?.postCode);

export const NLCIUS_RULES: Requirement[] = [
  {
    rule: 'BR-NL-1',
    terms: ['BT-30', 'BT-30-1'],
    message:
      'A seller in the Netherlands must give a KVK (scheme 0106) or OIN (scheme 0190) legal registration identifier ' +
      '(BT-30)',
    holds: (i) =>
      !sellerNl(i) ||
      (kvkOrOin(i.seller.legalRegistrationIdentifier?.schemeId) &&
        present(i.seller.legalRegistrationIdentifier?.value)),
  },
  {
    rule: 'BR-NL-2',
    terms: ['BT-10', 'BT-13'],
    message: 'A seller in the Netherlands must give a buyer reference (BT-10) or an order reference (BT-13)',
    holds: (i) => !sellerNl(i) || present(i.buyerReference) || present(i.purchaseOrderReference),
  },
  {
    rule: 'BR-NL-3',
    terms: ['BT-35', 'BT-37', 'BT-38'],
    message: "A seller in the Netherlands must give the seller's street (BT-35), city (BT-37) and post code (BT-38)",
    holds: (i) => !sellerNl(i) || fullAddress(i.seller.postalAddress),
  },
  {
    rule: 'BR-NL-4',
    terms: ['BT-50', 'BT-52', 'BT-53'],
    message:
      "For a seller and buyer in the Netherlands the buyer's street (BT-50), city (BT-52) and post code (BT-53) are " +
      'required',
    holds: (i) => !sellerNl(i) || !isNl(i.buyer.postalAddress?.countryCode) || fullAddress(i.buyer.postalAddress),
  },
  {
    rule: 'BR-NL-5',
    terms: ['BT-64', 'BT-66', 'BT-67'],
    message:
      "For a seller in the Netherlands with a tax representative in the Netherlands the representative's street " +
      '(BT-64), city (BT-66) and post code (BT-67) are required',
    holds: (i) =>
      !sellerNl(i) ||
      !isNl(i.taxRepresentative?.postalAddress?.countryCode) ||
      fullAddress(i.taxRepresentative?.postalAddress),
  },
  {
    rule: 'BR-NL-10',
    terms: ['BT-47', 'BT-47-1'],
    message:
      'For a seller and buyer in the Netherlands the buyer legal registration identifier (BT-47) must be a KVK ' +
      '(0106) or OIN (0190) number; where given it must not be empty',
    // SI-UBL 2.0: (buyer not in NL or scheme 0106 / 0190) and (no BT-47 or a non-empty one), for a Dutch seller.
    holds: (i) =>
      !sellerNl(i) ||
      ((!isNl(i.buyer.postalAddress?.countryCode) || kvkOrOin(i.buyer.legalRegistrationIdentifier?.schemeId)) &&
        (i.buyer.legalRegistrationIdentifier === undefined || present(i.buyer.legalRegistrationIdentifier.value))),
  },
  {
    rule: 'BR-NL-11',
    terms: ['BG-16'],
    message: 'A seller in the Netherlands must give payment instructions (BG-16) when an amount is due',
    // Invoices only: SI-UBL 2.0 checks the UBL Invoice root (381 is a CreditNote, BR-NL-8), NLCIUS-CII exempts 381.
    holds: (i) =>
      !sellerNl(i) || i.typeCode === '381' || i.paymentInstructions?.meansTypeCode !== undefined || !amountDue(i),
  },
  {
    rule: 'BR-NL-12',
    terms: ['BT-81'],
    message: 'For a seller in the Netherlands the payment means type code (BT-81) must be 30, 48, 49, 57, 58 or 59',
    holds: (i) =>
      !sellerNl(i) ||
      i.paymentInstructions?.meansTypeCode === undefined ||
      ['30', '48', '49', '57', '58', '59'].includes(i.paymentInstructions.meansTypeCode),
  },
  {
    rule: 'BR-NL-13',
    terms: ['BT-13', 'BT-132'],
    message: 'An order line reference (BT-132) needs an order reference on document level (BT-13)',
    holds: (i) => !i.lines.some((l) => present(l.purchaseOrderLineReference)) || present(i.purchaseOrderReference),
  },
  {
    rule: 'BR-NL-7',
    terms: ['BT-3'],
    message: 'The invoice type code (BT-3) must be 380, 381, 384 or 389',
    holds: (i) => ['380', '381', '384', '389'].includes(i.typeCode ?? ''),
  },
  {
    rule: 'BR-NL-9',
    terms: ['BG-3', 'BT-25'],
    message:
      'A corrective invoice (BT-3 = 384) from a seller in the Netherlands must reference the corrected invoice (BT-25)',
    holds: (i) => !sellerNl(i) || i.typeCode !== '384' || i.precedingInvoices.length > 0,
  },
];

/**
 * The NLCIUS-CII artefact's BR-NL-10 is stricter than SI-UBL's: for a seller in the Netherlands it requires a buyer
 * legal registration identifier (BT-47) whatever the buyer's country, and KVK/OIN when the buyer is in the Netherlands.
 */
export const NLCIUS_CII_RULES: Requirement[] = NLCIUS_RULES.map((r) =>
  r.rule !== 'BR-NL-10'
    ? r
    : {
        rule: 'BR-NL-10',
        terms: ['BT-47', 'BT-47-1'],
        message:
          'For a seller in the Netherlands NLCIUS-CII requires the buyer legal registration identifier (BT-47), a ' +
          'KVK (0106) or OIN (0190) number when the buyer is in the Netherlands',
        holds: (i: Invoice) =>
          !sellerNl(i) ||
          (present(i.buyer.legalRegistrationIdentifier?.value) &&
            (!isNl(i.buyer.postalAddress?.countryCode) || kvkOrOin(i.buyer.legalRegistrationIdentifier?.schemeId))),
      },
);

export const XRECHNUNG_RULES: Requirement[] = [
  {
    rule: 'BR-DE-1',
    terms: ['BG-16'],
    message: 'Payment instructions (BG-16) must be provided',
    holds: (i) => i.paymentInstructions?.meansTypeCode !== undefined,
  },
  {
    rule: 'BR-DE-2',
    terms: ['BG-6'],
    message: 'Seller contact (BG-6) must be provided',
    holds: (i) => i.seller.contact !== undefined,
  },
  {
    rule: 'BR-DE-3',
    terms: ['BT-37'],
    message: 'Seller city (BT-37) must be provided',
    holds: (i) => present(i.seller.postalAddress?.city),
  },
  {
    rule: 'BR-DE-4',
    terms: ['BT-38'],
    message: 'Seller post code (BT-38) must be provided',
    holds: (i) => present(i.seller.postalAddress?.postCode),
  },
  {
    rule: 'BR-DE-5',
    terms: ['BT-41'],
    message: 'Seller contact point (BT-41) must be provided',
    holds: (i) => present(i.seller.contact?.point),
  },
  {
    rule: 'BR-DE-6',
    terms: ['BT-42'],
    message: 'Seller contact telephone number (BT-42) must be provided',
    holds: (i) => present(i.seller.contact?.telephone),
  },
  {
    rule: 'BR-DE-7',
    terms: ['BT-43'],
    message: 'Seller contact email address (BT-43) must be provided',
    holds: (i) => present(i.seller.contact?.email),
  },
  {
    rule: 'BR-DE-8',
    terms: ['BT-52'],
    message: 'Buyer city (BT-52) must be provided',
    holds: (i) => present(i.buyer.postalAddress?.city),
  },
  {
    rule: 'BR-DE-9',
    terms: ['BT-53'],
    message: 'Buyer post code (BT-53) must be provided',
    holds: (i) => present(i.buyer.postalAddress?.postCode),
  },
  {
    rule: 'BR-DE-10',
    terms: ['BT-77'],
    message: 'Deliver to city (BT-77) must be provided with a deliver-to address (BG-15)',
    holds: (i) => !i.delivery?.address || present(i.delivery.address.city),
  },
  {
    rule: 'BR-DE-11',
    terms: ['BT-78'],
    message: 'Deliver to post code (BT-78) must be provided with a deliver-to address (BG-15)',
    holds: (i) => !i.delivery?.address || present(i.delivery.address.postCode),
  },
  {
    rule: 'BR-DE-14',
    terms: ['BT-119'],
    message: 'Every VAT breakdown needs a VAT category rate (BT-119)',
    holds: (i) => i.vatBreakdown.every((v) => present(v.rate)),
  },
  {
    rule: 'BR-DE-15',
    terms: ['BT-10'],
    message: 'Buyer reference (BT-10) must be provided',
    holds: (i) => present(i.buyerReference),
  },
  {
    rule: 'BR-DE-16',
    terms: ['BT-31', 'BT-32', 'BT-63'],
    message:
      'With VAT categories S, Z, E, AE, K, G, L or M a seller VAT identifier (BT-31), tax registration identifier ' +
      '(BT-32) or tax representative VAT identifier (BT-63) is required',
    holds: (i) =>
      !i.vatBreakdown.some((v) => VAT_REQUIRING_CATEGORIES.has(v.categoryCode ?? '')) ||
      present(i.seller.vatIdentifier) ||
      present(i.seller.taxRegistrationIdentifier) ||
      present(i.taxRepresentative?.vatIdentifier),
  },
  // XRechnung 3 carries the Peppol rules (harmonisation with BIS Billing 3).
  ...PEPPOL_RULES.filter((r) => r.rule === 'PEPPOL-EN16931-R020' || r.rule === 'PEPPOL-EN16931-R010'),
];

/**
 * Factur-X BASIC is EN 16931 without some terms: its schema (FACTUR-X_BASIC, compared with FACTUR-X_EN16931) has no
 * element for them, or its Schematron marks them as not used. A document carrying any of them is refused (422) rather
 * than written without them: BASIC would
 * then claim to be the whole invoice while leaving data out; `facturx-en16931` carries everything.
 */
const absent = (rule: string, terms: string[], what: string, has: (i: Invoice) => boolean): Requirement => ({
  rule,
  terms,
  message: `Factur-X BASIC has no place for ${what} (${terms.join(', ')}); use the EN 16931 profile for this invoice`,
  holds: (i) => !has(i),
});
const anyLine = (i: Invoice, f: (l: Invoice['lines'][number]) => boolean): boolean => i.lines.some(f);
const transfers = (i: Invoice): readonly { accountName?: string; serviceProviderIdentifier?: string }[] =>
  i.paymentInstructions?.creditTransfers ?? [];

export const FACTURX_BASIC_RULES: Requirement[] = [
  absent('FX-BASIC-BT-7', ['BT-7'], 'the VAT point date', (i) => present(i.vatPointDate)),
  absent('FX-BASIC-BT-11', ['BT-11'], 'a project reference', (i) => present(i.projectReference)),
  absent('FX-BASIC-BT-14', ['BT-14'], 'a sales order reference', (i) => present(i.salesOrderReference)),
  absent('FX-BASIC-BT-15', ['BT-15'], 'a receiving advice reference', (i) => present(i.receivingAdviceReference)),
  absent('FX-BASIC-BT-17', ['BT-17'], 'a tender or lot reference', (i) => present(i.tenderOrLotReference)),
  absent('FX-BASIC-BT-18', ['BT-18'], 'an invoiced object identifier', (i) =>
    present(i.invoicedObjectIdentifier?.value),
  ),
  absent('FX-BASIC-BT-33', ['BT-33'], 'seller additional legal information', (i) =>
    present(i.seller.additionalLegalInformation),
  ),
  absent('FX-BASIC-BG-6', ['BG-6'], 'a seller contact', (i) => i.seller.contact !== undefined),
  absent('FX-BASIC-BG-9', ['BG-9'], 'a buyer contact', (i) => i.buyer.contact !== undefined),
  absent('FX-BASIC-BT-82', ['BT-82'], 'a payment means text', (i) => present(i.paymentInstructions?.meansText)),
  absent('FX-BASIC-BT-85', ['BT-85'], 'a payment account name', (i) =>
    transfers(i).some((t) => present(t.accountName)),
  ),
  absent('FX-BASIC-BT-86', ['BT-86'], 'a payment service provider identifier', (i) =>
    transfers(i).some((t) => present(t.serviceProviderIdentifier)),
  ),
  absent('FX-BASIC-BG-18', ['BG-18'], 'payment card information', (i) => i.paymentInstructions?.card !== undefined),
  absent('FX-BASIC-BT-114', ['BT-114'], 'a rounding amount', (i) => present(i.totals.roundingAmount)),
  absent('FX-BASIC-BG-24', ['BG-24'], 'additional supporting documents', (i) => i.supportingDocuments.length > 0),
  absent('FX-BASIC-BT-128', ['BT-128'], 'invoice line object identifiers', (i) =>
    anyLine(i, (l) => present(l.objectIdentifier?.value)),
  ),
  absent('FX-BASIC-BT-132', ['BT-132'], 'referenced purchase order line references', (i) =>
    anyLine(i, (l) => present(l.purchaseOrderLineReference)),
  ),
  absent('FX-BASIC-BT-133', ['BT-133'], 'invoice line buyer accounting references', (i) =>
    anyLine(i, (l) => present(l.buyerAccountingReference)),
  ),
  absent('FX-BASIC-BT-154', ['BT-154'], 'item descriptions', (i) => anyLine(i, (l) => present(l.item.description))),
  absent('FX-BASIC-BT-155', ['BT-155'], "item sellers' identifiers", (i) =>
    anyLine(i, (l) => present(l.item.sellersIdentifier)),
  ),
  absent('FX-BASIC-BT-156', ['BT-156'], "item buyers' identifiers", (i) =>
    anyLine(i, (l) => present(l.item.buyersIdentifier)),
  ),
  absent('FX-BASIC-BT-158', ['BT-158'], 'item classification identifiers', (i) =>
    anyLine(i, (l) => l.item.classificationIdentifiers.length > 0),
  ),
  absent('FX-BASIC-BT-159', ['BT-159'], 'item countries of origin', (i) =>
    anyLine(i, (l) => present(l.item.countryOfOrigin)),
  ),
  absent('FX-BASIC-BG-32', ['BG-32'], 'item attributes', (i) => anyLine(i, (l) => l.item.attributes.length > 0)),
  // Not in the schema's terms but ruled out by the BASIC Schematron ("marked as not used in the given context").
  absent('FX-BASIC-BT-45', ['BT-45'], 'a buyer trading name', (i) => present(i.buyer.tradingName)),
  absent(
    'FX-BASIC-BT-137',
    ['BT-137', 'BT-138', 'BT-142', 'BT-143'],
    'base amounts or percentages of invoice line allowances and charges',
    (i) => anyLine(i, (l) => l.allowanceCharges.some((ac) => present(ac.baseAmount) || present(ac.percentage))),
  ),
];

const fractionDigits = (v: string | undefined, max: number): boolean =>
  v === undefined || (v.split('.')[1] ?? '').replace(/0+$/, '').length <= max;
const shorter = (v: string | undefined, max: number): boolean => v === undefined || v.length <= max;

/**
 * What the ebInterface 6.1 schema requires beyond EN 16931: every address has a town and ZIP, amounts and
 * percentages have at most two decimals, quantities and prices at most four, and a few identifiers are length-limited.
 * Cutting a value to fit would change it, so a document that does not fit is refused.
 */
export const EBINTERFACE_RULES: Requirement[] = [
  {
    rule: 'EBI61-ADDRESS-BILLER',
    terms: ['BT-37', 'BT-38'],
    message: 'ebInterface requires the seller (Biller) city (BT-37) and post code (BT-38)',
    holds: (i) => present(i.seller.postalAddress?.city) && present(i.seller.postalAddress?.postCode),
  },
  {
    rule: 'EBI61-ADDRESS-RECIPIENT',
    terms: ['BT-52', 'BT-53'],
    message: 'ebInterface requires the buyer (InvoiceRecipient) city (BT-52) and post code (BT-53)',
    holds: (i) => present(i.buyer.postalAddress?.city) && present(i.buyer.postalAddress?.postCode),
  },
  {
    rule: 'EBI61-DECIMAL2',
    terms: [
      'BT-92',
      'BT-94',
      'BT-99',
      'BT-101',
      'BT-112',
      'BT-113',
      'BT-114',
      'BT-115',
      'BT-116',
      'BT-117',
      'BT-119',
      'BT-131',
      'BT-136',
      'BT-138',
      'BT-141',
      'BT-143',
      'BT-152',
    ],
    message: 'ebInterface amounts, rates and percentages have at most two decimals',
    holds: (i) =>
      [i.totals.totalWithVat, i.totals.paidAmount, i.totals.roundingAmount, i.totals.amountDueForPayment].every((v) =>
        fractionDigits(v, 2),
      ) &&
      i.allowanceCharges.every(
        (a) =>
          fractionDigits(a.amount, 2) &&
          fractionDigits(a.baseAmount, 2) &&
          fractionDigits(a.percentage, 2) &&
          fractionDigits(a.vatRate, 2),
      ) &&
      i.vatBreakdown.every(
        (v) => fractionDigits(v.taxableAmount, 2) && fractionDigits(v.taxAmount, 2) && fractionDigits(v.rate, 2),
      ) &&
      i.lines.every(
        (l) =>
          fractionDigits(l.netAmount, 2) &&
          fractionDigits(l.vat.rate, 2) &&
          l.allowanceCharges.every(
            (a) => fractionDigits(a.amount, 2) && fractionDigits(a.baseAmount, 2) && fractionDigits(a.percentage, 2),
          ),
      ),
  },
  {
    rule: 'EBI61-DECIMAL4',
    terms: ['BT-129', 'BT-146', 'BT-149'],
    message: 'ebInterface quantities, unit prices and base quantities have at most four decimals',
    holds: (i) =>
      i.lines.every(
        (l) =>
          fractionDigits(l.quantity, 4) &&
          fractionDigits(l.price.netPrice, 4) &&
          fractionDigits(l.price.baseQuantity, 4),
      ),
  },
  {
    rule: 'EBI61-ID35',
    terms: ['BT-83', 'BT-89', 'BT-90'],
    message:
      'ebInterface PaymentReference (BT-83), MandateReference (BT-89) and CreditorID (BT-90) have at most 35 ' +
      'characters',
    holds: (i) => {
      const p = i.paymentInstructions;
      const transfer = p?.directDebit === undefined && p?.card === undefined;
      return (
        (!transfer || shorter(p?.remittanceInformation, 35)) &&
        shorter(p?.directDebit?.mandateReference, 35) &&
        shorter(p?.directDebit?.bankAssignedCreditorIdentifier, 35)
      );
    },
  },
  {
    rule: 'EBI61-ACCOUNT-OWNER',
    terms: ['BT-85'],
    message: 'ebInterface BankAccountOwner (BT-85 Payment account name) has at most 70 characters',
    holds: (i) => (i.paymentInstructions?.creditTransfers ?? []).every((c) => shorter(c.accountName, 70)),
  },
  {
    rule: 'EBI61-IBAN',
    terms: ['BT-84', 'BT-91'],
    message: 'ebInterface account identifiers (IBAN, BT-84 / BT-91) have at most 34 characters',
    holds: (i) =>
      (i.paymentInstructions?.creditTransfers ?? []).every((c) =>
        shorter(c.accountIdentifier.replace(/\s+/g, ''), 34),
      ) && shorter(i.paymentInstructions?.directDebit?.debitedAccountIdentifier, 34),
  },
];
