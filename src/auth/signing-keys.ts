import { calculateJwkThumbprint, exportJWK, generateKeyPair, importJWK, type JWK, type KeyLike } from 'jose';
import type { Config } from '../config/load-config';
import type { Logger } from '../observability/logger';
import type { IdentityStore, SigningKeyRecord } from './identity-store';

export const SIGNING_ALG = 'ES256';

export interface SigningKey {
  kid: string;
  alg: typeof SIGNING_ALG;
  privateKey: KeyLike;
  createdAt: Date;
}

/** A published verification key: only public members, whatever the stored record holds. */
export interface PublicSigningJwk {
  kty: string;
  crv: string;
  x: string;
  y: string;
  kid: string;
  alg: string;
  use: 'sig';
}

export interface SigningKeyServiceOptions {
  store: IdentityStore;
  config: { auth: Pick<Config['auth'], 'tokenTtlSeconds' | 'signingKeyRotationDays'> };
  logger?: Logger;
  /** Clock, injectable for tests. */
  now?: () => Date;
  /** How long a loaded key list is trusted before it is re-read (keys made by other processes show up after this). */
  refreshIntervalMs?: number;
  /** Allowed clock difference between the processes that share the keys. */
  clockSkewSeconds?: number;
}

const DAY_MS = 86_400_000;

/**
 * ES256 signing keys shared by every API process through the store. The newest key signs; older keys keep verifying
 * (and stay in the JWKS) until every token they can have signed has expired.
 *
 * A process learns of a successor key at the latest one refresh interval after it was inserted, so it may sign with
 * the old key until then. A retired key therefore stays valid until
 * `successor.createdAt + refreshInterval + clockSkew + tokenTtl`, not just `successor.createdAt + tokenTtl`.
 */
export class SigningKeyService {
  private readonly store: IdentityStore;
  private readonly logger: Logger | undefined;
  private readonly now: () => Date;
  private readonly ttlMs: number;
  private readonly rotationMs: number;
  private readonly refreshMs: number;
  private readonly skewMs: number;

  /** Ascending by createdAt (then kid), so the last record is the signing key. */
  private records: SigningKeyRecord[] = [];
  private loadedAt = -Infinity;
  private loading: Promise<void> | undefined;
  private rotating: Promise<void> | undefined;
  private readonly imported = new Map<string, Promise<KeyLike>>();
  private lastMissReload = -Infinity;
  private readonly ignoredKids = new Set<string>();

  constructor(options: SigningKeyServiceOptions) {
    this.store = options.store;
    this.logger = options.logger;
    this.now = options.now ?? (() => new Date());
    this.ttlMs = options.config.auth.tokenTtlSeconds * 1000;
    this.rotationMs = options.config.auth.signingKeyRotationDays * DAY_MS;
    this.refreshMs = options.refreshIntervalMs ?? 60_000;
    this.skewMs = (options.clockSkewSeconds ?? 60) * 1000;
  }

  /** Loads the keys and makes sure a fresh one exists. Call once at start; later calls only re-check. */
  async init(): Promise<void> {
    await this.reload();
    await this.ensureFreshSigningKey();
  }

  /** The key to sign with now; rotates first when the newest key is too old or withdrawn. */
  async currentKey(): Promise<SigningKey> {
    await this.refreshIfStale();
    await this.ensureFreshSigningKey();
    const newest = this.records.at(-1);
    if (!newest) throw new Error('no signing key available');
    return {
      kid: newest.kid,
      alg: SIGNING_ALG,
      privateKey: await this.importKey(`private:${newest.kid}`, newest.privateJwk),
      createdAt: newest.createdAt,
    };
  }

  /** Every key a token still within its lifetime can have been signed with, newest first. */
  async jwks(): Promise<{ keys: PublicSigningJwk[] }> {
    await this.refreshIfStale();
    const keys: PublicSigningJwk[] = [];
    for (const record of this.verificationRecords().reverse()) {
      const jwk = publicMembers(record);
      if (jwk) keys.push(jwk);
    }
    return { keys };
  }

  /** Public key for `kid`, or null when unknown, retired or withdrawn. */
  async verificationKey(kid: string): Promise<KeyLike | null> {
    await this.refreshIfStale();
    let record = this.verificationRecords().find((r) => r.kid === kid);
    // A key inserted by another process since the last load: re-read, but at most every few seconds so tokens with
    // made-up kids cannot turn into a store query each.
    if (!record && this.now().getTime() - this.lastMissReload >= 5_000) {
      this.lastMissReload = this.now().getTime();
      await this.reload();
      record = this.verificationRecords().find((r) => r.kid === kid);
    }
    if (!record) return null;
    const jwk = publicMembers(record);
    return jwk ? this.importKey(`public:${kid}`, jwk as unknown as Record<string, unknown>) : null;
  }

