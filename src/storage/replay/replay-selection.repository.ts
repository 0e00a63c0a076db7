import type { As4InboundDoc } from '../as4/as4-inbound.schema';
import { describe as describeDocument, type DocumentRecord, type StoredDocument } from '../document.repository';
import type { DocumentHistoryDoc, Models } from '../models';

/** A time window over when something was written: from inclusive, to exclusive; either may be open. */
export interface ReplayWindow {
  from?: Date | undefined;
  to?: Date | undefined;
}

function windowFilter(w: ReplayWindow): Record<string, Date> | undefined {
  const f: Record<string, Date> = {};
  if (w.from) f['$gte'] = w.from;
  if (w.to) f['$lt'] = w.to;
  return Object.keys(f).length > 0 ? f : undefined;
}

/** A received AS4 message as replay lists it. */
export interface InboundMessageRow {
  messageId: string;
  tenantId: string;
  partyId: string;
  state: string;
  receivedAt: Date;
}

/** The reads of bulk replay's selections (src/replay): reads only, outside any request path. */
export class ReplaySelectionRepository {
  constructor(private readonly models: Models) {}

  /**
   * Sales invoices of the tenants whose current state is `state`, written in the window, oldest first (ties by
   * document id). Found through their history entries of that state, then read with their whole history.
   */
  async outboundInState(tenantIds: readonly string[], state: string, window: ReplayWindow): Promise<DocumentRecord[]> {
    const entries = await this.models.DocumentHistory.find({ state }, { docKey: 1 })
      .lean<DocumentHistoryDoc[]>()
      .exec();
    const keys = [...new Set(entries.map((e) => e.docKey))].filter((k) => tenantIds.some((t) => k.startsWith(`${t}:`)));
    if (keys.length === 0) return [];
    const filter: Record<string, unknown> = {
      _id: { $in: keys },
      tenantId: { $in: [...tenantIds] },
      direction: 'outbound',
    };
    const createdAt = windowFilter(window);
    if (createdAt) filter['createdAt'] = createdAt;
    const stored = await this.models.Document.find(filter)
      .sort({ createdAt: 1, documentId: 1 })
      .lean<StoredDocument[]>()
      .exec();
    if (stored.length === 0) return [];
    const all = await this.models.DocumentHistory.find({ docKey: { $in: stored.map((d) => d._id) } })
      .lean<DocumentHistoryDoc[]>()
      .exec();
    const byKey = new Map<string, DocumentHistoryDoc[]>();
    for (const e of all) byKey.set(e.docKey, [...(byKey.get(e.docKey) ?? []), e]);
    return stored.map((d) => describeDocument(d, byKey.get(d._id) ?? [])).filter((d) => d.state === state);
  }

  /** Received AS4 messages of the tenants, received in the window (and in `state` when given), oldest first. */
  async inboundMessages(
    tenantIds: readonly string[],
    window: ReplayWindow,
    state?: string,
  ): Promise<InboundMessageRow[]> {
    const filter: Record<string, unknown> = { tenantId: { $in: [...tenantIds] } };
    const receivedAt = windowFilter(window);
    if (receivedAt) filter['receivedAt'] = receivedAt;
    if (state !== undefined) filter['state'] = state;
    const docs = await this.models.As4Inbound.find(filter, { tenantId: 1, partyId: 1, state: 1, receivedAt: 1 })
      .sort({ receivedAt: 1, _id: 1 })
      .lean<As4InboundDoc[]>()
      .exec();
    return docs.map((d) => ({
      messageId: d._id,
      tenantId: d.tenantId,
      partyId: d.partyId,
      state: d.state ?? 'stored',
      receivedAt: d.receivedAt,
    }));
  }
}
