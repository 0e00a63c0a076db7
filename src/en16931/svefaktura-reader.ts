import type { ReadDocument, ReadElement } from '../formats/xml/read-tree';
import { GatewayError } from '../core/gateway-error';
import { NS } from '../formats/xml/namespaces';
import { add, isDecimal, subtract } from './decimal';
import {
  emptyInvoice,
  type Contact,
  type CreditTransfer,
  type Identifier,
  type InvoiceLine,
  type PostalAddress,
  type ReadResult,
} from './model';
import { compact, pathOf, ReadContext } from './xml-read';

/**
 * Svefaktura 1.0 (SFTI BasicInvoice, a UBL 1.0 subset) → EN 16931 model, following SFTI's "Mapping of Svefaktura 1.0
 * onto EN 16931-1" and the Swedish practice of Peppol BIS Billing 3:
 * - the SWT party tax scheme holds the organisation number (BT-30 / BT-47, ICD 0007) and the F-tax statement
 *   ("Godkänd för F-skatt", BT-32); the VAT scheme the VAT number (BT-31 / BT-48);
 * - RequisitionistDocumentReference (the buyer's reference, "Er referens") is BT-10;
 * - the order number only travels per line (OrderLineReference/OrderReference/BuyersID): one value for all lines is
 * BT-13;
 * - Bankgiro and Plusgiro accounts (FinancialInstitution BGABSESS / PGSISESS) become credit transfers (BT-81 = 30)
 *   with BT-86 "SE:BANKGIRO" / "SE:PLUSGIRO", the OCR reference (PaymentInstructionID) BT-83;
 * - TaxInclusiveTotalAmount includes RoundOffAmount (SFTI rule: lines + charges − allowances + tax + round-off), so it
 *   is BT-115, BT-114 the round-off and BT-112 the difference;
 * - Svefaktura does not require the VAT category per line: with a single VAT breakdown it is that one.
 * Values derived this way are listed in `filled`; elements without an EN 16931 home stay in `unmapped`; what EN 16931
 * cannot take as it is (no country in an address, allowances without a reason) is a read problem (422).
 */

const S = NS.svefaktura10;
const A = 'urn:sfti:CommonAggregateComponents:1:0';
const C = 'urn:oasis:names:tc:ubl:CommonBasicComponents:1:0';

/** SFTI identifier agency 9 is GS1: a GLN for parties (ICD 0088), a GTIN for items (ICD 0160). */
const GS1_AGENCY = '9';
const BANKGIRO_BIC = 'BGABSESS';
const PLUSGIRO_BIC = 'PGSISESS';
const CREDIT_TRANSFER_CODES = new Set(['30', '31', '42', '58']);

interface PartyRead {
  name?: string;
  tradingName?: string;
  glns: string[];
  otherIds: Identifier[];
  orgNumber?: string;
  fTax?: string;
  vat?: string;
  address?: PostalAddress;
  registrationCountry?: string;
  contact?: Contact;
}

