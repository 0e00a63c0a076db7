/**
 * A complete Peppol AS4 user message on the wire, in both directions, without the HTTP transport:
 *
 *   building:  SBD → gzip → sign (Messaging, Body, attachment) → encrypt the attachment for the receiving AP
 *              → multipart/related with the SOAP envelope first
 *   opening:   MIME → SOAP → ebMS header → decrypt → verify the signature → check the signing certificate against
 *              the AP CA → gunzip (capped) → SBDH → consistency of AS4 headers and SBDH
 *
 * Every refusal is an EbmsError carrying the code the receiver answers with.
 */
import { randomUUID, type KeyObject, type X509Certificate } from 'node:crypto';
import { gunzipSync, gzipSync } from 'node:zlib';
import { isGatewayError } from '../../core/gateway-error';
import { parseXml } from '../../formats/xml/secure-parser';
import { isPeppolError } from '../peppol-error';
import { AP_KEY_USAGES, checkCertificate } from '../pki/cert-validation';
import { commonNameOf } from '../pki/certificates';
import type { KeyMaterial } from '../pki/key-material';
import { readSbdHeader, type SbdhHeader } from '../sbdh';
import { PEPPOL_AS4 } from './constants';
import { EbmsError } from './ebms-error';
import { decryptAttachments, encryptAttachments } from './encryption';
import { buildMultipart, parseMultipart, splitSoapAndAttachments } from './mime';
import { envelopeParts, signEnvelope, verifyEnvelopeSignature, type SignatureReference } from './signature';
import {
  buildUserMessageEnvelope,
  checkAgainstSbdh,
  checkPeppolUserMessage,
  peppolUserMessage,
  readUserMessage,
  type EnvelopeIds,
  type UserMessage,
} from './user-message';

export interface BuildPeppolMessageInput {
  /** The Standard Business Document (SBDH + business document) as built by buildSbd. */
  sbd: Buffer;
  header: Pick<SbdhHeader, 'sender' | 'receiver' | 'documentType' | 'process'>;
  /** Our AP key and certificate (the key ring's signing entry). */
  signer: KeyMaterial;
  /** The receiving AP's certificate from the SMP: encryption certificate, its CN the To PartyId. */
  receiverCertificate: X509Certificate;
  messageId?: string;
  conversationId?: string;
  timestamp?: Date;
  /** Content-ID of the payload and wsu:Ids of eb:Messaging and Body; fixed (with messageId and timestamp) they make a
   * rebuilt message sign to the same digests, so a resend is bit-identical where AS4 requires it (see message-ids.ts).
   */
  contentId?: string;
  envelopeIds?: EnvelopeIds;
}

export interface OutgoingPeppolMessage {
  contentType: string;
  body: Buffer;
  messageId: string;
  userMessage: UserMessage;
  /** What we signed; the receipt must return these (non-repudiation of receipt). */
  references: SignatureReference[];
}

function seatIdOf(cert: X509Certificate, whose: string): string {
  const cn = commonNameOf(cert);
  if (!cn) throw new Error(`the ${whose} certificate has no CN (Seat ID)`);
  return cn;
}

export function buildPeppolMessage(input: BuildPeppolMessageInput): OutgoingPeppolMessage {
  const contentId = input.contentId ?? `att-${randomUUID()}@invoice-gateway`;
  const compressed = gzipSync(input.sbd);
  const userMessage = peppolUserMessage({
    fromSeatId: seatIdOf(input.signer.certificate, 'sending'),
    toSeatId: seatIdOf(input.receiverCertificate, 'receiving'),
    sender: input.header.sender,
    receiver: input.header.receiver,
    documentType: input.header.documentType,
    process: input.header.process,
    contentId,
    ...(input.messageId ? { messageId: input.messageId } : {}),
    ...(input.conversationId ? { conversationId: input.conversationId } : {}),
    ...(input.timestamp ? { timestamp: input.timestamp } : {}),
  });
  const payload = { contentId, mimeType: PEPPOL_AS4.compressionGzip, data: compressed };
  // Sign first (the digest covers the compressed plaintext), then encrypt (CEF AS4 1.14 §1.4.2.6).
  const encrypted = encryptAttachments([payload], input.receiverCertificate);
  const signed = signEnvelope(buildUserMessageEnvelope(userMessage, input.envelopeIds), input.signer, [payload], {
    securityPrefixXml: encrypted.securityXml,
  });
  const mime = buildMultipart(
    [
      { contentType: 'application/soap+xml;charset=UTF-8', body: Buffer.from(signed.xml, 'utf8') },
      ...encrypted.attachments.map((a) => ({
        contentType: 'application/octet-stream',
        contentId: a.contentId,
        body: a.data,
      })),
    ],
    `----=_Part_${randomUUID()}`,
  );
  return {
    contentType: mime.contentType,
    body: mime.body,
    messageId: userMessage.messageId,
    userMessage,
    references: signed.references,
  };
}

