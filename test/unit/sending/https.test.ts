import { sendHttps } from '../../../src/sending/https';
import type { SendInvoiceDeps } from '../../../src/sending';
import type { SendResult } from '../../../src/webhooks/http-sender';
import type { SendHttpsInput } from '../../../workflows/contracts/send-invoice';
import { verifySignedDocument } from '../../../src/webhooks/verify-webhook';

const DOC = Buffer.from('<Invoice xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2"/>');
const KEY = 'erp-signing-key-0123456789abcdef';
const HOOK = {
  id: 'hook-erp',
  tenantId: 't1',
  action: 'https',
  url: 'https://user:pw@erp.example.test/in?k=v',
  secureKey: KEY,
};

const INPUT: SendHttpsInput = {
  tenantId: 't1',
  documentId: 'doc-1',
  topic: 'SendInvoiceFallback',
  hookId: 'hook-erp',
  attempt: 1,
  facts: {
    blobId: 'b1',
    partyId: '0106:12345678',
    legalEntityId: 'NL:0106:12345678',
    createdBy: 'api',
    pdf: false,
    routing: {
      ok: true,
      sender: { scheme: 'iso6523-actorid-upis', value: '0106:12345678' },
      receiver: { scheme: 'iso6523-actorid-upis', value: '0106:87654321' },
      countryC1: 'NL',
    },
  },
};

/** The step with a sender that answers `answer`, recording what it was asked and what went on the record. */
function harness(answer: SendResult, hook: object | null = HOOK) {
  const sent: Array<{ url: string; headers: Record<string, string>; body: string | Buffer; timeoutMs: number }> = [];
  const recorded: Array<{ attempt?: number; channel?: string; detail?: string }> = [];
  const deps = {
    documents: {
      recordTransition: (_t: string, _d: string, _tr: unknown, entry: (typeof recorded)[number]) => {
        recorded.push(entry);
        return Promise.resolve(true);
      },
    },
    blobs: { read: () => Promise.resolve(DOC) },
    maxDocumentBytes: 1_000_000,
    heartbeat: () => undefined,
    directory: { listParties: () => Promise.resolve([]), findParty: () => Promise.resolve(null) },
    hooks: { get: () => Promise.resolve(hook), listForRouting: () => Promise.resolve([]) },
    https: {
      sender: { send: (req: (typeof sent)[number]) => (sent.push(req), Promise.resolve(answer)) },
      maxTimeoutMs: 100_000,
    },
  } as unknown as SendInvoiceDeps;
  return { run: (input: SendHttpsInput = INPUT) => sendHttps(deps, input), sent, recorded };
}

const response = (status: number): SendResult => ({ kind: 'response', status, retryAfter: undefined, latencyMs: 3 });
const error = (message: string): SendResult => ({ kind: 'error', error: message, timedOut: false, latencyMs: 3 });

describe('one attempt of the https channel', () => {
  it('POSTs the document as uploaded, signed, with its id and topic; 2xx is delivered, the URL shown redacted', async () => {
    const h = harness(response(202));
    const out = await h.run();
    expect(out).toMatchObject({ outcome: 'delivered', httpStatus: 202, endpoint: 'https://erp.example.test/in?k=***' });
    const req = h.sent[0]!;
    expect(req.body).toEqual(DOC);
    expect(req.headers).toMatchObject({
      'content-type': 'application/xml',
      'X-Service-DocumentId': 'doc-1',
      'X-Service-Topic': 'SendInvoiceFallback',
      'X-Service-PartyId': 'NL:0106:12345678',
      'X-Service-Delivery': out.messageId,
    });
    expect(verifySignedDocument(DOC, req.headers, KEY)).toEqual({ ok: true, deliveryId: out.messageId });
    expect(h.recorded[0]).toMatchObject({ attempt: 1, channel: 'hook-erp' });
    expect(h.recorded[0]!.detail).toContain('attempt 1 over https through the hook hook-erp');
    // Every attempt of this document to this hook is the same delivery; a resend's is its own.
    expect((await h.run({ ...INPUT, attempt: 2 })).messageId).toBe(out.messageId);
    expect((await h.run({ ...INPUT, generation: 1 })).messageId).not.toBe(out.messageId);
  });

  it.each([
    [response(503), { outcome: 'retryable', httpStatus: 503 }],
    [response(429), { outcome: 'retryable', httpStatus: 429 }],
    [response(408), { outcome: 'retryable', httpStatus: 408 }],
    [error('connection refused'), { outcome: 'retryable', reason: 'connection refused' }],
    [response(404), { outcome: 'failed', httpStatus: 404, notFound: true }],
    [response(410), { outcome: 'failed', httpStatus: 410, notFound: true }],
    [response(422), { outcome: 'failed', httpStatus: 422 }],
    [error('refused: 10.0.0.5 is a private address'), { outcome: 'failed' }],
  ])('classifies %j as %j', async (answer, expected) => {
    const out = await harness(answer).run();
    expect(out).toMatchObject(expected);
    if (!('notFound' in expected)) expect(out.notFound).toBeUndefined();
  });

  it('a hook gone or no longer https is 404 for output rules; one without a key is refused; neither is POSTed', async () => {
    const gone = harness(response(200), null);
    expect(await gone.run()).toMatchObject({ outcome: 'failed', notFound: true });
    const mail = harness(response(200), { ...HOOK, action: 'mailto', url: 'mailto:a@b.example' });
    expect(await mail.run()).toMatchObject({ outcome: 'failed', notFound: true });
    const keyless = harness(response(200), { ...HOOK, secureKey: null });
    expect(await keyless.run()).toMatchObject({ outcome: 'failed', reason: 'the hook has no secureKey to sign with' });
    expect([...gone.sent, ...mail.sent, ...keyless.sent]).toHaveLength(0);
  });

  it('a seller the uploader may not act for is refused before anything is read or sent', async () => {
    const h = harness(response(200));
    const routing = { ...INPUT.facts.routing!, sender: { scheme: 'iso6523-actorid-upis', value: '0106:99999999' } };
    const out = await h.run({ ...INPUT, facts: { ...INPUT.facts, routing } });
    expect(out).toMatchObject({ outcome: 'failed', senderRefused: true });
    expect(out.reason).toContain('0106:99999999');
    expect(h.sent).toHaveLength(0);
  });
});
