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
import { readInvoiceRoutingFrom } from '../peppol/invoice-routing';
import type { DetectionOutcome, RoutingFacts } from '../../workflows/contracts/send-invoice';

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
  /** Read when the format has a Peppol document type (the invoice may be sent over Peppol). */
  routing?: RoutingFacts;
}

/**
 * Detects an upload's format and, for a format with a Peppol document type, reads its routing, on one parse of the
 * XML (the PDF's embedded XML for Factur-X): up to DOM_DETECTION_MAX_BYTES detection reads the same DOM the routing
 * is read from; a larger document is detected by the streaming scanner and parsed once for its routing.
 */
export function inspectUpload(bytes: Buffer): InspectedUpload {
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
    if (!detection.ok || !detection.format.documentTypeId) return { detection, pdf };
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
