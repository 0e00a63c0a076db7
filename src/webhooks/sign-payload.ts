import { createHmac } from 'node:crypto';

export { deliveryIdFor } from './delivery-id';

/**
 * Headers of one delivery attempt (spec 6.5, decisions.md "Webhook signature and replay"):
 * - `X-Service-Signature: sha256=<hex>`: HMAC-SHA256 of the raw body, as the contract describes. Replay protection for
 *   it comes from `sentOn` inside the signed body, which is this attempt's time.
 * - `X-Service-Delivery`: the delivery id, the same on every retry.
 * - Standard Webhooks: `webhook-id` (= the delivery id), `webhook-timestamp` (this attempt, unix seconds) and
 *   `webhook-signature: v1,<base64 HMAC-SHA256 of "id.timestamp.body">`.
 * - During a secret rotation's overlap (`previousSecureKey`, decisions.md "Webhook secret rotation"):
 *   `X-Service-Signature` stays with the previous key (receivers following the contract's recipe keep verifying with
 *   the key they have), `X-Service-Signature-Next: sha256=<hex>` carries the new key's, and `webhook-signature` lists
 *   both as Standard Webhooks does, `v1,<new> v1,<previous>`. After the window only the new key signs, in the usual
 *   headers.
 *
 * Key bytes: each header follows the convention of the verifiers its receivers already use.
 * - `X-Service-Signature` always keys with the UTF-8 bytes of `secureKey` exactly as registered: the contract's recipe
 *   is "HMAC SHA256 with secureKey", i.e. `createHmac('sha256', secureKey)`.
 * - `webhook-signature` keys with the base64-decoded part after `whsec_` when `secureKey` is `whsec_<base64>` (the
 *   Standard Webhooks secret format: `new Webhook(secureKey)` works as is); any other `secureKey` keys with its UTF-8
 *   bytes (a Standard Webhooks receiver passes `Buffer.from(secureKey).toString('base64')`, or the key with
 *   `{ format: 'raw' }` when it is ASCII).
 */

/** A type alias, not an interface, so it fits `Record<string, string>` (undici, fetch Headers). */
export type DeliveryHeaders = {
  'X-Service-Signature': string;
  'X-Service-Delivery': string;
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
};

/** The headers of a delivery inside a rotation's overlap window. */
export type RotatingDeliveryHeaders = DeliveryHeaders & { 'X-Service-Signature-Next': string };

export interface SignDeliveryInput {
  /** The exact bytes sent (serializeEventPayload's output); never re-serialised after signing. */
  body: Buffer | string;
  secureKey: string;
  /** deliveryIdFor(eventId, hookId). Must not contain "." (it is a field separator of the signed string). */
  deliveryId: string;
  /** This attempt's time: a Date or epoch milliseconds. The same instant as the body's `sentOn`. */
  timestamp: Date | number;
  /** The key before a rotation, while its overlap window lasts: both keys sign. */
  previousSecureKey?: string | null;
}

const WHSEC_PREFIX = 'whsec_';
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** Key bytes of `X-Service-Signature`. */
export function legacyKeyBytes(secureKey: string): Buffer {
  return Buffer.from(secureKey, 'utf8');
}

/** Key bytes of `webhook-signature` (see the module comment). */
export function standardWebhooksKeyBytes(secureKey: string): Buffer {
  if (secureKey.startsWith(WHSEC_PREFIX)) {
    const b64 = secureKey.slice(WHSEC_PREFIX.length);
    if (b64.length > 0 && BASE64.test(b64)) return Buffer.from(b64, 'base64');
  }
  return Buffer.from(secureKey, 'utf8');
}

/**
 * Minimum length of a secureKey that is not in `whsec_` form; shorter keys can be guessed offline from one delivery.
 */
export const MIN_SECURE_KEY_LENGTH = 16;

/**
 * Checks a secureKey at hook creation: null when usable, else a message. A `whsec_` key must be valid base64 of 24–64
 * bytes (the Standard Webhooks range), so it never silently falls back to being used as text.
 */
export function validateSecureKey(secureKey: unknown): string | null {
  if (typeof secureKey !== 'string') return 'secureKey must be a string';
  if (secureKey.startsWith(WHSEC_PREFIX)) {
    const b64 = secureKey.slice(WHSEC_PREFIX.length);
    if (!BASE64.test(b64) || b64.length === 0) return 'a whsec_ secureKey must be followed by base64';
    const n = Buffer.from(b64, 'base64').length;
    if (n < 24 || n > 64) return `a whsec_ secureKey must hold 24 to 64 bytes, not ${n}`;
    return null;
  }
  if (secureKey.length < MIN_SECURE_KEY_LENGTH) return `secureKey must be at least ${MIN_SECURE_KEY_LENGTH} characters`;
  if (secureKey.length > 256) return 'secureKey must be at most 256 characters';
  return null;
}

function unixSeconds(timestamp: Date | number): number {
  const ms = timestamp instanceof Date ? timestamp.getTime() : timestamp;
  if (typeof ms !== 'number' || !Number.isFinite(ms)) throw new RangeError(`invalid timestamp: ${String(timestamp)}`);
  return Math.floor(ms / 1000);
}

export function legacySignature(body: Buffer | string, secureKey: string): string {
  return `sha256=${createHmac('sha256', legacyKeyBytes(secureKey)).update(body).digest('hex')}`;
}

/** The base64 HMAC of Standard Webhooks, without the `v1,` prefix. */
export function standardWebhooksSignature(
  id: string,
  timestampSeconds: number,
  body: Buffer | string,
  secureKey: string,
): string {
  return createHmac('sha256', standardWebhooksKeyBytes(secureKey))
    .update(`${id}.${timestampSeconds}.`)
    .update(body)
    .digest('base64');
}

export function signDelivery(input: SignDeliveryInput): DeliveryHeaders | RotatingDeliveryHeaders {
  const { body, secureKey, deliveryId, previousSecureKey } = input;
  if (typeof deliveryId !== 'string' || deliveryId.length === 0 || deliveryId.includes('.')) {
    throw new RangeError('deliveryId must be a non-empty string without "."');
  }
  const ts = unixSeconds(input.timestamp);
  if (previousSecureKey) {
    return {
      'X-Service-Signature': legacySignature(body, previousSecureKey),
      'X-Service-Signature-Next': legacySignature(body, secureKey),
      'X-Service-Delivery': deliveryId,
      'webhook-id': deliveryId,
      'webhook-timestamp': String(ts),
      'webhook-signature':
        `v1,${standardWebhooksSignature(deliveryId, ts, body, secureKey)} ` +
        `v1,${standardWebhooksSignature(deliveryId, ts, body, previousSecureKey)}`,
    };
  }
  return {
    'X-Service-Signature': legacySignature(body, secureKey),
    'X-Service-Delivery': deliveryId,
    'webhook-id': deliveryId,
    'webhook-timestamp': String(ts),
    'webhook-signature': `v1,${standardWebhooksSignature(deliveryId, ts, body, secureKey)}`,
  };
}
