import { randomUUID } from 'node:crypto';
import type { ClientRecord, IdentityStore, SigningKeyRecord, UserRecord } from './identity-store';
import type { SubscriptionKeyRecord } from './subscription-keys';
import { generateClientSecret, hashSecret, type ScryptParams } from './secret-hash';

/**
 * IdentityStore in process memory, for tests and local composition. Records are copied in and out, so a caller that
 * mutates what it got back changes nothing until it writes through one of the methods below, as with a database.
 */
export class InMemoryIdentityStore implements IdentityStore {
  private readonly clients = new Map<string, ClientRecord>();
  private readonly users = new Map<string, UserRecord>();
  private readonly keys = new Map<string, SigningKeyRecord>();
  private readonly subscriptionKeys = new Map<string, SubscriptionKeyRecord>();

  /** Cost of the hashes the helpers below create; tests lower it to stay fast. */
  constructor(private readonly hashParams?: ScryptParams) {}

  // ---- IdentityStore ----

  async findClient(clientId: string): Promise<ClientRecord | null> {
    const c = this.clients.get(clientId);
    return c ? structuredClone(c) : null;
  }

  async findUserByUsername(username: string): Promise<UserRecord | null> {
    for (const u of this.users.values()) if (u.username === username) return structuredClone(u);
    return null;
  }

  async listSigningKeys(): Promise<SigningKeyRecord[]> {
    return [...this.keys.values()].map((k) => structuredClone(k));
  }

  async insertSigningKey(key: SigningKeyRecord): Promise<void> {
    if (this.keys.has(key.kid)) throw new Error(`signing key ${key.kid} already exists`);
    this.keys.set(key.kid, structuredClone(key));
  }

  async findSubscriptionKey(keyId: string): Promise<SubscriptionKeyRecord | null> {
    const k = this.subscriptionKeys.get(keyId);
    return k ? structuredClone(k) : null;
  }

  // ---- administration (what the admin tooling does against the real store) ----

  putSubscriptionKey(key: SubscriptionKeyRecord): void {
    this.subscriptionKeys.set(key.keyId, structuredClone(key));
  }

  putClient(client: ClientRecord): void {
    this.clients.set(client.clientId, structuredClone(client));
  }

  putUser(user: UserRecord): void {
    for (const u of this.users.values()) {
      if (u.username === user.username && u.id !== user.id) throw new Error(`username ${user.username} is taken`);
    }
    this.users.set(user.id, structuredClone(user));
  }

  removeUser(userId: string): boolean {
    return this.users.delete(userId);
  }

  /** Creates the client when missing; returns the new secret in clear (shown once) and its id. */
  async addClientSecret(
    clientId: string,
    options: { tenantIds?: string[]; name?: string; secret?: string; secretId?: string } = {},
  ): Promise<{ secretId: string; secret: string }> {
    const client: ClientRecord = this.clients.get(clientId) ?? { clientId, tenantIds: [], secrets: [] };
    if (options.tenantIds) client.tenantIds = [...options.tenantIds];
    if (options.name !== undefined) client.name = options.name;
    const secret = options.secret ?? generateClientSecret();
    const secretId = options.secretId ?? randomUUID();
    client.secrets.push({ id: secretId, hash: await hashSecret(secret, this.hashParams), createdAt: new Date() });
    this.clients.set(clientId, client);
    return { secretId, secret };
  }

  async addUser(
    user: Omit<UserRecord, 'passwordHash' | 'id'> & { id?: string; password: string },
  ): Promise<UserRecord> {
    const { password, ...rest } = user;
    const record: UserRecord = {
      ...rest,
      id: user.id ?? randomUUID(),
      passwordHash: await hashSecret(password, this.hashParams),
    };
    this.putUser(record);
    return structuredClone(record);
  }

  revokeClientSecret(clientId: string, secretId: string, at: Date = new Date()): void {
    const secret = this.clients.get(clientId)?.secrets.find((s) => s.id === secretId);
    if (!secret) throw new Error(`no secret ${secretId} for client ${clientId}`);
    secret.revokedAt = at;
  }

  setClientDisabled(clientId: string, disabled: boolean): void {
    const client = this.clients.get(clientId);
    if (!client) throw new Error(`no client ${clientId}`);
    client.disabled = disabled;
  }

  setUserDisabled(userId: string, disabled: boolean): void {
    const user = this.users.get(userId);
    if (!user) throw new Error(`no user ${userId}`);
    user.disabled = disabled;
  }
}
