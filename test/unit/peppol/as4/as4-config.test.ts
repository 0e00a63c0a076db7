/**
 * AS4 settings: off without a key, key stores with aliases (rollover), PEM pairs, required CA, and the revocation
 * settings. Loading the configured files into keys.
 */
import path from 'node:path';
import { loadConfig } from '../../../../src/config/load-config';
import { composeRevocationChecker } from '../../../../src/main/peppol';
import { loadAs4Keys } from '../../../../src/peppol/as4/as4-keys';
import { TEST_PKI_DIR, testPki } from '../../../support/peppol/pki-fixture';

const f = (name: string): string => path.join(TEST_PKI_DIR, name);

describe('AS4 configuration', () => {
  beforeAll(async () => {
    await testPki();
  }, 120_000);

  it('is off without an AP key, with the documented limits', () => {
    const c = loadConfig({});
    expect(c.as4).toMatchObject({
      enabled: false,
      keystores: [],
      maxMessageBytes: 50 * 1024 * 1024,
      maxDecompressedBytes: 100 * 1024 * 1024,
      duplicateWindowHours: 168,
    });
  });

  it('reads key stores with aliases (rollover) and loads them into one key ring with the CAs', async () => {
    const c = loadConfig({
      PEPPOL_AP_KEYSTORE: `${f('ap-sender.p12')}#ap-sender, ${f('ap-sender-next.p12')}`,
      PEPPOL_AP_KEYSTORE_PASSWORD: 'test',
      PEPPOL_AP_CA: `${f('ap-ca.crt.pem')},${f('ap-truststore.p12')}`,
      PEPPOL_AP_CA_PASSWORD: 'test',
    });
    expect(c.as4.enabled).toBe(true);
    expect(c.as4.keystores).toEqual([
      { path: f('ap-sender.p12'), alias: 'ap-sender' },
      { path: f('ap-sender-next.p12'), alias: undefined },
    ]);
    const pki = await testPki();
    const { keys, apCertificateAuthorities } = loadAs4Keys(c.as4);
    expect(keys.seatId).toBe('POP000001');
    expect(keys.forCertificate(pki.apSenderNext.certificate)).toBeDefined();
    expect(apCertificateAuthorities.map((x) => x.fingerprint256)).toContain(pki.apCa.certificate.fingerprint256);
  });

  it('reads the revocation settings: off by default, hard fail unless soft fail is asked for', () => {
    expect(loadConfig({}).as4.revocation).toEqual({
      enabled: false,
      softFail: false,
      timeoutMs: 5000,
      maxCrlBytes: 10 * 1024 * 1024,
      cacheEntries: 100,
    });
    const c = loadConfig({
      AS4_REVOCATION_CHECK: 'true',
      AS4_REVOCATION_SOFT_FAIL: 'yes',
      AS4_REVOCATION_TIMEOUT_MS: '2000',
      AS4_REVOCATION_MAX_CRL_BYTES: '65536',
      AS4_REVOCATION_CACHE_ENTRIES: '7',
    });
    expect(c.as4.revocation).toEqual({
      enabled: true,
      softFail: true,
      timeoutMs: 2000,
      maxCrlBytes: 65536,
      cacheEntries: 7,
    });
    // One checker (one CRL cache) per configuration, in the configured failure mode; none while switched off.
    const checker = composeRevocationChecker(c);
    expect(checker?.mode).toBe('soft');
    expect(composeRevocationChecker(c)).toBe(checker);
    expect(composeRevocationChecker(loadConfig({ AS4_REVOCATION_CHECK: 'true' }))?.mode).toBe('hard');
    expect(composeRevocationChecker(loadConfig({}))).toBeUndefined();
  });

  it('loads a PEM certificate and key', () => {
    const c = loadConfig({
      PEPPOL_AP_CERTIFICATE: f('ap-receiver.crt.pem'),
      PEPPOL_AP_PRIVATE_KEY: f('ap-receiver.key.pem'),
      PEPPOL_AP_CA: f('ap-ca.crt.pem'),
    });
    expect(loadAs4Keys(c.as4).keys.seatId).toBe('POP000002');
  });

  it('refuses half a PEM pair, a key without CA, bad revocation settings, and a wrong password', () => {
    expect(() =>
      loadConfig({ PEPPOL_AP_CERTIFICATE: f('ap-receiver.crt.pem'), PEPPOL_AP_CA: f('ap-ca.crt.pem') }),
    ).toThrow(/set both or neither/);
    expect(() => loadConfig({ PEPPOL_AP_KEYSTORE: f('ap-sender.p12') })).toThrow(/PEPPOL_AP_CA: required/);
    expect(() => loadConfig({ AS4_REVOCATION_CHECK: 'maybe' })).toThrow(/AS4_REVOCATION_CHECK/);
    expect(() => loadConfig({ AS4_REVOCATION_TIMEOUT_MS: '5' })).toThrow(/AS4_REVOCATION_TIMEOUT_MS/);
    const c = loadConfig({
      PEPPOL_AP_KEYSTORE: f('ap-sender.p12'),
      PEPPOL_AP_KEYSTORE_PASSWORD: 'wrong',
      PEPPOL_AP_CA: f('ap-ca.crt.pem'),
    });
    expect(() => loadAs4Keys(c.as4)).toThrow(/ap-sender\.p12/);
  });
});
