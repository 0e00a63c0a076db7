/** The receiveDocument workflow's contract: its name, input and result, and what its activities take and answer. */
import type { DetectionOutcome } from './send-invoice';

export const RECEIVE_DOCUMENT_WORKFLOW = 'receiveDocument';

/** A Peppol AS4 message this access point received and stored (`as4inbound`, keyed by the AS4 MessageId). */
export interface ReceiveDocumentInput {
  tenantId: string;
  messageId: string;
}

export interface ReceiveDocumentResult {
  messageId: string;
  state: string;
  detection: DetectionOutcome;
  /** The party's purchase document made of the message. */
  received: ReceivedDocumentOutcome;
}

export interface ReceivedDocumentInput extends ReceiveDocumentInput {
  detection: DetectionOutcome;
  /** Id of the event to publish (from the workflow, so a retried step publishes the same event). */
  eventId: string;
}

export interface ReceivedDocumentOutcome {
  documentId: string;
  state: string;
  /** The event published (InvoiceReceived / InvoiceReceivedError); none for other document kinds. */
  eventId?: string;
  topic?: string;
}
