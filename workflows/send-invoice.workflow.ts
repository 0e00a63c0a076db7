import { condition, defineSignal, setHandler, uuid4 } from '@temporalio/workflow';
import type {
  CheckDocumentResult,
  DetectedFormatSummary,
  PeppolRoute,
  SendEventInput,
  SendInvoiceInput,
  SendInvoiceResult,
  SendPeppolOutcome,
  SendStage,
  ValidationOutcome,
} from './contracts/send-invoice';
import { RETRY_NOW_SIGNAL } from './contracts/send-invoice';
import { documentKindValue } from './contracts/search-attributes';
import { searchProgress } from './run-search';
import { documentSteps, deliverySteps, validationSteps } from './activity-stubs';
import {
  ChannelStatus,
  MAX_CHANNEL_HOPS,
  channelKey,
  documentKindOf,
  nextSendTopic,
  type Channel,
} from '../src/core/channels';
import { DocumentState } from '../src/core/document-states';
import { startTaxReport } from './start-document-run';
import { EMAIL_SEND_SCHEDULE, nextDelay, PEPPOL_SEND_SCHEDULE, type RetrySchedule } from '../src/core/retry-schedule';

/**
 * One run per uploaded sales invoice; the workflow id is the business key (tenant + documentId). Carries ids and the
 * facts the document check found (format, routing, party), never the bytes (payload limits). Steps: check (detect,
 * validate), then the channels (src/core/channels.ts): the sending topic (`SendInvoice`) is published and its channel
 * chosen; Peppol resolves the recipient (a validated conversion when it does not take the uploaded format) and sends
 * over AS4, a mail hook sends the e-mail, a drop hook ends it. A channel's result goes through its output rules: a
 * match names the next sending topic (`SendInvoiceFallback`) and its channel; none gives the standard topics. A
 * refused format or an invalid payload ends in InvoiceSentError; temporary failures are retried on the channel's
 * schedule with an InvoiceSentRetry each; a receipt or the relay's acceptance ends in delivered with InvoiceSent
 * (spec 3, 6.7, 7). The run is the single owner of the document's fate.
 */
export const retryNowSignal = defineSignal(RETRY_NOW_SIGNAL);

export async function sendInvoice(input: SendInvoiceInput): Promise<SendInvoiceResult> {
  const wake = { retryNow: false };
  // A retryNow outside a wait is kept for the next one (an operator asking while an attempt runs).
  setHandler(retryNowSignal, () => {
    wake.retryNow = true;
  });
  const checked = await validationSteps.checkDocument(input);
  const { detection, validation, facts } = checked;
  const ids = { tenantId: input.tenantId, documentId: input.documentId };
  // A resend's final entry goes in its own generation, like every step of the run.
  const eventIds = { ...ids, ...(input.generation ? { generation: input.generation } : {}) };
  // Operators search runs by party, kind and state (docs/operations.md).
  searchProgress({
    partyId: facts.partyId,
    ...(detection.ok ? { kind: documentKindValue(documentKindOf(detection.format.documentType)) } : {}),
    state: !detection.ok
      ? DocumentState.Rejected
      : validation?.kind === 'invalid'
        ? DocumentState.Invalid
        : validation?.kind === 'not-validated'
          ? DocumentState.NotValidated
          : DocumentState.Validated,
  });
  if (!detection.ok) {
    const event = await documentSteps.publishSendEvent({
      ...eventIds,
      topic: 'InvoiceSentError',
      eventId: uuid4(),
      facts,
      stage: 'detection',
      message: `Invalid payload: ${detection.message}`,
      reasonCode: detection.code,
    });
    searchProgress({ state: DocumentState.InvoiceSentError, outcome: 'InvoiceSentError' });
    return { documentId: input.documentId, state: DocumentState.InvoiceSentError, detection, event };
  }
  const sourceDocumentTypeId = detection.format.documentTypeId;
  if (validation?.kind === 'invalid') {
    const event = await documentSteps.publishSendEvent({
      ...eventIds,
      topic: 'InvoiceSentError',
      eventId: uuid4(),
      facts,
      ...(sourceDocumentTypeId ? { sourceDocumentTypeId } : {}),
      stage: 'validation',
      message: `Invalid payload: ${validation.summary}`,
      reasonCode: validation.reasonCodes.join(','),
    });
    searchProgress({ state: DocumentState.InvoiceSentError, outcome: 'InvoiceSentError' });
    return { documentId: input.documentId, state: DocumentState.InvoiceSentError, detection, validation, event };
  }
  // The tax report goes beside delivery, in its own run: reporting never blocks or undoes the delivery.
  if (checked.taxReporting)
    await startTaxReport({ ...ids, direction: 'outbound' }, checked.taxReporting, input.peppolSchedule);
  // checkDocument validates every document whose format it detected.
  return new Sending(input, checked, detection.format, validation!, wake).run();
}

