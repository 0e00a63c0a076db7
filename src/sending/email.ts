import { isGatewayError } from '../core/gateway-error';
import { readBytes, whileBeating } from '../documents/loader';
import { buildInvoiceMail, MailtoError, parseMailtoUrl, type InvoiceMail } from '../email';
import { readInvoiceModel } from '../transform';
import type { SendEmailInput, SendEmailOutcome } from '../../workflows/contracts/send-invoice';
import type { SendInvoiceDeps } from './ports';
import { channelHookFor, recordChannelAttempt } from './channel-hook';

/** The readable PDF's Factur-X profiles, best first: EN 16931 carries the whole model, EXTENDED takes what it lacks. */
const PDF_TARGETS = ['facturx-en16931', 'facturx-extended'] as const;

function domainOf(address: string): string {
  const at = address.lastIndexOf('@');
  const domain = at >= 0 ? address.slice(at + 1).replace(/[>\s]/g, '') : '';
  return domain.length > 0 ? domain : 'invoice-gateway.invalid';
}

/** The readable PDF: the upload itself for a Factur-X PDF, else a Factur-X PDF/A-3 made from the same model. */
async function readablePdf(deps: SendInvoiceDeps, bytes: Buffer, pdf: boolean): Promise<Buffer | string> {
  if (pdf) return bytes;
  let why = '';
  for (const targetFormat of PDF_TARGETS) {
    try {
      const made = await deps.transform(bytes, { targetFormat });
      if (made.pdf) return made.pdf;
    } catch (e) {
      if (!isGatewayError(e)) throw e;
      why = e.message;
    }
  }
  return why || 'no PDF could be made';
}

/**
 * One e-mail attempt of a sales invoice through a mail hook: the hook as it is now, the invoice's addresses in its
 * `mailto:` URL, the readable PDF, the XML as uploaded and the invoice's own attachments, handed to the SMTP relay.
 * Accepted = delivered; 4xx or no connection = retry later; 5xx, no address, a hook gone or no relay configured =
 * final. The Message-ID is the same on every attempt, so a mail sent twice (a worker that died after the relay took
 * it) is recognisable as one. The attempt goes on the record under `send-attempt-<n>`.
 */
export async function sendEmail(deps: SendInvoiceDeps, input: SendEmailInput): Promise<SendEmailOutcome> {
  const email = deps.email;
  const from = 'unavailable' in email ? '' : email.from;
  const messageId = `<${input.documentId}.${input.hookId}@${domainOf(from)}>`;
  const record = async (out: SendEmailOutcome): Promise<SendEmailOutcome> => {
    await recordChannelAttempt(
      deps,
      input,
      `attempt ${input.attempt} by e-mail through the mail hook ${input.hookId}` +
        `${out.endpoint !== 'mailto:' ? ` to ${out.endpoint.slice(7)}` : ''}: ${out.outcome}` +
        `${out.reason ? `: ${out.reason}` : ''}`,
    );
    return out;
  };
  const failed = (reason: string, extra: Partial<SendEmailOutcome> = {}) =>
    record({ outcome: 'failed', endpoint: 'mailto:', messageId, reason, ...extra });
  if ('unavailable' in email) return failed(`the e-mail channel is not configured: ${email.unavailable}`);
  const found = await channelHookFor(deps, input, 'mailto');
  if ('senderRefused' in found) return failed(found.senderRefused, { senderRefused: true });
  if ('gone' in found) {
    return failed(`the mail hook ${input.hookId} no longer exists or is not a mail hook`, { noRecipient: true });
  }
  const hook = found.hook;
  let target;
  try {
    target = parseMailtoUrl(hook.url);
  } catch (e) {
    if (!(e instanceof MailtoError)) throw e;
    return failed(`the mail hook's URL is not usable: ${e.message}`);
  }
  const bytes = await readBytes(deps, input.facts.blobId);
  let invoice;
  try {
    invoice = readInvoiceModel(bytes).invoice;
  } catch (e) {
    if (!isGatewayError(e)) throw e;
    return failed(`the invoice cannot be read for the e-mail: ${e.message}`);
  }
  const pdf = target.attach.has('pdf')
    ? await whileBeating(deps.heartbeat, () => readablePdf(deps, bytes, input.facts.pdf))
    : undefined;
  const built = buildInvoiceMail({
    hook: target,
    invoice,
    from,
    messageId,
    ...(typeof pdf === 'object' ? { pdf } : {}),
    ...(!input.facts.pdf ? { xml: { filename: `${invoice.number ?? input.documentId}.xml`, content: bytes } } : {}),
  });
  if ('missing' in built) return failed(`nobody to send it to: ${built.missing}`, { noRecipient: true });
  const mail: InvoiceMail = built;
  const endpoint = `mailto:${mail.to.join(',')}`;
  const note = typeof pdf === 'string' ? ` (sent without a PDF: ${pdf})` : '';
  const out = await whileBeating(deps.heartbeat, () => email.smtp.send(mail));
  if (out.kind === 'accepted') {
    return record({ outcome: 'delivered', endpoint, messageId, reason: `${out.response}${note}`.trim() });
  }
  return record({
    outcome: out.kind === 'temporary' ? 'retryable' : 'failed',
    endpoint,
    messageId,
    reason: out.reason,
    ...(out.code !== undefined ? { smtpCode: out.code } : {}),
  });
}
