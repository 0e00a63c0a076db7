/** Document processing states recorded in the status history (spec 3; the list grows with the pipeline). */
export const DocumentState = {
  /** Bytes stored, record written. */
  Received: 'received',
  /** The processing workflow is started: the upload was answered 200. */
  Accepted: 'accepted',
  /** The format was recognised. */
  Detected: 'detected',
  /**
   * The format was refused (unknown format, malformed or unsafe XML). Sales invoices follow it with
   * InvoiceSentError.
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
  /** Delivered: over Peppol with a verified AS4 receipt, or taken by the SMTP relay for e-mail; final (spec 3). */
  Delivered: 'delivered',
  /** Sending again was asked for a document in InvoiceSentError: a new run (the next generation of entries) follows. */
  Resending: 'resending',
  /** A `drop` channel hook took the document: deliberately not sent (the hook is in the history detail); final. */
  Dropped: 'dropped',
  /**
   * Final error state of a sales invoice (spec 3, 7): an invalid payload, a refused format, or (with delivery) a
   * permanent failure or exhausted retries. Named as the spec's state and event.
   */
  InvoiceSentError: 'InvoiceSentError',
  /**
   * The receiving access point's message-level status (MLS) about a sent document arrived (its code and reasons in
   * the history detail). Placed just before the final entries: it never hides `delivered` or InvoiceSentError.
   */
  MlsReceived: 'mls-received',
  /**
   * The buyer's Invoice Response (BIS Invoice Response 3) about a sent invoice arrived: one entry per response (its
   * status code on the entry). Placed before the final entries like `mls-received`: it never hides `delivered`.
   */
  InvoiceResponseReceived: 'invoice-response-received',
  /**
   * A step of the invoice's tax report (planned, skipped, submitted, retried, accepted, rejected, failed; the step is
   * the key's last part, what happened is the detail). A side entry: it never sets the document's state, which stays
   * the delivery's (reporting and delivery are separate); the status resource shows the latest as `taxReport`.
   */
  TaxReport: 'tax-report',
} as const;

export type DocumentStateName = (typeof DocumentState)[keyof typeof DocumentState];

/** The place of the entries that end a document's life. */
const FINAL = 1_000_000;

/**
 * The steps of a document's life, each written once as its own history entry under a fixed key (entries are
 * inserted, never updated: see "Storage writes" in docs/decisions.md). The key fixes the step's place in the
 * sequence, so the current state is the entry latest in this order whoever wrote it and whenever it landed: the API's
 * `accepted` entry may be stored after the worker's `detect`, and the state is still `detected`.
 */
export const HistoryStep = {
  received: { key: 'received', order: 0, states: [DocumentState.Received] },
  accepted: { key: 'accepted', order: 1, states: [DocumentState.Accepted] },
  detect: { key: 'detect', order: 2, states: [DocumentState.Detected, DocumentState.Rejected] },
  validate: {
    key: 'validate',
    order: 3,
    states: [DocumentState.Validated, DocumentState.NotValidated, DocumentState.Invalid],
  },
  /** The first entry of a resend's generation (written under `g<n>:resend`). */
  resend: { key: 'resend', order: 5, states: [DocumentState.Resending] },
  /** One per generation: a receiving access point sends at most one MLS per message (MLS 1.0). */
  mlsReceived: { key: 'mls-received', order: FINAL - 1, states: [DocumentState.MlsReceived] },
  delivered: { key: 'delivered', order: FINAL, states: [DocumentState.Delivered] },
  sendError: { key: 'send-error', order: FINAL, states: [DocumentState.InvoiceSentError] },
  dropped: { key: 'dropped', order: FINAL, states: [DocumentState.Dropped] },
} as const;

/** Keys of the repeated steps: one per delivery attempt, and one per scheduled retry after it. */
export function sendAttemptKey(attempt: number): string {
  return `send-attempt-${attempt}`;
}
export function retryKey(attempt: number): string {
  return `retry-${attempt}`;
}

