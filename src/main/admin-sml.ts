import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { GatewayError } from '../core/gateway-error';
import type { SmlClient } from '../peppol/sml-client';

/** What `sml prepare-change-certificate` needs: the SML client (ours, authenticated by the current SMP key). */
export type SmlCommandClient = Pick<SmlClient, 'smpId' | 'prepareChangeCertificate'>;

const DATE = /^\d{4}-\d{2}-\d{2}$/;

/** A YYYY-MM-DD that names a day of the calendar (Date would take 2030-02-30 as 2 March). */
function isCalendarDate(date: string): boolean {
  const t = Date.parse(`${date}T00:00:00Z`);
  return !Number.isNaN(t) && new Date(t).toISOString().slice(0, 10) === date;
}

/**
 * `npm run admin -- sml prepare-change-certificate --certificate FILE [--date YYYY-MM-DD]`: a key rollover of our SMP.
 * The SML is told, under the current certificate, which certificate takes over on the date (the SML's default when
 * omitted); from then on only the new one authenticates our SMP, so the SMP key setting must change on that day.
 * The certificate must be one PEM certificate, valid on the date; the date must not be in the past.
 */
export async function runSmlCommand(
  verb: string,
  options: { certificate?: string | undefined; date?: string | undefined },
  client: () => SmlCommandClient,
  now: Date = new Date(),
): Promise<unknown> {
  if (verb !== 'prepare-change-certificate') throw new GatewayError('BAD_REQUEST', `unknown sml command "${verb}"`);
  if (!options.certificate) throw new GatewayError('BAD_REQUEST', '--certificate is required (a PEM file)');
  let pem: string;
  try {
    pem = readFileSync(options.certificate, 'utf8');
  } catch (e) {
    throw new GatewayError('BAD_REQUEST', `--certificate ${options.certificate}: ${(e as Error).message}`);
  }
  const blocks = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g) ?? [];
  if (blocks.length !== 1)
    throw new GatewayError(
      'BAD_REQUEST',
      `--certificate ${options.certificate} must hold exactly one PEM certificate (found ${blocks.length})`,
    );
  let certificate: X509Certificate;
  try {
    certificate = new X509Certificate(blocks[0]);
  } catch (e) {
    throw new GatewayError(
      'BAD_REQUEST',
      `--certificate ${options.certificate} is not a certificate: ${(e as Error).message}`,
    );
  }
  const today = now.toISOString().slice(0, 10);
  const date = options.date;
  if (date !== undefined) {
    if (!DATE.test(date) || !isCalendarDate(date))
      throw new GatewayError('BAD_REQUEST', `--date "${date}" is not a date (YYYY-MM-DD)`);
    if (date < today) throw new GatewayError('BAD_REQUEST', `--date ${date} is in the past`);
  }
  const from = date ? new Date(`${date}T00:00:00Z`) : now;
  if (new Date(certificate.validTo) <= from || new Date(certificate.validFrom) > new Date(from.getTime() + 86_400_000))
    throw new GatewayError(
      'BAD_REQUEST',
      `the new certificate is valid ${certificate.validFrom} to ${certificate.validTo}, not on ${date ?? today}`,
    );
  const sml = client();
  await sml.prepareChangeCertificate(certificate, date);
  return {
    smpId: sml.smpId,
    newCertificate: {
      subject: certificate.subject,
      serialNumber: certificate.serialNumber,
      validTo: new Date(certificate.validTo).toISOString(),
    },
    migrationDate: date ?? "the SML's default",
  };
}
