import { NS } from '../formats/xml/namespaces';
import { TAX_POINT_CODE_2005_TO_2475 } from './cii-reader';
import { add, isDecimal } from './decimal';
import {
  isCreditNote,
  type Contact,
  type Identifier,
  type Invoice,
  type InvoiceLine,
  type LineAllowanceCharge,
  type PostalAddress,
} from './model';
import type { WriteResult } from './ubl-writer';
import { el, group, leaf, serialize, to102, type XmlElement } from './xml-write';

/** EN 16931 model → UN/CEFACT CII D16B (CEN/TS 16931-3-3), elements in the order of the D16B schema. */

const date = (name: string, v: string | undefined): XmlElement | undefined =>
  v !== undefined ? el(name, {}, leaf('udt:DateTimeString', to102(v), { format: '102' })) : undefined;

function address(a: PostalAddress | undefined): XmlElement | undefined {
  if (!a) return undefined;
  return el(
    'ram:PostalTradeAddress',
    {},
    leaf('ram:PostcodeCode', a.postCode),
    leaf('ram:LineOne', a.line1),
    leaf('ram:LineTwo', a.line2),
    leaf('ram:LineThree', a.line3),
    leaf('ram:CityName', a.city),
    leaf('ram:CountryID', a.countryCode),
    leaf('ram:CountrySubDivisionName', a.countrySubdivision),
  );
}

/** BG-20/21 (document level, with its tax) and BG-27/28 (line level): one element order for both. */
function allowanceCharge(ac: LineAllowanceCharge, categoryTax?: XmlElement): XmlElement {
  return el(
    'ram:SpecifiedTradeAllowanceCharge',
    {},
    el('ram:ChargeIndicator', {}, leaf('udt:Indicator', String(ac.charge))),
    leaf('ram:CalculationPercent', ac.percentage),
    leaf('ram:BasisAmount', ac.baseAmount),
    leaf('ram:ActualAmount', ac.amount),
    leaf('ram:ReasonCode', ac.reasonCode),
    leaf('ram:Reason', ac.reason),
    categoryTax,
  );
}

function contact(c: Contact | undefined): XmlElement | undefined {
  if (!c) return undefined;
  return group(
    'ram:DefinedTradeContact',
    {},
    leaf('ram:PersonName', c.point),
    c.telephone !== undefined && el('ram:TelephoneUniversalCommunication', {}, leaf('ram:CompleteNumber', c.telephone)),
    c.email !== undefined && el('ram:EmailURIUniversalCommunication', {}, leaf('ram:URIID', c.email)),
  );
}

/** BT-29 / BT-46 / BT-60 / BT-71: without a scheme `ram:ID`, with one `ram:GlobalID` (schema order: IDs first). */
function partyIds(ids: readonly Identifier[]): XmlElement[] {
  const plain = ids.filter((i) => i.schemeId === undefined).map((i) => leaf('ram:ID', i.value) as XmlElement);
  const global = ids
    .filter((i) => i.schemeId !== undefined)
    .map((i) => leaf('ram:GlobalID', i.value, { schemeID: i.schemeId }) as XmlElement);
  return [...plain, ...global];
}

const idOf = (name: string, v: Identifier | undefined): XmlElement | undefined =>
  v ? leaf(name, v.value, { schemeID: v.schemeId }) : undefined;
const taxReg = (value: string | undefined, scheme: 'VA' | 'FC'): XmlElement | undefined =>
  value !== undefined ? el('ram:SpecifiedTaxRegistration', {}, leaf('ram:ID', value, { schemeID: scheme })) : undefined;
const IBAN = /^[A-Z]{2}[0-9]{2}[A-Z0-9]{8,30}$/;

