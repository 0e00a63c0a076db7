import { sleep, uuid4 } from '@temporalio/workflow';
import { PEPPOL_SEND_SCHEDULE, nextDelay } from '../src/core/retry-schedule';
import { deliverySteps, documentSteps } from './activity-stubs';
import type { SendMlsInput, SendMlsResult } from './contracts/send-mls';
import { searchProgress } from './run-search';

/**
 * Sends one message-level status (MLS) for a received document over Peppol AS4, on the Peppol retry schedule: a
 * receipt (or the peer's "already have it") publishes MessageLevelStatusSent; a temporary failure (5xx, no answer,
 * SMP unreachable) waits and tries again; a refusal or the exhausted schedule ends the run (the MLS document's history
 * says why). Every attempt is the same message (ids and times fixed by the document and the first attempt).
 */
export async function sendMessageLevelStatus(input: SendMlsInput): Promise<SendMlsResult> {
  const result = await send(input);
  // How it ended, for operators' searches: MessageLevelStatusSent, or the run's outcome (no topic announces those).
  searchProgress({ outcome: result.outcome === 'sent' ? 'MessageLevelStatusSent' : result.outcome });
  return result;
}

async function send(input: SendMlsInput): Promise<SendMlsResult> {
  const schedule = input.peppolSchedule ?? PEPPOL_SEND_SCHEDULE;
  const startedAt = Date.now();
  const firstAttemptAt = new Date(startedAt).toISOString();
  const { peppolSchedule: _schedule, requestedBy: _by, ...what } = input;
  let previous: number | undefined;
  for (let attempt = 1; ; attempt++) {
    searchProgress({ attempt });
    const sent = await deliverySteps.sendMlsAttempt({ ...what, attempt, firstAttemptAt });
    if (sent.outcome === 'delivered' || sent.outcome === 'duplicate') {
      const eventId = uuid4();
      await documentSteps.publishMlsSent({
        tenantId: input.tenantId,
        documentId: input.documentId,
        mlsDocumentId: sent.mlsDocumentId,
        responseCode: input.responseCode,
        ...(input.description !== undefined ? { description: input.description } : {}),
        attempt,
        messageId: sent.messageId,
        to: sent.to,
        eventId,
      });
      return { outcome: 'sent', mlsDocumentId: sent.mlsDocumentId, attempts: attempt, eventId };
    }
    const reason = sent.reason ?? sent.outcome;
    if (sent.outcome === 'failed')
      return { outcome: 'refused', mlsDocumentId: sent.mlsDocumentId, attempts: attempt, reason };
    const delay = nextDelay(schedule, attempt, Date.now() - startedAt, undefined, Math.random, previous);
    if (delay === null) return { outcome: 'exhausted', mlsDocumentId: sent.mlsDocumentId, attempts: attempt, reason };
    previous = delay;
    searchProgress({ nextAttemptOn: new Date(Date.now() + delay) });
    await sleep(delay);
    searchProgress({ nextAttemptOn: null });
  }
}
