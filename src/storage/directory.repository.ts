import { randomUUID } from 'node:crypto';
import type { ClientDoc, Models, PartyDoc, TenantDoc, UserDoc } from './models';
import { isDuplicateKeyError } from './connection';
import { GatewayError } from '../core/gateway-error';
import { withLease } from './lease';

export type TenantRecord = TenantDoc;

/** Inserts one document; a unique-index collision becomes a CONFLICT naming what already exists. */
async function insertUnique(create: () => Promise<unknown>, what: string): Promise<void> {
  try {
    await create();
  } catch (e) {
    if (isDuplicateKeyError(e)) throw new GatewayError('CONFLICT', `${what} exists`);
    throw e;
  }
}
export type PartyRecord = PartyDoc;

/** Peppol participant identifiers compare case-insensitively. */
function participantKey(partyId: string): string {
  return partyId.toLowerCase();
}

/**
 * Tenants, parties, clients and users: the access model of spec 2.1. Tenants and parties are inserted once. A client
 * or user changes (secrets, grants, links) only while its writer holds the lease on it, so two operators changing one
 * client at once cannot lose each other's change (the database has no atomic update: docs/decisions.md).
 */
export class DirectoryRepository {
  constructor(private readonly models: Models) {}

  async createTenant(input: { id?: string; name: string }): Promise<TenantRecord> {
    const doc = { _id: input.id ?? `t-${randomUUID()}`, name: input.name, createdAt: new Date() };
    await insertUnique(() => this.models.Tenant.create(doc), `tenant ${doc._id}`);
    return doc;
  }

  async listTenants(): Promise<TenantRecord[]> {
    return this.models.Tenant.find().sort({ createdAt: 1 }).lean<TenantRecord[]>().exec();
  }

  async getTenant(id: string): Promise<TenantRecord | null> {
    return this.models.Tenant.findById(id).lean<TenantRecord>().exec();
  }

  async createParty(input: {
    tenantId: string;
    partyId: string;
    legalEntityId: string;
    name: string;
  }): Promise<PartyRecord> {
    if (!(await this.getTenant(input.tenantId)))
      throw new GatewayError('NOT_FOUND', `tenant ${input.tenantId} not found`);
    // Keyed by the party identifier itself: the lookup on every {partyId} request is then a key lookup.
    // The participant key is unique too: a party whose id differs from another's only in case is the same participant.
    const doc = { _id: input.partyId, ...input, participantKey: participantKey(input.partyId), createdAt: new Date() };
    await insertUnique(() => this.models.Party.create(doc), `party ${input.partyId}`);
    return doc;
  }

  async listParties(tenantIds: readonly string[]): Promise<PartyRecord[]> {
    return this.models.Party.find({ tenantId: { $in: [...tenantIds] } })
      .sort({ partyId: 1 })
      .lean<PartyRecord[]>()
      .exec();
  }

  async findParty(partyId: string): Promise<PartyRecord | null> {
    return this.models.Party.findById(partyId).lean<PartyRecord>().exec();
  }

  /** The party that is this Peppol participant (`<scheme>:<value>`), whatever the case of either. */
  async findPartyByParticipant(participant: string): Promise<PartyRecord | null> {
    return (
      (await this.findParty(participant)) ??
      this.models.Party.findOne({ participantKey: participantKey(participant) })
        .lean<PartyRecord>()
        .exec()
    );
  }

  async createClient(input: {
    clientId?: string;
    name: string;
    tenantIds: string[];
    secret: { id: string; hash: string };
  }): Promise<ClientDoc> {
    for (const t of input.tenantIds) {
      if (!(await this.getTenant(t))) throw new GatewayError('NOT_FOUND', `tenant ${t} not found`);
    }
    const now = new Date();
    const doc: ClientDoc = {
      _id: input.clientId ?? `c-${randomUUID()}`,
      name: input.name,
      tenantIds: input.tenantIds,
      secrets: [{ id: input.secret.id, hash: input.secret.hash, createdAt: now, revokedAt: null }],
      disabled: false,
      createdAt: now,
    };
    await insertUnique(() => this.models.Client.create(doc), `client ${doc._id}`);
    return doc;
  }

  async getClient(clientId: string): Promise<ClientDoc | null> {
    return this.models.Client.findById(clientId).lean<ClientDoc>().exec();
  }

