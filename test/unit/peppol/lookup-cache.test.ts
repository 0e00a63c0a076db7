import type { X509Certificate } from 'node:crypto';
import { CachedRecipientLookup, validUntil } from '../../../src/peppol/lookup-cache';
import { peppolParticipant, type DocumentTypeId, type ParticipantId } from '../../../src/peppol/identifiers';
import type { LookupRefusal, RecipientEndpoint } from '../../../src/peppol/recipient-lookup';
import { BILLING_PROCESS, BIS3_CREDIT_NOTE, BIS3_INVOICE } from '../../../src/peppol/smp-publisher';
import { forgetOnFailure } from '../../../src/sending/delivery';
import type { PeppolSender } from '../../../src/sending/ports';

// The worker's memory of found endpoints: kept for the TTL and never past what the answer rests on, refusals never
// kept, forgotten after a failed delivery, bounded in size.

const T0 = Date.parse('2026-06-01T00:00:00Z');
const YEAR = 365 * 24 * 3600 * 1000;
const iso = (t: number) => new Date(t).toUTCString();

function answer(
  participant: ParticipantId,
  documentType: DocumentTypeId,
  opts: { url?: string; certExpiry?: number; signerExpiry?: number; serviceExpiry?: number } = {},
): RecipientEndpoint {
  const certificate = { validTo: iso(opts.certExpiry ?? T0 + YEAR) } as unknown as X509Certificate;
  const signer = { validTo: iso(opts.signerExpiry ?? T0 + YEAR) } as unknown as X509Certificate;
  return {
    ok: true,
    participant,
    smpUrl: 'http://smp.test',
    documentType,
    process: BILLING_PROCESS,
    result: {
      participant,
      documentType,
      process: BILLING_PROCESS,
      endpoint: {
        transportProfile: 'peppol-transport-as4-v2_0',
        url: opts.url ?? 'https://ap.test/as4',
        certificate,
        requireBusinessLevelSignature: false,
        ...(opts.serviceExpiry !== undefined ? { serviceExpirationDate: new Date(opts.serviceExpiry) } : {}),
      },
      metadata: {
        participant,
        documentType,
        processes: [],
        signer,
        signerRevocationChecked: false,
        url: 'http://smp.test/x',
        redirected: false,
      },
      revocationChecked: false,
    },
  };
}

function setup(ttlMs = 60_000, maxEntries?: number) {
  let now = T0;
  const answers = new Map<string, RecipientEndpoint | LookupRefusal>();
  const asked: string[] = [];
  const inner = {
    findEndpoint: jest.fn(async (id: string | ParticipantId, types: readonly DocumentTypeId[]) => {
      const p = typeof id === 'string' ? id : id.value;
      asked.push(p);
      return answers.get(p) ?? answer(id as ParticipantId, types[0]!);
    }),
  };
  const cache = new CachedRecipientLookup(inner, { ttlMs, now: () => now, ...(maxEntries ? { maxEntries } : {}) });
  return { cache, asked, answers, advance: (ms: number) => (now += ms) };
}

const A = peppolParticipant('0106:11111111');
const B = peppolParticipant('0106:22222222');

