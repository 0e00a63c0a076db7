import type { Models, DocumentDoc, DocumentFormatInfo, DocumentValidationInfo } from './models';
import { isDuplicateKeyError } from './connection';

export type DocumentRecord = DocumentDoc;

/** A new document record, sent or received. */
export interface NewOutboundDocument {
  tenantId: string;
  documentId: string;
  partyId: string;
  channel?: string | undefined;
  createdBy: string;
  contentType: string;
  filename?: string | undefined;
  size: number;
  sha256: string;
  blobId: string;
}

export interface HistoryUpdate {
  state: string;
  detail?: string;
  /** Makes the append idempotent: an entry with the same key is written once, however often the caller retries. */
  key: string;
}

/**
 * The record key is `<tenantId>:<documentId>`: every lookup is scoped by tenant by construction, and a lookup by the
 * whole `_id` is the one query FerretDB's SQLite backend answers from its key instead of scanning the collection.
 */
export function documentKey(tenantId: string, documentId: string): string {
  return `${tenantId}:${documentId}`;
}

/** Every query is scoped by tenantId: no code path can read another tenant's document by id alone. */
export class DocumentRepository {
  constructor(private readonly models: Models) {}

  /** Inserts the record; returns null when the (tenant, documentId) pair already exists. */
  async insertOutbound(doc: NewOutboundDocument): Promise<DocumentRecord | null> {
    return this.insert(doc, 'outbound');
  }

  /**
   * A received document (the business message of a received Peppol SBD), accepted at once: the AS4 receipt already
   * confirmed it. Null when the id exists (a retried step), like insertOutbound.
   */
  async insertInbound(doc: NewOutboundDocument): Promise<DocumentRecord | null> {
    return this.insert(doc, 'inbound');
  }

  /** Removes a received document's record and returns it (the caller removes its blob); null when there was none. */
  async deleteInbound(tenantId: string, partyId: string, documentId: string): Promise<DocumentRecord | null> {
    const doc = await this.findForParty(tenantId, partyId, documentId);
    if (!doc || doc.direction !== 'inbound') return null;
    await this.models.Document.deleteOne({ _id: documentKey(tenantId, documentId) }).exec();
    return doc;
  }

  private async insert(doc: NewOutboundDocument, direction: 'outbound' | 'inbound'): Promise<DocumentRecord | null> {
    const now = new Date();
    try {
      const created = await this.models.Document.create({
        _id: documentKey(doc.tenantId, doc.documentId),
        ...doc,
        channel: doc.channel ?? null,
        filename: doc.filename ?? null,
        direction,
        accepted: direction === 'inbound',
        state: 'received',
        history: [{ state: 'received', at: now, key: 'received' }],
        historyKeys: ['received'],
        format: null,
        createdAt: now,
        updatedAt: now,
      });
      return created.toObject();
    } catch (e) {
      if (isDuplicateKeyError(e)) return null;
      throw e;
    }
  }

  async find(tenantId: string, documentId: string): Promise<DocumentRecord | null> {
    return this.models.Document.findById(documentKey(tenantId, documentId)).lean<DocumentRecord>().exec();
  }

  async findForParty(tenantId: string, partyId: string, documentId: string): Promise<DocumentRecord | null> {
    const doc = await this.find(tenantId, documentId);
    return doc && doc.partyId === partyId ? doc : null;
  }

  /** Swaps the stored bytes of a record whose workflow was never confirmed started (a retried upload). */
  async replaceUnacceptedBlob(tenantId: string, documentId: string, expectedBlobId: string, blob: { blobId: string; size: number; sha256: string; contentType: string; filename?: string | undefined }): Promise<boolean> {
    const res = await this.models.Document.updateOne(
      { _id: documentKey(tenantId, documentId), accepted: false, blobId: expectedBlobId },
      { $set: { ...blob, filename: blob.filename ?? null, updatedAt: new Date() } },
    ).exec();
    return res.modifiedCount === 1;
  }

  /**
   * Records that the workflow start was confirmed. One write in the usual case (flag, state and history entry
   * together); the entry is written once however often this runs.
   */
  async markAccepted(tenantId: string, documentId: string): Promise<void> {
    const _id = documentKey(tenantId, documentId);
    const now = new Date();
    const entry = { state: 'accepted', at: now, key: 'accepted' };
    const first = await this.models.Document.updateOne(
      { _id, accepted: false, state: 'received' },
      { $set: { accepted: true, state: 'accepted', updatedAt: now }, $push: { history: entry, historyKeys: entry.key } },
    ).exec();
    if (first.modifiedCount === 1) return;
    // The worker starts as soon as the workflow does and may already have recorded a later state; keep that state
    // and only add the flag and the entry (unless an earlier call did).
    await this.models.Document.updateOne(
      { _id, historyKeys: { $ne: entry.key } },
      { $set: { accepted: true, updatedAt: now }, $push: { history: entry, historyKeys: entry.key } },
    ).exec();
  }

  async appendHistory(
    tenantId: string,
    documentId: string,
    update: HistoryUpdate,
    extra: { format?: DocumentFormatInfo; validation?: DocumentValidationInfo } = {},
  ): Promise<void> {
    const now = new Date();
    await this.models.Document.updateOne(
      { _id: documentKey(tenantId, documentId), historyKeys: { $ne: update.key } },
      {
        $set: {
          state: update.state,
          updatedAt: now,
          ...(extra.format ? { format: extra.format } : {}),
          ...(extra.validation ? { validation: extra.validation } : {}),
        },
        $push: {
          history: { state: update.state, at: now, key: update.key, ...(update.detail ? { detail: update.detail } : {}) },
          historyKeys: update.key,
        },
      },
    ).exec();
  }
}
