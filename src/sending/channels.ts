import { chooseChannel, channelKey, type Channel } from '../core/channels';
import { Transition } from '../core/document-states';
import type { RoutableEvent } from '../core/topics';
import type { HookRecord } from '../storage/hooks/hook.repository';
import type { ChooseChannelInput, ChooseChannelOutcome } from '../../workflows/contracts/send-invoice';
import type { SendInvoiceDeps } from './ports';

/**
 * One sending topic of a document: its channel (src/core/channels.ts, from the party's and the environment's hooks as
 * they are now), and the topic's event, published whatever the choice (integrators' `Send*` hooks hear of every
 * channel step; the channel hooks themselves are acted on here, not by the event path). A drop hook's choice is
 * recorded on the document as its final state.
 */
export async function chooseSendChannel(
  deps: SendInvoiceDeps,
  input: ChooseChannelInput,
): Promise<ChooseChannelOutcome> {
  const { facts, format } = input;
  const hooks = await deps.hooks.listForRouting(input.tenantId, facts.partyId);
  const routing = facts.routing?.ok ? facts.routing : undefined;
  const details: Record<string, string> = {
    id: input.documentId,
    sender: routing?.sender.value ?? '',
    recipient: routing?.receiver.value ?? '',
    documentTypeId: format.documentTypeId ?? '',
    format: format.id,
  };
  const createdOn = new Date();
  const choice = chooseChannel(input.topic, input.kind, hooks, {
    first: input.first,
    tried: input.tried,
    details,
    ...(input.forced !== undefined ? { forced: input.forced } : {}),
    passesFilter: sendingEventFilter(deps.passesFilter, {
      partyId: facts.legalEntityId ?? '',
      createdBy: facts.createdBy,
      createdOn,
      documentId: input.documentId,
    }),
  });
  const what = input.kind === 'CreditNote' ? 'Credit note' : 'Invoice';
  const message = choice.ok
    ? `${input.because ? `${input.because}; ` : ''}${what} ${describe(choice.channel)}`
    : `${input.because ? `${input.because}; ` : ''}no channel: ${choice.reason}`;
  if (choice.ok && choice.channel.kind === 'drop') {
    await deps.documents.recordTransition(input.tenantId, input.documentId, Transition.dropped, {
      generation: input.generation,
      detail: `not sent: the drop hook ${choice.channel.hookId} takes ${input.topic}`,
    });
  }
  const { event } = await deps.events.publishEvent({
    id: input.eventId,
    tenantId: input.tenantId,
    topic: input.topic,
    party: facts.legalEntityId !== null ? { partyId: facts.partyId, legalEntityId: facts.legalEntityId } : null,
    documentId: input.documentId,
    message,
    details: { ...details, channel: choice.ok ? channelKey(choice.channel) : '' },
    createdBy: facts.createdBy,
    createdOn,
    // An https hook that takes the document as its channel gets the document, not also the event about it.
    ...(choice.ok && choice.channel.kind === 'https' ? { excludeHookIds: [choice.channel.hookId] } : {}),
  });
  const published = { eventId: event.id, label: event.label };
  return choice.ok
    ? { ok: true, channel: choice.channel, event: published }
    : { ok: false, reason: choice.reason, event: published };
}

/**
 * Hook filters over a sending event, seeing it as the event path shows events to them (the payload's party, creator
 * and ISO time): the run and queryRecipientParty evaluate them alike.
 */
export function sendingEventFilter(
  passesFilter: SendInvoiceDeps['passesFilter'],
  event: { partyId: string; createdBy: string; createdOn: Date; documentId?: string },
): (hook: HookRecord, e: RoutableEvent) => boolean {
  const createdOn = event.createdOn.toISOString();
  return (hook, e) =>
    passesFilter(hook, {
      topic: e.topic,
      partyId: event.partyId,
      message: '',
      createdBy: event.createdBy,
      createdOn,
      ...(event.documentId !== undefined ? { documentId: event.documentId } : {}),
      details: e.details ?? {},
    });
}

function describe(channel: Channel): string {
  switch (channel.kind) {
    case 'peppol':
      return channel.hookId ? `goes over Peppol (hook ${channel.hookId})` : 'goes over Peppol';
    case 'mailto':
      return `goes by e-mail (hook ${channel.hookId})`;
    case 'https':
      return `goes over https (hook ${channel.hookId})`;
    case 'drop':
      return `is not sent: the drop hook ${channel.hookId} takes it`;
  }
}
