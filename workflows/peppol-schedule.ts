import { sleep, uuid4 } from '@temporalio/workflow';
import { nextDelay, type RetrySchedule } from '../src/core/retry-schedule';
import { DocumentState } from '../src/core/document-states';
import { searchProgress } from './run-search';

/** What one attempt of a scheduled Peppol send reports. */
export interface ScheduledAttempt {
  outcome: 'delivered' | 'duplicate' | 'retryable' | 'failed';
  reason?: string;
  to: string;
  endpoint: string;
  messageId: string;
}

export type ScheduledEvent = 'sent' | 'retry' | 'error';

/** The fields every event of a scheduled send carries (its own id, fresh per event, and the attempt's report). */
export interface ScheduledEventFields {
  eventId: string;
  attempt: number;
  to: string;
  endpoint: string;
  messageId: string;
  reason?: string;
  nextAttemptOn?: string;
}

export interface ScheduledRun<R> {
  outcome: 'sent' | 'refused' | 'exhausted';
  /** The last attempt's report. */
  last: R;
  attempts: number;
  /** Why it did not go (refused, exhausted). */
  reason?: string;
  /** The final event. */
  eventId: string;
}

/**
 * The attempts of one document on the Peppol retry schedule (sendInvoiceResponse, sendOrder, sendOrderResponse): a
 * receipt (or the peer's "already have it") publishes the sent event; a temporary failure (5xx, no answer, SMP
 * unreachable) publishes a retry event with the next attempt's time and waits; a refusal or the exhausted schedule
 * publishes the error event. Every attempt gets the first attempt's time, so each is the same message. The run's
 * Attempt and NextAttemptOn search attributes follow the attempts, and its DocumentState (sending, retrying, delivered,
 * InvoiceSentError: the record's) where the run's DocumentId is the document sent (`documentState`).
 */
export async function attemptOnPeppolSchedule<R extends ScheduledAttempt>(
  schedule: RetrySchedule,
  attemptOnce: (attempt: number, firstAttemptAt: string) => Promise<R>,
  publishEvent: (sent: R, event: ScheduledEvent, fields: ScheduledEventFields) => Promise<unknown>,
  documentState = false,
): Promise<ScheduledRun<R>> {
  const progress = (state: string, p: Parameters<typeof searchProgress>[0] = {}) =>
    searchProgress({ ...(documentState ? { state } : {}), ...p });
  const publish = async (
    sent: R,
    event: ScheduledEvent,
    attempt: number,
    extra: { reason?: string; nextAttemptOn?: string },
  ): Promise<string> => {
    const eventId = uuid4();
    const { to, endpoint, messageId } = sent;
    await publishEvent(sent, event, { eventId, attempt, to, endpoint, messageId, ...extra });
    return eventId;
  };
  const startedAt = Date.now();
  const firstAttemptAt = new Date(startedAt).toISOString();
  let previous: number | undefined;
  for (let attempt = 1; ; attempt++) {
    progress(DocumentState.Sending, { attempt });
    const sent = await attemptOnce(attempt, firstAttemptAt);
    if (sent.outcome === 'delivered' || sent.outcome === 'duplicate') {
      const eventId = await publish(sent, 'sent', attempt, {});
      progress(DocumentState.Delivered);
      return { outcome: 'sent', last: sent, attempts: attempt, eventId };
    }
    const reason = sent.reason ?? sent.outcome;
    if (sent.outcome === 'failed') {
      const eventId = await publish(sent, 'error', attempt, { reason });
      progress(DocumentState.InvoiceSentError);
      return { outcome: 'refused', last: sent, attempts: attempt, reason, eventId };
    }
    const delay = nextDelay(schedule, attempt, Date.now() - startedAt, undefined, Math.random, previous);
    if (delay === null) {
      const eventId = await publish(sent, 'error', attempt, {
        reason: `no delivery after ${attempt} attempts: ${reason}`,
      });
      progress(DocumentState.InvoiceSentError);
      return { outcome: 'exhausted', last: sent, attempts: attempt, reason, eventId };
    }
    const due = new Date(Date.now() + delay);
    await publish(sent, 'retry', attempt, { reason, nextAttemptOn: due.toISOString() });
    progress(DocumentState.Retrying, { nextAttemptOn: due });
    previous = delay;
    await sleep(delay);
    searchProgress({ nextAttemptOn: null });
  }
}
