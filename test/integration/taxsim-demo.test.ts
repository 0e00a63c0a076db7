/**
 * taxsim as `npm start` runs it (scripts/lib/demo.js demoTaxsimEnv, src/main/taxsim.ts runTaxsim): its own AP
 * certificate of the test PKI's AP CA, its participants registered in the local SML zone file and published by its own
 * SMP, so the gateway's normal recipient lookup (composeRecipientLookup, the same settings) finds its AS4 endpoint for
 * the Tax Data Document; its HTTP API answers an MLS.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../src/config/load-config';
import { loadTaxsimConfig } from '../../src/config/taxsim-config';
import { composeRecipientLookup } from '../../src/main/peppol';
import { runTaxsim } from '../../src/main/taxsim';
import { commonNameOf } from '../../src/peppol/pki/certificates';
import { ensureExtraApCertificate } from '../../src/peppol/pki/test-pki';
import { readMls } from '../../src/peppol/mls';
import { TAXSIM_SEAT_ID, TDD_DOCUMENT_TYPE, TDD_PROCESS, type RunningTaxsim } from '../../src/taxsim';
import { TEST_PKI_DIR, testPki } from '../support/peppol/pki-fixture';
import { bis3Tdd } from '../support/taxsim';

/* eslint-disable @typescript-eslint/no-require-imports */
const demo = require('../../scripts/lib/demo') as {
  demoPeppolEnv(o: { pkiDir: string; dnsAddress: string; publicBaseUrl: string }): Record<string, string>;
  demoTaxsimEnv(o: { pkiDir: string; smlZoneFile: string }): Record<string, string>;
};
const { startLocalSml } = require('../../scripts/lib/local-sml') as {
  startLocalSml(o: { zoneFile: string }): Promise<{ address: string; close(): Promise<void> }>;
};
/* eslint-enable @typescript-eslint/no-require-imports */

jest.setTimeout(120_000);

describe('taxsim in the npm start demo', () => {
  let dir: string;
  let sml: { address: string; close(): Promise<void> };
  let taxsim: RunningTaxsim;
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    await testPki();
    dir = mkdtempSync(path.join(os.tmpdir(), 'taxsim-demo-'));
    const zoneFile = path.join(dir, 'sml-zone.json');
    sml = await startLocalSml({ zoneFile });
    const cert = await ensureExtraApCertificate(TEST_PKI_DIR, 'taxsim', TAXSIM_SEAT_ID);
    expect(cert.p12).toBe(path.join(TEST_PKI_DIR, 'taxsim.p12'));
    env = {
      ...process.env,
      ...demo.demoPeppolEnv({ pkiDir: TEST_PKI_DIR, dnsAddress: sml.address, publicBaseUrl: 'http://127.0.0.1:9' }),
      ...demo.demoTaxsimEnv({ pkiDir: TEST_PKI_DIR, smlZoneFile: zoneFile }),
      TAXSIM_PORT: '0',
      PEPPOL_LOOKUP_TIMEOUT_MS: '2000',
      LOG_LEVEL: 'warn',
    };
    taxsim = await runTaxsim(loadConfig(env), loadTaxsimConfig(env));
  });

  afterAll(async () => {
    await taxsim?.stop();
    await sml?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('keeps its certificate until the PKI changes', async () => {
    expect((await ensureExtraApCertificate(TEST_PKI_DIR, 'taxsim', TAXSIM_SEAT_ID)).created).toBe(false);
  });

  it('is found by the gateway lookup for the Tax Data Document, in every country it serves', async () => {
    // The gateway's own settings (its AP key, the same CA, SML zone and SMP trust store) find taxsim's endpoint.
    const gatewayEnv = { ...env, PEPPOL_AP_KEYSTORE: `${path.join(TEST_PKI_DIR, 'ap-sender.p12')}#ap-sender` };
    const lookup = composeRecipientLookup(loadConfig(gatewayEnv));
    if ('unavailable' in lookup) throw new Error(lookup.unavailable);
    expect(Object.keys(taxsim.participants)).toEqual(['AT', 'BE', 'DE', 'DK', 'FI', 'FR', 'NL', 'NO']);
    expect(taxsim.participants.BE).toBe('0242:000950-taxsim.tax_be');
    for (const id of [taxsim.participants.BE!, taxsim.participants.NL!]) {
      const found = await lookup.findEndpoint(id, [TDD_DOCUMENT_TYPE], TDD_PROCESS);
      if (!found.ok) throw new Error(`${id}: ${found.message}`);
      expect(found.result.endpoint.url).toBe(taxsim.as4Url);
      expect(commonNameOf(found.result.endpoint.certificate)).toBe(TAXSIM_SEAT_ID);
    }
  });

  it('answers a TDD over HTTP with an MLS', async () => {
    const res = await fetch(`${taxsim.url}/api/tdd`, {
      method: 'POST',
      headers: { 'content-type': 'application/xml' },
      body: bis3Tdd({ receiver: taxsim.participants.DK! }),
    });
    expect(res.status).toBe(200);
    const mls = readMls(Buffer.from(await res.text(), 'utf8'));
    expect(mls.ok && mls.mls.responseCode).toBe('AP');
    const page = await fetch(`${taxsim.url}/`);
    expect(await page.text()).toContain('12345');
  });
});
