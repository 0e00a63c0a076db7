import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ApKeyRing } from '../../../../src/peppol/pki/key-ring';
import {
  keyMaterialFromPem,
  keyMaterialFromPkcs12,
  loadKeyMaterial,
  loadTrustedCertificates,
} from '../../../../src/peppol/pki/key-material';
import { writePkcs12 } from '../../../../src/peppol/pki/pkcs12';
import {
  TEST_PKI_PASSWORD,
  apSubject,
  defaultTestPkiDir,
  ensureTestPki,
  issueCertificate,
  readTestPki,
  type TestPki,
} from '../../../support/peppol/test-pki';
import { PeppolError } from '../../../../src/peppol/peppol-error';
import { TEST_PKI_DIR, testPki } from '../../../support/peppol/pki-fixture';

let pki: TestPki;
let tmp: string;
beforeAll(async () => {
  pki = await testPki();
  tmp = mkdtempSync(path.join(os.tmpdir(), 'keys-'));
}, 60_000);
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

function refusal(fn: () => unknown): PeppolError {
  try {
    fn();
  } catch (e) {
    if (e instanceof PeppolError) return e;
    throw e;
  }
  throw new Error('expected a refusal');
}

function write(name: string, data: string | Buffer): string {
  const f = path.join(tmp, name);
  writeFileSync(f, data);
  return f;
}

describe('loading production key material', () => {
  it('loads a PKCS#12 key store with a password, by alias or as the only key', () => {
    const file = write('ap.p12', writePkcs12({ password: 'pw', key: { ...pki.apSender, alias: 'ap' } }));
    for (const alias of ['ap', 'AP', undefined]) {
      const m = loadKeyMaterial({ kind: 'pkcs12', path: file, password: 'pw', ...(alias ? { alias } : {}) });
      expect(m.certificate.fingerprint256).toBe(pki.apSender.certificate.fingerprint256);
      expect(m.chain.map((c) => c.fingerprint256)).toEqual([
        pki.apCa.certificate.fingerprint256,
        pki.rootCa.certificate.fingerprint256,
      ]);
    }
    expect(refusal(() => loadKeyMaterial({ kind: 'pkcs12', path: file, password: 'nope' })).message).toMatch(
      /ap\.p12: PKCS#12 integrity check failed: wrong password/,
    );
    expect(
      refusal(() => loadKeyMaterial({ kind: 'pkcs12', path: file, password: 'pw', alias: 'other' })).message,
    ).toMatch(/no private key with alias "other" \(key aliases: ap\)/);
    expect(
      refusal(() => loadKeyMaterial({ kind: 'pkcs12', path: path.join(tmp, 'missing.p12'), password: 'pw' })).reason,
    ).toBe('key-material-invalid');
  });

  it('refuses a trust store where a key store is expected', () => {
    const data = writePkcs12({ password: 'pw', trusted: [{ certificate: pki.apCa.certificate, alias: 'ca' }] });
    expect(refusal(() => keyMaterialFromPkcs12(data, 'pw')).message).toMatch(/no private key \(key aliases: none\)/);
  });

  it('loads PEM files, with an encrypted key and a chain file', () => {
    const cert = write('ap.crt.pem', pki.apReceiver.certificate.toString());
    const key = write(
      'ap.key.pem',
      pki.apReceiver.privateKey.export({ format: 'pem', type: 'pkcs8', cipher: 'aes-256-cbc', passphrase: 'k3y' }),
    );
    const chain = write('chain.pem', pki.apCa.certificate.toString() + pki.rootCa.certificate.toString());
    const m = loadKeyMaterial({
      kind: 'pem',
      certificatePath: cert,
      privateKeyPath: key,
      privateKeyPassphrase: 'k3y',
      chainPath: chain,
    });
    expect(m.certificate.fingerprint256).toBe(pki.apReceiver.certificate.fingerprint256);
    expect(m.chain).toHaveLength(2);
    expect(refusal(() => loadKeyMaterial({ kind: 'pem', certificatePath: cert, privateKeyPath: key })).message).toMatch(
      /passphrase missing/,
    );
    expect(
      refusal(() =>
        loadKeyMaterial({ kind: 'pem', certificatePath: cert, privateKeyPath: key, privateKeyPassphrase: 'bad' }),
      ).message,
    ).toMatch(/wrong passphrase/);
  });

  it('refuses a key that does not belong to the certificate', () => {
    const e = refusal(() =>
      keyMaterialFromPem(
        pki.apReceiver.certificate.toString(),
        pki.apSender.privateKey.export({ format: 'pem', type: 'pkcs8' }),
      ),
    );
    expect(e.message).toMatch(/does not belong to the certificate .*POP000002/);
  });

  it('loads trust anchors from PEM and PKCS#12, refusing end-entity certificates', () => {
    const pem = write('cas.pem', pki.apCa.certificate.toString() + pki.rootCa.certificate.toString());
    expect(loadTrustedCertificates({ kind: 'pem', path: pem })).toHaveLength(2);
    const p12 = write(
      'trust.p12',
      writePkcs12({ password: 'p', trusted: [{ certificate: pki.smpCa.certificate, alias: 'smp' }] }),
    );
    expect(loadTrustedCertificates({ kind: 'pkcs12', path: p12, password: 'p' })[0]?.fingerprint256).toBe(
      pki.smpCa.certificate.fingerprint256,
    );
    const leaf = write('leaf.pem', pki.apSender.certificate.toString());
    expect(refusal(() => loadTrustedCertificates({ kind: 'pem', path: leaf })).message).toMatch(/not a CA/);
    expect(refusal(() => loadTrustedCertificates({ kind: 'pem', path: write('empty.pem', '') })).message).toMatch(
      /no certificates/,
    );
  });
});

