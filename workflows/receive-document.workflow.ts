import { ActivityFailure, uuid4 } from '@temporalio/workflow';
import {
  MLS_FORMAT_ID,
  type ReceiveDocumentInput,
  type ReceiveDocumentResult,
  type ReceivedValidation,
} from './contracts/receive-document';
import { documentSteps, validationSteps } from './activity-stubs';
import { DocumentState } from '../src/core/document-states';

/**
 * One run per received Peppol message, started only after the message is stored (workflow id = tenant + AS4
 * MessageId), or per document injected through the API as if it had arrived. Detects the business document's format
 * inside the SBD and records it on the message, validates a recognised format with its official rules (the verdict
 * goes on the document, never drops it), then makes the document the party's purchase document (downloadable, also
 * converted with ?targetFormat=) and publishes InvoiceReceived with the verdict, or InvoiceReceivedError when it cannot
 * be read. A message-level status (MLS) about a document we sent is registered and announced as
 * MessageLevelStatusReceived instead. The AS4 receipt went out before this run started: nothing here refuses the
 * message towards the sender (that is the MLS's job).
 */
export async function receiveDocument(input: ReceiveDocumentInput): Promise<ReceiveDocumentResult> {
  const detection = await documentSteps.detectReceivedFormat(input);
  const state = detection.ok ? DocumentState.Detected : DocumentState.Rejected;
  let validation: ReceivedValidation | undefined;
  // A received MLS is read with the MLS rules by the register step, which matches it to the invoice it answers.
  if (detection.ok && detection.format.id !== MLS_FORMAT_ID) {
    try {
      validation = await validationSteps.validateReceivedDocument({ ...input, formatId: detection.format.id });
    } catch (e) {
      // Validation could not run at all (rule packs missing for its whole retry window): the document was received
      // and confirmed to its sender, so it is still registered and announced, as not validated and why.
      const cause = e instanceof ActivityFailure && e.cause ? e.cause.message : String(e);
      validation = { kind: 'not-validated', reason: `Validation could not run: ${cause}`.slice(0, 500) };
    }
  }
  const received = await documentSteps.registerReceivedDocument({
    ...input,
    detection,
    ...(validation ? { validation } : {}),
    eventId: uuid4(),
  });
  return { messageId: input.messageId, state, detection, ...(validation ? { validation } : {}), received };
}
