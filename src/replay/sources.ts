import { DocumentState, generationOf } from '../core/document-states';
import { GatewayError } from '../core/gateway-error';
import { matchesTopic, validateTopicPattern } from '../core/topics';
import type { ReceiveDocumentInput } from '../../workflows/contracts/receive-document';
import type { DocumentRecord, DocumentRepository } from '../storage/document.repository';
import type { EventRecord, EventRepository } from '../storage/events/event.repository';
import type { HookRepository } from '../storage/hooks/hook.repository';
import type { ReplaySelectionRepository, ReplayWindow } from '../storage/replay/replay-selection.repository';
import { resendDocument, type SendRunControl } from '../sending/operator';
import { deliveryIdFor } from '../webhooks/delivery-id';
import { DELIVERABLE_ACTIONS, type EventPublisher } from '../webhooks/publish';
import type { ActOutcome, ReplayItem, ReplaySource } from './runner';

/** The three things bulk replay acts on: event deliveries, sales invoices in InvoiceSentError, received messages. */

const PAGE = 500;

function windowText(w: ReplayWindow): Record<string, string> {
  return {
    ...(w.from ? { from: w.from.toISOString() } : {}),
    ...(w.to ? { to: w.to.toISOString() } : {}),
  };
}

/** `--from` / `--to`: ISO 8601 instants with a zone (`2026-05-01T00:00:00Z`); from before to. */
export function parseWindow(from: string | undefined, to: string | undefined): ReplayWindow {
  const parse = (name: string, text: string | undefined): Date | undefined => {
    if (text === undefined) return undefined;
    const ok = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2}))?$/.test(text);
    const d = new Date(text);
    if (!ok || Number.isNaN(d.getTime()))
      throw new GatewayError('BAD_REQUEST', `--${name} must be an ISO 8601 date or instant with a zone, not "${text}"`);
    return d;
  };
  const w = { from: parse('from', from), to: parse('to', to) };
  if (w.from && w.to && w.from.getTime() >= w.to.getTime())
    throw new GatewayError('BAD_REQUEST', '--from must be before --to');
  return w;
}

// ---------------------------------------------------------------------------------------------------------------
// Event deliveries

export interface EventItem extends ReplayItem {
  eventId: string;
  hookId: string;
  deliveryId: string;
}

/** Which deliveries to redeliver: every given criterion holds (at least one is given). */
export interface EventSelection {
  tenantIds: readonly string[];
  hookId?: string | undefined;
  /** A topic or a wildcard pattern; with `state`, the original event's topic. */
  topic?: string | undefined;
  window: ReplayWindow;
  /** `HookSentError`: deliveries that ended there (the events about them name the original and the hook). */
  state?: 'HookSentError' | undefined;
}

/** A delivery's runs as Temporal knows them (composition: the delivery's workflow id and its latest run). */
export interface DeliveryRunLookup {
  latestRunId(tenantId: string, deliveryId: string): Promise<string | undefined>;
}

export interface EventSourceDeps {
  events: Pick<EventRepository, 'list'>;
  hooks: Pick<HookRepository, 'findInTenants'>;
  publisher: Pick<EventPublisher, 'redeliver'>;
  runs: DeliveryRunLookup;
}

/** Checks the selection against the tenants it may see: an unknown hook, or one of another tenant, is an error. */
export async function checkEventSelection(deps: EventSourceDeps, s: EventSelection): Promise<EventSelection> {
  if (!s.hookId && !s.topic && !s.window.from && !s.window.to && !s.state)
    throw new GatewayError('BAD_REQUEST', 'replay events needs --hook, --topic, --from/--to or --state');
  if (s.topic !== undefined) {
    const problem = validateTopicPattern(s.topic);
    if (problem) throw new GatewayError('BAD_REQUEST', `--topic: ${problem}`);
  }
  if (s.hookId !== undefined) {
    const hook = await deps.hooks.findInTenants(s.tenantIds, s.hookId);
    if (!hook) throw new GatewayError('NOT_FOUND', `Hook ${s.hookId} not found in tenant ${s.tenantIds.join(', ')}`);
    if (!DELIVERABLE_ACTIONS.has(hook.action))
      throw new GatewayError(
        'BAD_REQUEST',
        `Hook ${s.hookId} has action ${hook.action}; only https and httpsin hooks are delivered to`,
      );
    // A hook belongs to one tenant: its events are there.
    return { ...s, tenantIds: [hook.tenantId] };
  }
  return s;
}

