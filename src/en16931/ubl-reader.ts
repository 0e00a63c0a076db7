import { firstElementOf, nextElementOf, type ReadDocument, type ReadElement } from '../formats/xml/read-tree';
import { GatewayError } from '../core/gateway-error';
import { NS } from '../formats/xml/namespaces';
import {
  emptyInvoice,
  type Buyer,
  type Contact,
  type Identifier,
  type InvoiceLine,
  type PaymentInstructions,
  type Period,
  type PostalAddress,
  type ReadResult,
  type Seller,
} from './model';
import { compact, paymentOrNothing, ReadContext } from './xml-read';

/**
 * UBL 2.1 Invoice / CreditNote → EN 16931 model, following CEN/TS 16931-3-2. The differences between the two UBL
 * documents are handled here: CreditNote has CreditNoteTypeCode, CreditNoteLine/CreditedQuantity, no DueDate (BT-9
 * is PaymentMeans/PaymentDueDate) and no ProjectReference (BT-11 is an AdditionalDocumentReference with type 50).
 */

const C = NS.cbc;
const A = NS.cac;

/** BT-8: UBL carries UNTDID 2005 codes, as EN 16931-1 does. */

export function readUbl(doc: ReadDocument): ReadResult {
  const root = doc.documentElement;
  if (!root) throw new GatewayError('INVALID_XML', '1:1: no root element');
  const isCn = root.localName === 'CreditNote' && root.namespaceURI === NS.ublCreditNote;
  if (!isCn && !(root.localName === 'Invoice' && root.namespaceURI === NS.ublInvoice)) {
    throw new GatewayError('UNKNOWN_FORMAT', `not a UBL 2.1 Invoice or CreditNote: <${root.nodeName}>`);
  }
  const x = new ReadContext();
  const inv = emptyInvoice();
  const kid = (el: ReadElement | undefined, local: string): ReadElement | undefined => x.child(el, C, local);
  const agg = (el: ReadElement | undefined, local: string): ReadElement | undefined => x.child(el, A, local);
  const aggs = (el: ReadElement | undefined, local: string): ReadElement[] => (el ? x.children(el, A, local) : []);
  const val = (el: ReadElement | undefined, local: string): string | undefined => x.take(kid(el, local));
  const ident = (e: ReadElement | undefined): Identifier | undefined => {
    const value = x.take(e);
    if (value === undefined) return undefined;
    const schemeId = x.attr(e, 'schemeID');
    return schemeId !== undefined ? { value, schemeId } : { value };
  };

  x.take(kid(root, 'UBLVersionID'));
  inv.processControl = { specificationIdentifier: val(root, 'CustomizationID') ?? '' };
  const profile = val(root, 'ProfileID');
  if (profile !== undefined) inv.processControl.businessProcessType = profile;
  inv.number = val(root, 'ID');
  inv.issueDate = x.isoDate(kid(root, 'IssueDate'), 'BT-2');
  inv.paymentDueDate = x.isoDate(kid(root, 'DueDate'), 'BT-9');
  inv.typeCode = val(root, isCn ? 'CreditNoteTypeCode' : 'InvoiceTypeCode');
  for (const n of x.children(root, C, 'Note')) {
    const t = x.take(n) ?? '';
    // BT-21 travels as a #CODE# prefix of the note (the binding's convention, as KoSIT's visualisation reads it).
    const m = /^#([A-Za-z0-9]{1,10})#([\s\S]*)$/.exec(t);
    inv.notes.push(m ? { subjectCode: m[1], note: (m[2] as string).trim() } : { note: t });
  }
  inv.vatPointDate = x.isoDate(kid(root, 'TaxPointDate'), 'BT-7');
  inv.currencyCode = val(root, 'DocumentCurrencyCode');
  inv.vatAccountingCurrencyCode = val(root, 'TaxCurrencyCode');
  inv.buyerAccountingReference = val(root, 'AccountingCost');
  inv.buyerReference = val(root, 'BuyerReference');

  const period = agg(root, 'InvoicePeriod');
  if (period) {
    inv.invoicingPeriod = readPeriod(x, period);
    inv.vatPointDateCode = val(period, 'DescriptionCode');
  }
  const order = agg(root, 'OrderReference');
  inv.purchaseOrderReference = val(order, 'ID');
  inv.salesOrderReference = val(order, 'SalesOrderID');
  for (const b of aggs(root, 'BillingReference')) {
    const d = agg(b, 'InvoiceDocumentReference');
    const reference = val(d, 'ID');
    if (reference === undefined) continue;
    const issueDate = x.isoDate(kid(d, 'IssueDate'), 'BT-26');
    inv.precedingInvoices.push(issueDate !== undefined ? { reference, issueDate } : { reference });
  }
  inv.despatchAdviceReference = val(agg(root, 'DespatchDocumentReference'), 'ID');
  inv.receivingAdviceReference = val(agg(root, 'ReceiptDocumentReference'), 'ID');
  inv.tenderOrLotReference = val(agg(root, 'OriginatorDocumentReference'), 'ID');
  inv.contractReference = val(agg(root, 'ContractDocumentReference'), 'ID');
  inv.projectReference = val(agg(root, 'ProjectReference'), 'ID');
  for (const d of aggs(root, 'AdditionalDocumentReference')) {
    const typeCode = kid(d, 'DocumentTypeCode');
    const tc = typeCode ? (typeCode.textContent ?? '').trim() : undefined;
    if (tc === '130') {
      x.take(typeCode);
      inv.invoicedObjectIdentifier = ident(kid(d, 'ID'));
      continue;
    }
    if (tc === '50' && isCn) {
      x.take(typeCode);
      inv.projectReference = val(d, 'ID');
      continue;
    }
    const reference = val(d, 'ID') ?? '';
    const description = val(d, 'DocumentDescription');
    const att = agg(d, 'Attachment');
    const bin = kid(att, 'EmbeddedDocumentBinaryObject');
    const externalLocation = val(agg(att, 'ExternalReference'), 'URI');
    const attachment = bin
      ? compact({
          base64: (x.take(bin) ?? '').replace(/\s+/g, ''),
          mimeCode: x.attr(bin, 'mimeCode'),
          filename: x.attr(bin, 'filename'),
        })
      : undefined;
    inv.supportingDocuments.push(
      compact({ reference, description, externalLocation, attachment }) as { reference: string },
    );
    // A supporting document with type code 916 ("reference paper") is the binding's default; any other code is
    // not part of BG-24 and stays unmapped.
    if (tc === '916') x.take(typeCode);
  }

  let sepaCreditor: string | undefined;
  const takeSepa = (party: ReadElement | undefined): ReadElement[] =>
    aggs(party, 'PartyIdentification').filter((pi) => {
      const id = kid(pi, 'ID');
      if (id && id.getAttribute('schemeID') === 'SEPA') {
        sepaCreditor = x.take(id);
        x.attr(id, 'schemeID');
        return false;
      }
      return true;
    });

  // BG-4 SELLER
  const sp = agg(agg(root, 'AccountingSupplierParty'), 'Party');
  const seller: Seller = { identifiers: [] };
  seller.electronicAddress = ident(kid(sp, 'EndpointID'));
  for (const pi of takeSepa(sp)) {
    const id = ident(kid(pi, 'ID'));
    if (id) seller.identifiers.push(id);
  }
  seller.tradingName = val(agg(sp, 'PartyName'), 'Name');
  seller.postalAddress = readAddress(x, agg(sp, 'PostalAddress'));
  for (const pts of aggs(sp, 'PartyTaxScheme')) {
    const scheme = val(agg(pts, 'TaxScheme'), 'ID');
    const id = val(pts, 'CompanyID');
    if (scheme === 'VAT') seller.vatIdentifier = id;
    else seller.taxRegistrationIdentifier = id;
  }
  const sle = agg(sp, 'PartyLegalEntity');
  seller.name = val(sle, 'RegistrationName');
  seller.legalRegistrationIdentifier = ident(kid(sle, 'CompanyID'));
  seller.additionalLegalInformation = val(sle, 'CompanyLegalForm');
  seller.contact = readContact(x, agg(sp, 'Contact'));
  inv.seller = compact(seller) as Seller;
  inv.seller.identifiers ??= [];

  // BG-7 BUYER
  const bp = agg(agg(root, 'AccountingCustomerParty'), 'Party');
  const buyer: Buyer = {};
  buyer.electronicAddress = ident(kid(bp, 'EndpointID'));
  buyer.identifier = ident(kid(agg(bp, 'PartyIdentification'), 'ID'));
  buyer.tradingName = val(agg(bp, 'PartyName'), 'Name');
  buyer.postalAddress = readAddress(x, agg(bp, 'PostalAddress'));
  buyer.vatIdentifier = val(agg(bp, 'PartyTaxScheme'), 'CompanyID');
  x.take(kid(agg(agg(bp, 'PartyTaxScheme'), 'TaxScheme'), 'ID'));
  const ble = agg(bp, 'PartyLegalEntity');
  buyer.name = val(ble, 'RegistrationName');
  buyer.legalRegistrationIdentifier = ident(kid(ble, 'CompanyID'));
  buyer.contact = readContact(x, agg(bp, 'Contact'));
  inv.buyer = compact(buyer) ?? {};

  // BG-10 PAYEE
  const pp = agg(root, 'PayeeParty');
  if (pp) {
    const ids = takeSepa(pp);
    inv.payee = compact({
      identifier: ident(kid(ids[0], 'ID')),
      name: val(agg(pp, 'PartyName'), 'Name'),
      legalRegistrationIdentifier: ident(kid(agg(pp, 'PartyLegalEntity'), 'CompanyID')),
    });
  }
  // BG-11 SELLER TAX REPRESENTATIVE PARTY
  const tr = agg(root, 'TaxRepresentativeParty');
  if (tr) {
    inv.taxRepresentative = compact({
      name: val(agg(tr, 'PartyName'), 'Name'),
      postalAddress: readAddress(x, agg(tr, 'PostalAddress')),
      vatIdentifier: val(agg(tr, 'PartyTaxScheme'), 'CompanyID'),
    });
    x.take(kid(agg(agg(tr, 'PartyTaxScheme'), 'TaxScheme'), 'ID'));
  }
  // BG-13 DELIVERY INFORMATION
  const dl = agg(root, 'Delivery');
  if (dl) {
    const loc = agg(dl, 'DeliveryLocation');
    inv.delivery = compact({
      actualDeliveryDate: x.isoDate(kid(dl, 'ActualDeliveryDate'), 'BT-72'),
      locationIdentifier: ident(kid(loc, 'ID')),
      address: readAddress(x, agg(loc, 'Address')),
      partyName: val(agg(agg(dl, 'DeliveryParty'), 'PartyName'), 'Name'),
    });
  }
  // BG-16 PAYMENT INSTRUCTIONS
  const means = aggs(root, 'PaymentMeans');
  let pay: PaymentInstructions | undefined;
  for (const [k, pm] of means.entries()) {
    const codeEl = kid(pm, 'PaymentMeansCode');
    const ref = kid(pm, 'PaymentID');
    const code = codeEl ? (codeEl.textContent ?? '').trim() : undefined;
    const text = codeEl?.getAttribute('name') || undefined;
    const refText = ref ? (ref.textContent ?? '').trim() : undefined;
    if (k === 0) {
      pay = { creditTransfers: [] };
      pay.meansTypeCode = x.take(codeEl);
      pay.meansText = x.attr(codeEl, 'name');
      pay.remittanceInformation = x.take(ref);
      if (isCn) inv.paymentDueDate ??= x.isoDate(kid(pm, 'PaymentDueDate'), 'BT-9');
      const card = agg(pm, 'CardAccount');
      if (card) {
        pay.card = compact({
          primaryAccountNumber: val(card, 'PrimaryAccountNumberID') ?? '',
          holderName: val(card, 'HolderName'),
        });
        inv.extensions.cardNetworkId = val(card, 'NetworkID');
      }
      const mandate = agg(pm, 'PaymentMandate');
      if (mandate)
        pay.directDebit = compact({
          mandateReference: val(mandate, 'ID'),
          debitedAccountIdentifier: val(agg(mandate, 'PayerFinancialAccount'), 'ID'),
        });
    } else if (
      pay &&
      code === pay.meansTypeCode &&
      (text === undefined || text === pay.meansText) &&
      (refText === undefined || refText === pay.remittanceInformation)
    ) {
      // A further PaymentMeans that only adds an account (UBL has one account per PaymentMeans). One that differs
      // in code, text or reference is not EN 16931 (BG-16 is 0..1) and stays unmapped as a whole.
      x.take(codeEl);
      x.attr(codeEl, 'name');
      x.take(ref);
    } else continue;
    const acct = agg(pm, 'PayeeFinancialAccount');
    if (acct && pay) {
      const accountIdentifier = val(acct, 'ID') ?? '';
      pay.creditTransfers.push(
        compact({
          accountIdentifier,
          accountName: val(acct, 'Name'),
          serviceProviderIdentifier: val(agg(acct, 'FinancialInstitutionBranch'), 'ID'),
        }) as {
          accountIdentifier: string;
        },
      );
    }
  }
  if (sepaCreditor !== undefined) {
    pay ??= { creditTransfers: [] };
    pay.directDebit = { ...(pay.directDebit ?? {}), bankAssignedCreditorIdentifier: sepaCreditor };
  }
  if (pay) inv.paymentInstructions = paymentOrNothing(pay);
  // BT-20 as written: XRechnung's structured lines (BR-DE-18) end with a line break.
  inv.paymentTerms = x.takeVerbatim(kid(agg(root, 'PaymentTerms'), 'Note'));

  // BG-20 / BG-21
  for (const ac of aggs(root, 'AllowanceCharge')) {
    const cat = agg(ac, 'TaxCategory');
    x.take(kid(agg(cat, 'TaxScheme'), 'ID'));
    inv.allowanceCharges.push(
      compact({
        charge: val(ac, 'ChargeIndicator') === 'true',
        amount: x.decimal(kid(ac, 'Amount'), 'BT-92') ?? '',
        baseAmount: x.decimal(kid(ac, 'BaseAmount'), 'BT-93'),
        percentage: x.decimal(kid(ac, 'MultiplierFactorNumeric'), 'BT-94'),
        vatCategoryCode: val(cat, 'ID'),
        vatRate: x.decimal(kid(cat, 'Percent'), 'BT-96'),
        reason: val(ac, 'AllowanceChargeReason'),
        reasonCode: val(ac, 'AllowanceChargeReasonCode'),
      }) as { charge: boolean; amount: string },
    );
  }
  // BG-23 and BT-110 / BT-111: the TaxTotal in the invoice currency has the breakdown; one in BT-6 has BT-111.
  for (const tt of aggs(root, 'TaxTotal')) {
    const amountEl = kid(tt, 'TaxAmount');
    const currency = amountEl?.getAttribute('currencyID') ?? '';
    x.attr(amountEl, 'currencyID');
    // BT-111 is the TaxTotal in the VAT accounting currency without a breakdown; BT-6 may equal BT-5.
    const hasBreakdown = aggs(tt, 'TaxSubtotal').length > 0;
    const isAccounting =
      !hasBreakdown &&
      inv.vatAccountingCurrencyCode !== undefined &&
      currency === inv.vatAccountingCurrencyCode &&
      (currency !== inv.currencyCode || inv.totals.totalVatAmount !== undefined);
    if (isAccounting) inv.totals.totalVatAmountInAccountingCurrency = x.decimal(amountEl, 'BT-111');
    else inv.totals.totalVatAmount = x.decimal(amountEl, 'BT-110');
    for (const st of aggs(tt, 'TaxSubtotal')) {
      const cat = agg(st, 'TaxCategory');
      x.take(kid(agg(cat, 'TaxScheme'), 'ID'));
      const vb = compact({
        taxableAmount: x.decimal(kid(st, 'TaxableAmount'), 'BT-116'),
        taxAmount: x.decimal(kid(st, 'TaxAmount'), 'BT-117'),
        categoryCode: val(cat, 'ID'),
        rate: x.decimal(kid(cat, 'Percent'), 'BT-119'),
        exemptionReasonCode: val(cat, 'TaxExemptionReasonCode'),
        exemptionReasonText: val(cat, 'TaxExemptionReason'),
      });
      for (const a of [kid(st, 'TaxableAmount'), kid(st, 'TaxAmount')]) x.attr(a, 'currencyID');
      if (vb) inv.vatBreakdown.push(vb);
    }
  }
  // BG-22
  const mt = agg(root, 'LegalMonetaryTotal');
  const amount = (local: string, term: string): string | undefined => {
    const e = kid(mt, local);
    x.attr(e, 'currencyID');
    return x.decimal(e, term);
  };
  inv.totals =
    compact({
      ...inv.totals,
      sumOfLineNetAmounts: amount('LineExtensionAmount', 'BT-106'),
      totalWithoutVat: amount('TaxExclusiveAmount', 'BT-109'),
      totalWithVat: amount('TaxInclusiveAmount', 'BT-112'),
      sumOfAllowances: amount('AllowanceTotalAmount', 'BT-107'),
      sumOfCharges: amount('ChargeTotalAmount', 'BT-108'),
      paidAmount: amount('PrepaidAmount', 'BT-113'),
      roundingAmount: amount('PayableRoundingAmount', 'BT-114'),
      amountDueForPayment: amount('PayableAmount', 'BT-115'),
    }) ?? {};

  // BG-25
  for (const line of x.children(root, A, isCn ? 'CreditNoteLine' : 'InvoiceLine'))
    inv.lines.push(readLine(x, line, isCn));

  // currencyID of amounts already read: the values are BT-5 by the binding (BR-CL-... checks that); mark them read.
  markCurrencies(x, root);
  const result = { invoice: inv, syntax: 'UBL' as const, unmapped: x.unmapped(root), problems: x.problems };
  return result;
}

