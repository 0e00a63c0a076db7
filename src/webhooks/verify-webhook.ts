import { createHmac, timingSafeEqual } from 'node:crypto';
import type { EventPayload } from './event-payload';
import { legacyKeyBytes, standardWebhooksKeyBytes } from './sign-payload';

/**
 * Receiver helper: checks a delivery of this gateway with nothing but node:crypto. Pass the raw body bytes as received
 * (before any JSON parsing, which would change them). Either header family suffices; every family present must verify.
 * During a secret rotation's overlap a delivery carries the signatures of both keys (X-Service-Signature and
 * X-Service-Signature-Next, two `v1,` entries in webhook-signature): the key given may be either.
 * The body's `sentOn` (this attempt's time, covered by the signature) must be within the tolerance in either direction,
 * the replay rule of spec 6.5; for Standard Webhooks headers `webhook-timestamp` is held to the same tolerance.
 * Never throws.
 *
 *   app.post('/hooks', express.raw({ type: 'application/json' }), (req, res) => {
 *     const r = verifyWebhook(req.body, req.headers, process.env.SECURE_KEY!);
 *     if (!r.ok) return res.status(400).send(r.reason);
 *     // deduplicate on r.deliveryId, then handle r.payload
 *     res.sendStatus(204);
 *   });
 */

export type WebhookHeaderSource =
  Readonly<Record<string, string | readonly string[] | undefined>> | { get(name: string): string | null | undefined };

export interface VerifyWebhookOptions {
  /** Largest accepted distance between `sentOn` (and `webhook-timestamp`) and now. Default 300 (spec: 5 minutes). */
  toleranceSeconds?: number;
  /** Now, as a Date or epoch ms; for tests. */
  now?: Date | number;
}

export type VerifyFailureReason =
  | 'invalid-arguments'
  | 'missing-signature'
  | 'malformed-signature'
  | 'signature-mismatch'
  | 'missing-webhook-id'
  | 'timestamp-out-of-tolerance'
  | 'invalid-body'
  | 'missing-sent-on'
  | 'sent-on-out-of-tolerance';

export type VerifyWebhookResult =
  { ok: true; payload: EventPayload; deliveryId: string | undefined } | { ok: false; reason: VerifyFailureReason };

const fail = (reason: VerifyFailureReason): VerifyWebhookResult => ({ ok: false, reason });

function header(headers: WebhookHeaderSource, name: string): string | readonly string[] | undefined {
  if (typeof (headers as { get?: unknown }).get === 'function') {
    const v = (headers as { get(n: string): string | null | undefined }).get(name);
    return typeof v === 'string' ? v : undefined;
  }
  const record = headers as Readonly<Record<string, string | readonly string[] | undefined>>;
  if (Object.prototype.hasOwnProperty.call(record, name)) return record[name];
  const wanted = name.toLowerCase();
  for (const key of Object.keys(record)) if (key.toLowerCase() === wanted) return record[key];
  return undefined;
}

/** One header value; a repeated header (array of more than one) is refused as ambiguous. */
function single(v: string | readonly string[] | undefined): string | undefined | null {
  if (v === undefined) return undefined;
  if (typeof v === 'string') return v;
  if (Array.isArray(v) && v.length === 1 && typeof v[0] === 'string') return v[0];
  return null;
}

function hmac(key: Buffer, ...parts: Array<Buffer | string>): Buffer {
  const h = createHmac('sha256', key);
  for (const p of parts) h.update(p);
  return h.digest();
}

const HEX_SIG = /^sha256=([0-9a-fA-F]{64})$/;
const B64_SIG = /^[A-Za-z0-9+/]{43}=$/;

function checkLegacy(value: string, body: Buffer, secureKey: string): VerifyFailureReason | null {
  const m = HEX_SIG.exec(value.trim());
  if (!m) return 'malformed-signature';
  const expected = hmac(legacyKeyBytes(secureKey), body);
  return timingSafeEqual(Buffer.from(m[1] as string, 'hex'), expected) ? null : 'signature-mismatch';
}

function checkStandard(
  signatures: string,
  headers: WebhookHeaderSource,
  body: Buffer,
  secureKey: string,
  nowSeconds: number,
  tolerance: number,
): VerifyFailureReason | null {
  const id = single(header(headers, 'webhook-id'));
  const ts = single(header(headers, 'webhook-timestamp'));
  if (!id) return 'missing-webhook-id';
  if (!ts || !/^\d{1,15}$/.test(ts.trim())) return 'malformed-signature';
  const seconds = Number(ts.trim());
  if (Math.abs(nowSeconds - seconds) > tolerance) return 'timestamp-out-of-tolerance';
  const expected = hmac(standardWebhooksKeyBytes(secureKey), `${id}.${seconds}.`, body);
  let sawV1 = false;
  for (const entry of signatures.split(' ')) {
    const comma = entry.indexOf(',');
    if (comma < 0 || entry.slice(0, comma) !== 'v1') continue;
    const b64 = entry.slice(comma + 1);
    if (!B64_SIG.test(b64)) continue;
    sawV1 = true;
    if (timingSafeEqual(Buffer.from(b64, 'base64'), expected)) return null;
  }
  return sawV1 ? 'signature-mismatch' : 'malformed-signature';
}

