import { readBytes, whileBeating } from '../documents/loader';
import { redactUrl } from '../webhooks/event-payload';
import { deliveryIdFor } from '../webhooks/delivery-id';
import { signDelivery } from '../webhooks/sign-payload';
import type { SendHttpsInput, SendHttpsOutcome } from '../../workflows/contracts/send-invoice';
import type { SendInvoiceDeps } from './ports';
import { channelHookFor, recordChannelAttempt } from './channel-hook';

/** Answers that mean "try again later"; every other non-2xx answer is final. */
function retryableStatus(status: number): boolean {
  return status >= 500 || status === 408 || status === 429;
}

/**
 * One attempt of a sales invoice through an `https` channel hook: the document as uploaded, POSTed to the hook's URL
 * through the webhook sender (SSRF guard, keep-alive, bounded timeout) and signed as events are (spec 6.5 headers over
 * the document's bytes), with the document id and the sending topic in headers. 2xx = delivered; 5xx, 408, 429 or no
 * answer = retry later; 404 and 410 = nobody there (404 for output rules); any other answer, a hook gone or unusable
 * and a URL the guard refuses = final. The delivery id is the same on every attempt: the receiver's idempotency key.
 */
export async function sendHttps(deps: SendInvoiceDeps, input: SendHttpsInput): Promise<SendHttpsOutcome> {
  const messageId = deliveryIdFor(`document:${input.documentId}:${input.generation ?? 0}`, input.hookId);
  const record = async (out: SendHttpsOutcome): Promise<SendHttpsOutcome> => {
    await recordChannelAttempt(
      deps,
      input,
      `attempt ${input.attempt} over https through the hook ${input.hookId}` +
        `${out.endpoint ? ` to ${out.endpoint}` : ''}: ${out.outcome}${out.reason ? `: ${out.reason}` : ''}`,
    );
    return out;
  };
  const failed = (reason: string, extra: Partial<SendHttpsOutcome> = {}) =>
    record({ outcome: 'failed', endpoint: '', messageId, reason, ...extra });
  const found = await channelHookFor(deps, input, 'https');
  if ('senderRefused' in found) return failed(found.senderRefused, { senderRefused: true });
  if ('gone' in found) {
    return failed(`the hook ${input.hookId} no longer exists or is not an https hook`, { notFound: true });
  }
  const hook = found.hook;
  const endpoint = redactUrl(hook.url);
  if (!hook.secureKey) return failed('the hook has no secureKey to sign with', { endpoint });
  const bytes = await readBytes(deps, input.facts.blobId);
  const sentOn = new Date();
  const headers: Record<string, string> = {
    ...signDelivery({ body: bytes, secureKey: hook.secureKey, deliveryId: messageId, timestamp: sentOn }),
    'content-type': input.facts.pdf ? 'application/pdf' : 'application/xml',
    'X-Service-DocumentId': input.documentId,
    'X-Service-Topic': input.topic,
    'X-Service-PartyId': input.facts.legalEntityId ?? input.facts.partyId,
  };
  const { sender, maxTimeoutMs } = deps.https;
  const timeoutMs = Math.min(hook.timeoutMs ?? maxTimeoutMs, maxTimeoutMs);
  const sent = await whileBeating(deps.heartbeat, () =>
    sender.send({ url: hook.url, headers, body: bytes, timeoutMs, auth: hook.deliveryAuth }),
  );
  if (sent.kind === 'error') {
    // A URL the SSRF guard refuses stays refused: waiting would only hold the document back from its fallback.
    const refused = sent.error.startsWith('refused:');
    return record({ outcome: refused ? 'failed' : 'retryable', endpoint, messageId, reason: sent.error });
  }
  const status = sent.status;
  const httpStatus = { httpStatus: status, reason: `HTTP ${status}` };
  if (status >= 200 && status < 300) return record({ outcome: 'delivered', endpoint, messageId, ...httpStatus });
  if (retryableStatus(status)) return record({ outcome: 'retryable', endpoint, messageId, ...httpStatus });
  const notFound = status === 404 || status === 410 ? { notFound: true } : {};
  return record({ outcome: 'failed', endpoint, messageId, ...httpStatus, ...notFound });
}
