import { createHmac } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import type { HookSecretDoc } from '../../../src/storage/hooks/hook-secret.repository';
import type { HookRecord } from '../../../src/storage/hooks/hook.repository';
import { signDelivery } from '../../../src/webhooks/sign-payload';
import { HookSecretVersions, rotateHookSecret } from '../../../src/webhooks/secret-rotation';
import { verifyWebhook } from '../../../src/webhooks/verify-webhook';

const OLD = 'the-old-secure-key-0123456789';
const NEW = 'whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=';
const OTHER = 'some-other-secure-key-9876543210';
const AT = new Date('2026-03-01T12:00:00.000Z');
const BODY = JSON.stringify({ topic: 'Ping', message: 'ping', sentOn: AT.toISOString() });

describe('signatures inside a rotation overlap', () => {
  const rotating = signDelivery({
    body: BODY,
    secureKey: NEW,
    previousSecureKey: OLD,
    deliveryId: 'd1',
    timestamp: AT,
  });

  it('carries both signatures: X-Service-Signature with the previous key, -Next with the new, two v1 entries', () => {
    expect(rotating['X-Service-Signature']).toBe(`sha256=${createHmac('sha256', OLD).update(BODY).digest('hex')}`);
    expect((rotating as Record<string, string>)['X-Service-Signature-Next']).toBe(
      `sha256=${createHmac('sha256', NEW).update(BODY).digest('hex')}`,
    );
    const entries = rotating['webhook-signature'].split(' ');
    expect(entries).toHaveLength(2);
    expect(entries.every((e) => e.startsWith('v1,'))).toBe(true);
    // Each key alone is what signs outside a rotation.
    const newOnly = signDelivery({ body: BODY, secureKey: NEW, deliveryId: 'd1', timestamp: AT });
    const oldOnly = signDelivery({ body: BODY, secureKey: OLD, deliveryId: 'd1', timestamp: AT });
    expect(entries).toEqual([newOnly['webhook-signature'], oldOnly['webhook-signature']]);
  });

  it('verifies with either key, and with neither another', () => {
    const opts = { now: AT };
    expect(verifyWebhook(BODY, rotating, OLD, opts)).toMatchObject({ ok: true, deliveryId: 'd1' });
    expect(verifyWebhook(BODY, rotating, NEW, opts)).toMatchObject({ ok: true, deliveryId: 'd1' });
    expect(verifyWebhook(BODY, rotating, OTHER, opts)).toEqual({ ok: false, reason: 'signature-mismatch' });
    // Standard Webhooks' own library accepts either key from the list too.
    const std = {
      'webhook-id': rotating['webhook-id'],
      'webhook-timestamp': rotating['webhook-timestamp'],
      'webhook-signature': rotating['webhook-signature'],
    };
    jest.useFakeTimers({ now: AT });
    try {
      expect(() => new Webhook(NEW).verify(BODY, std)).not.toThrow();
      expect(() => new Webhook(Buffer.from(OLD).toString('base64')).verify(BODY, std)).not.toThrow();
    } finally {
      jest.useRealTimers();
    }
  });

  it('after the window only the new key verifies', () => {
    const after = signDelivery({
      body: BODY,
      secureKey: NEW,
      previousSecureKey: null,
      deliveryId: 'd1',
      timestamp: AT,
    });
    expect(Object.keys(after)).not.toContain('X-Service-Signature-Next');
    expect(verifyWebhook(BODY, after, NEW, { now: AT })).toMatchObject({ ok: true });
    expect(verifyWebhook(BODY, after, OLD, { now: AT })).toEqual({ ok: false, reason: 'signature-mismatch' });
  });
});

function hook(over: Partial<HookRecord> = {}): HookRecord {
  return {
    id: 'h1',
    tenantId: 't1',
    partyId: null,
    action: 'https',
    name: '',
    url: 'https://example.test/hook',
    topic: 'Ping',
    topics: [],
    secureKey: OLD,
    filter: null,
    output: [],
    mlsType: null,
    isActive: true,
    timeoutMs: null,
    disabledReason: null,
    rev: 3,
    createdOn: AT,
    changedOn: AT,
    ...over,
  };
}

