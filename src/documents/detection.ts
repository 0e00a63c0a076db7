import type { Document } from '@xmldom/xmldom';
import { isGatewayError } from '../core/gateway-error';
import { truncateMessage } from '../core/truncate';
import {
  DOM_DETECTION_MAX_BYTES,
  detectFormat,
  detectFormatFromDocument,
  extractFromPdf,
  isPdf,
  parseXml,
  peppolDocumentTypeId,
  type DetectedFormat,
} from '../formats';
import type { Identifier } from '../en16931/model';
import { participantIdProblem, PARTICIPANT_SCHEME, peppolParticipant } from '../peppol/identifiers';
import { readInvoiceRoutingFrom } from '../peppol/invoice-routing';
import { modelReader } from '../transform/codecs';
import type { DetectionOutcome, PeppolIdentifier, RoutingFacts } from '../../workflows/contracts/send-invoice';

/** Document problems are results, not failures: the workflow records them; anything else is rethrown and retried. */
const DOCUMENT_PROBLEMS = new Set([
  'UNKNOWN_FORMAT',
  'INVALID_XML',
  'UNSAFE_XML',
  'UNPROCESSABLE',
  'PAYLOAD_TOO_LARGE',
  'BAD_REQUEST',
]);

function problem(e: unknown): { ok: false; code: string; message: string } {
  if (!isGatewayError(e) || !DOCUMENT_PROBLEMS.has(e.code)) throw e;
  // The message may quote the document (an element name, an identifier): bounded before it reaches the record.
  return { ok: false, code: e.code, message: truncateMessage(e.message) };
}

function summary(f: DetectedFormat): DetectionOutcome {
  const documentTypeId = peppolDocumentTypeId(f);
  return {
    ok: true,
    format: {
      id: f.id,
      name: f.name,
      syntax: f.syntax,
      documentType: f.documentType,
      ...(f.customizationId ? { customizationId: f.customizationId } : {}),
      ...(f.profileId ? { profileId: f.profileId } : {}),
      ...(documentTypeId ? { documentTypeId } : {}),
    },
  };
}

/** Format detection of stored bytes as a workflow result (one shape for sent and received documents). */
export function detectionOutcome(bytes: Buffer): DetectionOutcome {
  try {
    return summary(detectFormat(bytes));
  } catch (e) {
    return problem(e);
  }
}

/** What one look at an uploaded document finds: its format, and what later steps need of its content. */
export interface InspectedUpload {
  detection: DetectionOutcome;
  pdf: boolean;
  root?: { namespaceURI: string; localName: string };
  /**
   * Read when the invoice may be sent over Peppol: from the document's UBL or CII elements when its format has a
   * Peppol document type, else from the EN 16931 model its format's reader makes (it goes out converted).
   */
  routing?: RoutingFacts;
}

/** Who uploads the document: the Peppol sender of a format that has no place for the seller's electronic address. */
export interface InspectOptions {
  /** The party the upload is for, `<icd>:<id>` (its path partyId). */
  uploader?: string;
}

/**
 * Detects an upload's format and, for a format with a Peppol document type, reads its routing, on one parse of the
 * XML (the PDF's embedded XML for Factur-X): up to DOM_DETECTION_MAX_BYTES detection reads the same DOM the routing
 * is read from; a larger document is detected by the streaming scanner and parsed once for its routing.
 */
export function inspectUpload(bytes: Buffer, options: InspectOptions = {}): InspectedUpload {
  const pdf = isPdf(bytes);
  let xml: Buffer = bytes;
  let doc: Document | undefined;
  let detection: DetectionOutcome;
  try {
    let format: DetectedFormat;
    if (pdf) {
      const attachment = extractFromPdf(bytes);
      xml = attachment.xml;
      if (xml.length <= DOM_DETECTION_MAX_BYTES) {
        doc = parseXml(xml);
        format = { ...detectFormatFromDocument(doc, { container: 'pdf' }), attachmentFilename: attachment.filename };
      } else format = detectFormat(bytes);
    } else if (bytes.length <= DOM_DETECTION_MAX_BYTES) {
      doc = parseXml(bytes);
      format = detectFormatFromDocument(doc);
    } else format = detectFormat(bytes);
    detection = summary(format);
    if (!detection.ok) return { detection, pdf };
    if (!detection.format.documentTypeId) {
      const routing = pdf ? undefined : modelRoutingOf(doc ?? xml, format, options);
      return { detection, pdf, ...(routing ? { routing } : {}) };
    }
    const root = pdf ? {} : { root: { namespaceURI: format.rootNamespace, localName: format.rootName } };
    return { detection, pdf, ...root, routing: routingOf(doc ?? xml) };
  } catch (e) {
    return { detection: problem(e), pdf };
  }
}

