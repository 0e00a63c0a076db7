/**
 * `npm run admin -- sml prepare-change-certificate`: what it refuses before the SML is asked, and what it sends.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { X509Certificate } from 'node:crypto';
import { runSmlCommand, type SmlCommandClient } from '../../../src/main/admin-sml';
import { createRootCa, issueCertificate } from '../../support/peppol/test-pki';

const NOW = new Date('2030-03-01T12:00:00Z');
const dir = mkdtempSync(path.join(tmpdir(), 'sml-cert-'));
let valid: string;
let expiring: string;

function file(name: string, text: string): string {
  const p = path.join(dir, name);
  writeFileSync(p, text);
  return p;
}

function recording(): SmlCommandClient & { calls: Array<{ subject: string; date: string | undefined }> } {
  const calls: Array<{ subject: string; date: string | undefined }> = [];
  return {
    smpId: 'SMP-1',
    calls,
    prepareChangeCertificate: async (c: X509Certificate, date?: string) => {
      calls.push({ subject: c.subject, date });
    },
  };
}

beforeAll(async () => {
  const ca = await createRootCa({ subject: 'C=NL, O=Test, CN=SMP CA', notBefore: new Date('2029-01-01T00:00:00Z') });
  const next = await issueCertificate(ca, {
    subject: 'C=NL, O=Test, CN=SMP next',
    notBefore: new Date('2030-01-01T00:00:00Z'),
    notAfter: new Date('2032-01-01T00:00:00Z'),
  });
  const old = await issueCertificate(ca, {
    subject: 'C=NL, O=Test, CN=SMP old',
    notBefore: new Date('2029-01-01T00:00:00Z'),
    notAfter: new Date('2030-03-10T00:00:00Z'),
  });
  valid = file('next.pem', next.certificate.toString());
  expiring = file('old.pem', old.certificate.toString());
});

describe('sml prepare-change-certificate', () => {
  it('announces the certificate with the date, and answers what it told the SML', async () => {
    const sml = recording();
    const out = await runSmlCommand(
      'prepare-change-certificate',
      { certificate: valid, date: '2030-03-05' },
      () => sml,
      NOW,
    );
    expect(sml.calls).toEqual([{ subject: 'C=NL\nO=Test\nCN=SMP next', date: '2030-03-05' }]);
    expect(out).toMatchObject({
      smpId: 'SMP-1',
      migrationDate: '2030-03-05',
      newCertificate: { subject: 'C=NL\nO=Test\nCN=SMP next', validTo: '2032-01-01T00:00:00.000Z' },
    });
    await runSmlCommand('prepare-change-certificate', { certificate: valid }, () => sml, NOW);
    expect(sml.calls[1]).toEqual({ subject: 'C=NL\nO=Test\nCN=SMP next', date: undefined });
  });

  it.each([
    [{}, /--certificate is required/],
    [{ certificate: path.join(dir, 'absent.pem') }, /ENOENT/],
    [{ certificate: 'TWO' }, /exactly one PEM certificate \(found 2\)/],
    [{ certificate: 'NONE' }, /exactly one PEM certificate \(found 0\)/],
    [{ certificate: 'BROKEN' }, /is not a certificate/],
    [{ certificate: 'VALID', date: '2030-02-28' }, /--date 2030-02-28 is in the past/],
    [{ certificate: 'VALID', date: '1 March' }, /is not a date/],
    [{ certificate: 'VALID', date: '2030-02-30' }, /is not a date/],
    [{ certificate: 'EXPIRING', date: '2030-03-10' }, /not on 2030-03-10/],
  ])('refuses %o before the SML is asked', async (options, error) => {
    const named: Record<string, () => string> = {
      TWO: () => file('two.pem', `${readPem(valid)}\n${readPem(expiring)}`),
      NONE: () => file('none.pem', 'not a certificate'),
      BROKEN: () => file('broken.pem', '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n'),
      VALID: () => valid,
      EXPIRING: () => expiring,
    };
    const certificate = (options as { certificate?: string }).certificate;
    const sml = recording();
    await expect(
      runSmlCommand(
        'prepare-change-certificate',
        { ...options, ...(certificate && named[certificate] ? { certificate: named[certificate]() } : {}) },
        () => sml,
        NOW,
      ),
    ).rejects.toThrow(error);
    expect(sml.calls).toEqual([]);
  });

  it('refuses other sml commands', async () => {
    await expect(runSmlCommand('delete-everything', {}, () => recording(), NOW)).rejects.toThrow(/unknown sml command/);
  });
});

function readPem(p: string): string {
  return readFileSync(p, 'utf8');
}