/**
 * The key of the entry a received Invoice Response writes on the sales invoice it answers: one per response document
 * (a buyer may answer AB, then IP, then AP, then PD), each a keyed insert, never an update of an earlier one.
 */
export function invoiceResponseKey(responseDocumentId: string): string {
  return `invoice-response:${responseDocumentId}`;
}

/** The steps of a tax report, as they stand on the reported invoice's history (`tax-report:<step>`). */
export const TAX_REPORT_STEPS = ['skipped', 'built', 'refused', 'submitted', 'accepted', 'rejected', 'failed'] as const;
export type TaxReportStep = (typeof TAX_REPORT_STEPS)[number] | 'retry';
/**
 * A report after the first, asked for through the API (a new submit after one that was not accepted, a resubmit, a
 * disregard): its number (2, 3, …) and TDD type code are part of its entries' keys; the first report's (number 1,
 * a submit) have neither (`tax-report:<step>`).
 */
export interface TaxReportRef {
  sequence: number;
  typeCode: TaxReportTypeCode;
}

/** TDT-007 Tax data type code per report type: S submit, R resubmit (corrects an earlier report), D disregard. */
export const TAX_REPORT_TYPE_CODES = { submit: 'S', resubmit: 'R', disregard: 'D' } as const;
export type TaxReportType = keyof typeof TAX_REPORT_TYPE_CODES;
export type TaxReportTypeCode = (typeof TAX_REPORT_TYPE_CODES)[TaxReportType];

/** The first report of a document: the submit the gateway makes by itself. */
export const FIRST_TAX_REPORT: TaxReportRef = { sequence: 1, typeCode: 'S' };

const TAX_REPORT_KEY = new RegExp(
  `^tax-report:(?:([2-9]|[1-9]\\d{1,2})-([SRD]):)?(${TAX_REPORT_STEPS.join('|')}|retry-\\d{1,6})$`,
);

/** The key of a tax report step on the reported invoice (a retry: one per attempt), of the first report or a later one. */
export function taxReportKey(step: TaxReportStep, attempt?: number, report?: TaxReportRef): string {
  const prefix = report && report.sequence > 1 ? `tax-report:${report.sequence}-${report.typeCode}:` : 'tax-report:';
  return step === 'retry' ? `${prefix}retry-${attempt ?? 0}` : `${prefix}${step}`;
}

/** What a tax report entry's key says: the report (number 1 is the first, a submit) and the step. */
export function taxReportEntryOf(key: string): (TaxReportRef & { step: TaxReportStep }) | undefined {
  const m = TAX_REPORT_KEY.exec(key);
  if (!m) return undefined;
  return {
    sequence: m[1] ? Number(m[1]) : 1,
    typeCode: (m[2] as TaxReportTypeCode | undefined) ?? 'S',
    step: m[3]!.startsWith('retry-') ? 'retry' : (m[3] as TaxReportStep),
  };
}

/** The report type (TDD TDT-007) of a type code. */
export function reportTypeOf(typeCode: TaxReportTypeCode): TaxReportType {
  return (Object.keys(TAX_REPORT_TYPE_CODES) as TaxReportType[]).find((t) => TAX_REPORT_TYPE_CODES[t] === typeCode)!;
}

/** The report type a caller named, or undefined when it names none. */
export function parseTaxReportType(value: unknown): TaxReportType | undefined {
  return typeof value === 'string' && Object.hasOwn(TAX_REPORT_TYPE_CODES, value)
    ? (value as TaxReportType)
    : undefined;
}

/** Keyed steps repeated once per referencing document: all at one place in the order, by time among themselves. */
const KEYED: Array<{ pattern: RegExp; order: number; state: string }> = [
  { pattern: /^invoice-response:[0-9a-f-]{36}$/, order: FINAL - 2, state: DocumentState.InvoiceResponseReceived },
  { pattern: TAX_REPORT_KEY, order: FINAL - 3, state: DocumentState.TaxReport },
];

