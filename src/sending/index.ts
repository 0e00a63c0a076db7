/**
 * The send-invoice use case, one function per step of the sendInvoice workflow: the document check (detection and
 * validation), the channel of each sending topic, recipient resolution (route choice and the conversion fallback), one
 * Peppol attempt (SBD/AS4 assembly and outcome classification), one e-mail attempt, one https attempt, and the
 * InvoiceSent* events.
 * Activities only adapt these.
 */
import type {
  CheckDocumentResult,
  ChooseChannelInput,
  ChooseChannelOutcome,
  SendEmailInput,
  SendEmailOutcome,
  SendHttpsInput,
  SendHttpsOutcome,
  PublishedDocumentEvent,
  ResolveAndSendInput,
  ResolveAndSendOutcome,
  ResolveRecipientInput,
  ResolveRecipientOutcome,
  SendEventInput,
  SendInvoiceInput,
  SendPeppolInput,
  SendPeppolOutcome,
} from '../../workflows/contracts/send-invoice';
import { chooseSendChannel } from './channels';
import { checkDocument } from './check-document';
import { sendEmail } from './email';
import { sendHttps } from './https';
import { sendPeppol } from './delivery';
import type { SendInvoiceDeps } from './ports';
import { publishSendEvent } from './publish';
import { resolveRecipient } from './recipient';

export type {
  EmailChannel,
  EmailUnavailable,
  HttpsChannel,
  SendInvoiceDeps,
  PeppolSender,
  PeppolUnavailable,
  DocumentValidator,
  EventSink,
} from './ports';
export { MAX_KEPT_ASSERTIONS, summarizeErrors } from './check-document';

export interface SendInvoiceSteps {
  checkDocument: (input: SendInvoiceInput) => Promise<CheckDocumentResult>;
  chooseChannel: (input: ChooseChannelInput) => Promise<ChooseChannelOutcome>;
  sendEmail: (input: SendEmailInput) => Promise<SendEmailOutcome>;
  sendHttps: (input: SendHttpsInput) => Promise<SendHttpsOutcome>;
  resolveRecipient: (input: ResolveRecipientInput) => Promise<ResolveRecipientOutcome>;
  sendPeppol: (input: SendPeppolInput) => Promise<SendPeppolOutcome>;
  resolveAndSendPeppol: (input: ResolveAndSendInput) => Promise<ResolveAndSendOutcome>;
  publishSendEvent: (input: SendEventInput) => Promise<PublishedDocumentEvent>;
}

/**
 * A run's first Peppol attempt as one step (one activity, not two): resolve the recipient, then send along the route
 * found. Safe to run again after a crash at any point: the attempt is the same AS4 message under the same history
 * key, so the receiver sees at most a duplicate it recognises; a conversion is made and stored again, the earlier
 * copy referenced by no record (reconciliation removes it), as when a resolution alone is retried.
 */
export async function resolveAndSendPeppol(
  deps: SendInvoiceDeps,
  input: ResolveAndSendInput,
): Promise<ResolveAndSendOutcome> {
  const resolved = await resolveRecipient(deps, input);
  if (resolved.kind === 'refused') return { resolved };
  const { tenantId, documentId, facts, attempt, firstAttemptAt } = input;
  const sent = await sendPeppol(deps, {
    tenantId,
    documentId,
    ...(input.generation ? { generation: input.generation } : {}),
    facts,
    route: resolved.route,
    attempt,
    firstAttemptAt,
  });
  return { resolved, sent };
}

export function createSendInvoice(deps: SendInvoiceDeps): SendInvoiceSteps {
  return {
    checkDocument: (input) => checkDocument(deps, input),
    chooseChannel: (input) => chooseSendChannel(deps, input),
    sendEmail: (input) => sendEmail(deps, input),
    sendHttps: (input) => sendHttps(deps, input),
    resolveRecipient: (input) => resolveRecipient(deps, input),
    sendPeppol: (input) => sendPeppol(deps, input),
    resolveAndSendPeppol: (input) => resolveAndSendPeppol(deps, input),
    publishSendEvent: (input) => publishSendEvent(deps, input),
  };
}
