import type { ReadDocument, ReadElement } from '../formats/xml/read-tree';
import { EN16931 } from '../formats/vocabulary';
import { add, compare, isDecimal, parse, subtract } from './decimal';
import {
  emptyInvoice,
  type Contact,
  type DocumentAllowanceCharge,
  type Invoice,
  type InvoiceLine,
  type LineAllowanceCharge,
  type PostalAddress,
  type ReadResult,
  type VatBreakdown,
} from './model';
import { compact, pathOf, paymentOrNothing, ReadContext } from './xml-read';

/**
 * ebInterface 5.0 / 6.0 / 6.1 (the Austrian invoice format) → EN 16931 model. The three versions share one structure
 * (6.1 adds BelowTheLineItem), so one reader takes the namespace of the document. ebInterface 4.x has another tax
 * structure (VAT/VATItem, no category codes) and is not read here.
 *
 * ebInterface states fewer totals than EN 16931: BT-106..BT-110 are derived from the lines, reductions/surcharges and
 * tax items, and the stated TotalGrossAmount / PayableAmount must agree with them (BR-CO-15, BR-CO-16), otherwise the
 * document cannot become a valid EN 16931 invoice and the difference is reported as a problem. What the model has no
 * place for (OrderingParty, extensions, discounts, other taxes, ...) lands in `unmapped`.
 */

export const EBINTERFACE_READ_NAMESPACES: Readonly<Record<string, string>> = {
  'http://www.ebinterface.at/schema/5p0/': '5.0',
  'http://www.ebinterface.at/schema/6p0/': '6.0',
  'http://www.ebinterface.at/schema/6p1/': '6.1',
};

/** ebInterface DocumentType → BT-3 (UNTDID 1001). */
export const EBI_DOCUMENT_TYPE_TO_BT3: Readonly<Record<string, string>> = {
  Invoice: '380',
  FinalSettlement: '380',
  InvoiceForPartialDelivery: '326',
  InvoiceForAdvancePayment: '386',
  SelfBilling: '389',
  CreditMemo: '381',
  SubsequentCredit: '381',
  SubsequentDebit: '383',
};

/**
 * ebInterface TaxCategoryCode (UNTDID 5305) → EN 16931 VAT category; AA (lower rate) is S with its rate in EN 16931.
 */
const EN_CATEGORIES = new Set(['S', 'Z', 'E', 'AE', 'K', 'G', 'O', 'L', 'M']);
const categoryOf = (code: string): string | undefined =>
  code === 'AA' ? 'S' : EN_CATEGORIES.has(code) ? code : undefined;
/** Categories whose breakdown carries an exemption reason (BT-120); S and Z must not have one. */
const EXEMPT_CATEGORIES = new Set(['E', 'AE', 'K', 'G', 'O']);

/**
 * Unit abbreviations customary in Austrian ebInterface documents (the schema leaves Unit free) and their UN/ECE
 * Recommendation 20 codes, which EN 16931 requires for BT-130. Any other unit that does not look like a Rec 20 code is
 * refused rather than guessed.
 */
const UNIT_TO_REC20: Readonly<Record<string, string>> = {
  STK: 'H87',
  Stk: 'H87',
  stk: 'H87',
  Stück: 'H87',
  kg: 'KGM',
  g: 'GRM',
  t: 'TNE',
  l: 'LTR',
  m: 'MTR',
  km: 'KMT',
  m2: 'MTK',
  m3: 'MTQ',
  h: 'HUR',
  Std: 'HUR',
  STD: 'HUR',
  min: 'MIN',
  Paar: 'PR',
  Tag: 'DAY',
  Tage: 'DAY',
  Monat: 'MON',
};
const REC20_SHAPE = /^[A-Z0-9]{2,3}$/;

const VAT_ID = /^[A-Z]{2}[0-9A-Za-z+*.]{2,}$/;
/** ebInterface writes 00000000 when the party has no VAT identification number. */
const NO_VAT_ID = /^0+$/;

