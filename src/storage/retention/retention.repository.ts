import type { BlobStore } from '../blob-store';
import type { DocumentDoc, DocumentHistoryDoc, Models } from '../models';
import { documentKey } from '../document.repository';
import { isDuplicateKeyError } from '../connection';
import type { LegalHoldDoc, PurgeIntentDoc } from './retention.schema';
import type { RetentionCursor, RetentionKind } from '../../../workflows/contracts/purge-records';

export type { RetentionCursor, RetentionKind };

/** A record of a kind as the purge looks at it. */
export interface RetentionRow {
  _id: string;
  at: Date;
  tenantId: string;
  documentId: string | null;
  blobId: string | null;
  /** A received AS4 message: `stored` until its receive run has read it. */
  state: string | null;
}

/** What one purge step deletes: the kind's keys, the documents among them, and their bytes. */
export interface PurgeSelection {
  ids: string[];
  documents: Array<{ tenantId: string; documentId: string }>;
  blobIds: string[];
}

type Source = { model: keyof Models; time: string };
const SOURCES: Record<RetentionKind, Source> = {
  documents: { model: 'Document', time: 'createdAt' },
  'as4-messages': { model: 'As4Inbound', time: 'receivedAt' },
  events: { model: 'WebhookEvent', time: 'createdOn' },
  'delivery-logs': { model: 'DeliveryAttempt', time: 'at' },
  'inbox-entries': { model: 'InboxEntry', time: 'createdOn' },
};

// One query shape over five models: mongoose's per-model types do not unify, so the model is reached untyped.
interface AnyModel {
  find(
    filter: object,
    projection?: object,
  ): {
    sort(s: object): { limit(n: number): { lean(): { exec(): Promise<Array<Record<string, unknown>>> } } };
  };
  deleteMany(filter: object): { exec(): Promise<unknown> };
}

/**
 * The storage side of retention: pages of old records per kind in (time, key) order, the legal holds, and the batch
 * deletes. A batch is deleted under a purge intent (a keyed insert naming what goes, removed last), so a step that
 * dies half way leaves a record of what is left to delete and the next step finishes it; every delete is by key and
 * repeating one is harmless. Records are deleted before the bytes they point at, so no record ever points at missing
 * bytes.
 */
export class RetentionRepository {
  constructor(
    private readonly models: Models,
    private readonly blobs: BlobStore,
  ) {}

  private model(kind: RetentionKind): AnyModel {
    return this.models[SOURCES[kind].model] as unknown as AnyModel;
  }

  /** Records of `kind` older than `before`, after `cursor`, oldest first, at most `limit`. */
  async page(
    kind: RetentionKind,
    before: Date,
    cursor: RetentionCursor | undefined,
    limit: number,
  ): Promise<RetentionRow[]> {
    const time = SOURCES[kind].time;
    const filter: Record<string, unknown> = { [time]: { $lt: before } };
    if (cursor) {
      const at = new Date(cursor.at);
      filter['$or'] = [{ [time]: { $gt: at } }, { [time]: at, _id: { $gt: cursor.id } }];
    }
    const rows = await this.model(kind)
      .find(filter)
      .sort({ [time]: 1, _id: 1 })
      .limit(limit)
      .lean()
      .exec();
    return rows.map((r) => ({
      _id: String(r['_id']),
      at: r[time] as Date,
      tenantId: String(r['tenantId']),
      documentId: typeof r['documentId'] === 'string' ? r['documentId'] : null,
      blobId: typeof r['blobId'] === 'string' ? r['blobId'] : null,
      state: typeof r['state'] === 'string' ? r['state'] : null,
    }));
  }

  /** The stored documents of a page with their history entries (one query each). */
  async documentsWithHistory(
    ids: readonly string[],
  ): Promise<Array<{ stored: DocumentDoc; entries: DocumentHistoryDoc[] }>> {
    if (ids.length === 0) return [];
    const stored = await this.models.Document.find({ _id: { $in: [...ids] } })
      .lean<DocumentDoc[]>()
      .exec();
    const entries = await this.models.DocumentHistory.find({ docKey: { $in: [...ids] } })
      .lean<DocumentHistoryDoc[]>()
      .exec();
    const byKey = new Map<string, DocumentHistoryDoc[]>();
    for (const e of entries) byKey.set(e.docKey, [...(byKey.get(e.docKey) ?? []), e]);
    return stored.map((s) => ({ stored: s, entries: byKey.get(s._id) ?? [] }));
  }

