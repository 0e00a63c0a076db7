import { validateHookBody, type HookValidationOptions } from '../../../src/webhooks/hook-validation';
import { parseAllowList } from '../../../src/webhooks/ssrf-guard';

const base: HookValidationOptions = {
  mode: 'create',
  allowOutput: false,
  allowHttp: false,
  allowList: parseAllowList([]),
  maxTimeoutMs: 100_000,
};
const KEY = 'sixteen-chars-key';

describe('validateHookBody', () => {
  it('infers the action from the url and normalises the fields', () => {
    const v = validateHookBody(
      { url: 'https://r.example/h', topics: ['A', 'A', 'B*'], secureKey: KEY, filter: '  ', timeoutSeconds: 30 },
      base,
    );
    expect(v).toEqual({
      ok: true,
      secureKey: KEY,
      fields: {
        action: 'https',
        name: '',
        url: 'https://r.example/h',
        topic: null,
        topics: ['A', 'B*'],
        filter: null,
        output: [],
        mlsType: null,
        isActive: true,
        timeoutMs: 30_000,
      },
    });
    expect(
      validateHookBody({ url: 'httpsin://u:p@inbound?token=$token$', topic: 'X', secureKey: KEY }, base),
    ).toMatchObject({ ok: true, fields: { action: 'httpsin' } });
    // Read from the gateway's inbox, nothing signed: no secureKey needed.
    expect(validateHookBody({ url: 'httpsin://u:p@inbound?token=$token$', topic: 'X' }, base)).toMatchObject({
      ok: true,
      secureKey: undefined,
    });
    expect(validateHookBody({ url: 'mailto:ap@example.com', topic: 'X' }, base)).toMatchObject({
      ok: true,
      fields: { action: 'mailto' },
    });
  });

  it('needs no url or key for drop and peppol hooks; mlsType only on peppol', () => {
    expect(validateHookBody({ action: 'drop', topic: 'Noise' }, base)).toMatchObject({
      ok: true,
      fields: { action: 'drop', url: null },
    });
    expect(
      validateHookBody({ action: 'peppol', topic: 'InvoiceReceived', mlsType: 'FAILURE_ONLY' }, base),
    ).toMatchObject({ ok: true, fields: { mlsType: 'FAILURE_ONLY' } });
  });

  it('collects every problem at once', () => {
    const v = validateHookBody(
      { url: 'ftp://x', topic: 'Bad topic', secureKey: 'x', filter: '(', output: [{ when: '500', topic: 'X' }] },
      base,
    );
    expect(v.ok).toBe(false);
    const paths = !v.ok ? v.errors.map((e) => e.path).sort() : [];
    expect(paths).toEqual(['action', 'filter', 'output', 'secureKey', 'topic']);
  });

  it('keeps the stored key on update, but wants one where none is stored', () => {
    const upd = { ...base, mode: 'update' as const };
    expect(
      validateHookBody({ url: 'https://r.example/h', topic: 'X' }, { ...upd, hasStoredSecureKey: true }),
    ).toMatchObject({ ok: true, secureKey: undefined });
    expect(
      validateHookBody({ url: 'https://r.example/h', topic: 'X' }, { ...upd, hasStoredSecureKey: false }),
    ).toMatchObject({ ok: false });
  });

  it('allows plain http and allow-listed ranges only when configured', () => {
    const body = { url: 'http://10.0.0.5/h', topic: 'X', secureKey: KEY };
    expect(validateHookBody(body, base).ok).toBe(false);
    expect(validateHookBody(body, { ...base, allowHttp: true }).ok).toBe(false);
    expect(validateHookBody(body, { ...base, allowHttp: true, allowList: parseAllowList(['10.0.0.0/8']) }).ok).toBe(
      true,
    );
  });

  it('refuses a URL whose password is the mask the API answers with', () => {
    const v = validateHookBody({ url: 'httpsin://user:***@inbound?token=$token$', topic: 'X', secureKey: KEY }, base);
    expect(!v.ok && v.errors[0]).toMatchObject({ path: 'url', message: expect.stringMatching(/masked/) as unknown });
  });

  it('refuses a shape that is not a hook', () => {
    for (const body of [null, 'x', [], { topics: 'A' }, { isActive: 'yes' }, { timeoutSeconds: 0 }]) {
      expect(validateHookBody(body, base).ok).toBe(false);
    }
  });
});
