import {
  DocumentState,
  HistoryStep,
  generationKey,
  historyOrder,
  isFinalOrder,
  SIDE_STATES,
  reportTypeOf,
  taxReportEntryOf,
  type DocumentTransition,
  type TaxReportStep,
  type TaxReportType,
} from '../core/document-states';
import type {
  Models,
  DocumentDoc,
  DocumentFormatInfo,
  DocumentHistoryDoc,
  DocumentValidationInfo,
  HistoryEntry,
} from './models';
import { isDuplicateKeyError } from './connection';

/** The stored document as written at upload: immutable. */
export type StoredDocument = DocumentDoc;

/** A stored document with what its history says: the current state, every entry in order, format and verdict. */
export interface DocumentRecord extends DocumentDoc {
  /** A sales invoice whose upload was answered 200 (its `accepted` entry exists); received documents always. */
  accepted: boolean;
  state: string;
  /** True once an entry that ends the document's life exists (delivered, InvoiceSentError). */
  final: boolean;
  history: HistoryEntry[];
  format: DocumentFormatInfo | null;
  validation: DocumentValidationInfo | null;
  /**
   * The buyer's latest Invoice Response about this (sales) document, when one arrived: its status code, when it was
   * recorded, the response document and what it said. Null otherwise.
   */
  buyerResponse?: { statusCode: string; at: Date; responseDocumentId: string; detail?: string } | null;
  /**
   * The latest step of the document's latest tax report (report 1 is the gateway's own submit; a side entry: the
   * state stays the delivery's). Null: none.
   */
  taxReport?: { step: TaxReportStep; at: Date; report: number; reportType: TaxReportType; detail?: string } | null;
}

/** A new document record, sent or received. */
export interface NewDocument {
  tenantId: string;
  documentId: string;
  partyId: string;
  /** The party's legal-entity id at upload, so the steps that publish about the document need not look it up. */
  legalEntityId?: string | undefined;
  channel?: string | undefined;
  createdBy: string;
  contentType: string;
  filename?: string | undefined;
  size: number;
  sha256: string;
  blobId: string;
}

/** Which of a party's documents a page lists (`listForParty`). */
export interface DocumentListQuery {
  tenantId: string;
  partyId: string;
  direction?: 'outbound' | 'inbound';
  /** Written at or after. */
  since?: Date;
  /** Written before. */
  until?: Date;
  /** The position after which the page starts: the last document of the previous page. */
  after?: { createdAt: Date; documentId: string };
  limit: number;
}

export interface HistoryUpdate {
  state: string;
  detail?: string;
  /** A sending step's channel (hook id, or `peppol`). */
  channel?: string;
  /** A scheduled retry: when the next attempt is due. */
  nextAttemptOn?: Date;
  /** An invoice response entry: the buyer's status code. */
  responseCode?: string;
  /** The step (document-states.ts): an entry with the same key is written once, however often the caller retries. */
  key: string;
}

/**
 * The record key is `<tenantId>:<documentId>`: every lookup is scoped by tenant by construction, and a lookup by the
 * whole `_id` is the one query FerretDB's SQLite backend answers from its key instead of scanning the collection.
 */
export function documentKey(tenantId: string, documentId: string): string {
  return `${tenantId}:${documentId}`;
}

function entryId(docKey: string, key: string): string {
  return `${docKey}#${key}`;
}

/**
 * Documents and their histories. Nothing here updates a stored document: the record is inserted once, each step of
 * its life is a history entry inserted once under a unique key, and the state is read as the entry latest in the
 * step order. Two writers (the API recording acceptance, the worker recording its steps, a retried activity beside
 * its timed-out first try) therefore never touch the same document. Every query is scoped by tenantId.
 */
export class DocumentRepository {
  constructor(private readonly models: Models) {}

  /** Inserts the record; returns null when the (tenant, documentId) pair already exists. */
  async insertOutbound(doc: NewDocument): Promise<StoredDocument | null> {
    return this.insert(doc, 'outbound');
  }

  /**
   * A received document (the business message of a received Peppol SBD), accepted at once: the AS4 receipt already
   * confirmed it. Null when the id exists (a retried step), like insertOutbound.
   */
  async insertInbound(doc: NewDocument): Promise<StoredDocument | null> {
    return this.insert(doc, 'inbound');
  }

  private async insert(doc: NewDocument, direction: 'outbound' | 'inbound'): Promise<StoredDocument | null> {
    try {
      const created = await this.models.Document.create({
        _id: documentKey(doc.tenantId, doc.documentId),
        ...doc,
        channel: doc.channel ?? null,
        legalEntityId: doc.legalEntityId ?? null,
        filename: doc.filename ?? null,
        direction,
        createdAt: new Date(),
      });
      return created.toObject();
    } catch (e) {
      if (isDuplicateKeyError(e)) return null;
      throw e;
    }
  }