export function readSvefaktura(doc: ReadDocument): ReadResult {
  const root = doc.documentElement;
  if (!root || root.localName !== 'Invoice' || root.namespaceURI !== S) {
    throw new GatewayError('UNKNOWN_FORMAT', `not a Svefaktura 1.0 BasicInvoice: <${root?.nodeName ?? ''}>`);
  }
  const x = new ReadContext();
  const inv = emptyInvoice();
  const filled: string[] = [];
  const own = (el: ReadElement | undefined, local: string): ReadElement | undefined => x.child(el, S, local);
  const agg = (el: ReadElement | undefined, local: string): ReadElement | undefined => x.child(el, A, local);
  const aggs = (el: ReadElement | undefined, local: string): ReadElement[] => (el ? x.children(el, A, local) : []);
  const kid = (el: ReadElement | undefined, local: string): ReadElement | undefined => x.child(el, C, local);
  const val = (el: ReadElement | undefined, local: string): string | undefined => x.take(kid(el, local));
  const problem = (el: ReadElement, term: string, message: string): void => {
    x.problems.push({ path: pathOf(el), term, message });
  };
  /** UBL 1.0 DateTime → the date part (EN 16931 has dates only). */
  const dateOf = (el: ReadElement | undefined, term: string): string | undefined => {
    const v = x.take(el);
    if (v === undefined || !el) return undefined;
    const m = /^(\d{4}-\d{2}-\d{2})(T[0-9:.]+(Z|[+-]\d{2}:\d{2})?)?$/.exec(v);
    if (!m) {
      problem(el, term, `"${v}" is not a date or date-time`);
      return v;
    }
    return m[1];
  };

  inv.processControl = { specificationIdentifier: NS.svefaktura10 };
  inv.number = x.take(own(root, 'ID'));
  inv.issueDate = x.isoDate(kid(root, 'IssueDate'), 'BT-2');
  inv.typeCode = x.take(own(root, 'InvoiceTypeCode'));
  const note = val(root, 'Note');
  if (note !== undefined) inv.notes.push({ note });
  inv.vatPointDate = x.isoDate(own(root, 'TaxPointDate'), 'BT-7');
  inv.currencyCode = x.take(own(root, 'InvoiceCurrencyCode'));
  inv.vatAccountingCurrencyCode = x.take(own(root, 'TaxCurrencyCode'));

  const lineCount = own(root, 'LineItemCountNumeric');
  // A control count with no EN 16931 term: redundant when it matches the lines, reported when it does not.
  if (lineCount && (lineCount.textContent ?? '').trim() === String(x.children(root, A, 'InvoiceLine').length))
    x.accept(lineCount);

  for (const d of x.children(root, S, 'AdditionalDocumentReference')) {
    const reference = x.take(agg(d, 'ID'));
    if (reference !== undefined) inv.supportingDocuments.push({ reference });
  }
  const requisitionist = x.children(root, S, 'RequisitionistDocumentReference');
  inv.buyerReference = x.take(agg(requisitionist[0], 'ID'));
  for (const d of x.children(root, S, 'InitialInvoiceDocumentReference')) {
    const reference = x.take(agg(d, 'ID'));
    if (reference !== undefined) inv.precedingInvoices.push({ reference });
  }
  const period = own(root, 'InvoicingPeriod');
  if (period) {
    const p = compact({
      startDate: dateOf(kid(period, 'StartDateTime'), 'BT-73'),
      endDate: dateOf(kid(period, 'EndDateTime'), 'BT-74'),
    });
    if (p) inv.invoicingPeriod = p;
  }

  // --- parties ---------------------------------------------------------------------------------------------------
  const readParty = (party: ReadElement | undefined): PartyRead => {
    const out: PartyRead = { glns: [], otherIds: [] };
    if (!party) return out;
    for (const pi of aggs(party, 'PartyIdentification')) {
      const idEl = agg(pi, 'ID');
      const value = x.take(idEl);
      if (value === undefined) continue;
      if (x.attr(idEl, 'identificationSchemeAgencyID') === GS1_AGENCY) out.glns.push(value);
      else out.otherIds.push({ value });
    }
    const names = aggs(party, 'PartyName').flatMap((pn) => x.children(pn, C, 'Name'));
    const name = x.take(names[0]);
    const address = readAddress(agg(party, 'Address'));
    if (address) out.address = address;
    for (const pts of aggs(party, 'PartyTaxScheme')) {
      const scheme = x.take(agg(agg(pts, 'TaxScheme'), 'ID'));
      const company = agg(pts, 'CompanyID');
      const regCountry = x.take(agg(agg(agg(pts, 'RegistrationAddress'), 'Country'), 'IdentificationCode'));
      if (regCountry !== undefined) out.registrationCountry ??= regCountry;
      if (scheme === 'VAT') out.vat = x.take(company);
      else if (scheme === 'SWT') {
        out.orgNumber = x.take(company);
        const regName = val(pts, 'RegistrationName');
        if (regName !== undefined) out.name = regName;
        const reason = val(pts, 'ExemptionReason');
        if (reason !== undefined) out.fTax = reason;
      }
    }
    // The registered name (SWT RegistrationName) is the legal name (BT-27); the party name then is the trading name.
    if (out.name === undefined) out.name = name;
    else if (name !== undefined && name !== out.name) out.tradingName = name;
    const contact = readContact(agg(party, 'Contact'));
    if (contact) out.contact = contact;
    return out;
  };
  const readAddress = (a: ReadElement | undefined): PostalAddress | undefined => {
    if (!a) return undefined;
    const street = val(a, 'StreetName');
    const postbox = val(a, 'Postbox');
    const line = x.take(kid(agg(a, 'AddressLine'), 'Line'));
    return compact({
      line1: street ?? postbox,
      line2: street !== undefined ? postbox : undefined,
      line3: line,
      city: val(a, 'CityName'),
      postCode: val(a, 'PostalZone'),
      countryCode: x.take(agg(agg(a, 'Country'), 'IdentificationCode')),
    });
  };
  const readContact = (c: ReadElement | undefined): Contact | undefined => {
    if (!c) return undefined;
    return compact({ point: val(c, 'Name'), telephone: val(c, 'Telephone'), email: val(c, 'ElectronicMail') });
  };
  /** BT-40 / BT-55: the address's country, else the registration address's, else the VAT number's prefix. */
  const country = (p: PartyRead, who: string, term: string): void => {
    if (p.address?.countryCode !== undefined) return;
    const fromVat = p.vat !== undefined && /^[A-Z]{2}/.test(p.vat) ? p.vat.slice(0, 2).replace('EL', 'GR') : undefined;
    const code = p.registrationCountry ?? fromVat;
    if (code === undefined) return;
    p.address = { ...(p.address ?? {}), countryCode: code };
    filled.push(
      `${term} ${who} country code = "${code}" (the address has no country; taken from the ` +
        `${p.registrationCountry !== undefined ? 'tax registration address' : 'VAT identifier prefix'})`,
    );
  };
  /**
   * BT-34 / BT-49: Svefaktura has no electronic address; a GLN (0088) or a Swedish organisation number (0007) is the
   * Peppol one.
   */
  const endpoint = (p: PartyRead, who: string, term: string): Identifier | undefined => {
    const gln = p.glns[0];
    const e =
      gln !== undefined
        ? { value: gln, schemeId: '0088' }
        : p.orgNumber !== undefined && p.address?.countryCode === 'SE'
          ? { value: p.orgNumber, schemeId: '0007' }
          : undefined;
    if (e)
      filled.push(
        `${term} ${who} electronic address = ${e.schemeId}:${e.value} (Svefaktura has none; the party's ` +
          `${e.schemeId === '0088' ? 'GLN' : 'organisation number'})`,
      );
    return e;
  };
  const legalId = (p: PartyRead): Identifier | undefined =>
    p.orgNumber === undefined
      ? undefined
      : p.address?.countryCode === 'SE'
        ? { value: p.orgNumber, schemeId: '0007' }
        : { value: p.orgNumber };

  const sellerParty = agg(root, 'SellerParty');
  const s = readParty(agg(sellerParty, 'Party'));
  country(s, 'Seller', 'BT-40');
  let sellerContact = s.contact;
  const accounts = agg(sellerParty, 'AccountsContact');
  if (!sellerContact && accounts) sellerContact = readContact(accounts);
  const sEndpoint = endpoint(s, 'Seller', 'BT-34');
  inv.seller = compact({
    name: s.name,
    tradingName: s.tradingName,
    identifiers: [...s.glns.map((value) => ({ value, schemeId: '0088' })), ...s.otherIds],
    legalRegistrationIdentifier: legalId(s),
    vatIdentifier: s.vat,
    taxRegistrationIdentifier: s.fTax,
    electronicAddress: sEndpoint,
    postalAddress: s.address,
    contact: sellerContact,
  }) as typeof inv.seller;
  inv.seller.identifiers ??= [];
  // The GLN given as BT-34 is not repeated as BT-29 (the same identifier twice adds nothing).
  if (sEndpoint?.schemeId === '0088')
    inv.seller.identifiers = inv.seller.identifiers.filter((i) => i.value !== sEndpoint.value);

  const b = readParty(agg(agg(root, 'BuyerParty'), 'Party'));
  country(b, 'Buyer', 'BT-55');
  const bEndpoint = endpoint(b, 'Buyer', 'BT-49');
  const buyerId =
    b.glns.length > 0 && bEndpoint?.schemeId !== '0088'
      ? { value: b.glns[0] as string, schemeId: '0088' }
      : b.otherIds[0];
  inv.buyer =
    compact({
      name: b.name,
      tradingName: b.tradingName,
      identifier: buyerId,
      legalRegistrationIdentifier: legalId(b),
      vatIdentifier: b.vat,
      electronicAddress: bEndpoint,
      postalAddress: b.address,
      contact: b.contact,
    }) ?? {};

  // --- delivery ------------------------------------------------------------------------------------------------
  const delivery = agg(root, 'Delivery');
  if (delivery) {
    const date = dateOf(kid(delivery, 'ActualDeliveryDateTime'), 'BT-72');
    const addrEl = agg(delivery, 'DeliveryAddress');
    const address = readAddress(addrEl);
    if (addrEl && address && address.countryCode === undefined) {
      problem(
        addrEl,
        'BT-80',
        'the deliver-to address has no country code, which EN 16931 requires for every address (BR-57)',
      );
    }
    const d = compact({ actualDeliveryDate: date, address });
    if (d) inv.delivery = d;
  }

  // --- payment ---------------------------------------------------------------------------------------------------
  const means = aggs(root, 'PaymentMeans');
  const transfers: CreditTransfer[] = [];
  let meansCode: string | undefined;
  for (const pm of means) {
    const codeEl = agg(pm, 'PaymentMeansTypeCode');
    const code = (codeEl?.textContent ?? '').trim();
    const acct = agg(pm, 'PayeeFinancialAccount');
    const accountEl = agg(acct, 'ID');
    const bicEl = agg(agg(agg(acct, 'FinancialInstitutionBranch'), 'FinancialInstitution'), 'ID');
    const bic = (bicEl?.textContent ?? '').trim();
    const giro = bic === BANKGIRO_BIC ? 'SE:BANKGIRO' : bic === PLUSGIRO_BIC ? 'SE:PLUSGIRO' : undefined;
    // Code 1 ("instrument not defined") with an account to pay to is a credit transfer, as SFTI maps it.
    const mapped = accountEl && (giro !== undefined || code === '1') ? '30' : code;
    // A second kind of payment means: EN 16931 has one (left unmapped).
    if (meansCode !== undefined && mapped !== meansCode) continue;
    const remittanceEl = agg(acct, 'PaymentInstructionID');
    const remittance = (remittanceEl?.textContent ?? '').trim() || undefined;
    if (
      inv.paymentInstructions?.remittanceInformation !== undefined &&
      remittance !== undefined &&
      remittance !== inv.paymentInstructions.remittanceInformation
    )
      continue;
    const due = kid(pm, 'DuePaymentDate');
    const dueValue = (due?.textContent ?? '').trim() || undefined;
    if (inv.paymentDueDate !== undefined && dueValue !== undefined && dueValue !== inv.paymentDueDate) continue;
    x.take(codeEl);
    if (meansCode === undefined && mapped !== code)
      filled.push(
        `BT-81 Payment means type code = "${mapped}" (Svefaktura code "${code}" with ${giro ?? 'an account'}: a ` +
          `credit transfer)`,
      );
    meansCode = mapped;
    if (due) inv.paymentDueDate = x.isoDate(due, 'BT-9');
    x.take(remittanceEl);
    inv.paymentInstructions ??= { creditTransfers: [] };
    inv.paymentInstructions.meansTypeCode = mapped;
    if (remittance !== undefined) inv.paymentInstructions.remittanceInformation = remittance;
    const account = x.take(accountEl);
    if (account !== undefined) {
      x.take(bicEl);
      if (giro)
        filled.push(
          `BT-86 Payment service provider identifier = "${giro}" (FinancialInstitution ${bic} is the ` +
            `${giro === 'SE:BANKGIRO' ? 'Bankgiro' : 'Plusgiro'})`,
        );
      transfers.push(
        compact({
          accountIdentifier: account,
          serviceProviderIdentifier: giro ?? (bic || undefined),
        }) as CreditTransfer,
      );
    }
  }
  if (inv.paymentInstructions) inv.paymentInstructions.creditTransfers = transfers;
  if (meansCode !== undefined && !CREDIT_TRANSFER_CODES.has(meansCode) && transfers.length > 0 && means[0]) {
    problem(
      means[0],
      'BT-81',
      `payment means code "${meansCode}" with a payee account is not a UNTDID 4461 credit transfer code EN 16931 ` +
        `accepts with BG-17`,
    );
  }
  const terms = agg(root, 'PaymentTerms');
  inv.paymentTerms = val(terms, 'Note');

  // --- allowances and charges: Svefaktura reason codes are UN/ECE 4465, not the UNTDID 5189/7161 codes EN 16931 takes
  for (const ac of x.children(root, S, 'AllowanceCharge')) {
    problem(
      ac,
      'BG-20',
      'a Svefaktura allowance or charge has no reason text and its reason code is from UN/ECE 4465, not UNTDID ' +
        '5189/7161; EN 16931 requires one of them (BR-33, BR-38)',
    );
  }

  // --- VAT and totals --------------------------------------------------------------------------------------------
  let accountingVat: string | undefined;
  for (const tt of aggs(root, 'TaxTotal')) {
    const subs = aggs(tt, 'TaxSubTotal');
    const vatSubs = subs.filter(
      (st) => (agg(agg(agg(st, 'TaxCategory'), 'TaxScheme'), 'ID')?.textContent ?? '').trim() === 'VAT',
    );
    if (vatSubs.length === 0 && subs.length > 0) continue; // another tax than VAT: no EN 16931 home (unmapped)
    inv.totals.totalVatAmount = x.decimal(kid(tt, 'TotalTaxAmount'), 'BT-110');
    for (const st of vatSubs) {
      const cat = agg(st, 'TaxCategory');
      x.take(agg(agg(cat, 'TaxScheme'), 'ID'));
      inv.vatBreakdown.push(
        compact({
          taxableAmount: x.decimal(kid(st, 'TaxableAmount'), 'BT-116'),
          taxAmount: x.decimal(kid(st, 'TaxAmount'), 'BT-117'),
          categoryCode: x.take(agg(cat, 'ID')),
          rate: x.decimal(kid(cat, 'Percent'), 'BT-119'),
          exemptionReasonText: val(cat, 'ExemptionReason'),
        }) as object,
      );
      const inAccounting = x.decimal(agg(st, 'TaxCurrencyTaxAmount'), 'BT-111');
      if (inAccounting !== undefined && isDecimal(inAccounting))
        accountingVat = accountingVat === undefined ? inAccounting : add(accountingVat, inAccounting);
    }
  }
  if (accountingVat !== undefined && inv.vatAccountingCurrencyCode !== undefined) {
    inv.totals.totalVatAmountInAccountingCurrency = accountingVat;
    filled.push(`BT-111 Invoice total VAT amount in accounting currency = ${accountingVat} (Σ TaxCurrencyTaxAmount)`);
  }
  const legal = agg(root, 'LegalTotal');
  inv.totals.sumOfLineNetAmounts = x.decimal(kid(legal, 'LineExtensionTotalAmount'), 'BT-106');
  inv.totals.totalWithoutVat = x.decimal(kid(legal, 'TaxExclusiveTotalAmount'), 'BT-109');
  const inclusive = x.decimal(kid(legal, 'TaxInclusiveTotalAmount'), 'BT-115');
  const roundOff = x.decimal(agg(legal, 'RoundOffAmount'), 'BT-114');
  if (inclusive !== undefined) {
    inv.totals.amountDueForPayment = inclusive;
    if (roundOff !== undefined && isDecimal(roundOff) && isDecimal(inclusive)) {
      inv.totals.roundingAmount = roundOff;
      inv.totals.totalWithVat = subtract(inclusive, roundOff);
      filled.push(
        `BT-112 Invoice total amount with VAT = ${inv.totals.totalWithVat} (TaxInclusiveTotalAmount − ` +
          `RoundOffAmount; Svefaktura's total includes the rounding)`,
      );
    } else {
      inv.totals.totalWithVat = inclusive;
    }
  }
  if (inv.totals.totalWithoutVat === undefined && inv.totals.sumOfLineNetAmounts !== undefined) {
    // Optional in Svefaktura; without allowances or charges (which are refused above) it equals BT-106.
    inv.totals.totalWithoutVat = inv.totals.sumOfLineNetAmounts;
    filled.push(
      `BT-109 Invoice total amount without VAT = ${inv.totals.sumOfLineNetAmounts} (equal to BT-106: no document ` +
        `allowances or charges)`,
    );
  }
  if (inv.currencyCode === undefined) {
    const cur = kid(legal, 'LineExtensionTotalAmount')?.getAttribute('amountCurrencyID');
    if (cur) {
      inv.currencyCode = cur;
      filled.push(
        `BT-5 Invoice currency code = "${cur}" (InvoiceCurrencyCode is optional in Svefaktura; the currency of the ` +
          `amounts)`,
      );
    }
  }

  // --- lines -------------------------------------------------------------------------------------------------------
  const orderRefs = new Map<string, ReadElement[]>();
  for (const line of aggs(root, 'InvoiceLine')) inv.lines.push(readLine(x, line, orderRefs, problem));
  // EN 16931 has one order reference (BT-13): one value on all lines is it; several different ones stay unmapped.
  if (orderRefs.size === 1) {
    const [ref, els] = [...orderRefs][0] as [string, ReadElement[]];
    inv.purchaseOrderReference = ref;
    for (const e of els) x.accept(e);
  }
  const single = inv.vatBreakdown.length === 1 ? inv.vatBreakdown[0] : undefined;
  for (const l of inv.lines) {
    if (l.vat.categoryCode === undefined && single?.categoryCode !== undefined) {
      l.vat = compact({ categoryCode: single.categoryCode, rate: single.rate }) ?? {};
      filled.push(
        `line ${l.identifier}: BT-151/BT-152 VAT category ` +
          `${single.categoryCode}${single.rate !== undefined ? ` ${single.rate} %` : ''} (the document's only VAT ` +
          `breakdown; Svefaktura does not require it per line)`,
      );
    }
  }

  markAttributes(x, root);
  return { invoice: inv, syntax: 'Svefaktura', unmapped: x.unmapped(root), problems: x.problems, filled };
}

