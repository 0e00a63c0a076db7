import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { Context } from '@temporalio/activity';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import { PEPPOL_SEND_SCHEDULE, type RetrySchedule } from '../../src/core/retry-schedule';
import type { Channel } from '../../src/core/channels';
import type {
  CheckDocumentResult,
  ChooseChannelInput,
  ChooseChannelOutcome,
  SendEmailInput,
  SendEmailOutcome,
  SendHttpsInput,
  SendHttpsOutcome,
  DocumentFacts,
  PeppolRoute,
  ResolveAndSendInput,
  ResolveAndSendOutcome,
  ResolveRecipientInput,
  ResolveRecipientOutcome,
  SendEventInput,
  SendInvoiceInput,
  SendInvoiceResult,
  SendPeppolInput,
  SendPeppolOutcome,
} from '../../workflows/contracts/send-invoice';
import { RETRY_NOW_SIGNAL, SEND_INVOICE_WORKFLOW } from '../../workflows/contracts/send-invoice';
import { eventually } from '../support/poll';
import { timeSkippingEnvironment, withStubbedWorker } from '../support/time-skipping';

/*
 * Every branch of sendInvoice on the time-skipping server with stubbed activities: what the workflow decides from the
 * steps' answers (which step runs next, which event it publishes with which fields, when it gives up), without an SMP
 * or an AS4 peer. The retry schedules run on server time, so the default schedule of 35 hours passes in seconds.
 */

const FACTS: DocumentFacts = {
  blobId: 'blob-1',
  partyId: '0106:12345678',
  legalEntityId: 'NL:0106:12345678',
  createdBy: 'api',
  pdf: false,
  root: { namespaceURI: 'urn:oasis:names:specification:ubl:schema:xsd:Invoice-2', localName: 'Invoice' },
  routing: {
    ok: true,
    sender: { scheme: 'iso6523-actorid-upis', value: '0106:12345678' },
    receiver: { scheme: 'iso6523-actorid-upis', value: '0106:87654321' },
    countryC1: 'NL',
  },
};
const SOURCE_TYPE = 'urn:oasis:names:specification:ubl:schema:xsd:Invoice-2::Invoice##bis3::2.1';
const DETECTED: CheckDocumentResult['detection'] = {
  ok: true,
  format: {
    id: 'peppol-bis3-ubl-invoice',
    name: 'BIS 3',
    syntax: 'UBL',
    documentType: 'Invoice',
    documentTypeId: SOURCE_TYPE,
  },
};
const VALID: CheckDocumentResult = {
  detection: DETECTED,
  validation: { kind: 'valid', warnings: 0, ruleSets: ['r@1'] },
  facts: FACTS,
};
const ROUTE: PeppolRoute = {
  sender: FACTS.routing!.ok ? FACTS.routing!.sender : { scheme: '', value: '' },
  receiver: { scheme: 'iso6523-actorid-upis', value: '0106:87654321' },
  countryC1: 'NL',
  documentType: { scheme: 'busdox-docid-qns', value: SOURCE_TYPE },
  process: { scheme: 'cenbii-procid-ubl', value: 'urn:fdc:peppol.eu:2017:poacc:billing:01:1.0' },
  smpUrl: 'https://smp.example.test',
  endpointUrl: 'https://ap.example.test/as4',
  receiverCertificate: 'AA==',
};
const FOUND: ResolveRecipientOutcome = { kind: 'found', route: ROUTE };
const answer = (outcome: SendPeppolOutcome['outcome'], httpStatus?: number): SendPeppolOutcome => ({
  outcome,
  messageId: 'm-1@invoice-gateway',
  endpoint: ROUTE.endpointUrl,
  ...(httpStatus !== undefined ? { httpStatus } : {}),
  ...(outcome === 'delivered' ? { receiptMessageId: 'r-1' } : {}),
  ...(outcome === 'failed' || outcome === 'retryable' ? { reason: `HTTP ${httpStatus ?? 'none'}` } : {}),
});

interface Script {
  check: CheckDocumentResult;
  /** The channel of each sending topic in turn; default: the implicit Peppol channel, no fallback. */
  channels?: Array<Channel | { reason: string }>;
  resolve?: ResolveRecipientOutcome[];
  send?: SendPeppolOutcome[];
  emails?: SendEmailOutcome[];
  posts?: SendHttpsOutcome[];
  schedule?: RetrySchedule;
  emailSchedule?: RetrySchedule;
  /** `?channel=` of the upload. */
  channel?: string;
  /** Signal retryNow once the first InvoiceSentRetry is published. */
  retryNowAfterFirstRetry?: boolean;
  /** With RECORD_REPLAY_HISTORIES=1: the run's history is saved as test/replay/histories/<record>.json. */
  record?: string;
}

