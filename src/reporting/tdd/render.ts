import type { DocumentAllowanceCharge, Invoice, InvoiceLine, VatBreakdown } from '../../en16931/model';
import { el, group, leaf, serialize, type XmlElement } from '../../en16931/xml-write';
import { DEFAULT_TDD_PROFILE, TDD_PROFILES, tddProfile } from './profiles';
import type { TaxDataDocument } from './types';

/** The ViDA pilot profile's namespace, TDT-001 and TDT-002 (kept for callers; the renderer writes the document's). */
export const TDD_NAMESPACE = TDD_PROFILES['vida-1'].namespace;
export const TDD_CUSTOMIZATION_ID = TDD_PROFILES['vida-1'].customizationId;
export const TDD_PROFILE_ID = TDD_PROFILES['vida-1'].profileId;
const CAC = 'urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2';
const CBC = 'urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2';

const vatScheme = (): XmlElement => el('cac:TaxScheme', {}, leaf('cbc:ID', 'VAT'));

function country(code: string | undefined): XmlElement | undefined {
  return code === undefined
    ? undefined
    : el('cac:PostalAddress', {}, el('cac:Country', {}, leaf('cbc:IdentificationCode', code)));
}

function partyTaxScheme(vat: string | undefined): XmlElement | undefined {
  return vat === undefined ? undefined : el('cac:PartyTaxScheme', {}, leaf('cbc:CompanyID', vat), vatScheme());
}

/**
 * The reported document (TDG-02): a projection of the invoice onto the terms the TDD allows (ibr-tdd-25 and the
 * rules under it), in UBL 2.1 element order. Everything else of the invoice is left out on purpose: a TDD carries no
 * seller name, no addresses beyond the country, no references, no attachments.
 */