/** a × b / c, rounded half away from zero to two decimals (EN 16931 amounts); undefined when c is zero. */
export function productOver(a: string, b: string, c: string): string | undefined {
  const x = parse(a);
  const y = parse(b);
  const z = parse(c);
  if (z.units === 0n) return undefined;
  // value = x·y·10^z.scale / (z·10^(x.scale+y.scale)) in scaled units; in cents × 100.
  let num = x.units * y.units * 10n ** BigInt(z.scale) * 100n;
  let den = z.units * 10n ** BigInt(x.scale + y.scale);
  if (den < 0n) {
    den = -den;
    num = -num;
  }
  const neg = num < 0n;
  const abs = neg ? -num : num;
  let q = abs / den;
  if ((abs % den) * 2n >= den) q += 1n;
  const digits = q.toString().padStart(3, '0');
  return `${neg && q !== 0n ? '-' : ''}${digits.slice(0, -2)}.${digits.slice(-2)}`;
}

const percentOf = (base: string, percent: string): string => productOver(base, percent, '100') ?? '0.00';

const sum = (values: readonly string[]): string => values.reduce((s, v) => add(s, v), '0');
const same = (a: string, b: string): boolean => compare(a, b) === 0;

export function readEbInterface(doc: ReadDocument): ReadResult {
  const root = doc.documentElement;
  if (!root) throw new Error('empty document');
  const ns = root.namespaceURI ?? '';
  const version = EBINTERFACE_READ_NAMESPACES[ns];
  if (!version || root.localName !== 'Invoice')
    throw new Error(`not an ebInterface 5.0/6.0/6.1 Invoice (namespace ${ns})`);
  const c = new ReadContext();
  const ch = (el: ReadElement | undefined, local: string): ReadElement | undefined => c.child(el, ns, local);
  const all = (el: ReadElement | undefined, local: string): ReadElement[] => (el ? c.children(el, ns, local) : []);
  const text = (el: ReadElement | undefined, local: string): string | undefined => c.take(ch(el, local));
  const inv = emptyInvoice();
  const normalised: string[] = [];
  c.accept(root);
  inv.processControl = { specificationIdentifier: EN16931 };

  const docType = c.attr(root, 'DocumentType') ?? '';
  inv.typeCode = EBI_DOCUMENT_TYPE_TO_BT3[docType];
  if (inv.typeCode === undefined)
    c.problems.push({
      path: '/Invoice/@DocumentType',
      term: 'BT-3',
      message: `DocumentType "${docType}" is not an ebInterface document type`,
    });
  inv.currencyCode = c.attr(root, 'InvoiceCurrency');
  inv.number = text(root, 'InvoiceNumber');
  inv.issueDate = c.isoDate(ch(root, 'InvoiceDate'), 'BT-2');

  // BG-3: the cancelled original and related documents (partial invoices before a final settlement) precede this one.
  for (const ref of [...all(root, 'CancelledOriginalDocument'), ...all(root, 'RelatedDocument')]) {
    const reference = text(ref, 'InvoiceNumber');
    if (reference === undefined) continue;
    const issueDate = c.isoDate(ch(ref, 'InvoiceDate'), 'BT-26');
    inv.precedingInvoices.push(compact({ reference, issueDate }) as { reference: string });
  }

  // Delivery: BG-13 (date BT-72 or period as BG-14, address BG-15 with its name BT-70 and GLN BT-71), DeliveryID BT-16.
  const delivery = ch(root, 'Delivery');
  if (delivery) {
    inv.despatchAdviceReference = text(delivery, 'DeliveryID');
    const period = ch(delivery, 'Period');
    if (period)
      inv.invoicingPeriod = compact({
        startDate: c.isoDate(ch(period, 'FromDate'), 'BT-73'),
        endDate: c.isoDate(ch(period, 'ToDate'), 'BT-74'),
      });
    const addr = ch(delivery, 'Address');
    const gln = glnOf(c, ns, addr);
    const d = compact({
      actualDeliveryDate: c.isoDate(ch(delivery, 'Date'), 'BT-72'),
      partyName: text(addr, 'Name'),
      locationIdentifier: gln,
      address: addr ? postalAddress(c, ns, addr) : undefined,
    });
    if (d) inv.delivery = d;
  }

  // BG-4 Seller = Biller.
  const biller = ch(root, 'Biller');
  const bAddr = ch(biller, 'Address');
  inv.seller.name = text(bAddr, 'Name');
  inv.seller.tradingName = text(bAddr, 'TradingName');
  const sellerVat = vatId(c, ch(biller, 'VATIdentificationNumber'), true);
  if (sellerVat.vat) inv.seller.vatIdentifier = sellerVat.vat;
  // A tax number without country prefix is not a VAT identifier (BR-CO-09): it is the seller's tax registration.
  if (sellerVat.other) inv.seller.taxRegistrationIdentifier = sellerVat.other;
  const billerId = text(biller, 'InvoiceRecipientsBillerID');
  if (billerId !== undefined) inv.seller.identifiers.push({ value: billerId });
  const sellerGln = glnOf(c, ns, bAddr);
  if (sellerGln) inv.seller.identifiers.push(sellerGln);
  const sellerLegal = legalRegistration(c, ns, biller);
  if (sellerLegal) inv.seller.legalRegistrationIdentifier = sellerLegal;
  inv.salesOrderReference = text(ch(biller, 'OrderReference'), 'OrderID');
  if (bAddr) inv.seller.postalAddress = postalAddress(c, ns, bAddr);
  const sellerContact = contactOf(c, ns, bAddr, ch(biller, 'Contact'));
  if (sellerContact) inv.seller.contact = sellerContact;

  // BG-7 Buyer = InvoiceRecipient.
  const recipient = ch(root, 'InvoiceRecipient');
  const rAddr = ch(recipient, 'Address');
  inv.buyer.name = text(rAddr, 'Name');
  inv.buyer.tradingName = text(rAddr, 'TradingName');
  // A buyer tax number without country prefix has no EN 16931 term: it stays unmapped.
  const buyerVat = vatId(c, ch(recipient, 'VATIdentificationNumber'), false);
  if (buyerVat.vat) inv.buyer.vatIdentifier = buyerVat.vat;
  const recipientId = text(recipient, 'BillersInvoiceRecipientID');
  if (recipientId !== undefined) inv.buyer.identifier = { value: recipientId };
  else {
    const gln = glnOf(c, ns, rAddr);
    if (gln) inv.buyer.identifier = gln;
  }
  const buyerLegal = legalRegistration(c, ns, recipient);
  if (buyerLegal) inv.buyer.legalRegistrationIdentifier = buyerLegal;
  inv.purchaseOrderReference = text(ch(recipient, 'OrderReference'), 'OrderID');
  inv.buyerAccountingReference = text(recipient, 'AccountingArea');
  if (rAddr) inv.buyer.postalAddress = postalAddress(c, ns, rAddr);
  const buyerContact = contactOf(c, ns, rAddr, ch(recipient, 'Contact'));
  if (buyerContact) inv.buyer.contact = buyerContact;

  // BG-25 lines: every ListLineItem of every ItemList.
  const details = ch(root, 'Details');
  let index = 0;
  for (const list of all(details, 'ItemList')) {
    c.accept(list);
    for (const item of all(list, 'ListLineItem')) {
      index++;
      inv.lines.push(readLine(c, ns, item, index, inv.purchaseOrderReference, normalised));
    }
  }
  c.accept(details);
  const belowTheLine = all(details, 'BelowTheLineItem');

  // BG-20 / BG-21 from ReductionAndSurchargeDetails (OtherVATableTax has no EN 16931 term: unmapped).
  const rsd = ch(root, 'ReductionAndSurchargeDetails');
  if (rsd) {
    c.accept(rsd);
    for (let n = rsd.firstChild; n; n = n.nextSibling) {
      if (n.nodeType !== 1) continue;
      const e = n as ReadElement;
      if ((e.namespaceURI ?? '') !== ns || (e.localName !== 'Reduction' && e.localName !== 'Surcharge')) continue;
      inv.allowanceCharges.push(documentAllowanceCharge(c, ns, e));
    }
  }

  // BG-23 from Tax/TaxItem (OtherTax is not VAT: unmapped).
  const tax = ch(root, 'Tax');
  c.accept(tax);
  for (const ti of all(tax, 'TaxItem')) inv.vatBreakdown.push(vatBreakdown(c, ns, ti));

  // BG-22: stated totals, derived sums.
  inv.totals.totalWithVat = c.decimal(ch(root, 'TotalGrossAmount'), 'BT-112');
  inv.totals.paidAmount = c.decimal(ch(root, 'PrepaidAmount'), 'BT-113');
  inv.totals.roundingAmount = c.decimal(ch(root, 'RoundingAmount'), 'BT-114');
  inv.totals.amountDueForPayment = c.decimal(ch(root, 'PayableAmount'), 'BT-115');
  deriveTotals(inv, c, belowTheLine.length > 0 ? belowTheLine.map((b) => c.take(ch(b, 'LineItemAmount')) ?? '0') : []);

  readPayment(c, ns, inv, ch(root, 'PaymentMethod'));
  const conditions = ch(root, 'PaymentConditions');
  if (conditions) {
    c.accept(conditions);
    inv.paymentDueDate = c.isoDate(ch(conditions, 'DueDate'), 'BT-9');
    inv.paymentTerms = text(conditions, 'Comment');
  }
  const comment = text(root, 'Comment');
  if (comment !== undefined && comment !== '') inv.notes.push({ note: comment });

  const cleaned = compact(inv) as Invoice;
  return {
    invoice: { ...emptyInvoice(), ...cleaned },
    syntax: 'ebInterface',
    unmapped: c.unmapped(root),
    problems: c.problems,
    normalised,
  };
}

