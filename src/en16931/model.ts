/**
 * The EN 16931-1 semantic model of an invoice or credit note, independent of any syntax.
 *
 * Every business group (BG) and business term (BT) of EN 16931-1:2017 has a field here; the doc comment of each field
 * names its number. Field names follow the norm's English term names. Cardinalities follow the norm (optional fields
 * for 0..1, arrays for 0..n / 1..n), except that a reader keeps a mandatory term that a document lacks as `undefined`
 * rather than inventing it: validation, not the model, says whether a document is complete.
 *
 * Values are kept as written, never converted to numbers: amounts, quantities, prices and percentages are decimal
 * strings (xs:decimal lexical form), dates are ISO `YYYY-MM-DD` (CII format 102 is converted at the syntax edge).
 * Identifiers with a scheme are `{ value, schemeId }` (the BT-n-1 term). Binary objects stay base64 text.
 *
 * What a CIUS or Factur-X EXTENDED adds beyond the norm lives in `Extensions`, apart from the core, so that a core
 * consumer never has to know about it.
 */

/** xs:decimal lexical form ("12.50", "-3", "0.125"); never a float. */
export type Decimal = string;
/** ISO 8601 calendar date `YYYY-MM-DD`. */
export type IsoDate = string;

/** An identifier with its optional identification scheme (the BT-n-1 "Scheme identifier" terms). */
export interface Identifier {
  value: string;
  /** Scheme identifier (ISO 6523 ICD, EAS, or another code list named by the binding). */
  schemeId?: string;
}

/** BG-5 / BG-8 / BG-12 / BG-15: a postal address; the numbers differ per party and are listed at each use. */
export interface PostalAddress {
  /** BT-35 / BT-50 / BT-64 / BT-75 Address line 1 */
  line1?: string;
  /** BT-36 / BT-51 / BT-65 / BT-76 Address line 2 */
  line2?: string;
  /** BT-162 / BT-163 / BT-164 / BT-165 Address line 3 */
  line3?: string;
  /** BT-37 / BT-52 / BT-66 / BT-77 City */
  city?: string;
  /** BT-38 / BT-53 / BT-67 / BT-78 Post code */
  postCode?: string;
  /** BT-39 / BT-54 / BT-68 / BT-79 Country subdivision */
  countrySubdivision?: string;
  /** BT-40 / BT-55 / BT-69 / BT-80 Country code (ISO 3166-1 alpha-2) */
  countryCode?: string;
}

/** BG-6 SELLER CONTACT / BG-9 BUYER CONTACT */
export interface Contact {
  /** BT-41 / BT-56 Contact point */
  point?: string;
  /** BT-42 / BT-57 Contact telephone number */
  telephone?: string;
  /** BT-43 / BT-58 Contact email address */
  email?: string;
}

/** BG-1 INVOICE NOTE */
export interface InvoiceNote {
  /** BT-21 Invoice note subject code (UNTDID 4451) */
  subjectCode?: string;
  /** BT-22 Invoice note */
  note: string;
}

/** BG-2 PROCESS CONTROL */
export interface ProcessControl {
  /** BT-23 Business process type */
  businessProcessType?: string;
  /** BT-24 Specification identifier */
  specificationIdentifier: string;
}

/** BG-3 PRECEDING INVOICE REFERENCE */
export interface PrecedingInvoiceReference {
  /** BT-25 Preceding Invoice reference */
  reference: string;
  /** BT-26 Preceding Invoice issue date */
  issueDate?: IsoDate;
}

/** BG-4 SELLER */
export interface Seller {
  /** BT-27 Seller name */
  name?: string;
  /** BT-28 Seller trading name */
  tradingName?: string;
  /** BT-29 Seller identifier, with BT-29-1 Scheme identifier (0..n) */
  identifiers: Identifier[];
  /** BT-30 Seller legal registration identifier, with BT-30-1 Scheme identifier */
  legalRegistrationIdentifier?: Identifier;
  /** BT-31 Seller VAT identifier */
  vatIdentifier?: string;
  /** BT-32 Seller tax registration identifier */
  taxRegistrationIdentifier?: string;
  /** BT-33 Seller additional legal information */
  additionalLegalInformation?: string;
  /** BT-34 Seller electronic address, with BT-34-1 Scheme identifier */
  electronicAddress?: Identifier;
  /** BG-5 SELLER POSTAL ADDRESS (BT-35, BT-36, BT-162, BT-37, BT-38, BT-39, BT-40) */
  postalAddress?: PostalAddress;
  /** BG-6 SELLER CONTACT (BT-41, BT-42, BT-43) */
  contact?: Contact;
}

