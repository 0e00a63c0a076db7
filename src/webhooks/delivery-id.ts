import { nameBasedUuid } from '../ids/name-uuid';

/** Namespace of delivery ids (a random UUID fixed once; changing it would change every id). */
export const DELIVERY_ID_NAMESPACE = '41b479fe-324b-4ed4-a3b0-56b1d76f9c99';

/**
 * The delivery id of (event, hook): `X-Service-Delivery` and `webhook-id`, the receiver's idempotency key. Name-based,
 * so every retry and every redelivery of the same event to the same hook carries the same id without storing it.
 */
export function deliveryIdFor(eventId: string, hookId: string): string {
  return nameBasedUuid(DELIVERY_ID_NAMESPACE, [eventId, hookId]);
}
