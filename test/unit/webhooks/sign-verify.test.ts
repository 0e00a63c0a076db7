import { createHmac } from 'node:crypto';
import { DELIVERY_ID_NAMESPACE } from '../../../src/webhooks/delivery-id';
import {
  deliveryIdFor,
  legacyKeyBytes,
  signDelivery,
  standardWebhooksKeyBytes,
  validateSecureKey,
} from '../../../src/webhooks/sign-payload';
import { verifySignedDocument, verifyWebhook } from '../../../src/webhooks/verify-webhook';
import { Webhook } from 'standardwebhooks';

// Vectors computed outside this code base: `openssl dgst -sha256 -hmac …` for the signatures and Python's
// uuid.uuid5 for the delivery ids.
const BODY =
  '{"topic":"Ping","partyId":"","hookId":"h1","message":"ping","details":{"hookId":"h1"},"createdBy":"api","createdOn":"2026-03-01T12:00:00.000Z","sentOn":"2026-03-01T12:00:00.000Z"}';
const TEXT_KEY = 'test-secure-key-0123456789';
const WHSEC_KEY = 'whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8='; // bytes 0x00..0x1f
const AT = new Date('2026-03-01T12:00:00.000Z');
const AT_SECONDS = 1772366400;

describe('signDelivery', () => {
  it('matches hand-computed vectors for a text secureKey', () => {
    expect(signDelivery({ body: BODY, secureKey: TEXT_KEY, deliveryId: 'msg_1', timestamp: AT })).toEqual({
      'X-Service-Signature': 'sha256=f3980f4dc66a4e502bc86b686fe5e4321fe15aafcd50d56d3a3db6b11b06197b',
      'X-Service-Delivery': 'msg_1',
      'webhook-id': 'msg_1',
      'webhook-timestamp': String(AT_SECONDS),
      'webhook-signature': 'v1,PWhIZcLlLa3byIls1TNvtZt9G2+UrGzQVOQZjq4vCuQ=',
    });
  });

  it('matches hand-computed vectors for a whsec_ secureKey (decoded for Standard Webhooks, as text for sha256=)', () => {
    const h = signDelivery({
      body: Buffer.from(BODY),
      secureKey: WHSEC_KEY,
      deliveryId: 'msg_1',
      timestamp: AT.getTime() + 999,
    });
    expect(h['webhook-signature']).toBe('v1,SVYTPNotZPXgeCE2DIiNhcpkCzkz800UHJfg1Q7Vu0Y=');
    expect(h['webhook-timestamp']).toBe(String(AT_SECONDS));
    expect(h['X-Service-Signature']).toBe('sha256=654da936caadeb999de28005e4e7c5eaea13368e7cdef4637b307168321edf48');
  });

  it('gives the same result for a string body and its UTF-8 bytes', () => {
    const body = '{"message":"Ünïcödé ✓"}';
    const a = signDelivery({ body, secureKey: TEXT_KEY, deliveryId: 'd', timestamp: AT });
    const b = signDelivery({ body: Buffer.from(body, 'utf8'), secureKey: TEXT_KEY, deliveryId: 'd', timestamp: AT });
    expect(a).toEqual(b);
  });

  it('the sha256= header is what the contract recipe computes', () => {
    const h = signDelivery({ body: BODY, secureKey: 'åbc-non-ascii-key!', deliveryId: 'd', timestamp: AT });
    expect(h['X-Service-Signature']).toBe(
      `sha256=${createHmac('sha256', 'åbc-non-ascii-key!').update(BODY).digest('hex')}`,
    );
  });

  it('refuses a delivery id with "." (a separator of the signed string) and an invalid time', () => {
    expect(() => signDelivery({ body: BODY, secureKey: TEXT_KEY, deliveryId: 'a.b', timestamp: AT })).toThrow(
      RangeError,
    );
    expect(() => signDelivery({ body: BODY, secureKey: TEXT_KEY, deliveryId: '', timestamp: AT })).toThrow(RangeError);
    expect(() => signDelivery({ body: BODY, secureKey: TEXT_KEY, deliveryId: 'd', timestamp: new Date('x') })).toThrow(
      RangeError,
    );
    expect(() => signDelivery({ body: BODY, secureKey: TEXT_KEY, deliveryId: 'd', timestamp: NaN })).toThrow(
      RangeError,
    );
  });
});