function toBuffer(rawBody: unknown): Buffer | null {
  if (Buffer.isBuffer(rawBody)) return rawBody;
  if (rawBody instanceof Uint8Array) return Buffer.from(rawBody.buffer, rawBody.byteOffset, rawBody.byteLength);
  if (typeof rawBody === 'string') return Buffer.from(rawBody, 'utf8');
  return null;
}

export function verifyWebhook(
  rawBody: Buffer | Uint8Array | string,
  headers: WebhookHeaderSource,
  secureKey: string,
  options: VerifyWebhookOptions = {},
): VerifyWebhookResult {
  try {
    return verifyOrFail(rawBody, headers, secureKey, options);
  } catch {
    return fail('invalid-arguments');
  }
}

/** The signatures of a delivery checked; the body and the current time for what follows, or why not. */
function checkSignatures(
  rawBody: unknown,
  headers: WebhookHeaderSource,
  secureKey: unknown,
  options: VerifyWebhookOptions,
  requireStandard: boolean,
): { body: Buffer; nowMs: number; tolerance: number } | { reason: VerifyFailureReason } {
  const body = toBuffer(rawBody);
  if (
    !body ||
    typeof secureKey !== 'string' ||
    secureKey.length === 0 ||
    typeof headers !== 'object' ||
    headers === null
  ) {
    return { reason: 'invalid-arguments' };
  }
  const tolerance = options.toleranceSeconds ?? 300;
  const nowMs =
    options.now === undefined ? Date.now() : options.now instanceof Date ? options.now.getTime() : options.now;
  if (!Number.isFinite(nowMs) || !Number.isFinite(tolerance) || tolerance < 0) return { reason: 'invalid-arguments' };

  const legacy = single(header(headers, 'x-service-signature'));
  const standardRaw = header(headers, 'webhook-signature');
  // Signature lists may arrive split over repeated headers; joining keeps every candidate.
  const standard =
    standardRaw === undefined
      ? undefined
      : typeof standardRaw === 'string'
        ? standardRaw
        : Array.isArray(standardRaw)
          ? standardRaw.join(' ')
          : null;
  if (legacy === null || standard === null) return { reason: 'malformed-signature' };
  if (legacy === undefined && standard === undefined) return { reason: 'missing-signature' };
  if (requireStandard && standard === undefined) return { reason: 'missing-signature' };

  if (legacy !== undefined) {
    // Inside a rotation's overlap the new key's signature is in X-Service-Signature-Next: either may match.
    const next = single(header(headers, 'x-service-signature-next'));
    if (next === null) return { reason: 'malformed-signature' };
    const r = checkLegacy(legacy, body, secureKey);
    if (r && (next === undefined || checkLegacy(next, body, secureKey) !== null)) return { reason: r };
  }
  if (standard !== undefined) {
    const r = checkStandard(standard, headers, body, secureKey, Math.floor(nowMs / 1000), tolerance);
    if (r) return { reason: r };
  }
  return { body, nowMs, tolerance };
}

function deliveryIdOf(headers: WebhookHeaderSource): string | undefined {
  const delivery = single(header(headers, 'x-service-delivery')) ?? single(header(headers, 'webhook-id'));
  return typeof delivery === 'string' ? delivery : undefined;
}

function verifyOrFail(
  rawBody: unknown,
  headers: WebhookHeaderSource,
  secureKey: unknown,
  options: VerifyWebhookOptions,
): VerifyWebhookResult {
  const checked = checkSignatures(rawBody, headers, secureKey, options, false);
  if ('reason' in checked) return fail(checked.reason);
  const { body, nowMs, tolerance } = checked;
  let payload: unknown;
  try {
    payload = JSON.parse(body.toString('utf8'));
  } catch {
    return fail('invalid-body');
  }
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) return fail('invalid-body');
  const sentOn = (payload as { sentOn?: unknown }).sentOn;
  if (typeof sentOn !== 'string') return fail('missing-sent-on');
  const sentMs = Date.parse(sentOn);
  if (Number.isNaN(sentMs)) return fail('missing-sent-on');
  if (Math.abs(nowMs - sentMs) > tolerance * 1000) return fail('sent-on-out-of-tolerance');
  return { ok: true, payload: payload as EventPayload, deliveryId: deliveryIdOf(headers) };
}

export type VerifyDocumentResult =
  { ok: true; deliveryId: string | undefined } | { ok: false; reason: VerifyFailureReason };

/**
 * Verifies a document an https channel hook received (the invoice's bytes, not an event): `X-Service-Signature`
 * when present, and `webhook-signature` always, whose signed `webhook-timestamp` is the replay protection a document
 * body cannot carry. The delivery id is the receiver's idempotency key (the same on every attempt).
 */
export function verifySignedDocument(
  rawBody: Buffer | Uint8Array | string,
  headers: WebhookHeaderSource,
  secureKey: string,
  options: VerifyWebhookOptions = {},
): VerifyDocumentResult {
  try {
    const checked = checkSignatures(rawBody, headers, secureKey, options, true);
    if ('reason' in checked) return { ok: false, reason: checked.reason };
    return { ok: true, deliveryId: deliveryIdOf(headers) };
  } catch {
    return { ok: false, reason: 'invalid-arguments' };
  }
}
