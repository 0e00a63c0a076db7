/**
 * Identifiers of an outgoing AS4 message derived from the document it carries, so every attempt to deliver one
 * document is the same AS4 message: the receiver recognises a resend after an unknown outcome as a duplicate (AS4
 * §3.2), and — with the same timestamp — the signed parts digest to the same values, so the receipt a receiver stored
 * for the first attempt also confirms the resend.
 */
import { createHash } from 'node:crypto';
import type { EnvelopeIds } from './user-message';

export interface StableMessageIds {
  messageId: string;
  conversationId: string;
  contentId: string;
  envelopeIds: EnvelopeIds;
}

/** A UUID-shaped (version 5 layout) name derived from `name` with SHA-256. */
function nameUuid(name: string): string {
  const h = createHash('sha256').update(name, 'utf8').digest();
  h[6] = ((h[6] as number) & 0x0f) | 0x50;
  h[8] = ((h[8] as number) & 0x3f) | 0x80;
  const x = h.subarray(0, 16).toString('hex');
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20, 32)}`;
}

/**
 * The ids of the AS4 message for one document. `documentKey` must identify the document gateway-wide (e.g.
 * `<tenantId>:<documentId>`); `attempt` is only for a deliberate new message (e.g. a corrected resend), never for
 * retries.
 */
export function stableMessageIds(documentKey: string, attempt = 0): StableMessageIds {
  const seed = `invoice-gateway/as4/${documentKey}/${attempt}`;
  return {
    messageId: `${nameUuid(`${seed}/message`)}@invoice-gateway`,
    conversationId: nameUuid(`${seed}/conversation`),
    contentId: `att-${nameUuid(`${seed}/payload`)}@invoice-gateway`,
    envelopeIds: { messagingId: `msg-${nameUuid(`${seed}/messaging`)}`, bodyId: `id-${nameUuid(`${seed}/body`)}` },
  };
}