/** States of side entries: recorded on the history, never the document's state (see DocumentState.TaxReport). */
export const SIDE_STATES: ReadonlySet<string> = new Set([DocumentState.TaxReport]);

const FIXED = new Map<string, { order: number; states: readonly string[] }>(
  Object.values(HistoryStep).map((s) => [s.key, s]),
);
const REPEATED: Array<{ pattern: RegExp; offset: number; state: string }> = [
  { pattern: /^send-attempt-(\d{1,6})$/, offset: 0, state: DocumentState.Sending },
  { pattern: /^retry-(\d{1,6})$/, offset: 1, state: DocumentState.Retrying },
];

/**
 * Each resend of a document in InvoiceSentError is a generation: its entries are written under `g<n>:<key>` and
 * stand after every entry of the generations before (the final one included), so the state is the new run's.
 */
const GENERATION_SPAN = 2 * FINAL;
const GENERATION = /^g(\d{1,4}):(.+)$/;

/** The history key of a step in generation `generation` (0: the upload's own run). */
export function generationKey(generation: number, key: string): string {
  return generation > 0 ? `g${generation}:${key}` : key;
}

/** The generation a key belongs to. */
export function generationOf(key: string): number {
  const m = GENERATION.exec(key);
  return m ? Number(m[1]) : 0;
}

/**
 * Where a history entry stands in the document's sequence, and whether `state` may be written under `key`. Throws
 * for a key or state outside the table: a step that writes something the table does not know is a programming error.
 */
export function historyOrder(key: string, state: string): number {
  const generation = GENERATION.exec(key);
  if (generation) return Number(generation[1]) * GENERATION_SPAN + stepOrder(generation[2]!, state);
  return stepOrder(key, state);
}

function stepOrder(key: string, state: string): number {
  const fixed = FIXED.get(key);
  if (fixed) {
    if (!fixed.states.includes(state)) throw new Error(`history step ${key} cannot record state ${state}`);
    return fixed.order;
  }
  for (const k of KEYED) {
    if (!k.pattern.test(key)) continue;
    if (state !== k.state) throw new Error(`history step ${key} cannot record state ${state}`);
    return k.order;
  }
  for (const r of REPEATED) {
    const m = r.pattern.exec(key);
    if (!m) continue;
    if (state !== r.state) throw new Error(`history step ${key} cannot record state ${state}`);
    // Attempt n's entry, then its retry's, between validation and the final entry.
    return 10 + 2 * Number(m[1]) + r.offset;
  }
  throw new Error(`unknown history step ${key}`);
}

/** The topics a document's transitions publish (src/core/topics.ts lists every topic). */
export type DocumentTopic =
  'InvoiceSent' | 'InvoiceSentRetry' | 'InvoiceSentError' | 'InvoiceReceived' | 'InvoiceReceivedError';

/** One change of a document's state: the state it writes, the states it may follow, its history key, its topic. */
export interface DocumentTransition {
  readonly to: DocumentStateName;
  /** The states the document may be in before it (a step never moves a document back in its sequence). */
  readonly from: readonly DocumentStateName[];
  /** The history key it is written under (repeated steps: per attempt). */
  key(attempt: number): string;
  /** The event it publishes, if any. */
  readonly topic?: DocumentTopic;
}

const S = DocumentState;
const fixedKey =
  (key: string): ((attempt: number) => string) =>
  () =>
    key;
const UPLOADED = [S.Received, S.Accepted] as const;
// A document of a format without pinned rules may still go by e-mail (Peppol refuses it: only validated documents).
const SENDABLE = [S.Validated, S.NotValidated, S.Resending, S.Sending, S.Retrying] as const;

/**
 * Every transition of a document, sent or received: which state may follow which, under which history key, and which
 * event it publishes. Every step writes its entries through this table (DocumentRepository.recordTransition), so no
 * step decides on its own which state and key to write.
 */