/** The Channel search attribute of a channel kind. */
const CHANNEL_NAMES: Record<Channel['kind'], string> = {
  peppol: 'peppol',
  mailto: 'email',
  https: 'https',
  drop: 'drop',
};

/** Human-readable wait, for event messages. */
function duration(ms: number): string {
  if (ms < 1000) return `${ms} ms`;
  if (ms < 60_000) return `${Math.round(ms / 1000)} s`;
  if (ms < 3_600_000) return `${Math.round(ms / 60_000)} min`;
  return `${Math.round((ms / 3_600_000) * 10) / 10} h`;
}

type EventFields = Omit<SendEventInput, 'tenantId' | 'documentId' | 'eventId' | 'facts' | 'sourceDocumentTypeId'>;
type Failure = Omit<EventFields, 'topic'>;

/** What one channel did: delivered (the run's result), or a result code for its output rules and the failure. */
type ChannelResult =
  | { delivered: SendInvoiceResult }
  /** `final`: no other channel may take it (a seller the uploader may not send as). */
  | { status: number; failure: Failure; final?: boolean };

/** One attempt of a scheduled channel (e-mail, https). */
type AttemptResult =
  | { kind: 'delivered'; event: Failure }
  | { kind: 'retry'; failure: Failure }
  | { kind: 'failed'; result: Extract<ChannelResult, { status: number }> };

/**
 * A scheduled channel's attempt that did not deliver: a retry, or the result code output rules see (404 when nobody
 * is there, else 400). A seller the uploader may not send as is final on every channel.
 */
function notDelivered(
  sent: { outcome: string; reason?: string; senderRefused?: boolean },
  how: { stage: SendStage; reasonCode: string; notFound: boolean },
  where: Partial<Failure>,
): AttemptResult {
  const reasonCode = sent.senderRefused ? 'SENDER_NOT_ALLOWED' : how.reasonCode;
  const failure: Failure = {
    stage: sent.senderRefused ? 'sender' : how.stage,
    reasonCode,
    message: sent.reason ?? reasonCode,
    ...where,
  };
  if (sent.outcome === 'retryable') return { kind: 'retry', failure };
  const status = how.notFound ? ChannelStatus.NotFound : ChannelStatus.Refused;
  return { kind: 'failed', result: { status, failure, ...(sent.senderRefused ? { final: true } : {}) } };
}

/** Peppol refusals that mean "not reachable there" (404 for output rules); the other refusals are 400. */
const NOT_FOUND_CODES = new Set([
  'PEPPOL_NOT_CONFIGURED',
  'NO_DOCUMENT_TYPE',
  'PARTICIPANT_UNKNOWN',
  'DOCUMENT_TYPE_NOT_SUPPORTED',
  'CERTIFICATE_PROBLEM',
]);

/** The delivery part of one run: the channels in turn, one attempt counter over all of them (history keys). */
class Sending {
  private attempts = 0;
  private readonly ids: { tenantId: string; documentId: string; generation?: number };
  private readonly kind: string;
  private readonly base: Pick<SendInvoiceResult, 'documentId' | 'detection' | 'validation'>;

  constructor(
    private readonly input: SendInvoiceInput,
    private readonly checked: CheckDocumentResult,
    private readonly format: DetectedFormatSummary,
    private readonly validation: ValidationOutcome,
    private readonly wake: { retryNow: boolean },
  ) {
    // A resend's steps are recorded in its own generation (the ids travel with every step).
    this.ids = {
      tenantId: input.tenantId,
      documentId: input.documentId,
      ...(input.generation ? { generation: input.generation } : {}),
    };
    this.kind = documentKindOf(format.documentType);
    this.base = { documentId: input.documentId, detection: checked.detection, validation };
  }

