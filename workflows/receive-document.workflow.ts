import { ActivityFailure, getExternalWorkflowHandle, isCancellation, uuid4 } from '@temporalio/workflow';
import {
  MLS_FORMAT_ID,
  type AutomaticMlsDecision,
  type AutomaticMlsOutcome,
  type ReceiveDocumentInput,
  type ReceiveDocumentResult,
  type ReceivedValidation,
} from './contracts/receive-document';
import { SEND_MLS_WORKFLOW, sendMlsWorkflowId, type SendMlsInput } from './contracts/send-mls';
import { documentSteps, validationSteps } from './activity-stubs';
import { DocumentState } from '../src/core/document-states';
import { reportTaxWorkflowId, type TaxAcknowledgement } from './contracts/report-tax';
import { taxAcknowledgementSignal } from './report-tax.workflow';
import { startDocumentRun, startTaxReport } from './start-document-run';
import { DocumentKind, documentKindValue } from './contracts/search-attributes';
import { searchProgress } from './run-search';

/**
 * One run per received Peppol message, started only after the message is stored (workflow id = tenant + AS4
 * MessageId), or per document injected through the API as if it had arrived. Detects the business document's format
 * inside the SBD and records it on the message, validates a recognised format with its official rules (the verdict
 * goes on the document, never drops it), then makes the document the party's purchase document (downloadable, also
 * converted with ?targetFormat=) and publishes InvoiceReceived with the verdict, or InvoiceReceivedError when it cannot
 * be read. A message-level status (MLS) about a document we sent is registered and announced as
 * MessageLevelStatusReceived instead. The AS4 receipt went out before this run started: nothing here refuses the
 * message towards the sender (that is the MLS's job): for a validated invoice or credit note received over AS4 the MLS
 * policy decides whether to answer it, and the answer is its own sendMessageLevelStatus run (one per document).
 */
export async function receiveDocument(input: ReceiveDocumentInput): Promise<ReceiveDocumentResult> {
  const { peppolSchedule, ...message } = input;
  const detection = await documentSteps.detectReceivedFormat(message);
  const state = detection.ok ? DocumentState.Detected : DocumentState.Rejected;
  let validation: ReceivedValidation | undefined;
  // A received MLS is read with the MLS rules by the register step, which matches it to the invoice it answers.
  if (detection.ok && detection.format.id !== MLS_FORMAT_ID) {
    try {
      validation = await validationSteps.validateReceivedDocument({ ...message, formatId: detection.format.id });
    } catch (e) {
      // Validation could not run at all (rule packs missing for its whole retry window): the document was received
      // and confirmed to its sender, so it is still registered and announced, as not validated and why.
      const cause = e instanceof ActivityFailure && e.cause ? e.cause.message : String(e);
      validation = { kind: 'not-validated', reason: `Validation could not run: ${cause}`.slice(0, 500) };
    }
  }
  const received = await documentSteps.registerReceivedDocument({
    ...message,
    detection,
    ...(validation ? { validation } : {}),
    eventId: uuid4(),
  });
  // The party's document and how its reading ended, for operators' searches (docs/operations.md).
  searchProgress({
    documentId: received.documentId,
    ...(detection.ok
      ? {
          kind:
            detection.format.id === MLS_FORMAT_ID ? DocumentKind.Mls : documentKindValue(detection.format.documentType),
        }
      : {}),
    state: received.state,
    ...(received.topic ? { outcome: received.topic } : {}),
  });
  const result: ReceiveDocumentResult = {
    messageId: input.messageId,
    state,
    detection,
    ...(validation ? { validation } : {}),
    received,
  };
  // The tax authority's answer to a report of ours: its reportTax run waits for it.
  if (received.mls && 'reportOf' in received.mls && received.mls.reportOf)
    result.taxAcknowledged = await acknowledgeTaxReport(
      reportTaxWorkflowId(message.tenantId, received.mls.reportOf, received.mls.reportSequence),
      {
        mlsDocumentId: received.documentId,
        sender: received.mls.sender ?? '',
        responseCode: received.mls.statusCode,
        ...(received.mls.reason ? { reason: received.mls.reason } : {}),
      },
    );
  // A received invoice's own tax report (C3), beside everything else.
  if (received.taxReporting)
    await startTaxReport(
      { tenantId: message.tenantId, documentId: received.documentId, direction: 'inbound' },
      received.taxReporting,
      peppolSchedule,
    );
  // Only what came in over AS4 has an access point to answer (an injected document has none).
  if (!message.injected && detection.ok && validation) {
    let decision: AutomaticMlsDecision;
    try {
      decision = await documentSteps.decideAutomaticMls({
        tenantId: message.tenantId,
        messageId: message.messageId,
        documentId: received.documentId,
        documentType: detection.format.documentType,
        validation,
      });
    } catch (e) {
      // The document is registered and announced already; the run says why no MLS went out (the API can send one).
      const cause = e instanceof ActivityFailure && e.cause ? e.cause.message : String(e);
      decision = { send: false, reason: `MLS not decided: ${cause}`.slice(0, 500) };
    }
    result.automaticMls = decision.send
      ? await startMls({
          tenantId: message.tenantId,
          documentId: received.documentId,
          responseCode: decision.responseCode,
          ...(decision.description !== undefined ? { description: decision.description } : {}),
          ...(decision.lines.length > 0 ? { lines: decision.lines } : {}),
          requestedBy: 'policy',
          ...(peppolSchedule ? { peppolSchedule } : {}),
        })
      : { sent: false, reason: decision.reason };
  }
  return result;
}

/**
 * Hands the authority's MLS to the report's run. A run that has ended (it stopped waiting) or never existed cannot
 * take it: the MLS is on the report's history and announced as MessageLevelStatusReceived all the same.
 */
async function acknowledgeTaxReport(workflowId: string, ack: TaxAcknowledgement): Promise<boolean> {
  try {
    await getExternalWorkflowHandle(workflowId).signal(taxAcknowledgementSignal, ack);
    return true;
  } catch (e) {
    if (isCancellation(e)) throw e;
    return false;
  }
}

/**
 * Starts the document's MLS run, which outlives this one (it retries on the Peppol schedule for days). Its id is the
 * document's and taken once (REJECT_DUPLICATE): when an MLS run exists already (sent through the API), that one is the
 * document's only MLS and nothing else is started.
 */
async function startMls(mls: SendMlsInput): Promise<AutomaticMlsOutcome> {
  const workflowId = sendMlsWorkflowId(mls.tenantId, mls.documentId);
  const started = await startDocumentRun(SEND_MLS_WORKFLOW, workflowId, { ...mls, kind: DocumentKind.Mls }, mls);
  return { sent: true, responseCode: mls.responseCode, workflowId, started };
}