/** BG-7 BUYER */
export interface Buyer {
  /** BT-44 Buyer name */
  name?: string;
  /** BT-45 Buyer trading name */
  tradingName?: string;
  /** BT-46 Buyer identifier, with BT-46-1 Scheme identifier */
  identifier?: Identifier;
  /** BT-47 Buyer legal registration identifier, with BT-47-1 Scheme identifier */
  legalRegistrationIdentifier?: Identifier;
  /** BT-48 Buyer VAT identifier */
  vatIdentifier?: string;
  /** BT-49 Buyer electronic address, with BT-49-1 Scheme identifier */
  electronicAddress?: Identifier;
  /** BG-8 BUYER POSTAL ADDRESS (BT-50, BT-51, BT-163, BT-52, BT-53, BT-54, BT-55) */
  postalAddress?: PostalAddress;
  /** BG-9 BUYER CONTACT (BT-56, BT-57, BT-58) */
  contact?: Contact;
}

/** BG-10 PAYEE */
export interface Payee {
  /** BT-59 Payee name */
  name?: string;
  /** BT-60 Payee identifier, with BT-60-1 Scheme identifier */
  identifier?: Identifier;
  /** BT-61 Payee legal registration identifier, with BT-61-1 Scheme identifier */
  legalRegistrationIdentifier?: Identifier;
}

/** BG-11 SELLER TAX REPRESENTATIVE PARTY */
export interface SellerTaxRepresentative {
  /** BT-62 Seller tax representative name */
  name?: string;
  /** BT-63 Seller tax representative VAT identifier */
  vatIdentifier?: string;
  /** BG-12 SELLER TAX REPRESENTATIVE POSTAL ADDRESS (BT-64, BT-65, BT-164, BT-66, BT-67, BT-68, BT-69) */
  postalAddress?: PostalAddress;
}

/** BG-14 INVOICING PERIOD / BG-26 INVOICE LINE PERIOD */
export interface Period {
  /** BT-73 Invoicing period start date / BT-134 Invoice line period start date */
  startDate?: IsoDate;
  /** BT-74 Invoicing period end date / BT-135 Invoice line period end date */
  endDate?: IsoDate;
}

/** BG-13 DELIVERY INFORMATION */
export interface DeliveryInformation {
  /** BT-70 Deliver to party name */
  partyName?: string;
  /** BT-71 Deliver to location identifier, with BT-71-1 Scheme identifier */
  locationIdentifier?: Identifier;
  /** BT-72 Actual delivery date */
  actualDeliveryDate?: IsoDate;
  /** BG-15 DELIVER TO ADDRESS (BT-75, BT-76, BT-165, BT-77, BT-78, BT-79, BT-80) */
  address?: PostalAddress;
}

/** BG-17 CREDIT TRANSFER */
export interface CreditTransfer {
  /** BT-84 Payment account identifier */
  accountIdentifier: string;
  /** BT-85 Payment account name */
  accountName?: string;
  /** BT-86 Payment service provider identifier */
  serviceProviderIdentifier?: string;
}

/** BG-18 PAYMENT CARD INFORMATION */
export interface PaymentCard {
  /** BT-87 Payment card primary account number */
  primaryAccountNumber: string;
  /** BT-88 Payment card holder name */
  holderName?: string;
}

/** BG-19 DIRECT DEBIT */
export interface DirectDebit {
  /** BT-89 Mandate reference identifier */
  mandateReference?: string;
  /** BT-90 Bank assigned creditor identifier */
  bankAssignedCreditorIdentifier?: string;
  /** BT-91 Debited account identifier */
  debitedAccountIdentifier?: string;
}

/** BG-16 PAYMENT INSTRUCTIONS */
export interface PaymentInstructions {
  /** BT-81 Payment means type code (UNTDID 4461) */
  meansTypeCode?: string;
  /** BT-82 Payment means text */
  meansText?: string;
  /** BT-83 Remittance information */
  remittanceInformation?: string;
  /** BG-17 CREDIT TRANSFER (0..n) */
  creditTransfers: CreditTransfer[];
  /** BG-18 PAYMENT CARD INFORMATION */
  card?: PaymentCard;
  /** BG-19 DIRECT DEBIT */
  directDebit?: DirectDebit;
}

/**
 * BG-20 DOCUMENT LEVEL ALLOWANCES (BT-92..BT-98) and BG-21 DOCUMENT LEVEL CHARGES (BT-99..BT-105), told apart by
 * `charge`. The numbers below are the allowance's; the charge's are seven higher.
 */