export function writeCii(inv: Invoice): WriteResult {
  const notCarried: string[] = [];
  const filled: string[] = [];
  const normalised: string[] = [];
  // BR-53 in CII: BT-6 must differ from BT-5. Equal, it says nothing beyond BT-5 (UBL allows it, CII does not).
  const taxCurrency =
    inv.vatAccountingCurrencyCode !== undefined && inv.vatAccountingCurrencyCode === inv.currencyCode
      ? undefined
      : inv.vatAccountingCurrencyCode;
  if (taxCurrency === undefined && inv.vatAccountingCurrencyCode !== undefined) {
    normalised.push(
      `BT-6 VAT accounting currency code "${inv.vatAccountingCurrencyCode}" left out: it equals BT-5, which CII ` +
        `does not allow (BR-53)`,
    );
  }
  const s = inv.seller;
  const b = inv.buyer;
  const pay = inv.paymentInstructions;

  const seller = el(
    'ram:SellerTradeParty',
    {},
    partyIds(s.identifiers),
    leaf('ram:Name', s.name),
    leaf('ram:Description', s.additionalLegalInformation),
    group(
      'ram:SpecifiedLegalOrganization',
      {},
      idOf('ram:ID', s.legalRegistrationIdentifier),
      leaf('ram:TradingBusinessName', s.tradingName),
    ),
    contact(s.contact),
    address(s.postalAddress),
    s.electronicAddress && el('ram:URIUniversalCommunication', {}, idOf('ram:URIID', s.electronicAddress)),
    taxReg(s.vatIdentifier, 'VA'),
    taxReg(s.taxRegistrationIdentifier, 'FC'),
  );
  const buyer = el(
    'ram:BuyerTradeParty',
    {},
    partyIds(b.identifier ? [b.identifier] : []),
    leaf('ram:Name', b.name),
    group(
      'ram:SpecifiedLegalOrganization',
      {},
      idOf('ram:ID', b.legalRegistrationIdentifier),
      leaf('ram:TradingBusinessName', b.tradingName),
    ),
    contact(b.contact),
    address(b.postalAddress),
    b.electronicAddress && el('ram:URIUniversalCommunication', {}, idOf('ram:URIID', b.electronicAddress)),
    taxReg(b.vatIdentifier, 'VA'),
  );
  const t = inv.taxRepresentative;
  const taxRep = t
    ? el(
        'ram:SellerTaxRepresentativeTradeParty',
        {},
        leaf('ram:Name', t.name),
        address(t.postalAddress),
        taxReg(t.vatIdentifier, 'VA'),
      )
    : undefined;

  const agreement = el(
    'ram:ApplicableHeaderTradeAgreement',
    {},
    leaf('ram:BuyerReference', inv.buyerReference),
    seller,
    buyer,
    taxRep,
    inv.salesOrderReference !== undefined &&
      el('ram:SellerOrderReferencedDocument', {}, leaf('ram:IssuerAssignedID', inv.salesOrderReference)),
    inv.purchaseOrderReference !== undefined &&
      el('ram:BuyerOrderReferencedDocument', {}, leaf('ram:IssuerAssignedID', inv.purchaseOrderReference)),
    inv.contractReference !== undefined &&
      el('ram:ContractReferencedDocument', {}, leaf('ram:IssuerAssignedID', inv.contractReference)),
    inv.supportingDocuments.map((d) =>
      el(
        'ram:AdditionalReferencedDocument',
        {},
        leaf('ram:IssuerAssignedID', d.reference),
        leaf('ram:URIID', d.externalLocation),
        leaf('ram:TypeCode', '916'),
        leaf('ram:Name', d.description),
        d.attachment &&
          leaf('ram:AttachmentBinaryObject', d.attachment.base64, {
            mimeCode: d.attachment.mimeCode,
            filename: d.attachment.filename,
          }),
      ),
    ),
    inv.tenderOrLotReference !== undefined &&
      el(
        'ram:AdditionalReferencedDocument',
        {},
        leaf('ram:IssuerAssignedID', inv.tenderOrLotReference),
        leaf('ram:TypeCode', '50'),
      ),
    inv.invoicedObjectIdentifier &&
      el(
        'ram:AdditionalReferencedDocument',
        {},
        leaf('ram:IssuerAssignedID', inv.invoicedObjectIdentifier.value),
        leaf('ram:TypeCode', '130'),
        leaf('ram:ReferenceTypeCode', inv.invoicedObjectIdentifier.schemeId),
      ),
    inv.projectReference !== undefined &&
      el(
        'ram:SpecifiedProcuringProject',
        {},
        leaf('ram:ID', inv.projectReference),
        // ram:Name is mandatory in CII and has no EN 16931 term; the binding's examples write "Project reference".
        leaf(
          'ram:Name',
          inv.extensions.projectName ?? fill(filled, 'ram:SpecifiedProcuringProject/ram:Name', 'Project reference'),
        ),
      ),
  );

  const d = inv.delivery;
  const delivery = el(
    'ram:ApplicableHeaderTradeDelivery',
    {},
    d &&
      group(
        'ram:ShipToTradeParty',
        {},
        partyIds(d.locationIdentifier ? [d.locationIdentifier] : []),
        leaf('ram:Name', d.partyName),
        address(d.address),
      ),
    d?.actualDeliveryDate !== undefined &&
      el('ram:ActualDeliverySupplyChainEvent', {}, date('ram:OccurrenceDateTime', d.actualDeliveryDate)),
    inv.despatchAdviceReference !== undefined &&
      el('ram:DespatchAdviceReferencedDocument', {}, leaf('ram:IssuerAssignedID', inv.despatchAdviceReference)),
    inv.receivingAdviceReference !== undefined &&
      el('ram:ReceivingAdviceReferencedDocument', {}, leaf('ram:IssuerAssignedID', inv.receivingAdviceReference)),
  );

  const p = inv.payee;
  const payee = p
    ? el(
        'ram:PayeeTradeParty',
        {},
        partyIds(p.identifier ? [p.identifier] : []),
        leaf('ram:Name', p.name),
        p.legalRegistrationIdentifier &&
          el('ram:SpecifiedLegalOrganization', {}, idOf('ram:ID', p.legalRegistrationIdentifier)),
      )
    : undefined;

  const means: XmlElement[] = [];
  if (
    pay &&
    (pay.meansTypeCode !== undefined ||
      pay.creditTransfers.length > 0 ||
      pay.card ||
      pay.directDebit?.debitedAccountIdentifier !== undefined)
  ) {
    const accounts = pay.creditTransfers.length > 0 ? pay.creditTransfers : [undefined];
    accounts.forEach((ct, k) => {
      const first = k === 0;
      means.push(
        el(
          'ram:SpecifiedTradeSettlementPaymentMeans',
          {},
          leaf('ram:TypeCode', pay.meansTypeCode),
          leaf('ram:Information', pay.meansText),
          first && pay.card
            ? el(
                'ram:ApplicableTradeSettlementFinancialCard',
                {},
                leaf('ram:ID', pay.card.primaryAccountNumber),
                leaf('ram:CardholderName', pay.card.holderName),
              )
            : undefined,
          first && pay.directDebit?.debitedAccountIdentifier !== undefined
            ? el(
                'ram:PayerPartyDebtorFinancialAccount',
                {},
                leaf('ram:IBANID', pay.directDebit.debitedAccountIdentifier),
              )
            : undefined,
          ct &&
            el(
              'ram:PayeePartyCreditorFinancialAccount',
              {},
              IBAN.test(ct.accountIdentifier) ? leaf('ram:IBANID', ct.accountIdentifier) : undefined,
              leaf('ram:AccountName', ct.accountName),
              IBAN.test(ct.accountIdentifier) ? undefined : leaf('ram:ProprietaryID', ct.accountIdentifier),
            ),
          ct?.serviceProviderIdentifier !== undefined &&
            el('ram:PayeeSpecifiedCreditorFinancialInstitution', {}, leaf('ram:BICID', ct.serviceProviderIdentifier)),
        ),
      );
    });
  }
  if (inv.extensions.cardNetworkId !== undefined)
    notCarried.push(
      `card network "${inv.extensions.cardNetworkId}" (UBL cac:CardAccount/cbc:NetworkID): CII has no element for it`,
    );

  const [firstPreceding, ...otherPreceding] = inv.precedingInvoices;
  for (const pi of otherPreceding) {
    const issued = pi.issueDate !== undefined ? ` issued ${pi.issueDate}` : '';
    notCarried.push(
      `BG-3 preceding invoice reference "${pi.reference}"${issued}: CII D16B holds one ` +
        `ram:InvoiceReferencedDocument in the header settlement, which carries the first ("${firstPreceding?.reference}")`,
    );
  }

  const dueCode =
    inv.vatPointDateCode !== undefined
      ? (TAX_POINT_CODE_2005_TO_2475[inv.vatPointDateCode] ?? inv.vatPointDateCode)
      : undefined;
  const taxes = inv.vatBreakdown.map((v, k) =>
    el(
      'ram:ApplicableTradeTax',
      {},
      leaf('ram:CalculatedAmount', v.taxAmount),
      leaf('ram:TypeCode', 'VAT'),
      leaf('ram:ExemptionReason', v.exemptionReasonText),
      leaf('ram:BasisAmount', v.taxableAmount),
      leaf('ram:CategoryCode', v.categoryCode),
      leaf('ram:ExemptionReasonCode', v.exemptionReasonCode),
      // CII-SR-461: one TaxPointDate per document.
      k === 0 &&
        inv.vatPointDate !== undefined &&
        el('ram:TaxPointDate', {}, leaf('udt:DateString', to102(inv.vatPointDate), { format: '102' })),
      leaf('ram:DueDateTypeCode', dueCode),
      leaf('ram:RateApplicablePercent', v.rate),
    ),
  );
  if (inv.vatBreakdown.length === 0 && (inv.vatPointDate !== undefined || dueCode !== undefined)) {
    notCarried.push(
      'BT-7 / BT-8: CII carries the tax point date in the VAT breakdown (BG-23), which this document lacks',
    );
  }
  const allowanceCharges = inv.allowanceCharges.map((ac) =>
    allowanceCharge(
      ac,
      el(
        'ram:CategoryTradeTax',
        {},
        leaf('ram:TypeCode', 'VAT'),
        leaf('ram:CategoryCode', ac.vatCategoryCode),
        leaf('ram:RateApplicablePercent', ac.vatRate),
      ),
    ),
  );
  const dd = pay?.directDebit;
  const terms =
    inv.paymentTerms !== undefined || inv.paymentDueDate !== undefined || dd?.mandateReference !== undefined
      ? el(
          'ram:SpecifiedTradePaymentTerms',
          {},
          leaf('ram:Description', inv.paymentTerms),
          date('ram:DueDateDateTime', inv.paymentDueDate),
          leaf('ram:DirectDebitMandateID', dd?.mandateReference),
        )
      : undefined;
  const tot = inv.totals;
  const summation = el(
    'ram:SpecifiedTradeSettlementHeaderMonetarySummation',
    {},
    leaf('ram:LineTotalAmount', tot.sumOfLineNetAmounts),
    leaf('ram:ChargeTotalAmount', tot.sumOfCharges),
    leaf('ram:AllowanceTotalAmount', tot.sumOfAllowances),
    leaf('ram:TaxBasisTotalAmount', tot.totalWithoutVat),
    leaf('ram:TaxTotalAmount', tot.totalVatAmount, { currencyID: inv.currencyCode }),
    leaf('ram:TaxTotalAmount', taxCurrency !== undefined ? tot.totalVatAmountInAccountingCurrency : undefined, {
      currencyID: taxCurrency,
    }),
    leaf('ram:RoundingAmount', tot.roundingAmount),
    leaf('ram:GrandTotalAmount', tot.totalWithVat),
    leaf('ram:TotalPrepaidAmount', tot.paidAmount),
    leaf('ram:DuePayableAmount', tot.amountDueForPayment),
  );
  const settlement = el(
    'ram:ApplicableHeaderTradeSettlement',
    {},
    leaf('ram:CreditorReferenceID', dd?.bankAssignedCreditorIdentifier),
    leaf('ram:PaymentReference', pay?.remittanceInformation),
    leaf('ram:TaxCurrencyCode', taxCurrency),
    leaf('ram:InvoiceCurrencyCode', inv.currencyCode),
    payee,
    means,
    taxes,
    inv.invoicingPeriod &&
      el(
        'ram:BillingSpecifiedPeriod',
        {},
        date('ram:StartDateTime', inv.invoicingPeriod.startDate),
        date('ram:EndDateTime', inv.invoicingPeriod.endDate),
      ),
    allowanceCharges,
    terms,
    summation,
    // CII D16B has one ram:InvoiceReferencedDocument in the header settlement: the first BG-3 is carried.
    inv.precedingInvoices
      .slice(0, 1)
      .map((pi) =>
        el(
          'ram:InvoiceReferencedDocument',
          {},
          leaf('ram:IssuerAssignedID', pi.reference),
          pi.issueDate !== undefined &&
            el('ram:FormattedIssueDateTime', {}, leaf('qdt:DateTimeString', to102(pi.issueDate), { format: '102' })),
        ),
      ),
    inv.buyerAccountingReference !== undefined &&
      el('ram:ReceivableSpecifiedTradeAccountingAccount', {}, leaf('ram:ID', inv.buyerAccountingReference)),
  );

  const root = el(
    'rsm:CrossIndustryInvoice',
    { 'xmlns:rsm': NS.rsm, 'xmlns:ram': NS.ram, 'xmlns:qdt': NS.qdt, 'xmlns:udt': NS.udt },
    el(
      'rsm:ExchangedDocumentContext',
      {},
      inv.processControl.businessProcessType !== undefined &&
        el(
          'ram:BusinessProcessSpecifiedDocumentContextParameter',
          {},
          leaf('ram:ID', inv.processControl.businessProcessType),
        ),
      el(
        'ram:GuidelineSpecifiedDocumentContextParameter',
        {},
        leaf('ram:ID', inv.processControl.specificationIdentifier),
      ),
    ),
    el(
      'rsm:ExchangedDocument',
      {},
      leaf('ram:ID', inv.number),
      leaf('ram:TypeCode', inv.typeCode),
      date('ram:IssueDateTime', inv.issueDate),
      inv.notes.map((n) =>
        el('ram:IncludedNote', {}, leaf('ram:Content', n.note), leaf('ram:SubjectCode', n.subjectCode)),
      ),
    ),
    el(
      'rsm:SupplyChainTradeTransaction',
      {},
      inv.lines.map((l) => line(l, filled)),
      agreement,
      delivery,
      settlement,
    ),
  );
  return {
    xml: serialize(root),
    notCarried,
    filled,
    normalised,
    documentType: isCreditNote(inv) ? 'CreditNote' : 'Invoice',
  };
}

