import { Readable } from 'node:stream';
import type { BlobStore } from '../blob-store';
import { isDuplicateKeyError } from '../connection';
import type { Models } from '../models';
import type { As4InboundDoc, As4InboundRecord } from './as4-inbound.schema';

export type { As4InboundRecord } from './as4-inbound.schema';

export interface StoredAs4Inbound extends As4InboundRecord {
  blobId: string;
  state: string;
  stateDetail: string | null;
  format: Record<string, unknown> | null;
}

function fromDoc(d: As4InboundDoc): StoredAs4Inbound {
  const { _id, countryC1, ...rest } = d;
  return {
    ...rest,
    messageId: _id,
    countryC1: countryC1 ?? undefined,
    state: d.state ?? 'stored',
    stateDetail: d.stateDetail ?? null,
    format: d.format ?? null,
  };
}

/**
 * Received AS4 messages. The SBD goes into the blob store first; the record insert is the commit point. When the insert
 * loses to a concurrent copy (same MessageId or instance key), the bytes written for this copy are removed again.
 */
export class As4InboundRepository {
  constructor(
    private readonly models: Models,
    private readonly blobs: BlobStore,
  ) {}

  async findByMessageId(messageId: string): Promise<StoredAs4Inbound | null> {
    const d = await this.models.As4Inbound.findById(messageId).lean<As4InboundDoc>().exec();
    return d ? fromDoc(d) : null;
  }

  async findByInstanceKey(instanceKey: string): Promise<StoredAs4Inbound | null> {
    const d = await this.models.As4Inbound.findOne({ instanceKey }).lean<As4InboundDoc>().exec();
    return d ? fromDoc(d) : null;
  }

  /** Records what the receive workflow found; writing the same outcome again changes nothing (idempotent). */
  async recordState(
    messageId: string,
    update: { state: string; stateDetail?: string; format?: Record<string, unknown> },
  ): Promise<void> {
    await this.models.As4Inbound.updateOne(
      { _id: messageId },
      { $set: { state: update.state, stateDetail: update.stateDetail ?? null, format: update.format ?? null } },
    ).exec();
  }

  async count(filter: { tenantId?: string } = {}): Promise<number> {
    return this.models.As4Inbound.countDocuments(filter).exec();
  }

  async store(
    record: As4InboundRecord,
    sbd: Buffer,
  ): Promise<{ stored: StoredAs4Inbound } | { existing: StoredAs4Inbound }> {
    const blob = await this.blobs.put(Readable.from([sbd]), {
      limit: sbd.length,
      filename: 'sbd.xml',
      contentType: 'application/xml',
      metadata: { tenantId: record.tenantId, as4MessageId: record.messageId },
    });
    const { messageId, countryC1, ...rest } = record;
    const doc: As4InboundDoc = {
      _id: messageId,
      ...rest,
      countryC1: countryC1 ?? null,
      blobId: blob.blobId,
      state: 'stored',
      stateDetail: null,
      format: null,
    };
    try {
      await this.models.As4Inbound.create(doc);
      return { stored: fromDoc(doc) };
    } catch (e) {
      await this.blobs.delete(blob.blobId).catch(() => undefined);
      if (!isDuplicateKeyError(e)) throw e;
      const existing = (await this.findByMessageId(messageId)) ?? (await this.findByInstanceKey(record.instanceKey));
      if (!existing) throw e;
      return { existing };
    }
  }
}