function vatId(c: ReadContext, el: ReadElement | undefined, takeOther: boolean): { vat?: string; other?: string } {
  const v = (el?.textContent ?? '').replace(/\s+/g, '');
  if (!el || v === '' || NO_VAT_ID.test(v)) {
    c.accept(el);
    return {};
  }
  const isVat = VAT_ID.test(v) && v.slice(0, 2) !== 'UI';
  if (isVat || takeOther) c.take(el);
  return isVat ? { vat: v } : takeOther ? { other: v } : {};
}

/** GLN address identifiers become identifiers with ICD 0088; other identifier types stay unmapped. */
function glnOf(
  c: ReadContext,
  ns: string,
  addr: ReadElement | undefined,
): { value: string; schemeId: string } | undefined {
  if (!addr) return undefined;
  for (const id of c.children(addr, ns, 'AddressIdentifier')) {
    if (id.getAttribute('AddressIdentifierType') !== 'GLN') continue;
    c.attr(id, 'AddressIdentifierType');
    return { value: c.take(id) ?? '', schemeId: '0088' };
  }
  return undefined;
}

/**
 * FurtherIdentification: the Austrian company register number (FN, also written FBNR) is the legal registration
 * identifier; a type that is an ISO 6523 ICD (four digits, as this gateway writes) is that identifier with its scheme.
 */