/** Where recorded runs go (test/workflows/replay.test.ts replays them). */
const HISTORIES = path.resolve(__dirname, '../replay/histories');

const IMPLICIT: Channel = { kind: 'peppol', hookId: null, output: [], mlsType: null };
const FALLBACK_RULES = [
  { when: '400', topic: 'Send*Fallback' },
  { when: '404', topic: 'Send*Fallback' },
  { when: '500', topic: 'Send*Fallback' },
];
const MAIL: Channel = { kind: 'mailto', hookId: 'hook-mail', output: [] };
const HTTPS: Channel = { kind: 'https', hookId: 'hook-erp', output: [] };
const postAnswer = (outcome: SendHttpsOutcome['outcome'], extra: Partial<SendHttpsOutcome> = {}): SendHttpsOutcome => ({
  outcome,
  endpoint: 'https://erp.example.test/inbox',
  messageId: 'd-1',
  ...extra,
});
const mailAnswer = (outcome: SendEmailOutcome['outcome'], extra: Partial<SendEmailOutcome> = {}): SendEmailOutcome => ({
  outcome,
  endpoint: 'mailto:billing@buyer.example',
  messageId: '<doc.hook-mail@gateway.example>',
  ...extra,
});

interface Run {
  result: SendInvoiceResult;
  calls: string[];
  events: SendEventInput[];
  resolves: ResolveRecipientInput[];
  sends: SendPeppolInput[];
  choices: ChooseChannelInput[];
  emails: SendEmailInput[];
  posts: SendHttpsInput[];
  /** The activity types the run scheduled, in order. */
  scheduled: string[];
  /** Server time from the first step to the last (when each was scheduled). */
  serverMs: number;
}

