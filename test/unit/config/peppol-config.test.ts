/**
 * The Peppol settings: defaults, derived URLs, refused combinations, and what composing the Peppol services does with
 * files that are missing or wrong (stop at start, not at the first request).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../../src/config/load-config';
import { composePeppolApi } from '../../../src/main/peppol';
import { createLogger } from '../../../src/observability/logger';
import { TEST_PKI_PASSWORD, type TestPki } from '../../support/peppol/test-pki';
import type { Models } from '../../../src/storage/models';
import { TEST_PKI_DIR, testPki } from '../../support/peppol/pki-fixture';

const logger = createLogger({ level: 'silent' });
// Composing reads files only; the repositories touch the database on use, which these tests never do.
const noModels = {} as Models;

let pki: TestPki;
let dir: string;
beforeAll(async () => {
  pki = await testPki();
  dir = mkdtempSync(path.join(os.tmpdir(), 'peppol-config-'));
}, 120_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('Peppol configuration', () => {
  it('PEPPOL_SML_REGISTRAR=sml: the management URL by zone, the SMP id required, the SMP key required at compose', () => {
    const c = loadConfig({
      PEPPOL_SML_REGISTRAR: 'sml',
      PEPPOL_SML_SMP_ID: 'GW-1',
      PEPPOL_SML_SMP_ADDRESS: '192.0.2.7',
    });
    expect(c.peppol.sml).toMatchObject({
      url: 'https://api.sml.test.tech.peppol.org/edelivery-sml',
      smpId: 'GW-1',
      smpAddress: '192.0.2.7',
    });
    expect(
      loadConfig({ PEPPOL_SML_REGISTRAR: 'sml', PEPPOL_SML_SMP_ID: 'GW-1', PEPPOL_SML_ZONE: 'production' }).peppol.sml
        .url,
    ).toBe('https://api.sml.prod.tech.peppol.org/edelivery-sml');
    expect(() => loadConfig({ PEPPOL_SML_REGISTRAR: 'sml' })).toThrow(/PEPPOL_SML_SMP_ID/);
    expect(() =>
      loadConfig({ PEPPOL_SML_REGISTRAR: 'sml', PEPPOL_SML_SMP_ID: 'GW-1', PEPPOL_SML_ZONE: 'sml.local.test' }),
    ).toThrow(/PEPPOL_SML_URL/);
    expect(() => loadConfig({ PEPPOL_SML_SMP_ADDRESS: 'not-an-ip' })).toThrow(/PEPPOL_SML_SMP_ADDRESS/);
    expect(() => composePeppolApi(c, noModels, logger)).toThrow(/needs our SMP key/);
  });

  it('derives our endpoint and SMP URLs from the public base URL and resolves the named SML zones', () => {
    const c = loadConfig({ PUBLIC_BASE_URL: 'https://gw.example.test/' }).peppol;
    expect(c).toMatchObject({
      apEndpointUrl: 'https://gw.example.test/as4',
      smpBasePath: '/smp',
      smpPublicUrl: 'https://gw.example.test/smp',
      smlZone: 'participant.sml.test.tech.peppol.org',
      smlRegistrar: 'off',
      smpKey: undefined,
      lookupTimeoutMs: 10_000,
    });
    expect(loadConfig({ PEPPOL_SML_ZONE: 'production' }).peppol.smlZone).toBe('participant.sml.prod.tech.peppol.org');
    expect(
      loadConfig({ PEPPOL_SML_ZONE: 'sml.local.test', PEPPOL_DNS_SERVERS: '127.0.0.1:5353, 10.0.0.1' }).peppol,
    ).toMatchObject({ smlZone: 'sml.local.test', dnsServers: ['127.0.0.1:5353', '10.0.0.1'] });
  });

  it('reads the SMP key from a PKCS#12 store or a PEM pair, never both, and refuses incomplete settings', () => {
    expect(
      loadConfig({
        PEPPOL_SMP_KEYSTORE: '/k.p12',
        PEPPOL_SMP_KEYSTORE_PASSWORD: 'pw',
        PEPPOL_SMP_KEYSTORE_ALIAS: 'smp',
      }).peppol.smpKey,
    ).toEqual({ kind: 'pkcs12', path: '/k.p12', password: 'pw', alias: 'smp' });
    expect(loadConfig({ PEPPOL_SMP_CERTIFICATE: '/c.pem', PEPPOL_SMP_PRIVATE_KEY: '/k.pem' }).peppol.smpKey).toEqual({
      kind: 'pem',
      certificatePath: '/c.pem',
      privateKeyPath: '/k.pem',
    });
    expect(() => loadConfig({ PEPPOL_SMP_KEYSTORE: '/k.p12' })).toThrow(/PEPPOL_SMP_KEYSTORE_PASSWORD/);
    expect(() => loadConfig({ PEPPOL_SMP_CERTIFICATE: '/c.pem' })).toThrow(/PEPPOL_SMP_PRIVATE_KEY go together/);
    expect(() =>
      loadConfig({
        PEPPOL_SMP_KEYSTORE: '/k.p12',
        PEPPOL_SMP_KEYSTORE_PASSWORD: 'pw',
        PEPPOL_SMP_CERTIFICATE: '/c.pem',
      }),
    ).toThrow(/not both/);
    expect(() => loadConfig({ PEPPOL_SMP_BASE_PATH: 'smp' })).toThrow(/PEPPOL_SMP_BASE_PATH/);
    expect(() => loadConfig({ PEPPOL_SML_ZONE: 'bad zone!' })).toThrow(/PEPPOL_SML_ZONE/);
    expect(() => loadConfig({ PEPPOL_SML_REGISTRAR: 'bdmsl' })).toThrow(/PEPPOL_SML_REGISTRAR/);
  });

  it('composes: parts without settings are unavailable with the reason, bad files stop the start', () => {
    const bare = composePeppolApi(loadConfig({}), noModels, logger);
    expect(bare.smp).toEqual({ unavailable: expect.stringMatching(/no access point key is configured/) });
    expect(bare.lookup).toEqual({ unavailable: 'PEPPOL_SMP_TRUSTSTORE and PEPPOL_AP_CA not set' });
    expect(bare.registrar.kind).toBe('off');

    // Our SMP publishes the certificate of the AS4 key source, PEM or PKCS#12.
    const apPem = {
      PEPPOL_AP_CERTIFICATE: path.join(TEST_PKI_DIR, 'ap-receiver.crt.pem'),
      PEPPOL_AP_PRIVATE_KEY: path.join(TEST_PKI_DIR, 'ap-receiver.key.pem'),
      PEPPOL_AP_CA: path.join(TEST_PKI_DIR, 'ap-ca.crt.pem'),
    };
    const onlyAp = composePeppolApi(loadConfig({ ...apPem, PEPPOL_SML_REGISTRAR: 'manual' }), noModels, logger);
    expect(onlyAp.smp).toEqual({ unavailable: expect.stringMatching(/PEPPOL_SMP_KEYSTORE/) });
    expect(onlyAp.registrar.kind).toBe('manual');
    expect(onlyAp.settings.apCertificates.map((c) => c.fingerprint256)).toEqual([
      pki.apReceiver.certificate.fingerprint256,
    ]);
    const fromP12 = composePeppolApi(
      loadConfig({
        PEPPOL_AP_KEYSTORE: path.join(TEST_PKI_DIR, 'ap-receiver.p12'),
        PEPPOL_AP_KEYSTORE_PASSWORD: TEST_PKI_PASSWORD,
        PEPPOL_AP_CA: apPem.PEPPOL_AP_CA,
      }),
      noModels,
      logger,
    );
    expect(fromP12.settings.apCertificates.map((c) => c.fingerprint256)).toEqual([
      pki.apReceiver.certificate.fingerprint256,
    ]);

    const caOnly = path.join(dir, 'ca-only.pem');
    writeFileSync(caOnly, pki.apCa.certificate.toString());
    expect(() =>
      composePeppolApi(
        loadConfig({ ...apPem, PEPPOL_AP_CERTIFICATE: path.join(dir, 'missing.pem') }),
        noModels,
        logger,
      ),
    ).toThrow(/missing\.pem/);
    expect(() =>
      composePeppolApi(
        loadConfig({ PEPPOL_SMP_KEYSTORE: path.join(TEST_PKI_DIR, 'smp.p12'), PEPPOL_SMP_KEYSTORE_PASSWORD: 'wrong' }),
        noModels,
        logger,
      ),
    ).toThrow(/smp\.p12/);
    // A trust store must hold CA certificates only.
    expect(() =>
      composePeppolApi(
        loadConfig({ PEPPOL_SMP_TRUSTSTORE: path.join(TEST_PKI_DIR, 'ap-receiver.crt.pem'), PEPPOL_AP_CA: caOnly }),
        noModels,
        logger,
      ),
    ).toThrow(/not a CA/);

    const full = composePeppolApi(
      loadConfig({
        ...apPem,
        PEPPOL_SMP_KEYSTORE: path.join(TEST_PKI_DIR, 'smp.p12'),
        PEPPOL_SMP_KEYSTORE_PASSWORD: TEST_PKI_PASSWORD,
        PEPPOL_SMP_TRUSTSTORE: caOnly,
        PEPPOL_AP_CA: caOnly,
      }),
      noModels,
      logger,
    );
    expect('unavailable' in full.smp || 'unavailable' in full.lookup).toBe(false);
    expect(full.settings.smpCertificate?.fingerprint256).toBe(pki.smp.certificate.fingerprint256);
  });
});
