import { sleep, uuid4 } from '@temporalio/workflow';
import { nextDelay, type RetrySchedule } from '../src/core/retry-schedule';

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
 * publishes the error event. Every attempt gets the first attempt's time, so each is the same message.
 */
export async function attemptOnPeppolSchedule<R extends ScheduledAttempt>(
  schedule: RetrySchedule,
  attemptOnce: (attempt: number, firstAttemptAt: string) => Promise<R>,
  publishEvent: (sent: R, event: ScheduledEvent, fields: ScheduledEventFields) => Promise<unknown>,
): Promise<ScheduledRun<R>> {
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
    const sent = await attemptOnce(attempt, firstAttemptAt);
    if (sent.outcome === 'delivered' || sent.outcome === 'duplicate') {
      const eventId = await publish(sent, 'sent', attempt, {});
      return { outcome: 'sent', last: sent, attempts: attempt, eventId };
    }
    const reason = sent.reason ?? sent.outcome;
    if (sent.outcome === 'failed') {
      const eventId = await publish(sent, 'error', attempt, { reason });
      return { outcome: 'refused', last: sent, attempts: attempt, reason, eventId };
    }
    const delay = nextDelay(schedule, attempt, Date.now() - startedAt, undefined, Math.random, previous);
    if (delay === null) {
      const eventId = await publish(sent, 'error', attempt, {
        reason: `no delivery after ${attempt} attempts: ${reason}`,
      });
      return { outcome: 'exhausted', last: sent, attempts: attempt, reason, eventId };
    }
    const nextAttemptOn = new Date(Date.now() + delay).toISOString();
    await publish(sent, 'retry', attempt, { reason, nextAttemptOn });
    previous = delay;
    await sleep(delay);
  }
}