  async run(): Promise<SendInvoiceResult> {
    const tried: string[] = [];
    let topic = `Send${this.kind}`;
    let last: Failure | undefined;
    for (let hop = 0; hop < MAX_CHANNEL_HOPS; hop++) {
      const first = hop === 0;
      const choice = await documentSteps.chooseChannel({
        ...this.ids,
        eventId: uuid4(),
        topic,
        kind: this.kind,
        facts: this.checked.facts,
        format: this.format,
        first,
        ...(first && this.input.channel ? { forced: this.input.channel } : {}),
        tried: [...tried],
        ...(last ? { because: last.message } : {}),
      });
      if (!choice.ok) {
        const failure: Failure = last
          ? { ...last, message: `${last.message}; no other channel: ${choice.reason}` }
          : { stage: 'channel', reasonCode: 'NO_CHANNEL', message: `Not sent: ${choice.reason}` };
        return this.fail(failure);
      }
      const channel = choice.channel;
      searchProgress({ channel: CHANNEL_NAMES[channel.kind] });
      if (channel.kind === 'drop') {
        // chooseChannel recorded the drop on the document: deliberately not sent, no InvoiceSent* topic.
        searchProgress({ state: DocumentState.Dropped, outcome: 'dropped' });
        return {
          ...this.base,
          state: DocumentState.Dropped,
          delivery: { attempts: this.attempts, channel: channel.hookId },
        };
      }
      tried.push(channelKey(channel));
      const result =
        channel.kind === 'peppol'
          ? await this.peppol(channel)
          : channel.kind === 'mailto'
            ? await this.email(channel)
            : await this.https(channel, topic);
      if ('delivered' in result) return result.delivered;
      const next = result.final ? undefined : nextSendTopic(channel, result.status, this.kind);
      if (next === undefined) return this.fail(result.failure);
      last = result.failure;
      topic = next;
    }
    return this.fail({ ...last!, message: `${last!.message}; stopped after ${MAX_CHANNEL_HOPS} channels` });
  }

  /** The next attempt of the run (over all channels). */
  private attempt(): number {
    const attempt = ++this.attempts;
    searchProgress({ state: DocumentState.Sending, attempt });
    return attempt;
  }

  private publish(e: EventFields) {
    const source = this.format.documentTypeId ? { sourceDocumentTypeId: this.format.documentTypeId } : {};
    return documentSteps.publishSendEvent({
      ...this.ids,
      eventId: uuid4(),
      facts: this.checked.facts,
      ...source,
      ...e,
    });
  }

  /** Publishes the run's final topic and answers the run's result with it. */
  private async end(topic: 'InvoiceSent' | 'InvoiceSentError', e: Failure): Promise<SendInvoiceResult> {
    const event = await this.publish({ topic, ...e });
    const state = topic === 'InvoiceSent' ? DocumentState.Delivered : DocumentState.InvoiceSentError;
    searchProgress({ state, outcome: topic });
    return {
      ...this.base,
      state: topic === 'InvoiceSent' ? DocumentState.Delivered : DocumentState.InvoiceSentError,
      event,
      delivery: {
        attempts: this.attempts,
        ...(e.messageId ? { messageId: e.messageId } : {}),
        ...(e.endpoint ? { endpoint: e.endpoint } : {}),
        ...(e.channel ? { channel: e.channel } : {}),
        ...(e.protocol ? { protocol: e.protocol } : {}),
      },
    };
  }

  private fail(e: Failure): Promise<SendInvoiceResult> {
    return this.end('InvoiceSentError', e);
  }

  private async delivered(e: Failure): Promise<ChannelResult> {
    return { delivered: await this.end('InvoiceSent', e) };
  }