export interface DocumentAllowanceCharge {
  /** false: BG-20 allowance; true: BG-21 charge */
  charge: boolean;
  /** BT-92 / BT-99 amount */
  amount: Decimal;
  /** BT-93 / BT-100 base amount */
  baseAmount?: Decimal;
  /** BT-94 / BT-101 percentage */
  percentage?: Decimal;
  /** BT-95 / BT-102 VAT category code */
  vatCategoryCode?: string;
  /** BT-96 / BT-103 VAT rate */
  vatRate?: Decimal;
  /** BT-97 / BT-104 reason */
  reason?: string;
  /** BT-98 / BT-105 reason code (UNTDID 5189 allowances, UNTDID 7161 charges) */
  reasonCode?: string;
}

/** BG-22 DOCUMENT TOTALS */
export interface DocumentTotals {
  /** BT-106 Sum of Invoice line net amount */
  sumOfLineNetAmounts?: Decimal;
  /** BT-107 Sum of allowances on document level */
  sumOfAllowances?: Decimal;
  /** BT-108 Sum of charges on document level */
  sumOfCharges?: Decimal;
  /** BT-109 Invoice total amount without VAT */
  totalWithoutVat?: Decimal;
  /** BT-110 Invoice total VAT amount (in BT-5 currency) */
  totalVatAmount?: Decimal;
  /** BT-111 Invoice total VAT amount in accounting currency (in BT-6 currency) */
  totalVatAmountInAccountingCurrency?: Decimal;
  /** BT-112 Invoice total amount with VAT */
  totalWithVat?: Decimal;
  /** BT-113 Paid amount */
  paidAmount?: Decimal;
  /** BT-114 Rounding amount */
  roundingAmount?: Decimal;
  /** BT-115 Amount due for payment */
  amountDueForPayment?: Decimal;
}

/** BG-23 VAT BREAKDOWN */
export interface VatBreakdown {
  /** BT-116 VAT category taxable amount */
  taxableAmount?: Decimal;
  /** BT-117 VAT category tax amount */
  taxAmount?: Decimal;
  /** BT-118 VAT category code (UNTDID 5305 subset) */
  categoryCode?: string;
  /** BT-119 VAT category rate */
  rate?: Decimal;
  /** BT-120 VAT exemption reason text */
  exemptionReasonText?: string;
  /** BT-121 VAT exemption reason code (VATEX) */
  exemptionReasonCode?: string;
}

/** BT-125 Attached document: embedded binary object with BT-125-1 MIME code and BT-125-2 filename. */
export interface BinaryObject {
  /** base64 content, as written in the document (whitespace removed) */
  base64: string;
  /** BT-125-1 Attached document Mime code */
  mimeCode?: string;
  /** BT-125-2 Attached document Filename */
  filename?: string;
}

/** BG-24 ADDITIONAL SUPPORTING DOCUMENTS */
export interface SupportingDocument {
  /** BT-122 Supporting document reference */
  reference: string;
  /** BT-123 Supporting document description */
  description?: string;
  /** BT-124 External document location */
  externalLocation?: string;
  /** BT-125 Attached document (BT-125-1, BT-125-2) */
  attachment?: BinaryObject;
}

/** BG-27 INVOICE LINE ALLOWANCES (BT-136..BT-140) and BG-28 INVOICE LINE CHARGES (BT-141..BT-145). */
export interface LineAllowanceCharge {
  /** false: BG-27 allowance; true: BG-28 charge */
  charge: boolean;
  /** BT-136 / BT-141 amount */
  amount: Decimal;
  /** BT-137 / BT-142 base amount */
  baseAmount?: Decimal;
  /** BT-138 / BT-143 percentage */
  percentage?: Decimal;
  /** BT-139 / BT-144 reason */
  reason?: string;
  /** BT-140 / BT-145 reason code */
  reasonCode?: string;
}

/** BG-29 PRICE DETAILS */
export interface PriceDetails {
  /** BT-146 Item net price */
  netPrice?: Decimal;
  /** BT-147 Item price discount */
  discount?: Decimal;
  /** BT-148 Item gross price */
  grossPrice?: Decimal;
  /** BT-149 Item price base quantity */
  baseQuantity?: Decimal;
  /** BT-150 Item price base quantity unit of measure code */
  baseQuantityUnitCode?: string;
}