  /** Which of these document keys (`<tenantId>:<documentId>`) are under a legal hold. */
  async heldDocuments(keys: readonly string[]): Promise<Set<string>> {
    if (keys.length === 0) return new Set();
    const holds = await this.models.LegalHold.find({ _id: { $in: [...new Set(keys)] } }, { _id: 1 })
      .lean<Array<{ _id: string }>>()
      .exec();
    return new Set(holds.map((h) => h._id));
  }

  /** Which of these AS4 MessageIds carried a document under a legal hold. */
  async heldMessages(messageIds: readonly string[]): Promise<Set<string>> {
    if (messageIds.length === 0) return new Set();
    const holds = await this.models.LegalHold.find({ as4MessageId: { $in: [...messageIds] } }, { as4MessageId: 1 })
      .lean<Array<{ as4MessageId: string | null }>>()
      .exec();
    return new Set(holds.flatMap((h) => (h.as4MessageId ? [h.as4MessageId] : [])));
  }

  /** Purge intents of `kind` a previous step left unfinished, oldest first. */
  async pendingIntents(kind: RetentionKind, limit: number): Promise<PurgeIntentDoc[]> {
    return this.models.PurgeIntent.find({ kind }).sort({ at: 1 }).limit(limit).lean<PurgeIntentDoc[]>().exec();
  }

  /** Deletes a selection: the intent first (a keyed insert; one already there is the same step retried), then all. */
  async purge(kind: RetentionKind, intentId: string, selection: PurgeSelection): Promise<void> {
    if (selection.ids.length === 0) return;
    const intent: PurgeIntentDoc = { _id: intentId, kind, at: new Date(), ...selection };
    try {
      await this.models.PurgeIntent.create(intent);
    } catch (e) {
      if (!isDuplicateKeyError(e)) throw e;
    }
    await this.finish(intent);
  }

  /** Carries out an intent (its deletes are by key, each harmless to repeat) and removes it last. */
  async finish(intent: PurgeIntentDoc): Promise<void> {
    const kind = intent.kind as RetentionKind;
    const ids = intent.ids;
    await this.model(kind)
      .deleteMany({ _id: { $in: ids } })
      .exec();
    switch (kind) {
      case 'documents': {
        await this.models.DocumentHistory.deleteMany({ docKey: { $in: ids } }).exec();
        // The Peppol references that match responses and MLSs to a document go with it.
        for (const [tenantId, documentIds] of byTenant(intent.documents)) {
          await this.models.SentInstance.deleteMany({ tenantId, documentId: { $in: documentIds } }).exec();
          await this.models.SentReference.deleteMany({ tenantId, documentId: { $in: documentIds } }).exec();
        }
        break;
      }
      case 'events':
        await this.models.EventRouting.deleteMany({ eventId: { $in: ids } }).exec();
        break;
      case 'inbox-entries':
        await this.models.InboxAck.deleteMany({ _id: { $in: ids } }).exec();
        break;
      default:
        break;
    }
    if (intent.blobIds.length > 0) {
      // Conversions stored for sending name their source (reconciliation keeps them while it lives): they go too.
      const derived = await this.blobs.derivedFrom(intent.blobIds);
      await this.blobs.deleteAll([...intent.blobIds, ...derived]);
    }
    await this.models.PurgeIntent.deleteOne({ _id: intent._id }).exec();
  }

  // Legal holds.

  async hold(doc: LegalHoldDoc): Promise<LegalHoldDoc | null> {
    try {
      return (await this.models.LegalHold.create(doc)).toObject();
    } catch (e) {
      if (isDuplicateKeyError(e)) return null;
      throw e;
    }
  }

  async findHold(tenantId: string, documentId: string): Promise<LegalHoldDoc | null> {
    return this.models.LegalHold.findById(documentKey(tenantId, documentId)).lean<LegalHoldDoc>().exec();
  }

  /** True when a hold was there to release. */
  async release(tenantId: string, documentId: string): Promise<boolean> {
    const out = await this.models.LegalHold.deleteOne({ _id: documentKey(tenantId, documentId) }).exec();
    return out.deletedCount > 0;
  }

  async listHolds(tenantId?: string): Promise<LegalHoldDoc[]> {
    return this.models.LegalHold.find(tenantId ? { tenantId } : {})
      .sort({ at: 1 })
      .lean<LegalHoldDoc[]>()
      .exec();
  }
}

function byTenant(docs: ReadonlyArray<{ tenantId: string; documentId: string }>): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const d of docs) out.set(d.tenantId, [...(out.get(d.tenantId) ?? []), d.documentId]);
  return out;
}
