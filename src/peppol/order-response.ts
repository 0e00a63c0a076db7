/**
 * Peppol BIS Ordering 3, Order Response (transaction T76): the seller's answer to a received Order, built from the
 * order (its number, currency, parties and lines) and the seller's verdict. AB / AP / RE carry no lines; CA
 * (conditionally accepted) carries at least one line answer (PEPPOL-T76-R007..R010), each with a line status code of
 * the T76 subset of UNCL1229. Pure: no I/O. The pinned OpenPeppol rules (rule pack `peppol-order-response`) judge the
 * result before it is sent.
 */
import type { Element, Node } from '@xmldom/xmldom';
import { el, leaf, serialize, type XmlElement } from '../en16931/xml-write';
import { isGatewayError } from '../core/gateway-error';
import { NS } from '../formats/xml/namespaces';
import { parseXml, select } from '../formats/xml/secure-parser';
import {
  DOCTYPE_SCHEME_BUSDOX,
  PROCESS_SCHEME,
  documentTypeId,
  participantIdProblem,
  peppolParticipant,
  processId,
  type DocumentTypeId,
  type ParticipantId,
  type ProcessId,
} from './identifiers';
import { ORDER_CUSTOMIZATION_ID, ORDER_RESPONSE_CODES, ORDER_RESPONSE_CUSTOMIZATION_ID } from './orders';

/** The Ordering BIS profile: the process of orders and order responses alike. */
export const ORDERING_PROFILE_ID = 'urn:fdc:peppol.eu:poacc:bis:ordering:3';
export const ORDERING_PROCESS: ProcessId = processId(PROCESS_SCHEME, ORDERING_PROFILE_ID);
export const ORDER_DOCUMENT_TYPE: DocumentTypeId = documentTypeId(
  DOCTYPE_SCHEME_BUSDOX,
  `${NS.ublOrder}::Order##${ORDER_CUSTOMIZATION_ID}::2.1`,
);
export const ORDER_RESPONSE_DOCUMENT_TYPE: DocumentTypeId = documentTypeId(
  DOCTYPE_SCHEME_BUSDOX,
  `${NS.ublOrderResponse}::OrderResponse##${ORDER_RESPONSE_CUSTOMIZATION_ID}::2.1`,
);

export type OrderResponseCode = 'AB' | 'AP' | 'RE' | 'CA';
export const ORDER_RESPONSE_CODE_LIST = Object.keys(ORDER_RESPONSE_CODES) as OrderResponseCode[];

/** Line status codes (UNCL1229, the subset PEPPOLBIS-T76 accepts) with their meaning. */
export const ORDER_LINE_STATUS_CODES = {
  '1': 'Added',
  '3': 'Changed',
  '5': 'Accepted without amendment',
  '7': 'Not accepted',
  '42': 'Already delivered',
} as const;
export type OrderLineStatusCode = keyof typeof ORDER_LINE_STATUS_CODES;

/** What the seller says about one order line (CA only). */
export interface OrderLineAnswer {
  /** The order line answered (its cac:LineItem/cbc:ID). */
  lineId: string;
  statusCode: OrderLineStatusCode;
  /** The quantity the seller confirms (changed lines), in the order line's unit. */
  quantity?: string;
  note?: string;
}

/** The seller's verdict: the API's body, checked. */
export interface OrderResponseSpec {
  responseCode: OrderResponseCode;
  note?: string;
  lines?: readonly OrderLineAnswer[];
}

/** A party as the order writes it: electronic address (EAS scheme and value, in its own case) and name. */
export interface OrderParty {
  endpoint: { scheme: string; value: string };
  name: string;
  country?: string;
}

/** The facts of a received order an Order Response needs. */
export interface OrderForResponse {
  id: string;
  currency: string;
  buyer: OrderParty;
  seller: OrderParty;
  lines: ReadonlyArray<{ id: string; name?: string; unitCode?: string }>;
}

