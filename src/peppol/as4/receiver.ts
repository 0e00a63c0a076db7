/**
 * The receiving access point's processing of one AS4 request, after the HTTP edge has read the body within its cap:
 *
 *   open (MIME → SOAP by namespace → decrypt → verify signature over the processed elements → signer chains to the AP
 *   CA and is valid → capped gunzip → SBDH and its consistency with the ebMS header)
 *   → the signer is not revoked (OCSP or CRL, when a RevocationChecker is configured; EBMS:0101 otherwise)
 *   → addressed to us (To PartyId = our Seat ID) and to a party we serve (else EBMS:0004 PEPPOL:NOT_SERVICED), or an
 *     MLS addressed to our own service provider id (`0242:` + our Seat ID's digits), which belongs to the party whose
 *     message it answers (found by the SBDH InstanceIdentifier it references; none of ours: EBMS:0004)
 *   → store the SBD and the record (one insert is the commit point; its unique keys catch duplicates) → the signed
 *     receipt; a duplicate (same MessageId: the stored receipt again; same sender + SBDH InstanceIdentifier with the
 *     same bytes: a receipt for this message) keeps nothing of the new copy.
 *
 * Every refusal is a signed ebMS error and leaves nothing stored.
 */
import { createHash, type X509Certificate } from 'node:crypto';
import { parseXml } from '../../formats/xml/secure-parser';
import { formatId, participantIdEquals, spidOfSeatId, type ParticipantId } from '../identifiers';
import { isMlsDocumentType } from '../mls/policy';
import { readRawMls } from '../mls/read';
import { parseSbd } from '../sbdh';
import { fingerprintSha256 } from '../pki/certificates';
import type { ApKeyRing } from '../pki/key-ring';
import type { RevocationChecker } from '../pki/revocation';
import type { As4InboundRecord } from '../../storage/as4/as4-inbound.repository';
import { NS } from './constants';
import { EbmsError } from './ebms-error';
import { openPeppolMessage, type ReceivedPeppolMessage } from './message';
import { parseMultipart, splitSoapAndAttachments } from './mime';
import { buildErrorSignal, buildReceipt } from './signals';
import type { SignatureReference } from './signature';

export const SOAP_CONTENT_TYPE = 'application/soap+xml;charset=UTF-8';

/** What the receiver stores per message; the storage layer owns the shape (src/storage/as4). */
export type InboundAs4Record = As4InboundRecord;

export interface StoredInbound extends InboundAs4Record {
  blobId: string;
  /** `stored` until the receive workflow records what it found. */
  state?: string;
}

/** Durable storage of received messages (implemented in src/storage). */
export interface InboundAs4Store {
  findByMessageId(messageId: string): Promise<StoredInbound | null>;
  findByInstanceKey(instanceKey: string): Promise<StoredInbound | null>;
  /**
   * Stores the SBD bytes and the record. When another request stored the same MessageId or instance key first, keeps
   * nothing of this one and returns that record.
   */
  store(record: InboundAs4Record, sbd: Buffer): Promise<{ stored: StoredInbound } | { existing: StoredInbound }>;
}

export interface ServedParty {
  tenantId: string;
  partyId: string;
}

