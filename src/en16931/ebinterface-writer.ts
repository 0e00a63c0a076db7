import {
  isCreditNote,
  type Contact,
  type Identifier,
  type Invoice,
  type InvoiceLine,
  type LineAllowanceCharge,
  type PostalAddress,
} from './model';
import { isDecimal } from './decimal';
import { productOver } from './ebinterface-reader';
import type { WriteResult } from './ubl-writer';
import { el, group, leaf, serialize, type XmlElement } from './xml-write';

/**
 * EN 16931 model → ebInterface 6.1 Invoice, elements in schema order. ebInterface carries less than EN 16931 (no
 * payee, tax representative, supporting documents, most references): every term it cannot hold is listed in
 * `notCarried`; what its schema requires and the model lacks is written by the ebInterface conventions and listed in
 * `filled` (e.g. VATIdentificationNumber 00000000 for a party without VAT identifier). The reader maps back the same
 * way, so model → ebInterface → model keeps everything not in `notCarried`.
 */

export const EBINTERFACE_61_NS = 'http://www.ebinterface.at/schema/6p1/';
export const GENERATING_SYSTEM = 'Invoice Gateway';

/** BT-3 → ebInterface DocumentType (inverse of the reader's table where it is one to one). */
const BT3_TO_DOCUMENT_TYPE: Readonly<Record<string, string>> = {
  '380': 'Invoice',
  '326': 'InvoiceForPartialDelivery',
  '386': 'InvoiceForAdvancePayment',
  '389': 'SelfBilling',
  '381': 'CreditMemo',
  '383': 'SubsequentDebit',
};

const CREDIT_TRANSFER = new Set(['30', '31', '42', '58']);
const DIRECT_DEBIT = new Set(['49', '59']);
const CARD = new Set(['48', '54', '55']);
const BIC = /^[0-9A-Za-z]{8}([0-9A-Za-z]{3})?$/;
const IBAN = /^[A-Z]{2}[0-9]{2}[0-9A-Za-z]{1,30}$/;
const POSITIVE_INTEGER = /^0*[1-9][0-9]*$/;