export interface OrderResponseBuildInput {
  id: string;
  issuedAt: Date;
  spec: OrderResponseSpec;
  order: OrderForResponse;
}

const QUANTITY = /^\d{1,12}(\.\d{1,6})?$/;

/** Why a verdict breaks a T76 rule (the API's 400), or null. Checks what needs no order. */
export function orderResponseInputProblem(spec: {
  responseCode: string;
  lines?: ReadonlyArray<{ lineId: string; statusCode: string; quantity?: string }>;
}): string | null {
  if (!(spec.responseCode in ORDER_RESPONSE_CODES))
    return `status must be one of ${ORDER_RESPONSE_CODE_LIST.join(', ')}`;
  const lines = spec.lines ?? [];
  if (spec.responseCode === 'CA' && lines.length === 0)
    return 'status CA (conditionally accepted) needs at least one line (PEPPOL-T76-R007)';
  if (spec.responseCode !== 'CA' && lines.length > 0)
    return `status ${spec.responseCode} carries no lines (PEPPOL-T76-R008..R010): lines go only with CA`;
  const seen = new Set<string>();
  for (const l of lines) {
    if (!(l.statusCode in ORDER_LINE_STATUS_CODES))
      return `line status code ${l.statusCode} is not one of ${Object.keys(ORDER_LINE_STATUS_CODES).join(', ')}`;
    if (seen.has(l.lineId)) return `order line ${l.lineId} is answered twice (PEPPOL-T76-R003)`;
    seen.add(l.lineId);
    if (l.quantity !== undefined && !QUANTITY.test(l.quantity))
      return `line ${l.lineId}: quantity "${l.quantity}" is not a decimal number`;
  }
  return null;
}

/** Why the verdict does not fit the order (a line it does not have), or null. */
export function orderResponseFitProblem(spec: OrderResponseSpec, order: OrderForResponse): string | null {
  const ids = new Set(order.lines.map((l) => l.id));
  for (const l of spec.lines ?? []) if (!ids.has(l.lineId)) return `the order has no line ${l.lineId}`;
  return null;
}

function all(context: Node, path: string): Element[] {
  return select(context, path, { r: NS.ublOrder, cac: NS.cac, cbc: NS.cbc }) as Element[];
}
function textAt(context: Node, path: string): string | undefined {
  const t = (all(context, path)[0]?.textContent ?? '').trim();
  return t === '' ? undefined : t;
}

function partyAt(root: Element, tag: string, role: string): OrderParty | string {
  const p = all(root, `cac:${tag}/cac:Party`)[0];
  if (!p) return `the order has no ${role} party`;
  const e = all(p, 'cbc:EndpointID')[0];
  const value = (e?.textContent ?? '').trim();
  const scheme = e?.getAttribute('schemeID')?.trim() ?? '';
  if (!value || !scheme) return `the order has no ${role} electronic address with a scheme`;
  const problem = participantIdProblem('iso6523-actorid-upis', `${scheme}:${value}`);
  if (problem)
    return `the order's ${role} electronic address ${scheme}:${value} is not a Peppol participant: ${problem}`;
  const name = textAt(p, 'cac:PartyLegalEntity/cbc:RegistrationName') ?? textAt(p, 'cac:PartyName/cbc:Name') ?? value;
  const country = textAt(p, 'cac:PostalAddress/cac:Country/cbc:IdentificationCode');
  return { endpoint: { scheme, value }, name, ...(country ? { country } : {}) };
}