function markCurrencies(x: ReadContext, el: ReadElement): void {
  for (let ce = firstElementOf(el); ce; ce = nextElementOf(ce)) {
    if (ce.namespaceURI === NS.cbc && ce.hasAttribute('currencyID')) x.attr(ce, 'currencyID');
    else markCurrencies(x, ce);
  }
}

function readPeriod(x: ReadContext, p: ReadElement | undefined): Period | undefined {
  if (!p) return undefined;
  return compact({
    startDate: x.isoDate(x.child(p, C, 'StartDate'), 'BT-73'),
    endDate: x.isoDate(x.child(p, C, 'EndDate'), 'BT-74'),
  });
}

function readAddress(x: ReadContext, a: ReadElement | undefined): PostalAddress | undefined {
  if (!a) return undefined;
  const v = (local: string): string | undefined => x.take(x.child(a, C, local));
  return compact({
    line1: v('StreetName'),
    line2: v('AdditionalStreetName'),
    line3: x.take(x.child(x.child(a, A, 'AddressLine'), C, 'Line')),
    city: v('CityName'),
    postCode: v('PostalZone'),
    countrySubdivision: v('CountrySubentity'),
    countryCode: x.take(x.child(x.child(a, A, 'Country'), C, 'IdentificationCode')),
  });
}

