import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../../src/config/load-config';
import { isGatewayError } from '../../../src/core/gateway-error';
import { DOCTYPE_SCHEME_BUSDOX, documentTypeId, formatId, peppolParticipant } from '../../../src/peppol/identifiers';
import { loadCodeLists, type CodeLists } from '../../../src/peppol/network-rules/code-lists';
import { networkDataLocation } from '../../../src/peppol/network-rules/network-data';
import { registrationServices } from '../../../src/peppol/network-rules/registration';
import { publishedAt } from '../../../src/peppol/network-rules/smp-rules';
import { networkTrustAnchors, trustStoreName } from '../../../src/peppol/network-rules/trust-stores';
import { BILLING_PROCESS, BIS3_CREDIT_NOTE, BIS3_INVOICE } from '../../../src/peppol/smp-publisher';
import { SmpClient } from '../../../src/peppol/smp-client';
import { PeppolError } from '../../../src/peppol/peppol-error';
import { networkRulesRefusal } from '../../../src/sending/network-rules-check';
import { composeRecipientLookup } from '../../../src/main/peppol';

/**
 * The Peppol network rules with the real data: the code lists and trust stores of the pinned jars that `npm test`
 * fetches into the rules cache first (scripts/rules/fetch.js).
 */
const RULES_DIR = loadConfig(process.env).validation.rulesDir;
const lists: CodeLists = loadCodeLists(RULES_DIR);

const day = (d: string) => new Date(`${d}T00:00:00Z`);
const lastMoment = (d: string) => new Date(`${d}T23:59:59.999Z`);

const XRECHNUNG_20_INVOICE = documentTypeId(
  DOCTYPE_SCHEME_BUSDOX,
  'urn:oasis:names:specification:ubl:schema:xsd:Invoice-2::Invoice##urn:cen.eu:en16931:2017#compliant#urn:xoev-de:kosit:standard:xrechnung_2.0::2.1',
);
const rules = (at: string) => ({ codeLists: () => lists, now: () => day(at) });
const entry = (d: { scheme: string; value: string }) => ({
  documentTypeId: formatId(d),
  processIds: [formatId(BILLING_PROCESS)],
});

function caught(fn: () => unknown): Error {
  try {
    fn();
  } catch (e) {
    return e as Error;
  }
  throw new Error('expected an error');
}

describe('the Peppol code lists as versioned data', () => {
  it('are the pinned eDEC code lists, every kind of them', () => {
    expect(lists.versions()).toEqual({
      participantSchemes: '9.5',
      documentTypes: '9.5',
      processes: '9.5',
      transportProfiles: '9.5',
    });
    expect(lists.data.source).toBe('com.helger.peppol:peppol-id:12.4.0');
    expect(lists.data.lists.transportProfiles.entries.find((t) => t.id === 'peppol-transport-as4-v2_0')?.state).toBe(
      'active',
    );
    expect(lists.participantScheme(peppolParticipant('0246:x'), day('2026-11-28')).state).toBe('active');
  });

  it('removes 9954 (NL:OIN) on 2026-03-31, from the pinned list', () => {
    const p = peppolParticipant('9954:00000001003214345000');
    expect(lists.participantScheme(p, lastMoment('2026-03-30'))).toMatchObject({ state: 'deprecated' });
    expect(lists.participantScheme(p, day('2026-03-31'))).toMatchObject({
      state: 'removed',
      removalDate: '2026-03-31',
    });
  });

  it('removes 0193 (UBLBE) on 2026-07-07, from our change over the pinned list, naming its source', () => {
    const p = peppolParticipant('0193:abc');
    expect(lists.participantScheme(p, lastMoment('2026-07-06')).state).toBe('active');
    expect(lists.participantScheme(p, day('2026-07-07'))).toMatchObject({
      state: 'removed',
      removalDate: '2026-07-07',
      source: expect.stringMatching(/v9\.7/),
    });
  });

  it('removes the XRechnung 2.0 document types on 2026-08-01', () => {
    expect(lists.documentType(XRECHNUNG_20_INVOICE, lastMoment('2026-07-31')).state).toBe('deprecated');
    expect(lists.documentType(XRECHNUNG_20_INVOICE, day('2026-08-01'))).toMatchObject({
      state: 'removed',
      removalDate: '2026-08-01',
      entry: expect.stringContaining('XRechnung UBL Invoice V2.0'),
    });
    expect(lists.documentType(BIS3_INVOICE, day('2030-01-01')).state).toBe('active');
  });
});