export function writeEbInterface(inv: Invoice): WriteResult {
  const notCarried: string[] = [];
  const filled: string[] = [];
  const lost = (cond: unknown, what: string): void => {
    if (cond !== undefined && cond !== null && cond !== false && !(Array.isArray(cond) && cond.length === 0))
      notCarried.push(what);
  };

  const typeCode = inv.typeCode ?? '380';
  let documentType = BT3_TO_DOCUMENT_TYPE[typeCode];
  if (documentType === undefined) {
    documentType = isCreditNote(inv) ? 'CreditMemo' : 'Invoice';
    notCarried.push(
      `BT-3 Invoice type code ${typeCode}: ebInterface has no such document type; written as ${documentType}`,
    );
  }

  // Document level terms ebInterface has no element for.
  lost(
    inv.vatAccountingCurrencyCode,
    'BT-6 VAT accounting currency code (and BT-111): ebInterface has no VAT accounting currency',
  );
  lost(inv.vatPointDate ?? inv.vatPointDateCode, 'BT-7 / BT-8 VAT point date: ebInterface has no tax point date');
  lost(inv.projectReference, 'BT-11 Project reference');
  lost(inv.contractReference, 'BT-12 Contract reference');
  lost(inv.receivingAdviceReference, 'BT-15 Receiving advice reference');
  lost(inv.tenderOrLotReference, 'BT-17 Tender or lot reference');
  lost(inv.invoicedObjectIdentifier, 'BT-18 Invoiced object identifier');
  lost(
    (inv.buyerAccountingReference?.length ?? 0) > 20,
    'BT-19 Buyer accounting reference: longer than the 20 characters of ebInterface AccountingArea',
  );
  lost(inv.processControl.businessProcessType, 'BT-23 Business process type');
  lost(inv.payee, 'BG-10 Payee: ebInterface has no payee party');
  lost(inv.taxRepresentative, 'BG-11 Seller tax representative: ebInterface has no tax representative party');
  lost(inv.supportingDocuments, 'BG-24 Additional supporting documents: ebInterface has no attachments');
  lost(inv.seller.additionalLegalInformation, 'BT-33 Seller additional legal information');
  lost(inv.seller.electronicAddress, 'BT-34 Seller electronic address');
  lost(inv.seller.taxRegistrationIdentifier, 'BT-32 Seller tax registration identifier');
  lost(inv.buyer.electronicAddress, 'BT-49 Buyer electronic address');
  lost(
    inv.notes.some((n) => n.subjectCode !== undefined),
    'BT-21 Invoice note subject code',
  );
  if (inv.notes.length > 1)
    notCarried.push(`BG-1: ${inv.notes.length} notes joined into the one Comment ebInterface has`);
  lost(
    inv.precedingInvoices.length > 0 && typeCode === '384',
    'BT-3 384 (corrected invoice): the corrected invoice is written as a RelatedDocument',
  );
  lost(
    inv.paymentInstructions?.creditTransfers.length &&
      (inv.paymentInstructions.directDebit || inv.paymentInstructions.card),
    'BG-17 Credit transfer beside a direct debit or card: ebInterface has one payment method',
  );

  // BT-10: ebInterface has no buyer reference; the recipient's order reference (Auftragsreferenz) takes it when BT-13
  // is absent.
  let orderId = inv.purchaseOrderReference;
  if (orderId === undefined && inv.buyerReference !== undefined) {
    orderId = inv.buyerReference;
    filled.push(
      `InvoiceRecipient/OrderReference/OrderID = BT-10 Buyer reference "${inv.buyerReference}" (ebInterface has no ` +
        `buyer reference; the order reference is what Austrian recipients route by)`,
    );
  } else
    lost(
      inv.buyerReference,
      'BT-10 Buyer reference: ebInterface has no buyer reference (BT-13 is the recipient order reference)',
    );

  const related = inv.precedingInvoices.map((p) =>
    el('RelatedDocument', {}, leaf('InvoiceNumber', p.reference), leaf('InvoiceDate', p.issueDate)),
  );

  const biller = el(
    'Biller',
    {},
    vatNumber(inv.seller.vatIdentifier, 'Biller', filled),
    legalRegistration(inv.seller.legalRegistrationIdentifier),
    inv.salesOrderReference !== undefined && el('OrderReference', {}, leaf('OrderID', inv.salesOrderReference)),
    address(
      inv.seller.name,
      inv.seller.tradingName,
      inv.seller.postalAddress,
      glnIn(inv.seller.identifiers),
      inv.seller.contact,
      'BG-5 Seller',
      notCarried,
    ),
    contact(inv.seller.contact),
    leaf('InvoiceRecipientsBillerID', inv.seller.identifiers.find((i) => i.schemeId === undefined)?.value),
  );
  const sellerIds = inv.seller.identifiers;
  const carriedSellerIds = [sellerIds.find((i) => i.schemeId === undefined), glnIn(sellerIds)].filter(
    (i) => i !== undefined,
  );
  lost(
    sellerIds.length > carriedSellerIds.length,
    `BT-29 Seller identifier: ${sellerIds.length - carriedSellerIds.length} of ${sellerIds.length} (ebInterface ` +
      `holds one seller-assigned id and one GLN)`,
  );

  const buyerId = inv.buyer.identifier;
  const recipient = el(
    'InvoiceRecipient',
    {},
    vatNumber(inv.buyer.vatIdentifier, 'InvoiceRecipient', filled),
    legalRegistration(inv.buyer.legalRegistrationIdentifier),
    orderId !== undefined && el('OrderReference', {}, leaf('OrderID', orderId)),
    address(
      inv.buyer.name,
      inv.buyer.tradingName,
      inv.buyer.postalAddress,
      buyerId?.schemeId === '0088' ? buyerId : undefined,
      inv.buyer.contact,
      'BG-8 Buyer',
      notCarried,
    ),
    contact(inv.buyer.contact),
    leaf('BillersInvoiceRecipientID', buyerId && buyerId.schemeId === undefined ? buyerId.value : undefined),
    // AccountingArea holds 20 characters; a longer BT-19 is not cut (it would become another reference).
    leaf(
      'AccountingArea',
      (inv.buyerAccountingReference?.length ?? 0) <= 20 ? inv.buyerAccountingReference : undefined,
    ),
  );
  lost(
    buyerId && buyerId.schemeId !== undefined && buyerId.schemeId !== '0088',
    `BT-46 Buyer identifier with scheme ${buyerId?.schemeId}`,
  );

  const lines = inv.lines.map((l) => line(l, orderId, notCarried, filled));
  const header = el(
    'Invoice',
    {
      xmlns: EBINTERFACE_61_NS,
      GeneratingSystem: GENERATING_SYSTEM,
      DocumentType: documentType,
      InvoiceCurrency: inv.currencyCode,
    },
    leaf('InvoiceNumber', inv.number),
    leaf('InvoiceDate', inv.issueDate),
    related,
    delivery(inv, notCarried, filled),
    biller,
    recipient,
    el('Details', {}, el('ItemList', {}, lines)),
    reductions(inv, filled),
    el(
      'Tax',
      {},
      inv.vatBreakdown.map((v) => {
        lost(
          v.exemptionReasonCode,
          `BT-121 VAT exemption reason code ${v.exemptionReasonCode} (category ${v.categoryCode})`,
        );
        return el(
          'TaxItem',
          {},
          leaf('TaxableAmount', v.taxableAmount),
          taxPercent(v.categoryCode, v.rate),
          leaf('TaxAmount', v.taxAmount),
          leaf('Comment', v.exemptionReasonText),
        );
      }),
    ),
    leaf('TotalGrossAmount', inv.totals.totalWithVat),
    leaf('PrepaidAmount', inv.totals.paidAmount),
    leaf('RoundingAmount', inv.totals.roundingAmount),
    leaf('PayableAmount', inv.totals.amountDueForPayment),
    payment(inv, notCarried),
    group('PaymentConditions', {}, leaf('DueDate', inv.paymentDueDate), leaf('Comment', inv.paymentTerms)),
    leaf('Comment', inv.notes.length > 0 ? inv.notes.map((n) => n.note).join('\n') : undefined),
  );
  return {
    xml: serialize(header),
    notCarried,
    filled,
    normalised: [],
    documentType: isCreditNote(inv) ? 'CreditNote' : 'Invoice',
  };
}

