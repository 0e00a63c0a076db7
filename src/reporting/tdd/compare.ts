import type { Element, Node } from '@xmldom/xmldom';
import { parseXml } from '../../formats';

/**
 * Compares two Tax Data Documents term by term: every element value and attribute of one is looked up at the same
 * place (element path with positions) in the other. Every leaf of a TDD is a business term, so this is a comparison
 * of every term; what is fresh per exchange (TDT-003 TDD UUID, TDT-004 / TDT-005 issue date and time, TDT-018
 * Invoice Transmission UUID) is left out. Decimals compare by value ("915" equals "915.00").
 */

export interface TddTermDifference {
  /** Path with positions, e.g. `ReportedDocument/DocumentLine[2]/Item/Name`. */
  path: string;
  /** The business term at that path, where known (e.g. `BT-153 Item name`). */
  term?: string;
  expected?: string;
  actual?: string;
}

const FRESH = new Set(['UUID', 'IssueDate', 'IssueTime', 'ReportedTransaction/TransmissionUUID']);

const TERMS: Array<[RegExp, string]> = [
  [/^CustomizationID$/, 'TDT-001 Specification identifier'],
  [/^ProfileID$/, 'TDT-002 Business process type'],
  [/^TaxDataTypeCode$/, 'TDT-007 Tax data type code'],
  [/^DocumentScope$/, 'TDT-006 Document scope'],
  [/^ReporterRole$/, 'TDT-012 Reporter role'],
  [/^TaxAuthority\/ID$/, 'TDT-010 Tax authority identifier'],
  [/^TaxAuthority\/Name$/, 'TDT-011 Tax authority name'],
  [/^ReportingParty\/EndpointID/, 'TDT-013 Reporting party'],
  [/^ReceivingParty\/EndpointID/, 'TDT-014 Receiving party'],
  [/^ReportersRepresentative\//, "TDT-015 Reporter's representative"],
  [/ReportedDocument\/UUID$/, 'TDT-017 Invoice UUID'],
  [/ReportedDocument\/CustomizationID$/, 'BT-24 Specification identifier'],
  [/ReportedDocument\/ProfileID$/, 'BT-23 Business process type'],
  [/ReportedDocument\/ID$/, 'BT-1 Invoice number'],
  [/ReportedDocument\/IssueDate$/, 'BT-2 Invoice issue date'],
  [/ReportedDocument\/DocumentTypeCode$/, 'BT-3 Invoice type code'],
  [/ReportedDocument\/Note$/, 'BT-22 Invoice note'],
  [/ReportedDocument\/TaxPointDate$/, 'BT-7 VAT point date'],
  [/ReportedDocument\/DocumentCurrencyCode$/, 'BT-5 Invoice currency code'],
  [/ReportedDocument\/TaxCurrencyCode$/, 'BT-6 VAT accounting currency code'],
  [/ReportedDocument\/InvoicePeriod\/StartDate$/, 'BT-73 Invoicing period start date'],
  [/ReportedDocument\/InvoicePeriod\/EndDate$/, 'BT-74 Invoicing period end date'],
  [/ReportedDocument\/InvoicePeriod\/DescriptionCode$/, 'BT-8 VAT point date code'],
  [/InvoiceDocumentReference\/ID$/, 'BT-25 Preceding invoice reference'],
  [/InvoiceDocumentReference\/IssueDate$/, 'BT-26 Preceding invoice issue date'],
  [/AccountingSupplierParty\/.*IdentificationCode$/, 'BT-40 Seller country code'],
  [/AccountingSupplierParty\/.*CompanyID$/, 'BT-31 Seller VAT identifier'],
  [/AccountingCustomerParty\/.*IdentificationCode$/, 'BT-55 Buyer country code'],
  [/AccountingCustomerParty\/.*CompanyID$/, 'BT-48 Buyer VAT identifier'],
  [/RegistrationName$/, 'BT-44 Buyer name'],
  [/TaxRepresentativeParty\/.*IdentificationCode$/, 'BT-69 Tax representative country code'],
  [/TaxRepresentativeParty\/.*CompanyID$/, 'BT-63 Tax representative VAT identifier'],
  [/ActualDeliveryDate$/, 'BT-72 Actual delivery date'],
  [/PaymentMeansCode@name$/, 'BT-82 Payment means text'],
  [/PaymentMeansCode$/, 'BT-81 Payment means type code'],
  [/PaymentMeans(\[\d+\])?\/PaymentID$/, 'BT-83 Remittance information'],
  [/PayeeFinancialAccount\/ID$/, 'BT-84 Payment account identifier'],
  [/FinancialInstitutionBranch\/ID$/, 'BT-86 Payment service provider identifier'],
  [/PrimaryAccountNumberID$/, 'BT-87 Payment card primary account number'],
  [/HolderName$/, 'BT-88 Payment card holder name'],
  [/PaymentMandate\/ID$/, 'BT-89 Mandate reference identifier'],
  [/PayerFinancialAccount\/ID$/, 'BT-91 Debited account identifier'],
  [/DocumentLine(\[\d+\])?\/AllowanceCharge/, 'BG-27 / BG-28 Invoice line allowance or charge'],
  [/AllowanceCharge/, 'BG-20 / BG-21 Document level allowance or charge'],
  [/TaxTotal(\[1\])?\/TaxAmount/, 'BT-110 Invoice total VAT amount'],
  [/TaxTotal\[2\]\/TaxAmount/, 'BT-111 Invoice total VAT amount in accounting currency'],
  [/TaxSubtotal(\[\d+\])?\/TaxableAmount/, 'BT-116 VAT category taxable amount'],
  [/TaxSubtotal(\[\d+\])?\/TaxAmount/, 'BT-117 VAT category tax amount'],
  [/TaxSubtotal(\[\d+\])?\/TaxCategory\/ID$/, 'BT-118 VAT category code'],
  [/TaxSubtotal(\[\d+\])?\/TaxCategory\/Percent$/, 'BT-119 VAT category rate'],
  [/TaxExemptionReasonCode$/, 'BT-121 VAT exemption reason code'],
  [/TaxExemptionReason$/, 'BT-120 VAT exemption reason text'],
  [/MonetaryTotal\/LineExtensionAmount/, 'BT-106 Sum of invoice line net amount'],
  [/MonetaryTotal\/AllowanceTotalAmount/, 'BT-107 Sum of allowances on document level'],
  [/MonetaryTotal\/ChargeTotalAmount/, 'BT-108 Sum of charges on document level'],
  [/MonetaryTotal\/TaxExclusiveAmount/, 'BT-109 Invoice total amount without VAT'],
  [/MonetaryTotal\/TaxInclusiveAmount/, 'BT-112 Invoice total amount with VAT'],
  [/MonetaryTotal\/PrepaidAmount/, 'BT-113 Paid amount'],
  [/MonetaryTotal\/PayableRoundingAmount/, 'BT-114 Rounding amount'],
  [/MonetaryTotal\/PayableAmount/, 'BT-115 Amount due for payment'],
  [/DocumentLine(\[\d+\])?\/ID$/, 'BT-126 Invoice line identifier'],
  [/DocumentLine(\[\d+\])?\/Note$/, 'BT-127 Invoice line note'],
  [/InvoicedQuantity@unitCode$/, 'BT-130 Invoiced quantity unit of measure'],
  [/InvoicedQuantity$/, 'BT-129 Invoiced quantity'],
  [/DocumentLine(\[\d+\])?\/LineExtensionAmount/, 'BT-131 Invoice line net amount'],
  [/DocumentLine(\[\d+\])?\/InvoicePeriod\/StartDate$/, 'BT-134 Invoice line period start date'],
  [/DocumentLine(\[\d+\])?\/InvoicePeriod\/EndDate$/, 'BT-135 Invoice line period end date'],
  [/Item\/Description$/, 'BT-154 Item description'],
  [/Item\/Name$/, 'BT-153 Item name'],
  [/ItemClassificationCode/, 'BT-158 Item classification identifier'],
  [/ClassifiedTaxCategory\/ID$/, 'BT-151 Invoiced item VAT category code'],
  [/ClassifiedTaxCategory\/Percent$/, 'BT-152 Invoiced item VAT rate'],
  [/PriceAmount/, 'BT-146 Item net price'],
];

/** The business term of a path, where the table knows it. */
export function tddTermOf(path: string): string | undefined {
  return TERMS.find(([re]) => re.test(path))?.[1];
}

const DECIMAL = /^[+-]?(\d+\.?\d*|\.\d+)$/;

function normalise(v: string): string {
  const t = v.trim();
  if (!DECIMAL.test(t)) return t;
  let [int = '0', frac = ''] = t.replace(/^\+/, '').split('.');
  const neg = int.startsWith('-');
  int = int.replace('-', '').replace(/^0+(?=\d)/, '') || '0';
  frac = frac.replace(/0+$/, '');
  const s = frac ? `${int}.${frac}` : int;
  return neg && s !== '0' ? `-${s}` : s;
}

function isElement(n: Node): n is Element {
  return n.nodeType === 1;
}

/** Every element value and attribute of a TDD by path (positions on repeated elements, namespaces dropped). */
export function tddTerms(xml: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (e: Element, path: string): void => {
    for (let k = 0; k < e.attributes.length; k++) {
      const a = e.attributes.item(k)!;
      if (a.name === 'xmlns' || a.name.startsWith('xmlns:')) continue;
      out.set(`${path}@${a.localName ?? a.name}`, a.value);
    }
    const kids: Element[] = [];
    for (let c = e.firstChild; c; c = c.nextSibling) if (isElement(c)) kids.push(c);
    if (kids.length === 0) {
      if (path !== '') out.set(path, e.textContent ?? '');
      return;
    }
    const counts = new Map<string, number>();
    for (const c of kids) counts.set(c.localName!, (counts.get(c.localName!) ?? 0) + 1);
    const seen = new Map<string, number>();
    for (const c of kids) {
      const name = c.localName!;
      const n = (seen.get(name) ?? 0) + 1;
      seen.set(name, n);
      const step = (counts.get(name) ?? 0) > 1 ? `${name}[${n}]` : name;
      walk(c, path === '' ? step : `${path}/${step}`);
    }
  };
  const root = parseXml(xml).documentElement;
  if (!root) throw new Error('not an XML document');
  walk(root, '');
  return out;
}

/** The terms in which `actual` differs from `expected`, leaving out what is fresh per exchange. */
export function compareTdd(expected: string, actual: string): TddTermDifference[] {
  const a = tddTerms(expected);
  const b = tddTerms(actual);
  const diffs: TddTermDifference[] = [];
  for (const path of new Set([...a.keys(), ...b.keys()])) {
    if (FRESH.has(path.replace(/@.*$/, ''))) continue;
    const x = a.get(path);
    const y = b.get(path);
    if (x !== undefined && y !== undefined && normalise(x) === normalise(y)) continue;
    const term = tddTermOf(path);
    diffs.push({
      path,
      ...(term ? { term } : {}),
      ...(x !== undefined ? { expected: x } : {}),
      ...(y !== undefined ? { actual: y } : {}),
    });
  }
  return diffs;
}