describe('sendInvoice branches (time-skipping server, stubbed activities)', () => {
  const env = timeSkippingEnvironment();

  async function run(script: Script): Promise<Run> {
    const calls: string[] = [];
    // Server time as the workflow's steps see it: when each activity was scheduled. The clock read after the result
    // is no measure: once the run has ended and before the client locks time again, the server may jump to a timer
    // it still holds (seen once as a jump of ten years).
    const stamps: number[] = [];
    // The activities the run scheduled, in order (each one a round trip to the server and events in the history).
    const scheduled: string[] = [];
    const stamp = () => {
      stamps.push(Context.current().info.currentAttemptScheduledTimestampMs);
      scheduled.push(Context.current().info.activityType);
    };
    const events: SendEventInput[] = [];
    const resolves: ResolveRecipientInput[] = [];
    const sends: SendPeppolInput[] = [];
    const choices: ChooseChannelInput[] = [];
    const emails: SendEmailInput[] = [];
    const posts: SendHttpsInput[] = [];
    const postAnswers = [...(script.posts ?? [])];
    const resolveAnswers = [...(script.resolve ?? [])];
    const sendAnswers = [...(script.send ?? [])];
    const channelAnswers = [...(script.channels ?? [])];
    const emailAnswers = [...(script.emails ?? [])];
    const activities = {
      checkDocument: async (input: SendInvoiceInput) => {
        stamp();
        calls.push(`checkDocument:${input.documentId === documentId}`);
        return script.check;
      },
      chooseChannel: async (input: ChooseChannelInput): Promise<ChooseChannelOutcome> => {
        stamp();
        calls.push(`chooseChannel:${input.topic}`);
        choices.push(input);
        const next = script.channels ? channelAnswers.shift() : IMPLICIT;
        if (!next) throw new Error('chooseChannel called more often than scripted');
        const event = { eventId: input.eventId, label: 'routed' };
        return 'reason' in next ? { ok: false, reason: next.reason, event } : { ok: true, channel: next, event };
      },
      sendEmail: async (input: SendEmailInput) => {
        stamp();
        calls.push(`sendEmail:${input.attempt}`);
        emails.push(input);
        const next = emailAnswers.shift();
        if (!next) throw new Error('sendEmail called more often than scripted');
        return next;
      },
      sendHttps: async (input: SendHttpsInput) => {
        stamp();
        calls.push(`sendHttps:${input.attempt}`);
        posts.push(input);
        const next = postAnswers.shift();
        if (!next) throw new Error('sendHttps called more often than scripted');
        return next;
      },
      resolveRecipient: async (input: ResolveRecipientInput) => {
        stamp();
        calls.push('resolveRecipient');
        resolves.push(input);
        const next = resolveAnswers.shift();
        if (!next) throw new Error('resolveRecipient called more often than scripted');
        return next;
      },
      sendPeppol: async (input: SendPeppolInput) => {
        stamp();
        calls.push(`sendPeppol:${input.attempt}`);
        sends.push(input);
        const next = sendAnswers.shift();
        if (!next) throw new Error('sendPeppol called more often than scripted');
        return next;
      },
      // The first Peppol attempt: the scripted resolution, then (when it found a route) the scripted send, in one
      // activity; calls lists both steps, `scheduled` the one activity.
      resolveAndSendPeppol: async (input: ResolveAndSendInput): Promise<ResolveAndSendOutcome> => {
        const resolved = await activities.resolveRecipient(input);
        if (resolved.kind === 'refused') return { resolved };
        const { format: _format, ...rest } = input;
        const sent = await activities.sendPeppol({ ...rest, route: resolved.route });
        scheduled.pop();
        return { resolved, sent };
      },
      publishSendEvent: async (input: SendEventInput) => {
        stamp();
        calls.push(`publish:${input.topic}`);
        events.push(input);
        return { eventId: input.eventId, label: 'routed' };
      },
    };
    const documentId = randomUUID();
    const result = await withStubbedWorker(env(), activities, async (client, taskQueue) => {
      const workflowId = `send-invoice:test:${documentId}`;
      const handle = await client.workflow.start(SEND_INVOICE_WORKFLOW, {
        taskQueue,
        workflowId,
        args: [
          {
            tenantId: 'test',
            documentId,
            ...(script.schedule ? { peppolSchedule: script.schedule } : {}),
            ...(script.emailSchedule ? { emailSchedule: script.emailSchedule } : {}),
            ...(script.channel ? { channel: script.channel } : {}),
          },
        ],
      });
      if (script.retryNowAfterFirstRetry) {
        // Server time only skips while a result is awaited: the run waits here until the signal wakes it.
        await eventually(async () => events.some((e) => e.topic === 'InvoiceSentRetry') || undefined, 30_000);
        await handle.signal(RETRY_NOW_SIGNAL);
      }
      const out = (await handle.result()) as SendInvoiceResult;
      if (process.env['RECORD_REPLAY_HISTORIES'] && script.record) {
        const history = await client.workflow.getHandle(workflowId).fetchHistory();
        writeFileSync(path.join(HISTORIES, `${script.record}.json`), `${historyToJSON(history)}\n`);
      }
      return out;
    });
    return {
      result,
      calls,
      events,
      resolves,
      sends,
      choices,
      emails,
      posts,
      scheduled,
      serverMs: stamps.length ? stamps.at(-1)! - stamps[0]! : 0,
    };
  }

  it('a refused format ends in InvoiceSentError (stage detection) without validation or delivery', async () => {
    const r = await run({
      record: 'send-invoice-refused-format',
      check: { detection: { ok: false, code: 'UNKNOWN_FORMAT', message: 'not an invoice' }, facts: FACTS },
    });
    expect(r.calls).toEqual(['checkDocument:true', 'publish:InvoiceSentError']);
    expect(r.events[0]).toMatchObject({
      stage: 'detection',
      reasonCode: 'UNKNOWN_FORMAT',
      message: 'Invalid payload: not an invoice',
      facts: FACTS,
    });
    expect(r.events[0]!.sourceDocumentTypeId).toBeUndefined();
    expect(r.result).toMatchObject({ state: 'InvoiceSentError', detection: { ok: false }, event: { label: 'routed' } });
    expect(r.result.validation).toBeUndefined();
  });

  it('an invalid payload ends in InvoiceSentError (stage validation) with the reason codes', async () => {
    const r = await run({
      record: 'send-invoice-invalid-payload',
      check: {
        detection: DETECTED,
        validation: { kind: 'invalid', errors: 2, reasonCodes: ['BV', 'SV'], summary: '[BV] BR-01 at /Invoice' },
        facts: FACTS,
      },
    });
    expect(r.calls).toEqual(['checkDocument:true', 'publish:InvoiceSentError']);
    expect(r.events[0]).toMatchObject({
      stage: 'validation',
      reasonCode: 'BV,SV',
      message: 'Invalid payload: [BV] BR-01 at /Invoice',
      sourceDocumentTypeId: SOURCE_TYPE,
    });
    expect(r.result).toMatchObject({ state: 'InvoiceSentError', validation: { kind: 'invalid' } });
  });

  it('a document not validated against official rules is not sent (NOT_VALIDATED)', async () => {
    const r = await run({
      record: 'send-invoice-not-validated',
      check: { detection: DETECTED, validation: { kind: 'not-validated', reason: 'no rules for it' }, facts: FACTS },
    });
    expect(r.calls).toEqual(['checkDocument:true', 'chooseChannel:SendInvoice', 'publish:InvoiceSentError']);
    expect(r.events[0]).toMatchObject({ stage: 'validation', reasonCode: 'NOT_VALIDATED' });
    expect(r.events[0]!.message).toContain('(no rules for it)');
    expect(r.result).toMatchObject({ state: 'InvoiceSentError', delivery: { attempts: 0 } });
  });

  it('an unknown recipient ends in InvoiceSentError (stage lookup) without an attempt', async () => {
    const refused: ResolveRecipientOutcome = {
      kind: 'refused',
      retryable: false,
      stage: 'lookup',
      reasonCode: 'PARTICIPANT_UNKNOWN',
      message: 'not on Peppol',
      recipient: '0106:87654321',
    };
    const r = await run({
      record: 'send-invoice-recipient-unknown',
      check: VALID,
      resolve: [refused],
    });
    expect(r.calls).toEqual([
      'checkDocument:true',
      'chooseChannel:SendInvoice',
      'resolveRecipient',
      'publish:InvoiceSentError',
    ]);
    expect(r.scheduled).toEqual(['checkDocument', 'chooseChannel', 'resolveAndSendPeppol', 'publishSendEvent']);
    // The route is chosen from what the check found: the format and the facts travel with the run.
    expect(r.resolves[0]).toMatchObject({ format: DETECTED.ok ? DETECTED.format : {}, facts: FACTS });
    expect(r.events[0]).toMatchObject({
      stage: 'lookup',
      reasonCode: 'PARTICIPANT_UNKNOWN',
      recipient: '0106:87654321',
      attempt: 0,
    });
    expect(r.result).toMatchObject({ state: 'InvoiceSentError', delivery: { attempts: 0 } });
  });

  it('a lookup that fails temporarily is retried on the schedule, then the invoice is delivered', async () => {
    const unreachable: ResolveRecipientOutcome = {
      kind: 'refused',
      retryable: true,
      stage: 'lookup',
      reasonCode: 'SMP_UNREACHABLE',
      message: 'SMP answered 503',
      recipient: '0106:87654321',
    };
    const r = await run({
      record: 'send-invoice-lookup-retried',
      check: VALID,
      resolve: [unreachable, FOUND],
      send: [answer('delivered', 200)],
    });
    expect(r.calls).toEqual([
      'checkDocument:true',
      'chooseChannel:SendInvoice',
      'resolveRecipient',
      'publish:InvoiceSentRetry',
      'resolveRecipient',
      'sendPeppol:2',
      'publish:InvoiceSent',
    ]);
    expect(r.events[0]).toMatchObject({ stage: 'lookup', reasonCode: 'SMP_UNREACHABLE', attempt: 1 });
    expect(r.events[0]!.message).toMatch(
      /^Attempt 1 failed temporarily \(SMP answered 503\); the next follows in 10 min \(at \d{4}-[\d-]+T[\d:.]+Z\)$/,
    );
    expect(r.serverMs).toBeGreaterThanOrEqual(PEPPOL_SEND_SCHEDULE.delaysMs[0]!);
    expect(r.result).toMatchObject({ state: 'delivered', delivery: { attempts: 2 } });
  });

  it('temporary delivery failures are retried on the default schedule (hours of server time), then sent', async () => {
    const wall = Date.now();
    const r = await run({
      record: 'send-invoice-retried-then-delivered',
      check: VALID,
      resolve: [FOUND],
      send: [answer('retryable', 503), answer('retryable'), answer('delivered', 200)],
    });
    expect(r.calls).toEqual([
      'checkDocument:true',
      'chooseChannel:SendInvoice',
      'resolveRecipient',
      'sendPeppol:1',
      'publish:InvoiceSentRetry',
      'sendPeppol:2',
      'publish:InvoiceSentRetry',
      'sendPeppol:3',
      'publish:InvoiceSent',
    ]);
    // The first attempt resolves and sends in one activity; later attempts send along the route it found.
    expect(r.scheduled).toEqual([
      'checkDocument',
      'chooseChannel',
      'resolveAndSendPeppol',
      'publishSendEvent',
      'sendPeppol',
      'publishSendEvent',
      'sendPeppol',
      'publishSendEvent',
    ]);
    // Every attempt is the same message: the route and the first attempt's time are carried unchanged.
    expect(new Set(r.sends.map((s) => s.firstAttemptAt)).size).toBe(1);
    expect(r.sends.every((s) => s.route.endpointUrl === ROUTE.endpointUrl && s.facts.blobId === FACTS.blobId)).toBe(
      true,
    );
    expect(r.events.map((e) => [e.topic, e.reasonCode, e.attempt])).toEqual([
      ['InvoiceSentRetry', 'HTTP 503', 1],
      ['InvoiceSentRetry', 'NO_ANSWER', 2],
      ['InvoiceSent', undefined, 3],
    ]);
    expect(r.events[2]).toMatchObject({
      stage: 'delivery',
      endpoint: ROUTE.endpointUrl,
      messageId: 'm-1@invoice-gateway',
      targetDocumentTypeId: SOURCE_TYPE,
      message: 'Delivered to 0106:87654321 over Peppol (receipt r-1)',
    });
    const [first, second] = PEPPOL_SEND_SCHEDULE.delaysMs;
    expect(r.serverMs).toBeGreaterThanOrEqual(first! + second!);
    expect(Date.now() - wall).toBeLessThan(60_000);
    expect(r.result).toMatchObject({ state: 'delivered', delivery: { attempts: 3, messageId: 'm-1@invoice-gateway' } });
  });

  it('a permanent refusal by the receiving access point ends in InvoiceSentError at once', async () => {
    const r = await run({
      record: 'send-invoice-refused-by-peer',
      check: VALID,
      resolve: [FOUND],
      send: [answer('failed', 400)],
    });
    expect(r.calls).toEqual([
      'checkDocument:true',
      'chooseChannel:SendInvoice',
      'resolveRecipient',
      'sendPeppol:1',
      'publish:InvoiceSentError',
    ]);
    expect(r.events[0]).toMatchObject({
      stage: 'delivery',
      reasonCode: 'HTTP 400',
      attempt: 1,
      message: 'Delivery refused by the receiving access point: HTTP 400',
    });
    expect(r.result).toMatchObject({
      state: 'InvoiceSentError',
      delivery: { attempts: 1, endpoint: ROUTE.endpointUrl },
    });
  });

  it('gives up when the schedule runs out: a retry event per failed attempt, then InvoiceSentError', async () => {
    const r = await run({
      record: 'send-invoice-retries-exhausted',
      check: VALID,
      resolve: [FOUND],
      send: [answer('retryable', 503), answer('retryable', 503), answer('retryable', 503)],
      schedule: { kind: 'table', delaysMs: [60_000, 120_000] },
    });
    expect(r.calls).toEqual([
      'checkDocument:true',
      'chooseChannel:SendInvoice',
      'resolveRecipient',
      'sendPeppol:1',
      'publish:InvoiceSentRetry',
      'sendPeppol:2',
      'publish:InvoiceSentRetry',
      'sendPeppol:3',
      'publish:InvoiceSentError',
    ]);
    expect(r.events[2]).toMatchObject({ stage: 'delivery', reasonCode: 'HTTP 503', attempt: 3 });
    expect(r.events[2]!.message).toBe('Not delivered after 3 attempts; the last failed: HTTP 503');
    expect(r.result).toMatchObject({ state: 'InvoiceSentError', delivery: { attempts: 3 } });
  });

  it('a converted route is delivered and said so; a duplicate answer counts as delivered', async () => {
    const converted: PeppolRoute = {
      ...ROUTE,
      documentType: { scheme: 'busdox-docid-qns', value: 'cii-type' },
      transform: { targetFormat: 'en16931-cii', targetName: 'EN 16931 CII', notCarried: 2, blobId: 'blob-converted' },
    };
    const r = await run({
      record: 'send-invoice-converted',
      check: VALID,
      resolve: [{ kind: 'found', route: converted }],
      send: [answer('duplicate', 200)],
    });
    expect(r.calls).toEqual([
      'checkDocument:true',
      'chooseChannel:SendInvoice',
      'resolveRecipient',
      'sendPeppol:1',
      'publish:InvoiceSent',
    ]);
    expect(r.sends[0]!.route.transform).toEqual(converted.transform);
    expect(r.events[0]).toMatchObject({ targetDocumentTypeId: 'cii-type', sourceDocumentTypeId: SOURCE_TYPE });
    expect(r.events[0]!.message).toBe(
      'Delivered to 0106:87654321 over Peppol as EN 16931 CII, converted because the recipient does not take the ' +
        'uploaded format (2 element(s) could not be carried over) (the receiving access point already had it from an ' +
        'earlier attempt)',
    );
    expect(r.result).toMatchObject({ state: 'delivered', delivery: { attempts: 1 } });
  });

  it('a worker without Peppol settings ends the invoice in InvoiceSentError (stage configuration)', async () => {
    const r = await run({
      check: VALID,
      resolve: [
        {
          kind: 'refused',
          retryable: false,
          stage: 'configuration',
          reasonCode: 'PEPPOL_NOT_CONFIGURED',
          message: 'x',
        },
      ],
    });
    expect(r.calls).toEqual([
      'checkDocument:true',
      'chooseChannel:SendInvoice',
      'resolveRecipient',
      'publish:InvoiceSentError',
    ]);
    expect(r.events[0]).toMatchObject({ stage: 'configuration', reasonCode: 'PEPPOL_NOT_CONFIGURED', attempt: 0 });
  });

  const NOT_ON_PEPPOL: ResolveRecipientOutcome = {
    kind: 'refused',
    retryable: false,
    stage: 'lookup',
    reasonCode: 'PARTICIPANT_UNKNOWN',
    message: 'The recipient 0106:87654321 is not reachable on Peppol',
    recipient: '0106:87654321',
  };

  it('a recipient not on Peppol: the fallback rule hands it to the mail hook on SendInvoiceFallback', async () => {
    const r = await run({
      record: 'send-invoice-email-fallback',
      check: VALID,
      channels: [{ ...IMPLICIT, output: FALLBACK_RULES }, MAIL],
      resolve: [NOT_ON_PEPPOL],
      emails: [mailAnswer('delivered', { reason: '250 OK' })],
    });
    expect(r.calls).toEqual([
      'checkDocument:true',
      'chooseChannel:SendInvoice',
      'resolveRecipient',
      'chooseChannel:SendInvoiceFallback',
      'sendEmail:1',
      'publish:InvoiceSent',
    ]);
    // The fallback topic is chosen knowing what was tried and why it moved on; no InvoiceSentError in between.
    expect(r.choices[0]).toMatchObject({ first: true, tried: [], kind: 'Invoice' });
    expect(r.choices[1]).toMatchObject({
      first: false,
      tried: ['peppol'],
      because: 'The recipient 0106:87654321 is not reachable on Peppol',
    });
    expect(r.emails[0]).toMatchObject({ hookId: 'hook-mail', attempt: 1, facts: FACTS });
    expect(r.events).toHaveLength(1);
    expect(r.events[0]).toMatchObject({
      topic: 'InvoiceSent',
      stage: 'email',
      protocol: 'email',
      channel: 'hook-mail',
      endpoint: 'mailto:billing@buyer.example',
      messageId: '<doc.hook-mail@gateway.example>',
      attempt: 1,
    });
    expect(r.events[0]!.message).toBe('Delivered by e-mail to billing@buyer.example');
    expect(r.result).toMatchObject({ state: 'delivered', delivery: { protocol: 'email', channel: 'hook-mail' } });
  });

  it('Peppol retries exhausted (500) fall back to e-mail; without a rule the same ends in InvoiceSentError', async () => {
    const schedule: RetrySchedule = { kind: 'table', delaysMs: [60_000] };
    const withRule = await run({
      check: VALID,
      channels: [
        { kind: 'peppol', hookId: 'hook-peppol', output: [{ when: '500', topic: 'Send*Fallback' }], mlsType: null },
        MAIL,
      ],
      resolve: [FOUND],
      send: [answer('retryable', 503), answer('retryable', 503)],
      emails: [mailAnswer('delivered')],
      schedule,
    });
    expect(withRule.calls).toEqual([
      'checkDocument:true',
      'chooseChannel:SendInvoice',
      'resolveRecipient',
      'sendPeppol:1',
      'publish:InvoiceSentRetry',
      'sendPeppol:2',
      'chooseChannel:SendInvoiceFallback',
      'sendEmail:3',
      'publish:InvoiceSent',
    ]);
    expect(withRule.choices[1]!.tried).toEqual(['hook-peppol']);
    expect(withRule.choices[1]!.because).toContain('Not delivered after 2 attempts');

    const without = await run({
      check: VALID,
      channels: [
        { kind: 'peppol', hookId: 'hook-peppol', output: [{ when: '404', topic: 'Send*Fallback' }], mlsType: null },
      ],
      resolve: [FOUND],
      send: [answer('retryable', 503), answer('retryable', 503)],
      schedule,
    });
    expect(without.calls.slice(-1)).toEqual(['publish:InvoiceSentError']);
    expect(without.events.at(-1)).toMatchObject({ protocol: 'peppol', channel: 'hook-peppol', reasonCode: 'HTTP 503' });
  });

  it('SMTP 421 then 250: one InvoiceSentRetry, then InvoiceSent, on the e-mail schedule', async () => {
    const r = await run({
      record: 'send-invoice-email-retried',
      check: VALID,
      channel: 'hook-mail',
      channels: [MAIL],
      emails: [mailAnswer('retryable', { smtpCode: 421, reason: '421 try later' }), mailAnswer('delivered')],
      emailSchedule: { kind: 'table', delaysMs: [5 * 60_000] },
    });
    expect(r.choices[0]).toMatchObject({ forced: 'hook-mail', first: true });
    expect(r.calls).toEqual([
      'checkDocument:true',
      'chooseChannel:SendInvoice',
      'sendEmail:1',
      'publish:InvoiceSentRetry',
      'sendEmail:2',
      'publish:InvoiceSent',
    ]);
    expect(r.events[0]).toMatchObject({
      topic: 'InvoiceSentRetry',
      reasonCode: 'SMTP 421',
      attempt: 1,
      protocol: 'email',
    });
    expect(r.events[0]!.message).toContain('the next follows in 5 min');
    expect(r.serverMs).toBeGreaterThanOrEqual(5 * 60_000);
  });

  it('a permanent SMTP refusal and a missing address end the e-mail channel (400 and 404 for output rules)', async () => {
    const refused = await run({
      check: VALID,
      channels: [MAIL],
      emails: [mailAnswer('failed', { smtpCode: 550, reason: '550 no such user' })],
    });
    expect(refused.events.at(-1)).toMatchObject({ topic: 'InvoiceSentError', reasonCode: 'SMTP 550', stage: 'email' });
    const nobody = await run({
      check: VALID,
      channels: [
        { ...MAIL, output: [{ when: '404', topic: 'Send*Other' }] },
        { reason: 'no channel hook takes SendInvoiceOther' },
      ],
      emails: [mailAnswer('failed', { noRecipient: true, endpoint: 'mailto:', reason: 'nobody to send it to' })],
    });
    expect(nobody.calls).toEqual([
      'checkDocument:true',
      'chooseChannel:SendInvoice',
      'sendEmail:1',
      'chooseChannel:SendInvoiceOther',
      'publish:InvoiceSentError',
    ]);
    expect(nobody.events.at(-1)).toMatchObject({ reasonCode: 'NO_ADDRESS' });
    expect(nobody.events.at(-1)!.message).toBe(
      'nobody to send it to; no other channel: no channel hook takes SendInvoiceOther',
    );
  });

  it('a drop hook ends the document as dropped: no delivery, no InvoiceSent* event', async () => {
    const r = await run({
      record: 'send-invoice-dropped',
      check: VALID,
      channels: [{ kind: 'drop', hookId: 'hook-drop' }],
    });
    expect(r.calls).toEqual(['checkDocument:true', 'chooseChannel:SendInvoice']);
    expect(r.result).toMatchObject({ state: 'dropped', delivery: { attempts: 0, channel: 'hook-drop' } });
  });

  it('no channel for the first topic (a forced hook deleted since) ends in InvoiceSentError (stage channel)', async () => {
    const r = await run({
      check: VALID,
      channel: 'gone',
      channels: [{ reason: 'the channel hook gone does not exist' }],
    });
    expect(r.events[0]).toMatchObject({ topic: 'InvoiceSentError', stage: 'channel', reasonCode: 'NO_CHANNEL' });
    expect(r.events[0]!.message).toBe('Not sent: the channel hook gone does not exist');
  });

  it('an https hook on the fallback topic takes what Peppol could not deliver: 503 retried, then handed on', async () => {
    const r = await run({
      record: 'send-invoice-https-fallback',
      check: VALID,
      channels: [{ ...IMPLICIT, output: FALLBACK_RULES }, HTTPS],
      resolve: [
        {
          kind: 'refused',
          retryable: false,
          stage: 'recipient',
          reasonCode: 'PARTICIPANT_UNKNOWN',
          message: 'not in the SML',
        },
      ],
      posts: [
        postAnswer('retryable', { httpStatus: 503, reason: 'HTTP 503' }),
        postAnswer('delivered', { httpStatus: 200, reason: 'HTTP 200' }),
      ],
      schedule: { kind: 'table', delaysMs: [10 * 60_000] },
    });
    expect(r.calls).toEqual([
      'checkDocument:true',
      'chooseChannel:SendInvoice',
      'resolveRecipient',
      'chooseChannel:SendInvoiceFallback',
      'sendHttps:1',
      'publish:InvoiceSentRetry',
      'sendHttps:2',
      'publish:InvoiceSent',
    ]);
    expect(r.posts.map((p) => [p.topic, p.hookId, p.attempt])).toEqual([
      ['SendInvoiceFallback', 'hook-erp', 1],
      ['SendInvoiceFallback', 'hook-erp', 2],
    ]);
    const retry = r.events[0]!;
    expect(retry).toMatchObject({ topic: 'InvoiceSentRetry', protocol: 'https', reasonCode: 'HTTP 503' });
    // The retry names when the next attempt is due: ten minutes of server time after the event.
    expect(retry.message).toContain('the next follows in 10 min');
    expect(retry.message).toContain(`(at ${retry.nextAttemptOn})`);
    expect(r.serverMs).toBeGreaterThanOrEqual(10 * 60_000);
    expect(r.events[1]).toMatchObject({
      topic: 'InvoiceSent',
      stage: 'https',
      protocol: 'https',
      channel: 'hook-erp',
      endpoint: 'https://erp.example.test/inbox',
    });
    expect(r.result).toMatchObject({ state: 'delivered', delivery: { attempts: 2, channel: 'hook-erp' } });
  });

  it('https answers end the channel as output rules see them: 404 not found, 400 refused, the sender check final', async () => {
    const gone = await run({
      check: VALID,
      channel: 'hook-erp',
      channels: [{ ...HTTPS, output: [{ when: '404', topic: 'Send*Other' }] }, MAIL],
      posts: [postAnswer('failed', { httpStatus: 404, reason: 'HTTP 404', notFound: true })],
      emails: [mailAnswer('delivered')],
    });
    expect(gone.calls).toEqual([
      'checkDocument:true',
      'chooseChannel:SendInvoice',
      'sendHttps:1',
      'chooseChannel:SendInvoiceOther',
      'sendEmail:2',
      'publish:InvoiceSent',
    ]);
    expect(gone.choices[0]).toMatchObject({ forced: 'hook-erp' });
    const refused = await run({
      check: VALID,
      channel: 'hook-erp',
      channels: [{ ...HTTPS, output: [{ when: '404', topic: 'Send*Other' }] }],
      posts: [postAnswer('failed', { httpStatus: 422, reason: 'HTTP 422' })],
    });
    expect(refused.events.at(-1)).toMatchObject({ topic: 'InvoiceSentError', stage: 'https', reasonCode: 'HTTP 422' });
    const spoofed = await run({
      check: VALID,
      channel: 'hook-erp',
      channels: [{ ...HTTPS, output: [{ when: '400', topic: 'Send*Other' }] }],
      posts: [postAnswer('failed', { endpoint: '', reason: 'not the seller', senderRefused: true })],
    });
    expect(spoofed.calls.at(-1)).toBe('publish:InvoiceSentError');
    expect(spoofed.events.at(-1)).toMatchObject({ stage: 'sender', reasonCode: 'SENDER_NOT_ALLOWED' });
  });

  it('retryNow wakes a run waiting between attempts: the next attempt comes at once, not after the wait', async () => {
    const r = await run({
      record: 'send-invoice-retry-now',
      check: VALID,
      resolve: [FOUND],
      send: [answer('retryable', 503), answer('delivered', 200)],
      schedule: { kind: 'table', delaysMs: [6 * 3_600_000] },
      retryNowAfterFirstRetry: true,
    });
    expect(r.calls.slice(-3)).toEqual(['publish:InvoiceSentRetry', 'sendPeppol:2', 'publish:InvoiceSent']);
    expect(r.events[0]!.message).toMatch(/the next follows in 6 h \(at \d{4}-\d\d-\d\dT/);
    expect(r.serverMs).toBeLessThan(3_600_000);
    expect(r.result).toMatchObject({ state: 'delivered', delivery: { attempts: 2 } });
  });
});