describe('key bytes', () => {
  it('decodes whsec_<base64>, uses any other key as UTF-8', () => {
    expect(standardWebhooksKeyBytes(WHSEC_KEY)).toEqual(Buffer.from(Array.from({ length: 32 }, (_, i) => i)));
    expect(standardWebhooksKeyBytes(TEXT_KEY)).toEqual(Buffer.from(TEXT_KEY, 'utf8'));
    expect(standardWebhooksKeyBytes('whsec_not base64!')).toEqual(Buffer.from('whsec_not base64!', 'utf8'));
    expect(standardWebhooksKeyBytes('whsec_')).toEqual(Buffer.from('whsec_', 'utf8'));
    expect(legacyKeyBytes(WHSEC_KEY)).toEqual(Buffer.from(WHSEC_KEY, 'utf8'));
  });

  it('validateSecureKey', () => {
    expect(validateSecureKey(TEXT_KEY)).toBeNull();
    expect(validateSecureKey(WHSEC_KEY)).toBeNull();
    expect(validateSecureKey('short')).toMatch(/at least 16/);
    expect(validateSecureKey('x'.repeat(257))).toMatch(/at most 256/);
    expect(validateSecureKey('whsec_not base64!')).toMatch(/base64/);
    expect(validateSecureKey('whsec_')).toMatch(/base64/);
    expect(validateSecureKey('whsec_AAECAwQFBgcICQoLDA0ODxAR')).toMatch(/24 to 64 bytes, not 18/);
    expect(validateSecureKey(42)).toMatch(/string/);
  });
});

describe('deliveryIdFor', () => {
  it('matches uuid5 computed independently', () => {
    expect(DELIVERY_ID_NAMESPACE).toBe('41b479fe-324b-4ed4-a3b0-56b1d76f9c99');
    expect(deliveryIdFor('evt-1', 'hook-1')).toBe('792dea9f-193e-521d-96d1-d26f4a1ada6b');
    expect(deliveryIdFor('évé"nt', 'h')).toBe('89e8859c-29ca-5a6c-ad8f-cffe411e683b');
  });

  it('is a stable version-5 UUID per (event, hook) and differs otherwise', () => {
    const id = deliveryIdFor('e', 'h');
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(deliveryIdFor('e', 'h')).toBe(id);
    expect(deliveryIdFor('e', 'h2')).not.toBe(id);
    expect(deliveryIdFor('e2', 'h')).not.toBe(id);
    expect(deliveryIdFor('h', 'e')).not.toBe(id);
    expect(deliveryIdFor('a:b', 'c')).not.toBe(deliveryIdFor('a', 'b:c'));
    expect(deliveryIdFor('a","b', 'c')).not.toBe(deliveryIdFor('a', 'b","c'));
  });

  it('contains no "." so it can serve as webhook-id', () => {
    expect(deliveryIdFor('x.y', 'z.w')).not.toContain('.');
  });
});

const NOW = AT.getTime() + 60_000;

function signed(secureKey = TEXT_KEY, body: string = BODY, at: Date | number = AT) {
  return signDelivery({ body, secureKey, deliveryId: deliveryIdFor('evt-1', 'h1'), timestamp: at });
}

function only<K extends string>(headers: Record<string, string>, ...keys: K[]): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).filter(([k]) => keys.includes(k as K)));
}

