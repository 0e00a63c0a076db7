import { uuid4 } from '@temporalio/workflow';
import type { ReceiveDocumentInput, ReceiveDocumentResult } from './contracts/receive-document';
import { documentSteps } from './activity-stubs';
import { DocumentState } from '../src/core/document-states';

/**
 * One run per received Peppol message, started only after the message is stored (workflow id = tenant + AS4
 * MessageId). Detects the business document's format inside the SBD and records it on the message, then makes the
 * document the party's purchase document (downloadable, also converted with ?targetFormat=) and publishes
 * InvoiceReceived, or InvoiceReceivedError when it cannot be read. The AS4 receipt went out before this run started:
 * nothing here refuses the message towards the sender (that is the MLS's job).
 */
export async function receiveDocument(input: ReceiveDocumentInput): Promise<ReceiveDocumentResult> {
  const detection = await documentSteps.detectReceivedFormat(input);
  const state = detection.ok ? DocumentState.Detected : DocumentState.Rejected;
  const received = await documentSteps.registerReceivedDocument({ ...input, detection, eventId: uuid4() });
  return { messageId: input.messageId, state, detection, received };
}