async function allEvents(
  events: EventSourceDeps['events'],
  q: { tenantIds: readonly string[]; topic?: string | undefined; window: ReplayWindow },
): Promise<EventRecord[]> {
  const out: EventRecord[] = [];
  for (let after: EventRecord | undefined; ;) {
    const page = await events.list({
      tenantIds: q.tenantIds,
      since: q.window.from,
      until: q.window.to,
      topic: q.topic,
      ...(after ? { after: { createdOn: after.createdOn, id: after.id } } : {}),
      limit: PAGE,
    });
    out.push(...page);
    after = page.at(-1);
    if (page.length < PAGE) return out;
  }
}

export class EventReplaySource implements ReplaySource<EventItem> {
  readonly kind = 'events';
  readonly selection: Record<string, string>;

  constructor(
    private readonly deps: EventSourceDeps,
    private readonly s: EventSelection,
  ) {
    this.selection = {
      tenants: [...s.tenantIds].sort().join(','),
      ...(s.hookId ? { hook: s.hookId } : {}),
      ...(s.topic ? { topic: s.topic } : {}),
      ...(s.state ? { state: s.state } : {}),
      ...windowText(s.window),
    };
  }

  private item(tenantId: string, eventId: string, hookId: string, topic: string, createdOn: Date): EventItem {
    const deliveryId = deliveryIdFor(eventId, hookId);
    return {
      key: `${tenantId}/${eventId}/${hookId}`,
      tenantId,
      eventId,
      hookId,
      deliveryId,
      view: { tenantId, eventId, hookId, topic, createdOn: createdOn.toISOString() },
    };
  }

  async select(): Promise<EventItem[]> {
    const { s } = this;
    const items = new Map<string, EventItem>();
    if (s.state === 'HookSentError') {
      // The events about failed deliveries name the delivery's event and hook; the window is when it failed.
      for (const e of await allEvents(this.deps.events, {
        tenantIds: s.tenantIds,
        topic: 'HookSentError',
        window: s.window,
      })) {
        const eventId = e.details['originalEventId'];
        const hookId = e.details['hookId'];
        const topic = e.details['originalTopic'] ?? '';
        if (!eventId || !hookId) continue;
        if (s.hookId !== undefined && hookId !== s.hookId) continue;
        if (s.topic !== undefined && !matchesTopic(s.topic, topic)) continue;
        const item = this.item(e.tenantId, eventId, hookId, topic, e.createdOn);
        if (!items.has(item.key)) items.set(item.key, item);
      }
      return [...items.values()];
    }
    for (const e of await allEvents(this.deps.events, { tenantIds: s.tenantIds, topic: s.topic, window: s.window })) {
      for (const r of e.routes) {
        if (r.status !== 'started' || !DELIVERABLE_ACTIONS.has(r.action)) continue;
        if (s.hookId !== undefined && r.hookId !== s.hookId) continue;
        const item = this.item(e.tenantId, e.id, r.hookId, e.topic, e.createdOn);
        if (!items.has(item.key)) items.set(item.key, item);
      }
    }
    return [...items.values()];
  }

  /** The delivery's latest run before acting: a redelivery starts a new one. */
  async before(item: EventItem): Promise<string | null> {
    return (await this.deps.runs.latestRunId(item.tenantId, item.deliveryId)) ?? null;
  }

  async act(item: EventItem): Promise<ActOutcome> {
    const result = await this.deps.publisher.redeliver(item.tenantId, item.eventId, item.hookId);
    const delivery = result.deliveries.find((d) => d.hookId === item.hookId);
    if (delivery?.status === 'running')
      return { outcome: 'running', detail: 'a delivery of this event to the hook is in progress; not started again' };
    return { outcome: 'sent', detail: `delivery ${item.deliveryId} started` };
  }

