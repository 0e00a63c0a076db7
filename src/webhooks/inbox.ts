import { GatewayError } from '../core/gateway-error';
import type { InboxEntryDoc, InboxPosition, InboxRepository } from '../storage/events/inbox.repository';
import type { HookRecord, HookRepository } from '../storage/hooks/hook.repository';
import { buildEventPayload, type EventPayload, type GatewayEvent } from './event-payload';
import { credentialsMatch, entryToken, newEntrySecret, parseEntryToken, sameSecret } from './httpsin';

/**
 * The inbox of an httpsin hook (spec 6.9; decisions.md "httpsin hooks: a pull inbox"). A delivery to the hook is an
 * entry put in the gateway's own database (one keyed insert per (hook, event), the delivery id); the receiver lists
 * the unacknowledged entries, reads one by its token (the `$token$` of the hook URL), downloads its document, and
 * acknowledges it (a keyed insert of its own). Unacknowledged entries stay.
 */

export const INBOX_MAX_LIMIT = 500;
export const INBOX_DEFAULT_LIMIT = 50;
/** Entries read at most for one page (acknowledged ones are skipped); past it the page ends early with a cursor. */
export const INBOX_MAX_SCANNED = 5_000;

export const inboxPath = (hookId: string): string => `/api/v1/inbox/${encodeURIComponent(hookId)}`;

/** One entry as the inbox API shows it. */
export interface InboxItem {
  /** Names this entry (and its document) in the inbox: `$token$` of the hook URL. */
  token: string;
  eventId: string;
  /** The delivery id of (event, hook), as X-Service-Delivery of an https hook. */
  deliveryId: string;
  /** When the delivery put it in the inbox. */
  addedOn: string;
  /** When it was acknowledged; null while it is in the listing. */
  acknowledgedOn: string | null;
  /** The event as spec 6.3 shapes a delivery (`sentOn` = addedOn). */
  event: EventPayload;
  links: { self: string; document: string | null; ack: string };
}

export interface HttpsinInboxDeps {
  inbox: InboxRepository;
  hooks: HookRepository;
  now?: () => Date;
}

export function encodeInboxCursor(p: InboxPosition): string {
  return Buffer.from(JSON.stringify({ t: p.createdOn.getTime(), i: p.id }), 'utf8').toString('base64url');
}

export function decodeInboxCursor(text: string): InboxPosition {
  if (text.length <= 200) {
    try {
      const v = JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as { t?: unknown; i?: unknown };
      if (typeof v.t === 'number' && Number.isFinite(v.t) && typeof v.i === 'string' && /^[0-9a-f-]{36}$/.test(v.i))
        return { createdOn: new Date(v.t), id: v.i };
    } catch {
      // fall through
    }
  }
  throw new GatewayError('BAD_REQUEST', 'cursor is not one this inbox returned');
}

export class HttpsinInbox {
  private readonly now: () => Date;

  constructor(private readonly deps: HttpsinInboxDeps) {
    this.now = deps.now ?? (() => new Date());
  }

  /** The delivery side: puts the event in the hook's inbox (a repeat finds its entry there). */
  async put(input: {
    tenantId: string;
    hookId: string;
    deliveryId: string;
    event: GatewayEvent;
  }): Promise<'inserted' | 'exists'> {
    return this.deps.inbox.put({
      _id: input.deliveryId,
      tenantId: input.tenantId,
      hookId: input.hookId,
      eventId: input.event.id,
      secret: newEntrySecret(),
      event: JSON.stringify(input.event),
      createdOn: this.now(),
    });
  }

  /**
   * The hook whose inbox these Basic credentials open, or null: unknown and deleted hooks, hooks of another action and
   * wrong credentials are one answer, so the inbox says nothing about hooks the caller does not hold the key of. A
   * switched-off hook's inbox stays readable (it only gets no new entries).
   */
  async authenticate(hookId: string, user: string, password: string): Promise<HookRecord | null> {
    const hook = await this.deps.hooks.findForCredentials(hookId);
    const url = hook && hook.action === 'httpsin' ? hook.url : null;
    return credentialsMatch(url, user, password) && hook ? hook : null;
  }

  /** Unacknowledged entries, oldest first. */
  async list(
    hook: HookRecord,
    options: { cursor?: string | undefined; limit: number },
  ): Promise<{ items: InboxItem[]; nextCursor: string | null }> {
    const after = options.cursor ? decodeInboxCursor(options.cursor) : undefined;
    const { items, scannedTo } = await this.deps.inbox.listUnacknowledged(hook.id, {
      after,
      limit: options.limit,
      maxScanned: INBOX_MAX_SCANNED,
    });
    return {
      items: items.filter((e) => e.tenantId === hook.tenantId).map((e) => itemOf(hook, e, null)),
      nextCursor: scannedTo ? encodeInboxCursor(scannedTo) : null,
    };
  }

  /** The entry a token names in this hook's inbox; 404 for anything else, whoever it belongs to. */
  async entry(hook: HookRecord, token: string): Promise<{ entry: InboxEntryDoc; item: InboxItem }> {
    const entry = await this.entryOf(hook, token);
    const ack = await this.deps.inbox.ackOf(entry._id);
    return { entry, item: itemOf(hook, entry, ack?.at ?? null) };
  }

  /** Acknowledges an entry; a repeat answers the first acknowledgement. */
  async ack(hook: HookRecord, token: string): Promise<{ item: InboxItem; first: boolean }> {
    const entry = await this.entryOf(hook, token);
    const { ack, first } = await this.deps.inbox.ack(entry, this.now());
    return { item: itemOf(hook, entry, ack.at), first };
  }

  private async entryOf(hook: HookRecord, token: string): Promise<InboxEntryDoc> {
    const parsed = parseEntryToken(token);
    const entry = parsed ? await this.deps.inbox.get(parsed.entryId) : null;
    // The secret is compared even when the entry is another hook's, so timing says nothing about other inboxes.
    const secretOk = parsed !== null && entry !== null && sameSecret(entry.secret, parsed.secret);
    if (!entry || !secretOk || entry.hookId !== hook.id || entry.tenantId !== hook.tenantId)
      throw new GatewayError('NOT_FOUND', 'No such entry in this inbox');
    return entry;
  }
}

function itemOf(hook: HookRecord, e: InboxEntryDoc, acknowledgedOn: Date | null): InboxItem {
  const event = JSON.parse(e.event) as GatewayEvent;
  const token = entryToken(e._id, e.secret);
  const self = `${inboxPath(hook.id)}/${token}`;
  return {
    token,
    eventId: e.eventId,
    deliveryId: e._id,
    addedOn: e.createdOn.toISOString(),
    acknowledgedOn: acknowledgedOn ? acknowledgedOn.toISOString() : null,
    event: buildEventPayload(event, hook.id, e.createdOn),
    links: { self, document: event.documentId ? `${self}/document` : null, ack: `${self}/ack` },
  };
}

/** The event an entry holds (for its document). */
export function entryEvent(e: InboxEntryDoc): GatewayEvent {
  return JSON.parse(e.event) as GatewayEvent;
}
