import { sleep, uuid4 } from '@temporalio/workflow';
import type {
  CheckDocumentResult,
  DetectedFormatSummary,
  PeppolRoute,
  SendEventInput,
  SendInvoiceInput,
  SendInvoiceResult,
  ValidationOutcome,
} from './contracts/send-invoice';
import { documentSteps, peppolSteps, validationSteps } from './activity-stubs';
import { DocumentState } from '../src/core/document-states';
import { nextDelay, PEPPOL_SEND_SCHEDULE } from '../src/core/retry-schedule';

/**
 * One run per uploaded sales invoice; the workflow id is the business key (tenant + documentId). Carries ids and the
 * facts the document check found (format, routing, party), never the bytes (payload limits). Steps: check (detect,
 * validate) → resolve the recipient → deliver over Peppol AS4. A recipient that does not take the uploaded format
 * gets a validated conversion that its SMP lists (resolveRecipient picks and stores it once). A refused format, an
 * invalid payload or a permanent delivery failure ends in InvoiceSentError with its event; temporary failures are
 * retried on the run's schedule with an InvoiceSentRetry event each; a receipt ends in delivered with InvoiceSent
 * (spec 3, 7). The e-mail fallback is not built yet.
 */
export async function sendInvoice(input: SendInvoiceInput): Promise<SendInvoiceResult> {
  const checked = await validationSteps.checkDocument(input);
  const { detection, validation, facts } = checked;
  const ids = { tenantId: input.tenantId, documentId: input.documentId };
  if (!detection.ok) {
    const event = await documentSteps.publishSendEvent({
      ...ids,
      topic: 'InvoiceSentError',
      eventId: uuid4(),
      facts,
      stage: 'detection',
      message: `Invalid payload: ${detection.message}`,
      reasonCode: detection.code,
    });
    return { documentId: input.documentId, state: DocumentState.InvoiceSentError, detection, event };
  }
  const sourceDocumentTypeId = detection.format.documentTypeId;
  if (validation?.kind === 'invalid') {
    const event = await documentSteps.publishSendEvent({
      ...ids,
      topic: 'InvoiceSentError',
      eventId: uuid4(),
      facts,
      ...(sourceDocumentTypeId ? { sourceDocumentTypeId } : {}),
      stage: 'validation',
      message: `Invalid payload: ${validation.summary}`,
      reasonCode: validation.reasonCodes.join(','),
    });
    return { documentId: input.documentId, state: DocumentState.InvoiceSentError, detection, validation, event };
  }
  // checkDocument validates every document whose format it detected.
  return deliver(input, checked, detection.format, validation!);
}

/** Human-readable wait, for event messages. */
function duration(ms: number): string {
  if (ms < 1000) return `${ms} ms`;
  if (ms < 60_000) return `${Math.round(ms / 1000)} s`;
  if (ms < 3_600_000) return `${Math.round(ms / 60_000)} min`;
  return `${Math.round((ms / 3_600_000) * 10) / 10} h`;
}

type EventFields = Omit<SendEventInput, 'tenantId' | 'documentId' | 'eventId' | 'facts' | 'sourceDocumentTypeId'>;

