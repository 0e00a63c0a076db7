import { readFileSync } from 'node:fs';
import path from 'node:path';
import { loadConfig } from '../../../src/config/load-config';
import { renderConfigurationDoc } from '../../../src/config/config-doc';
import { EMAIL_SEND_SCHEDULE, PEPPOL_SEND_SCHEDULE } from '../../../src/core/retry-schedule';

describe('configuration', () => {
  it('has working defaults, derived URLs and is frozen', () => {
    const c = loadConfig({});
    expect(c.http.port).toBe(8080);
    expect(c.http.maxUploadBytes).toBe(24 * 1024 * 1024);
    expect(c.auth.tokenTtlSeconds).toBe(3600);
    expect(c.http.publicBaseUrl).toBe('http://127.0.0.1:8080');
    expect(c.auth.baseUrl).toBe(c.http.publicBaseUrl);
    expect(c.auth.issuer).toBe(c.auth.baseUrl);
    expect(Object.isFrozen(c) && Object.isFrozen(c.auth) && Object.isFrozen(c.auth.subscriptionKeys)).toBe(true);
  });

  it('parses lists and separate identity-server URLs', () => {
    const c = loadConfig({
      SUBSCRIPTION_KEYS: ' a, b ,,',
      PUBLIC_BASE_URL: 'https://api.example.test/',
      AUTH_BASE_URL: 'https://id.example.test',
    });
    expect(c.auth.subscriptionKeys).toEqual(['a', 'b']);
    expect(c.http.publicBaseUrl).toBe('https://api.example.test');
    expect(c.auth.issuer).toBe('https://id.example.test');
  });

  it('has no e-mail channel until an SMTP relay is set, and checks the relay settings together', () => {
    expect(loadConfig({}).email).toEqual({ smtp: undefined, retrySchedule: EMAIL_SEND_SCHEDULE });
    const c = loadConfig({
      SMTP_HOST: 'smtp.example.test',
      SMTP_FROM: 'invoices@gateway.example',
      SMTP_USER: 'gw',
      SMTP_PASSWORD: 'secret',
      SMTP_DKIM_DOMAIN: 'gateway.example',
      SMTP_DKIM_SELECTOR: 's1',
      SMTP_DKIM_KEY_FILE: '/etc/dkim.pem',
    });
    expect(c.email.smtp).toEqual({
      host: 'smtp.example.test',
      port: 587,
      secure: false,
      requireTls: true,
      auth: { user: 'gw', pass: 'secret' },
      caFile: undefined,
      timeoutMs: 30_000,
      from: 'invoices@gateway.example',
      dkim: { domainName: 'gateway.example', keySelector: 's1', keyFile: '/etc/dkim.pem' },
    });
    expect(() => loadConfig({ SMTP_HOST: 'smtp.example.test' })).toThrow(/SMTP_FROM: required/);
    expect(() => loadConfig({ SMTP_HOST: 'h', SMTP_FROM: 'a@b.example', SMTP_USER: 'u' })).toThrow(/SMTP_PASSWORD/);
    expect(() => loadConfig({ SMTP_HOST: 'h', SMTP_FROM: 'a@b.example', SMTP_DKIM_DOMAIN: 'b.example' })).toThrow(
      /set all three or none/,
    );
  });

  it('names every invalid variable', () => {
    expect(() => loadConfig({ PORT: 'eighty', LOG_LEVEL: 'loud', PUBLIC_BASE_URL: 'not a url' })).toThrow(
      /PORT[\s\S]*LOG_LEVEL|LOG_LEVEL[\s\S]*PORT/,
    );
    expect(() => loadConfig({ MONGODB_DB: 'bad-name1' })).toThrow(/MONGODB_DB/);
  });

  it('reads the Peppol delivery schedule (default: eight attempts over 35 h) and names a bad one', () => {
    expect(loadConfig({}).peppol.sendRetrySchedule).toEqual(PEPPOL_SEND_SCHEDULE);
    expect(
      loadConfig({ PEPPOL_SEND_RETRY_SCHEDULE: '{"kind":"table","delaysMs":[100,200]}' }).peppol.sendRetrySchedule,
    ).toEqual({ kind: 'table', delaysMs: [100, 200] });
    expect(() => loadConfig({ PEPPOL_SEND_RETRY_SCHEDULE: '{kind' })).toThrow(
      /PEPPOL_SEND_RETRY_SCHEDULE: not valid JSON/,
    );
    expect(() => loadConfig({ PEPPOL_SEND_RETRY_SCHEDULE: '{"kind":"table","delaysMs":[-1]}' })).toThrow(
      /PEPPOL_SEND_RETRY_SCHEDULE: delaysMs must be/,
    );
  });

  it('leaves the worker’s cache of runs to the SDK unless set, and refuses a size the SDK cannot take', () => {
    expect(loadConfig({}).temporal.maxCachedWorkflows).toBeUndefined();
    expect(loadConfig({ WORKER_MAX_CACHED_WORKFLOWS: '200' }).temporal.maxCachedWorkflows).toBe(200);
    expect(loadConfig({ WORKER_MAX_CACHED_WORKFLOWS: '0' }).temporal.maxCachedWorkflows).toBe(0);
    expect(loadConfig({ WORKER_MAX_CACHED_WORKFLOWS: '40' }).temporal.maxCachedWorkflows).toBe(40);
    expect(() => loadConfig({ WORKER_MAX_CACHED_WORKFLOWS: '39' })).toThrow(
      /WORKER_MAX_CACHED_WORKFLOWS[\s\S]*0 \(no cache\) or at least 40/,
    );
    expect(() => loadConfig({ WORKER_MAX_CACHED_WORKFLOWS: '-5' })).toThrow(/WORKER_MAX_CACHED_WORKFLOWS/);
    expect(() => loadConfig({ WORKER_MAX_CACHED_WORKFLOWS: 'many' })).toThrow(/WORKER_MAX_CACHED_WORKFLOWS/);
  });

  it('is documented: docs/configuration.md matches the schema', () => {
    const file = readFileSync(path.resolve(__dirname, '../../../docs/configuration.md'), 'utf8');
    expect(file).toBe(renderConfigurationDoc());
  });
});
