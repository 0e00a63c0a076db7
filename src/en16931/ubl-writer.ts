import { NS } from '../formats/xml/namespaces';
import {
  isCreditNote,
  type Contact,
  type Identifier,
  type Invoice,
  type InvoiceLine,
  type LineAllowanceCharge,
  type PostalAddress,
} from './model';
import { add as addDecimal, isDecimal, subtract } from './decimal';
import { el, group, leaf, serialize, type XmlElement } from './xml-write';

/**
 * EN 16931 model → UBL 2.1 Invoice or CreditNote (CEN/TS 16931-3-2), elements in schema order. The root follows BT-3
 * (credit note codes → CreditNote) unless the caller fixes it. What the chosen UBL document cannot hold is returned in
 * `notCarried`, never dropped silently.
 */

export interface WriteResult {
  xml: string;
  /** Terms of the model the target syntax could not carry, with the reason. */
  notCarried: string[];
  /** Values the syntax requires that the model does not have, and what was written instead. */
  filled: string[];
  /** Redundant values left out because the target syntax's rules forbid them (no information lost). */
  normalised: string[];
  /** The business document written (UBL root; for CII from BT-3). */
  documentType: 'Invoice' | 'CreditNote';
}

export interface UblWriteOptions {
  root?: 'Invoice' | 'CreditNote';
  /** cac:TaxScheme/cbc:ID of the sales tax (PINT A-NZ and SG call it GST); EN 16931 has only VAT. */
  taxSchemeId?: string;
}

const id = (name: string, v: Identifier | undefined): XmlElement | undefined =>
  v ? leaf(name, v.value, { schemeID: v.schemeId }) : undefined;

function address(name: string, a: PostalAddress | undefined): XmlElement | undefined {
  if (!a) return undefined;
  return el(
    name,
    {},
    leaf('cbc:StreetName', a.line1),
    leaf('cbc:AdditionalStreetName', a.line2),
    leaf('cbc:CityName', a.city),
    leaf('cbc:PostalZone', a.postCode),
    leaf('cbc:CountrySubentity', a.countrySubdivision),
    a.line3 !== undefined && el('cac:AddressLine', {}, leaf('cbc:Line', a.line3)),
    // cac:Country is mandatory in EN 16931 addresses; written when the model has it.
    a.countryCode !== undefined && el('cac:Country', {}, leaf('cbc:IdentificationCode', a.countryCode)),
  );
}

/** BG-20/21 (document level, with its tax category) and BG-27/28 (line level): one element order for both. */
function allowanceCharge(
  ac: LineAllowanceCharge,
  amt: (name: string, v: string | undefined) => XmlElement | undefined,
  taxCategory?: XmlElement,
): XmlElement {
  return el(
    'cac:AllowanceCharge',
    {},
    leaf('cbc:ChargeIndicator', String(ac.charge)),
    leaf('cbc:AllowanceChargeReasonCode', ac.reasonCode),
    leaf('cbc:AllowanceChargeReason', ac.reason),
    leaf('cbc:MultiplierFactorNumeric', ac.percentage),
    amt('cbc:Amount', ac.amount),
    amt('cbc:BaseAmount', ac.baseAmount),
    taxCategory,
  );
}

function contact(c: Contact | undefined): XmlElement | undefined {
  if (!c) return undefined;
  return group(
    'cac:Contact',
    {},
    leaf('cbc:Name', c.point),
    leaf('cbc:Telephone', c.telephone),
    leaf('cbc:ElectronicMail', c.email),
  );
}

const vatScheme = (schemeId = 'VAT'): XmlElement => el('cac:TaxScheme', {}, leaf('cbc:ID', schemeId));

