/**
 * The send-invoice use case, one function per step of the sendInvoice workflow: the document check (detection and
 * validation), recipient resolution (route choice and the conversion fallback), one delivery attempt (SBD/AS4
 * assembly and outcome classification), and the InvoiceSent* events. Activities only adapt these.
 */
import type {
  CheckDocumentResult,
  PublishedDocumentEvent,
  ResolveRecipientInput,
  ResolveRecipientOutcome,
  SendEventInput,
  SendInvoiceInput,
  SendPeppolInput,
  SendPeppolOutcome,
} from '../../workflows/contracts/send-invoice';
import { checkDocument } from './check-document';
import { sendPeppol } from './delivery';
import type { SendInvoiceDeps } from './ports';
import { publishSendEvent } from './publish';
import { resolveRecipient } from './recipient';

export type { SendInvoiceDeps, PeppolSender, PeppolUnavailable, DocumentValidator, EventSink } from './ports';
export { MAX_KEPT_ASSERTIONS, summarizeErrors } from './check-document';

export interface SendInvoiceSteps {
  checkDocument: (input: SendInvoiceInput) => Promise<CheckDocumentResult>;
  resolveRecipient: (input: ResolveRecipientInput) => Promise<ResolveRecipientOutcome>;
  sendPeppol: (input: SendPeppolInput) => Promise<SendPeppolOutcome>;
  publishSendEvent: (input: SendEventInput) => Promise<PublishedDocumentEvent>;
}

export function createSendInvoice(deps: SendInvoiceDeps): SendInvoiceSteps {
  return {
    checkDocument: (input) => checkDocument(deps, input),
    resolveRecipient: (input) => resolveRecipient(deps, input),
    sendPeppol: (input) => sendPeppol(deps, input),
    publishSendEvent: (input) => publishSendEvent(deps, input),
  };
}
