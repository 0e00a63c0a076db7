/**
 * The ebMS 3 UserMessage of a Peppol AS4 exchange: the model, building the SOAP 1.2 envelope (eb:Messaging with
 * mustUnderstand and a wsu:Id, an empty Body with a wsu:Id, ready to be signed), reading it back by namespace, and the
 * Peppol AS4 profile rules (P-Mode values as phase4's PeppolCompatibilityValidator checks them).
 */
import { randomUUID } from 'node:crypto';
import type { Element, Node } from '@xmldom/xmldom';
import { childElementsNamed, escapeXml as esc } from '../../formats/xml/helpers';
import {
  DOCTYPE_SCHEME_BUSDOX,
  PARTICIPANT_SCHEME,
  formatId,
  type DocumentTypeId,
  type ParticipantId,
  type ProcessId,
} from '../identifiers';
import { PEPPOL_AS4, NS } from './constants';
import { EbmsError } from './ebms-error';

export interface EbmsParty {
  partyId: string;
  partyIdType: string | undefined;
  role: string;
}

export interface EbmsProperty {
  name: string;
  type?: string;
  value: string;
}

export interface EbmsPartInfo {
  /** `cid:<Content-ID>` for an attachment. */
  href: string;
  properties: EbmsProperty[];
}

export interface UserMessage {
  messageId: string;
  /** xsd:dateTime as written. */
  timestamp: string;
  refToMessageId?: string;
  mpc?: string;
  from: EbmsParty;
  to: EbmsParty;
  agreementRef: { value: string; type?: string; pmode?: string };
  service: { value: string; type?: string };
  action: string;
  conversationId: string;
  messageProperties: EbmsProperty[];
  payloads: EbmsPartInfo[];
}

const attr = (name: string, value: string | undefined): string =>
  value === undefined ? '' : ` ${name}="${esc(value)}"`;

function propertyXml(p: EbmsProperty): string {
  return `<eb:Property name="${esc(p.name)}"${attr('type', p.type)}>${esc(p.value)}</eb:Property>`;
}

function partInfoXml(p: EbmsPartInfo): string {
  return (
    `<eb:PartInfo href="${esc(p.href)}"><eb:PartProperties>${p.properties.map(propertyXml).join('')}` +
    `</eb:PartProperties></eb:PartInfo>`
  );
}

function partyXml(tag: 'From' | 'To', p: EbmsParty): string {
  return (
    `<eb:${tag}><eb:PartyId${attr('type', p.partyIdType)}>${esc(p.partyId)}</eb:PartyId><eb:Role>${esc(p.role)}` +
    `</eb:Role></eb:${tag}>`
  );
}

export interface EnvelopeIds {
  messagingId: string;
  bodyId: string;
}

/** The SOAP 1.2 envelope of a user message (no Security header yet; see signature.ts). */
export function buildUserMessageEnvelope(
  um: UserMessage,
  ids: EnvelopeIds = { messagingId: `msg-${randomUUID()}`, bodyId: `id-${randomUUID()}` },
): string {
  const info =
    `<eb:MessageInfo><eb:Timestamp>${esc(um.timestamp)}</eb:Timestamp><eb:MessageId>${esc(um.messageId)}` +
    `</eb:MessageId>` +
    `${um.refToMessageId ? `<eb:RefToMessageId>${esc(um.refToMessageId)}</eb:RefToMessageId>` : ''}</eb:MessageInfo>`;
  const collaboration =
    `<eb:CollaborationInfo><eb:AgreementRef${attr('type', um.agreementRef.type)}` +
    `${attr('pmode', um.agreementRef.pmode)}>${esc(um.agreementRef.value)}</eb:AgreementRef>` +
    `<eb:Service${attr('type', um.service.type)}>${esc(um.service.value)}</eb:Service><eb:Action>${esc(um.action)}` +
    `</eb:Action>` +
    `<eb:ConversationId>${esc(um.conversationId)}</eb:ConversationId></eb:CollaborationInfo>`;
  const props = um.messageProperties.length
    ? `<eb:MessageProperties>${um.messageProperties.map(propertyXml).join('')}</eb:MessageProperties>`
    : '';
  const payloads = um.payloads.length
    ? `<eb:PayloadInfo>${um.payloads.map(partInfoXml).join('')}</eb:PayloadInfo>`
    : '';
  return (
    `<?xml version="1.0" encoding="UTF-8"?><S12:Envelope xmlns:S12="${NS.soap12}"><S12:Header>` +
    `<eb:Messaging xmlns:eb="${NS.eb}" xmlns:wsu="${NS.wsu}" S12:mustUnderstand="true" ` +
    `wsu:Id="${esc(ids.messagingId)}">` +
    `<eb:UserMessage${attr('mpc', um.mpc)}>${info}<eb:PartyInfo>${partyXml('From', um.from)}${partyXml('To', um.to)}` +
    `</eb:PartyInfo>${collaboration}${props}${payloads}</eb:UserMessage>` +
    `</eb:Messaging></S12:Header><S12:Body xmlns:wsu="${NS.wsu}" wsu:Id="${esc(ids.bodyId)}"/></S12:Envelope>`
  );
}

