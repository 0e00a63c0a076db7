import { Transition } from '../core/document-states';
import type { HookRecord } from '../storage/hooks/hook.repository';
import type { DocumentFacts } from '../../workflows/contracts/send-invoice';
import type { SendInvoiceDeps } from './ports';
import { checkSender } from './sender-check';

/**
 * What a hook channel's attempt checks first: the sender (a tenant never sends as another company, over any channel),
 * then the hook as it is now, which must still exist with the channel's action and a URL.
 */
export async function channelHookFor(
  deps: Pick<SendInvoiceDeps, 'directory' | 'hooks'>,
  input: { tenantId: string; facts: DocumentFacts; hookId: string },
  action: 'mailto' | 'https',
): Promise<{ hook: HookRecord & { url: string } } | { senderRefused: string } | { gone: true }> {
  const routing = input.facts.routing;
  if (routing?.ok) {
    const refusal = await checkSender(deps, input.tenantId, input.facts, routing.sender);
    if (refusal) return { senderRefused: refusal.message };
  }
  const hook = await deps.hooks.get({ tenantId: input.tenantId }, input.hookId);
  if (!hook || hook.action !== action || !hook.url) return { gone: true };
  return { hook: hook as HookRecord & { url: string } };
}

/** A hook channel's attempt on the document's history (`send-attempt-<n>`, the channel named). */
export function recordChannelAttempt(
  deps: Pick<SendInvoiceDeps, 'documents'>,
  input: { tenantId: string; documentId: string; generation?: number; attempt: number; hookId: string },
  detail: string,
): Promise<boolean> {
  return deps.documents.recordTransition(input.tenantId, input.documentId, Transition.sendAttempt, {
    generation: input.generation,
    attempt: input.attempt,
    channel: input.hookId,
    detail,
  });
}