async function deliver(
  input: SendInvoiceInput,
  checked: CheckDocumentResult,
  format: DetectedFormatSummary,
  validation: ValidationOutcome,
): Promise<SendInvoiceResult> {
  const { detection, facts } = checked;
  const base = { documentId: input.documentId, detection, validation };
  const ids = { tenantId: input.tenantId, documentId: input.documentId };
  const source = format.documentTypeId ? { sourceDocumentTypeId: format.documentTypeId } : {};
  const publish = (e: EventFields) =>
    documentSteps.publishSendEvent({ ...ids, eventId: uuid4(), facts, ...source, ...e });
  const fail = async (e: Omit<EventFields, 'topic'>, attempts: number) => {
    const event = await publish({ topic: 'InvoiceSentError', ...e });
    return {
      ...base,
      state: DocumentState.InvoiceSentError,
      event,
      delivery: {
        attempts,
        ...(e.messageId ? { messageId: e.messageId } : {}),
        ...(e.endpoint ? { endpoint: e.endpoint } : {}),
      },
    };
  };

  // Only documents that passed their official rules go out: the network's receivers refuse what fails them, and a
  // format without rules here cannot be vouched for (the reason is the validation outcome's).
  if (validation.kind !== 'valid') {
    const reason = validation.kind === 'not-validated' ? validation.reason : validation.summary;
    return fail(
      {
        stage: 'validation',
        reasonCode: 'NOT_VALIDATED',
        message: `Not sent over Peppol: the document was not validated against official rules (${reason})`,
      },
      0,
    );
  }

  const schedule = input.peppolSchedule ?? PEPPOL_SEND_SCHEDULE;
  const startedAt = Date.now();
  const firstAttemptAt = new Date(startedAt).toISOString();
  let route: PeppolRoute | undefined;
  let previousDelay: number | undefined;
  for (let attempt = 1; ; attempt++) {
    let failure: Omit<EventFields, 'topic'>;
    if (!route) {
      const resolved = await peppolSteps.resolveRecipient({ ...ids, format, facts });
      if (resolved.kind === 'refused') {
        const e = {
          stage: resolved.stage,
          reasonCode: resolved.reasonCode,
          message: resolved.message,
          attempt,
          ...(resolved.recipient ? { recipient: resolved.recipient } : {}),
        };
        if (!resolved.retryable) return fail({ ...e, attempt: attempt - 1 }, attempt - 1);
        failure = e;
      } else route = resolved.route;
    }
    if (route) {
      const sent = await peppolSteps.sendPeppol({ ...ids, facts, route, attempt, firstAttemptAt });
      const where = {
        recipient: route.receiver.value,
        endpoint: sent.endpoint,
        messageId: sent.messageId,
        attempt,
        targetDocumentTypeId: route.documentType.value,
      };
      if (sent.outcome === 'delivered' || sent.outcome === 'duplicate') {
        const how =
          sent.outcome === 'duplicate'
            ? 'the receiving access point already had it from an earlier attempt'
            : `receipt ${sent.receiptMessageId ?? ''}`.trim();
        const lost = route.transform?.notCarried
          ? ` (${route.transform.notCarried} element(s) could not be carried over)`
          : '';
        const converted = route.transform
          ? ` as ${route.transform.targetName}, converted because the recipient does not take the uploaded ` +
            `format${lost}`
          : '';
        const event = await publish({
          topic: 'InvoiceSent',
          stage: 'delivery',
          message: `Delivered to ${route.receiver.value} over Peppol${converted} (${how})`,
          ...where,
        });
        return {
          ...base,
          state: DocumentState.Delivered,
          event,
          delivery: { attempts: attempt, messageId: sent.messageId, endpoint: sent.endpoint },
        };
      }
      const status = sent.httpStatus !== undefined ? `HTTP ${sent.httpStatus}` : 'NO_ANSWER';
      if (sent.outcome === 'failed') {
        return fail(
          {
            stage: 'delivery',
            reasonCode: status,
            message: `Delivery refused by the receiving access point: ${sent.reason ?? status}`,
            ...where,
          },
          attempt,
        );
      }
      failure = { stage: 'delivery', reasonCode: status, message: sent.reason ?? status, ...where };
    }
    const delay = nextDelay(schedule, attempt, Date.now() - startedAt, undefined, Math.random, previousDelay);
    if (delay === null) {
      return fail(
        { ...failure!, message: `Not delivered after ${attempt} attempts; the last failed: ${failure!.message}` },
        attempt,
      );
    }
    await publish({
      topic: 'InvoiceSentRetry',
      ...failure!,
      message: `Attempt ${attempt} failed temporarily (${failure!.message}); the next follows in ${duration(delay)}`,
    });
    previousDelay = delay;
    await sleep(delay);
  }
}