  async listClients(): Promise<ClientDoc[]> {
    return this.models.Client.find().sort({ createdAt: 1 }).lean<ClientDoc[]>().exec();
  }

  /** Changes one client under its lease; NOT_FOUND when it does not exist. */
  private changeClient(clientId: string, change: (client: ClientDoc) => Partial<ClientDoc>): Promise<void> {
    return withLease(this.models.Lease, `client:${clientId}`, async () => {
      const client = await this.getClient(clientId);
      if (!client) throw new GatewayError('NOT_FOUND', `client ${clientId} not found`);
      await this.models.Client.updateOne({ _id: clientId }, { $set: change(client) }).exec();
    });
  }

  async addClientSecret(clientId: string, secret: { id: string; hash: string }): Promise<void> {
    await this.changeClient(clientId, (c) => ({
      secrets: [...c.secrets, { id: secret.id, hash: secret.hash, createdAt: new Date(), revokedAt: null }],
    }));
  }

  async revokeClientSecret(clientId: string, secretId: string): Promise<void> {
    await this.changeClient(clientId, (c) => {
      if (!c.secrets.some((s) => s.id === secretId))
        throw new GatewayError('NOT_FOUND', `secret ${secretId} not found`);
      return {
        secrets: c.secrets.map((s) => (s.id === secretId && !s.revokedAt ? { ...s, revokedAt: new Date() } : s)),
      };
    });
  }

  async grantClientTenant(clientId: string, tenantId: string): Promise<void> {
    if (!(await this.getTenant(tenantId))) throw new GatewayError('NOT_FOUND', `tenant ${tenantId} not found`);
    await this.changeClient(clientId, (c) => ({
      tenantIds: c.tenantIds.includes(tenantId) ? c.tenantIds : [...c.tenantIds, tenantId],
    }));
  }

  async setClientDisabled(clientId: string, disabled: boolean): Promise<void> {
    await this.changeClient(clientId, () => ({ disabled }));
  }

  async createUser(input: {
    tenantId: string;
    username: string;
    passwordHash: string;
    partyIds: string[];
  }): Promise<UserDoc> {
    if (!(await this.getTenant(input.tenantId)))
      throw new GatewayError('NOT_FOUND', `tenant ${input.tenantId} not found`);
    for (const p of input.partyIds) await this.requirePartyInTenant(p, input.tenantId);
    const doc: UserDoc = { _id: randomUUID(), ...input, disabled: false, createdAt: new Date() };
    await insertUnique(() => this.models.User.create(doc), `user ${input.username}`);
    return doc;
  }

  async findUserByUsername(username: string): Promise<UserDoc | null> {
    return this.models.User.findOne({ username }).lean<UserDoc>().exec();
  }

  async listUsers(tenantId?: string): Promise<UserDoc[]> {
    return this.models.User.find(tenantId ? { tenantId } : {})
      .sort({ username: 1 })
      .lean<UserDoc[]>()
      .exec();
  }

  /** Changes one user's linked parties under its lease. */
  private async changeUserParties(username: string, change: (user: UserDoc) => Promise<string[]>): Promise<void> {
    const user = await this.findUserByUsername(username);
    if (!user) throw new GatewayError('NOT_FOUND', `user ${username} not found`);
    await withLease(this.models.Lease, `user:${user._id}`, async () => {
      const current = await this.findUserByUsername(username);
      if (!current) throw new GatewayError('NOT_FOUND', `user ${username} not found`);
      await this.models.User.updateOne({ _id: current._id }, { $set: { partyIds: await change(current) } }).exec();
    });
  }

  async linkUserParty(username: string, partyId: string): Promise<void> {
    await this.changeUserParties(username, async (u) => {
      await this.requirePartyInTenant(partyId, u.tenantId);
      return u.partyIds.includes(partyId) ? u.partyIds : [...u.partyIds, partyId];
    });
  }

  async unlinkUserParty(username: string, partyId: string): Promise<void> {
    await this.changeUserParties(username, async (u) => u.partyIds.filter((p) => p !== partyId));
  }

  private async requirePartyInTenant(partyId: string, tenantId: string): Promise<void> {
    const party = await this.findParty(partyId);
    if (!party || party.tenantId !== tenantId)
      throw new GatewayError('NOT_FOUND', `party ${partyId} not found in tenant ${tenantId}`);
  }
}
