import type { Invoice } from '../en16931';
import { resolveRecipients, type InvoiceAddresses, type MailtoHook } from './mailto';

/*
 * The e-mail that carries a sales invoice to a recipient outside Peppol: who it goes to (the mail hook's URL with the
 * invoice's addresses filled in), a short text naming the invoice, and the parts the hook asks for: the readable
 * PDF (Factur-X PDF/A-3, CII embedded), the XML as uploaded and the invoice's own embedded documents (BG-24).
 */

/** The e-mail addresses an invoice names, as the mail hook placeholders read them. */
export function invoiceAddresses(inv: Invoice): InvoiceAddresses {
  const electronic = (id: { value: string; schemeId?: string } | undefined) =>
    id && id.schemeId?.toUpperCase() === 'EM' ? id.value : undefined;
  const receiver = inv.buyer.contact?.email ?? electronic(inv.buyer.electronicAddress);
  const sender = inv.seller.contact?.email ?? electronic(inv.seller.electronicAddress);
  return {
    ...(receiver ? { receiverEmailAddress: receiver.trim() } : {}),
    ...(sender ? { senderEmailAddress: sender.trim() } : {}),
  };
}

export interface MailAttachment {
  filename: string;
  contentType: string;
  content: Buffer;
}

export interface InvoiceMail {
  from: string;
  to: string[];
  cc: string[];
  bcc: string[];
  replyTo?: string;
  subject: string;
  text: string;
  /** Stable per document and hook, so a repeated send (a retried attempt) is recognisable as the same message. */
  messageId: string;
  attachments: MailAttachment[];
  usedFallback: boolean;
}

export interface InvoiceMailInput {
  hook: MailtoHook;
  invoice: Invoice;
  /** Envelope and header sender (the tenant's configured From address). */
  from: string;
  /** Message-ID, `<…@…>`. */
  messageId: string;
  /** The document as uploaded, when the hook wants `xml`. */
  xml?: { filename: string; content: Buffer };
  /** The readable PDF, when the hook wants `pdf`. */
  pdf?: Buffer;
}

const MAX_SUBJECT = 200;

function safeFilename(name: string, fallback: string): string {
  // Header-safe and path-free: mail clients save attachments under this name.
  const base = name.replace(/^.*[\\/]/, '').replace(/[\p{Cc}"]/gu, '');
  return base.trim().length > 0 ? base.trim().slice(0, 120) : fallback;
}

function fillText(template: string, inv: Invoice): string {
  return template
    .replace(/\[invoiceNumber\]/g, inv.number ?? '')
    .replace(/\[sellerName\]/g, inv.seller.name ?? '')
    .replace(/\[buyerName\]/g, inv.buyer.name ?? '');
}

function amount(inv: Invoice): string | undefined {
  const due = inv.totals.amountDueForPayment;
  return due !== undefined && inv.currencyCode ? `${due} ${inv.currencyCode}` : undefined;
}

/** The invoice's embedded supporting documents (BG-24 with BT-125), decoded. */
export function embeddedAttachments(inv: Invoice): MailAttachment[] {
  return inv.supportingDocuments.flatMap((doc, i) => {
    const bin = doc.attachment;
    if (!bin || bin.base64.length === 0) return [];
    return [
      {
        filename: safeFilename(bin.filename ?? doc.reference, `attachment-${i + 1}`),
        contentType:
          bin.mimeCode && /^[\w.+-]+\/[\w.+-]+$/.test(bin.mimeCode) ? bin.mimeCode : 'application/octet-stream',
        content: Buffer.from(bin.base64, 'base64'),
      },
    ];
  });
}

/** The mail for one invoice and mail hook, or why there is nobody to send it to. */
export function buildInvoiceMail(input: InvoiceMailInput): InvoiceMail | { missing: string } {
  const { hook, invoice: inv } = input;
  const recipients = resolveRecipients(hook, invoiceAddresses(inv));
  if ('missing' in recipients) return recipients;
  const number = inv.number ?? '(no number)';
  const seller = inv.seller.name ?? inv.seller.tradingName ?? 'the seller';
  const subject = (hook.subject !== undefined ? fillText(hook.subject, inv) : `Invoice ${number} from ${seller}`)
    .replace(/[\r\n]+/g, ' ')
    .slice(0, MAX_SUBJECT);
  const due = amount(inv);
  const text =
    hook.body !== undefined
      ? fillText(hook.body, inv)
      : [
          `Invoice ${number} from ${seller}${inv.buyer.name ? ` to ${inv.buyer.name}` : ''}.`,
          ...(inv.issueDate ? [`Issued: ${inv.issueDate}`] : []),
          ...(due ? [`Amount due: ${due}`] : []),
          ...(inv.paymentDueDate ? [`Due date: ${inv.paymentDueDate}`] : []),
          '',
          'The attached PDF is the readable invoice; its embedded XML (and the attached XML) is the electronic ' +
            'invoice.',
        ].join('\n');
  const attachments: MailAttachment[] = [];
  const stem = safeFilename(`invoice-${number}`, 'invoice');
  if (hook.attach.has('pdf') && input.pdf) {
    attachments.push({ filename: `${stem}.pdf`, contentType: 'application/pdf', content: input.pdf });
  }
  if (hook.attach.has('xml') && input.xml) {
    attachments.push({
      filename: safeFilename(input.xml.filename, `${stem}.xml`),
      contentType: 'application/xml',
      content: input.xml.content,
    });
  }
  if (hook.attach.has('attachments')) attachments.push(...embeddedAttachments(inv));
  const replyTo = invoiceAddresses(inv).senderEmailAddress;
  return {
    from: input.from,
    ...recipients,
    ...(replyTo ? { replyTo } : {}),
    subject,
    text,
    messageId: input.messageId,
    attachments,
  };
}
