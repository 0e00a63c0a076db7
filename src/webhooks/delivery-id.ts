import { createHash } from 'node:crypto';

/** Namespace of delivery ids (a random UUID fixed once; changing it would change every id). */
export const DELIVERY_ID_NAMESPACE = '41b479fe-324b-4ed4-a3b0-56b1d76f9c99';

const NAMESPACE_BYTES = Buffer.from(DELIVERY_ID_NAMESPACE.replace(/-/g, ''), 'hex');

/**
 * The delivery id of (event, hook): `X-Service-Delivery` and `webhook-id`, the receiver's idempotency key. A name-based
 * UUID (RFC 9562 version 5: SHA-1 of namespace + name), so every retry and every redelivery of the same event to the
 * same hook carries the same id without storing it. The name is the JSON array `[eventId, hookId]`, which cannot be
 * confused for another pair the way a joined string could ("a:b" + "c" vs "a" + "b:c").
 */
export function deliveryIdFor(eventId: string, hookId: string): string {
  const name = Buffer.from(JSON.stringify([String(eventId), String(hookId)]), 'utf8');
  const hash = createHash('sha1').update(NAMESPACE_BYTES).update(name).digest();
  const b = hash.subarray(0, 16);
  b[6] = ((b[6] as number) & 0x0f) | 0x50;
  b[8] = ((b[8] as number) & 0x3f) | 0x80;
  const hex = b.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}