export interface As4ReceiverOptions {
  keys: ApKeyRing;
  apCertificateAuthorities: readonly X509Certificate[];
  store: InboundAs4Store;
  /** The party of ours a participant identifier names, or null when we do not serve it. */
  findParty: (participant: ParticipantId) => Promise<ServedParty | null>;
  /**
   * The party (and tenant) of the message we sent under an SBDH InstanceIdentifier, or null: an MLS addressed to our
   * own service provider id belongs to it. Without it, MLS to our SPID is refused like any receiver we do not serve.
   */
  findMlsOwner?: (referencedInstanceId: string) => Promise<ServedParty | null>;
  maxDecompressedBytes: number;
  /**
   * Checks the sender's certificate for revocation; without it revocation is not checked (`revocationChecked: false`).
   */
  revocation?: RevocationChecker;
  /** Told when a certificate was accepted although its revocation status is unknown (soft fail); the edge logs it. */
  onRevocationUnknown?: (message: string) => void;
  /** How long a duplicate is answered with the stored receipt; later the reused id is refused. */
  duplicateWindowMs: number;
  /**
   * Starts the processing of a stored message (the receive workflow); must be idempotent. Called after the commit and
   * again for a resend while the message is still only `stored`, so a failed start is retried by the sender's resend.
   * A failure does not withhold the receipt: the message is durable.
   */
  onStored?: (stored: StoredInbound) => Promise<void>;
  /** Told about a failed onStored (the edge logs it). */
  onStoredFailed?: (stored: StoredInbound, error: unknown) => void;
  /**
   * Told of each committed message (not of duplicates) with what the Peppol network reports need of it; it keeps its
   * own failures (the message is durable, its receipt is not withheld).
   */
  onCommitted?: (m: CommittedExchange) => Promise<void>;
  now?: () => Date;
}

/** A committed message as the network reports see it: the SBDH, the verified signer, the party it is for. */
export interface CommittedExchange {
  messageId: string;
  exchangedAt: Date;
  header: ReceivedPeppolMessage['parsedSbd']['header'];
  signerCertificate: X509Certificate;
  party: ServedParty;
}

export interface As4Answer {
  status: number;
  contentType: string;
  body: string;
  outcome: 'stored' | 'duplicate' | 'refused';
  messageId?: string;
  ebmsCode?: string;
  description?: string;
  stored?: StoredInbound;
  /** Why the message could not be stored (logged by the edge; not sent). */
  internalError?: unknown;
  /** Whether the sender's certificate was checked for revocation (set once the message was opened). */
  revocationChecked?: boolean;
}

/** The MessageId of a request that is being refused, if it can be read at all (for refToMessageId; never trusted). */
export function peekMessageId(contentType: string, body: Buffer): string | undefined {
  try {
    const { soap } = splitSoapAndAttachments(parseMultipart(body, contentType));
    const doc = parseXml(soap.body);
    const ids = doc.getElementsByTagNameNS(NS.eb, 'MessageId');
    const id = (ids[0]?.textContent ?? '').trim();
    return id && id.length <= 512 ? id : undefined;
  } catch {
    return undefined;
  }
}

function referencesDigest(refs: readonly SignatureReference[]): string {
  const h = createHash('sha256');
  for (const r of refs) h.update(JSON.stringify([r.uri, r.transforms, r.digestMethod, r.digestValue]));
  return h.digest('hex');
}

export class As4Receiver {
  private readonly now: () => Date;

  constructor(private readonly options: As4ReceiverOptions) {
    this.now = options.now ?? (() => new Date());
  }

  /** A signed ebMS error answer (HTTP 200 as phase4 answers, unless the edge asks for another status). */
  refuse(error: EbmsError, refToMessageId: string | undefined, status = 200): As4Answer {
    const now = this.now();
    return {
      status,
      contentType: SOAP_CONTENT_TYPE,
      body: buildErrorSignal(refToMessageId, error, this.options.keys.signing(now), now),
      outcome: 'refused',
      ebmsCode: error.ebmsCode,
      description: error.message,
      ...(refToMessageId ? { messageId: refToMessageId } : {}),
    };
  }

