import { compactVerify } from 'jose';
import type { IdentityStore, SigningKeyRecord } from '../../../src/auth/identity-store';
import { InMemoryIdentityStore } from '../../../src/auth/in-memory-identity-store';
import { SigningKeyService } from '../../../src/auth/signing-keys';
import { TokenService } from '../../../src/auth/token-service';

const DAY = 86_400_000;
const TTL_S = 3600;
const REFRESH_MS = 60_000;
const SKEW_S = 60;
const config = {
  auth: {
    tokenTtlSeconds: TTL_S,
    signingKeyRotationDays: 30,
    issuer: 'https://auth.example.test',
    audience: 'invoice-gateway-api',
  },
};

class Clock {
  constructor(public t = Date.parse('2025-01-01T00:00:00Z')) {}
  now = () => new Date(this.t);
  advance(ms: number) {
    this.t += ms;
  }
}

function service(store: IdentityStore, clock: Clock) {
  return new SigningKeyService({
    store,
    config,
    now: clock.now,
    refreshIntervalMs: REFRESH_MS,
    clockSkewSeconds: SKEW_S,
  });
}

const kids = async (s: SigningKeyService) => (await s.jwks()).keys.map((k) => k.kid);

describe('SigningKeyService', () => {
  it('creates an ES256 key on first start and persists it through the store', async () => {
    const store = new InMemoryIdentityStore();
    const clock = new Clock();
    const s = service(store, clock);
    await s.init();
    const [record] = await store.listSigningKeys();
    expect(record).toMatchObject({ alg: 'ES256', createdAt: clock.now() });
    expect(record?.privateJwk).toMatchObject({ kty: 'EC', crv: 'P-256', d: expect.any(String), kid: record?.kid });
    expect(record?.publicJwk).not.toHaveProperty('d');
    const current = await s.currentKey();
    expect(current.kid).toBe(record?.kid);
  });

  it('publishes only public members of the keys', async () => {
    const store = new InMemoryIdentityStore();
    const s = service(store, new Clock());
    await s.init();
    const { keys } = await s.jwks();
    expect(keys).toHaveLength(1);
    expect(Object.keys(keys[0]!).sort()).toEqual(['alg', 'crv', 'kid', 'kty', 'use', 'x', 'y']);
    expect(keys[0]).toMatchObject({ kty: 'EC', crv: 'P-256', alg: 'ES256', use: 'sig' });
  });

  it('a second process loads the same key instead of making its own', async () => {
    const store = new InMemoryIdentityStore();
    const clock = new Clock();
    const a = service(store, clock);
    await a.init();
    const b = service(store, clock);
    await b.init();
    expect((await b.currentKey()).kid).toBe((await a.currentKey()).kid);
    expect(await store.listSigningKeys()).toHaveLength(1);
  });

  it('two processes racing to create the first key converge on one signing key; every key made verifies', async () => {
    const store = new InMemoryIdentityStore();
    const clock = new Clock();
    const a = service(store, clock);
    const b = service(store, clock);
    await Promise.all([a.init(), b.init()]);
    const records = await store.listSigningKeys();
    expect(records.length).toBeGreaterThanOrEqual(1);
    // Whatever either signed meanwhile verifies in both.
    for (const r of records) {
      expect(await a.verificationKey(r.kid)).not.toBeNull();
      expect(await b.verificationKey(r.kid)).not.toBeNull();
    }
    // One process may not have seen the other's insert yet; by the next refresh both sign with the newest key.
    clock.advance(REFRESH_MS);
    const [ka, kb] = await Promise.all([a.currentKey(), b.currentKey()]);
    expect(ka.kid).toBe(kb.kid);
    // A key that lost the race stays verifiable for as long as tokens it signed can live.
    for (const r of records) expect(await a.verificationKey(r.kid)).not.toBeNull();
  });

  it('rotates once the newest key is older than the rotation age', async () => {
    const store = new InMemoryIdentityStore();
    const clock = new Clock();
    const s = service(store, clock);
    await s.init();
    const first = (await s.currentKey()).kid;
    clock.advance(30 * DAY - 1);
    expect((await s.currentKey()).kid).toBe(first);
    clock.advance(1);
    const second = (await s.currentKey()).kid;
    expect(second).not.toBe(first);
    expect(await store.listSigningKeys()).toHaveLength(2);
    // Another process starting now adopts the new key.
    const other = service(store, clock);
    await other.init();
    expect((await other.currentKey()).kid).toBe(second);
  });

  it('keeps a retired key published until every token it signed has expired, then drops it', async () => {
    const store = new InMemoryIdentityStore();
    const clock = new Clock();
    const s = service(store, clock);
    await s.init();
    const tokens = new TokenService({ signingKeys: s, config, now: clock.now });
    const oldKid = (await s.currentKey()).kid;

    clock.advance(30 * DAY - 1000);
    const lastOld = await tokens.issue({
      grantType: 'client_credentials',
      clientId: 'c',
      secretId: 's',
      tenantId: 't',
    });
    clock.advance(1000);
    const newKid = (await s.currentKey()).kid;
    const successorCreated = clock.t;
    expect(newKid).not.toBe(oldKid);
    expect(await kids(s)).toEqual([newKid, oldKid]);

    const retires = successorCreated + REFRESH_MS + SKEW_S * 1000 + TTL_S * 1000;
    expect(s.retiresAt(oldKid)?.getTime()).toBe(retires);
    expect(s.retiresAt(newKid)).toBeNull();

    clock.t = retires - 1;
    expect(await kids(s)).toEqual([newKid, oldKid]);
    expect(await s.verificationKey(oldKid)).not.toBeNull();
    // The last token of the old key expired before the key went away.
    expect(lastOld.claims.exp * 1000).toBeLessThan(retires);

    clock.t = retires;
    expect(await kids(s)).toEqual([newKid]);
    expect(await s.verificationKey(oldKid)).toBeNull();
    // Still in the store (history), just no longer trusted.
    expect(await store.listSigningKeys()).toHaveLength(2);
  });

  it('a key withdrawn with notAfter is replaced at once and no longer published', async () => {
    const store = new InMemoryIdentityStore();
    const clock = new Clock();
    const compromised: SigningKeyRecord = await (async () => {
      const s = service(store, clock);
      await s.init();
      return (await store.listSigningKeys())[0]!;
    })();
    const withdrawn = new InMemoryIdentityStore();
    await withdrawn.insertSigningKey({ ...compromised, notAfter: new Date(clock.t) });
    const s = service(withdrawn, clock);
    await s.init();
    const current = await s.currentKey();
    expect(current.kid).not.toBe(compromised.kid);
    expect(await kids(s)).toEqual([current.kid]);
    expect(await s.verificationKey(compromised.kid)).toBeNull();
  });

  it('finds a key that another process inserted after this one loaded', async () => {
    const store = new InMemoryIdentityStore();
    const clock = new Clock();
    const a = service(store, clock);
    await a.init();
    const b = service(store, clock);
    await b.init();
    clock.advance(30 * DAY);
    const rotatedByB = (await b.currentKey()).kid;
    const tokens = new TokenService({ signingKeys: b, config, now: clock.now });
    const { accessToken } = await tokens.issue({
      grantType: 'client_credentials',
      clientId: 'c',
      secretId: 's',
      tenantId: 't',
    });
    const key = await a.verificationKey(rotatedByB);
    expect(key).not.toBeNull();
    await expect(compactVerify(accessToken, key!)).resolves.toBeDefined();
  });

  it('does not hit the store for every unknown kid', async () => {
    const store = new InMemoryIdentityStore();
    const clock = new Clock();
    const s = service(store, clock);
    await s.init();
    const spy = jest.spyOn(store, 'listSigningKeys');
    for (let i = 0; i < 20; i++) expect(await s.verificationKey(`made-up-${i}`)).toBeNull();
    expect(spy.mock.calls.length).toBeLessThanOrEqual(1);
  });

  it('ignores records of another algorithm', async () => {
    const store = new InMemoryIdentityStore();
    await store.insertSigningKey({
      kid: 'rsa-1',
      alg: 'RS256',
      privateJwk: {},
      publicJwk: { kty: 'RSA', n: 'x', e: 'AQAB' },
      createdAt: new Date(Date.parse('2025-01-01T00:00:00Z')),
    });
    const s = service(store, new Clock());
    await s.init();
    const current = await s.currentKey();
    expect(current.kid).not.toBe('rsa-1');
    expect(await kids(s)).toEqual([current.kid]);
  });
});
