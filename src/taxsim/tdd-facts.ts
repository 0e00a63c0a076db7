/**
 * What the reference tax authority reads from a received Tax Data Document before (and besides) validating it: the
 * envelope terms that drive the lifecycle (TDT-003, TDT-007, TDT-012, TDT-017, TDT-018) and a few business terms a
 * person wants to see in the list. Parsed with the gateway's secure parser (no DTD, bounded size, depth and nodes).
 */
import type { Document, Element } from '@xmldom/xmldom';
import { firstChildElement } from '../formats/xml/helpers';
import { NS } from '../formats/xml/namespaces';
import { parseXml } from '../formats/xml/secure-parser';
import { TDD_NAMESPACE } from '../reporting/tdd';
import type { TddVersion } from '../reporting/tdd';

export interface TddFacts {
  /** 1.1.0 when the document carries TDT-018 (the only structural difference), else 1.0.0. */
  version: TddVersion;
  /** TDT-003 */
  tddUuid: string;
  /** TDT-007: S, R or D (as written; the lifecycle refuses anything else) */
  typeCode: string;
  /** TDT-012: C2 or C3 (as written) */
  role: string;
  /** TDT-006 */
  scope: string;
  /** TDT-010 */
  authorityId: string;
  /** TDT-013, `scheme:value` */
  reportingParty: string;
  /** TDT-014, `scheme:value` */
  receivingParty: string;
  /** TDT-015, `scheme:value` */
  representative: string;
  /** TDT-017 */
  invoiceUuid: string;
  /** TDT-018 (TDD 1.1.0) */
  transmissionUuid?: string;
  /** BT-1, BT-2, BT-3 */
  invoiceNumber: string;
  invoiceIssueDate: string;
  invoiceTypeCode: string;
  /** BT-31, BT-48 */
  sellerVat: string;
  buyerVat: string;
  /** BT-112 and BT-5 */
  totalWithVat: string;
  currency: string;
}

/** Not a readable Tax Data Document: not XML, unsafe XML, or another root element. */
export class TddUnreadableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TddUnreadableError';
  }
}

const text = (e: Element | undefined): string => (e?.textContent ?? '').trim();

function endpoint(e: Element | undefined): string {
  if (!e) return '';
  const scheme = e.getAttribute('schemeID')?.trim() ?? '';
  const value = text(e);
  return scheme ? `${scheme}:${value}` : value;
}

/** Reads the facts; throws TddUnreadableError for anything that is not a TaxData document of the TDD namespace. */
export function readTddFacts(xml: Buffer | string, maxBytes: number): TddFacts {
  let doc: Document;
  try {
    doc = parseXml(xml, { maxBytes });
  } catch (e) {
    throw new TddUnreadableError(`not readable XML: ${(e as Error).message}`.slice(0, 500));
  }
  const root = doc.documentElement;
  if (!root || root.namespaceURI !== TDD_NAMESPACE || root.localName !== 'TaxData')
    throw new TddUnreadableError(
      `not a Tax Data Document: the root is {${root?.namespaceURI ?? ''}}${root?.localName ?? ''}, expected ` +
        `{${TDD_NAMESPACE}}TaxData`,
    );
  const pxs = (parent: Element | undefined, local: string) =>
    parent ? firstChildElement(parent, TDD_NAMESPACE, local) : undefined;
  const cbc = (parent: Element | undefined, local: string) =>
    parent ? firstChildElement(parent, NS.cbc, local) : undefined;
  const cac = (parent: Element | undefined, local: string) =>
    parent ? firstChildElement(parent, NS.cac, local) : undefined;

  const transaction = pxs(root, 'ReportedTransaction');
  const reported = pxs(transaction, 'ReportedDocument');
  const vatOf = (partyRole: string) =>
    text(cbc(cac(cac(cac(reported, partyRole), 'Party'), 'PartyTaxScheme'), 'CompanyID'));
  const transmission = text(pxs(transaction, 'TransmissionUUID'));
  const total = cbc(pxs(reported, 'MonetaryTotal'), 'TaxInclusiveAmount');
  return {
    version: transmission ? '1.1.0' : '1.0.0',
    tddUuid: text(cbc(root, 'UUID')),
    typeCode: text(pxs(root, 'TaxDataTypeCode')),
    role: text(pxs(root, 'ReporterRole')),
    scope: text(pxs(root, 'DocumentScope')),
    authorityId: text(cbc(pxs(root, 'TaxAuthority'), 'ID')),
    reportingParty: endpoint(cbc(pxs(root, 'ReportingParty'), 'EndpointID')),
    receivingParty: endpoint(cbc(pxs(root, 'ReceivingParty'), 'EndpointID')),
    representative: endpoint(cbc(cac(pxs(root, 'ReportersRepresentative'), 'PartyIdentification'), 'ID')),
    invoiceUuid: text(cbc(reported, 'UUID')),
    ...(transmission ? { transmissionUuid: transmission } : {}),
    invoiceNumber: text(cbc(reported, 'ID')),
    invoiceIssueDate: text(cbc(reported, 'IssueDate')),
    invoiceTypeCode: text(pxs(reported, 'DocumentTypeCode')),
    sellerVat: vatOf('AccountingSupplierParty'),
    buyerVat: vatOf('AccountingCustomerParty'),
    totalWithVat: text(total),
    currency: text(cbc(reported, 'DocumentCurrencyCode')) || (total?.getAttribute('currencyID') ?? ''),
  };
}