describe('on send (the recipient resolution)', () => {
  it('sends to a scheme the day before its removal and refuses it on the day, naming the entry and the date', () => {
    const to = peppolParticipant('9954:00000001003214345000');
    expect(networkRulesRefusal(lists, to, BIS3_INVOICE, lastMoment('2026-03-30'))).toBeUndefined();
    const refused = networkRulesRefusal(lists, to, BIS3_INVOICE, day('2026-03-31'));
    expect(refused).toEqual({
      reasonCode: 'PARTICIPANT_SCHEME_REMOVED',
      message: expect.stringMatching(/participant identifier scheme 9954 \(NL:OIN\) is removed .* as of 2026-03-31/),
    });
  });

  it('sends a document type the day before its removal and refuses it on the day', () => {
    const to = peppolParticipant('0204:991-12345-67');
    expect(networkRulesRefusal(lists, to, XRECHNUNG_20_INVOICE, lastMoment('2026-07-31'))).toBeUndefined();
    expect(networkRulesRefusal(lists, to, XRECHNUNG_20_INVOICE, day('2026-08-01'))).toEqual({
      reasonCode: 'DOCUMENT_TYPE_REMOVED',
      message: expect.stringMatching(
        /XRechnung UBL Invoice V2\.0 .* is removed from .*Document types v9\.5 as of 2026-08-01/,
      ),
    });
  });

  it('refuses an ICD the code list does not have', () => {
    expect(networkRulesRefusal(lists, peppolParticipant('1234:x'), BIS3_INVOICE, day('2026-01-01'))?.message).toMatch(
      /scheme 1234 is not in the Peppol Code Lists - Participant identifier schemes v9\.5/,
    );
  });
});