function legalRegistration(
  c: ReadContext,
  ns: string,
  party: ReadElement | undefined,
): { value: string; schemeId?: string } | undefined {
  if (!party) return undefined;
  for (const fi of c.children(party, ns, 'FurtherIdentification')) {
    const type = fi.getAttribute('IdentificationType') ?? '';
    if (type !== 'FN' && type !== 'FBNR' && !/^\d{4}$/.test(type)) continue;
    c.attr(fi, 'IdentificationType');
    const value = c.take(fi) ?? '';
    return /^\d{4}$/.test(type) ? { value, schemeId: type } : { value };
  }
  return undefined;
}

function postalAddress(c: ReadContext, ns: string, addr: ReadElement): PostalAddress | undefined {
  const country = c.child(addr, ns, 'Country');
  c.accept(country); // its text is the country's name; the code is the attribute
  return compact({
    line1: c.take(c.child(addr, ns, 'Street')),
    city: c.take(c.child(addr, ns, 'Town')),
    postCode: c.take(c.child(addr, ns, 'ZIP')),
    countryCode: c.attr(country, 'CountryCode'),
  });
}

/** BG-6 / BG-9: the contact person's name, phone and email, falling back to the address's phone and email. */
function contactOf(
  c: ReadContext,
  ns: string,
  addr: ReadElement | undefined,
  contact: ReadElement | undefined,
): Contact | undefined {
  const first = (el: ReadElement | undefined, local: string): string | undefined =>
    c.take(el ? c.children(el, ns, local)[0] : undefined);
  const point = first(contact, 'Name');
  const telephone = first(contact, 'Phone') ?? first(addr, 'Phone');
  const email = first(contact, 'Email') ?? first(addr, 'Email');
  return compact({ point, telephone, email });
}

