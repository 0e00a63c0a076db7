/** Document processing states recorded in the status history (spec 3; the list grows with the pipeline). */
export const DocumentState = {
  /** Bytes stored, record written. */
  Received: 'received',
  /** The processing workflow is started: the upload was answered 200. */
  Accepted: 'accepted',
  /** The format was recognised. */
  Detected: 'detected',
  /** The document cannot be processed (unknown format, malformed or unsafe XML): final. */
  Rejected: 'rejected',
} as const;

export type DocumentStateName = (typeof DocumentState)[keyof typeof DocumentState];
