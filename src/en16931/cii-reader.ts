import { firstElementOf, nextElementOf, type ReadDocument, type ReadElement } from '../formats/xml/read-tree';
import { GatewayError } from '../core/gateway-error';
import { NS } from '../formats/xml/namespaces';
import {
  emptyInvoice,
  type Contact,
  type Identifier,
  type InvoiceLine,
  type PaymentInstructions,
  type PostalAddress,
  type ReadResult,
  type Seller,
} from './model';
import { compact, paymentOrNothing, ReadContext } from './xml-read';

/** UN/CEFACT CII D16B → EN 16931 model, following CEN/TS 16931-3-3. Dates are format 102 (CCYYMMDD). */

const R = NS.ram;

/** BT-8: CII uses UNTDID 2475 codes; EN 16931-1 and UBL use UNTDID 2005. */
export const TAX_POINT_CODE_2475_TO_2005: Readonly<Record<string, string>> = { '5': '3', '29': '35', '72': '432' };
export const TAX_POINT_CODE_2005_TO_2475: Readonly<Record<string, string>> = { '3': '5', '35': '29', '432': '72' };

export function readCii(doc: ReadDocument): ReadResult {
  const root = doc.documentElement;
  if (!root || root.localName !== 'CrossIndustryInvoice' || root.namespaceURI !== NS.rsm) {
    throw new GatewayError('UNKNOWN_FORMAT', `not a CII D16B CrossIndustryInvoice: <${root?.nodeName ?? ''}>`);
  }
  const x = new ReadContext();
  const inv = emptyInvoice();
  const r = (el: ReadElement | undefined, local: string): ReadElement | undefined => x.child(el, R, local);
  const rs = (el: ReadElement | undefined, local: string): ReadElement[] => (el ? x.children(el, R, local) : []);
  const val = (el: ReadElement | undefined, local: string): string | undefined => x.take(r(el, local));
  const ident = (e: ReadElement | undefined): Identifier | undefined => {
    const value = x.take(e);
    if (value === undefined) return undefined;
    const schemeId = x.attr(e, 'schemeID');
    return schemeId !== undefined ? { value, schemeId } : { value };
  };
  const dt = (el: ReadElement | undefined, term: string): string | undefined =>
    x.date102(x.child(el, NS.udt, 'DateTimeString'), term);
  const qdt = (el: ReadElement | undefined, term: string): string | undefined =>
    x.date102(x.child(el, NS.qdt, 'DateTimeString'), term);
  const dec = (el: ReadElement | undefined, local: string, term: string): string | undefined =>
    x.decimal(r(el, local), term);
  const indicator = (el: ReadElement | undefined): boolean =>
    x.take(x.child(r(el, 'ChargeIndicator'), NS.udt, 'Indicator')) === 'true';
  const address = (a: ReadElement | undefined): PostalAddress | undefined =>
    a
      ? compact({
          postCode: val(a, 'PostcodeCode'),
          line1: val(a, 'LineOne'),
          line2: val(a, 'LineTwo'),
          line3: val(a, 'LineThree'),
          city: val(a, 'CityName'),
          countryCode: val(a, 'CountryID'),
          countrySubdivision: val(a, 'CountrySubDivisionName'),
        })
      : undefined;
  const contact = (c: ReadElement | undefined): Contact | undefined =>
    c
      ? compact({
          // BT-41 is the person or, failing one, the department (CEN/TS 16931-3-3).
          point: val(c, 'PersonName') ?? val(c, 'DepartmentName'),
          telephone: val(r(c, 'TelephoneUniversalCommunication'), 'CompleteNumber'),
          email: val(r(c, 'EmailURIUniversalCommunication'), 'URIID'),
        })
      : undefined;
  const partyIds = (p: ReadElement | undefined): Identifier[] =>
    [...rs(p, 'ID'), ...rs(p, 'GlobalID')].map((e) => ident(e)).filter((i): i is Identifier => i !== undefined);
  const taxRegs = (p: ReadElement | undefined): { va?: string; fc?: string } => {
    const out: { va?: string; fc?: string } = {};
    for (const tr of rs(p, 'SpecifiedTaxRegistration')) {
      const idEl = r(tr, 'ID');
      const scheme = idEl?.getAttribute('schemeID');
      if (scheme === 'VA' && out.va === undefined) {
        x.attr(idEl, 'schemeID');
        out.va = x.take(idEl);
      } else if (scheme === 'FC' && out.fc === undefined) {
        x.attr(idEl, 'schemeID');
        out.fc = x.take(idEl);
      }
    }
    return out;
  };

  // BG-2, BT-1..3, BG-1
  const ctx = x.child(root, NS.rsm, 'ExchangedDocumentContext');
  const bp = val(r(ctx, 'BusinessProcessSpecifiedDocumentContextParameter'), 'ID');
  inv.processControl = {
    specificationIdentifier: val(r(ctx, 'GuidelineSpecifiedDocumentContextParameter'), 'ID') ?? '',
  };
  if (bp !== undefined) inv.processControl.businessProcessType = bp;
  const ed = x.child(root, NS.rsm, 'ExchangedDocument');
  inv.number = val(ed, 'ID');
  inv.typeCode = val(ed, 'TypeCode');
  inv.issueDate = dt(r(ed, 'IssueDateTime'), 'BT-2');
  for (const n of rs(ed, 'IncludedNote')) {
    const note = val(n, 'Content') ?? '';
    const subjectCode = val(n, 'SubjectCode');
    inv.notes.push(subjectCode !== undefined ? { subjectCode, note } : { note });
  }

  const tx = x.child(root, NS.rsm, 'SupplyChainTradeTransaction');
  const agreement = r(tx, 'ApplicableHeaderTradeAgreement');
  const deliveryEl = r(tx, 'ApplicableHeaderTradeDelivery');
  const settlement = r(tx, 'ApplicableHeaderTradeSettlement');

  // BG-4 SELLER
  const sp = r(agreement, 'SellerTradeParty');
  const sLegal = r(sp, 'SpecifiedLegalOrganization');
  const sTax = taxRegs(sp);
  const seller: Seller = {
    identifiers: partyIds(sp),
    ...compact({
      name: val(sp, 'Name'),
      tradingName: val(sLegal, 'TradingBusinessName'),
      legalRegistrationIdentifier: ident(r(sLegal, 'ID')),
      vatIdentifier: sTax.va,
      taxRegistrationIdentifier: sTax.fc,
      additionalLegalInformation: val(sp, 'Description'),
      electronicAddress: ident(r(r(sp, 'URIUniversalCommunication'), 'URIID')),
      postalAddress: address(r(sp, 'PostalTradeAddress')),
      contact: contact(r(sp, 'DefinedTradeContact')),
    }),
  };
  inv.seller = seller;
  // BG-7 BUYER
  const bpy = r(agreement, 'BuyerTradeParty');
  const bLegal = r(bpy, 'SpecifiedLegalOrganization');
  inv.buyer =
    compact({
      name: val(bpy, 'Name'),
      tradingName: val(bLegal, 'TradingBusinessName'),
      identifier: partyIds(bpy)[0],
      legalRegistrationIdentifier: ident(r(bLegal, 'ID')),
      vatIdentifier: taxRegs(bpy).va,
      electronicAddress: ident(r(r(bpy, 'URIUniversalCommunication'), 'URIID')),
      postalAddress: address(r(bpy, 'PostalTradeAddress')),
      contact: contact(r(bpy, 'DefinedTradeContact')),
    }) ?? {};
  // BG-11
  const trp = r(agreement, 'SellerTaxRepresentativeTradeParty');
  if (trp)
    inv.taxRepresentative = compact({
      name: val(trp, 'Name'),
      vatIdentifier: taxRegs(trp).va,
      postalAddress: address(r(trp, 'PostalTradeAddress')),
    });

  inv.buyerReference = val(agreement, 'BuyerReference');
  inv.salesOrderReference = val(r(agreement, 'SellerOrderReferencedDocument'), 'IssuerAssignedID');
  inv.purchaseOrderReference = val(r(agreement, 'BuyerOrderReferencedDocument'), 'IssuerAssignedID');
  inv.contractReference = val(r(agreement, 'ContractReferencedDocument'), 'IssuerAssignedID');
  for (const d of rs(agreement, 'AdditionalReferencedDocument')) {
    const tcEl = r(d, 'TypeCode');
    const tc = tcEl ? (tcEl.textContent ?? '').trim() : undefined;
    if (tc === '50') {
      x.take(tcEl);
      inv.tenderOrLotReference = val(d, 'IssuerAssignedID');
    } else if (tc === '130') {
      x.take(tcEl);
      const value = val(d, 'IssuerAssignedID') ?? '';
      const schemeId = val(d, 'ReferenceTypeCode');
      inv.invoicedObjectIdentifier = schemeId !== undefined ? { value, schemeId } : { value };
    } else if (tc === '916') {
      x.take(tcEl);
      const bin = r(d, 'AttachmentBinaryObject');
      const attachment = bin
        ? compact({
            base64: (x.take(bin) ?? '').replace(/\s+/g, ''),
            mimeCode: x.attr(bin, 'mimeCode'),
            filename: x.attr(bin, 'filename'),
          })
        : undefined;
      inv.supportingDocuments.push(
        compact({
          reference: val(d, 'IssuerAssignedID') ?? '',
          description: val(d, 'Name'),
          externalLocation: val(d, 'URIID'),
          attachment,
        }) as { reference: string },
      );
    }
    // other type codes are not EN 16931 and stay unmapped
  }
  const proj = r(agreement, 'SpecifiedProcuringProject');
  if (proj) {
    inv.projectReference = val(proj, 'ID');
    const name = val(proj, 'Name');
    if (name !== undefined) inv.extensions.projectName = name;
  }

  // BG-13
  const ship = r(deliveryEl, 'ShipToTradeParty');
  const event = r(deliveryEl, 'ActualDeliverySupplyChainEvent');
  const delivery = compact({
    partyName: val(ship, 'Name'),
    locationIdentifier: partyIds(ship)[0],
    actualDeliveryDate: dt(r(event, 'OccurrenceDateTime'), 'BT-72'),
    address: address(r(ship, 'PostalTradeAddress')),
  });
  if (delivery) inv.delivery = delivery;
  inv.despatchAdviceReference = val(r(deliveryEl, 'DespatchAdviceReferencedDocument'), 'IssuerAssignedID');
  inv.receivingAdviceReference = val(r(deliveryEl, 'ReceivingAdviceReferencedDocument'), 'IssuerAssignedID');

  // Settlement
  const creditor = val(settlement, 'CreditorReferenceID');
  const remittance = val(settlement, 'PaymentReference');
  inv.vatAccountingCurrencyCode = val(settlement, 'TaxCurrencyCode');
  inv.currencyCode = val(settlement, 'InvoiceCurrencyCode');
  const payeeEl = r(settlement, 'PayeeTradeParty');
  if (payeeEl)
    inv.payee = compact({
      name: val(payeeEl, 'Name'),
      identifier: partyIds(payeeEl)[0],
      legalRegistrationIdentifier: ident(r(r(payeeEl, 'SpecifiedLegalOrganization'), 'ID')),
    });

  // BG-16
  let pay: PaymentInstructions | undefined;
  for (const [k, pm] of rs(settlement, 'SpecifiedTradeSettlementPaymentMeans').entries()) {
    const codeEl = r(pm, 'TypeCode');
    const infoEl = r(pm, 'Information');
    if (k === 0) {
      pay = { creditTransfers: [] };
      pay.meansTypeCode = x.take(codeEl);
      pay.meansText = x.take(infoEl);
      const card = r(pm, 'ApplicableTradeSettlementFinancialCard');
      if (card)
        pay.card = compact({ primaryAccountNumber: val(card, 'ID') ?? '', holderName: val(card, 'CardholderName') });
      const debtor = val(r(pm, 'PayerPartyDebtorFinancialAccount'), 'IBANID');
      if (debtor !== undefined) pay.directDebit = { debitedAccountIdentifier: debtor };
    } else if (
      pay &&
      (codeEl?.textContent ?? '').trim() === pay.meansTypeCode &&
      (!infoEl || (infoEl.textContent ?? '').trim() === pay.meansText)
    ) {
      x.take(codeEl);
      x.take(infoEl);
    } else continue;
    const acct = r(pm, 'PayeePartyCreditorFinancialAccount');
    if (acct && pay) {
      pay.creditTransfers.push(
        compact({
          accountIdentifier: val(acct, 'IBANID') ?? val(acct, 'ProprietaryID') ?? '',
          accountName: val(acct, 'AccountName'),
          serviceProviderIdentifier: val(r(pm, 'PayeeSpecifiedCreditorFinancialInstitution'), 'BICID'),
        }) as { accountIdentifier: string },
      );
    }
  }
  if (remittance !== undefined) (pay ??= { creditTransfers: [] }).remittanceInformation = remittance;
  if (creditor !== undefined) {
    pay ??= { creditTransfers: [] };
    pay.directDebit = { ...(pay.directDebit ?? {}), bankAssignedCreditorIdentifier: creditor };
  }

  // BG-23, BT-7, BT-8
  for (const t of rs(settlement, 'ApplicableTradeTax')) {
    x.take(r(t, 'TypeCode'));
    const tpd = x.date102(x.child(r(t, 'TaxPointDate'), NS.udt, 'DateString'), 'BT-7');
    if (tpd !== undefined) inv.vatPointDate ??= tpd;
    const due = val(t, 'DueDateTypeCode');
    if (due !== undefined) inv.vatPointDateCode ??= TAX_POINT_CODE_2475_TO_2005[due] ?? due;
    const vb = compact({
      taxAmount: dec(t, 'CalculatedAmount', 'BT-117'),
      exemptionReasonText: val(t, 'ExemptionReason'),
      taxableAmount: dec(t, 'BasisAmount', 'BT-116'),
      categoryCode: val(t, 'CategoryCode'),
      exemptionReasonCode: val(t, 'ExemptionReasonCode'),
      rate: dec(t, 'RateApplicablePercent', 'BT-119'),
    });
    if (vb) inv.vatBreakdown.push(vb);
  }
  const period = r(settlement, 'BillingSpecifiedPeriod');
  if (period) {
    const p = compact({
      startDate: dt(r(period, 'StartDateTime'), 'BT-73'),
      endDate: dt(r(period, 'EndDateTime'), 'BT-74'),
    });
    if (p) inv.invoicingPeriod = p;
  }
  for (const ac of rs(settlement, 'SpecifiedTradeAllowanceCharge')) {
    const cat = r(ac, 'CategoryTradeTax');
    x.take(r(cat, 'TypeCode'));
    inv.allowanceCharges.push(
      compact({
        charge: indicator(ac),
        amount: dec(ac, 'ActualAmount', 'BT-92') ?? '',
        baseAmount: dec(ac, 'BasisAmount', 'BT-93'),
        percentage: dec(ac, 'CalculationPercent', 'BT-94'),
        vatCategoryCode: val(cat, 'CategoryCode'),
        vatRate: dec(cat, 'RateApplicablePercent', 'BT-96'),
        reason: val(ac, 'Reason'),
        reasonCode: val(ac, 'ReasonCode'),
      }) as { charge: boolean; amount: string },
    );
  }
  // A logistics service charge (CII D16B, used by Factur-X EXTENDED) is a document level charge in EN 16931 terms.
  for (const lc of rs(settlement, 'SpecifiedLogisticsServiceCharge')) {
    const tax = r(lc, 'AppliedTradeTax');
    x.take(r(tax, 'TypeCode'));
    inv.allowanceCharges.push(
      compact({
        charge: true,
        amount: dec(lc, 'AppliedAmount', 'BT-99') ?? '',
        reason: val(lc, 'Description'),
        vatCategoryCode: val(tax, 'CategoryCode'),
        vatRate: dec(tax, 'RateApplicablePercent', 'BT-103'),
      }) as { charge: boolean; amount: string },
    );
  }
  const terms = r(settlement, 'SpecifiedTradePaymentTerms');
  // BT-20 as written: XRechnung's structured lines (BR-DE-18) end with a line break.
  inv.paymentTerms = x.takeVerbatim(r(terms, 'Description'));
  inv.paymentDueDate = dt(r(terms, 'DueDateDateTime'), 'BT-9');
  const mandate = val(terms, 'DirectDebitMandateID');
  if (mandate !== undefined) {
    pay ??= { creditTransfers: [] };
    pay.directDebit = { mandateReference: mandate, ...(pay.directDebit ?? {}) };
  }
  if (pay) inv.paymentInstructions = paymentOrNothing(pay);

  const sum = r(settlement, 'SpecifiedTradeSettlementHeaderMonetarySummation');
  let totalVat: string | undefined;
  let totalVatAcc: string | undefined;
  for (const ta of rs(sum, 'TaxTotalAmount')) {
    const currency = x.attr(ta, 'currencyID');
    // The one in BT-6 is BT-111; when BT-6 equals BT-5 the second of the two is.
    if (
      currency !== undefined &&
      currency === inv.vatAccountingCurrencyCode &&
      (currency !== inv.currencyCode || totalVat !== undefined)
    )
      totalVatAcc = x.decimal(ta, 'BT-111');
    else totalVat = x.decimal(ta, 'BT-110');
  }
  inv.totals =
    compact({
      sumOfLineNetAmounts: dec(sum, 'LineTotalAmount', 'BT-106'),
      sumOfCharges: dec(sum, 'ChargeTotalAmount', 'BT-108'),
      sumOfAllowances: dec(sum, 'AllowanceTotalAmount', 'BT-107'),
      totalWithoutVat: dec(sum, 'TaxBasisTotalAmount', 'BT-109'),
      totalVatAmount: totalVat,
      totalVatAmountInAccountingCurrency: totalVatAcc,
      roundingAmount: dec(sum, 'RoundingAmount', 'BT-114'),
      totalWithVat: dec(sum, 'GrandTotalAmount', 'BT-112'),
      paidAmount: dec(sum, 'TotalPrepaidAmount', 'BT-113'),
      amountDueForPayment: dec(sum, 'DuePayableAmount', 'BT-115'),
    }) ?? {};
  for (const pi of rs(settlement, 'InvoiceReferencedDocument')) {
    const reference = val(pi, 'IssuerAssignedID') ?? '';
    const issueDate = qdt(r(pi, 'FormattedIssueDateTime'), 'BT-26');
    inv.precedingInvoices.push(issueDate !== undefined ? { reference, issueDate } : { reference });
  }
  inv.buyerAccountingReference = val(r(settlement, 'ReceivableSpecifiedTradeAccountingAccount'), 'ID');

  // BG-25
  for (const li of rs(tx, 'IncludedSupplyChainTradeLineItem')) {
    const doc = r(li, 'AssociatedDocumentLineDocument');
    // Sub-lines (ParentLineID) and information lines of Factur-X EXTENDED are not EN 16931 lines and do not count in
    // BT-106; they stay unmapped as a whole. A GROUP line is the EN 16931 line that carries their sum.
    const status = (r(doc, 'LineStatusReasonCode')?.textContent ?? '').trim();
    if (r(doc, 'ParentLineID') || status === 'INFORMATION') continue;
    const prod = r(li, 'SpecifiedTradeProduct');
    const la = r(li, 'SpecifiedLineTradeAgreement');
    const ld = r(li, 'SpecifiedLineTradeDelivery');
    const ls = r(li, 'SpecifiedLineTradeSettlement');
    const line: InvoiceLine = {
      identifier: val(doc, 'LineID') ?? '',
      allowanceCharges: [],
      price: {},
      vat: {},
      item: { classificationIdentifiers: [], attributes: [] },
    };
    const note = val(r(doc, 'IncludedNote'), 'Content');
    if (note !== undefined) line.note = note;
    const objRef = rs(ls, 'AdditionalReferencedDocument').find(
      (d) => (r(d, 'TypeCode')?.textContent ?? '').trim() === '130',
    );
    if (objRef) {
      x.take(r(objRef, 'TypeCode'));
      const value = val(objRef, 'IssuerAssignedID') ?? '';
      const schemeId = val(objRef, 'ReferenceTypeCode');
      line.objectIdentifier = schemeId !== undefined ? { value, schemeId } : { value };
    }
    const qty = r(ld, 'BilledQuantity');
    const quantity = x.decimal(qty, 'BT-129');
    if (quantity !== undefined) line.quantity = quantity;
    const unit = x.attr(qty, 'unitCode');
    if (unit !== undefined) line.quantityUnitCode = unit;
    const net = dec(r(ls, 'SpecifiedTradeSettlementLineMonetarySummation'), 'LineTotalAmount', 'BT-131');
    if (net !== undefined) line.netAmount = net;
    const olr = val(r(la, 'BuyerOrderReferencedDocument'), 'LineID');
    if (olr !== undefined) line.purchaseOrderLineReference = olr;
    const acc = val(r(ls, 'ReceivableSpecifiedTradeAccountingAccount'), 'ID');
    if (acc !== undefined) line.buyerAccountingReference = acc;
    const lp = r(ls, 'BillingSpecifiedPeriod');
    if (lp) {
      const p = compact({
        startDate: dt(r(lp, 'StartDateTime'), 'BT-134'),
        endDate: dt(r(lp, 'EndDateTime'), 'BT-135'),
      });
      if (p) line.period = p;
    }
    for (const ac of rs(ls, 'SpecifiedTradeAllowanceCharge')) {
      line.allowanceCharges.push(
        compact({
          charge: indicator(ac),
          amount: dec(ac, 'ActualAmount', 'BT-136') ?? '',
          baseAmount: dec(ac, 'BasisAmount', 'BT-137'),
          percentage: dec(ac, 'CalculationPercent', 'BT-138'),
          reason: val(ac, 'Reason'),
          reasonCode: val(ac, 'ReasonCode'),
        }) as { charge: boolean; amount: string },
      );
    }
    const gross = r(la, 'GrossPriceProductTradePrice');
    const netP = r(la, 'NetPriceProductTradePrice');
    const netBq = r(netP, 'BasisQuantity');
    const grossBq = r(gross, 'BasisQuantity');
    // BT-149/150 may be written on either price; the net price's wins, the gross one is taken when it agrees.
    const bqEl = netBq ?? grossBq;
    const disc = r(gross, 'AppliedTradeAllowanceCharge');
    if (disc) x.take(x.child(r(disc, 'ChargeIndicator'), NS.udt, 'Indicator'));
    line.price =
      compact({
        netPrice: dec(netP, 'ChargeAmount', 'BT-146'),
        grossPrice: dec(gross, 'ChargeAmount', 'BT-148'),
        discount: dec(disc, 'ActualAmount', 'BT-147'),
        baseQuantity: x.decimal(bqEl, 'BT-149'),
        baseQuantityUnitCode: x.attr(bqEl, 'unitCode'),
      }) ?? {};
    if (
      netBq &&
      grossBq &&
      (grossBq.textContent ?? '').trim() === (netBq.textContent ?? '').trim() &&
      grossBq.getAttribute('unitCode') === netBq.getAttribute('unitCode')
    ) {
      x.take(grossBq);
      x.attr(grossBq, 'unitCode');
    }
    const lt = r(ls, 'ApplicableTradeTax');
    x.take(r(lt, 'TypeCode'));
    line.vat =
      compact({ categoryCode: val(lt, 'CategoryCode'), rate: dec(lt, 'RateApplicablePercent', 'BT-152') }) ?? {};
    const it = line.item;
    const std = r(prod, 'GlobalID');
    if (std) it.standardIdentifier = ident(std);
    const sid = val(prod, 'SellerAssignedID');
    if (sid !== undefined) it.sellersIdentifier = sid;
    const bid = val(prod, 'BuyerAssignedID');
    if (bid !== undefined) it.buyersIdentifier = bid;
    const name = val(prod, 'Name');
    if (name !== undefined) it.name = name;
    const desc = val(prod, 'Description');
    if (desc !== undefined) it.description = desc;
    for (const pc of rs(prod, 'ApplicableProductCharacteristic'))
      it.attributes.push({ name: val(pc, 'Description') ?? '', value: val(pc, 'Value') ?? '' });
    for (const cl of rs(prod, 'DesignatedProductClassification')) {
      const code = r(cl, 'ClassCode');
      const value = x.take(code);
      if (value === undefined) continue;
      it.classificationIdentifiers.push(
        compact({ value, schemeId: x.attr(code, 'listID'), schemeVersion: x.attr(code, 'listVersionID') }) as {
          value: string;
        },
      );
    }
    const origin = val(r(prod, 'OriginTradeCountry'), 'ID');
    if (origin !== undefined) it.countryOfOrigin = origin;
    inv.lines.push(line);
  }

  // Amount currencies other than BT-111's are the invoice currency by the binding; mark them read.
  markCurrencies(x, root);
  return { invoice: inv, syntax: 'CII', unmapped: x.unmapped(root), problems: x.problems };
}

function markCurrencies(x: ReadContext, el: ReadElement): void {
  for (let ce = firstElementOf(el); ce; ce = nextElementOf(ce)) {
    if (ce.hasAttribute('currencyID') && ce.localName !== 'TaxTotalAmount') x.attr(ce, 'currencyID');
    markCurrencies(x, ce);
  }
}