function readLine(
  c: ReadContext,
  ns: string,
  item: ReadElement,
  index: number,
  orderId: string | undefined,
  normalised: string[],
): InvoiceLine {
  const ch = (el: ReadElement | undefined, local: string): ReadElement | undefined => c.child(el, ns, local);
  c.accept(item);
  const descriptions = c.children(item, ns, 'Description').map((d) => c.take(d) ?? '');
  const line: InvoiceLine = {
    // PositionNumber is optional in ebInterface; BT-126 is then the line's position in the document.
    identifier: c.take(ch(item, 'PositionNumber')) ?? String(index),
    allowanceCharges: [],
    price: {},
    vat: {},
    item: { classificationIdentifiers: [], attributes: [] },
  };
  if (descriptions[0] !== undefined) line.item.name = descriptions[0];
  if (descriptions.length > 1) line.item.description = descriptions.slice(1).join('\n');
  for (const an of c.children(item, ns, 'ArticleNumber')) {
    const type = an.getAttribute('ArticleNumberType');
    if (type === 'BillersArticleNumber' && line.item.sellersIdentifier === undefined)
      line.item.sellersIdentifier = c.take(an);
    else if (type === 'InvoiceRecipientsArticleNumber' && line.item.buyersIdentifier === undefined)
      line.item.buyersIdentifier = c.take(an);
    else if (type === 'GTIN' && line.item.standardIdentifier === undefined)
      line.item.standardIdentifier = { value: c.take(an) ?? '', schemeId: '0160' };
    else continue;
    c.attr(an, 'ArticleNumberType');
  }
  const qty = ch(item, 'Quantity');
  line.quantity = c.decimal(qty, 'BT-129');
  const unit = c.attr(qty, 'Unit');
  const rec20 = unit !== undefined ? UNIT_TO_REC20[unit] : undefined;
  if (rec20 !== undefined && qty) {
    line.quantityUnitCode = rec20;
    normalised.push(`BT-130 unit "${unit}" at ${pathOf(qty)} written as UN/ECE Rec 20 code ${rec20}`);
  } else if (unit !== undefined && unit !== '') {
    line.quantityUnitCode = unit;
    if (!REC20_SHAPE.test(unit) && qty)
      c.problems.push({
        path: `${pathOf(qty)}/@Unit`,
        term: 'BT-130',
        message: `unit "${unit}" is not a UN/ECE Recommendation 20 code, which EN 16931 requires`,
      });
  }
  const price = ch(item, 'UnitPrice');
  line.price.netPrice = c.decimal(price, 'BT-146');
  const base = c.attr(price, 'BaseQuantity');
  if (base !== undefined) line.price.baseQuantity = base;
  const rs = ch(item, 'ReductionAndSurchargeListLineItemDetails');
  if (rs) {
    c.accept(rs);
    for (let n = rs.firstChild; n; n = n.nextSibling) {
      if (n.nodeType !== 1) continue;
      const e = n as ReadElement;
      if (
        (e.namespaceURI ?? '') !== ns ||
        (e.localName !== 'ReductionListLineItem' && e.localName !== 'SurchargeListLineItem')
      )
        continue;
      line.allowanceCharges.push(allowanceCharge(c, ns, e, e.localName === 'SurchargeListLineItem', 'BT-136'));
    }
  }
  // A line Delivery with only a period is the line period (BG-26); anything else of it stays unmapped.
  const lineDelivery = ch(item, 'Delivery');
  const linePeriod = ch(lineDelivery, 'Period');
  if (linePeriod) {
    c.accept(lineDelivery);
    line.period = compact({
      startDate: c.isoDate(ch(linePeriod, 'FromDate'), 'BT-134'),
      endDate: c.isoDate(ch(linePeriod, 'ToDate'), 'BT-135'),
    });
  }
  const order = ch(item, 'InvoiceRecipientsOrderReference');
  if (order) {
    const id = ch(order, 'OrderID');
    // The line's order must be the document's (BT-13); only then is its position BT-132.
    if (orderId !== undefined && (id?.textContent ?? '').trim() === orderId) {
      c.take(id);
      line.purchaseOrderLineReference = c.take(ch(order, 'OrderPositionNumber'));
    }
  }
  for (const cl of c.children(item, ns, 'Classification')) {
    const scheme = cl.getAttribute('ClassificationSchema') ?? '';
    // Only UNTDID 7143 codes are EN 16931 classification schemes (BT-158-1).
    if (!/^[A-Z]{2,3}$/.test(scheme)) continue;
    c.attr(cl, 'ClassificationSchema');
    line.item.classificationIdentifiers.push({ value: c.take(cl) ?? '', schemeId: scheme });
  }
  for (const ai of c.children(item, ns, 'AdditionalInformation')) {
    const key = c.attr(ai, 'Key');
    const value = c.take(ai) ?? '';
    if (key === undefined) line.note = line.note === undefined ? value : `${line.note}\n${value}`;
    else line.item.attributes.push({ name: key, value });
  }
  const ti = ch(item, 'TaxItem');
  c.accept(ti);
  c.take(ch(ti, 'TaxableAmount')); // repeats LineItemAmount
  const tp = ch(ti, 'TaxPercent');
  const code = c.attr(tp, 'TaxCategoryCode') ?? '';
  const cat = categoryOf(code);
  if (cat === undefined && tp)
    c.problems.push({
      path: pathOf(tp),
      term: 'BT-151',
      message: `tax category "${code}" has no EN 16931 VAT category`,
    });
  const rate = c.decimal(tp, 'BT-152');
  // ebInterface always states a percentage; "not subject to VAT" (O) has no rate in EN 16931 (BR-O-05).
  line.vat = compact({ categoryCode: cat, rate: cat === 'O' ? undefined : rate }) ?? {};
  line.netAmount = c.decimal(ch(item, 'LineItemAmount'), 'BT-131');
  return compact(line) as InvoiceLine;
}