describe('verifyWebhook', () => {
  it('accepts both header families together and returns the payload and the delivery id', () => {
    const r = verifyWebhook(Buffer.from(BODY), signed(), TEXT_KEY, { now: NOW });
    expect(r).toEqual({ ok: true, payload: JSON.parse(BODY), deliveryId: deliveryIdFor('evt-1', 'h1') });
  });

  it('accepts the sha256= family alone', () => {
    const h = only(signed(), 'X-Service-Signature', 'X-Service-Delivery');
    expect(verifyWebhook(BODY, h, TEXT_KEY, { now: NOW }).ok).toBe(true);
  });

  it('accepts the Standard Webhooks family alone, with either key form', () => {
    for (const key of [TEXT_KEY, WHSEC_KEY]) {
      const h = only(signed(key), 'webhook-id', 'webhook-timestamp', 'webhook-signature');
      const r = verifyWebhook(BODY, h, key, { now: NOW });
      expect(r).toMatchObject({ ok: true, deliveryId: h['webhook-id'] });
    }
  });

  it('reads headers case-insensitively, from Node-style records and from fetch Headers', () => {
    const h = signed();
    const lower = Object.fromEntries(Object.entries(h).map(([k, v]) => [k.toLowerCase(), v]));
    expect(verifyWebhook(BODY, lower, TEXT_KEY, { now: NOW }).ok).toBe(true);
    expect(verifyWebhook(BODY, new Headers(h), TEXT_KEY, { now: NOW }).ok).toBe(true);
    const upper = Object.fromEntries(Object.entries(h).map(([k, v]) => [k.toUpperCase(), v]));
    expect(verifyWebhook(BODY, upper, TEXT_KEY, { now: NOW }).ok).toBe(true);
    expect(verifyWebhook(new Uint8Array(Buffer.from(BODY)), h, TEXT_KEY, { now: NOW }).ok).toBe(true);
  });

  it('accepts any matching entry of a rotated signature list, and uppercase hex', () => {
    const h = signed();
    const rotated = {
      ...h,
      'webhook-signature': `v1,${Buffer.alloc(32).toString('base64')} v1a,xyz ${h['webhook-signature']}`,
    };
    expect(verifyWebhook(BODY, rotated, TEXT_KEY, { now: NOW }).ok).toBe(true);
    const split = { ...h, 'webhook-signature': [`v1,${Buffer.alloc(32).toString('base64')}`, h['webhook-signature']] };
    expect(verifyWebhook(BODY, split, TEXT_KEY, { now: NOW }).ok).toBe(true);
    const upperHex = { ...h, 'X-Service-Signature': 'sha256=' + h['X-Service-Signature'].slice(7).toUpperCase() };
    expect(verifyWebhook(BODY, upperHex, TEXT_KEY, { now: NOW }).ok).toBe(true);
  });

  it('refuses a wrong key, a changed body, and a changed id or timestamp', () => {
    const h = signed();
    expect(verifyWebhook(BODY, h, 'another-secure-key-000', { now: NOW })).toEqual({
      ok: false,
      reason: 'signature-mismatch',
    });
    expect(verifyWebhook(BODY.replace('ping', 'pong'), h, TEXT_KEY, { now: NOW })).toEqual({
      ok: false,
      reason: 'signature-mismatch',
    });
    const sw = only(h, 'webhook-id', 'webhook-timestamp', 'webhook-signature');
    expect(verifyWebhook(BODY, { ...sw, 'webhook-id': 'other' }, TEXT_KEY, { now: NOW }).ok).toBe(false);
    expect(verifyWebhook(BODY, { ...sw, 'webhook-timestamp': String(AT_SECONDS + 1) }, TEXT_KEY, { now: NOW }).ok).toBe(
      false,
    );
  });

  it('requires every present family to verify', () => {
    const h = signed();
    const badLegacy = { ...h, 'X-Service-Signature': 'sha256=' + '0'.repeat(64) };
    expect(verifyWebhook(BODY, badLegacy, TEXT_KEY, { now: NOW })).toEqual({ ok: false, reason: 'signature-mismatch' });
    const badStandard = { ...h, 'webhook-signature': `v1,${Buffer.alloc(32).toString('base64')}` };
    expect(verifyWebhook(BODY, badStandard, TEXT_KEY, { now: NOW })).toEqual({
      ok: false,
      reason: 'signature-mismatch',
    });
  });

  it('applies the replay rule to sentOn, in both directions', () => {
    const h = only(signed(), 'X-Service-Signature');
    expect(verifyWebhook(BODY, h, TEXT_KEY, { now: AT.getTime() + 300_000 }).ok).toBe(true);
    expect(verifyWebhook(BODY, h, TEXT_KEY, { now: AT.getTime() + 300_001 })).toEqual({
      ok: false,
      reason: 'sent-on-out-of-tolerance',
    });
    expect(verifyWebhook(BODY, h, TEXT_KEY, { now: AT.getTime() - 300_001 })).toEqual({
      ok: false,
      reason: 'sent-on-out-of-tolerance',
    });
    expect(verifyWebhook(BODY, h, TEXT_KEY, { now: AT.getTime() + 3_000_000, toleranceSeconds: 3600 }).ok).toBe(true);
  });

  it('applies the tolerance to webhook-timestamp', () => {
    const h = only(
      signed(TEXT_KEY, BODY, AT.getTime() - 400_000),
      'webhook-id',
      'webhook-timestamp',
      'webhook-signature',
    );
    expect(verifyWebhook(BODY, h, TEXT_KEY, { now: AT })).toEqual({ ok: false, reason: 'timestamp-out-of-tolerance' });
  });

  it('requires a sentOn in the body', () => {
    for (const body of ['{"topic":"Ping"}', '{"sentOn":"yesterday"}', '{"sentOn":5}']) {
      expect(verifyWebhook(body, signed(TEXT_KEY, body), TEXT_KEY, { now: NOW })).toEqual({
        ok: false,
        reason: 'missing-sent-on',
      });
    }
  });

  it('refuses a signed body that is not a JSON object', () => {
    for (const body of ['not json', '[1,2]', 'null', '"str"', '']) {
      expect(verifyWebhook(body, signed(TEXT_KEY, body), TEXT_KEY, { now: NOW })).toEqual({
        ok: false,
        reason: 'invalid-body',
      });
    }
  });

  it('never throws on garbage', () => {
    const cases: Array<[unknown, unknown, unknown, unknown]> = [
      [undefined, undefined, undefined, undefined],
      [null, {}, TEXT_KEY, {}],
      [BODY, null, TEXT_KEY, {}],
      [BODY, {}, TEXT_KEY, {}],
      [BODY, { 'x-service-signature': 'sha256=zz' }, TEXT_KEY, {}],
      [BODY, { 'x-service-signature': 'md5=abc' }, TEXT_KEY, {}],
      [BODY, { 'x-service-signature': ['a', 'b'] }, TEXT_KEY, {}],
      [BODY, { 'x-service-signature': 42 }, TEXT_KEY, {}],
      [BODY, { 'webhook-signature': 'v1,abc' }, TEXT_KEY, {}],
      [BODY, { 'webhook-signature': 'v1,abc', 'webhook-id': 'x', 'webhook-timestamp': 'soon' }, TEXT_KEY, {}],
      [
        BODY,
        { 'webhook-signature': 'v1,' + 'A'.repeat(43) + '=', 'webhook-id': 'x', 'webhook-timestamp': '1e99' },
        TEXT_KEY,
        {},
      ],
      [
        BODY,
        { 'webhook-signature': '', 'webhook-id': 'x', 'webhook-timestamp': String(AT_SECONDS) },
        TEXT_KEY,
        { now: AT },
      ],
      [BODY, signed(), '', {}],
      [BODY, signed(), 42, {}],
      [42, signed(), TEXT_KEY, {}],
      [BODY, signed(), TEXT_KEY, { now: NaN }],
      [BODY, signed(), TEXT_KEY, { toleranceSeconds: -1 }],
      [
        BODY,
        {
          get() {
            throw new Error('boom');
          },
        },
        TEXT_KEY,
        {},
      ],
      [
        BODY,
        new Proxy(
          {},
          {
            ownKeys() {
              throw new Error('boom');
            },
          },
        ),
        TEXT_KEY,
        {},
      ],
    ];
    for (const [body, headers, key, options] of cases) {
      const r = verifyWebhook(body as string, headers as Record<string, string>, key as string, options as object);
      expect(r.ok).toBe(false);
    }
  });

  it('names the failure', () => {
    expect(verifyWebhook(BODY, {}, TEXT_KEY)).toEqual({ ok: false, reason: 'missing-signature' });
    expect(verifyWebhook(BODY, { 'x-service-signature': 'sha256=abc' }, TEXT_KEY)).toEqual({
      ok: false,
      reason: 'malformed-signature',
    });
    expect(verifyWebhook(BODY, { 'webhook-signature': 'v1,x' }, TEXT_KEY)).toEqual({
      ok: false,
      reason: 'missing-webhook-id',
    });
    expect(verifyWebhook(BODY, signed(), '', {})).toEqual({ ok: false, reason: 'invalid-arguments' });
  });
});