  async receive(contentType: string, body: Buffer): Promise<As4Answer> {
    const now = this.now();
    let msg: ReceivedPeppolMessage;
    try {
      msg = openPeppolMessage(contentType, body, {
        keyFor: (c) => this.options.keys.forCertificate(c)?.privateKey,
        apCertificateAuthorities: this.options.apCertificateAuthorities,
        maxDecompressedBytes: this.options.maxDecompressedBytes,
        now,
      });
    } catch (e) {
      if (e instanceof EbmsError) return this.refuse(e, peekMessageId(contentType, body));
      throw e;
    }
    const messageId = msg.userMessage.messageId;
    const revocation = this.options.revocation;
    if (revocation) {
      const verdict = await revocation.checkChain(msg.signerChain, now);
      if (!verdict.accepted)
        return this.refuse(
          new EbmsError(
            'EBMS:0101',
            `sending access point certificate: ${verdict.message ?? 'revocation status not accepted'}`,
          ),
          messageId,
        );
      if (verdict.message) this.options.onRevocationUnknown?.(verdict.message);
    }
    try {
      return { ...(await this.accept(msg, now)), revocationChecked: !!revocation };
    } catch (e) {
      if (e instanceof EbmsError) return this.refuse(e, messageId);
      // Storage or other infrastructure trouble: nothing was kept; the sender should try again. The cause is for our
      // log only, never for the peer.
      return {
        ...this.refuse(new EbmsError('EBMS:0202', 'the message could not be stored, try again later'), messageId, 503),
        internalError: e,
      };
    }
  }

  /**
   * For a message addressed to our own service provider id: the party of the message it answers, when it is an MLS
   * that references one of ours. Anything else sent to our SPID is refused with the reason; null for other receivers.
   */
  private async mlsToOurSpid(msg: ReceivedPeppolMessage): Promise<ServedParty | null> {
    const header = msg.parsedSbd.header;
    let spid: ParticipantId;
    try {
      spid = spidOfSeatId(this.options.keys.seatId);
    } catch {
      return null;
    }
    if (!participantIdEquals(spid, header.receiver)) return null;
    const to = formatId(header.receiver);
    const notServiced = (why: string) =>
      new EbmsError('EBMS:0004', `${to} is this access point's service provider id: ${why}`, {
        errorDetail: 'PEPPOL:NOT_SERVICED',
      });
    if (!isMlsDocumentType(header.documentType))
      throw notServiced(`it receives message-level status only, not ${formatId(header.documentType)}`);
    // The edge reads only the header of other messages; an MLS to our SPID (small, and rare) is read whole.
    let referenced: string | undefined;
    try {
      const { payload } = parseSbd(msg.sbd);
      referenced =
        payload.kind === 'xml' && payload.element.localName === 'ApplicationResponse'
          ? readRawMls(payload.element).documentResponses[0]?.references[0]?.ids[0]?.trim()
          : undefined;
    } catch (e) {
      throw notServiced(`the MLS cannot be read: ${(e as Error).message}`.slice(0, 500));
    }
    if (!referenced)
      throw notServiced('the MLS names no message it answers (cac:DocumentResponse/cac:DocumentReference/cbc:ID)');
    const owner = this.options.findMlsOwner ? await this.options.findMlsOwner(referenced) : null;
    if (!owner)
      throw notServiced(`the MLS answers ${referenced.slice(0, 200)}, which is no message this access point sent`);
    return owner;
  }

