import type { InboundAs4Record, InboundAs4Store, StoredInbound } from '../../../src/peppol/as4/receiver';

/** The receiver's store in memory, with a switch to fail the next write. */
export class MemoryInboundStore implements InboundAs4Store {
  readonly records: StoredInbound[] = [];
  readonly blobs = new Map<string, Buffer>();
  failNext = false;
  async findByMessageId(id: string): Promise<StoredInbound | null> {
    return this.records.find((r) => r.messageId === id) ?? null;
  }
  async findByInstanceKey(key: string): Promise<StoredInbound | null> {
    return this.records.find((r) => r.instanceKey === key) ?? null;
  }
  async store(
    record: InboundAs4Record,
    data: Buffer,
  ): Promise<{ stored: StoredInbound } | { existing: StoredInbound }> {
    if (this.failNext) {
      this.failNext = false;
      throw new Error('database unavailable');
    }
    const existing = this.records.find((r) => r.messageId === record.messageId || r.instanceKey === record.instanceKey);
    if (existing) return { existing };
    const stored = { ...record, blobId: `blob-${this.records.length}` };
    this.blobs.set(stored.blobId, data);
    this.records.push(stored);
    return { stored };
  }
}