export interface OpenPeppolMessageOptions {
  /** Our private key for the certificate a sender encrypted to (ApKeyRing.forCertificate). */
  keyFor: (certificate: X509Certificate) => KeyObject | undefined;
  /** The Peppol AP CA certificate(s) the sender's signing certificate must chain to. */
  apCertificateAuthorities: readonly X509Certificate[];
  now?: Date;
  /** Cap on the decompressed SBD (gzip bombs). Default 100 MiB. */
  maxDecompressedBytes?: number;
}

export interface ReceivedPeppolMessage {
  userMessage: UserMessage;
  /**
   * The sender's AP certificate (checked against the AP CA and its validity period; revocation is the caller's step).
   */
  signerCertificate: X509Certificate;
  /** The validated path: the signer certificate first, the trusted AP CA last (what revocation is checked along). */
  signerChain: X509Certificate[];
  /** Our certificate the message was encrypted for. */
  recipientCertificate: X509Certificate;
  /** The signed references, to be returned in the receipt. */
  references: SignatureReference[];
  sbd: Buffer;
  /** The SBDH, checked; the business message is checked for well-formedness only (the receive workflow reads it). */
  parsedSbd: { header: SbdhHeader };
}

/** Opens a received Peppol AS4 user message. Throws EbmsError; nothing is trusted before the signature checks out. */
export function openPeppolMessage(
  contentType: string,
  body: Buffer,
  options: OpenPeppolMessageOptions,
): ReceivedPeppolMessage {
  const now = options.now ?? new Date();
  const { soap, attachments } = splitSoapAndAttachments(parseMultipart(body, contentType));
  let doc;
  try {
    doc = parseXml(soap.body);
  } catch (e) {
    throw new EbmsError('EBMS:0009', `the SOAP part is not acceptable XML: ${(e as Error).message}`, { cause: e });
  }
  const parts = envelopeParts(doc);
  const userMessage = readUserMessage(parts.messaging);
  const payload = checkPeppolUserMessage(userMessage);
  if (!attachments.some((a) => a.contentId === payload.contentId))
    throw new EbmsError('EBMS:0011', `the payload cid:${payload.contentId} is not among the MIME parts`);
  if (attachments.length !== 1)
    throw new EbmsError('EBMS:0011', `the message has ${attachments.length} attachments for one PartInfo`);

  const decrypted = decryptAttachments(
    doc,
    attachments.map((a) => ({ contentId: a.contentId ?? '', data: a.body })),
    options.keyFor,
  );
  const signature = verifyEnvelopeSignature(doc, decrypted);
  // The header the message is read from must be the signed one (verify checks it is THE eb:Messaging of the envelope).
  if (signature.messaging !== parts.messaging)
    throw new EbmsError('EBMS:0101', 'the signed eb:Messaging is not the one processed');

  const cert = checkCertificate(
    signature.certificate,
    { anchors: options.apCertificateAuthorities, requiredKeyUsages: AP_KEY_USAGES, role: 'sending access point' },
    now,
  );
  if (!cert.valid) throw new EbmsError('EBMS:0101', cert.message);
  const signerSeat = commonNameOf(signature.certificate);
  if (signerSeat !== userMessage.from.partyId) {
    throw new EbmsError(
      'EBMS:0004',
      `the From PartyId ${userMessage.from.partyId} is not the Seat ID of the signing certificate ` +
        `(${signerSeat ?? 'no CN'})`,
    );
  }

  const plain = decrypted[0];
  if (!plain) throw new EbmsError('EBMS:0011', 'no payload');
  let sbd: Buffer;
  if (payload.compressed) {
    const limit = options.maxDecompressedBytes ?? 100 * 1024 * 1024;
    try {
      sbd = gunzipSync(plain.data, { maxOutputLength: limit });
    } catch (e) {
      const tooBig =
        (e as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE' ||
        /maxOutputLength|Cannot create a Buffer larger/i.test((e as Error).message);
      throw new EbmsError(
        'EBMS:0303',
        tooBig
          ? `the payload decompresses to more than ${limit} bytes`
          : `the payload cannot be decompressed: ${(e as Error).message}`,
        { cause: e },
      );
    }
  } else sbd = plain.data;

  let parsedSbd: { header: SbdhHeader };
  try {
    parsedSbd = readSbdHeader(sbd);
  } catch (e) {
    if (isPeppolError(e) || isGatewayError(e))
      throw new EbmsError('EBMS:0004', `Peppol SBDH Issue: ${e.message}`, { cause: e });
    throw e;
  }
  checkAgainstSbdh(userMessage, parsedSbd.header);
  return {
    userMessage,
    signerCertificate: signature.certificate,
    signerChain: cert.chain,
    recipientCertificate: plain.recipientCertificate,
    references: signature.references,
    sbd,
    parsedSbd,
  };
}