/** A received Peppol Order read for its response, or why it cannot be answered. */
export function readOrderForResponse(bytes: Buffer): OrderForResponse | string {
  let root: Element | null;
  try {
    root = parseXml(bytes).documentElement;
  } catch (e) {
    return `unreadable XML: ${isGatewayError(e) || e instanceof Error ? e.message : String(e)}`;
  }
  if (!root || root.namespaceURI !== NS.ublOrder || root.localName !== 'Order') return 'the document is no UBL Order';
  const id = textAt(root, 'cbc:ID');
  if (!id) return 'the order has no cbc:ID';
  const currency = textAt(root, 'cbc:DocumentCurrencyCode');
  if (!currency) return 'the order has no DocumentCurrencyCode';
  const buyer = partyAt(root, 'BuyerCustomerParty', 'buyer');
  if (typeof buyer === 'string') return buyer;
  const seller = partyAt(root, 'SellerSupplierParty', 'seller');
  if (typeof seller === 'string') return seller;
  const lines = all(root, 'cac:OrderLine/cac:LineItem').flatMap((li) => {
    const lineId = textAt(li, 'cbc:ID');
    if (!lineId) return [];
    const name = textAt(li, 'cac:Item/cbc:Name');
    const unitCode = all(li, 'cbc:Quantity')[0]?.getAttribute('unitCode')?.trim();
    return [{ id: lineId, ...(name ? { name } : {}), ...(unitCode ? { unitCode } : {}) }];
  });
  return { id, currency, buyer, seller, lines };
}

export function participantOfParty(p: OrderParty): ParticipantId {
  return peppolParticipant(`${p.endpoint.scheme}:${p.endpoint.value}`);
}

function party(tag: string, p: OrderParty): XmlElement {
  return el(
    tag,
    {},
    el(
      'cac:Party',
      {},
      leaf('cbc:EndpointID', p.endpoint.value, { schemeID: p.endpoint.scheme }),
      el('cac:PartyLegalEntity', {}, leaf('cbc:RegistrationName', p.name)),
    ),
  );
}

/** The Order Response document (UTF-8 XML text). Throws a plain Error for a verdict the T76 rules or the order refuse. */
export function buildOrderResponse(input: OrderResponseBuildInput): string {
  const { spec, order } = input;
  const problem = orderResponseInputProblem(spec) ?? orderResponseFitProblem(spec, order);
  if (problem) throw new Error(problem);
  const iso = input.issuedAt.toISOString();
  const note = spec.note?.trim();
  const byId = new Map(order.lines.map((l) => [l.id, l]));
  const lines = (spec.lines ?? []).map((answer, i) => {
    const line = byId.get(answer.lineId);
    const lineNote = answer.note?.trim();
    return el(
      'cac:OrderLine',
      {},
      el(
        'cac:LineItem',
        {},
        leaf('cbc:ID', String(i + 1)),
        leaf('cbc:Note', lineNote ? lineNote : undefined),
        leaf('cbc:LineStatusCode', answer.statusCode, { listID: 'UNCL1229' }),
        leaf('cbc:Quantity', answer.quantity, { unitCode: line?.unitCode ?? 'C62' }),
        el('cac:Item', {}, leaf('cbc:Name', line?.name ?? `Line ${answer.lineId}`)),
      ),
      el('cac:OrderLineReference', {}, leaf('cbc:LineID', answer.lineId)),
    );
  });
  const root = el(
    'OrderResponse',
    { xmlns: NS.ublOrderResponse, 'xmlns:cac': NS.cac, 'xmlns:cbc': NS.cbc },
    leaf('cbc:CustomizationID', ORDER_RESPONSE_CUSTOMIZATION_ID),
    leaf('cbc:ProfileID', ORDERING_PROFILE_ID),
    leaf('cbc:ID', input.id),
    leaf('cbc:IssueDate', iso.slice(0, 10)),
    leaf('cbc:IssueTime', iso.slice(11, 19)),
    leaf('cbc:OrderResponseCode', spec.responseCode, { listID: 'UNCL4343' }),
    leaf('cbc:Note', note ? note : undefined),
    leaf('cbc:DocumentCurrencyCode', order.currency, { listID: 'ISO4217' }),
    el('cac:OrderReference', {}, leaf('cbc:ID', order.id)),
    party('cac:SellerSupplierParty', order.seller),
    party('cac:BuyerCustomerParty', order.buyer),
    lines,
  );
  return serialize(root);
}
