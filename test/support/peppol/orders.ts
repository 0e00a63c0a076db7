/** Peppol BIS Ordering 3 test documents: an Order (T01) the pinned rules accept, for given parties and number. */

export interface OrderFixtureParty {
  scheme: string;
  value: string;
  name: string;
}

export const ORDER_BUYER: OrderFixtureParty = { scheme: '0088', value: '5790000435951', name: 'Buyer AS' };
export const ORDER_SELLER: OrderFixtureParty = { scheme: '0106', value: '71717171', name: 'Seller BV' };

const party = (tag: string, p: OrderFixtureParty) =>
  `<cac:${tag}><cac:Party><cbc:EndpointID schemeID="${p.scheme}">${p.value}</cbc:EndpointID>
    <cac:PostalAddress><cac:Country><cbc:IdentificationCode>NL</cbc:IdentificationCode></cac:Country></cac:PostalAddress>
    <cac:PartyLegalEntity><cbc:RegistrationName>${p.name}</cbc:RegistrationName></cac:PartyLegalEntity></cac:Party></cac:${tag}>`;

/** A Peppol Order 3 with two lines (ids 1 and 2), buyer and seller as given. */
export function orderXml(
  number = 'PO-1',
  opts: { buyer?: OrderFixtureParty; seller?: OrderFixtureParty } = {},
): Buffer {
  return Buffer.from(`<?xml version="1.0" encoding="UTF-8"?>
<Order xmlns="urn:oasis:names:specification:ubl:schema:xsd:Order-2"
  xmlns:cac="urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2"
  xmlns:cbc="urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2">
  <cbc:CustomizationID>urn:fdc:peppol.eu:poacc:trns:order:3</cbc:CustomizationID>
  <cbc:ProfileID>urn:fdc:peppol.eu:poacc:bis:ordering:3</cbc:ProfileID>
  <cbc:ID>${number}</cbc:ID>
  <cbc:IssueDate>2026-02-01</cbc:IssueDate>
  <cbc:DocumentCurrencyCode>EUR</cbc:DocumentCurrencyCode>
  ${party('BuyerCustomerParty', opts.buyer ?? ORDER_BUYER)}
  ${party('SellerSupplierParty', opts.seller ?? ORDER_SELLER)}
  <cac:AnticipatedMonetaryTotal><cbc:LineExtensionAmount currencyID="EUR">150.00</cbc:LineExtensionAmount><cbc:PayableAmount currencyID="EUR">150.00</cbc:PayableAmount></cac:AnticipatedMonetaryTotal>
  <cac:OrderLine><cac:LineItem><cbc:ID>1</cbc:ID><cbc:Quantity unitCode="C62">2</cbc:Quantity><cbc:LineExtensionAmount currencyID="EUR">100.00</cbc:LineExtensionAmount>
    <cac:Price><cbc:PriceAmount currencyID="EUR">50.00</cbc:PriceAmount></cac:Price>
    <cac:Item><cbc:Name>Widget</cbc:Name></cac:Item></cac:LineItem></cac:OrderLine>
  <cac:OrderLine><cac:LineItem><cbc:ID>2</cbc:ID><cbc:Quantity unitCode="C62">1</cbc:Quantity><cbc:LineExtensionAmount currencyID="EUR">50.00</cbc:LineExtensionAmount>
    <cac:Price><cbc:PriceAmount currencyID="EUR">50.00</cbc:PriceAmount></cac:Price>
    <cac:Item><cbc:Name>Gadget</cbc:Name></cac:Item></cac:LineItem></cac:OrderLine>
</Order>`);
}
