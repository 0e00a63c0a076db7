/**
 * Peppol AS4 messages for receiver and sender tests: well-formed ones from buildPeppolMessage, and hand-assembled or
 * rewritten ones for the attacks and mistakes buildPeppolMessage never produces.
 */
import { gzipSync } from 'node:zlib';
import { encryptAttachments } from '../../src/peppol/as4/encryption';
import {
  buildPeppolMessage,
  type BuildPeppolMessageInput,
  type OutgoingPeppolMessage,
} from '../../src/peppol/as4/message';
import { buildMultipart, parseMultipart, splitSoapAndAttachments } from '../../src/peppol/as4/mime';
import { signEnvelope } from '../../src/peppol/as4/signature';
import { buildUserMessageEnvelope, peppolUserMessage } from '../../src/peppol/as4/user-message';
import {
  DOCTYPE_SCHEME_BUSDOX,
  PROCESS_SCHEME,
  documentTypeId,
  peppolParticipant,
  processId,
} from '../../src/peppol/identifiers';
import type { KeyMaterial } from '../../src/peppol/pki/key-material';
import type { TestPki } from './peppol/test-pki';
import { buildSbd } from '../../src/peppol/sbdh';
import { SAMPLE_UBL_INVOICE, corpusFile } from './corpus';

export const INVOICE = documentTypeId(
  DOCTYPE_SCHEME_BUSDOX,
  'urn:oasis:names:specification:ubl:schema:xsd:Invoice-2::Invoice##urn:cen.eu:en16931:2017#compliant#urn:fdc:peppol.eu:2017:poacc:billing:3.0::2.1',
);
export const BILLING = processId(PROCESS_SCHEME, 'urn:fdc:peppol.eu:2017:poacc:billing:01:1.0');
export const SENDER = peppolParticipant('0088:7315458756324');
/** Served by the receiving gateway in the tests (a party with this id exists). */
export const RECEIVER = peppolParticipant('0088:4562458856624');
export const HEADER = { sender: SENDER, receiver: RECEIVER, documentType: INVOICE, process: BILLING };

export function sbd(over: Partial<Parameters<typeof buildSbd>[0]> = {}): Buffer {
  return buildSbd({ ...HEADER, countryC1: 'NL', payload: { xml: corpusFile(SAMPLE_UBL_INVOICE) }, ...over }).xml;
}

export function message(pki: TestPki, over: Partial<BuildPeppolMessageInput> = {}): OutgoingPeppolMessage {
  return buildPeppolMessage({
    sbd: sbd(),
    header: HEADER,
    signer: pki.apSender,
    receiverCertificate: pki.apReceiver.certificate,
    ...over,
  });
}

/** A message assembled by hand around arbitrary (already compressed) payload bytes. */
export function manualMessage(
  pki: TestPki,
  opts: { data: Buffer; signer?: KeyMaterial; fromSeatId?: string },
): { contentType: string; body: Buffer } {
  const um = peppolUserMessage({
    fromSeatId: opts.fromSeatId ?? 'POP000001',
    toSeatId: 'POP000002',
    ...HEADER,
    contentId: 'p@x',
  });
  const payload = { contentId: 'p@x', mimeType: 'application/gzip', data: opts.data };
  const enc = encryptAttachments([payload], pki.apReceiver.certificate);
  const signed = signEnvelope(buildUserMessageEnvelope(um), opts.signer ?? pki.apSender, [payload], {
    securityPrefixXml: enc.securityXml,
  });
  return buildMultipart(
    [
      { contentType: 'application/soap+xml', body: Buffer.from(signed.xml) },
      { contentType: 'application/octet-stream', contentId: 'p@x', body: enc.attachments[0]?.data as Buffer },
    ],
    'manual-boundary',
  );
}

export const gzipped = (b: Buffer): Buffer => gzipSync(b);

/** The message with its SOAP text and/or attachment bytes changed after signing. */
export function rewrap(
  msg: { contentType: string; body: Buffer },
  edit: { soap?: (xml: string) => string; attachment?: (b: Buffer) => Buffer },
): Buffer {
  const { soap, attachments } = splitSoapAndAttachments(parseMultipart(msg.body, msg.contentType));
  const boundary = /boundary="?([^";]+)"?/.exec(msg.contentType)?.[1] as string;
  return buildMultipart(
    [
      {
        contentType: soap.contentType,
        body: Buffer.from((edit.soap ?? ((x) => x))(soap.body.toString('utf8')), 'utf8'),
      },
      ...attachments.map((a) => ({
        contentType: a.contentType,
        contentId: a.contentId as string,
        body: (edit.attachment ?? ((b) => b))(a.body),
      })),
    ],
    boundary,
  ).body;
}

export const flipByte = (b: Buffer, at = 40): Buffer =>
  Buffer.concat([b.subarray(0, at), Buffer.from([(b[at] as number) ^ 1]), b.subarray(at + 1)]);

/** Moves the signed eb:Messaging into a wrapper header and puts a forged, unsigned copy where a receiver reads. */
export function wrapSignature(xml: string): string {
  const start = xml.indexOf('<eb:Messaging');
  const end = xml.indexOf('</eb:Messaging>') + '</eb:Messaging>'.length;
  const signed = xml.slice(start, end);
  const forged = signed.replace(/wsu:Id="[^"]+"/, 'wsu:Id="forged"').replace('>0088:4562458856624<', '>0088:666<');
  return xml.slice(0, start) + `<x:Wrapper xmlns:x="urn:attack">${signed}</x:Wrapper>${forged}` + xml.slice(end);
}