describe('in our SMP', () => {
  it('registers under a scheme the day before its removal and refuses it (400) on the day', () => {
    const p = peppolParticipant('0193:abc');
    expect(registrationServices(rules('2026-07-06'), 'Party 0193:abc', p, [entry(BIS3_INVOICE)])).toEqual([
      entry(BIS3_INVOICE),
    ]);
    const e = caught(() => registrationServices(rules('2026-07-07'), 'Party x', p, [entry(BIS3_INVOICE)]));
    expect(isGatewayError(e) && e.code).toBe('BAD_REQUEST');
    expect(e.message).toMatch(
      /^Party x cannot be a Peppol participant: .*participant identifier scheme 0193 \(UBLBE\) is removed .* as of 2026-07-07/,
    );
  });

  it('publishes a document type the day before its removal and refuses it on the day', () => {
    const p = peppolParticipant('0204:991-12345-67');
    expect(registrationServices(rules('2026-07-31'), 'Party x', p, [entry(XRECHNUNG_20_INVOICE)])).toHaveLength(1);
    const e = caught(() =>
      registrationServices(rules('2026-08-01'), 'Party x', p, [entry(XRECHNUNG_20_INVOICE), entry(BIS3_INVOICE)]),
    );
    expect(e.message).toMatch(/XRechnung UBL Invoice V2\.0 .* as of 2026-08-01/);
    expect((e as { details?: Record<string, unknown> }).details?.codeLists).toEqual([
      expect.objectContaining({ state: 'removed', removalDate: '2026-08-01' }),
    ]);
  });

  it('serves what was registered before a removal only until the removal date', () => {
    const registered = {
      participant: peppolParticipant('0204:991-12345-67'),
      services: [
        { documentType: XRECHNUNG_20_INVOICE, processes: [BILLING_PROCESS] },
        { documentType: BIS3_INVOICE, processes: [BILLING_PROCESS] },
      ],
    };
    expect(publishedAt(registered, lists, lastMoment('2026-07-31'))?.services).toHaveLength(2);
    expect(publishedAt(registered, lists, day('2026-08-01'))?.services.map((s) => s.documentType)).toEqual([
      BIS3_INVOICE,
    ]);
    const oin = { ...registered, participant: peppolParticipant('9954:00000001003214345000') };
    expect(publishedAt(oin, lists, lastMoment('2026-03-30'))).toBeDefined();
    expect(publishedAt(oin, lists, day('2026-03-31'))).toBeUndefined();
  });

  it('publishes both the Invoice and the Credit Note for a party under 0208 (Belgium)', () => {
    const be = peppolParticipant('0208:0123456789');
    expect(registrationServices(rules('2026-11-28'), 'Party x', be, [entry(BIS3_INVOICE)])).toEqual([
      entry(BIS3_INVOICE),
      entry(BIS3_CREDIT_NOTE),
    ]);
    expect(registrationServices(rules('2026-11-28'), 'Party x', be, [entry(BIS3_CREDIT_NOTE)])).toEqual([
      entry(BIS3_CREDIT_NOTE),
      entry(BIS3_INVOICE),
    ]);
    const served = publishedAt(
      { participant: be, services: [{ documentType: BIS3_INVOICE, processes: [BILLING_PROCESS] }] },
      lists,
      day('2026-11-28'),
    );
    expect(served?.services.map((s) => s.documentType)).toEqual([BIS3_INVOICE, BIS3_CREDIT_NOTE]);
    // Other schemes publish what they registered.
    const nl = peppolParticipant('0106:12345678');
    expect(registrationServices(rules('2026-11-28'), 'Party x', nl, [entry(BIS3_INVOICE)])).toEqual([
      entry(BIS3_INVOICE),
    ]);
  });
});

