import { GatewayError } from '../../core/gateway-error';
import type { SubscriptionKeyLookup, SubscriptionKeyRecord } from '../../auth/subscription-keys';
import { isDuplicateKeyError } from '../connection';
import type {
  buildPartnerModels,
  SubscriptionKeyDoc,
  SubscriptionKeyRevocationDoc,
  PartnerDoc,
} from './partner.schema';

type PartnerModels = ReturnType<typeof buildPartnerModels>;

export interface SubscriptionKeyListing {
  keyId: string;
  partnerId: string;
  createdAt: Date;
  revokedAt: Date | null;
}

/** Partners and their subscription keys: inserts and finds by key only. */
export class PartnerRepository implements SubscriptionKeyLookup {
  constructor(private readonly models: PartnerModels) {}

  async createPartner(input: { id: string; name: string }): Promise<PartnerDoc> {
    if (!/^[A-Za-z0-9._-]{1,64}$/.test(input.id))
      throw new GatewayError('BAD_REQUEST', 'a partner id is 1-64 letters, digits, ".", "_" or "-"');
    const doc = { _id: input.id, name: input.name, createdAt: new Date() };
    try {
      await this.models.Partner.create(doc);
    } catch (e) {
      if (isDuplicateKeyError(e)) throw new GatewayError('CONFLICT', `partner ${input.id} exists`);
      throw e;
    }
    return doc;
  }

  async listPartners(): Promise<PartnerDoc[]> {
    return this.models.Partner.find().sort({ createdAt: 1 }).lean<PartnerDoc[]>().exec();
  }

  async addKey(input: { keyId: string; partnerId: string; hash: string }): Promise<void> {
    if (!(await this.models.Partner.findById(input.partnerId).lean().exec()))
      throw new GatewayError('NOT_FOUND', `partner ${input.partnerId} not found`);
    await this.models.SubscriptionKey.create({
      _id: input.keyId,
      partnerId: input.partnerId,
      hash: input.hash,
      createdAt: new Date(),
    });
  }

  async listKeys(partnerId?: string): Promise<SubscriptionKeyListing[]> {
    const keys = await this.models.SubscriptionKey.find(partnerId ? { partnerId } : {})
      .sort({ createdAt: 1 })
      .lean<SubscriptionKeyDoc[]>()
      .exec();
    const revoked = new Map(
      (await this.models.SubscriptionKeyRevocation.find().lean<SubscriptionKeyRevocationDoc[]>().exec()).map((r) => [
        r._id,
        r.revokedAt,
      ]),
    );
    return keys.map((k) => ({
      keyId: k._id,
      partnerId: k.partnerId,
      createdAt: k.createdAt,
      revokedAt: revoked.get(k._id) ?? null,
    }));
  }

  /** Revokes a key from now on; revoking it again keeps the first revocation. */
  async revokeKey(keyId: string): Promise<{ keyId: string; revokedAt: Date }> {
    if (!(await this.models.SubscriptionKey.findById(keyId).lean().exec()))
      throw new GatewayError('NOT_FOUND', `subscription key ${keyId} not found`);
    const doc = { _id: keyId, revokedAt: new Date() };
    try {
      await this.models.SubscriptionKeyRevocation.create(doc);
      return { keyId, revokedAt: doc.revokedAt };
    } catch (e) {
      if (!isDuplicateKeyError(e)) throw e;
      const first = await this.models.SubscriptionKeyRevocation.findById(keyId)
        .lean<SubscriptionKeyRevocationDoc>()
        .exec();
      return { keyId, revokedAt: first?.revokedAt ?? doc.revokedAt };
    }
  }

  async findSubscriptionKey(keyId: string): Promise<SubscriptionKeyRecord | null> {
    const [key, revocation] = await Promise.all([
      this.models.SubscriptionKey.findById(keyId).lean<SubscriptionKeyDoc>().exec(),
      this.models.SubscriptionKeyRevocation.findById(keyId).lean<SubscriptionKeyRevocationDoc>().exec(),
    ]);
    if (!key) return null;
    return {
      keyId: key._id,
      partnerId: key.partnerId,
      hash: key.hash,
      createdAt: key.createdAt,
      revokedAt: revocation?.revokedAt ?? null,
    };
  }
}