  /**
   * Waits before the channel's next attempt, announcing it with InvoiceSentRetry; false when the schedule is spent.
   * `n` counts this channel's attempts (the schedule's index), `failure` is the attempt's.
   */
  private async retryLater(
    schedule: RetrySchedule,
    n: number,
    startedAt: number,
    previous: number | undefined,
    failure: Failure,
  ): Promise<number | null> {
    const delay = nextDelay(schedule, n, Date.now() - startedAt, undefined, Math.random, previous);
    if (delay === null) return null;
    const due = new Date(Date.now() + delay);
    const at = due.toISOString();
    await this.publish({
      topic: 'InvoiceSentRetry',
      ...failure,
      nextAttemptOn: at,
      message:
        `Attempt ${failure.attempt} failed temporarily (${failure.message}); ` +
        `the next follows in ${duration(delay)} (at ${at})`,
    });
    // Operators find the runs waiting, and until when, in the Temporal UI (NextAttemptOn).
    searchProgress({ state: DocumentState.Retrying, nextAttemptOn: due });
    // Woken early by retryNow (also one that came while the attempt ran); either way the next attempt follows.
    await condition(() => this.wake.retryNow, delay);
    this.wake.retryNow = false;
    searchProgress({ nextAttemptOn: null });
    return delay;
  }

  /** Peppol: SML/SMP, conversion when needed, AS4; 5xx and unreachable lookups retried on the Peppol schedule. */
  private async peppol(channel: Extract<Channel, { kind: 'peppol' }>): Promise<ChannelResult> {
    const { facts } = this.checked;
    const via = { channel: channelKey(channel), protocol: 'peppol' as const };
    // Only documents that passed their official rules go out: the network's receivers refuse what fails them, and a
    // format without rules here cannot be vouched for (the reason is the validation outcome's).
    if (this.validation.kind !== 'valid') {
      const reason = this.validation.kind === 'not-validated' ? this.validation.reason : this.validation.summary;
      return {
        status: ChannelStatus.Refused,
        failure: {
          ...via,
          stage: 'validation',
          reasonCode: 'NOT_VALIDATED',
          attempt: this.attempts,
          message: `Not sent over Peppol: the document was not validated against official rules (${reason})`,
        },
      };
    }
    const schedule = this.input.peppolSchedule ?? PEPPOL_SEND_SCHEDULE;
    const startedAt = Date.now();
    const firstAttemptAt = new Date(startedAt).toISOString();
    let route: PeppolRoute | undefined;
    let previousDelay: number | undefined;
    for (let n = 1; ; n++) {
      const attempt = this.attempt();
      let failure: Failure;
      // Until a route is found, an attempt resolves the recipient and sends along what it found in one activity.
      let sent: SendPeppolOutcome | undefined;
      if (!route) {
        const first = await deliverySteps.resolveAndSendPeppol({
          ...this.ids,
          format: this.format,
          facts,
          attempt,
          firstAttemptAt,
        });
        const resolved = first.resolved;
        if (resolved.kind === 'refused') {
          const e: Failure = {
            ...via,
            stage: resolved.stage,
            reasonCode: resolved.reasonCode,
            message: resolved.message,
            attempt,
            ...(resolved.recipient ? { recipient: resolved.recipient } : {}),
          };
          if (!resolved.retryable) {
            // No attempt was made: the recipient cannot be sent to over Peppol at all.
            this.attempts--;
            e.attempt = attempt - 1;
            searchProgress({ attempt: this.attempts });
            const status = NOT_FOUND_CODES.has(resolved.reasonCode) ? ChannelStatus.NotFound : ChannelStatus.Refused;
            // A tenant never sends as another company, over any channel.
            return { status, failure: e, ...(resolved.stage === 'sender' ? { final: true } : {}) };
          }
          failure = e;
        } else if ('sent' in first) {
          route = resolved.route;
          sent = first.sent;
        }
      }
      if (route) {
        sent ??= await deliverySteps.sendPeppol({ ...this.ids, facts, route, attempt, firstAttemptAt });
        const where = {
          ...via,
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
          return this.delivered({
            stage: 'delivery',
            message: `Delivered to ${route.receiver.value} over Peppol${converted} (${how})`,
            ...where,
          });
        }
        const status = sent.httpStatus !== undefined ? `HTTP ${sent.httpStatus}` : 'NO_ANSWER';
        if (sent.outcome === 'failed') {
          return {
            status: ChannelStatus.Refused,
            failure: {
              stage: 'delivery',
              reasonCode: status,
              message: `Delivery refused by the receiving access point: ${sent.reason ?? status}`,
              ...where,
            },
          };
        }
        failure = { stage: 'delivery', reasonCode: status, message: sent.reason ?? status, ...where };
      }
      const delay = await this.retryLater(schedule, n, startedAt, previousDelay, failure!);
      if (delay === null) {
        return {
          status: ChannelStatus.Exhausted,
          failure: { ...failure!, message: `Not delivered after ${n} attempts; the last failed: ${failure!.message}` },
        };
      }
      previousDelay = delay;
    }
  }