  /** The stored record alone (one keyed read): for steps that need its bytes' address, not its state. */
  async findStored(tenantId: string, documentId: string): Promise<StoredDocument | null> {
    return this.models.Document.findById(documentKey(tenantId, documentId)).lean<StoredDocument>().exec();
  }

  /** The record with its state and history. */
  async find(tenantId: string, documentId: string): Promise<DocumentRecord | null> {
    const stored = await this.findStored(tenantId, documentId);
    return stored ? this.withHistory(stored) : null;
  }

  async findForParty(tenantId: string, partyId: string, documentId: string): Promise<DocumentRecord | null> {
    const doc = await this.find(tenantId, documentId);
    return doc && doc.partyId === partyId ? doc : null;
  }

  /** Whether a sales invoice's upload was answered 200 already (its acceptance entry, one keyed read). */
  async isAccepted(tenantId: string, documentId: string): Promise<boolean> {
    const key = entryId(documentKey(tenantId, documentId), HistoryStep.accepted.key);
    return (await this.models.DocumentHistory.exists({ _id: key }).exec()) !== null;
  }

  /**
   * Records that this request answers the upload with 200. Exactly one caller gets true for a document however many
   * race (the entry's unique key decides); every other gets false and answers 409.
   */
  async accept(tenantId: string, documentId: string): Promise<boolean> {
    return this.insertEntry(tenantId, documentId, {
      state: HistoryStep.accepted.states[0],
      key: HistoryStep.accepted.key,
    });
  }

  /**
   * Writes one step's entry (with the format the detection found, or the validation verdict); a step already
   * recorded keeps its first entry. True when this call wrote it.
   */
  async appendHistory(
    tenantId: string,
    documentId: string,
    update: HistoryUpdate,
    extra: { format?: DocumentFormatInfo; validation?: DocumentValidationInfo } = {},
  ): Promise<boolean> {
    return this.insertEntry(tenantId, documentId, update, extra);
  }

  /**
   * Writes the entry of one transition of the document-state table (its state and key come from the table, never
   * from the step). True when this call wrote it; a transition already recorded keeps its first entry.
   */
  async recordTransition(
    tenantId: string,
    documentId: string,
    transition: DocumentTransition,
    entry: { detail?: string; attempt?: number; generation?: number; channel?: string; nextAttemptOn?: Date } = {},
    extra: { format?: DocumentFormatInfo; validation?: DocumentValidationInfo } = {},
  ): Promise<boolean> {
    const key = generationKey(entry.generation ?? 0, transition.key(entry.attempt ?? 0));
    const update: HistoryUpdate = {
      state: transition.to,
      key,
      ...(entry.detail ? { detail: entry.detail } : {}),
      ...(entry.channel ? { channel: entry.channel } : {}),
      ...(entry.nextAttemptOn ? { nextAttemptOn: entry.nextAttemptOn } : {}),
    };
    return this.insertEntry(tenantId, documentId, update, extra);
  }

  private async insertEntry(
    tenantId: string,
    documentId: string,
    update: HistoryUpdate,
    extra: { format?: DocumentFormatInfo; validation?: DocumentValidationInfo } = {},
  ): Promise<boolean> {
    const docKey = documentKey(tenantId, documentId);
    const entry: DocumentHistoryDoc = {
      _id: entryId(docKey, update.key),
      docKey,
      key: update.key,
      state: update.state,
      order: historyOrder(update.key, update.state),
      at: new Date(),
      ...(update.detail ? { detail: update.detail } : {}),
      ...(update.channel ? { channel: update.channel } : {}),
      ...(update.nextAttemptOn ? { nextAttemptOn: update.nextAttemptOn } : {}),
      ...(update.responseCode ? { responseCode: update.responseCode } : {}),
      ...(extra.format ? { format: extra.format } : {}),
      ...(extra.validation ? { validation: extra.validation } : {}),
    };
    try {
      await this.models.DocumentHistory.create(entry);
      return true;
    } catch (e) {
      if (isDuplicateKeyError(e)) return false;
      throw e;
    }
  }

  /** Removes a received document's record and history and returns it (the caller removes its blob). */
  async deleteInbound(tenantId: string, partyId: string, documentId: string): Promise<DocumentRecord | null> {
    const doc = await this.findForParty(tenantId, partyId, documentId);
    if (!doc || doc.direction !== 'inbound') return null;
    const docKey = documentKey(tenantId, documentId);
    await this.models.Document.deleteOne({ _id: docKey }).exec();
    await this.models.DocumentHistory.deleteMany({ docKey }).exec();
    return doc;
  }