function routingOf(source: Document | Buffer): RoutingFacts {
  let doc: Document;
  try {
    doc = Buffer.isBuffer(source) ? parseXml(source) : source;
  } catch (e) {
    return problem(e);
  }
  const r = readInvoiceRoutingFrom(doc);
  if (!r.ok) return { ok: false, code: r.code, message: r.message };
  return {
    ok: true,
    sender: { scheme: r.sender.scheme, value: r.sender.value },
    receiver: { scheme: r.receiver.scheme, value: r.receiver.value },
    countryC1: r.countryC1,
  };
}

const GLN_ICD = '0088';

/** An electronic address of the model as a Peppol participant (`<icd>:<id>`), or why it is not one. */
function participantOf(
  id: Identifier,
  described: string,
): PeppolIdentifier | { ok: false; code: string; message: string } {
  const scheme = id.schemeId ?? '';
  const value = `${scheme}:${id.value}`;
  const problem = /^\d{4}$/.test(scheme)
    ? participantIdProblem(PARTICIPANT_SCHEME, value)
    : `schemeID "${scheme}" is not a 4-digit ISO 6523 ICD`;
  if (problem) {
    return {
      ok: false,
      code: 'ENDPOINT_INVALID',
      message: truncateMessage(`${described} ${value} is not a valid Peppol participant identifier: ${problem}`),
    };
  }
  const p = peppolParticipant(value);
  return { scheme: p.scheme, value: p.value };
}

/**
 * The routing of an invoice whose format has no Peppol document type (FatturaPA, ebInterface, Svefaktura...), read
 * from the EN 16931 model its catalogue reader makes: the buyer's electronic address (BT-49), else its GLN; the
 * seller's (BT-34), else its GLN, else (a format with no place for it) the uploading party; the seller's country
 * (BT-40). Undefined for a format that has no reader (nothing to convert it with) or is not an invoice.
 */
function modelRoutingOf(source: Document | Buffer, format: DetectedFormat, options: InspectOptions) {
  const reader = modelReader(format);
  if (!reader || (format.documentType !== 'Invoice' && format.documentType !== 'CreditNote')) return undefined;
  let doc: Document;
  try {
    doc = Buffer.isBuffer(source) ? parseXml(source) : source;
  } catch (e) {
    return problem(e);
  }
  let inv;
  try {
    inv = reader(doc, format).invoice;
  } catch (e) {
    const message = truncateMessage(`the ${format.name} invoice cannot be read: ${(e as Error).message}`);
    return { ok: false as const, code: 'UNPROCESSABLE', message };
  }
  const gln = (ids: readonly Identifier[]) => ids.find((i) => i.schemeId === GLN_ICD && i.value !== '');
  const buyerAddress = inv.buyer.electronicAddress ?? gln(inv.buyer.identifier ? [inv.buyer.identifier] : []);
  if (!buyerAddress || buyerAddress.value === '') {
    return {
      ok: false as const,
      code: 'ENDPOINT_MISSING',
      message: `the ${format.name} invoice has no buyer electronic address (BT-49) nor a buyer GLN`,
    };
  }
  const receiver = participantOf(buyerAddress, 'buyer electronic address (BT-49)');
  if ('ok' in receiver) return receiver;
  const sellerAddress = inv.seller.electronicAddress ?? gln(inv.seller.identifiers);
  let sender: PeppolIdentifier;
  if (sellerAddress && sellerAddress.value !== '') {
    const read = participantOf(sellerAddress, 'seller electronic address (BT-34)');
    if ('ok' in read) return read;
    sender = read;
  } else if (options.uploader && !participantIdProblem(PARTICIPANT_SCHEME, options.uploader)) {
    const p = peppolParticipant(options.uploader);
    sender = { scheme: p.scheme, value: p.value };
  } else {
    return {
      ok: false as const,
      code: 'ENDPOINT_MISSING',
      message: `the ${format.name} invoice has no seller electronic address (BT-34)`,
    };
  }
  const country = (inv.seller.postalAddress?.countryCode ?? '').toUpperCase();
  if (!/^[A-Z]{2}$/.test(country)) {
    return {
      ok: false as const,
      code: 'COUNTRY_MISSING',
      message: `the seller's country code (BT-40) is missing or not two letters: "${country}"`,
    };
  }
  return { ok: true as const, sender, receiver, countryC1: country };
}
