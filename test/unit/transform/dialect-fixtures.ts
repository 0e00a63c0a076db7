import { emptyInvoice, type Invoice } from '../../../src/en16931';
import { EN16931 } from '../../../src/formats/format-ids';

/**
 * Our own source documents for the dialect conversions, written from the specifications (SFTI BasicInvoice 1.0 XSD and
 * rules; SETU Invoice 2.2 rules; PINT A-NZ). Identifiers carry valid check digits (GLN mod 10, Swedish organisation
 * number and Bankgiro Luhn), so the national rules of the targets hold.
 */

/**
 * Svefaktura 1.0: a Swedish supplier invoicing a municipality. Two lines (the second without a VAT category, which
 * Svefaktura allows), öre rounding (lines 5000.40 + VAT 1250.10 = 6250.50, rounded off by −0.50 to 6250.00), Bankgiro
 * with OCR reference, F-tax statement, order references on the lines, delivery terms and a penalty rate (no EN 16931
 * home).
 */
export function svefakturaInvoice(): string {
  return `<?xml version="1.0" encoding="UTF-8"?>
<Invoice xmlns="urn:sfti:documents:BasicInvoice:1:0" xmlns:cac="urn:sfti:CommonAggregateComponents:1:0" xmlns:cbc="urn:oasis:names:tc:ubl:CommonBasicComponents:1:0">
  <ID>SF-2026-1001</ID>
  <cbc:IssueDate>2026-11-03</cbc:IssueDate>
  <InvoiceTypeCode>380</InvoiceTypeCode>
  <cbc:Note>Leverans enligt ramavtal 2026-17</cbc:Note>
  <InvoiceCurrencyCode>SEK</InvoiceCurrencyCode>
  <LineItemCountNumeric>2</LineItemCountNumeric>
  <cac:BuyerParty>
    <cac:Party>
      <cac:PartyIdentification>
        <cac:ID identificationSchemeAgencyID="9">7350001234564</cac:ID>
      </cac:PartyIdentification>
      <cac:PartyName>
        <cbc:Name>Norrby kommun</cbc:Name>
      </cac:PartyName>
      <cac:Address>
        <cbc:StreetName>Stadshusgatan 4</cbc:StreetName>
        <cbc:CityName>Norrby</cbc:CityName>
        <cbc:PostalZone>93131</cbc:PostalZone>
        <cac:Country>
          <cac:IdentificationCode>SE</cac:IdentificationCode>
        </cac:Country>
      </cac:Address>
      <cac:PartyTaxScheme>
        <cac:CompanyID>2120001231</cac:CompanyID>
        <cac:TaxScheme>
          <cac:ID>SWT</cac:ID>
        </cac:TaxScheme>
      </cac:PartyTaxScheme>
      <cac:PartyTaxScheme>
        <cac:CompanyID>SE212000123101</cac:CompanyID>
        <cac:TaxScheme>
          <cac:ID>VAT</cac:ID>
        </cac:TaxScheme>
      </cac:PartyTaxScheme>
      <cac:Contact>
        <cbc:Name>Lena Ek</cbc:Name>
        <cbc:ElectronicMail>lena.ek@norrby.example</cbc:ElectronicMail>
      </cac:Contact>
    </cac:Party>
  </cac:BuyerParty>
  <cac:SellerParty>
    <cac:Party>
      <cac:PartyIdentification>
        <cac:ID identificationSchemeAgencyID="9">7350000000016</cac:ID>
      </cac:PartyIdentification>
      <cac:PartyName>
        <cbc:Name>Nordisk Kontor</cbc:Name>
      </cac:PartyName>
      <cac:Address>
        <cbc:Postbox>Box 117</cbc:Postbox>
        <cbc:StreetName>Industrivägen 12</cbc:StreetName>
        <cbc:CityName>Umeå</cbc:CityName>
        <cbc:PostalZone>90326</cbc:PostalZone>
        <cac:Country>
          <cac:IdentificationCode>SE</cac:IdentificationCode>
        </cac:Country>
      </cac:Address>
      <cac:PartyTaxScheme>
        <cbc:RegistrationName>Nordisk Kontorsmaterial AB</cbc:RegistrationName>
        <cac:CompanyID>5560360793</cac:CompanyID>
        <cbc:ExemptionReason>Godkänd för F-skatt</cbc:ExemptionReason>
        <cac:RegistrationAddress>
          <cbc:CityName>Umeå</cbc:CityName>
          <cac:Country>
            <cac:IdentificationCode>SE</cac:IdentificationCode>
          </cac:Country>
        </cac:RegistrationAddress>
        <cac:TaxScheme>
          <cac:ID>SWT</cac:ID>
        </cac:TaxScheme>
      </cac:PartyTaxScheme>
      <cac:PartyTaxScheme>
        <cac:CompanyID>SE556036079301</cac:CompanyID>
        <cac:TaxScheme>
          <cac:ID>VAT</cac:ID>
        </cac:TaxScheme>
      </cac:PartyTaxScheme>
      <cac:Contact>
        <cbc:Name>Kundtjänst</cbc:Name>
        <cbc:Telephone>090123456</cbc:Telephone>
        <cbc:ElectronicMail>faktura@nordiskkontor.example</cbc:ElectronicMail>
      </cac:Contact>
    </cac:Party>
  </cac:SellerParty>
  <cac:Delivery>
    <cbc:ActualDeliveryDateTime>2026-10-28T00:00:00</cbc:ActualDeliveryDateTime>
    <cac:DeliveryAddress>
      <cbc:StreetName>Förrådsvägen 2</cbc:StreetName>
      <cbc:CityName>Norrby</cbc:CityName>
      <cbc:PostalZone>93135</cbc:PostalZone>
      <cac:Country>
        <cac:IdentificationCode>SE</cac:IdentificationCode>
      </cac:Country>
    </cac:DeliveryAddress>
  </cac:Delivery>
  <cac:PaymentMeans>
    <cac:PaymentMeansTypeCode>1</cac:PaymentMeansTypeCode>
    <cbc:DuePaymentDate>2026-12-03</cbc:DuePaymentDate>
    <cac:PayeeFinancialAccount>
      <cac:ID>50501055</cac:ID>
      <cac:FinancialInstitutionBranch>
        <cac:FinancialInstitution>
          <cac:ID>BGABSESS</cac:ID>
        </cac:FinancialInstitution>
      </cac:FinancialInstitutionBranch>
      <cac:PaymentInstructionID>1001202611</cac:PaymentInstructionID>
    </cac:PayeeFinancialAccount>
  </cac:PaymentMeans>
  <cac:PaymentTerms>
    <cbc:Note>30 dagar netto</cbc:Note>
    <cbc:PenaltySurchargePercent>8</cbc:PenaltySurchargePercent>
  </cac:PaymentTerms>
  <cac:TaxTotal>
    <cbc:TotalTaxAmount amountCurrencyID="SEK">1250.10</cbc:TotalTaxAmount>
    <cac:TaxSubTotal>
      <cbc:TaxableAmount amountCurrencyID="SEK">5000.40</cbc:TaxableAmount>
      <cbc:TaxAmount amountCurrencyID="SEK">1250.10</cbc:TaxAmount>
      <cac:TaxCategory>
        <cac:ID>S</cac:ID>
        <cbc:Percent>25</cbc:Percent>
        <cac:TaxScheme>
          <cac:ID>VAT</cac:ID>
        </cac:TaxScheme>
      </cac:TaxCategory>
    </cac:TaxSubTotal>
  </cac:TaxTotal>
  <cac:LegalTotal>
    <cbc:LineExtensionTotalAmount amountCurrencyID="SEK">5000.40</cbc:LineExtensionTotalAmount>
    <cbc:TaxExclusiveTotalAmount amountCurrencyID="SEK">5000.40</cbc:TaxExclusiveTotalAmount>
    <cbc:TaxInclusiveTotalAmount amountCurrencyID="SEK">6250.00</cbc:TaxInclusiveTotalAmount>
    <cac:RoundOffAmount amountCurrencyID="SEK">-0.50</cac:RoundOffAmount>
  </cac:LegalTotal>
  <cac:InvoiceLine>
    <cac:ID>1</cac:ID>
    <cbc:InvoicedQuantity quantityUnitCode="EA" quantityUnitCodeListID="UNECE-REC20" quantityUnitCodeListAgencyID="6">20</cbc:InvoicedQuantity>
    <cbc:LineExtensionAmount amountCurrencyID="SEK">3990.00</cbc:LineExtensionAmount>
    <cac:OrderLineReference>
      <cac:BuyersLineID>1</cac:BuyersLineID>
      <cac:OrderReference>
        <cac:BuyersID>PO-8812</cac:BuyersID>
      </cac:OrderReference>
    </cac:OrderLineReference>
    <cac:Item>
      <cbc:Description>Kopieringspapper A4, 500 ark</cbc:Description>
      <cac:SellersItemIdentification>
        <cac:ID>KP-500</cac:ID>
      </cac:SellersItemIdentification>
      <cac:StandardItemIdentification>
        <cac:ID identificationSchemeAgencyID="9">7312345000120</cac:ID>
      </cac:StandardItemIdentification>
      <cac:TaxCategory>
        <cac:ID>S</cac:ID>
        <cbc:Percent>25</cbc:Percent>
        <cac:TaxScheme>
          <cac:ID>VAT</cac:ID>
        </cac:TaxScheme>
      </cac:TaxCategory>
      <cac:BasePrice>
        <cbc:PriceAmount amountCurrencyID="SEK">199.50</cbc:PriceAmount>
      </cac:BasePrice>
    </cac:Item>
  </cac:InvoiceLine>
  <cac:InvoiceLine>
    <cac:ID>2</cac:ID>
    <cbc:InvoicedQuantity quantityUnitCode="H87">4</cbc:InvoicedQuantity>
    <cbc:LineExtensionAmount amountCurrencyID="SEK">1010.40</cbc:LineExtensionAmount>
    <cbc:Note>Restnoterat: levereras vecka 46</cbc:Note>
    <cac:OrderLineReference>
      <cac:BuyersLineID>2</cac:BuyersLineID>
      <cac:OrderReference>
        <cac:BuyersID>PO-8812</cac:BuyersID>
      </cac:OrderReference>
    </cac:OrderLineReference>
    <cac:Item>
      <cbc:Description>Pärmar A4, 10-pack</cbc:Description>
      <cac:SellersItemIdentification>
        <cac:ID>PA-10</cac:ID>
      </cac:SellersItemIdentification>
      <cac:BasePrice>
        <cbc:PriceAmount amountCurrencyID="SEK">252.60</cbc:PriceAmount>
      </cac:BasePrice>
    </cac:Item>
  </cac:InvoiceLine>
  <RequisitionistDocumentReference>
    <cac:ID>Lena Ek 4410</cac:ID>
  </RequisitionistDocumentReference>
  <cac:DeliveryTerms>
    <cbc:SpecialTerms>Fritt levererat</cbc:SpecialTerms>
  </cac:DeliveryTerms>
</Invoice>
`;
}