  async resolveInDoubt(item: EventItem, before: string | null): Promise<ActOutcome | null> {
    const latest = (await this.deps.runs.latestRunId(item.tenantId, item.deliveryId)) ?? null;
    return latest !== null && latest !== before
      ? { outcome: 'sent', detail: `delivery ${item.deliveryId} started (run ${latest})` }
      : null;
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Sales invoices in InvoiceSentError

export interface InvoiceItem extends ReplayItem {
  documentId: string;
}

export interface InvoiceSourceDeps {
  selection: Pick<ReplaySelectionRepository, 'outboundInState'>;
  documents: Pick<DocumentRepository, 'find' | 'recordTransition'>;
  control: SendRunControl;
}

function lastGeneration(doc: DocumentRecord): number {
  return Math.max(0, ...doc.history.map((h) => generationOf(h.key)));
}

/** Sales invoices in InvoiceSentError, each sent again with the resend of `document resend` (a new generation). */
export class InvoiceReplaySource implements ReplaySource<InvoiceItem> {
  readonly kind = 'invoices';
  readonly selection: Record<string, string>;

  constructor(
    private readonly deps: InvoiceSourceDeps,
    private readonly tenantIds: readonly string[],
    private readonly window: ReplayWindow,
  ) {
    this.selection = {
      tenants: [...tenantIds].sort().join(','),
      state: DocumentState.InvoiceSentError,
      ...windowText(window),
    };
  }

  async select(): Promise<InvoiceItem[]> {
    const docs = await this.deps.selection.outboundInState(this.tenantIds, DocumentState.InvoiceSentError, this.window);
    return docs.map((d) => ({
      key: `${d.tenantId}/${d.documentId}`,
      tenantId: d.tenantId,
      documentId: d.documentId,
      view: {
        tenantId: d.tenantId,
        documentId: d.documentId,
        partyId: d.partyId,
        createdAt: d.createdAt.toISOString(),
      },
    }));
  }

  private async read(item: InvoiceItem): Promise<DocumentRecord> {
    const doc = await this.deps.documents.find(item.tenantId, item.documentId);
    if (!doc)
      throw new GatewayError(
        'DOCUMENT_NOT_FOUND',
        `Sales invoice ${item.documentId} not found in tenant ${item.tenantId}`,
      );
    return doc;
  }

  /** The document's last generation: a resend writes the next. */
  async before(item: InvoiceItem): Promise<string | null> {
    return String(lastGeneration(await this.read(item)));
  }

  async act(item: InvoiceItem): Promise<ActOutcome> {
    const doc = await this.read(item);
    if (doc.state !== DocumentState.InvoiceSentError)
      return { outcome: 'skipped', detail: `the invoice is ${doc.state} now, not InvoiceSentError` };
    const { generation } = await resendDocument(this.deps.documents, this.deps.control, doc);
    return { outcome: 'resent', detail: `generation ${generation}` };
  }

  async resolveInDoubt(item: InvoiceItem, before: string | null): Promise<ActOutcome | null> {
    const now = lastGeneration(await this.read(item));
    return before !== null && now > Number(before) ? { outcome: 'resent', detail: `generation ${now}` } : null;
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Received messages

export interface InboundItem extends ReplayItem {
  messageId: string;
}

export interface InboundSourceDeps {
  selection: Pick<ReplaySelectionRepository, 'inboundMessages'>;
  /** The receive run's start (REJECT_DUPLICATE: one run per message, ever). */
  startReceiveDocument(input: ReceiveDocumentInput): Promise<'started' | 'already-started'>;
}

/**
 * Received AS4 messages, each handed to its receive run through the receiver's own start: a message whose run never
 * started (the start failed after the commit) is processed now; one already processed is reported and left as it is.
 */
export class InboundReplaySource implements ReplaySource<InboundItem> {
  readonly kind = 'inbound';
  readonly selection: Record<string, string>;

  constructor(
    private readonly deps: InboundSourceDeps,
    private readonly tenantIds: readonly string[],
    private readonly window: ReplayWindow,
    private readonly state?: string,
  ) {
    this.selection = {
      tenants: [...tenantIds].sort().join(','),
      ...(state ? { state } : {}),
      ...windowText(window),
    };
  }

  async select(): Promise<InboundItem[]> {
    const rows = await this.deps.selection.inboundMessages(this.tenantIds, this.window, this.state);
    return rows.map((r) => ({
      key: `${r.tenantId}/${r.messageId}`,
      tenantId: r.tenantId,
      messageId: r.messageId,
      view: {
        tenantId: r.tenantId,
        messageId: r.messageId,
        partyId: r.partyId,
        state: r.state,
        receivedAt: r.receivedAt.toISOString(),
      },
    }));
  }

  before(): Promise<string | null> {
    return Promise.resolve(null);
  }

  async act(item: InboundItem): Promise<ActOutcome> {
    const started = await this.deps.startReceiveDocument({ tenantId: item.tenantId, messageId: item.messageId });
    return started === 'started'
      ? { outcome: 'started', detail: 'receive processing started' }
      : { outcome: 'already-started', detail: 'the message has its receive run already; nothing started' };
  }

  /** Starting is idempotent (one run per message): an item in doubt is simply started again. */
  resolveInDoubt(): Promise<ActOutcome | null> {
    return Promise.resolve(null);
  }
}
