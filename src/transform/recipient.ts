import { GatewayError } from '../core/gateway-error';
import { detectFormat } from '../formats';
import { peppolDocumentTypeId } from '../formats/document-type-id';
import { inProcessTransform, type TransformReport, type TransformRunner } from './transform';

/**
 * What a document can be turned into for a recipient that does not receive its own format over Peppol, best first:
 * BIS Billing 3 (what every Peppol receiver should take), then the national CIUSes, then plain EN 16931, UBL before
 * CII.
 * Each candidate is converted for real, so only formats the document actually meets (the target CIUS's requirements,
 * the model's checks) are offered; the SMP then says which one the recipient takes.
 */
export const RECIPIENT_FORMAT_PREFERENCE = [
  'peppol-bis3-ubl',
  'xrechnung-ubl',
  'xrechnung-cii',
  'nlcius-ubl',
  'nlcius-cii',
  'en16931-ubl',
  'en16931-cii',
] as const;

export interface RecipientAlternative {
  /** The target format id to pass to transformDocument. */
  targetFormat: string;
  /** The Peppol document type identifier value of the converted document. */
  documentTypeId: string;
  /** Its BT-23 (the Peppol process), when it has one. */
  profileId?: string;
  /** The converted document. */
  converted: ConvertedForRecipient;
}

/**
 * The conversions in preference order, one at a time: the caller stops at the first the recipient takes, so the
 * later candidates are never converted.
 */
export async function* recipientAlternatives(
  bytes: Buffer,
  ownDocumentTypeId: string,
  transform: TransformRunner = inProcessTransform,
): AsyncGenerator<RecipientAlternative> {
  const seen = new Set([ownDocumentTypeId]);
  for (const targetFormat of RECIPIENT_FORMAT_PREFERENCE) {
    let converted: ConvertedForRecipient;
    try {
      converted = await convertForRecipient(bytes, targetFormat, transform);
    } catch (e) {
      // Not convertible to this one (400 not supported, 422 data missing): the next candidate may do.
      if (e instanceof GatewayError) continue;
      throw e;
    }
    const format = detectFormat(converted.xml);
    const documentTypeId = peppolDocumentTypeId(format);
    if (!documentTypeId || seen.has(documentTypeId)) continue;
    seen.add(documentTypeId);
    yield { targetFormat, documentTypeId, ...(format.profileId ? { profileId: format.profileId } : {}), converted };
  }
}

export interface ConvertedForRecipient {
  xml: Buffer;
  report: TransformReport;
}

/** The document in the format the recipient takes (the same conversion every attempt: it is a pure function). */
export async function convertForRecipient(
  bytes: Buffer,
  targetFormat: string,
  transform: TransformRunner = inProcessTransform,
): Promise<ConvertedForRecipient> {
  // Every recipient format is XML, so the body is the converted XML's bytes.
  const result = await transform(bytes, { targetFormat });
  return { xml: result.body, report: result.report };
}
