/**
 * The settings of taxsim, the local reference tax authority (src/taxsim, src/main/taxsim.ts), beside the gateway's:
 * its Peppol keys, SML and SMP trust are the gateway's PEPPOL_* / AS4_* settings (loadConfig), read from the
 * environment taxsim runs in, so it is started with its own access point key. Only these TAXSIM_* are its own.
 */
import { z } from 'zod';

export interface TaxsimConfig {
  host: string;
  port: number;
  /** Where others reach it (its AS4 endpoint and SMP are published under it); default `http://host:port`. */
  publicUrl: string | undefined;
  /** Country → participant id (`0242:…`); undefined: the defaults of src/taxsim. */
  participants: Record<string, string> | undefined;
  /** A JSON SML zone file (`npm start`'s local SML) to register its participants in, pointing at its own SMP. */
  smlZoneFile: string | undefined;
  maxTddBytes: number;
  maxReports: number;
}

const int = (fallback: number, min: number, max: number) => z.coerce.number().int().min(min).max(max).default(fallback);

const Participants = z.record(
  z.string().regex(/^[A-Z]{2}$/, 'an ISO 3166-1 alpha-2 country code'),
  z.string().regex(/^(iso6523-actorid-upis::)?[0-9]{4}:[A-Za-z0-9\-._~]{1,100}$/, {
    message: 'a Peppol participant id, e.g. 0242:000950-taxsim.tax_be (the library writes TDT-014 under scheme 0242)',
  }),
);

const schema = z.object({
  TAXSIM_HOST: z.string().min(1).default('127.0.0.1'),
  TAXSIM_PORT: int(8090, 0, 65535),
  TAXSIM_PUBLIC_URL: z.string().url().optional(),
  TAXSIM_PARTICIPANTS: z.string().optional(),
  TAXSIM_SML_ZONE_FILE: z.string().min(1).optional(),
  TAXSIM_MAX_TDD_BYTES: int(10 * 1024 * 1024, 1024, 100 * 1024 * 1024),
  TAXSIM_MAX_REPORTS: int(5000, 1, 1_000_000),
});

/** Reads the TAXSIM_* settings (with src/config/load-config.ts, the only readers of process.env). */
export function loadTaxsimConfig(env: NodeJS.ProcessEnv = process.env): Readonly<TaxsimConfig> {
  const parsed = schema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
    throw new Error(`Invalid configuration:\n${lines.join('\n')}`);
  }
  const e = parsed.data;
  let participants: Record<string, string> | undefined;
  if (e.TAXSIM_PARTICIPANTS !== undefined && e.TAXSIM_PARTICIPANTS.trim() !== '') {
    let json: unknown;
    try {
      json = JSON.parse(e.TAXSIM_PARTICIPANTS);
    } catch {
      throw new Error(
        'Invalid configuration:\n  TAXSIM_PARTICIPANTS: not JSON (e.g. {"BE":"0242:000950-taxsim.tax_be"})',
      );
    }
    const p = Participants.safeParse(json);
    if (!p.success)
      throw new Error(
        `Invalid configuration:\n  TAXSIM_PARTICIPANTS: ${p.error.issues
          .slice(0, 3)
          .map(
            (i) =>
              `${i.path.join('.') || '(root)'}: ${
                i.code === 'invalid_key' ? 'not an ISO 3166-1 alpha-2 country code (upper case)' : i.message
              }`,
          )
          .join('; ')}`,
      );
    if (Object.keys(p.data).length === 0)
      throw new Error('Invalid configuration:\n  TAXSIM_PARTICIPANTS: at least one country');
    participants = Object.freeze(p.data);
  }
  return Object.freeze({
    host: e.TAXSIM_HOST,
    port: e.TAXSIM_PORT,
    publicUrl: e.TAXSIM_PUBLIC_URL?.replace(/\/+$/, ''),
    participants,
    smlZoneFile: e.TAXSIM_SML_ZONE_FILE,
    maxTddBytes: e.TAXSIM_MAX_TDD_BYTES,
    maxReports: e.TAXSIM_MAX_REPORTS,
  });
}