describe('the network trust stores (G3 only)', () => {
  const subjects = (network: 'test' | 'production', kind: 'ap' | 'smp') =>
    networkTrustAnchors(RULES_DIR, network, kind).map((c) => c.subject.replace(/\n/g, ','));

  it('hold the G3 root and the intermediate of their kind, and nothing of G2 (which the pinned stores still carry)', () => {
    expect(subjects('test', 'ap')).toEqual(
      expect.arrayContaining([
        expect.stringContaining('CN=PEPPOL Root TEST CA - G3'),
        expect.stringContaining('CN=PEPPOL ACCESS POINT TEST CA - G3'),
      ]),
    );
    expect(subjects('production', 'ap')).toEqual(
      expect.arrayContaining([
        expect.stringContaining('CN=PEPPOL Root CA - G3'),
        expect.stringContaining('CN=PEPPOL ACCESS POINT CA - G3'),
      ]),
    );
    expect(subjects('test', 'smp')).toEqual(
      expect.arrayContaining([expect.stringContaining('CN=PEPPOL SERVICE METADATA PUBLISHER TEST CA - G3')]),
    );
    expect(subjects('production', 'smp')).toEqual(
      expect.arrayContaining([expect.stringContaining('CN=PEPPOL SERVICE METADATA PUBLISHER CA - G3')]),
    );
    for (const n of ['test', 'production'] as const)
      for (const k of ['ap', 'smp'] as const) {
        const all = subjects(n, k);
        expect(all).toHaveLength(2);
        expect(all.every((s) => s.includes('- G3'))).toBe(true);
        expect(all.some((s) => /G2/.test(s))).toBe(false);
      }
  });

  it('refuses a trust store whose bytes differ from the pinned checksum, and a missing one', () => {
    const loc = networkDataLocation(RULES_DIR);
    const tmp = mkdtempSync(path.join(os.tmpdir(), 'network-trust-'));
    try {
      const copy = path.join(tmp, '_network', loc.version);
      cpSync(loc.dir, copy, { recursive: true });
      const file = path.join(copy, 'files', trustStoreName('test', 'ap'));
      const bytes = readFileSync(file);
      bytes[bytes.length - 10] = (bytes[bytes.length - 10] as number) ^ 0xff;
      writeFileSync(file, bytes);
      expect(() => networkTrustAnchors(tmp, 'test', 'ap')).toThrow(
        /sha256 [0-9a-f]{64}, but .*peppol-commons:12\.4\.0 pins/,
      );
      rmSync(path.join(copy, 'files', trustStoreName('production', 'smp')));
      expect(() => networkTrustAnchors(tmp, 'production', 'smp')).toThrow(/run npm run rules:fetch/);
      // The untouched ones still load.
      expect(networkTrustAnchors(tmp, 'production', 'ap').length).toBeGreaterThan(0);
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  });

  it('stand in for PEPPOL_AP_CA in production mode, the network of the SML zone, and never outside it by default', () => {
    expect(loadConfig({ NODE_ENV: 'production', PEPPOL_SML_ZONE: 'production' }).as4.networkTrust?.network).toBe(
      'production',
    );
    expect(loadConfig({ NODE_ENV: 'production' }).as4.networkTrust?.network).toBe('test');
    expect(loadConfig({ NODE_ENV: 'production', PEPPOL_SML_ZONE: 'sml.local' }).as4.networkTrust).toBeUndefined();
    expect(loadConfig({}).as4.networkTrust).toBeUndefined();
    expect(loadConfig({ PEPPOL_NETWORK_TRUST: 'production' }).as4.networkTrust?.network).toBe('production');
    expect(loadConfig({ NODE_ENV: 'production', PEPPOL_NETWORK_TRUST: 'none' }).as4.networkTrust).toBeUndefined();
  });
});

describe('SMP lookups in production mode', () => {
  const ca = networkTrustAnchors(RULES_DIR, 'test', 'smp');

  it('refuse an http SMP URL before connecting, as a final certificate-problem', async () => {
    const client = new SmpClient({ smpCertificateAuthorities: ca, httpsOnly: true, timeoutMs: 2000 });
    const e = await client
      .getServiceGroup('http://127.0.0.1:9/', peppolParticipant('0088:123'))
      .catch((x: unknown) => x);
    expect(e).toBeInstanceOf(PeppolError);
    expect((e as PeppolError).reason).toBe('smp-not-https');
    expect((e as PeppolError).retryable).toBe(false);
    expect((e as Error).message).toMatch(/http:\/\/127\.0\.0\.1:9\/.* is not https; Peppol SMPs are HTTPS-only/);
  });

  it('go to an http SMP outside production mode (local tests)', async () => {
    const client = new SmpClient({ smpCertificateAuthorities: ca, timeoutMs: 2000 });
    const e = await client
      .getServiceGroup('http://127.0.0.1:9/', peppolParticipant('0088:123'))
      .catch((x: unknown) => x);
    expect((e as PeppolError).reason).not.toBe('smp-not-https');
  });

  it('are HTTPS-only in production mode unless PEPPOL_SMP_HTTPS_ONLY says otherwise', () => {
    const clientOf = (env: NodeJS.ProcessEnv) => {
      const lookup = composeRecipientLookup(loadConfig(env));
      if ('unavailable' in lookup) throw new Error(lookup.unavailable);
      return (lookup as unknown as { options: { client: { options: { httpsOnly?: boolean } } } }).options.client;
    };
    expect(clientOf({ NODE_ENV: 'production' }).options.httpsOnly).toBe(true);
    expect(clientOf({ PEPPOL_NETWORK_TRUST: 'test' }).options.httpsOnly).toBe(false);
    // The local demo network in production mode (the image tree's test): plain http on loopback.
    expect(clientOf({ NODE_ENV: 'production', PEPPOL_SMP_HTTPS_ONLY: 'false' }).options.httpsOnly).toBe(false);
    expect(clientOf({ PEPPOL_NETWORK_TRUST: 'test', PEPPOL_SMP_HTTPS_ONLY: 'true' }).options.httpsOnly).toBe(true);
  });
});