const glnIn = (ids: readonly Identifier[]): Identifier | undefined => ids.find((i) => i.schemeId === '0088');

function vatNumber(vat: string | undefined, party: string, filled: string[]): XmlElement | undefined {
  if (vat !== undefined) return leaf('VATIdentificationNumber', vat);
  filled.push(
    `${party}/VATIdentificationNumber = 00000000 (mandatory in ebInterface; its value for a party without VAT ` +
      `identifier)`,
  );
  return leaf('VATIdentificationNumber', '00000000');
}

/**
 * BT-30 / BT-47: with an ICD scheme the scheme is the identification type; without, it is the company register number
 * (FN).
 */
function legalRegistration(id: Identifier | undefined): XmlElement | undefined {
  return id ? leaf('FurtherIdentification', id.value, { IdentificationType: id.schemeId ?? 'FN' }) : undefined;
}

function address(
  name: string | undefined,
  tradingName: string | undefined,
  a: PostalAddress | undefined,
  gln: Identifier | undefined,
  c: Contact | undefined,
  what: string,
  notCarried: string[],
): XmlElement {
  if (a?.line2 !== undefined || a?.line3 !== undefined)
    notCarried.push(`${what} address lines 2 and 3: ebInterface has one street line`);
  if (a?.countrySubdivision !== undefined) notCarried.push(`${what} country subdivision`);
  // Without a contact person, phone and email belong to the address.
  const noPerson = c?.point === undefined;
  return el(
    'Address',
    {},
    gln && leaf('AddressIdentifier', gln.value, { AddressIdentifierType: 'GLN' }),
    leaf('Name', name),
    leaf('TradingName', tradingName),
    leaf('Street', a?.line1),
    leaf('Town', a?.city),
    leaf('ZIP', a?.postCode),
    el('Country', { CountryCode: a?.countryCode }),
    noPerson && leaf('Phone', c?.telephone),
    noPerson && leaf('Email', c?.email),
  );
}

