/**
 * Peppol BIS Invoice Response 3 (transaction T111): the buyer's verdict on an invoice, sent C4 → C1 through the access
 * points like any business document. Read (a received response: which invoice, which verdict, why) and built (the
 * response a buyer sends through the API). Pure: no I/O. The code lists are the ones the pinned OpenPeppol rules
 * (PEPPOLBIS-T111, rule pack `peppol-invoice-response`) check.
 */
import type { Element, Node } from '@xmldom/xmldom';
import { el, leaf, serialize, type XmlElement } from '../en16931/xml-write';
import { isGatewayError } from '../core/gateway-error';
import { NS } from '../formats/xml/namespaces';
import { parseXml, select } from '../formats/xml/secure-parser';
import { documentTypeId, processId, type DocumentTypeId, type ParticipantId, type ProcessId } from './identifiers';
import { DOCTYPE_SCHEME_BUSDOX, PROCESS_SCHEME, participantIdProblem, peppolParticipant } from './identifiers';

export const INVOICE_RESPONSE_CUSTOMIZATION_ID = 'urn:fdc:peppol.eu:poacc:trns:invoice_response:3';
export const INVOICE_RESPONSE_PROFILE_ID = 'urn:fdc:peppol.eu:poacc:bis:invoice_response:3';
export const INVOICE_RESPONSE_DOCUMENT_TYPE: DocumentTypeId = documentTypeId(
  DOCTYPE_SCHEME_BUSDOX,
  `urn:oasis:names:specification:ubl:schema:xsd:ApplicationResponse-2::ApplicationResponse##${INVOICE_RESPONSE_CUSTOMIZATION_ID}::2.1`,
);
export const INVOICE_RESPONSE_PROCESS: ProcessId = processId(PROCESS_SCHEME, INVOICE_RESPONSE_PROFILE_ID);

/**
 * Invoice status codes (UNCL4343 subset) the rules accept, with their meaning. `CA` (conditionally accepted) is read
 * when received; the API does not offer it for sending (the statuses it offers are the ones of our contract).
 */
export const INVOICE_RESPONSE_STATUS = {
  AB: 'Message acknowledgement',
  IP: 'In process',
  UQ: 'Under query',
  CA: 'Conditionally accepted',
  RE: 'Rejected',
  AP: 'Accepted',
  PD: 'Paid',
} as const;
export type InvoiceResponseStatusCode = keyof typeof INVOICE_RESPONSE_STATUS;

/** The statuses a buyer can send through the API. */
export const SENDABLE_INVOICE_RESPONSE_STATUSES = ['AB', 'IP', 'UQ', 'RE', 'AP', 'PD'] as const;
export type SendableInvoiceResponseStatus = (typeof SENDABLE_INVOICE_RESPONSE_STATUSES)[number];

/** Status clarification reasons (code list OPStatusReason). */
export const STATUS_REASONS = {
  NON: 'No issue',
  REF: 'References incorrect',
  LEG: 'Legal information incorrect',
  REC: 'Receiver unknown',
  QUA: 'Item quality insufficient',
  DEL: 'Delivery issues',
  PRI: 'Prices incorrect',
  QTY: 'Quantity incorrect',
  ITM: 'Items incorrect',
  PAY: 'Payment information incorrect',
  UNR: 'Not recognized',
  FIN: 'Finance incorrect',
  PPD: 'Partially paid',
  OTH: 'Other',
} as const;
export type StatusReasonCode = keyof typeof STATUS_REASONS;

/** Status clarification actions (code list OPStatusAction). */
export const STATUS_ACTIONS = {
  NOA: 'No action required',
  PIN: 'Provide information',
  NIN: 'Issue new invoice',
  CNF: 'Credit fully',
  CNP: 'Credit partially',
  CNA: 'Credit the amount',
  OTH: 'Other',
} as const;
export type StatusActionCode = keyof typeof STATUS_ACTIONS;

export const REASON_LIST_ID = 'OPStatusReason';
export const ACTION_LIST_ID = 'OPStatusAction';
/** The listID of the response code in the BIS examples. */
export const RESPONSE_CODE_LIST_ID = 'UNCL4343OpSubset';

/** One clarification: a reason or an action code with its optional text. */
export interface InvoiceResponseClarification {
  listId: typeof REASON_LIST_ID | typeof ACTION_LIST_ID;
  code: string;
  text?: string;
}

/** A read Invoice Response: what matching and the events need. */
export interface InvoiceResponse {
  id: string;
  issueDate: string;
  customizationId: string;
  profileId: string;
  note?: string;
  /** The buyer (C4) that sent it. */
  sender: ParticipantId;
  /** The seller (C1) it answers: our party when it is one of ours. */
  receiver: ParticipantId;
  statusCode: InvoiceResponseStatusCode;
  clarifications: InvoiceResponseClarification[];
  /** The invoice answered: its number (BT-1) and, when given, its issue date (BT-2) and type code. */
  invoice: { id: string; issueDate?: string; typeCode?: string };
}

export type InvoiceResponseRead = { ok: true; response: InvoiceResponse } | { ok: false; reason: string };

