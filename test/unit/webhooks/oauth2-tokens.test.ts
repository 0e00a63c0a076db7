import { OAuth2TokenCache, type FetchedToken, type OAuth2Credentials } from '../../../src/webhooks/oauth2-tokens';

const CREDS: OAuth2Credentials = { tokenUrl: 'https://idp.example/token', clientId: 'gw', clientSecret: 's1' };

describe('OAuth2TokenCache', () => {
  let clock: number;
  let fetched: number;
  let lifetime: number | undefined;
  const fetch = async (): Promise<FetchedToken> => {
    fetched++;
    return { accessToken: `t${fetched}`, expiresIn: lifetime };
  };
  beforeEach(() => {
    clock = 1_000_000;
    fetched = 0;
    lifetime = 300;
  });
  const cache = () => new OAuth2TokenCache({ now: () => clock, skewMs: 30_000 });

  it('keeps a token until its expiry less the skew, then fetches a new one', async () => {
    const c = cache();
    expect(await c.token(CREDS, fetch)).toBe('t1');
    clock += 269_000;
    expect(await c.token(CREDS, fetch)).toBe('t1');
    clock += 1_001;
    expect(await c.token(CREDS, fetch)).toBe('t2');
    expect(fetched).toBe(2);
  });

  it('fetches once for concurrent callers, and again after a failed fetch', async () => {
    const c = cache();
    const tokens = await Promise.all([1, 2, 3].map(() => c.token(CREDS, fetch)));
    expect(tokens).toEqual(['t1', 't1', 't1']);
    expect(fetched).toBe(1);
    const other = { ...CREDS, clientSecret: 's2' };
    await expect(c.token(other, () => Promise.reject(new Error('down')))).rejects.toThrow('down');
    expect(await c.token(other, fetch)).toBe('t2');
  });

  it('drops a refused token (401), but not a newer one that replaced it', async () => {
    const c = cache();
    expect(await c.token(CREDS, fetch)).toBe('t1');
    c.invalidate(CREDS, 't1');
    expect(await c.token(CREDS, fetch)).toBe('t2');
    c.invalidate(CREDS, 't1');
    expect(await c.token(CREDS, fetch)).toBe('t2');
    expect(fetched).toBe(2);
  });

  it('keys tokens by all the credentials, and keeps a token without expires_in for the default lifetime', async () => {
    const c = new OAuth2TokenCache({ now: () => clock, skewMs: 0, defaultLifetimeMs: 60_000 });
    lifetime = undefined;
    expect(await c.token(CREDS, fetch)).toBe('t1');
    expect(await c.token({ ...CREDS, scope: 'hooks' }, fetch)).toBe('t2');
    expect(await c.token({ ...CREDS, audience: 'x' }, fetch)).toBe('t3');
    clock += 59_999;
    expect(await c.token(CREDS, fetch)).toBe('t1');
    clock += 1;
    expect(await c.token(CREDS, fetch)).toBe('t4');
  });
});
