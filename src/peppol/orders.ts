/**
 * Peppol BIS Ordering 3: an Order (T01) and an Order Response (T76), read for what receiving them needs (numbers,
 * dates, the parties' endpoints, the order an Order Response answers and its code). Anything missing gives one precise
 * reason; the official rules (validation) judge the rest. Pure: no I/O.
 */
import type { Element, Node } from '@xmldom/xmldom';
import { isGatewayError } from '../core/gateway-error';
import { NS } from '../formats/xml/namespaces';
import { parseXml, select } from '../formats/xml/secure-parser';
import { participantIdProblem, peppolParticipant, type ParticipantId } from './identifiers';

export const ORDER_CUSTOMIZATION_ID = 'urn:fdc:peppol.eu:poacc:trns:order:3';
export const ORDER_RESPONSE_CUSTOMIZATION_ID = 'urn:fdc:peppol.eu:poacc:trns:order_response:3';

/** Order response codes (the subset PEPPOLBIS-T76 accepts) with their meaning. */
export const ORDER_RESPONSE_CODES: Readonly<Record<string, string>> = {
  AB: 'Acknowledged',
  AP: 'Accepted',
  RE: 'Rejected',
  CA: 'Conditionally accepted',
};

export interface ReceivedOrder {
  id: string;
  issueDate: string;
  buyer: ParticipantId | null;
  seller: ParticipantId | null;
}

export interface ReceivedOrderResponse {
  id: string;
  issueDate: string;
  responseCode: string;
  /** The order answered (its number, cac:OrderReference/cbc:ID). */
  orderId: string;
  buyer: ParticipantId | null;
  seller: ParticipantId | null;
  note?: string;
}

type Read<T> = { ok: true; value: T } | { ok: false; reason: string };

function all(context: Node, path: string, ns: string): Element[] {
  return select(context, path, { r: ns, cac: NS.cac, cbc: NS.cbc }) as Element[];
}

function textAt(context: Node, path: string, ns: string): string | undefined {
  const t = (all(context, path, ns)[0]?.textContent ?? '').trim();
  return t === '' ? undefined : t;
}

function endpointAt(context: Node, path: string, ns: string): ParticipantId | null {
  const e = all(context, path, ns)[0];
  const value = (e?.textContent ?? '').trim();
  const scheme = e?.getAttribute('schemeID')?.trim();
  if (!value || !scheme) return null;
  return participantIdProblem('iso6523-actorid-upis', `${scheme}:${value}`)
    ? null
    : peppolParticipant(`${scheme}:${value}`);
}

function rootOf(bytes: Buffer, ns: string, local: string): Read<Element> {
  try {
    const r = parseXml(bytes).documentElement;
    if (!r) return { ok: false, reason: 'the document has no root element' };
    if (r.namespaceURI !== ns || r.localName !== local)
      return { ok: false, reason: `the root element is ${r.localName ?? '?'}, not a UBL ${local}` };
    return { ok: true, value: r };
  } catch (e) {
    return { ok: false, reason: `unreadable XML: ${isGatewayError(e) || e instanceof Error ? e.message : String(e)}` };
  }
}

const DATE = /^\d{4}-\d{2}-\d{2}$/;

function header(root: Element, ns: string, what: string): Read<{ id: string; issueDate: string }> {
  const id = textAt(root, 'cbc:ID', ns);
  if (!id) return { ok: false, reason: `the ${what} has no cbc:ID` };
  const issueDate = textAt(root, 'cbc:IssueDate', ns) ?? '';
  if (!DATE.test(issueDate)) return { ok: false, reason: `the ${what}'s IssueDate "${issueDate}" is not YYYY-MM-DD` };
  return { ok: true, value: { id, issueDate } };
}

export function readOrder(bytes: Buffer): Read<ReceivedOrder> {
  const ns = NS.ublOrder;
  const root = rootOf(bytes, ns, 'Order');
  if (!root.ok) return root;
  const h = header(root.value, ns, 'order');
  if (!h.ok) return h;
  return {
    ok: true,
    value: {
      ...h.value,
      buyer: endpointAt(root.value, 'cac:BuyerCustomerParty/cac:Party/cbc:EndpointID', ns),
      seller: endpointAt(root.value, 'cac:SellerSupplierParty/cac:Party/cbc:EndpointID', ns),
    },
  };
}

export function readOrderResponse(bytes: Buffer): Read<ReceivedOrderResponse> {
  const ns = NS.ublOrderResponse;
  const root = rootOf(bytes, ns, 'OrderResponse');
  if (!root.ok) return root;
  const h = header(root.value, ns, 'order response');
  if (!h.ok) return h;
  const responseCode = textAt(root.value, 'cbc:OrderResponseCode', ns) ?? '';
  if (!(responseCode in ORDER_RESPONSE_CODES))
    return { ok: false, reason: `OrderResponseCode "${responseCode}" is not an order response code` };
  const orderId = textAt(root.value, 'cac:OrderReference/cbc:ID', ns);
  if (!orderId) return { ok: false, reason: 'the order response names no order (cac:OrderReference/cbc:ID)' };
  const note = textAt(root.value, 'cbc:Note', ns);
  return {
    ok: true,
    value: {
      ...h.value,
      responseCode,
      orderId,
      buyer: endpointAt(root.value, 'cac:BuyerCustomerParty/cac:Party/cbc:EndpointID', ns),
      seller: endpointAt(root.value, 'cac:SellerSupplierParty/cac:Party/cbc:EndpointID', ns),
      ...(note !== undefined ? { note } : {}),
    },
  };
}