function allowanceCharge(
  c: ReadContext,
  ns: string,
  e: ReadElement,
  charge: boolean,
  term: string,
): LineAllowanceCharge {
  c.accept(e);
  const baseAmount = c.decimal(c.child(e, ns, 'BaseAmount'), term);
  const percentage = c.decimal(c.child(e, ns, 'Percentage'), term);
  let amount = c.decimal(c.child(e, ns, 'Amount'), term);
  // Amount is optional in ebInterface: then it is the percentage of the base.
  if (
    amount === undefined &&
    baseAmount !== undefined &&
    percentage !== undefined &&
    isDecimal(baseAmount) &&
    isDecimal(percentage)
  )
    amount = percentOf(baseAmount, percentage);
  if (amount === undefined)
    c.problems.push({
      path: pathOf(e),
      term,
      message: 'a reduction or surcharge needs an Amount, or a BaseAmount and Percentage',
    });
  const cl = c.child(e, ns, 'Classification');
  const schema = cl?.getAttribute('ClassificationSchema');
  // Reason codes travel as a Classification of scheme UNCL5189 (allowances) or UNCL7161 (charges).
  const reasonCode =
    schema === (charge ? 'UNCL7161' : 'UNCL5189') ? (c.attr(cl, 'ClassificationSchema'), c.take(cl)) : undefined;
  return compact({
    charge,
    amount: amount ?? '0',
    baseAmount,
    percentage,
    reason: c.take(c.child(e, ns, 'Comment')),
    reasonCode,
  }) as LineAllowanceCharge;
}

function documentAllowanceCharge(c: ReadContext, ns: string, e: ReadElement): DocumentAllowanceCharge {
  const charge = e.localName === 'Surcharge';
  const ac: DocumentAllowanceCharge = { ...allowanceCharge(c, ns, e, charge, charge ? 'BT-99' : 'BT-92') };
  const ti = c.child(e, ns, 'TaxItem');
  c.accept(ti);
  c.take(c.child(ti, ns, 'TaxableAmount')); // the reduction's own amount again
  const tp = c.child(ti, ns, 'TaxPercent');
  const code = c.attr(tp, 'TaxCategoryCode') ?? '';
  const cat = categoryOf(code);
  if (tp && cat === undefined)
    c.problems.push({
      path: pathOf(tp),
      term: charge ? 'BT-102' : 'BT-95',
      message: `tax category "${code}" has no EN 16931 VAT category`,
    });
  if (cat !== undefined) ac.vatCategoryCode = cat;
  const rate = c.decimal(tp, charge ? 'BT-103' : 'BT-96');
  if (rate !== undefined && cat !== 'O') ac.vatRate = rate;
  return ac;
}