// ---------------------------------------------------------------------------------------------------------------------
// Reading

const kids = (parent: Node, local: string): Element[] => childElementsNamed(parent, NS.eb, local);

function one(parent: Node, local: string, where: string): Element {
  const found = kids(parent, local);
  if (found.length !== 1)
    throw new EbmsError('EBMS:0009', `${where} must contain exactly one eb:${local}, found ${found.length}`);
  return found[0] as Element;
}

const textOf = (e: Element): string => (e.textContent ?? '').trim();
const optAttr = (e: Element, name: string): string | undefined =>
  e.hasAttribute(name) ? (e.getAttribute(name) ?? '') : undefined;

function readProperties(parent: Element | undefined): EbmsProperty[] {
  return parent
    ? kids(parent, 'Property').map((p) => {
        const type = optAttr(p, 'type');
        return { name: p.getAttribute('name') ?? '', ...(type !== undefined ? { type } : {}), value: textOf(p) };
      })
    : [];
}

function readParty(parent: Element, tag: 'From' | 'To'): EbmsParty {
  const el = one(parent, tag, 'eb:PartyInfo');
  const ids = kids(el, 'PartyId');
  if (ids.length === 0) throw new EbmsError('EBMS:0009', `eb:${tag} has no eb:PartyId`);
  if (ids.length > 1)
    throw new EbmsError(
      'EBMS:0010',
      `eb:${tag} has ${ids.length} eb:PartyId elements; the Peppol profile allows exactly one`,
    );
  const id = ids[0] as Element;
  return { partyId: textOf(id), partyIdType: optAttr(id, 'type'), role: textOf(one(el, 'Role', `eb:${tag}`)) };
}

/** Reads the UserMessage of an eb:Messaging header; EBMS:0009 when the structure is not ebMS 3. */
export function readUserMessage(messaging: Element): UserMessage {
  const ums = kids(messaging, 'UserMessage');
  if (ums.length !== 1)
    throw new EbmsError('EBMS:0009', `eb:Messaging must contain exactly one eb:UserMessage, found ${ums.length}`);
  const um = ums[0] as Element;
  const info = one(um, 'MessageInfo', 'eb:UserMessage');
  const messageId = textOf(one(info, 'MessageId', 'eb:MessageInfo'));
  if (!messageId) throw new EbmsError('EBMS:0009', 'eb:MessageId is empty');
  const ref = kids(info, 'RefToMessageId')[0];
  const partyInfo = one(um, 'PartyInfo', 'eb:UserMessage');
  const collab = one(um, 'CollaborationInfo', 'eb:UserMessage');
  const agreement = kids(collab, 'AgreementRef')[0];
  const service = one(collab, 'Service', 'eb:CollaborationInfo');
  const payloadInfo = kids(um, 'PayloadInfo')[0];
  const mpc = optAttr(um, 'mpc');
  const agreementType = agreement ? optAttr(agreement, 'type') : undefined;
  const agreementPmode = agreement ? optAttr(agreement, 'pmode') : undefined;
  const serviceType = optAttr(service, 'type');
  return {
    messageId,
    timestamp: textOf(one(info, 'Timestamp', 'eb:MessageInfo')),
    ...(ref ? { refToMessageId: textOf(ref) } : {}),
    ...(mpc !== undefined ? { mpc } : {}),
    from: readParty(partyInfo, 'From'),
    to: readParty(partyInfo, 'To'),
    agreementRef: {
      value: agreement ? textOf(agreement) : '',
      ...(agreementType !== undefined ? { type: agreementType } : {}),
      ...(agreementPmode !== undefined ? { pmode: agreementPmode } : {}),
    },
    service: { value: textOf(service), ...(serviceType !== undefined ? { type: serviceType } : {}) },
    action: textOf(one(collab, 'Action', 'eb:CollaborationInfo')),
    conversationId: textOf(one(collab, 'ConversationId', 'eb:CollaborationInfo')),
    messageProperties: readProperties(kids(um, 'MessageProperties')[0]),
    payloads: payloadInfo
      ? kids(payloadInfo, 'PartInfo').map((p) => ({
          href: p.getAttribute('href') ?? '',
          properties: readProperties(kids(p, 'PartProperties')[0]),
        }))
      : [],
  };
}