const UBL = { ar: NS.ublApplicationResponse, cac: NS.cac, cbc: NS.cbc } as const;

function all(context: Node, path: string): Element[] {
  return select(context, path, UBL) as Element[];
}

function one(context: Node, path: string): Element | undefined {
  return all(context, path)[0];
}

function textOf(e: Element | undefined): string | undefined {
  if (!e) return undefined;
  const t = (e.textContent ?? '').trim();
  return t === '' ? undefined : t;
}

const DATE = /^\d{4}-\d{2}-\d{2}$/;

/** `cbc:EndpointID` with its scheme as a Peppol participant, or why it is not one. */
function endpointOf(party: Element | undefined, role: string): ParticipantId | string {
  const endpoint = party ? one(party, 'cbc:EndpointID') : undefined;
  const value = textOf(endpoint);
  const scheme = endpoint?.getAttribute('schemeID')?.trim();
  if (!value || !scheme) return `the ${role} party has no cbc:EndpointID with a schemeID`;
  const problem = participantIdProblem('iso6523-actorid-upis', `${scheme}:${value}`);
  if (problem) return `the ${role} party's EndpointID ${scheme}:${value} is not a Peppol participant: ${problem}`;
  return peppolParticipant(`${scheme}:${value}`);
}

/**
 * Reads an Invoice Response. What matching and the verdict need must be there (the answered invoice's number, both
 * parties' endpoints, a known status code); anything missing gives one precise reason, never a half-read response.
 * The official rules (validation) judge the rest.
 */
export function readInvoiceResponse(bytes: Buffer): InvoiceResponseRead {
  let root: Element;
  try {
    const doc = parseXml(bytes);
    const r = doc.documentElement;
    if (!r) return { ok: false, reason: 'the document has no root element' };
    root = r;
  } catch (e) {
    return { ok: false, reason: `unreadable XML: ${isGatewayError(e) || e instanceof Error ? e.message : String(e)}` };
  }
  if (root.namespaceURI !== NS.ublApplicationResponse || root.localName !== 'ApplicationResponse')
    return { ok: false, reason: `the root element is ${root.localName ?? '?'}, not a UBL ApplicationResponse` };
  const customizationId = textOf(one(root, 'cbc:CustomizationID')) ?? '';
  if (!customizationId.startsWith(INVOICE_RESPONSE_CUSTOMIZATION_ID))
    return { ok: false, reason: `CustomizationID "${customizationId}" is not an Invoice Response 3` };
  const id = textOf(one(root, 'cbc:ID'));
  if (!id) return { ok: false, reason: 'the response has no cbc:ID' };
  const issueDate = textOf(one(root, 'cbc:IssueDate')) ?? '';
  if (!DATE.test(issueDate)) return { ok: false, reason: `the response's IssueDate "${issueDate}" is not YYYY-MM-DD` };
  const sender = endpointOf(one(root, 'cac:SenderParty'), 'sender');
  if (typeof sender === 'string') return { ok: false, reason: sender };
  const receiver = endpointOf(one(root, 'cac:ReceiverParty'), 'receiver');
  if (typeof receiver === 'string') return { ok: false, reason: receiver };
  const responses = all(root, 'cac:DocumentResponse');
  if (responses.length !== 1)
    return { ok: false, reason: `the response has ${responses.length} cac:DocumentResponse elements, not one` };
  const dr = responses[0]!;
  const response = one(dr, 'cac:Response');
  const code = textOf(response ? one(response, 'cbc:ResponseCode') : undefined) ?? '';
  if (!(code in INVOICE_RESPONSE_STATUS))
    return { ok: false, reason: `ResponseCode "${code}" is not an invoice status code (UNCL4343 subset)` };
  const reference = one(dr, 'cac:DocumentReference');
  const invoiceId = textOf(reference ? one(reference, 'cbc:ID') : undefined);
  if (!reference || !invoiceId)
    return { ok: false, reason: 'the response names no invoice (cac:DocumentResponse/cac:DocumentReference/cbc:ID)' };
  const invoiceDate = textOf(one(reference, 'cbc:IssueDate'));
  if (invoiceDate !== undefined && !DATE.test(invoiceDate))
    return { ok: false, reason: `the referenced invoice's IssueDate "${invoiceDate}" is not YYYY-MM-DD` };
  const typeCode = textOf(one(reference, 'cbc:DocumentTypeCode'));
  const clarifications: InvoiceResponseClarification[] = [];
  for (const status of response ? all(response, 'cac:Status') : []) {
    const codeEl = one(status, 'cbc:StatusReasonCode');
    const c = textOf(codeEl);
    const text = textOf(one(status, 'cbc:StatusReason'));
    if (!c) continue;
    const listId = codeEl?.getAttribute('listID') === ACTION_LIST_ID ? ACTION_LIST_ID : REASON_LIST_ID;
    clarifications.push({ listId, code: c, ...(text !== undefined ? { text } : {}) });
  }
  const note = textOf(one(root, 'cbc:Note'));
  return {
    ok: true,
    response: {
      id,
      issueDate,
      customizationId,
      profileId: textOf(one(root, 'cbc:ProfileID')) ?? '',
      ...(note !== undefined ? { note } : {}),
      sender,
      receiver,
      statusCode: code as InvoiceResponseStatusCode,
      clarifications,
      invoice: {
        id: invoiceId,
        ...(invoiceDate !== undefined ? { issueDate: invoiceDate } : {}),
        ...(typeCode !== undefined ? { typeCode } : {}),
      },
    },
  };
}

