/**
 * An invoice carrying a PDF as an embedded attachment (BG-24 supporting document, BT-125): the UBL
 * cac:AdditionalDocumentReference/cac:Attachment/cbc:EmbeddedDocumentBinaryObject the channel tests send.
 */

export const ATTACHMENT_FILENAME = 'timesheet.pdf';
export const ATTACHMENT_MIME_CODE = 'application/pdf';

export interface InvoiceWithAttachment {
  /** The attachment's bytes, as the recipient must get them. */
  pdf: Buffer;
  /** The invoice with the attachment embedded (base64). */
  invoice: Buffer;
}

/**
 * Embeds a `bytes`-long PDF (10 MB unless told) in the UBL `invoice`, as a supporting document just before
 * cac:AccountingSupplierParty (where UBL's element order puts AdditionalDocumentReference). The bytes are deterministic
 * and incompressible behind a PDF header: what matters is that nothing is lost or re-encoded on the way.
 */
export function withEmbeddedPdf(invoice: Buffer, bytes = 10 * 1024 * 1024): InvoiceWithAttachment {
  const pdf = Buffer.alloc(bytes);
  let x = 0x2545;
  for (let i = 0; i < pdf.length; i++) pdf[i] = (x = (x * 1103515245 + 12345) >>> 0) >>> 24;
  Buffer.from('%PDF-1.7\n').copy(pdf);
  const reference =
    '<cac:AdditionalDocumentReference><cbc:ID>TS-1</cbc:ID>' +
    '<cbc:DocumentDescription>Timesheet</cbc:DocumentDescription>' +
    `<cac:Attachment><cbc:EmbeddedDocumentBinaryObject mimeCode="${ATTACHMENT_MIME_CODE}" ` +
    `filename="${ATTACHMENT_FILENAME}">${pdf.toString('base64')}</cbc:EmbeddedDocumentBinaryObject>` +
    '</cac:Attachment></cac:AdditionalDocumentReference>';
  const text = invoice.toString('utf8');
  const anchor = '<cac:AccountingSupplierParty>';
  if (!text.includes(anchor)) throw new Error(`the invoice has no ${anchor} to put the attachment before`);
  return { pdf, invoice: Buffer.from(text.replace(anchor, `${reference}${anchor}`)) };
}