  /**
   * Removes a sales invoice whose upload never completed (no acceptance, no workflow: reconciliation decides that),
   * with its entries; the caller removes its blob. The record is deleted first, so a reader never finds it pointing
   * at removed bytes.
   */
  async deleteAbandoned(tenantId: string, documentId: string): Promise<void> {
    const docKey = documentKey(tenantId, documentId);
    await this.models.Document.deleteOne({ _id: docKey, direction: 'outbound' }).exec();
    await this.models.DocumentHistory.deleteMany({ docKey }).exec();
  }

  /**
   * A page of a party's documents in the order they were written (oldest first, ties by documentId), after the
   * position `after` (the last one a previous page returned), with their states. One query for the records and one
   * for their histories; reads only.
   */
  async listForParty(query: DocumentListQuery): Promise<DocumentRecord[]> {
    const createdAt: Record<string, Date> = {};
    if (query.since) createdAt['$gte'] = query.since;
    if (query.until) createdAt['$lt'] = query.until;
    const filter: Record<string, unknown> = { tenantId: query.tenantId, partyId: query.partyId };
    if (query.direction) filter['direction'] = query.direction;
    if (Object.keys(createdAt).length > 0) filter['createdAt'] = createdAt;
    if (query.after) {
      const { createdAt: at, documentId } = query.after;
      filter['$or'] = [{ createdAt: { $gt: at } }, { createdAt: at, documentId: { $gt: documentId } }];
    }
    const stored = await this.models.Document.find(filter)
      .sort({ createdAt: 1, documentId: 1 })
      .limit(query.limit)
      .lean<StoredDocument[]>()
      .exec();
    if (stored.length === 0) return [];
    const entries = await this.models.DocumentHistory.find({ docKey: { $in: stored.map((d) => d._id) } })
      .lean<DocumentHistoryDoc[]>()
      .exec();
    const byKey = new Map<string, DocumentHistoryDoc[]>();
    for (const e of entries) byKey.set(e.docKey, [...(byKey.get(e.docKey) ?? []), e]);
    return stored.map((d) => describe(d, byKey.get(d._id) ?? []));
  }

  /** Reads the entries of a record and derives its state. */
  async withHistory(stored: StoredDocument): Promise<DocumentRecord> {
    const entries = await this.models.DocumentHistory.find({ docKey: stored._id }).lean<DocumentHistoryDoc[]>().exec();
    return describe(stored, entries);
  }
}

/** The record as its history tells it: entries in step order (ties by time), the state of the latest. */
export function describe(stored: StoredDocument, entries: readonly DocumentHistoryDoc[]): DocumentRecord {
  const sorted = [...entries].sort((a, b) => a.order - b.order || a.at.getTime() - b.at.getTime());
  const received: HistoryEntry = { state: HistoryStep.received.states[0], at: stored.createdAt, key: 'received' };
  const history: HistoryEntry[] = [
    received,
    ...sorted.map((e) => ({
      state: e.state,
      at: e.at,
      key: e.key,
      ...(e.detail ? { detail: e.detail } : {}),
      ...(e.channel ? { channel: e.channel } : {}),
      ...(e.nextAttemptOn ? { nextAttemptOn: e.nextAttemptOn } : {}),
      ...(e.responseCode ? { responseCode: e.responseCode } : {}),
    })),
  ];
  // Side entries (tax reporting) are on the history but never the state.
  const last = sorted.filter((e) => !SIDE_STATES.has(e.state)).at(-1);
  const tax = sorted
    .filter((e) => e.state === DocumentState.TaxReport)
    .sort((a, b) => a.at.getTime() - b.at.getTime())
    .at(-1);
  const taxEntry = tax ? taxReportEntryOf(tax.key) : undefined;
  // The latest response by arrival (responses stand together in the step order, before the final entries).
  const response = sorted
    .flatMap((e) =>
      e.state === DocumentState.InvoiceResponseReceived && e.responseCode ? [{ ...e, code: e.responseCode }] : [],
    )
    .sort((a, b) => a.at.getTime() - b.at.getTime())
    .at(-1);
  return {
    ...stored,
    accepted: stored.direction === 'inbound' || sorted.some((e) => e.key === HistoryStep.accepted.key),
    state: last ? last.state : received.state,
    final: last ? isFinalOrder(last.order) : false,
    history,
    format: sorted.find((e) => e.key === HistoryStep.detect.key)?.format ?? null,
    validation: sorted.find((e) => e.key === HistoryStep.validate.key)?.validation ?? null,
    buyerResponse: response
      ? {
          statusCode: response.code,
          at: response.at,
          responseDocumentId: response.key.slice(response.key.indexOf(':') + 1),
          ...(response.detail ? { detail: response.detail } : {}),
        }
      : null,
    taxReport:
      tax && taxEntry
        ? {
            step: taxEntry.step,
            at: tax.at,
            report: taxEntry.sequence,
            reportType: reportTypeOf(taxEntry.typeCode),
            ...(tax.detail ? { detail: tax.detail } : {}),
          }
        : null,
  };
}
