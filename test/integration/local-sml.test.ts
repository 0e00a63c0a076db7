/**
 * The SML stand-in on its own, driven by our SOAP client over HTTPS with client certificates: SMP records bound to
 * their certificate, participant ownership, the migration key, certificate change, and the DNS zone following every
 * change (lookups resolve to the SMP that owns the participant).
 */
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { runSmlCommand } from '../../src/main/admin-sml';
import { peppolParticipant } from '../../src/peppol/identifiers';
import type { KeyMaterial } from '../../src/peppol/pki/key-material';
import { createDnsResolver, lookupSmp } from '../../src/peppol/sml';
import { SmlClient, mtlsTransport } from '../../src/peppol/sml-client';
import { LocalDnsZone } from '../support/peppol/local-dns';
import { LocalSml } from '../support/peppol/local-sml';
import { testPki } from '../support/peppol/pki-fixture';
import { createIntermediateCa, createRootCa, issueCertificate, type TestPki } from '../support/peppol/test-pki';

const ZONE = 'participant.sml.standin.test';
const P = peppolParticipant('0106:72000001');
const KEY = 'Ab3$cD4%efGH56!!';

let pki: TestPki;
let dns: LocalDnsZone;
let sml: LocalSml;
let smpB: KeyMaterial;
let smpBNext: KeyMaterial;
let foreign: KeyMaterial;
const transports: Array<{ close(): Promise<void> }> = [];

function clientFor(key: KeyMaterial, smpId: string): SmlClient {
  const t = mtlsTransport({ clientKey: key, ca: [sml.tls?.certificate as X509Certificate], timeoutMs: 5000 });
  transports.push(t);
  return new SmlClient({ url: sml.url, smpId, transport: t });
}

const lookup = async () =>
  (
    await lookupSmp(P, {
      zone: ZONE,
      resolver: createDnsResolver({ servers: [dns.address], timeoutMs: 1000, tries: 1 }),
    })
  ).smpUrl;

beforeAll(async () => {
  pki = await testPki();
  dns = await new LocalDnsZone().start();
  sml = await new LocalSml(
    ZONE,
    {
      setRecords: (name, records) =>
        dns.set(
          name,
          records.map((r) => ({ type: 'NAPTR' as const, ...r })),
        ),
      removeRecords: (name) => dns.remove(name),
    },
    [pki.smpCa],
    2,
  ).start();
  smpB = await issueCertificate(pki.smpCa, { subject: 'C=NL, O=B, CN=SMP B' });
  smpBNext = await issueCertificate(pki.smpCa, { subject: 'C=NL, O=B, CN=SMP B next' });
  const root = await createRootCa({ subject: 'C=NL, O=Elsewhere, CN=Foreign Root' });
  foreign = await issueCertificate(await createIntermediateCa(root, { subject: 'C=NL, O=Elsewhere, CN=Foreign CA' }), {
    subject: 'C=NL, O=Elsewhere, CN=Foreign SMP',
  });
}, 120_000);

afterAll(async () => {
  await Promise.all(transports.map((t) => t.close()));
  await sml?.stop();
  await dns?.stop();
});