export const Transition = {
  detected: { to: S.Detected, from: UPLOADED, key: fixedKey(HistoryStep.detect.key) },
  rejected: { to: S.Rejected, from: UPLOADED, key: fixedKey(HistoryStep.detect.key) },
  validated: { to: S.Validated, from: [S.Detected], key: fixedKey(HistoryStep.validate.key) },
  notValidated: { to: S.NotValidated, from: [S.Detected], key: fixedKey(HistoryStep.validate.key) },
  invalid: { to: S.Invalid, from: [S.Detected], key: fixedKey(HistoryStep.validate.key) },
  sendAttempt: { to: S.Sending, from: SENDABLE, key: sendAttemptKey },
  retry: { to: S.Retrying, from: SENDABLE, key: retryKey, topic: 'InvoiceSentRetry' },
  delivered: { to: S.Delivered, from: [S.Sending], key: fixedKey(HistoryStep.delivered.key), topic: 'InvoiceSent' },
  sendError: {
    to: S.InvoiceSentError,
    from: [S.Rejected, S.Invalid, ...SENDABLE],
    key: fixedKey(HistoryStep.sendError.key),
    topic: 'InvoiceSentError',
  },
  dropped: { to: S.Dropped, from: SENDABLE, key: fixedKey(HistoryStep.dropped.key) },
  /** A resend: the next generation's first entry; its run records its steps in that generation. */
  resend: { to: S.Resending, from: [S.InvoiceSentError], key: fixedKey(HistoryStep.resend.key) },
  /** A received document: its detection entry is what tells its party (an invoice or credit note). */
  received: { to: S.Detected, from: [S.Received], key: fixedKey(HistoryStep.detect.key), topic: 'InvoiceReceived' },
  receivedUnreadable: {
    to: S.Rejected,
    from: [S.Received],
    key: fixedKey(HistoryStep.detect.key),
    topic: 'InvoiceReceivedError',
  },
  /** A received MLS that breaks an MLS rule: recorded with the rule, announced to nobody (no document to name). */
  receivedMlsRefused: { to: S.Rejected, from: [S.Received], key: fixedKey(HistoryStep.detect.key) },
  /**
   * A sent document's MLS arrived (MessageLevelStatusReceived). It is the state only while no final entry exists;
   * after `delivered` / InvoiceSentError it is recorded on the history and the final state stays.
   */
  mlsReceived: {
    to: S.MlsReceived,
    from: [S.Sending, S.Retrying],
    key: fixedKey(HistoryStep.mlsReceived.key),
  },
  /**
   * A received document of another kind (invoice responses, orders, order responses): recorded; its own topic
   * (InvoiceResponseReceived, OrderReceived, OrderResponseReceived) is published by the step that reads it.
   */
  receivedOther: { to: S.Detected, from: [S.Received], key: fixedKey(HistoryStep.detect.key) },
  /**
   * A received invoice response, order or order response that cannot be read (or names nothing it must name): stored,
   * recorded with the precise reason, announced on its kind's own error topic (never InvoiceReceivedError).
   */
  receivedOtherUnreadable: { to: S.Rejected, from: [S.Received], key: fixedKey(HistoryStep.detect.key) },
} as const satisfies Record<string, DocumentTransition>;

export type TransitionName = keyof typeof Transition;

/** The transition an InvoiceSent* topic records. */
export function sendTransition(topic: 'InvoiceSent' | 'InvoiceSentRetry' | 'InvoiceSentError'): DocumentTransition {
  return topic === 'InvoiceSent'
    ? Transition.delivered
    : topic === 'InvoiceSentRetry'
      ? Transition.retry
      : Transition.sendError;
}

/** States after which nothing else happens to the document. */
export function isFinalOrder(order: number): boolean {
  return order % GENERATION_SPAN >= FINAL;
}