export function writeUbl(inv: Invoice, opts: UblWriteOptions = {}): WriteResult {
  const notCarried: string[] = [];
  const filled: string[] = [];
  const taxScheme = (): XmlElement => vatScheme(opts.taxSchemeId);
  const cn = (opts.root ?? (isCreditNote(inv) ? 'CreditNote' : 'Invoice')) === 'CreditNote';
  const cur = inv.currencyCode;
  const amt = (name: string, v: string | undefined, currency = cur): XmlElement | undefined =>
    leaf(name, v, { currencyID: currency });

  const pay = inv.paymentInstructions;
  const sepa = pay?.directDebit?.bankAssignedCreditorIdentifier;
  const sepaId = (): XmlElement | undefined =>
    sepa !== undefined ? el('cac:PartyIdentification', {}, leaf('cbc:ID', sepa, { schemeID: 'SEPA' })) : undefined;

  const s = inv.seller;
  const seller = el(
    'cac:AccountingSupplierParty',
    {},
    el(
      'cac:Party',
      {},
      id('cbc:EndpointID', s.electronicAddress),
      s.identifiers.map((i) => el('cac:PartyIdentification', {}, id('cbc:ID', i))),
      // BT-90 goes with the payee when there is one, else with the seller (binding: either place).
      inv.payee ? undefined : sepaId(),
      s.tradingName !== undefined && el('cac:PartyName', {}, leaf('cbc:Name', s.tradingName)),
      address('cac:PostalAddress', s.postalAddress),
      s.vatIdentifier !== undefined &&
        el('cac:PartyTaxScheme', {}, leaf('cbc:CompanyID', s.vatIdentifier), taxScheme()),
      s.taxRegistrationIdentifier !== undefined &&
        el(
          'cac:PartyTaxScheme',
          {},
          leaf('cbc:CompanyID', s.taxRegistrationIdentifier),
          el('cac:TaxScheme', {}, leaf('cbc:ID', 'TAX')),
        ),
      el(
        'cac:PartyLegalEntity',
        {},
        leaf('cbc:RegistrationName', s.name),
        id('cbc:CompanyID', s.legalRegistrationIdentifier),
        leaf('cbc:CompanyLegalForm', s.additionalLegalInformation),
      ),
      contact(s.contact),
    ),
  );
  const b = inv.buyer;
  const buyer = el(
    'cac:AccountingCustomerParty',
    {},
    el(
      'cac:Party',
      {},
      id('cbc:EndpointID', b.electronicAddress),
      b.identifier && el('cac:PartyIdentification', {}, id('cbc:ID', b.identifier)),
      b.tradingName !== undefined && el('cac:PartyName', {}, leaf('cbc:Name', b.tradingName)),
      address('cac:PostalAddress', b.postalAddress),
      b.vatIdentifier !== undefined &&
        el('cac:PartyTaxScheme', {}, leaf('cbc:CompanyID', b.vatIdentifier), taxScheme()),
      el(
        'cac:PartyLegalEntity',
        {},
        leaf('cbc:RegistrationName', b.name),
        id('cbc:CompanyID', b.legalRegistrationIdentifier),
      ),
      contact(b.contact),
    ),
  );
  const p = inv.payee;
  const payee = p
    ? el(
        'cac:PayeeParty',
        {},
        p.identifier && el('cac:PartyIdentification', {}, id('cbc:ID', p.identifier)),
        sepaId(),
        p.name !== undefined && el('cac:PartyName', {}, leaf('cbc:Name', p.name)),
        p.legalRegistrationIdentifier &&
          el('cac:PartyLegalEntity', {}, id('cbc:CompanyID', p.legalRegistrationIdentifier)),
      )
    : undefined;
  const t = inv.taxRepresentative;
  const taxRep = t
    ? el(
        'cac:TaxRepresentativeParty',
        {},
        t.name !== undefined && el('cac:PartyName', {}, leaf('cbc:Name', t.name)),
        address('cac:PostalAddress', t.postalAddress),
        t.vatIdentifier !== undefined &&
          el('cac:PartyTaxScheme', {}, leaf('cbc:CompanyID', t.vatIdentifier), taxScheme()),
      )
    : undefined;
  const d = inv.delivery;
  const delivery = d
    ? el(
        'cac:Delivery',
        {},
        leaf('cbc:ActualDeliveryDate', d.actualDeliveryDate),
        group('cac:DeliveryLocation', {}, id('cbc:ID', d.locationIdentifier), address('cac:Address', d.address)),
        d.partyName !== undefined &&
          el('cac:DeliveryParty', {}, el('cac:PartyName', {}, leaf('cbc:Name', d.partyName))),
      )
    : undefined;

  // BG-16: UBL has one account per PaymentMeans, so each BG-17 gets its own PaymentMeans with the same BT-81..83.
  const paymentMeans: XmlElement[] = [];
  let dueDateCarried = !cn;
  if (
    pay &&
    (pay.meansTypeCode !== undefined ||
      pay.creditTransfers.length > 0 ||
      pay.card ||
      pay.directDebit?.mandateReference ||
      pay.directDebit?.debitedAccountIdentifier)
  ) {
    const accounts = pay.creditTransfers.length > 0 ? pay.creditTransfers : [undefined];
    accounts.forEach((ct, k) => {
      const first = k === 0;
      if (cn && first && inv.paymentDueDate !== undefined) dueDateCarried = true;
      paymentMeans.push(
        el(
          'cac:PaymentMeans',
          {},
          // UBL-SR-46: the payment means text once, on the first PaymentMeans.
          leaf('cbc:PaymentMeansCode', pay.meansTypeCode, { name: first ? pay.meansText : undefined }),
          cn && first ? leaf('cbc:PaymentDueDate', inv.paymentDueDate) : undefined,
          leaf('cbc:PaymentID', pay.remittanceInformation),
          first && pay.card
            ? el(
                'cac:CardAccount',
                {},
                leaf('cbc:PrimaryAccountNumberID', pay.card.primaryAccountNumber),
                leaf(
                  'cbc:NetworkID',
                  inv.extensions.cardNetworkId ?? fill(filled, 'cac:CardAccount/cbc:NetworkID', 'NA'),
                ),
                leaf('cbc:HolderName', pay.card.holderName),
              )
            : undefined,
          ct &&
            el(
              'cac:PayeeFinancialAccount',
              {},
              leaf('cbc:ID', ct.accountIdentifier),
              leaf('cbc:Name', ct.accountName),
              ct.serviceProviderIdentifier !== undefined &&
                el('cac:FinancialInstitutionBranch', {}, leaf('cbc:ID', ct.serviceProviderIdentifier)),
            ),
          first &&
            pay.directDebit &&
            (pay.directDebit.mandateReference !== undefined || pay.directDebit.debitedAccountIdentifier !== undefined)
            ? el(
                'cac:PaymentMandate',
                {},
                leaf('cbc:ID', pay.directDebit.mandateReference),
                pay.directDebit.debitedAccountIdentifier !== undefined &&
                  el('cac:PayerFinancialAccount', {}, leaf('cbc:ID', pay.directDebit.debitedAccountIdentifier)),
              )
            : undefined,
        ),
      );
    });
  }
  if (pay && paymentMeans.length === 0) {
    for (const [term, v] of [
      ['BT-82 Payment means text', pay.meansText],
      ['BT-83 Remittance information', pay.remittanceInformation],
    ] as const) {
      if (v !== undefined)
        notCarried.push(
          `${term}: UBL carries it in cac:PaymentMeans, which needs BT-81 Payment means type code, absent here`,
        );
    }
  }
  if (!dueDateCarried && inv.paymentDueDate !== undefined) {
    notCarried.push(
      'BT-9 Payment due date: a UBL CreditNote carries it only in cac:PaymentMeans, and the document has no payment ' +
        'instructions (BT-81)',
    );
  }

  const allowanceCharges = inv.allowanceCharges.map((ac) =>
    allowanceCharge(
      ac,
      amt,
      el('cac:TaxCategory', {}, leaf('cbc:ID', ac.vatCategoryCode), leaf('cbc:Percent', ac.vatRate), taxScheme()),
    ),
  );
  const tot = inv.totals;
  const taxTotals: XmlElement[] = [];
  if (tot.totalVatAmount !== undefined || inv.vatBreakdown.length > 0) {
    taxTotals.push(
      el(
        'cac:TaxTotal',
        {},
        amt('cbc:TaxAmount', tot.totalVatAmount ?? derivedTotalVat(inv, filled)),
        inv.vatBreakdown.map((v) =>
          el(
            'cac:TaxSubtotal',
            {},
            amt('cbc:TaxableAmount', v.taxableAmount),
            amt('cbc:TaxAmount', v.taxAmount),
            el(
              'cac:TaxCategory',
              {},
              leaf('cbc:ID', v.categoryCode),
              leaf('cbc:Percent', v.rate),
              leaf('cbc:TaxExemptionReasonCode', v.exemptionReasonCode),
              leaf('cbc:TaxExemptionReason', v.exemptionReasonText),
              taxScheme(),
            ),
          ),
        ),
      ),
    );
  }
  if (tot.totalVatAmountInAccountingCurrency !== undefined) {
    taxTotals.push(
      el(
        'cac:TaxTotal',
        {},
        amt('cbc:TaxAmount', tot.totalVatAmountInAccountingCurrency, inv.vatAccountingCurrencyCode),
      ),
    );
  }
  const monetary = el(
    'cac:LegalMonetaryTotal',
    {},
    amt('cbc:LineExtensionAmount', tot.sumOfLineNetAmounts),
    amt('cbc:TaxExclusiveAmount', tot.totalWithoutVat),
    amt('cbc:TaxInclusiveAmount', tot.totalWithVat),
    amt('cbc:AllowanceTotalAmount', tot.sumOfAllowances),
    amt('cbc:ChargeTotalAmount', tot.sumOfCharges),
    amt('cbc:PrepaidAmount', tot.paidAmount),
    amt('cbc:PayableRoundingAmount', tot.roundingAmount),
    amt('cbc:PayableAmount', tot.amountDueForPayment),
  );

  const docRefs = [
    ...inv.supportingDocuments.map((sd) =>
      el(
        'cac:AdditionalDocumentReference',
        {},
        leaf('cbc:ID', sd.reference),
        leaf('cbc:DocumentDescription', sd.description),
        group(
          'cac:Attachment',
          {},
          sd.attachment &&
            leaf('cbc:EmbeddedDocumentBinaryObject', sd.attachment.base64, {
              mimeCode: sd.attachment.mimeCode,
              filename: sd.attachment.filename,
            }),
          sd.externalLocation !== undefined && el('cac:ExternalReference', {}, leaf('cbc:URI', sd.externalLocation)),
        ),
      ),
    ),
    inv.invoicedObjectIdentifier &&
      el(
        'cac:AdditionalDocumentReference',
        {},
        id('cbc:ID', inv.invoicedObjectIdentifier),
        leaf('cbc:DocumentTypeCode', '130'),
      ),
    cn && inv.projectReference !== undefined
      ? el(
          'cac:AdditionalDocumentReference',
          {},
          leaf('cbc:ID', inv.projectReference),
          leaf('cbc:DocumentTypeCode', '50'),
        )
      : undefined,
  ];
  const originator =
    inv.tenderOrLotReference !== undefined
      ? el('cac:OriginatorDocumentReference', {}, leaf('cbc:ID', inv.tenderOrLotReference))
      : undefined;
  const contract =
    inv.contractReference !== undefined
      ? el('cac:ContractDocumentReference', {}, leaf('cbc:ID', inv.contractReference))
      : undefined;

  const period =
    inv.invoicingPeriod || inv.vatPointDateCode !== undefined
      ? el(
          'cac:InvoicePeriod',
          {},
          leaf('cbc:StartDate', inv.invoicingPeriod?.startDate),
          leaf('cbc:EndDate', inv.invoicingPeriod?.endDate),
          leaf('cbc:DescriptionCode', inv.vatPointDateCode),
        )
      : undefined;
  const notes = inv.notes.map((n) => {
    if (n.subjectCode === undefined) return leaf('cbc:Note', n.note);
    // The #CODE# prefix can only carry a code without '#' or spaces.
    if (!/^[A-Za-z0-9]{1,10}$/.test(n.subjectCode)) {
      notCarried.push(
        `BT-21 Invoice note subject code "${n.subjectCode}": cannot be written as a #CODE# prefix of cbc:Note`,
      );
      return leaf('cbc:Note', n.note);
    }
    return leaf('cbc:Note', `#${n.subjectCode}#${n.note}`);
  });

  const rootName = cn ? 'CreditNote' : 'Invoice';
  const root = el(
    rootName,
    { xmlns: cn ? NS.ublCreditNote : NS.ublInvoice, 'xmlns:cac': NS.cac, 'xmlns:cbc': NS.cbc },
    leaf('cbc:CustomizationID', inv.processControl.specificationIdentifier),
    leaf('cbc:ProfileID', inv.processControl.businessProcessType),
    leaf('cbc:ID', inv.number),
    leaf('cbc:IssueDate', inv.issueDate),
    cn ? undefined : leaf('cbc:DueDate', inv.paymentDueDate),
    cn ? leaf('cbc:TaxPointDate', inv.vatPointDate) : undefined,
    leaf(cn ? 'cbc:CreditNoteTypeCode' : 'cbc:InvoiceTypeCode', inv.typeCode),
    notes,
    cn ? undefined : leaf('cbc:TaxPointDate', inv.vatPointDate),
    leaf('cbc:DocumentCurrencyCode', inv.currencyCode),
    leaf('cbc:TaxCurrencyCode', inv.vatAccountingCurrencyCode),
    leaf('cbc:AccountingCost', inv.buyerAccountingReference),
    leaf('cbc:BuyerReference', inv.buyerReference),
    period,
    (inv.purchaseOrderReference !== undefined || inv.salesOrderReference !== undefined) &&
      // cbc:ID is mandatory in UBL's OrderReference; a sales order reference alone needs a placeholder (binding: "NA").
      el(
        'cac:OrderReference',
        {},
        leaf('cbc:ID', inv.purchaseOrderReference ?? fill(filled, 'cac:OrderReference/cbc:ID', 'NA')),
        leaf('cbc:SalesOrderID', inv.salesOrderReference),
      ),
    inv.precedingInvoices.map((pi) =>
      el(
        'cac:BillingReference',
        {},
        el('cac:InvoiceDocumentReference', {}, leaf('cbc:ID', pi.reference), leaf('cbc:IssueDate', pi.issueDate)),
      ),
    ),
    inv.despatchAdviceReference !== undefined &&
      el('cac:DespatchDocumentReference', {}, leaf('cbc:ID', inv.despatchAdviceReference)),
    inv.receivingAdviceReference !== undefined &&
      el('cac:ReceiptDocumentReference', {}, leaf('cbc:ID', inv.receivingAdviceReference)),
    cn ? [contract, ...docRefs, originator] : [originator, contract, ...docRefs],
    !cn && inv.projectReference !== undefined
      ? el('cac:ProjectReference', {}, leaf('cbc:ID', inv.projectReference))
      : undefined,
    seller,
    buyer,
    payee,
    taxRep,
    delivery,
    paymentMeans,
    inv.paymentTerms !== undefined && el('cac:PaymentTerms', {}, leaf('cbc:Note', inv.paymentTerms)),
    allowanceCharges,
    taxTotals,
    monetary,
    inv.lines.map((l) => line(l, cn, cur, filled, taxScheme)),
  );
  return { xml: serialize(root), notCarried, filled, normalised: [], documentType: cn ? 'CreditNote' : 'Invoice' };
}

