import type { ReceiveDocumentInput, ReceiveDocumentResult } from './messages';
import { documentSteps } from './activity-stubs';
import { DocumentState } from '../src/core/document-states';

/**
 * One run per received Peppol message, started only after the message is stored (workflow id = tenant + AS4
 * MessageId). Today it detects the business document's format inside the SBD and records it; delivery to the party
 * (webhook events) follows when those steps exist.
 */
export async function receiveDocument(input: ReceiveDocumentInput): Promise<ReceiveDocumentResult> {
  const detection = await documentSteps.detectReceivedFormat(input);
  return { messageId: input.messageId, state: detection.ok ? DocumentState.Detected : DocumentState.Rejected, detection };
}