describe('CachedRecipientLookup', () => {
  it('asks once per participant, document types and process within the TTL', async () => {
    const { cache, asked } = setup();
    const first = await cache.findEndpoint(A, [BIS3_INVOICE], BILLING_PROCESS);
    const second = await cache.findEndpoint(A, [BIS3_INVOICE], BILLING_PROCESS);
    expect(second).toBe(first);
    expect(asked).toEqual(['0106:11111111']);
    await cache.findEndpoint(A, [BIS3_CREDIT_NOTE], BILLING_PROCESS);
    await cache.findEndpoint(A, [BIS3_INVOICE]);
    await cache.findEndpoint(B, [BIS3_INVOICE], BILLING_PROCESS);
    expect(asked).toHaveLength(4);
    expect(cache.size).toBe(4);
  });

  it('asks again once the TTL has passed', async () => {
    const { cache, asked, advance } = setup(60_000);
    await cache.findEndpoint(A, [BIS3_INVOICE]);
    advance(59_999);
    await cache.findEndpoint(A, [BIS3_INVOICE]);
    expect(asked).toHaveLength(1);
    advance(1);
    await cache.findEndpoint(A, [BIS3_INVOICE]);
    expect(asked).toHaveLength(2);
  });

  it("keeps an answer no longer than the endpoint's expiration date or either certificate's expiry", () => {
    const ttl = 3_600_000;
    expect(validUntil(answer(A, BIS3_INVOICE), T0, ttl)).toBe(T0 + ttl);
    expect(validUntil(answer(A, BIS3_INVOICE, { serviceExpiry: T0 + 5000 }), T0, ttl)).toBe(T0 + 5000);
    expect(validUntil(answer(A, BIS3_INVOICE, { certExpiry: T0 + 7000 }), T0, ttl)).toBe(T0 + 7000);
    expect(validUntil(answer(A, BIS3_INVOICE, { signerExpiry: T0 + 9000 }), T0, ttl)).toBe(T0 + 9000);
  });

  it('asks again when the endpoint certificate has expired meanwhile, and keeps none that expires now', async () => {
    const { cache, asked, answers, advance } = setup(3_600_000);
    answers.set(A.value, answer(A, BIS3_INVOICE, { certExpiry: T0 + 10_000 }));
    await cache.findEndpoint(A, [BIS3_INVOICE]);
    advance(10_000);
    await cache.findEndpoint(A, [BIS3_INVOICE]);
    expect(asked).toHaveLength(2);
    expect(cache.size).toBe(0);
  });

  it('never keeps a refusal', async () => {
    const { cache, asked, answers } = setup();
    const refusal: LookupRefusal = {
      ok: false,
      failure: 'participant-unknown',
      reason: 'participant-not-registered',
      message: 'not in the SML',
    };
    answers.set(A.value, refusal);
    expect(await cache.findEndpoint(A, [BIS3_INVOICE])).toBe(refusal);
    expect(await cache.findEndpoint(A, [BIS3_INVOICE])).toBe(refusal);
    expect(asked).toHaveLength(2);
    expect(cache.size).toBe(0);
  });

  it("forgets a participant's answers, and only its", async () => {
    const { cache, asked } = setup();
    await cache.findEndpoint(A, [BIS3_INVOICE]);
    await cache.findEndpoint(A, [BIS3_CREDIT_NOTE]);
    await cache.findEndpoint(B, [BIS3_INVOICE]);
    cache.forget(peppolParticipant('0106:11111111'));
    expect(cache.size).toBe(1);
    await cache.findEndpoint(B, [BIS3_INVOICE]);
    await cache.findEndpoint(A, [BIS3_INVOICE]);
    expect(asked).toEqual(['0106:11111111', '0106:11111111', '0106:22222222', '0106:11111111']);
  });

  it('holds at most maxEntries answers, dropping the least recently used', async () => {
    const { cache, asked } = setup(60_000, 2);
    const C = peppolParticipant('0106:33333333');
    await cache.findEndpoint(A, [BIS3_INVOICE]);
    await cache.findEndpoint(B, [BIS3_INVOICE]);
    await cache.findEndpoint(A, [BIS3_INVOICE]); // A used last: B goes first
    await cache.findEndpoint(C, [BIS3_INVOICE]);
    expect(cache.size).toBe(2);
    await cache.findEndpoint(A, [BIS3_INVOICE]);
    await cache.findEndpoint(B, [BIS3_INVOICE]);
    expect(asked).toEqual(['0106:11111111', '0106:22222222', '0106:33333333', '0106:22222222']);
  });

  it('keeps nothing with a TTL of 0', async () => {
    const { cache, asked } = setup(0);
    await cache.findEndpoint(A, [BIS3_INVOICE]);
    await cache.findEndpoint(A, [BIS3_INVOICE]);
    expect(asked).toHaveLength(2);
    expect(cache.size).toBe(0);
  });
});

describe('forgetOnFailure', () => {
  it("forgets the receiver's kept answers after any outcome but a receipt", () => {
    const forget = jest.fn();
    const sender = { lookup: { findEndpoint: jest.fn(), forget } } as unknown as PeppolSender;
    forgetOnFailure(sender, 'delivered', A);
    forgetOnFailure(sender, 'duplicate', A);
    expect(forget).not.toHaveBeenCalled();
    forgetOnFailure(sender, 'retryable', A);
    forgetOnFailure(sender, 'failed', B);
    expect(forget.mock.calls).toEqual([[A], [B]]);
  });
});
