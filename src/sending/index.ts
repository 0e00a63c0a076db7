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
  publishSendEvent: (input: SendEventInput) => Promise<PublishedDocumentEvent>;
}

export function createSendInvoice(deps: SendInvoiceDeps): SendInvoiceSteps {
  return {
    checkDocument: (input) => checkDocument(deps, input),
    chooseChannel: (input) => chooseSendChannel(deps, input),
    sendEmail: (input) => sendEmail(deps, input),
    sendHttps: (input) => sendHttps(deps, input),
    resolveRecipient: (input) => resolveRecipient(deps, input),
    sendPeppol: (input) => sendPeppol(deps, input),
    publishSendEvent: (input) => publishSendEvent(deps, input),
  };
}
