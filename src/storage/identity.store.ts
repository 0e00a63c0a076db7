import type { ClientRecord, IdentityStore, SigningKeyRecord, UserRecord } from '../auth/identity-store';
import type { Models } from './models';
import type { SubscriptionKeyRecord } from '../auth/subscription-keys';
import { PartnerRepository } from './partners/partner.repository';

/** MongoDB adapter of the identity server's storage port. */
export class MongoIdentityStore implements IdentityStore {
  constructor(private readonly models: Models) {}

  async findClient(clientId: string): Promise<ClientRecord | null> {
    const c = await this.models.Client.findById(clientId).lean().exec();
    if (!c) return null;
    return {
      clientId: c._id,
      name: c.name,
      tenantIds: [...c.tenantIds],
      secrets: c.secrets.map((s) => ({
        id: s.id,
        hash: s.hash,
        createdAt: s.createdAt,
        revokedAt: s.revokedAt ?? null,
      })),
      disabled: c.disabled,
    };
  }

  findSubscriptionKey(keyId: string): Promise<SubscriptionKeyRecord | null> {
    return new PartnerRepository(this.models).findSubscriptionKey(keyId);
  }

  async findUserByUsername(username: string): Promise<UserRecord | null> {
    const u = await this.models.User.findOne({ username }).lean().exec();
    if (!u) return null;
    return {
      id: u._id,
      tenantId: u.tenantId,
      username: u.username,
      passwordHash: u.passwordHash,
      partyIds: [...u.partyIds],
      disabled: u.disabled,
    };
  }

  async listSigningKeys(): Promise<SigningKeyRecord[]> {
    const keys = await this.models.SigningKey.find().sort({ createdAt: 1 }).lean().exec();
    return keys.map((k) => ({
      kid: k._id,
      alg: k.alg,
      privateJwk: k.privateJwk,
      publicJwk: k.publicJwk,
      createdAt: k.createdAt,
      notAfter: k.notAfter ?? null,
    }));
  }

  async insertSigningKey(key: SigningKeyRecord): Promise<void> {
    // _id is the kid: a duplicate insert fails with 11000, which the key service treats as "someone else won".
    await this.models.SigningKey.create({
      _id: key.kid,
      alg: key.alg,
      privateJwk: key.privateJwk,
      publicJwk: key.publicJwk,
      createdAt: key.createdAt,
      notAfter: key.notAfter ?? null,
    });
  }
}