class MemorySecrets {
  readonly docs = new Map<string, HookSecretDoc>();
  reads = 0;
  insert(doc: HookSecretDoc) {
    if (this.docs.has(doc._id)) return Promise.resolve('exists' as const);
    this.docs.set(doc._id, doc);
    return Promise.resolve('inserted' as const);
  }
  get(hookId: string, version: number) {
    this.reads++;
    return Promise.resolve(this.docs.get(`${hookId}:${version}`) ?? null);
  }
}

describe('rotateHookSecret', () => {
  function setup(initial = hook()) {
    let stored: HookRecord | null = initial;
    const secrets = new MemorySecrets();
    const hooks = {
      findInTenants: (tenants: readonly string[], id: string) =>
        Promise.resolve(stored && tenants.includes(stored.tenantId) && stored.id === id ? stored : null),
      rotateSecret: (_scope: unknown, _id: string, version: number, secureKey: string) => {
        if (!stored) return Promise.resolve(null);
        if ((stored.secretVersion ?? 0) !== version - 1) return Promise.resolve('moved' as const);
        stored = { ...stored, secureKey, secretVersion: version, rev: stored.rev + 1 };
        return Promise.resolve(stored);
      },
    };
    return { hooks, secrets, current: () => stored };
  }

  it('stores version 1 with the old key until the overlap ends and points the hook at it', async () => {
    const s = setup();
    const r = await rotateHookSecret({ ...s, now: () => AT }, ['t1'], 'h1', 3_600_000);
    expect(r.version).toBe(1);
    expect(r.secureKey).toMatch(/^whsec_/);
    expect(r.previousValidUntil).toEqual(new Date(AT.getTime() + 3_600_000));
    expect(s.current()).toMatchObject({ secureKey: r.secureKey, secretVersion: 1 });
    expect(s.secrets.docs.get('h1:1')).toMatchObject({ previousSecureKey: OLD, secureKey: r.secureKey });

    const versions = new HookSecretVersions(s.secrets);
    const h = s.current()!;
    expect(await versions.previousKey(h, new Date(AT.getTime() + 1_000))).toBe(OLD);
    expect(await versions.previousKey(h, new Date(AT.getTime() + 3_600_000))).toBeNull();
    // Versions never change: read once per process.
    expect(s.secrets.reads).toBe(1);
    // A key set through the API since ends the overlap.
    expect(await versions.previousKey({ ...h, secureKey: OTHER }, AT)).toBeNull();
    expect(await versions.previousKey(hook(), AT)).toBeNull();

    const again = await rotateHookSecret({ ...s, now: () => AT }, ['t1'], 'h1', 0);
    expect(again.version).toBe(2);
    expect(s.secrets.docs.get('h1:2')).toMatchObject({ previousSecureKey: r.secureKey });
  });

  it('finishes a rotation that stopped after storing its version, with the key it stored', async () => {
    const s = setup();
    await s.secrets.insert({
      _id: 'h1:1',
      hookId: 'h1',
      tenantId: 't1',
      version: 1,
      secureKey: NEW,
      previousSecureKey: OLD,
      previousValidUntil: new Date(AT.getTime() + 60_000),
      createdOn: AT,
    });
    const r = await rotateHookSecret({ ...s, now: () => AT }, ['t1'], 'h1', 3_600_000);
    expect(r).toMatchObject({ version: 1, secureKey: NEW });
    expect(s.current()?.secureKey).toBe(NEW);
  });

  it("refuses an unknown hook, another tenant's hook and an unsigned hook", async () => {
    const s = setup();
    await expect(rotateHookSecret(s, ['t1'], 'nope', 0)).rejects.toThrow(/Hook nope not found in tenant t1/);
    await expect(rotateHookSecret(s, ['t2'], 'h1', 0)).rejects.toThrow(/Hook h1 not found in tenant t2/);
    const inbox = setup(hook({ action: 'httpsin', secureKey: null }));
    await expect(rotateHookSecret(inbox, ['t1'], 'h1', 0)).rejects.toThrow(/only signed \(https\) hooks/);
  });
});