  /**
   * A channel's attempts on its schedule: each attempt either delivers, fails for good (its result code for output
   * rules) or fails temporarily, and then the next follows after the schedule's wait (InvoiceSentRetry) until the
   * schedule is spent (500). `what` names the attempts in the final message ("e-mail attempts").
   */
  private async attemptsOn(
    schedule: RetrySchedule,
    what: string,
    attempt: (n: number) => Promise<AttemptResult>,
  ): Promise<ChannelResult> {
    const startedAt = Date.now();
    let previousDelay: number | undefined;
    for (let n = 1; ; n++) {
      const result = await attempt(this.attempt());
      if (result.kind === 'delivered') return this.delivered(result.event);
      if (result.kind === 'failed') return result.result;
      const failure = result.failure;
      const delay = await this.retryLater(schedule, n, startedAt, previousDelay, failure);
      if (delay === null) {
        return {
          status: ChannelStatus.Exhausted,
          failure: { ...failure, message: `Not delivered after ${n} ${what}; the last failed: ${failure.message}` },
        };
      }
      previousDelay = delay;
    }
  }

  /** E-mail through a mail hook: 4xx and no connection retried on the e-mail schedule, 5xx and no address final. */
  private email(channel: Extract<Channel, { kind: 'mailto' }>): Promise<ChannelResult> {
    const { facts } = this.checked;
    const schedule = this.input.emailSchedule ?? EMAIL_SEND_SCHEDULE;
    return this.attemptsOn(schedule, 'e-mail attempts', async (attempt) => {
      const sent = await deliverySteps.sendEmail({
        ...this.ids,
        facts,
        format: this.format,
        hookId: channel.hookId,
        attempt,
      });
      const where = {
        channel: channel.hookId,
        protocol: 'email' as const,
        endpoint: sent.endpoint,
        messageId: sent.messageId,
        attempt,
      };
      if (sent.outcome === 'delivered') {
        return {
          kind: 'delivered',
          event: { stage: 'email', message: `Delivered by e-mail to ${sent.endpoint.slice(7)}`, ...where },
        };
      }
      const code = sent.smtpCode !== undefined ? `SMTP ${sent.smtpCode}` : sent.noRecipient ? 'NO_ADDRESS' : 'EMAIL';
      return notDelivered(sent, { stage: 'email', reasonCode: code, notFound: sent.noRecipient === true }, where);
    });
  }

  /**
   * The document POSTed to an https hook: 5xx, 408, 429 and no answer retried on the Peppol schedule; 404 / 410 and a
   * hook gone are 404 for output rules, other answers 400.
   */
  private https(channel: Extract<Channel, { kind: 'https' }>, topic: string): Promise<ChannelResult> {
    const { facts } = this.checked;
    const schedule = this.input.peppolSchedule ?? PEPPOL_SEND_SCHEDULE;
    return this.attemptsOn(schedule, 'https attempts', async (attempt) => {
      const sent = await deliverySteps.sendHttps({ ...this.ids, facts, topic, hookId: channel.hookId, attempt });
      const where = {
        channel: channel.hookId,
        protocol: 'https' as const,
        endpoint: sent.endpoint,
        messageId: sent.messageId,
        attempt,
      };
      if (sent.outcome === 'delivered') {
        const message = `Handed to ${sent.endpoint} through the https hook ${channel.hookId} (${sent.reason ?? ''})`;
        return { kind: 'delivered', event: { stage: 'https', message, ...where } };
      }
      const code = sent.httpStatus !== undefined ? `HTTP ${sent.httpStatus}` : 'NO_ANSWER';
      return notDelivered(sent, { stage: 'https', reasonCode: code, notFound: sent.notFound === true }, where);
    });
  }
}