  /** When a key stops verifying, or null while it is the signing key. Exposed for tests and diagnostics. */
  retiresAt(kid: string): Date | null {
    const i = this.records.findIndex((r) => r.kid === kid);
    const successor = this.records[i + 1];
    if (i < 0 || !successor) return null;
    return new Date(successor.createdAt.getTime() + this.refreshMs + this.skewMs + this.ttlMs);
  }

  private verificationRecords(): SigningKeyRecord[] {
    const now = this.now().getTime();
    return this.records.filter((r) => {
      if (r.notAfter && r.notAfter.getTime() <= now) return false;
      const retires = this.retiresAt(r.kid);
      return retires === null || now < retires.getTime();
    });
  }

  private needsRotation(): boolean {
    const newest = this.records.at(-1);
    if (!newest) return true;
    const now = this.now().getTime();
    if (newest.notAfter && newest.notAfter.getTime() <= now) return true;
    return now - newest.createdAt.getTime() >= this.rotationMs;
  }

  private async ensureFreshSigningKey(): Promise<void> {
    if (!this.needsRotation()) return;
    // Another process may have rotated already: look before generating.
    await this.reload();
    if (!this.needsRotation()) return;
    this.rotating ??= this.rotate().finally(() => {
      this.rotating = undefined;
    });
    await this.rotating;
  }

  private async rotate(): Promise<void> {
    const { publicKey, privateKey } = await generateKeyPair(SIGNING_ALG, { extractable: true });
    const publicJwk = await exportJWK(publicKey);
    const kid = await calculateJwkThumbprint(publicJwk, 'sha256');
    const common = { kid, alg: SIGNING_ALG, use: 'sig' };
    const record: SigningKeyRecord = {
      kid,
      alg: SIGNING_ALG,
      privateJwk: { ...(await exportJWK(privateKey)), ...common },
      publicJwk: { ...publicJwk, ...common },
      // Strictly after the key it replaces, so the order (and with it the signing key) is unambiguous.
      createdAt: new Date(Math.max(this.now().getTime(), (this.records.at(-1)?.createdAt.getTime() ?? 0) + 1)),
    };
    await this.store.insertSigningKey(record);
    // Two processes may rotate at once; re-reading makes both settle on the same newest key.
    await this.reload();
    this.logger?.info({ kid, signingKid: this.records.at(-1)?.kid }, 'token signing key rotated');
  }

  private async refreshIfStale(): Promise<void> {
    if (this.now().getTime() - this.loadedAt >= this.refreshMs) await this.reload();
  }

  private reload(): Promise<void> {
    this.loading ??= (async () => {
      try {
        const all = await this.store.listSigningKeys();
        const usable = all.filter((r) => {
          if (r.alg === SIGNING_ALG) return true;
          if (!this.ignoredKids.has(r.kid)) {
            this.ignoredKids.add(r.kid);
            this.logger?.warn({ kid: r.kid, alg: r.alg }, 'signing key with unsupported alg ignored');
          }
          return false;
        });
        usable.sort(
          (a, b) => a.createdAt.getTime() - b.createdAt.getTime() || (a.kid < b.kid ? -1 : a.kid > b.kid ? 1 : 0),
        );
        this.records = usable;
        this.loadedAt = this.now().getTime();
      } finally {
        this.loading = undefined;
      }
    })();
    return this.loading;
  }

  private importKey(cacheKey: string, jwk: Record<string, unknown>): Promise<KeyLike> {
    let key = this.imported.get(cacheKey);
    if (!key) {
      key = importJWK(jwk as unknown as JWK, SIGNING_ALG).then((k) => {
        if (k instanceof Uint8Array) throw new Error('signing key is not an EC key');
        return k;
      });
      // A failed import is not cached, so a repaired record is picked up.
      key.catch(() => this.imported.delete(cacheKey));
      this.imported.set(cacheKey, key);
    }
    return key;
  }
}

function publicMembers(record: SigningKeyRecord): PublicSigningJwk | null {
  const { kty, crv, x, y } = record.publicJwk;
  if (kty !== 'EC' || crv !== 'P-256' || typeof x !== 'string' || typeof y !== 'string') return null;
  return { kty, crv, x, y, kid: record.kid, alg: record.alg, use: 'sig' };
}
