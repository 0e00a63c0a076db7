import { DocumentState, Transition, generationOf } from '../core/document-states';
import { GatewayError } from '../core/gateway-error';
import type { DocumentRecord, DocumentRepository } from '../storage/document.repository';
import type { SendInvoiceInput } from '../../workflows/contracts/send-invoice';

/*
 * What an operator or an integrator may do to a sales invoice's run beyond the contract (which only forbids DELETE
 * and stop): send a document in InvoiceSentError again, and make a waiting attempt now. The API and the admin CLI
 * both call these.
 */

/** The runs of sales invoices (Temporal in the processes). */
export interface SendRunControl {
  /** A new run of a document whose run ended; 'running' while one is open. */
  resendInvoice(input: SendInvoiceInput): Promise<'started' | 'running'>;
  /** Wakes a run waiting between attempts; 'not-running' without an open run. */
  retryNow(tenantId: string, documentId: string): Promise<'signalled' | 'not-running'>;
}

const RESEND_START_TRIES = 20;

/**
 * A document in InvoiceSentError gets a new run, the next generation of its history (the earlier attempts stay). The
 * generation's first entry is a keyed insert, so of two concurrent resends one starts the run and the other is a
 * 409; so is a document in any other state. The upload's `?channel=` holds for the resend too.
 */
export async function resendDocument(
  documents: Pick<DocumentRepository, 'recordTransition'>,
  runs: SendRunControl,
  doc: DocumentRecord,
): Promise<{ generation: number }> {
  if (doc.state !== DocumentState.InvoiceSentError) {
    throw new GatewayError(
      'CONFLICT',
      `Document ${doc.documentId} is ${doc.state}: only a document in InvoiceSentError can be sent again`,
      { details: { state: doc.state } },
    );
  }
  const generation = Math.max(0, ...doc.history.map((h) => generationOf(h.key))) + 1;
  const first = await documents.recordTransition(doc.tenantId, doc.documentId, Transition.resend, {
    generation,
    detail: `resend ${generation} asked for`,
  });
  if (!first) throw new GatewayError('CONFLICT', `Document ${doc.documentId} is being sent again already`);
  const input = {
    tenantId: doc.tenantId,
    documentId: doc.documentId,
    generation,
    ...(doc.channel ? { channel: doc.channel } : {}),
  };
  // The run that ended in InvoiceSentError closes right after recording it: a start in that moment waits for it.
  let started = await runs.resendInvoice(input);
  for (let i = 0; started === 'running' && i < RESEND_START_TRIES; i++) {
    await new Promise((r) => setTimeout(r, 250));
    started = await runs.resendInvoice(input);
  }
  if (started === 'running') throw new GatewayError('CONFLICT', `Document ${doc.documentId} is being sent`);
  return { generation };
}

/** A document waiting for its next attempt (state `retrying`) makes it now. */
export async function retryDocumentNow(runs: SendRunControl, doc: DocumentRecord): Promise<void> {
  if (doc.state !== DocumentState.Retrying) {
    throw new GatewayError(
      'CONFLICT',
      `Document ${doc.documentId} is ${doc.state}: only a document waiting for its next attempt can be retried now`,
      { details: { state: doc.state } },
    );
  }
  if ((await runs.retryNow(doc.tenantId, doc.documentId)) === 'not-running')
    throw new GatewayError('CONFLICT', `Document ${doc.documentId} has no run waiting`);
}