/**
 * SETU Invoice 2.2: a staffing supplier invoicing hours. Hour types as item names, the work week as item property,
 * the time card per line as a document reference, the assignment as an embedded attachment, no EndpointID (SETU
 * forbids it) but KVK numbers.
 */
export function setuInvoice(): string {
  return `<?xml version="1.0" encoding="UTF-8"?>
<Invoice xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2" xmlns:cac="urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2" xmlns:cbc="urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2" xmlns:setu="urn:ns.setu.nl:setu:invoice:extension:v2.0">
  <cbc:CustomizationID>urn:cen.eu:en16931:2017#compliant#urn:fdc:nen.nl:nlcius:v1.0</cbc:CustomizationID>
  <cbc:ID>FW-2026-3301</cbc:ID>
  <cbc:IssueDate>2026-11-09</cbc:IssueDate>
  <cbc:DueDate>2026-11-23</cbc:DueDate>
  <cbc:InvoiceTypeCode>380</cbc:InvoiceTypeCode>
  <cbc:Note>Betaling binnen 14 dagen na factuurdatum.</cbc:Note>
  <cbc:DocumentCurrencyCode>EUR</cbc:DocumentCurrencyCode>
  <cbc:BuyerReference>KST-2201</cbc:BuyerReference>
  <cac:OrderReference>
    <cbc:ID>INK-55120</cbc:ID>
  </cac:OrderReference>
  <cac:AdditionalDocumentReference>
    <cbc:ID>OPDR-7781</cbc:ID>
    <cbc:DocumentDescription>Assignment</cbc:DocumentDescription>
    <cac:Attachment>
      <cbc:EmbeddedDocumentBinaryObject mimeCode="application/pdf" filename="opdracht-7781.pdf">JVBERi0xLjQKJcfsj6IKJSVFT0YK</cbc:EmbeddedDocumentBinaryObject>
    </cac:Attachment>
  </cac:AdditionalDocumentReference>
  <cac:AccountingSupplierParty>
    <cac:Party>
      <cac:PartyIdentification>
        <cbc:ID>LEV-0042</cbc:ID>
      </cac:PartyIdentification>
      <cac:PartyName>
        <cbc:Name>Flexwerk Uitzendingen</cbc:Name>
      </cac:PartyName>
      <cac:PostalAddress>
        <cbc:StreetName>Handelsweg 20</cbc:StreetName>
        <cbc:CityName>Zwolle</cbc:CityName>
        <cbc:PostalZone>8041 AB</cbc:PostalZone>
        <cac:Country>
          <cbc:IdentificationCode>NL</cbc:IdentificationCode>
        </cac:Country>
      </cac:PostalAddress>
      <cac:PartyTaxScheme>
        <cbc:CompanyID>NL001234567B01</cbc:CompanyID>
        <cac:TaxScheme>
          <cbc:ID>VAT</cbc:ID>
        </cac:TaxScheme>
      </cac:PartyTaxScheme>
      <cac:PartyLegalEntity>
        <cbc:RegistrationName>Flexwerk Uitzendingen B.V.</cbc:RegistrationName>
        <cbc:CompanyID schemeID="0106">34567890</cbc:CompanyID>
      </cac:PartyLegalEntity>
      <cac:Contact>
        <cbc:Name>Debiteurenadministratie</cbc:Name>
        <cbc:Telephone>038-4212121</cbc:Telephone>
      </cac:Contact>
    </cac:Party>
  </cac:AccountingSupplierParty>
  <cac:AccountingCustomerParty>
    <cac:Party>
      <cac:PartyIdentification>
        <cbc:ID>KL-9913</cbc:ID>
      </cac:PartyIdentification>
      <cac:PartyName>
        <cbc:Name>Bouwbedrijf Van Dam B.V.</cbc:Name>
      </cac:PartyName>
      <cac:PostalAddress>
        <cbc:StreetName>Kanaaldijk 7</cbc:StreetName>
        <cbc:CityName>Deventer</cbc:CityName>
        <cbc:PostalZone>7411 GH</cbc:PostalZone>
        <cac:Country>
          <cbc:IdentificationCode>NL</cbc:IdentificationCode>
        </cac:Country>
      </cac:PostalAddress>
      <cac:PartyLegalEntity>
        <cbc:RegistrationName>Bouwbedrijf Van Dam B.V.</cbc:RegistrationName>
        <cbc:CompanyID schemeID="0106">45678901</cbc:CompanyID>
      </cac:PartyLegalEntity>
      <cac:Contact>
        <cbc:Name>Crediteurenadministratie</cbc:Name>
      </cac:Contact>
    </cac:Party>
  </cac:AccountingCustomerParty>
  <cac:PaymentMeans>
    <cbc:PaymentMeansCode>58</cbc:PaymentMeansCode>
    <cac:PayeeFinancialAccount>
      <cbc:ID>NL91ABNA0417164300</cbc:ID>
    </cac:PayeeFinancialAccount>
  </cac:PaymentMeans>
  <cac:TaxTotal>
    <cbc:TaxAmount currencyID="EUR">194.25</cbc:TaxAmount>
    <cac:TaxSubtotal>
      <cbc:TaxableAmount currencyID="EUR">925.00</cbc:TaxableAmount>
      <cbc:TaxAmount currencyID="EUR">194.25</cbc:TaxAmount>
      <cac:TaxCategory>
        <cbc:ID>S</cbc:ID>
        <cbc:Percent>21</cbc:Percent>
        <cac:TaxScheme>
          <cbc:ID>VAT</cbc:ID>
        </cac:TaxScheme>
      </cac:TaxCategory>
    </cac:TaxSubtotal>
  </cac:TaxTotal>
  <cac:LegalMonetaryTotal>
    <cbc:LineExtensionAmount currencyID="EUR">925.00</cbc:LineExtensionAmount>
    <cbc:TaxExclusiveAmount currencyID="EUR">925.00</cbc:TaxExclusiveAmount>
    <cbc:TaxInclusiveAmount currencyID="EUR">1119.25</cbc:TaxInclusiveAmount>
    <cbc:PayableAmount currencyID="EUR">1119.25</cbc:PayableAmount>
  </cac:LegalMonetaryTotal>
  <cac:InvoiceLine>
    <cbc:ID>1</cbc:ID>
    <cbc:InvoicedQuantity unitCode="HUR">32</cbc:InvoicedQuantity>
    <cbc:LineExtensionAmount currencyID="EUR">800.00</cbc:LineExtensionAmount>
    <cac:DocumentReference>
      <cbc:ID>TK-2026-45-118#1</cbc:ID>
    </cac:DocumentReference>
    <cac:Item>
      <cbc:Name>Regular</cbc:Name>
      <cac:ClassifiedTaxCategory>
        <cbc:ID>S</cbc:ID>
        <cbc:Percent>21</cbc:Percent>
        <cac:TaxScheme>
          <cbc:ID>VAT</cbc:ID>
        </cac:TaxScheme>
      </cac:ClassifiedTaxCategory>
      <cac:AdditionalItemProperty>
        <cbc:Name>werkweeknummer</cbc:Name>
        <cbc:Value>45</cbc:Value>
      </cac:AdditionalItemProperty>
    </cac:Item>
    <cac:Price>
      <cbc:PriceAmount currencyID="EUR">25.00</cbc:PriceAmount>
      <cbc:BaseQuantity unitCode="HUR">1</cbc:BaseQuantity>
    </cac:Price>
  </cac:InvoiceLine>
  <cac:InvoiceLine>
    <cbc:ID>2</cbc:ID>
    <cbc:InvoicedQuantity unitCode="HUR">4</cbc:InvoicedQuantity>
    <cbc:LineExtensionAmount currencyID="EUR">125.00</cbc:LineExtensionAmount>
    <cac:DocumentReference>
      <cbc:ID>TK-2026-45-118#2</cbc:ID>
    </cac:DocumentReference>
    <cac:Item>
      <cbc:Name>Overtime</cbc:Name>
      <cac:ClassifiedTaxCategory>
        <cbc:ID>S</cbc:ID>
        <cbc:Percent>21</cbc:Percent>
        <cac:TaxScheme>
          <cbc:ID>VAT</cbc:ID>
        </cac:TaxScheme>
      </cac:ClassifiedTaxCategory>
      <cac:AdditionalItemProperty>
        <cbc:Name>werkweeknummer</cbc:Name>
        <cbc:Value>45</cbc:Value>
      </cac:AdditionalItemProperty>
    </cac:Item>
    <cac:Price>
      <cbc:PriceAmount currencyID="EUR">31.25</cbc:PriceAmount>
      <cbc:BaseQuantity unitCode="HUR">1</cbc:BaseQuantity>
    </cac:Price>
  </cac:InvoiceLine>
</Invoice>
`;
}