function contact(c: Contact | undefined): XmlElement | undefined {
  if (c?.point === undefined) return undefined;
  return el('Contact', {}, leaf('Name', c.point), leaf('Phone', c.telephone), leaf('Email', c.email));
}

function taxPercent(category: string | undefined, rate: string | undefined): XmlElement | undefined {
  return leaf('TaxPercent', rate ?? '0', { TaxCategoryCode: category });
}

function delivery(inv: Invoice, notCarried: string[], filled: string[]): XmlElement | undefined {
  const d = inv.delivery;
  const period = inv.invoicingPeriod;
  const fullPeriod = period?.startDate !== undefined && period.endDate !== undefined;
  if (period && !fullPeriod)
    notCarried.push('BG-14 Invoicing period with one date only: an ebInterface period needs both');
  if (!d && !fullPeriod) {
    if (inv.despatchAdviceReference !== undefined)
      notCarried.push('BT-16 Despatch advice reference: ebInterface needs a delivery date or period to write Delivery');
    return undefined;
  }
  const date = d?.actualDeliveryDate;
  if (date === undefined && !fullPeriod) {
    notCarried.push(
      'BG-13 Delivery information without delivery date or invoicing period: ebInterface Delivery needs one',
    );
    lost16(inv, notCarried);
    return undefined;
  }
  if (date !== undefined && fullPeriod)
    notCarried.push('BG-14 Invoicing period beside a delivery date: ebInterface Delivery holds a date or a period');
  let addr: XmlElement | undefined;
  if (d?.address) {
    const name = d.partyName ?? inv.buyer.name;
    if (d.partyName === undefined)
      filled.push(`Delivery/Address/Name = buyer name "${inv.buyer.name}" (mandatory in ebInterface; BT-70 absent)`);
    if (d.address.city === undefined || d.address.postCode === undefined || d.address.countryCode === undefined) {
      notCarried.push(
        'BG-15 Deliver to address without city, post code or country: an ebInterface address needs all three',
      );
    } else
      addr = address(
        name,
        undefined,
        d.address,
        d.locationIdentifier?.schemeId === '0088' ? d.locationIdentifier : undefined,
        undefined,
        'BG-15 Deliver to',
        notCarried,
      );
  } else if (d?.partyName !== undefined) notCarried.push('BT-70 Deliver to party name without an address');
  if (d?.locationIdentifier && (d.locationIdentifier.schemeId !== '0088' || !addr))
    notCarried.push('BT-71 Deliver to location identifier');
  return el(
    'Delivery',
    {},
    leaf('DeliveryID', inv.despatchAdviceReference),
    date !== undefined
      ? leaf('Date', date)
      : el('Period', {}, leaf('FromDate', period?.startDate), leaf('ToDate', period?.endDate)),
    addr,
  );
}

function lost16(inv: Invoice, notCarried: string[]): void {
  if (inv.despatchAdviceReference !== undefined)
    notCarried.push('BT-16 Despatch advice reference: ebInterface needs a delivery date or period to write Delivery');
}

function allowanceCharge(
  ac: LineAllowanceCharge,
  base: string | undefined,
  tag: string,
  extra?: XmlElement,
): XmlElement {
  return el(
    tag,
    {},
    leaf('BaseAmount', base),
    leaf('Percentage', ac.percentage),
    leaf('Amount', ac.amount),
    leaf('Comment', ac.reason),
    ac.reasonCode !== undefined &&
      leaf('Classification', ac.reasonCode, { ClassificationSchema: ac.charge ? 'UNCL7161' : 'UNCL5189' }),
    extra,
  );
}

/**
 * Document level BG-20 / BG-21; ebInterface requires a BaseAmount: without BT-93 / BT-100, the sum of line net amounts.
 */