function readLine(
  x: ReadContext,
  line: ReadElement,
  orderRefs: Map<string, ReadElement[]>,
  problem: (el: ReadElement, term: string, message: string) => void,
): InvoiceLine {
  const agg = (el: ReadElement | undefined, local: string): ReadElement | undefined => x.child(el, A, local);
  const kid = (el: ReadElement | undefined, local: string): ReadElement | undefined => x.child(el, C, local);
  const val = (el: ReadElement | undefined, local: string): string | undefined => x.take(kid(el, local));
  const out: InvoiceLine = {
    identifier: x.take(agg(line, 'ID')) ?? '',
    allowanceCharges: [],
    price: {},
    vat: {},
    item: { classificationIdentifiers: [], attributes: [] },
  };
  const qty = kid(line, 'InvoicedQuantity');
  const quantity = x.decimal(qty, 'BT-129');
  if (quantity !== undefined) out.quantity = quantity;
  const unit = x.attr(qty, 'quantityUnitCode');
  if (unit !== undefined) out.quantityUnitCode = unit;
  // The unit code list attributes only say it is UN/ECE Recommendation 20, which EN 16931 uses.
  if (
    /REC.?20/i.test(qty?.getAttribute('quantityUnitCodeListID') ?? '') ||
    qty?.getAttribute('quantityUnitCodeListAgencyID') === '6'
  ) {
    x.attr(qty, 'quantityUnitCodeListID');
    x.attr(qty, 'quantityUnitCodeListAgencyID');
  }
  const net = x.decimal(kid(line, 'LineExtensionAmount'), 'BT-131');
  if (net !== undefined) out.netAmount = net;
  const note = val(line, 'Note');
  if (note !== undefined) out.note = note;
  const olr = agg(line, 'OrderLineReference');
  const orderLine = x.take(agg(olr, 'BuyersLineID'));
  if (orderLine !== undefined) out.purchaseOrderLineReference = orderLine;
  const orderRefEl = agg(agg(olr, 'OrderReference'), 'BuyersID');
  const orderRef = (orderRefEl?.textContent ?? '').trim();
  if (orderRefEl && orderRef !== '') orderRefs.set(orderRef, [...(orderRefs.get(orderRef) ?? []), orderRefEl]);
  for (const ac of x.children(line, A, 'AllowanceCharge')) {
    problem(
      ac,
      'BG-27',
      'a Svefaktura line allowance or charge has no reason; EN 16931 requires a reason text or code (BR-41, BR-42)',
    );
  }
  const item = agg(line, 'Item');
  const it = out.item;
  // Svefaktura's item has no name element: its description is the item name (BT-153), as SFTI maps it.
  const desc = val(item, 'Description');
  if (desc !== undefined) it.name = desc;
  const sellersId = x.take(agg(agg(item, 'SellersItemIdentification'), 'ID'));
  if (sellersId !== undefined) it.sellersIdentifier = sellersId;
  const buyersId = x.take(agg(agg(item, 'BuyersItemIdentification'), 'ID'));
  if (buyersId !== undefined) it.buyersIdentifier = buyersId;
  const stdEl = agg(agg(item, 'StandardItemIdentification'), 'ID');
  const std = x.take(stdEl);
  if (std !== undefined) {
    const gtin = x.attr(stdEl, 'identificationSchemeAgencyID') === '9';
    it.standardIdentifier = gtin ? { value: std, schemeId: '0160' } : { value: std };
  }
  const vatCat = (item ? x.children(item, A, 'TaxCategory') : []).find(
    (tc) => (agg(agg(tc, 'TaxScheme'), 'ID')?.textContent ?? '').trim() === 'VAT',
  );
  if (vatCat) {
    x.take(agg(agg(vatCat, 'TaxScheme'), 'ID'));
    out.vat =
      compact({ categoryCode: x.take(agg(vatCat, 'ID')), rate: x.decimal(kid(vatCat, 'Percent'), 'BT-152') }) ?? {};
  }
  const base = agg(item, 'BasePrice');
  const bq = kid(base, 'BaseQuantity');
  out.price =
    compact({
      netPrice: x.decimal(kid(base, 'PriceAmount'), 'BT-146'),
      baseQuantity: x.decimal(bq, 'BT-149'),
      baseQuantityUnitCode: x.attr(bq, 'quantityUnitCode'),
    }) ?? {};
  return out;
}

/** amountCurrencyID of amounts read: BT-5 by the document's own rule (SFTI R-100); mark them read. */
function markAttributes(x: ReadContext, el: ReadElement): void {
  for (let c = el.firstChild; c; c = c.nextSibling) {
    if (c.nodeType !== 1) continue;
    const ce = c as ReadElement;
    if (ce.hasAttribute('amountCurrencyID')) x.attr(ce, 'amountCurrencyID');
    markAttributes(x, ce);
  }
}