function vatBreakdown(c: ReadContext, ns: string, ti: ReadElement): VatBreakdown {
  c.accept(ti);
  const tp = c.child(ti, ns, 'TaxPercent');
  const code = c.attr(tp, 'TaxCategoryCode') ?? '';
  const categoryCode = categoryOf(code);
  if (tp && categoryCode === undefined)
    c.problems.push({
      path: pathOf(tp),
      term: 'BT-118',
      message: `tax category "${code}" has no EN 16931 VAT category`,
    });
  const rate = c.decimal(tp, 'BT-119');
  const taxableAmount = c.decimal(c.child(ti, ns, 'TaxableAmount'), 'BT-116');
  let taxAmount = c.decimal(c.child(ti, ns, 'TaxAmount'), 'BT-117');
  // TaxAmount is optional in ebInterface: the tax of the taxable amount at the rate.
  if (
    taxAmount === undefined &&
    taxableAmount !== undefined &&
    rate !== undefined &&
    isDecimal(taxableAmount) &&
    isDecimal(rate)
  )
    taxAmount = percentOf(taxableAmount, rate);
  const comment = c.child(ti, ns, 'Comment');
  const exemptionReasonText =
    categoryCode !== undefined && EXEMPT_CATEGORIES.has(categoryCode) ? c.take(comment) : undefined;
  return compact({
    taxableAmount,
    taxAmount,
    categoryCode,
    rate: categoryCode === 'O' ? undefined : rate,
    exemptionReasonText,
  }) as VatBreakdown;
}

/**
 * BT-106..BT-110 from the document, and the EN 16931 calculation rules checked against what ebInterface states:
 * a document whose stated totals disagree cannot become a valid EN 16931 invoice.
 */
function deriveTotals(inv: Invoice, c: ReadContext, belowTheLine: string[]): void {
  const ok = (v: string | undefined): v is string => v !== undefined && isDecimal(v);
  const lineAmounts = inv.lines.map((l) => l.netAmount);
  const acs = inv.allowanceCharges.map((a) => a.amount);
  const taxes = inv.vatBreakdown.map((v) => v.taxAmount);
  if (!lineAmounts.every(ok) || !acs.every(ok) || !taxes.every(ok)) return;
  const t = inv.totals;
  t.sumOfLineNetAmounts = sum(lineAmounts);
  const allowances = inv.allowanceCharges.filter((a) => !a.charge).map((a) => a.amount);
  const charges = inv.allowanceCharges.filter((a) => a.charge).map((a) => a.amount);
  if (allowances.length > 0) t.sumOfAllowances = sum(allowances);
  if (charges.length > 0) t.sumOfCharges = sum(charges);
  t.totalWithoutVat = subtract(add(t.sumOfLineNetAmounts, t.sumOfCharges ?? '0'), t.sumOfAllowances ?? '0');
  t.totalVatAmount = sum(taxes);
  if (ok(t.totalWithVat) && !same(t.totalWithVat, add(t.totalWithoutVat, t.totalVatAmount))) {
    c.problems.push({
      path: '/Invoice/TotalGrossAmount',
      term: 'BT-112',
      message:
        `TotalGrossAmount ${t.totalWithVat} is not the lines (${t.sumOfLineNetAmounts}) less reductions plus ` +
        `surcharges (${t.totalWithoutVat}) plus VAT (${t.totalVatAmount}) = ` +
        `${add(t.totalWithoutVat, t.totalVatAmount)}, as EN 16931 requires (BR-CO-15)`,
    });
  }
  if (belowTheLine.length > 0) {
    c.problems.push({
      path: '/Invoice/Details/BelowTheLineItem',
      term: 'BT-115',
      message:
        `BelowTheLineItem (${belowTheLine.join(', ')} added after VAT) has no EN 16931 term: the amount due ` +
        `would not be BT-112 − BT-113 + BT-114 (BR-CO-16)`,
    });
  } else if (ok(t.totalWithVat) && ok(t.amountDueForPayment)) {
    const expected = add(subtract(t.totalWithVat, t.paidAmount ?? '0'), t.roundingAmount ?? '0');
    if (!same(expected, t.amountDueForPayment)) {
      c.problems.push({
        path: '/Invoice/PayableAmount',
        term: 'BT-115',
        message:
          `PayableAmount ${t.amountDueForPayment} is not TotalGrossAmount − PrepaidAmount + RoundingAmount = ` +
          `${expected} (BR-CO-16)`,
      });
    }
  }
  // Per VAT category and rate, the taxable amount is the lines plus surcharges less reductions of that category
  // (BR-S-08 and kin).
  for (const v of inv.vatBreakdown) {
    if (!ok(v.taxableAmount) || v.categoryCode === undefined) continue;
    const key = (cat: string | undefined, rate: string | undefined): boolean =>
      cat === v.categoryCode && (v.rate === undefined || (rate !== undefined && isDecimal(rate) && same(rate, v.rate)));
    const lines = inv.lines.filter((l) => key(l.vat.categoryCode, l.vat.rate ?? '0')).map((l) => l.netAmount as string);
    const docCharges = inv.allowanceCharges
      .filter((a) => a.charge && key(a.vatCategoryCode, a.vatRate ?? '0'))
      .map((a) => a.amount);
    const docAllowances = inv.allowanceCharges
      .filter((a) => !a.charge && key(a.vatCategoryCode, a.vatRate ?? '0'))
      .map((a) => a.amount);
    const expected = subtract(add(sum(lines), sum(docCharges)), sum(docAllowances));
    if (!same(expected, v.taxableAmount)) {
      c.problems.push({
        path: '/Invoice/Tax/TaxItem',
        term: 'BT-116',
        message:
          `TaxableAmount ${v.taxableAmount} of category ` +
          `${v.categoryCode}${v.rate !== undefined ? ` ${v.rate} %` : ''} is not the sum of its lines, surcharges ` +
          `and reductions (${expected}) (BR-${v.categoryCode}-08)`,
      });
    }
  }
}

