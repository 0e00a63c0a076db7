import type { DeliveryEventInput } from '../../workflows/contracts/deliver-webhook';
import type { PublishEventInput } from './publish';

export type { DeliveryEventInput, DeliveryNoticeKind } from '../../workflows/contracts/deliver-webhook';

/**
 * The events about one delivery: HookSentRetry (a retry follows), HookSentError (the end: exhausted or 410 Gone) and
 * an output rule's topic (the event handed on). They repeat the original's party, documents and topic from the event
 * the run carries, so publishing one reads nothing: looking the original up by id is a scan of the events on FerretDB
 * and held up every other delivery each time an attempt failed (decisions.md "Events about a delivery carry the
 * original").
 */

/** The event to publish about a delivery's attempt. */
export function deliveryEventToPublish(input: DeliveryEventInput): PublishEventInput {
  const original = input.original.event;
  const partyKey = input.original.partyKey;
  const party = partyKey ? { partyId: partyKey, legalEntityId: original.partyId } : null;
  const common = {
    id: input.eventId,
    tenantId: input.tenantId,
    party,
    documentId: original.documentId,
    refToDocumentId: original.refToDocumentId,
    createdBy: 'gateway',
  };
  const failure = {
    hookId: input.hookId,
    url: input.url,
    attempt: String(input.attempt),
    httpStatus: input.httpStatus === undefined ? '' : String(input.httpStatus),
    error: input.error,
    deliveryId: input.deliveryId,
    originalTopic: original.topic,
    originalEventId: original.id,
  };
  const cause = input.httpStatus !== undefined ? `HTTP ${input.httpStatus}` : input.error;
  switch (input.kind.topic) {
    case 'HookSentRetry':
      return {
        ...common,
        topic: 'HookSentRetry',
        message:
          `Delivery of ${original.topic} to hook ${input.hookId} failed (${cause}); ` +
          `attempt ${input.attempt + 1} follows at ${input.kind.nextAttemptOn}`,
        details: { ...failure, nextAttemptOn: input.kind.nextAttemptOn },
      };
    case 'HookSentError':
      return {
        ...common,
        topic: 'HookSentError',
        message:
          input.kind.reason === 'gone'
            ? `Hook ${input.hookId} answered 410 Gone to ${original.topic} and was switched off`
            : `Delivery of ${original.topic} to hook ${input.hookId} failed after ${input.attempt} attempts ` +
              `(${cause}); no more retries`,
        details: { ...failure, reason: input.kind.reason },
      };
    case 'output':
      // The hook's output rule hands the original event on under a new topic; never back to the same hook.
      return {
        ...common,
        createdBy: original.createdBy,
        topic: input.kind.outputTopic,
        message: original.message,
        details: {
          ...original.details,
          originalTopic: original.topic,
          originalEventId: original.id,
          outputOfHookId: input.hookId,
          httpStatus: failure.httpStatus,
          error: input.error,
        },
        excludeHookIds: [input.hookId],
      };
  }
}
