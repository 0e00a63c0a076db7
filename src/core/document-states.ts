/** Document processing states recorded in the status history (spec 3; the list grows with the pipeline). */
export const DocumentState = {
  /** Bytes stored, record written. */
  Received: 'received',
  /** The processing workflow is started: the upload was answered 200. */
  Accepted: 'accepted',
  /** The format was recognised. */
  Detected: 'detected',
  /**
   * The format was refused (unknown format, malformed or unsafe XML). Final for received documents and for sales
   * invoices recorded before the validation step existed; newer sales-invoice runs follow it with InvoiceSentError.
   */
  Rejected: 'rejected',
  /** Failed the official rules of its format; the assertions are on the record. InvoiceSentError follows. */
  Invalid: 'invalid',
  /** Passed the official rules of its format (warnings allowed). */
  Validated: 'validated',
  /** Its format has no pinned official rules, so it was not validated (the reason is in the history detail). */
  NotValidated: 'not-validated',
  /** A Peppol delivery attempt was made (one keyed history entry per attempt, with its outcome). */
  Sending: 'sending',
  /** An attempt failed temporarily (5xx, no answer); the next one follows the retry schedule (spec 3). */
  Retrying: 'retrying',
  /** Delivered over Peppol with a verified AS4 receipt: final (spec 3). */
  Delivered: 'delivered',
  /**
   * Final error state of a sales invoice (spec 3, 7): an invalid payload, a refused format, or (with delivery) a
   * permanent failure or exhausted retries. Named as the spec's state and event.
   */
  InvoiceSentError: 'InvoiceSentError',
} as const;

export type DocumentStateName = (typeof DocumentState)[keyof typeof DocumentState];