function fill(filled: string[], what: string, value: string): string {
  filled.push(`${what} = "${value}" (mandatory in CII, no EN 16931 term holds it)`);
  return value;
}

function line(l: InvoiceLine, filled: string[]): XmlElement {
  const it = l.item;
  const pr = l.price;
  // CII writes a discount only beside a gross price; without BT-148 it is BT-146 + BT-147 (the norm's definition).
  let gross = pr.grossPrice;
  if (
    gross === undefined &&
    pr.discount !== undefined &&
    pr.netPrice !== undefined &&
    isDecimal(pr.discount) &&
    isDecimal(pr.netPrice)
  ) {
    gross = add(pr.netPrice, pr.discount);
    filled.push(
      `line ${l.identifier}: BT-148 Item gross price = ${gross} (BT-146 + BT-147; CII carries a price discount only ` +
        `with the gross price)`,
    );
  }
  const bq = leaf('ram:BasisQuantity', pr.baseQuantity, { unitCode: pr.baseQuantityUnitCode });
  return el(
    'ram:IncludedSupplyChainTradeLineItem',
    {},
    el(
      'ram:AssociatedDocumentLineDocument',
      {},
      leaf('ram:LineID', l.identifier),
      l.note !== undefined && el('ram:IncludedNote', {}, leaf('ram:Content', l.note)),
    ),
    el(
      'ram:SpecifiedTradeProduct',
      {},
      idOf('ram:GlobalID', it.standardIdentifier),
      leaf('ram:SellerAssignedID', it.sellersIdentifier),
      leaf('ram:BuyerAssignedID', it.buyersIdentifier),
      leaf('ram:Name', it.name),
      leaf('ram:Description', it.description),
      it.attributes.map((a) =>
        el('ram:ApplicableProductCharacteristic', {}, leaf('ram:Description', a.name), leaf('ram:Value', a.value)),
      ),
      it.classificationIdentifiers.map((c) =>
        el(
          'ram:DesignatedProductClassification',
          {},
          leaf('ram:ClassCode', c.value, { listID: c.schemeId, listVersionID: c.schemeVersion }),
        ),
      ),
      it.countryOfOrigin !== undefined && el('ram:OriginTradeCountry', {}, leaf('ram:ID', it.countryOfOrigin)),
    ),
    el(
      'ram:SpecifiedLineTradeAgreement',
      {},
      l.purchaseOrderLineReference !== undefined &&
        el('ram:BuyerOrderReferencedDocument', {}, leaf('ram:LineID', l.purchaseOrderLineReference)),
      gross !== undefined &&
        el(
          'ram:GrossPriceProductTradePrice',
          {},
          leaf('ram:ChargeAmount', gross),
          pr.discount !== undefined &&
            el(
              'ram:AppliedTradeAllowanceCharge',
              {},
              el('ram:ChargeIndicator', {}, leaf('udt:Indicator', 'false')),
              leaf('ram:ActualAmount', pr.discount),
            ),
        ),
      el('ram:NetPriceProductTradePrice', {}, leaf('ram:ChargeAmount', pr.netPrice), bq),
    ),
    el('ram:SpecifiedLineTradeDelivery', {}, leaf('ram:BilledQuantity', l.quantity, { unitCode: l.quantityUnitCode })),
    el(
      'ram:SpecifiedLineTradeSettlement',
      {},
      el(
        'ram:ApplicableTradeTax',
        {},
        leaf('ram:TypeCode', 'VAT'),
        leaf('ram:CategoryCode', l.vat.categoryCode),
        leaf('ram:RateApplicablePercent', l.vat.rate),
      ),
      l.period &&
        el(
          'ram:BillingSpecifiedPeriod',
          {},
          date('ram:StartDateTime', l.period.startDate),
          date('ram:EndDateTime', l.period.endDate),
        ),
      l.allowanceCharges.map((ac) => allowanceCharge(ac)),
      el('ram:SpecifiedTradeSettlementLineMonetarySummation', {}, leaf('ram:LineTotalAmount', l.netAmount)),
      l.objectIdentifier &&
        el(
          'ram:AdditionalReferencedDocument',
          {},
          leaf('ram:IssuerAssignedID', l.objectIdentifier.value),
          leaf('ram:TypeCode', '130'),
          leaf('ram:ReferenceTypeCode', l.objectIdentifier.schemeId),
        ),
      l.buyerAccountingReference !== undefined &&
        el('ram:ReceivableSpecifiedTradeAccountingAccount', {}, leaf('ram:ID', l.buyerAccountingReference)),
    ),
  );
}