  private async accept(msg: ReceivedPeppolMessage, now: Date): Promise<As4Answer> {
    const um = msg.userMessage;
    const header = msg.parsedSbd.header;
    if (um.to.partyId !== this.options.keys.seatId) {
      throw new EbmsError(
        'EBMS:0004',
        `the message is addressed to ${um.to.partyId}, this access point is ${this.options.keys.seatId}`,
      );
    }
    const party = (await this.mlsToOurSpid(msg)) ?? (await this.options.findParty(header.receiver));
    if (!party)
      throw new EbmsError('EBMS:0004', `the receiver ${formatId(header.receiver)} is not served by this access point`, {
        errorDetail: 'PEPPOL:NOT_SERVICED',
      });

    const sha256 = createHash('sha256').update(msg.sbd).digest('hex');
    const instanceKey = `${formatId(header.sender).toLowerCase()}|${header.instanceIdentifier}`;

    // No lookups first: the insert's unique keys (MessageId, instance key) find a duplicate, and the rare duplicate
    // pays for one blob write it removes again. A receive is then one blob insert and one record insert.
    const receiptXml = buildReceipt(um.messageId, msg.references, this.options.keys.signing(now), now);
    const record: InboundAs4Record = {
      messageId: um.messageId,
      instanceKey,
      instanceId: header.instanceIdentifier,
      tenantId: party.tenantId,
      partyId: party.partyId,
      sender: formatId(header.sender),
      receiver: formatId(header.receiver),
      documentType: formatId(header.documentType),
      process: formatId(header.process),
      countryC1: header.countryC1,
      fromSeatId: um.from.partyId,
      toSeatId: um.to.partyId,
      signerSha256: fingerprintSha256(msg.signerCertificate),
      size: msg.sbd.length,
      sha256,
      referencesSha256: referencesDigest(msg.references),
      receiptXml,
      receivedAt: now,
    };
    const result = await this.options.store.store(record, msg.sbd);
    if ('existing' in result) {
      // A copy of this message was stored before (a resend) or at the same moment: answer as for any duplicate.
      const answer = await this.duplicateAnswer(msg, instanceKey, sha256, now);
      if (answer) return answer;
      throw new EbmsError('EBMS:0004', 'the message conflicts with one stored at the same moment');
    }
    await this.options.onCommitted?.({
      messageId: um.messageId,
      exchangedAt: now,
      header,
      signerCertificate: msg.signerCertificate,
      party,
    });
    await this.started(result.stored);
    return {
      status: 200,
      contentType: SOAP_CONTENT_TYPE,
      body: receiptXml,
      outcome: 'stored',
      messageId: um.messageId,
      stored: result.stored,
    };
  }

  private async started(stored: StoredInbound): Promise<void> {
    if (!this.options.onStored) return;
    try {
      await this.options.onStored(stored);
    } catch (e) {
      this.options.onStoredFailed?.(stored, e);
    }
  }

  private async duplicateAnswer(
    msg: ReceivedPeppolMessage,
    instanceKey: string,
    sha256: string,
    now: Date,
  ): Promise<As4Answer | undefined> {
    const um = msg.userMessage;
    const window = this.options.duplicateWindowMs;
    const byId = await this.options.store.findByMessageId(um.messageId);
    if (byId) {
      if (now.getTime() - byId.receivedAt.getTime() > window) {
        throw new EbmsError(
          'EBMS:0004',
          `MessageId ${um.messageId} was already used on ${byId.receivedAt.toISOString()}; message ids must be unique`,
        );
      }
      if (byId.sha256 !== sha256 || byId.instanceKey !== instanceKey) {
        throw new EbmsError('EBMS:0004', `MessageId ${um.messageId} was already received with another document`);
      }
      // A conforming resend signs to the same digests and gets the stored receipt; a sender that rebuilt the message
      // (new ids, same document) gets a receipt for what it signed this time.
      if ((byId.state ?? 'stored') === 'stored') await this.started(byId);
      const body =
        byId.referencesSha256 === referencesDigest(msg.references)
          ? byId.receiptXml
          : buildReceipt(um.messageId, msg.references, this.options.keys.signing(now), now);
      return {
        status: 200,
        contentType: SOAP_CONTENT_TYPE,
        body,
        outcome: 'duplicate',
        messageId: um.messageId,
        stored: byId,
      };
    }
    const byInstance = await this.options.store.findByInstanceKey(instanceKey);
    if (byInstance) {
      if (byInstance.sha256 !== sha256 || now.getTime() - byInstance.receivedAt.getTime() > window) {
        throw new EbmsError(
          'EBMS:0004',
          `the SBDH InstanceIdentifier ${msg.parsedSbd.header.instanceIdentifier} of this sender was already ` +
            `received on ${byInstance.receivedAt.toISOString()}`,
        );
      }
      // The same document in a new AS4 message: confirm this message, keep the first copy only.
      const receiptXml = buildReceipt(um.messageId, msg.references, this.options.keys.signing(now), now);
      return {
        status: 200,
        contentType: SOAP_CONTENT_TYPE,
        body: receiptXml,
        outcome: 'duplicate',
        messageId: um.messageId,
        stored: byInstance,
      };
    }
    return undefined;
  }
}