describe('the SML stand-in', () => {
  it('binds SMP records to their certificate and refuses other certificates', async () => {
    const a = clientFor(pki.smp, 'SMP-A');
    const b = clientFor(smpB, 'SMP-B');
    expect(await a.readSmp()).toBeUndefined();
    await a.createSmp('http://127.0.0.1:1/smp-a', '127.0.0.1');
    await b.createSmp('http://127.0.0.1:2/smp-b', '127.0.0.1');
    expect(await a.readSmp()).toEqual({
      smpId: 'SMP-A',
      logicalAddress: 'http://127.0.0.1:1/smp-a',
      physicalAddress: '127.0.0.1',
    });
    // B's certificate claiming SMP-A.
    await expect(clientFor(smpB, 'SMP-A').createParticipant(P)).rejects.toMatchObject({ fault: 'Unauthorized' });
    await expect(clientFor(smpB, 'SMP-A').updateSmp('http://evil.test', '127.0.0.1')).rejects.toMatchObject({
      fault: 'Unauthorized',
    });
    // A certificate outside the SMP CA does not get through TLS.
    await expect(clientFor(foreign, 'SMP-X').readSmp()).rejects.toMatchObject({ code: 'DEPENDENCY_UNAVAILABLE' });
  });

  it('registers, lists in pages, enforces ownership and keeps the DNS zone in step', async () => {
    const a = clientFor(pki.smp, 'SMP-A');
    const b = clientFor(smpB, 'SMP-B');
    await expect(lookup()).rejects.toMatchObject({ reason: 'participant-not-registered' });
    await a.createParticipant(P);
    expect(await lookup()).toBe('http://127.0.0.1:1/smp-a');
    await expect(b.createParticipant(P)).rejects.toMatchObject({ fault: 'BadRequest' });
    await expect(b.deleteParticipant(P)).rejects.toMatchObject({ fault: 'Unauthorized' });
    await expect(b.prepareToMigrate(P, KEY)).rejects.toMatchObject({ fault: 'Unauthorized' });
    for (const v of ['0106:72000002', '0106:72000003']) await a.createParticipant(peppolParticipant(v));
    const first = await a.listParticipants();
    expect(first.participants).toHaveLength(2);
    expect(first.nextPageIdentifier).toBeDefined();
    expect(await a.isOurs(peppolParticipant('0106:72000003'))).toBe(true);
    expect(await b.isOurs(P)).toBe(false);
    await a.deleteParticipant(peppolParticipant('0106:72000003'));
    await expect(a.deleteParticipant(peppolParticipant('0106:72000003'))).rejects.toMatchObject({ fault: 'NotFound' });
  });

  it('migrates only with the key the owner prepared, owner and DNS switching together', async () => {
    const a = clientFor(pki.smp, 'SMP-A');
    const b = clientFor(smpB, 'SMP-B');
    await expect(b.migrate(P, KEY)).rejects.toMatchObject({ fault: 'BadRequest' });
    await a.prepareToMigrate(P, KEY);
    await expect(b.migrate(P, 'Zz9$Yy8%xxQQ')).rejects.toMatchObject({ fault: 'BadRequest' });
    expect(sml.ownerOf(P)).toBe('SMP-A');
    expect(await lookup()).toBe('http://127.0.0.1:1/smp-a');
    await b.migrate(P, KEY);
    expect(sml.ownerOf(P)).toBe('SMP-B');
    expect(await lookup()).toBe('http://127.0.0.1:2/smp-b');
    // The key is spent; the old owner can no longer delete or prepare.
    await expect(clientFor(pki.smp, 'SMP-A').migrate(P, KEY)).rejects.toMatchObject({ fault: 'BadRequest' });
    await expect(a.deleteParticipant(P)).rejects.toMatchObject({ fault: 'Unauthorized' });
    // Moving SMP-B moves its participants' records.
    await b.updateSmp('http://127.0.0.1:3/smp-b', '127.0.0.1');
    expect(await lookup()).toBe('http://127.0.0.1:3/smp-b');
  });

  it('PrepareChangeCertificate lets the announced certificate act for the SMP', async () => {
    await expect(clientFor(smpBNext, 'SMP-B').readSmp()).rejects.toMatchObject({ fault: 'Unauthorized' });
    await clientFor(smpB, 'SMP-B').prepareChangeCertificate(smpBNext.certificate, '2030-01-01');
    expect((await clientFor(smpBNext, 'SMP-B').readSmp())?.smpId).toBe('SMP-B');
    await expect(clientFor(foreign, 'SMP-B').readSmp()).rejects.toMatchObject({ code: 'DEPENDENCY_UNAVAILABLE' });
  });

  it('the admin command announces a rollover through the real client, and the new certificate acts from then', async () => {
    const third = await issueCertificate(pki.smpCa, { subject: 'C=NL, O=B, CN=SMP B third' });
    const dir = mkdtempSync(path.join(tmpdir(), 'sml-rollover-'));
    const pem = path.join(dir, 'third.pem');
    writeFileSync(pem, third.certificate.toString());
    await expect(clientFor(third, 'SMP-B').readSmp()).rejects.toMatchObject({ fault: 'Unauthorized' });
    const out = await runSmlCommand('prepare-change-certificate', { certificate: pem }, () =>
      clientFor(smpBNext, 'SMP-B'),
    );
    expect(out).toMatchObject({ smpId: 'SMP-B', newCertificate: { subject: third.certificate.subject } });
    expect((await clientFor(third, 'SMP-B').readSmp())?.smpId).toBe('SMP-B');
  });
});