function reductions(inv: Invoice, filled: string[]): XmlElement | undefined {
  if (inv.allowanceCharges.length === 0) return undefined;
  return el(
    'ReductionAndSurchargeDetails',
    {},
    inv.allowanceCharges.map((ac, k) => {
      let base = ac.baseAmount;
      if (base === undefined) {
        base = inv.totals.sumOfLineNetAmounts;
        filled.push(
          `${ac.charge ? 'Surcharge' : 'Reduction'} ${k + 1} BaseAmount = BT-106 ${base} (mandatory in ebInterface; ` +
            `${ac.charge ? 'BT-100' : 'BT-93'} absent)`,
        );
      }
      const tax = el('TaxItem', {}, leaf('TaxableAmount', ac.amount), taxPercent(ac.vatCategoryCode, ac.vatRate));
      return allowanceCharge(ac, base, ac.charge ? 'Surcharge' : 'Reduction', tax);
    }),
  );
}

function line(l: InvoiceLine, orderId: string | undefined, notCarried: string[], filled: string[]): XmlElement {
  const at = `line ${l.identifier}`;
  const positional = POSITIVE_INTEGER.test(l.identifier);
  if (!positional)
    notCarried.push(
      `BT-126 Invoice line identifier "${l.identifier}": ebInterface PositionNumber is a positive integer`,
    );
  const lost = (cond: unknown, what: string): void => {
    if (cond !== undefined && cond !== false) notCarried.push(`${what} (${at})`);
  };
  lost(l.objectIdentifier, 'BT-128 Invoice line object identifier');
  lost(l.buyerAccountingReference, 'BT-133 Invoice line buyer accounting reference');
  lost(l.price.grossPrice ?? l.price.discount, 'BT-147 / BT-148 Item price discount and gross price');
  // UnitPrice@BaseQuantity is in the quantity's unit: BT-150 itself has no place.
  lost(l.price.baseQuantityUnitCode, 'BT-150 Item price base quantity unit of measure');
  lost(l.item.countryOfOrigin, 'BT-159 Item country of origin');
  lost(
    l.item.standardIdentifier && l.item.standardIdentifier.schemeId !== '0160',
    'BT-157 Item standard identifier that is not a GTIN',
  );
  lost(
    l.item.classificationIdentifiers.some((c) => c.schemeVersion !== undefined),
    'BT-158-2 Item classification scheme version',
  );
  lost(
    l.purchaseOrderLineReference !== undefined && orderId === undefined,
    'BT-132 Referenced purchase order line reference without an order reference',
  );
  const hasPeriod = l.period?.startDate !== undefined && l.period.endDate !== undefined;
  lost(l.period && !hasPeriod, 'BG-26 Invoice line period with one date only');
  // Line reductions need a BaseAmount in ebInterface: without BT-137 / BT-142, quantity × price is the base.
  const gross = l.quantity !== undefined && l.price.netPrice !== undefined ? lineBase(l) : undefined;
  const acs = l.allowanceCharges.map((ac) => {
    if (ac.baseAmount === undefined)
      filled.push(
        `${at}: ${ac.charge ? 'surcharge' : 'reduction'} BaseAmount = ${gross} (quantity × price; mandatory in ` +
          `ebInterface)`,
      );
    return allowanceCharge(ac, ac.baseAmount ?? gross, ac.charge ? 'SurchargeListLineItem' : 'ReductionListLineItem');
  });
  return el(
    'ListLineItem',
    {},
    positional && leaf('PositionNumber', l.identifier),
    leaf('Description', l.item.name),
    leaf('Description', l.item.description),
    leaf('ArticleNumber', l.item.sellersIdentifier, { ArticleNumberType: 'BillersArticleNumber' }),
    leaf('ArticleNumber', l.item.buyersIdentifier, { ArticleNumberType: 'InvoiceRecipientsArticleNumber' }),
    l.item.standardIdentifier?.schemeId === '0160' &&
      leaf('ArticleNumber', l.item.standardIdentifier.value, { ArticleNumberType: 'GTIN' }),
    leaf('Quantity', l.quantity, { Unit: l.quantityUnitCode }),
    leaf('UnitPrice', l.price.netPrice, { BaseQuantity: l.price.baseQuantity }),
    acs.length > 0 && el('ReductionAndSurchargeListLineItemDetails', {}, acs),
    hasPeriod &&
      el('Delivery', {}, el('Period', {}, leaf('FromDate', l.period?.startDate), leaf('ToDate', l.period?.endDate))),
    l.purchaseOrderLineReference !== undefined &&
      orderId !== undefined &&
      el(
        'InvoiceRecipientsOrderReference',
        {},
        leaf('OrderID', orderId),
        leaf('OrderPositionNumber', l.purchaseOrderLineReference),
      ),
    l.item.classificationIdentifiers.map((c) => leaf('Classification', c.value, { ClassificationSchema: c.schemeId })),
    leaf('AdditionalInformation', l.note),
    l.item.attributes.map((a) => leaf('AdditionalInformation', a.value, { Key: a.name })),
    el('TaxItem', {}, leaf('TaxableAmount', l.netAmount), taxPercent(l.vat.categoryCode, l.vat.rate)),
    leaf('LineItemAmount', l.netAmount),
  );
}