/** An EN 16931 invoice of an Australian supplier to an Australian buyer in AUD with GST 10 %, for PINT A-NZ. */
export function australianInvoice(): Invoice {
  const inv = emptyInvoice();
  Object.assign(inv, {
    number: 'AU-2026-0077',
    issueDate: '2026-11-04',
    typeCode: '380',
    currencyCode: 'AUD',
    paymentDueDate: '2026-12-04',
    buyerReference: 'PO-AU-301',
    paymentTerms: 'Net 30 days',
  } satisfies Partial<Invoice>);
  inv.processControl = {
    specificationIdentifier: EN16931,
    businessProcessType: 'urn:fdc:peppol.eu:2017:poacc:billing:01:1.0',
  };
  inv.seller = {
    name: 'Harbour Supplies Pty Ltd',
    identifiers: [],
    legalRegistrationIdentifier: { value: '47555222000', schemeId: '0151' },
    vatIdentifier: 'AU47555222000',
    electronicAddress: { value: '47555222000', schemeId: '0151' },
    postalAddress: {
      line1: '100 Harbour Street',
      city: 'Sydney',
      postCode: '2000',
      countrySubdivision: 'NSW',
      countryCode: 'AU',
    },
  };
  inv.buyer = {
    name: 'Coastal Builders Pty Ltd',
    legalRegistrationIdentifier: { value: '91888222000', schemeId: '0151' },
    electronicAddress: { value: '91888222000', schemeId: '0151' },
    postalAddress: {
      line1: '5 Bay Road',
      city: 'Newcastle',
      postCode: '2300',
      countrySubdivision: 'NSW',
      countryCode: 'AU',
    },
  };
  inv.paymentInstructions = {
    meansTypeCode: '30',
    creditTransfers: [
      { accountIdentifier: '032000123456', accountName: 'Harbour Supplies', serviceProviderIdentifier: '032000' },
    ],
  };
  inv.totals = {
    sumOfLineNetAmounts: '1500.00',
    totalWithoutVat: '1500.00',
    totalVatAmount: '150.00',
    totalWithVat: '1650.00',
    amountDueForPayment: '1650.00',
  };
  inv.vatBreakdown = [{ taxableAmount: '1500.00', taxAmount: '150.00', categoryCode: 'S', rate: '10' }];
  inv.lines = [
    {
      identifier: '1',
      quantity: '10',
      quantityUnitCode: 'EA',
      netAmount: '1500.00',
      allowanceCharges: [],
      price: { netPrice: '150.00' },
      vat: { categoryCode: 'S', rate: '10' },
      item: { name: 'Safety helmet', classificationIdentifiers: [], attributes: [] },
    },
  ];
  return inv;
}