/**
 * UBL needs an amount on the price allowance that carries BT-148; without BT-147 it is BT-148 − BT-146 (the norm's
 * definition of the net price), computed exactly and reported.
 */
function derivedDiscount(l: InvoiceLine, filled: string[]): string {
  const { grossPrice, netPrice } = l.price;
  const value =
    grossPrice !== undefined && netPrice !== undefined && isDecimal(grossPrice) && isDecimal(netPrice)
      ? subtract(grossPrice, netPrice)
      : '0';
  filled.push(
    `line ${l.identifier}: BT-147 Item price discount = ${value} (BT-148 − BT-146; UBL needs an amount beside the ` +
      `gross price)`,
  );
  return value;
}

/** cbc:TaxAmount is mandatory in UBL; without BT-110 it is the sum of BT-117 (BR-CO-14), computed exactly. */
function derivedTotalVat(inv: Invoice, filled: string[]): string {
  const parts = inv.vatBreakdown.map((v) => v.taxAmount ?? '0');
  const value = parts.every(isDecimal) ? parts.reduce((a, b) => addDecimal(a, b), '0.00') : '0.00';
  filled.push(`BT-110 Invoice total VAT amount = ${value} (Σ BT-117, BR-CO-14; UBL needs cac:TaxTotal/cbc:TaxAmount)`);
  return value;
}

