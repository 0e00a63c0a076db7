import type { TaxReportingSettings } from './report-tax';
/** The receiveDocument workflow's contract: its name, input and result, and what its activities take and answer. */
import type { RetrySchedule } from '../../src/core/retry-schedule';
import type { DetectionOutcome } from './send-invoice';
import type { MlsLineSpec, MlsStatusCode } from './send-mls';

export const RECEIVE_DOCUMENT_WORKFLOW = 'receiveDocument';

/** Prefix of the message id of a document injected through the API (it came in no AS4 message). */
export const INJECTED_MESSAGE_PREFIX = 'injected:';

/** The detected format id of a Peppol MLS: received MLS documents are read with the MLS rules, not validated. */
export const MLS_FORMAT_ID = 'peppol-mls' as const;

/** The createdBy marker of a document injected through `POST /api/v1/{partyId}/generic/receive` (spec 6.3). */
export const INJECTED_CREATED_BY = 'manualUpload' as const;

/** The message id a document injected through the API runs under (its workflow id derives from it). */
export function injectedMessageId(documentId: string): string {
  return `${INJECTED_MESSAGE_PREFIX}${documentId}`;
}

/**
 * A Peppol AS4 message this access point received and stored (`as4inbound`, keyed by the AS4 MessageId), or a
 * document injected as if it had arrived (`POST /api/v1/{partyId}/generic/receive`): then `injected` names its record,
 * written at intake, and `messageId` is `injected:<documentId>`.
 */
export interface ReceiveDocumentInput {
  tenantId: string;
  messageId: string;
  injected?: { documentId: string };
  /** PEPPOL_SEND_RETRY_SCHEDULE, fixed at start: the schedule of an automatic MLS (default: the Peppol schedule). */
  peppolSchedule?: RetrySchedule;
}

/**
 * The official-rule verdict on a received document (the full assertions are on its record's validation entry).
 * `invalid` names its reason codes (SV schema, BV fatal business rule, BW business warning) and failing rule ids.
 */
export type ReceivedValidation =
  | { kind: 'valid'; warnings: number; ruleSets: string[] }
  | { kind: 'invalid'; errors: number; reasonCodes: string[]; ruleIds: string[]; summary: string }
  | { kind: 'not-validated'; reason: string };

export interface ReceiveDocumentResult {
  messageId: string;
  state: string;
  detection: DetectionOutcome;
  /** Absent when the format was not recognised (and on runs started before received documents were validated). */
  validation?: ReceivedValidation;
  /** The party's purchase document made of the message. */
  received: ReceivedDocumentOutcome;
  /** The automatic MLS (invoices and credit notes received over AS4 and validated); absent on older runs. */
  automaticMls?: AutomaticMlsOutcome;
  /** A tax authority's MLS about a report of ours: whether the report's run took it (false: it had ended). */
  taxAcknowledged?: boolean;
}

/** What the MLS policy decides for a received invoice or credit note (src/peppol/mls mlsDecision). */
export interface AutomaticMlsInput {
  tenantId: string;
  /** The AS4 message it came in (its SBDH says whether the sender asked for an MLS). */
  messageId: string;
  /** The party's document made of it (the one the MLS answers). */
  documentId: string;
  /** The detected business document type (`Invoice`, `CreditNote`, ...). */
  documentType: string;
  validation: ReceivedValidation;
}

export type AutomaticMlsDecision =
  | { send: false; reason: string }
  | {
      send: true;
      responseCode: MlsStatusCode;
      description?: string;
      lines: MlsLineSpec[];
      /** Who asked for it: the party (MLS on through "reviews") and / or the sender (SBDH MLS_TYPE). */
      requestedBy: Array<'party' | 'sender'>;
    };

export type AutomaticMlsOutcome =
  | { sent: false; reason: string }
  /** `started: false`: an MLS run for the document existed already (one MLS per document). */
  | { sent: true; responseCode: MlsStatusCode; workflowId: string; started: boolean };

/** The validation step's input: the message (or injected document) and the format detection found. */
export interface ReceivedValidationInput extends ReceiveDocumentInput {
  formatId: string;
}

export interface ReceivedDocumentInput extends ReceiveDocumentInput {
  detection: DetectionOutcome;
  validation?: ReceivedValidation;
  /** Id of the event to publish (from the workflow, so a retried step publishes the same event). */
  eventId: string;
}

export interface ReceivedDocumentOutcome {
  documentId: string;
  state: string;
  /**
   * The event published (InvoiceReceived / InvoiceReceivedError / MessageLevelStatusReceived, the Invoice Response
   * and order topics); none for other document kinds and for a refused MLS.
   */
  eventId?: string;
  topic?: string;
  /** For a received invoice response or order response: the document of ours it answers (null: none of ours). */
  refToDocumentId?: string | null;
  /**
   * For a received MLS: its code and the sales invoice it answers (null: none of ours), or why it was refused. An MLS
   * answering a tax report of ours also names the reported document (`reportOf`) and its findings (`reason`).
   */
  mls?:
    | {
        statusCode: string;
        refToDocumentId: string | null;
        reportOf?: string;
        /** Which report of that document (absent: its first). */
        reportSequence?: number;
        sender?: string;
        reason?: string;
      }
    | { refused: string };
  /** A received invoice or credit note, where this worker reports to a tax authority: its reportTax run follows. */
  taxReporting?: TaxReportingSettings;
}