/** BG-30 LINE VAT INFORMATION */
export interface LineVatInformation {
  /** BT-151 Invoiced item VAT category code */
  categoryCode?: string;
  /** BT-152 Invoiced item VAT rate */
  rate?: Decimal;
}

/** BT-158 Item classification identifier with BT-158-1 Scheme identifier and BT-158-2 Scheme version identifier. */
export interface ClassificationIdentifier {
  value: string;
  /** BT-158-1 (UNTDID 7143) */
  schemeId?: string;
  /** BT-158-2 */
  schemeVersion?: string;
}

/** BG-32 ITEM ATTRIBUTES */
export interface ItemAttribute {
  /** BT-160 Item attribute name */
  name: string;
  /** BT-161 Item attribute value */
  value: string;
}

/** BG-31 ITEM INFORMATION */
export interface ItemInformation {
  /** BT-153 Item name */
  name?: string;
  /** BT-154 Item description */
  description?: string;
  /** BT-155 Item Seller's identifier */
  sellersIdentifier?: string;
  /** BT-156 Item Buyer's identifier */
  buyersIdentifier?: string;
  /** BT-157 Item standard identifier, with BT-157-1 Scheme identifier */
  standardIdentifier?: Identifier;
  /** BT-158 Item classification identifier (0..n) */
  classificationIdentifiers: ClassificationIdentifier[];
  /** BT-159 Item country of origin */
  countryOfOrigin?: string;
  /** BG-32 ITEM ATTRIBUTES (0..n) */
  attributes: ItemAttribute[];
}

/** BG-25 INVOICE LINE */
export interface InvoiceLine {
  /** BT-126 Invoice line identifier */
  identifier: string;
  /** BT-127 Invoice line note */
  note?: string;
  /** BT-128 Invoice line object identifier, with BT-128-1 Scheme identifier */
  objectIdentifier?: Identifier;
  /** BT-129 Invoiced quantity */
  quantity?: Decimal;
  /** BT-130 Invoiced quantity unit of measure code (UN/ECE Rec 20/21) */
  quantityUnitCode?: string;
  /** BT-131 Invoice line net amount */
  netAmount?: Decimal;
  /** BT-132 Referenced purchase order line reference */
  purchaseOrderLineReference?: string;
  /** BT-133 Invoice line Buyer accounting reference */
  buyerAccountingReference?: string;
  /** BG-26 INVOICE LINE PERIOD (BT-134, BT-135) */
  period?: Period;
  /** BG-27 INVOICE LINE ALLOWANCES and BG-28 INVOICE LINE CHARGES, in document order */
  allowanceCharges: LineAllowanceCharge[];
  /** BG-29 PRICE DETAILS */
  price: PriceDetails;
  /** BG-30 LINE VAT INFORMATION */
  vat: LineVatInformation;
  /** BG-31 ITEM INFORMATION */
  item: ItemInformation;
}