describe('certificate rollover (ApKeyRing)', () => {
  it('signs with the newest valid certificate and decrypts with whichever one a sender used', () => {
    const ring = new ApKeyRing([pki.apSender, pki.apSenderNext]);
    expect(ring.seatId).toBe('POP000001');
    expect(ring.signing().certificate.fingerprint256).toBe(pki.apSenderNext.certificate.fingerprint256);
    expect(ring.forCertificate(pki.apSender.certificate)?.privateKey).toBe(pki.apSender.privateKey);
    expect(ring.forCertificate(pki.apSenderNext.certificate)?.privateKey).toBe(pki.apSenderNext.privateKey);
    expect(ring.forCertificate(pki.apReceiver.certificate)).toBeUndefined();
    expect(ring.validAt().map((m) => m.certificate.fingerprint256)).toEqual([
      pki.apSenderNext.certificate.fingerprint256,
      pki.apSender.certificate.fingerprint256,
    ]);
  });

  it('falls back to the older certificate outside the newer one’s validity, and fails when none is valid', () => {
    const ring = new ApKeyRing([pki.apSender, pki.apSenderNext]);
    const beforeNext = new Date(new Date(pki.apSenderNext.certificate.validFrom).getTime() - 1000);
    expect(ring.signing(beforeNext).certificate.fingerprint256).toBe(pki.apSender.certificate.fingerprint256);
    const afterAll = new Date(new Date(pki.apSenderNext.certificate.validTo).getTime() + 1000);
    expect(() => ring.signing(afterAll)).toThrow(/no access point certificate of POP000001 is valid/);
  });

  it('refuses keys of different Seat IDs, duplicates and an empty ring', async () => {
    expect(() => new ApKeyRing([pki.apSender, pki.apReceiver])).toThrow(/one Seat ID.*POP000001, POP000002/);
    expect(() => new ApKeyRing([pki.apSender, pki.apSender])).toThrow(/configured twice/);
    expect(() => new ApKeyRing([])).toThrow(/no access point key/);
    const third = await issueCertificate(pki.apCa, { subject: apSubject('POP000001'), notBefore: new Date() });
    expect(new ApKeyRing([pki.apSender, pki.apSenderNext, third]).signing().certificate.fingerprint256).toBe(
      third.certificate.fingerprint256,
    );
  }, 30_000);
});

describe('test PKI files', () => {
  it('lives outside the repository', () => {
    const repo = path.resolve(__dirname, '../../../..');
    for (const dir of [defaultTestPkiDir(), TEST_PKI_DIR]) expect(path.relative(repo, dir).startsWith('..')).toBe(true);
  });

  it('writes PKCS#12, PEM and trust store files that read back to the same keys', () => {
    const back = readTestPki(TEST_PKI_DIR);
    expect(back.apReceiver.certificate.fingerprint256).toBe(pki.apReceiver.certificate.fingerprint256);
    const files = readdirSync(TEST_PKI_DIR);
    expect(files).toEqual(
      expect.arrayContaining([
        'manifest.json',
        'ap-sender.p12',
        'ap-sender.crt.pem',
        'ap-sender.key.pem',
        'ap-truststore.p12',
        'smp-truststore.p12',
      ]),
    );
    const fromPem = keyMaterialFromPem(
      readFileSync(path.join(TEST_PKI_DIR, 'smp.crt.pem')),
      readFileSync(path.join(TEST_PKI_DIR, 'smp.key.pem')),
    );
    expect(fromPem.chain).toHaveLength(2);
    const trust = loadTrustedCertificates({
      kind: 'pkcs12',
      path: path.join(TEST_PKI_DIR, 'ap-truststore.p12'),
      password: TEST_PKI_PASSWORD,
    });
    expect(trust.map((c) => c.fingerprint256).sort()).toEqual(
      [pki.rootCa.certificate.fingerprint256, pki.apCa.certificate.fingerprint256].sort(),
    );
  });

  it('generates once and reuses, also when several callers race', async () => {
    const dir = path.join(tmp, 'pki');
    const results = await Promise.all([ensureTestPki(dir), ensureTestPki(dir)]);
    const again = await ensureTestPki(dir);
    expect(again.created).toBe(false);
    const fp = again.pki.rootCa.certificate.fingerprint256;
    // Whatever the race produced, the directory holds one consistent PKI.
    expect(readTestPki(dir).rootCa.certificate.fingerprint256).toBe(fp);
    expect(results.some((r) => r.created)).toBe(true);
    expect(readdirSync(tmp).filter((f) => f.startsWith('pki.'))).toEqual([]);
    // Near expiry (a horizon past every certificate) it is regenerated.
    const renewed = await ensureTestPki(dir, { minRemainingDays: 365 * 20 });
    expect(renewed.created).toBe(true);
    expect(renewed.pki.rootCa.certificate.fingerprint256).not.toBe(fp);
    expect(existsSync(path.join(dir, 'manifest.json'))).toBe(true);
    // A cache written before the CRLs existed (no manifest revision) is regenerated; the new one has them.
    const manifestPath = path.join(dir, 'manifest.json');
    const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as Record<string, unknown>;
    expect(manifest).toMatchObject({ version: 1, revision: 2, crls: { apCa: 'ap-ca.crl', smpCa: 'smp-ca.crl' } });
    delete manifest.revision;
    writeFileSync(manifestPath, JSON.stringify(manifest));
    const upgraded = await ensureTestPki(dir);
    expect(upgraded.created).toBe(true);
    expect(upgraded.pki.crls.apCa.equals(readFileSync(path.join(dir, 'ap-ca.crl')))).toBe(true);
    expect(upgraded.pki.apRevoked.certificate.subject).toContain('CN=POP000001');
  }, 60_000);
});
