import { z } from 'zod';
import type { TddConfig } from './types';

const Role = z.enum(['C2', 'C3']);
const Authority = z.object({
  id: z.string().min(1),
  name: z.string().min(1).optional(),
  receiver: z.string().min(1),
  roles: z.array(Role).min(1),
});

const Config = z.object({
  version: z.enum(['1.0.0', '1.1.0']),
  serviceProviderId: z.string().regex(/^[A-Za-z]{3}\d{6}$|^\d{6}$/, 'a Peppol SPID (e.g. PDK000270 or 000270)'),
  documentTypeId: z.string().min(1),
  processId: z.string().min(1),
  authorities: z.record(z.string().regex(/^[A-Z]{2}$/, 'an ISO 3166-1 alpha-2 country code'), Authority),
});

/**
 * The Peppol document type id of the ViDA pilot TDD. The pilot does not publish it in the Peppol code lists; this is
 * the value built from the root element and the customization id the way every Peppol document type id is, and the
 * configuration can replace it.
 */
export const VIDA_TDD_DOCUMENT_TYPE_ID =
  'busdox-docid-qns::urn:peppol:schema:vida-taxdata:1.0::TaxData##urn:peppol:taxdata:vida-1::1.0';
export const VIDA_TDD_PROCESS_ID = 'cenbii-procid-ubl::urn:peppol:taxreporting';

/** Reads and checks a TDD configuration (e.g. from a JSON file or the environment). */
export function parseTddConfig(json: unknown): TddConfig {
  const r = Config.safeParse(json);
  if (!r.success) {
    const issues = r.error.issues.slice(0, 5).map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`);
    throw new Error(`tax data document configuration is invalid: ${issues.join('; ')}`);
  }
  return r.data;
}