function readPayment(c: ReadContext, ns: string, inv: Invoice, pm: ReadElement | undefined): void {
  if (!pm) return;
  c.accept(pm);
  const ch = (el: ReadElement | undefined, local: string): ReadElement | undefined => c.child(el, ns, local);
  const meansText = c.take(ch(pm, 'Comment'));
  const ubt = ch(pm, 'UniversalBankTransaction');
  const sepa = ch(pm, 'SEPADirectDebit');
  const card = ch(pm, 'PaymentCard');
  const other = ch(pm, 'OtherPayment');
  const noPayment = ch(pm, 'NoPayment');
  c.accept(noPayment);
  c.accept(other);
  const p: Invoice['paymentInstructions'] & object = {
    creditTransfers: [],
    ...(meansText !== undefined ? { meansText } : {}),
  };
  if (ubt) {
    c.accept(ubt);
    const accounts = c.children(ubt, ns, 'BeneficiaryAccount');
    for (const a of accounts) {
      c.accept(a);
      const iban = c.take(ch(a, 'IBAN'));
      const accountIdentifier = iban ?? c.take(ch(a, 'BankAccountNr'));
      if (accountIdentifier === undefined) continue;
      const bic = c.take(ch(a, 'BIC'));
      p.creditTransfers.push(
        compact({
          accountIdentifier,
          accountName: c.take(ch(a, 'BankAccountOwner')),
          serviceProviderIdentifier: bic === '' ? undefined : bic,
        }) as { accountIdentifier: string },
      );
    }
    // 58 SEPA credit transfer where every account is an IBAN, else 30 credit transfer.
    p.meansTypeCode = accounts.length > 0 && accounts.every((a) => ch(a, 'IBAN')) ? '58' : '30';
    p.remittanceInformation = c.take(ch(ubt, 'PaymentReference'));
  } else if (sepa) {
    c.accept(sepa);
    p.meansTypeCode = '59';
    p.directDebit = compact({
      mandateReference: c.take(ch(sepa, 'MandateReference')),
      bankAssignedCreditorIdentifier: c.take(ch(sepa, 'CreditorID')),
      debitedAccountIdentifier: c.take(ch(sepa, 'IBAN')),
    });
  } else if (card) {
    c.accept(card);
    p.meansTypeCode = '48';
    const pan = c.take(ch(card, 'PrimaryAccountNumber')) ?? '';
    p.card = compact({ primaryAccountNumber: pan, holderName: c.take(ch(card, 'CardHolderName')) });
  } else if (other) {
    p.meansTypeCode = 'ZZZ';
  }
  const out = paymentOrNothing(p);
  if (out) inv.paymentInstructions = out;
}
