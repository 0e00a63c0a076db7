import { KNOWN_TOPICS } from '../../../src/core/topics';
import {
  EVENT_DETAILS_SCHEMAS,
  EventDetails,
  GatewayEvent,
  buildEventPayload,
  redactUrl,
  serializeEventPayload,
  validateEventDetails,
} from '../../../src/webhooks/event-payload';
import { signDelivery } from '../../../src/webhooks/sign-payload';
import { verifyWebhook } from '../../../src/webhooks/verify-webhook';

const mls: GatewayEvent = {
  id: 'evt-1',
  topic: 'MessageLevelStatusReceived',
  partyId: 'NL:0106:12345678',
  documentId: 'mls-1',
  refToDocumentId: 'inv-1',
  message: 'Message level status received',
  details: {
    profileId: 'p',
    extra: 'kept',
    statusCode: 'AP',
    status: 'Accept',
    description: 'ok',
    documentTypeId: 'd',
  },
  createdBy: 'peppol',
  createdOn: '2026-03-01T13:00:00+01:00',
};

describe('buildEventPayload', () => {
  it('produces exactly the spec 6.3 fields, in order, with this attempt’s sentOn', () => {
    const p = buildEventPayload(mls, 'hook-9', new Date('2026-03-01T12:00:05.123Z'));
    expect(Object.keys(p)).toEqual([
      'topic',
      'partyId',
      'hookId',
      'documentId',
      'refToDocumentId',
      'message',
      'details',
      'createdBy',
      'createdOn',
      'sentOn',
    ]);
    expect(p).toEqual({
      topic: 'MessageLevelStatusReceived',
      partyId: 'NL:0106:12345678',
      hookId: 'hook-9',
      documentId: 'mls-1',
      refToDocumentId: 'inv-1',
      message: 'Message level status received',
      details: {
        statusCode: 'AP',
        status: 'Accept',
        description: 'ok',
        documentTypeId: 'd',
        profileId: 'p',
        extra: 'kept',
      },
      createdBy: 'peppol',
      createdOn: '2026-03-01T13:00:00+01:00',
      sentOn: '2026-03-01T12:00:05.123Z',
    });
  });

  it('orders details by the topic table, then the rest as given', () => {
    const p = buildEventPayload(mls, 'h', '2026-03-01T12:00:00Z');
    expect(Object.keys(p.details)).toEqual([
      'statusCode',
      'status',
      'description',
      'documentTypeId',
      'profileId',
      'extra',
    ]);
  });

  it('omits absent optional ids instead of sending null', () => {
    const p = buildEventPayload({ ...mls, documentId: undefined, refToDocumentId: null }, 'h', '2026-03-01T12:00:00Z');
    expect('documentId' in p).toBe(false);
    expect('refToDocumentId' in p).toBe(false);
    expect(Object.keys(p)).toEqual([
      'topic',
      'partyId',
      'hookId',
      'message',
      'details',
      'createdBy',
      'createdOn',
      'sentOn',
    ]);
  });

  it('normalises sentOn to ISO 8601 UTC and refuses an invalid one', () => {
    expect(buildEventPayload(mls, 'h', '2026-03-01T13:00:00+01:00').sentOn).toBe('2026-03-01T12:00:00.000Z');
    expect(() => buildEventPayload(mls, 'h', 'not a date')).toThrow(RangeError);
    expect(() => buildEventPayload(mls, 'h', new Date(NaN))).toThrow(RangeError);
  });

  it('is deterministic: same event, hook and time give the same bytes; a new attempt only changes sentOn', () => {
    const a = serializeEventPayload(buildEventPayload(mls, 'h', '2026-03-01T12:00:00Z'));
    const b = serializeEventPayload(
      buildEventPayload({ ...mls, details: { ...mls.details } }, 'h', '2026-03-01T12:00:00Z'),
    );
    expect(a).toBe(b);
    const c = serializeEventPayload(buildEventPayload(mls, 'h', '2026-03-01T12:10:00Z'));
    expect(c.replace('12:10:00', '12:00:00')).toBe(a);
  });

  it('drops details values that are not strings (the contract allows strings only)', () => {
    const p = buildEventPayload(
      { ...mls, details: { a: 'x', b: 5 as unknown as string } },
      'h',
      '2026-03-01T12:00:00Z',
    );
    expect(p.details).toEqual({ a: 'x' });
  });

  it('round-trips through sign and verify', () => {
    const sentOn = new Date();
    const body = serializeEventPayload(buildEventPayload(mls, 'h', sentOn));
    const headers = signDelivery({ body, secureKey: 'a-long-enough-secure-key', deliveryId: 'd-1', timestamp: sentOn });
    const r = verifyWebhook(Buffer.from(body), headers, 'a-long-enough-secure-key');
    expect(r).toEqual({ ok: true, payload: JSON.parse(body), deliveryId: 'd-1' });
  });
});