/**
 * A party of the response: its electronic address as the invoice writes it (scheme = EAS code, value in its own case:
 * identifier rules such as the Danish CVR check the letters) and its legal name (both mandatory in T111).
 */
export interface InvoiceResponseParty {
  endpoint: { scheme: string; value: string };
  name: string;
}

export interface InvoiceResponseBuildInput {
  id: string;
  issuedAt: Date;
  statusCode: SendableInvoiceResponseStatus;
  note?: string;
  reasons?: ReadonlyArray<{ code: StatusReasonCode; text?: string }>;
  actions?: ReadonlyArray<{ code: StatusActionCode; text?: string }>;
  /** The buyer answering. */
  sender: InvoiceResponseParty;
  /** The seller answered. */
  receiver: InvoiceResponseParty;
  invoice: { id: string; issueDate?: string; typeCode: string };
}

/** Why a response input breaks a T111 rule (the API's 400), or null. */
export function invoiceResponseInputProblem(input: {
  statusCode: string;
  reasons?: ReadonlyArray<{ code: string; text?: string }>;
  actions?: ReadonlyArray<{ code: string; text?: string }>;
}): string | null {
  const reasons = input.reasons ?? [];
  const actions = input.actions ?? [];
  if (!(SENDABLE_INVOICE_RESPONSE_STATUSES as readonly string[]).includes(input.statusCode))
    return `status must be one of ${SENDABLE_INVOICE_RESPONSE_STATUSES.join(', ')}`;
  for (const r of reasons) if (!(r.code in STATUS_REASONS)) return `reason code ${r.code} is not in OPStatusReason`;
  for (const a of actions) if (!(a.code in STATUS_ACTIONS)) return `action code ${a.code} is not in OPStatusAction`;
  if (['UQ', 'RE'].includes(input.statusCode) && reasons.length + actions.length === 0)
    return `status ${input.statusCode} needs at least one clarification reason or action (PEPPOL-T111-R001)`;
  for (const r of reasons) {
    if (r.code === 'PPD' && input.statusCode !== 'PD')
      return 'reason PPD (partially paid) goes only with status PD (PEPPOL-T111-R005)';
    if (r.code === 'PPD' && !r.text?.trim()) return 'reason PPD needs a text (PEPPOL-T111-R004)';
  }
  return null;
}

function party(tag: string, p: InvoiceResponseParty): XmlElement {
  const e = p.endpoint;
  return el(
    tag,
    {},
    leaf('cbc:EndpointID', e.value, { schemeID: e.scheme }),
    el('cac:PartyLegalEntity', {}, leaf('cbc:RegistrationName', p.name)),
  );
}

function clarification(listId: string, c: { code: string; text?: string }): XmlElement {
  const text = c.text?.trim();
  return el(
    'cac:Status',
    {},
    leaf('cbc:StatusReasonCode', c.code, { listID: listId }),
    leaf('cbc:StatusReason', text ? text : undefined),
  );
}

/** The Invoice Response document (UTF-8 XML text). Throws a plain Error for input the T111 rules refuse. */
export function buildInvoiceResponse(input: InvoiceResponseBuildInput): string {
  const problem = invoiceResponseInputProblem(input);
  if (problem) throw new Error(problem);
  const iso = input.issuedAt.toISOString();
  const note = input.note?.trim();
  const root = el(
    'ApplicationResponse',
    { xmlns: NS.ublApplicationResponse, 'xmlns:cac': NS.cac, 'xmlns:cbc': NS.cbc },
    leaf('cbc:CustomizationID', INVOICE_RESPONSE_CUSTOMIZATION_ID),
    leaf('cbc:ProfileID', INVOICE_RESPONSE_PROFILE_ID),
    leaf('cbc:ID', input.id),
    leaf('cbc:IssueDate', iso.slice(0, 10)),
    leaf('cbc:IssueTime', iso.slice(11, 19)),
    leaf('cbc:Note', note ? note : undefined),
    party('cac:SenderParty', input.sender),
    party('cac:ReceiverParty', input.receiver),
    el(
      'cac:DocumentResponse',
      {},
      el(
        'cac:Response',
        {},
        leaf('cbc:ResponseCode', input.statusCode, { listID: RESPONSE_CODE_LIST_ID }),
        (input.reasons ?? []).map((r) => clarification(REASON_LIST_ID, r)),
        (input.actions ?? []).map((a) => clarification(ACTION_LIST_ID, a)),
      ),
      el(
        'cac:DocumentReference',
        {},
        leaf('cbc:ID', input.invoice.id),
        leaf('cbc:IssueDate', input.invoice.issueDate),
        leaf('cbc:DocumentTypeCode', input.invoice.typeCode),
      ),
    ),
  );
  return serialize(root);
}