// ---------------------------------------------------------------------------------------------------------------------
// Peppol profile

const SEAT_ID = /^P[A-Z]{2}[0-9]{6}$/;

export function propertyValue(props: readonly EbmsProperty[], name: string): EbmsProperty | undefined {
  return props.find((p) => p.name === name);
}

/**
 * Checks a received user message against the Peppol AS4 profile and returns its one payload's Content-ID. Throws the
 * ebMS error phase4 would answer with.
 */
export function checkPeppolUserMessage(um: UserMessage): { contentId: string; compressed: boolean; mimeType: string } {
  if (um.agreementRef.value !== PEPPOL_AS4.agreementRef)
    throw new EbmsError('EBMS:0010', `AgreementRef must be ${PEPPOL_AS4.agreementRef}, not "${um.agreementRef.value}"`);
  if (um.agreementRef.type !== undefined || um.agreementRef.pmode !== undefined)
    throw new EbmsError('EBMS:0010', 'AgreementRef must have neither a type nor a pmode attribute');
  for (const [side, party, role] of [
    ['From', um.from, PEPPOL_AS4.initiatorRole],
    ['To', um.to, PEPPOL_AS4.responderRole],
  ] as const) {
    if (party.partyIdType !== PEPPOL_AS4.partyIdType)
      throw new EbmsError('EBMS:0010', `${side} PartyId type must be ${PEPPOL_AS4.partyIdType}`);
    if (!SEAT_ID.test(party.partyId))
      throw new EbmsError('EBMS:0004', `${side} PartyId "${party.partyId}" is not a Peppol Seat ID`);
    if (party.role !== role) throw new EbmsError('EBMS:0010', `${side} Role must be ${role}`);
  }
  if (um.mpc !== undefined && um.mpc !== PEPPOL_AS4.defaultMpc)
    throw new EbmsError('EBMS:0010', `only the default MPC is used in Peppol, not "${um.mpc}"`);
  if (!um.service.type) throw new EbmsError('EBMS:0010', 'eb:Service needs the process identifier scheme as type');
  if (!um.action.includes('::'))
    throw new EbmsError('EBMS:0010', `eb:Action must be <document type scheme>::<value>, not "${um.action}"`);
  if (!um.conversationId) throw new EbmsError('EBMS:0009', 'eb:ConversationId is empty');
  for (const name of [PEPPOL_AS4.originalSender, PEPPOL_AS4.finalRecipient]) {
    const p = propertyValue(um.messageProperties, name);
    if (!p || !p.value || !p.type)
      throw new EbmsError('EBMS:0004', `the message property ${name} with a type is required`);
  }
  if (um.payloads.length !== 1)
    throw new EbmsError('EBMS:0003', `a Peppol message carries exactly one payload, this one ${um.payloads.length}`);
  const part = um.payloads[0] as EbmsPartInfo;
  if (!part.href.startsWith('cid:'))
    throw new EbmsError('EBMS:0011', `the payload must be a MIME attachment (cid:), not "${part.href}"`);
  const compression = propertyValue(part.properties, 'CompressionType');
  if (compression && compression.value !== PEPPOL_AS4.compressionGzip)
    throw new EbmsError('EBMS:0003', `CompressionType "${compression.value}" is not supported (only application/gzip)`);
  const mime = propertyValue(part.properties, 'MimeType');
  if (compression && !mime) throw new EbmsError('EBMS:0003', 'a compressed payload must state its MimeType');
  return {
    contentId: part.href.slice(4).replace(/^attachment=/, ''),
    compressed: !!compression,
    mimeType: mime?.value ?? 'application/xml',
  };
}