function reportedDocument(inv: Invoice, invoiceUuid: string): XmlElement {
  const cur = inv.currencyCode;
  const amt = (name: string, v: string | undefined, currency = cur): XmlElement | undefined =>
    leaf(name, v, { currencyID: currency });
  const tot = inv.totals;
  const pay = inv.paymentInstructions;
  const note = inv.notes[0]?.note;
  const period = inv.invoicingPeriod;

  const paymentMeans: XmlElement[] = [];
  if (pay && pay.meansTypeCode !== undefined) {
    const accounts = pay.creditTransfers.length > 0 ? pay.creditTransfers : [undefined];
    accounts.forEach((ct, k) => {
      const first = k === 0;
      paymentMeans.push(
        el(
          'cac:PaymentMeans',
          {},
          leaf('cbc:PaymentMeansCode', pay.meansTypeCode, { name: first ? pay.meansText : undefined }),
          leaf('cbc:PaymentID', pay.remittanceInformation),
          first && pay.card
            ? el(
                'cac:CardAccount',
                {},
                leaf('cbc:PrimaryAccountNumberID', pay.card.primaryAccountNumber),
                leaf('cbc:NetworkID', inv.extensions.cardNetworkId ?? 'NA'),
                leaf('cbc:HolderName', pay.card.holderName),
              )
            : undefined,
          ct &&
            el(
              'cac:PayeeFinancialAccount',
              {},
              leaf('cbc:ID', ct.accountIdentifier),
              ct.serviceProviderIdentifier !== undefined &&
                el('cac:FinancialInstitutionBranch', {}, leaf('cbc:ID', ct.serviceProviderIdentifier)),
            ),
          first && pay.directDebit?.mandateReference !== undefined
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

  const taxTotals: XmlElement[] = [
    el(
      'cac:TaxTotal',
      {},
      amt('cbc:TaxAmount', tot.totalVatAmount),
      inv.vatBreakdown.map((v) => taxSubtotal(v, amt)),
    ),
  ];
  if (tot.totalVatAmountInAccountingCurrency !== undefined)
    taxTotals.push(
      el(
        'cac:TaxTotal',
        {},
        amt('cbc:TaxAmount', tot.totalVatAmountInAccountingCurrency, inv.vatAccountingCurrencyCode),
      ),
    );

  const rep = inv.taxRepresentative;
  return el(
    'pxs:ReportedDocument',
    {},
    leaf('cbc:CustomizationID', inv.processControl.specificationIdentifier),
    leaf('cbc:ProfileID', inv.processControl.businessProcessType),
    leaf('cbc:ID', inv.number),
    leaf('cbc:UUID', invoiceUuid),
    leaf('cbc:IssueDate', inv.issueDate),
    leaf('pxs:DocumentTypeCode', inv.typeCode),
    leaf('cbc:Note', note),
    leaf('cbc:TaxPointDate', inv.vatPointDate),
    leaf('cbc:DocumentCurrencyCode', cur),
    leaf('cbc:TaxCurrencyCode', inv.vatAccountingCurrencyCode),
    (period || inv.vatPointDateCode !== undefined) &&
      group(
        'cac:InvoicePeriod',
        {},
        leaf('cbc:StartDate', period?.startDate),
        leaf('cbc:EndDate', period?.endDate),
        leaf('cbc:DescriptionCode', inv.vatPointDateCode),
      ),
    inv.precedingInvoices.map((p) =>
      el(
        'cac:BillingReference',
        {},
        el('cac:InvoiceDocumentReference', {}, leaf('cbc:ID', p.reference), leaf('cbc:IssueDate', p.issueDate)),
      ),
    ),
    el(
      'cac:AccountingSupplierParty',
      {},
      el('cac:Party', {}, country(inv.seller.postalAddress?.countryCode), partyTaxScheme(inv.seller.vatIdentifier)),
    ),
    el(
      'cac:AccountingCustomerParty',
      {},
      el(
        'cac:Party',
        {},
        country(inv.buyer.postalAddress?.countryCode),
        partyTaxScheme(inv.buyer.vatIdentifier),
        inv.buyer.name !== undefined && el('cac:PartyLegalEntity', {}, leaf('cbc:RegistrationName', inv.buyer.name)),
      ),
    ),
    rep &&
      group(
        'cac:TaxRepresentativeParty',
        {},
        country(rep.postalAddress?.countryCode),
        partyTaxScheme(rep.vatIdentifier),
      ),
    inv.delivery?.actualDeliveryDate !== undefined &&
      el('cac:Delivery', {}, leaf('cbc:ActualDeliveryDate', inv.delivery.actualDeliveryDate)),
    paymentMeans,
    inv.allowanceCharges.map((ac) => documentAllowanceCharge(ac, amt)),
    taxTotals,
    group(
      'pxs:MonetaryTotal',
      {},
      amt('cbc:LineExtensionAmount', tot.sumOfLineNetAmounts),
      amt('cbc:TaxExclusiveAmount', tot.totalWithoutVat),
      amt('cbc:TaxInclusiveAmount', tot.totalWithVat),
      amt('cbc:AllowanceTotalAmount', tot.sumOfAllowances),
      amt('cbc:ChargeTotalAmount', tot.sumOfCharges),
      amt('cbc:PrepaidAmount', tot.paidAmount),
      amt('cbc:PayableRoundingAmount', tot.roundingAmount),
      amt('cbc:PayableAmount', tot.amountDueForPayment),
    ),
    inv.lines.map((l) => documentLine(l, amt)),
  );
}

type Amt = (name: string, v: string | undefined) => XmlElement | undefined;

function taxSubtotal(v: VatBreakdown, amt: Amt): XmlElement {
  return el(
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
      vatScheme(),
    ),
  );
}

function documentAllowanceCharge(ac: DocumentAllowanceCharge, amt: Amt): XmlElement {
  return el(
    'cac:AllowanceCharge',
    {},
    leaf('cbc:ChargeIndicator', String(ac.charge)),
    leaf('cbc:AllowanceChargeReasonCode', ac.reasonCode),
    leaf('cbc:AllowanceChargeReason', ac.reason),
    leaf('cbc:MultiplierFactorNumeric', ac.percentage),
    amt('cbc:Amount', ac.amount),
    amt('cbc:BaseAmount', ac.baseAmount),
    el('cac:TaxCategory', {}, leaf('cbc:ID', ac.vatCategoryCode), leaf('cbc:Percent', ac.vatRate), vatScheme()),
  );
}

function documentLine(l: InvoiceLine, amt: Amt): XmlElement {
  const item = l.item;
  return el(
    'pxs:DocumentLine',
    {},
    leaf('cbc:ID', l.identifier),
    leaf('cbc:Note', l.note),
    leaf('cbc:InvoicedQuantity', l.quantity, { unitCode: l.quantityUnitCode }),
    amt('cbc:LineExtensionAmount', l.netAmount),
    l.period &&
      group('cac:InvoicePeriod', {}, leaf('cbc:StartDate', l.period.startDate), leaf('cbc:EndDate', l.period.endDate)),
    l.allowanceCharges.map((ac) =>
      el(
        'cac:AllowanceCharge',
        {},
        leaf('cbc:ChargeIndicator', String(ac.charge)),
        leaf('cbc:AllowanceChargeReasonCode', ac.reasonCode),
        leaf('cbc:AllowanceChargeReason', ac.reason),
        leaf('cbc:MultiplierFactorNumeric', ac.percentage),
        amt('cbc:Amount', ac.amount),
        amt('cbc:BaseAmount', ac.baseAmount),
      ),
    ),
    el(
      'cac:Item',
      {},
      leaf('cbc:Description', item.description),
      leaf('cbc:Name', item.name),
      item.classificationIdentifiers.map((c) =>
        el(
          'cac:CommodityClassification',
          {},
          leaf('cbc:ItemClassificationCode', c.value, { listID: c.schemeId, listVersionID: c.schemeVersion }),
        ),
      ),
      (l.vat.categoryCode !== undefined || l.vat.rate !== undefined) &&
        el(
          'cac:ClassifiedTaxCategory',
          {},
          leaf('cbc:ID', l.vat.categoryCode),
          leaf('cbc:Percent', l.vat.rate),
          vatScheme(),
        ),
    ),
    l.price.netPrice !== undefined && el('cac:Price', {}, amt('cbc:PriceAmount', l.price.netPrice)),
  );
}

/**
 * The Tax Data Document as XML, for the profile (namespace, TDT-001, TDT-002) and specification version it was
 * derived for.
 */
export function renderTdd(tdd: TaxDataDocument): string {
  const profile = tddProfile(tdd.profile ?? DEFAULT_TDD_PROFILE);
  if (!profile.versions[tdd.version])
    throw new Error(`the Tax Data Document profile ${profile.id} has no version ${tdd.version}`);
  const root = el(
    'pxs:TaxData',
    { 'xmlns:pxs': profile.namespace, 'xmlns:cac': CAC, 'xmlns:cbc': CBC },
    leaf('cbc:CustomizationID', profile.customizationId),
    leaf('cbc:ProfileID', profile.profileId),
    leaf('cbc:UUID', tdd.uuid),
    leaf('cbc:IssueDate', tdd.issueDate),
    leaf('cbc:IssueTime', tdd.issueTime),
    leaf('pxs:TaxDataTypeCode', tdd.typeCode),
    leaf('pxs:DocumentScope', tdd.scope),
    leaf('pxs:ReporterRole', tdd.role),
    el('pxs:TaxAuthority', {}, leaf('cbc:ID', tdd.authority.id), leaf('cbc:Name', tdd.authority.name)),
    el(
      'pxs:ReportingParty',
      {},
      leaf('cbc:EndpointID', tdd.reportingParty.value, { schemeID: tdd.reportingParty.schemeId }),
    ),
    el(
      'pxs:ReceivingParty',
      {},
      leaf('cbc:EndpointID', tdd.receivingParty.value, { schemeID: tdd.receivingParty.schemeId }),
    ),
    el(
      'pxs:ReportersRepresentative',
      {},
      el(
        'cac:PartyIdentification',
        {},
        leaf('cbc:ID', tdd.representative.value, { schemeID: tdd.representative.schemeId }),
      ),
    ),
    el(
      'pxs:ReportedTransaction',
      {},
      tdd.version === '1.1.0' ? leaf('pxs:TransmissionUUID', tdd.transmissionUuid) : undefined,
      reportedDocument(tdd.invoice, tdd.invoiceUuid),
    ),
  );
  return serialize(root);
}
