import type { Model } from 'mongoose';
import { isDuplicateKeyError } from '../connection';
import type { SentInstance, SentInstanceDoc } from './sent-instance.schema';

export type { SentInstance } from './sent-instance.schema';

/** The documents our SBDH InstanceIdentifiers name (keyed by the identifier: a lookup by `_id`). */
export class SentInstanceRepository {
  constructor(private readonly models: { SentInstance: Model<SentInstanceDoc> }) {}

  /** Records the identifier once; true when this call wrote it. */
  async record(ref: SentInstance): Promise<boolean> {
    const { instanceId, ...rest } = ref;
    try {
      await this.models.SentInstance.create({ _id: instanceId, ...rest, at: new Date() });
      return true;
    } catch (e) {
      if (isDuplicateKeyError(e)) return false;
      throw e;
    }
  }

  async find(instanceId: string): Promise<SentInstance | null> {
    const d = await this.models.SentInstance.findById(instanceId).lean<SentInstanceDoc>().exec();
    if (!d) return null;
    return {
      instanceId: d._id,
      tenantId: d.tenantId,
      documentId: d.documentId,
      partyId: d.partyId,
      generation: d.generation,
      ...(d.reportOf ? { reportOf: d.reportOf } : {}),
      ...(d.reportSequence ? { reportSequence: d.reportSequence } : {}),
    };
  }
}