/** The INVOICE (root of EN 16931-1), invoices and credit notes alike: BT-3 tells them apart. */
export interface Invoice {
  /** BT-1 Invoice number */
  number?: string;
  /** BT-2 Invoice issue date */
  issueDate?: IsoDate;
  /** BT-3 Invoice type code (UNTDID 1001 subset) */
  typeCode?: string;
  /** BT-5 Invoice currency code (ISO 4217) */
  currencyCode?: string;
  /** BT-6 VAT accounting currency code */
  vatAccountingCurrencyCode?: string;
  /** BT-7 Value added tax point date */
  vatPointDate?: IsoDate;
  /** BT-8 Value added tax point date code (UNTDID 2005: 3, 35, 432) */
  vatPointDateCode?: string;
  /** BT-9 Payment due date */
  paymentDueDate?: IsoDate;
  /** BT-10 Buyer reference */
  buyerReference?: string;
  /** BT-11 Project reference */
  projectReference?: string;
  /** BT-12 Contract reference */
  contractReference?: string;
  /** BT-13 Purchase order reference */
  purchaseOrderReference?: string;
  /** BT-14 Sales order reference */
  salesOrderReference?: string;
  /** BT-15 Receiving advice reference */
  receivingAdviceReference?: string;
  /** BT-16 Despatch advice reference */
  despatchAdviceReference?: string;
  /** BT-17 Tender or lot reference */
  tenderOrLotReference?: string;
  /** BT-18 Invoiced object identifier, with BT-18-1 Scheme identifier */
  invoicedObjectIdentifier?: Identifier;
  /** BT-19 Buyer accounting reference */
  buyerAccountingReference?: string;
  /** BT-20 Payment terms */
  paymentTerms?: string;
  /** BG-1 INVOICE NOTE (0..n) */
  notes: InvoiceNote[];
  /** BG-2 PROCESS CONTROL */
  processControl: ProcessControl;
  /** BG-3 PRECEDING INVOICE REFERENCE (0..n) */
  precedingInvoices: PrecedingInvoiceReference[];
  /** BG-4 SELLER */
  seller: Seller;
  /** BG-7 BUYER */
  buyer: Buyer;
  /** BG-10 PAYEE */
  payee?: Payee;
  /** BG-11 SELLER TAX REPRESENTATIVE PARTY */
  taxRepresentative?: SellerTaxRepresentative;
  /** BG-13 DELIVERY INFORMATION */
  delivery?: DeliveryInformation;
  /** BG-14 INVOICING PERIOD (BT-73, BT-74) */
  invoicingPeriod?: Period;
  /** BG-16 PAYMENT INSTRUCTIONS */
  paymentInstructions?: PaymentInstructions;
  /** BG-20 DOCUMENT LEVEL ALLOWANCES and BG-21 DOCUMENT LEVEL CHARGES, in document order */
  allowanceCharges: DocumentAllowanceCharge[];
  /** BG-22 DOCUMENT TOTALS */
  totals: DocumentTotals;
  /** BG-23 VAT BREAKDOWN (1..n) */
  vatBreakdown: VatBreakdown[];
  /** BG-24 ADDITIONAL SUPPORTING DOCUMENTS (0..n) */
  supportingDocuments: SupportingDocument[];
  /** BG-25 INVOICE LINE (1..n) */
  lines: InvoiceLine[];
  /** What CIUSes and extensions add beyond EN 16931 (kept apart from the core). */
  extensions: Extensions;
}

/**
 * Beyond EN 16931. Only what both syntaxes can carry is modelled; anything else a reader meets goes to its unmapped
 * list instead of being dropped.
 */
export interface Extensions {
  /**
   * Card network (UBL `cac:CardAccount/cbc:NetworkID`, mandatory in UBL, absent from EN 16931 and from CII). Kept so a
   * UBL → UBL flavour change does not lose it; a CII → UBL conversion has to write a placeholder and reports it.
   */
  cardNetworkId?: string;
  /** CII `SpecifiedProcuringProject/ram:Name` (mandatory in CII beside BT-11, absent from EN 16931 and from UBL). */
  projectName?: string;
}

/** Where a reader found something the model cannot hold, with the text it had (shortened). */
export interface UnmappedElement {
  /** XPath-like location with canonical prefixes (cbc, cac, ram, rsm, udt, qdt), e.g. `/Invoice/cbc:IssueTime`. */
  path: string;
  text?: string;
}

/** A value the model could read but that is not valid for its term (e.g. a date that is not a date). */
export interface ReadProblem {
  path: string;
  /** BT / BG number concerned */
  term: string;
  message: string;
}

export interface ReadResult {
  invoice: Invoice;
  /** The syntax read (UBL root, CII or a national syntax); the model itself does not depend on it. */
  syntax: 'UBL' | 'CII' | 'Svefaktura' | 'FatturaPA' | 'ebInterface';
  unmapped: UnmappedElement[];
  problems: ReadProblem[];
  /**
   * Values the reader derived or put in by its syntax's mapping rules (e.g. an endpoint from a GLN, BT-24 for
   * FatturaPA), reported as filled.
   */
  filled?: string[];
  /**
   * Values the reader rewrote into the code list EN 16931 requires (e.g. an ebInterface unit "STK" → H87), each said.
   */
  normalised?: string[];
}

/** UNCL1001 codes that make a UBL CreditNote (EN 16931 / Peppol credit note code list). */
export const CREDIT_NOTE_TYPE_CODES: ReadonlySet<string> = new Set([
  '81',
  '83',
  '261',
  '262',
  '296',
  '308',
  '381',
  '396',
  '420',
  '458',
  '532',
]);

export function isCreditNote(inv: Pick<Invoice, 'typeCode'>): boolean {
  return inv.typeCode !== undefined && CREDIT_NOTE_TYPE_CODES.has(inv.typeCode);
}

export function emptyInvoice(): Invoice {
  return {
    notes: [],
    processControl: { specificationIdentifier: '' },
    precedingInvoices: [],
    seller: { identifiers: [] },
    buyer: {},
    allowanceCharges: [],
    totals: {},
    vatBreakdown: [],
    supportingDocuments: [],
    lines: [],
    extensions: {},
  };
}