function readContact(x: ReadContext, c: ReadElement | undefined): Contact | undefined {
  if (!c) return undefined;
  const v = (local: string): string | undefined => x.take(x.child(c, C, local));
  return compact({ point: v('Name'), telephone: v('Telephone'), email: v('ElectronicMail') });
}

function readLine(x: ReadContext, line: ReadElement, isCn: boolean): InvoiceLine {
  const kid = (el: ReadElement | undefined, local: string): ReadElement | undefined => x.child(el, C, local);
  const agg = (el: ReadElement | undefined, local: string): ReadElement | undefined => x.child(el, A, local);
  const val = (el: ReadElement | undefined, local: string): string | undefined => x.take(kid(el, local));
  const qty = kid(line, isCn ? 'CreditedQuantity' : 'InvoicedQuantity');
  const docRef = x
    .children(line, A, 'DocumentReference')
    .find((d) => (x.child(d, C, 'DocumentTypeCode')?.textContent ?? '').trim() === '130');
  let objectIdentifier: Identifier | undefined;
  if (docRef) {
    x.take(kid(docRef, 'DocumentTypeCode'));
    const idEl = kid(docRef, 'ID');
    const value = x.take(idEl);
    const schemeId = x.attr(idEl, 'schemeID');
    if (value !== undefined) objectIdentifier = schemeId !== undefined ? { value, schemeId } : { value };
  }
  const out: InvoiceLine = {
    identifier: val(line, 'ID') ?? '',
    allowanceCharges: [],
    price: {},
    vat: {},
    item: { classificationIdentifiers: [], attributes: [] },
  };
  const note = val(line, 'Note');
  if (note !== undefined) out.note = note;
  if (objectIdentifier) out.objectIdentifier = objectIdentifier;
  const quantity = x.decimal(qty, 'BT-129');
  if (quantity !== undefined) out.quantity = quantity;
  const unit = x.attr(qty, 'unitCode');
  if (unit !== undefined) out.quantityUnitCode = unit;
  const net = x.decimal(kid(line, 'LineExtensionAmount'), 'BT-131');
  if (net !== undefined) out.netAmount = net;
  const olr = val(agg(line, 'OrderLineReference'), 'LineID');
  if (olr !== undefined) out.purchaseOrderLineReference = olr;
  const acc = val(line, 'AccountingCost');
  if (acc !== undefined) out.buyerAccountingReference = acc;
  const period = agg(line, 'InvoicePeriod');
  if (period) {
    const p = compact({
      startDate: x.isoDate(kid(period, 'StartDate'), 'BT-134'),
      endDate: x.isoDate(kid(period, 'EndDate'), 'BT-135'),
    });
    if (p) out.period = p;
  }
  for (const ac of x.children(line, A, 'AllowanceCharge')) {
    out.allowanceCharges.push(
      compact({
        charge: val(ac, 'ChargeIndicator') === 'true',
        amount: x.decimal(kid(ac, 'Amount'), 'BT-136') ?? '',
        baseAmount: x.decimal(kid(ac, 'BaseAmount'), 'BT-137'),
        percentage: x.decimal(kid(ac, 'MultiplierFactorNumeric'), 'BT-138'),
        reason: val(ac, 'AllowanceChargeReason'),
        reasonCode: val(ac, 'AllowanceChargeReasonCode'),
      }) as { charge: boolean; amount: string },
    );
  }
  const item = agg(line, 'Item');
  const it = out.item;
  const desc = val(item, 'Description');
  if (desc !== undefined) it.description = desc;
  const name = val(item, 'Name');
  if (name !== undefined) it.name = name;
  const buyersId = val(agg(item, 'BuyersItemIdentification'), 'ID');
  if (buyersId !== undefined) it.buyersIdentifier = buyersId;
  const sellersId = val(agg(item, 'SellersItemIdentification'), 'ID');
  if (sellersId !== undefined) it.sellersIdentifier = sellersId;
  const std = kid(agg(item, 'StandardItemIdentification'), 'ID');
  const stdValue = x.take(std);
  if (stdValue !== undefined) {
    const schemeId = x.attr(std, 'schemeID');
    it.standardIdentifier = schemeId !== undefined ? { value: stdValue, schemeId } : { value: stdValue };
  }
  const origin = x.take(kid(agg(item, 'OriginCountry'), 'IdentificationCode'));
  if (origin !== undefined) it.countryOfOrigin = origin;
  for (const cc of item ? x.children(item, A, 'CommodityClassification') : []) {
    const code = kid(cc, 'ItemClassificationCode');
    const value = x.take(code);
    if (value === undefined) continue;
    it.classificationIdentifiers.push(
      compact({ value, schemeId: x.attr(code, 'listID'), schemeVersion: x.attr(code, 'listVersionID') }) as {
        value: string;
      },
    );
  }
  const ctc = agg(item, 'ClassifiedTaxCategory');
  x.take(kid(agg(ctc, 'TaxScheme'), 'ID'));
  out.vat = compact({ categoryCode: val(ctc, 'ID'), rate: x.decimal(kid(ctc, 'Percent'), 'BT-152') }) ?? {};
  for (const p of item ? x.children(item, A, 'AdditionalItemProperty') : []) {
    it.attributes.push({ name: val(p, 'Name') ?? '', value: val(p, 'Value') ?? '' });
  }
  const price = agg(line, 'Price');
  const bq = kid(price, 'BaseQuantity');
  const pac = agg(price, 'AllowanceCharge');
  if (pac) x.take(kid(pac, 'ChargeIndicator'));
  out.price =
    compact({
      netPrice: x.decimal(kid(price, 'PriceAmount'), 'BT-146'),
      baseQuantity: x.decimal(bq, 'BT-149'),
      baseQuantityUnitCode: x.attr(bq, 'unitCode'),
      discount: x.decimal(kid(pac, 'Amount'), 'BT-147'),
      grossPrice: x.decimal(kid(pac, 'BaseAmount'), 'BT-148'),
    }) ?? {};
  return out;
}
