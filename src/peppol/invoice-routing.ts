/**
 * Where a sales invoice goes on Peppol, read from the invoice itself: the buyer's electronic address (BT-49) is the
 * SBDH receiver, the seller's (BT-34) the SBDH sender, the seller's country (BT-40) COUNTRY_C1. UBL Invoice and
 * CreditNote, and CII CrossIndustryInvoice. A missing or malformed address is a permanent failure (spec 7: "without
 * EndpointID or with a wrong identifier … InvoiceSentError"), reported with the element it was read from.
 */
import type { Document } from '@xmldom/xmldom';
import { parseXml, text } from '../formats/xml/secure-parser';
import { participantIdProblem, PARTICIPANT_SCHEME, peppolParticipant, type ParticipantId } from './identifiers';

const NS = {
  inv: 'urn:oasis:names:specification:ubl:schema:xsd:Invoice-2',
  cn: 'urn:oasis:names:specification:ubl:schema:xsd:CreditNote-2',
  cac: 'urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2',
  cbc: 'urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2',
  rsm: 'urn:un:unece:uncefact:data:standard:CrossIndustryInvoice:100',
  ram: 'urn:un:unece:uncefact:data:standard:ReusableAggregateBusinessInformationEntity:100',
} as const;

export type RoutingProblem = {
  ok: false;
  code: 'ENDPOINT_MISSING' | 'ENDPOINT_INVALID' | 'COUNTRY_MISSING' | 'NOT_AN_INVOICE';
  message: string;
};

export interface InvoiceRouting {
  ok: true;
  receiver: ParticipantId;
  sender: ParticipantId;
  /** Seller country code (BT-40), for the SBDH COUNTRY_C1 scope. */
  countryC1: string;
}

interface Paths {
  label: string;
  buyer: string;
  buyerText: string;
  seller: string;
  sellerText: string;
  country: string;
}

function pathsOf(doc: Document): Paths | undefined {
  const root = doc.documentElement;
  if (!root) return undefined;
  if (
    (root.namespaceURI === NS.inv && root.localName === 'Invoice') ||
    (root.namespaceURI === NS.cn && root.localName === 'CreditNote')
  ) {
    const r = root.namespaceURI === NS.inv ? '/inv:Invoice' : '/cn:CreditNote';
    return {
      label: 'UBL',
      buyer: `${r}/cac:AccountingCustomerParty/cac:Party/cbc:EndpointID`,
      buyerText: 'cac:AccountingCustomerParty/cac:Party/cbc:EndpointID (BT-49)',
      seller: `${r}/cac:AccountingSupplierParty/cac:Party/cbc:EndpointID`,
      sellerText: 'cac:AccountingSupplierParty/cac:Party/cbc:EndpointID (BT-34)',
      country: `${r}/cac:AccountingSupplierParty/cac:Party/cac:PostalAddress/cac:Country/cbc:IdentificationCode`,
    };
  }
  if (root.namespaceURI === NS.rsm && root.localName === 'CrossIndustryInvoice') {
    const agreement = '/rsm:CrossIndustryInvoice/rsm:SupplyChainTradeTransaction/ram:ApplicableHeaderTradeAgreement';
    return {
      label: 'CII',
      buyer: `${agreement}/ram:BuyerTradeParty/ram:URIUniversalCommunication/ram:URIID`,
      buyerText: 'ram:BuyerTradeParty/ram:URIUniversalCommunication/ram:URIID (BT-49)',
      seller: `${agreement}/ram:SellerTradeParty/ram:URIUniversalCommunication/ram:URIID`,
      sellerText: 'ram:SellerTradeParty/ram:URIUniversalCommunication/ram:URIID (BT-34)',
      country: `${agreement}/ram:SellerTradeParty/ram:PostalTradeAddress/ram:CountryID`,
    };
  }
  return undefined;
}

/** The Peppol participant of an electronic address element, or why it is not one. */
function participantAt(doc: Document, path: string, described: string): ParticipantId | RoutingProblem {
  const value = text(doc, path, NS);
  const scheme = text(doc, `${path}/@schemeID`, NS);
  if (value === undefined || value === '')
    return { ok: false, code: 'ENDPOINT_MISSING', message: `the invoice has no ${described}` };
  if (!scheme) return { ok: false, code: 'ENDPOINT_INVALID', message: `${described} "${value}" has no schemeID` };
  if (!/^\d{4}$/.test(scheme))
    return {
      ok: false,
      code: 'ENDPOINT_INVALID',
      message: `${described} has schemeID "${scheme}", not a 4-digit ISO 6523 ICD`,
    };
  const problem = participantIdProblem(PARTICIPANT_SCHEME, `${scheme}:${value}`);
  if (problem)
    return {
      ok: false,
      code: 'ENDPOINT_INVALID',
      message: `${described} ${scheme}:${value} is not a valid Peppol participant identifier: ${problem}`,
    };
  return peppolParticipant(`${scheme}:${value}`);
}

/** Reads the routing of an XML invoice or credit note; a problem result for anything that prevents sending it. */
export function readInvoiceRouting(xml: Buffer): InvoiceRouting | RoutingProblem {
  return readInvoiceRoutingFrom(parseXml(xml));
}

/** The same, from a document already parsed with parseXml (detection holds one): no second parse. */
export function readInvoiceRoutingFrom(doc: Document): InvoiceRouting | RoutingProblem {
  const p = pathsOf(doc);
  if (!p)
    return {
      ok: false,
      code: 'NOT_AN_INVOICE',
      message: 'the document is not a UBL Invoice, UBL CreditNote or CII CrossIndustryInvoice',
    };
  const receiver = participantAt(doc, p.buyer, `buyer EndpointID ${p.buyerText}`);
  if ('ok' in receiver) return receiver;
  const sender = participantAt(doc, p.seller, `seller EndpointID ${p.sellerText}`);
  if ('ok' in sender) return sender;
  const country = (text(doc, p.country, NS) ?? '').toUpperCase();
  if (!/^[A-Z]{2}$/.test(country))
    return {
      ok: false,
      code: 'COUNTRY_MISSING',
      message: `the seller's country code (BT-40) is missing or not two letters: "${country}"`,
    };
  return { ok: true, receiver, sender, countryC1: country };
}