/** quantity × net price / base quantity, two decimals. */
function lineBase(l: InvoiceLine): string | undefined {
  const { quantity, price } = l;
  if (quantity === undefined || price.netPrice === undefined || !isDecimal(quantity) || !isDecimal(price.netPrice))
    return undefined;
  if (price.baseQuantity !== undefined && !isDecimal(price.baseQuantity)) return undefined;
  return productOver(quantity, price.netPrice, price.baseQuantity ?? '1');
}

function payment(inv: Invoice, notCarried: string[]): XmlElement | undefined {
  const p = inv.paymentInstructions;
  if (!p) return undefined;
  const code = p.meansTypeCode ?? '';
  let method: XmlElement;
  if (p.directDebit || DIRECT_DEBIT.has(code)) {
    const dd = p.directDebit;
    method = el(
      'SEPADirectDebit',
      {},
      leaf('IBAN', dd?.debitedAccountIdentifier),
      leaf('CreditorID', dd?.bankAssignedCreditorIdentifier),
      leaf('MandateReference', dd?.mandateReference),
    );
  } else if (p.card || CARD.has(code)) {
    method = el(
      'PaymentCard',
      {},
      leaf('PrimaryAccountNumber', p.card?.primaryAccountNumber ?? ''),
      leaf('CardHolderName', p.card?.holderName),
    );
  } else if (p.creditTransfers.length > 0 || CREDIT_TRANSFER.has(code)) {
    method = el(
      'UniversalBankTransaction',
      {},
      p.creditTransfers.map((ct) => {
        const bic = ct.serviceProviderIdentifier;
        if (bic !== undefined && !BIC.test(bic))
          notCarried.push(`BT-86 Payment service provider identifier "${bic}": not a BIC`);
        const iban = IBAN.test(ct.accountIdentifier.replace(/\s+/g, ''));
        return el(
          'BeneficiaryAccount',
          {},
          bic !== undefined && BIC.test(bic) && leaf('BIC', bic),
          !iban && leaf('BankAccountNr', ct.accountIdentifier),
          iban && leaf('IBAN', ct.accountIdentifier.replace(/\s+/g, '')),
          leaf('BankAccountOwner', ct.accountName),
        );
      }),
      leaf('PaymentReference', p.remittanceInformation),
    );
  } else {
    method = el('OtherPayment', {});
    if (code !== 'ZZZ' && code !== '1')
      notCarried.push(`BT-81 Payment means type code ${code}: written as OtherPayment`);
  }
  if (code !== '' && !['58', '30', '59', '48', 'ZZZ'].includes(code) && method.name !== 'OtherPayment')
    notCarried.push(
      `BT-81 Payment means type code ${code}: ebInterface writes the method (${method.name}), not the code`,
    );
  if (method.name !== 'UniversalBankTransaction' && p.remittanceInformation !== undefined)
    notCarried.push('BT-83 Remittance information: ebInterface holds it with a bank transfer only');
  return el('PaymentMethod', {}, leaf('Comment', p.meansText), method);
}