describe('details schemas', () => {
  const hookFailure = {
    hookId: 'h1',
    url: 'https://hooks.example.com/in',
    attempt: '3',
    httpStatus: '503',
    error: 'HTTP 503',
    deliveryId: '792dea9f-193e-521d-96d1-d26f4a1ada6b',
    originalTopic: 'InvoiceReceived',
    originalEventId: 'evt-1',
  };

  it.each<[string, Record<string, string>]>([
    ['InvoiceReceived', { id: 'i', sender: '0106:1', createdBy: 'peppol', documentTypeId: 'd' }],
    [
      'InvoiceSent',
      {
        id: 'i',
        recipient: 'r',
        endpoint: 'e',
        protocol: 'AS4',
        attempt: '1',
        messageId: 'm',
        sourceDocumentTypeId: 's',
        targetDocumentTypeId: 't',
      },
    ],
    [
      'InvoiceSentRetry',
      {
        id: 'i',
        recipient: 'r',
        endpoint: 'e',
        protocol: 'AS4',
        attempt: '2',
        messageId: 'm',
        sourceDocumentTypeId: 's',
        targetDocumentTypeId: 't',
      },
    ],
    [
      'InvoiceSentError',
      {
        id: 'i',
        recipient: '',
        endpoint: '',
        protocol: '',
        attempt: '1',
        messageId: '',
        sourceDocumentTypeId: 's',
        targetDocumentTypeId: '',
      },
    ],
    [
      'MessageLevelStatusReceived',
      { statusCode: 'RE', status: 'Reject', description: 'd', documentTypeId: 'd', profileId: 'p' },
    ],
    [
      'MessageLevelStatusSent',
      {
        statusCode: 'AB',
        status: 'Acknowledge',
        description: 'd',
        profileId: 'p',
        sourceDocumentTypeId: 's',
        attempt: '1',
        protocol: 'AS4',
      },
    ],
    ['Ping', { hookId: 'h1' }],
    ['HookSentRetry', { ...hookFailure, nextAttemptOn: '2026-03-01T12:05:00.000Z' }],
    ['HookSentError', { ...hookFailure, httpStatus: '', error: 'timeout after 100 s', reason: 'exhausted' }],
    ['HookSentError', { ...hookFailure, httpStatus: '410', reason: 'gone' }],
    ['OrderCancellationSent', { anything: 'goes' }],
    [
      'OrderSentRetry',
      {
        id: 'd',
        recipient: 'iso6523-actorid-upis::0106:71717171',
        endpoint: 'https://ap.example/as4',
        protocol: 'peppol',
        attempt: '1',
        messageId: 'm',
        orderId: 'PO-1',
        documentTypeId: 't',
        nextAttemptOn: '2026-03-01T12:05:00.000Z',
      },
    ],
    [
      'OrderResponseSent',
      {
        id: 'r',
        recipient: 'iso6523-actorid-upis::0088:5790000435951',
        endpoint: 'https://ap.example/as4',
        protocol: 'peppol',
        attempt: '1',
        messageId: 'm',
        statusCode: 'CA',
        status: 'Conditionally accepted',
      },
    ],
    ['OrderReceived', { id: 'd', sender: 's', createdBy: 'peppol', documentTypeId: 't', orderId: 'PO-1' }],
    [
      'InvoiceResponseReceivedError',
      { id: 'd', sender: 's', createdBy: 'peppol', documentTypeId: 't', reason: 'names no invoice' },
    ],
    ['SomeFutureTopic', {}],
  ])('%s accepts %j', (topic, details) => {
    expect(validateEventDetails(topic, details)).toEqual({ ok: true, details });
  });

  it('keeps extra fields (receivers ignore unknown ones)', () => {
    const r = validateEventDetails('Ping', { hookId: 'h', note: 'x' });
    expect(r).toEqual({ ok: true, details: { hookId: 'h', note: 'x' } });
  });

  it.each<[string, unknown, RegExp]>([
    ['InvoiceReceived', { id: 'i', sender: 's', createdBy: 'c' }, /documentTypeId/],
    ['InvoiceSent', { id: 'i', attempt: 1 }, /attempt/],
    [
      'MessageLevelStatusReceived',
      { statusCode: 'XX', status: '', description: '', documentTypeId: '', profileId: '' },
      /statusCode/,
    ],
    ['HookSentError', { ...hookFailure, reason: 'bored' }, /reason/],
    ['HookSentRetry', hookFailure, /nextAttemptOn/],
    ['Ping', {}, /hookId/],
    ['Ping', { hookId: 'h', extra: 5 }, /extra/],
    ['SomeFutureTopic', { n: 5 }, /n/],
    ['SomeFutureTopic', null, /details/],
  ])('%s refuses %j', (topic, details, message) => {
    const r = validateEventDetails(topic, details);
    expect(r.ok).toBe(false);
    expect(r.ok ? '' : r.errors.join('; ')).toMatch(message);
  });

  it('covers every topic with a documented details block, and only known topics', () => {
    for (const topic of Object.keys(EVENT_DETAILS_SCHEMAS)) expect(KNOWN_TOPICS).toContain(topic);
  });

  it('types the details per topic', () => {
    const d: EventDetails<'HookSentError'> = { ...hookFailure, reason: 'gone' };
    expect(d.reason).toBe('gone');
  });

  it('does not resolve topics through the prototype chain', () => {
    expect(validateEventDetails('constructor', { a: 'b' })).toEqual({ ok: true, details: { a: 'b' } });
    expect(validateEventDetails('__proto__', { a: 'b' })).toEqual({ ok: true, details: { a: 'b' } });
  });
});

describe('redactUrl', () => {
  it.each([
    ['https://hooks.example.com/in/path', 'https://hooks.example.com/in/path'],
    ['https://user:secret@hooks.example.com/in', 'https://hooks.example.com/in'],
    ['https://hooks.example.com/in?token=abc&x=1#frag', 'https://hooks.example.com/in?token=***&x=***'],
    ['httpsin://user:password@inbound?token=$token$', 'httpsin://inbound?token=***'],
    ['mailto:ap@example.com', 'mailto:ap@example.com'],
    ['not a url', '[invalid url]'],
  ])('%s → %s', (url, expected) => {
    expect(redactUrl(url)).toBe(expected);
  });
});