// An independent Standard Webhooks implementation checks our headers.
describe('interoperability with the standardwebhooks package', () => {
  it('verifies our headers with a whsec_ key as is, and with a text key in raw format', () => {
    const now = new Date();
    const body = BODY.replace(/2026-03-01T12:00:00.000Z/g, now.toISOString());
    const a = signDelivery({ body, secureKey: WHSEC_KEY, deliveryId: 'd1', timestamp: now });
    expect(new Webhook(WHSEC_KEY).verify(body, a as unknown as Record<string, string>)).toEqual(JSON.parse(body));
    const b = signDelivery({ body, secureKey: TEXT_KEY, deliveryId: 'd1', timestamp: now });
    expect(new Webhook(TEXT_KEY, { format: 'raw' }).verify(body, b as unknown as Record<string, string>)).toEqual(
      JSON.parse(body),
    );
    expect(
      new Webhook(Buffer.from(TEXT_KEY).toString('base64')).verify(body, b as unknown as Record<string, string>),
    ).toEqual(JSON.parse(body));
  });
});

describe('verifySignedDocument (a document an https channel hook receives)', () => {
  const doc = Buffer.from(
    '<Invoice xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2"><ID>1</ID></Invoice>',
  );
  const headers = signDelivery({ body: doc, secureKey: TEXT_KEY, deliveryId: 'd-1', timestamp: AT });

  it('accepts the bytes as signed, and names the delivery', () => {
    expect(verifySignedDocument(doc, headers, TEXT_KEY, { now: AT })).toEqual({ ok: true, deliveryId: 'd-1' });
    // An event verifier would refuse it: a document has no sentOn.
    expect(verifyWebhook(doc, headers, TEXT_KEY, { now: AT })).toEqual({ ok: false, reason: 'invalid-body' });
  });

  it('refuses a changed byte, another key, a replay outside the tolerance and a legacy signature alone', () => {
    const changed = Buffer.from(doc);
    changed[changed.length - 3] = 0x41;
    expect(verifySignedDocument(changed, headers, TEXT_KEY, { now: AT })).toMatchObject({ ok: false });
    expect(verifySignedDocument(doc, headers, 'another-key-0123456789', { now: AT })).toMatchObject({ ok: false });
    const later = new Date(AT.getTime() + 301_000);
    expect(verifySignedDocument(doc, headers, TEXT_KEY, { now: later })).toEqual({
      ok: false,
      reason: 'timestamp-out-of-tolerance',
    });
    // Without the timestamped signature nothing guards against a replay: refused.
    const legacyOnly = { 'X-Service-Signature': headers['X-Service-Signature'] };
    expect(verifySignedDocument(doc, legacyOnly, TEXT_KEY, { now: AT })).toEqual({
      ok: false,
      reason: 'missing-signature',
    });
  });
});