function fill(filled: string[], what: string, value: string): string {
  filled.push(`${what} = "${value}" (mandatory in UBL, no EN 16931 term holds it)`);
  return value;
}

function line(
  l: InvoiceLine,
  cn: boolean,
  cur: string | undefined,
  filled: string[],
  taxScheme: () => XmlElement,
): XmlElement {
  const amt = (name: string, v: string | undefined): XmlElement | undefined => leaf(name, v, { currencyID: cur });
  const it = l.item;
  const charges = l.allowanceCharges.map((ac) => allowanceCharge(ac, amt));
  const pr = l.price;
  return el(
    cn ? 'cac:CreditNoteLine' : 'cac:InvoiceLine',
    {},
    leaf('cbc:ID', l.identifier),
    leaf('cbc:Note', l.note),
    leaf(cn ? 'cbc:CreditedQuantity' : 'cbc:InvoicedQuantity', l.quantity, { unitCode: l.quantityUnitCode }),
    amt('cbc:LineExtensionAmount', l.netAmount),
    leaf('cbc:AccountingCost', l.buyerAccountingReference),
    l.period &&
      el('cac:InvoicePeriod', {}, leaf('cbc:StartDate', l.period.startDate), leaf('cbc:EndDate', l.period.endDate)),
    l.purchaseOrderLineReference !== undefined &&
      el('cac:OrderLineReference', {}, leaf('cbc:LineID', l.purchaseOrderLineReference)),
    l.objectIdentifier &&
      el(
        'cac:DocumentReference',
        {},
        leaf('cbc:ID', l.objectIdentifier.value, { schemeID: l.objectIdentifier.schemeId }),
        leaf('cbc:DocumentTypeCode', '130'),
      ),
    charges,
    el(
      'cac:Item',
      {},
      leaf('cbc:Description', it.description),
      leaf('cbc:Name', it.name),
      it.buyersIdentifier !== undefined && el('cac:BuyersItemIdentification', {}, leaf('cbc:ID', it.buyersIdentifier)),
      it.sellersIdentifier !== undefined &&
        el('cac:SellersItemIdentification', {}, leaf('cbc:ID', it.sellersIdentifier)),
      it.standardIdentifier &&
        el(
          'cac:StandardItemIdentification',
          {},
          leaf('cbc:ID', it.standardIdentifier.value, { schemeID: it.standardIdentifier.schemeId }),
        ),
      it.countryOfOrigin !== undefined &&
        el('cac:OriginCountry', {}, leaf('cbc:IdentificationCode', it.countryOfOrigin)),
      it.classificationIdentifiers.map((c) =>
        el(
          'cac:CommodityClassification',
          {},
          leaf('cbc:ItemClassificationCode', c.value, { listID: c.schemeId, listVersionID: c.schemeVersion }),
        ),
      ),
      el(
        'cac:ClassifiedTaxCategory',
        {},
        leaf('cbc:ID', l.vat.categoryCode),
        leaf('cbc:Percent', l.vat.rate),
        taxScheme(),
      ),
      it.attributes.map((a) =>
        el('cac:AdditionalItemProperty', {}, leaf('cbc:Name', a.name), leaf('cbc:Value', a.value)),
      ),
    ),
    el(
      'cac:Price',
      {},
      amt('cbc:PriceAmount', pr.netPrice),
      leaf('cbc:BaseQuantity', pr.baseQuantity, { unitCode: pr.baseQuantityUnitCode }),
      (pr.discount !== undefined || pr.grossPrice !== undefined) &&
        el(
          'cac:AllowanceCharge',
          {},
          leaf('cbc:ChargeIndicator', 'false'),
          amt('cbc:Amount', pr.discount ?? derivedDiscount(l, filled)),
          amt('cbc:BaseAmount', pr.grossPrice),
        ),
    ),
  );
}