export interface PeppolUserMessageInput {
  /** Seat IDs: our certificate's CN and the receiving AP certificate's CN. */
  fromSeatId: string;
  toSeatId: string;
  sender: ParticipantId;
  receiver: ParticipantId;
  documentType: DocumentTypeId;
  process: ProcessId;
  contentId: string;
  /** Stable per document so a retry is recognised as a duplicate; default a new UUID-based id. */
  messageId?: string;
  conversationId?: string;
  timestamp?: Date;
  compressed?: boolean;
}

/** The user message for one SBD, with the P-Mode values of the Peppol AS4 profile. */
export function peppolUserMessage(input: PeppolUserMessageInput): UserMessage {
  const compressed = input.compressed ?? true;
  return {
    messageId: input.messageId ?? `${randomUUID()}@invoice-gateway`,
    timestamp: (input.timestamp ?? new Date()).toISOString(),
    from: { partyId: input.fromSeatId, partyIdType: PEPPOL_AS4.partyIdType, role: PEPPOL_AS4.initiatorRole },
    to: { partyId: input.toSeatId, partyIdType: PEPPOL_AS4.partyIdType, role: PEPPOL_AS4.responderRole },
    agreementRef: { value: PEPPOL_AS4.agreementRef },
    service: { value: input.process.value, type: input.process.scheme },
    action: formatId(input.documentType),
    conversationId: input.conversationId ?? randomUUID(),
    messageProperties: [
      { name: PEPPOL_AS4.originalSender, type: input.sender.scheme, value: input.sender.value },
      { name: PEPPOL_AS4.finalRecipient, type: input.receiver.scheme, value: input.receiver.value },
    ],
    payloads: [
      {
        href: `cid:${input.contentId}`,
        properties: [
          { name: 'MimeType', value: 'application/xml' },
          ...(compressed ? [{ name: 'CompressionType', value: PEPPOL_AS4.compressionGzip }] : []),
        ],
      },
    ],
  };
}

/** Whether the AS4 headers agree with the SBDH (phase4 refuses a mismatch with EBMS:0004). */
export function checkAgainstSbdh(
  um: UserMessage,
  sbdh: { sender: ParticipantId; receiver: ParticipantId; documentType: DocumentTypeId; process: ProcessId },
): void {
  const same = (p: EbmsProperty | undefined, id: ParticipantId): boolean =>
    !!p &&
    p.type === id.scheme &&
    (id.scheme === PARTICIPANT_SCHEME ? p.value.toLowerCase() === id.value.toLowerCase() : p.value === id.value);
  if (!same(propertyValue(um.messageProperties, PEPPOL_AS4.originalSender), sbdh.sender)) {
    throw new EbmsError('EBMS:0004', `originalSender does not match the SBDH sender ${formatId(sbdh.sender)}`);
  }
  if (!same(propertyValue(um.messageProperties, PEPPOL_AS4.finalRecipient), sbdh.receiver)) {
    throw new EbmsError('EBMS:0004', `finalRecipient does not match the SBDH receiver ${formatId(sbdh.receiver)}`);
  }
  if (
    um.action !== formatId(sbdh.documentType) &&
    !(sbdh.documentType.scheme === DOCTYPE_SCHEME_BUSDOX && um.action === sbdh.documentType.value)
  ) {
    throw new EbmsError('EBMS:0004', `eb:Action does not match the SBDH document type ${formatId(sbdh.documentType)}`);
  }
  if (
    um.service.value !== sbdh.process.value ||
    (um.service.type !== undefined && um.service.type !== sbdh.process.scheme)
  ) {
    throw new EbmsError('EBMS:0004', `eb:Service does not match the SBDH process ${formatId(sbdh.process)}`);
  }
}
