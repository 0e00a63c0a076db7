import type { Model } from 'mongoose';
import { isDuplicateKeyError } from '../connection';
import { sentReferenceKey, type SentReference, type SentReferenceDoc } from './sent-reference.schema';

export type { SentReference } from './sent-reference.schema';

/** The business numbers of documents we sent, keyed so a received response finds its document by `_id`. */
export class SentReferenceRepository {
  constructor(private readonly models: { SentReference: Model<SentReferenceDoc> }) {}

  /** Records the reference once; true when this call wrote it (a retried attempt or a later document finds it). */
  async record(ref: SentReference): Promise<boolean> {
    try {
      await this.models.SentReference.create({
        _id: sentReferenceKey(ref),
        ...ref,
        endpoint: ref.endpoint.toLowerCase(),
        at: new Date(),
      });
      return true;
    } catch (e) {
      if (isDuplicateKeyError(e)) return false;
      throw e;
    }
  }

  async find(key: Pick<SentReference, 'tenantId' | 'endpoint' | 'kind' | 'number'>): Promise<SentReference | null> {
    const d = await this.models.SentReference.findById(sentReferenceKey(key)).lean<SentReferenceDoc>().exec();
    if (!d) return null;
    return {
      tenantId: d.tenantId,
      endpoint: d.endpoint,
      kind: d.kind,
      number: d.number,
      issueDate: d.issueDate ?? null,
      documentId: d.documentId,
      partyId: d.partyId,
      generation: d.generation,
    };
  }
}
