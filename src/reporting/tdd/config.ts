import { z } from 'zod';
import { DEFAULT_TDD_PROFILE, TDD_PROFILE_IDS, TDD_PROFILES, tddProfile, type TddProfile } from './profiles';
import type { TddAuthority, TddConfig, TddProfileId, TddVersion } from './types';

const Role = z.enum(['C2', 'C3']);
const Profile = z.enum(TDD_PROFILE_IDS as [TddProfileId, ...TddProfileId[]], {
  message: `an unknown Tax Data Document profile (known: ${TDD_PROFILE_IDS.join(', ')})`,
});
const Authority = z.object({
  id: z.string().min(1),
  name: z.string().min(1).optional(),
  receiver: z.string().min(1),
  roles: z.array(Role).min(1),
  profile: Profile.default(DEFAULT_TDD_PROFILE),
  documentTypeId: z.string().min(1).optional(),
  processId: z.string().min(1).optional(),
});

const Config = z
  .object({
    version: z.enum(['1.0.0', '1.1.0']),
    serviceProviderId: z.string().regex(/^[A-Za-z]{3}\d{6}$|^\d{6}$/, 'a Peppol SPID (e.g. PDK000270 or 000270)'),
    documentTypeId: z.string().min(1).optional(),
    processId: z.string().min(1).optional(),
    authorities: z.record(z.string().regex(/^[A-Z]{2}$/, 'an ISO 3166-1 alpha-2 country code'), Authority),
  })
  .superRefine((c, ctx) => {
    for (const [country, a] of Object.entries(c.authorities)) {
      const versions = Object.keys(TDD_PROFILES[a.profile].versions);
      if (!versions.includes(c.version))
        ctx.addIssue({
          code: 'custom',
          path: ['authorities', country, 'profile'],
          message: `profile ${a.profile} has no version ${c.version} (it has ${versions.join(', ')})`,
        });
    }
  });

/**
 * The Peppol document type id of the ViDA pilot TDD. The pilot does not publish it in the Peppol code lists; this is
 * the value built from the root element and the customization id the way every Peppol document type id is, and the
 * configuration can replace it. The same as `TDD_PROFILES['vida-1'].documentTypeId`.
 */
export const VIDA_TDD_DOCUMENT_TYPE_ID = TDD_PROFILES['vida-1'].documentTypeId;
export const VIDA_TDD_PROCESS_ID = TDD_PROFILES['vida-1'].processId;

/**
 * Reads and checks a TDD configuration (e.g. from a JSON file or the environment). An authority without a profile
 * gets `vida-1`; every authority's profile must have the configured version. Top-level `documentTypeId` /
 * `processId`, when absent, are the ViDA pilot's.
 */
export function parseTddConfig(json: unknown): TddConfig {
  const r = Config.safeParse(json);
  if (!r.success) {
    const issues = r.error.issues.slice(0, 5).map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`);
    throw new Error(`tax data document configuration is invalid: ${issues.join('; ')}`);
  }
  const c = r.data;
  const authorities: Record<string, TddAuthority> = {};
  for (const [country, a] of Object.entries(c.authorities)) {
    const { name, documentTypeId, processId, ...rest } = a;
    authorities[country] = {
      ...rest,
      ...(name !== undefined ? { name } : {}),
      ...(documentTypeId !== undefined ? { documentTypeId } : {}),
      ...(processId !== undefined ? { processId } : {}),
    };
  }
  return {
    version: c.version,
    serviceProviderId: c.serviceProviderId,
    documentTypeId: c.documentTypeId ?? VIDA_TDD_DOCUMENT_TYPE_ID,
    processId: c.processId ?? VIDA_TDD_PROCESS_ID,
    authorities,
  };
}

/** The profile an authority receives (`vida-1` when the authority names none). */
export function tddProfileOf(authority: Pick<TddAuthority, 'profile'>): TddProfile {
  return tddProfile(authority.profile ?? DEFAULT_TDD_PROFILE);
}

/** How a report to an authority travels: its profile, and the Peppol document type id and process id to send under. */
export interface TddTransport {
  profile: TddProfile;
  version: TddVersion;
  documentTypeId: string;
  processId: string;
}

/**
 * The document type id and process id of the reports to an authority (given, or by its country in the
 * configuration): the authority's own when configured; for `vida-1` the configuration's top-level pair (which
 * defaults to the profile's); otherwise the profile's.
 */
export function tddTransport(config: TddConfig, authority: TddAuthority | string): TddTransport {
  const a = typeof authority === 'string' ? config.authorities[authority] : authority;
  // Only a country can be missing.
  if (!a) throw new Error(`no tax authority is configured for ${authority as string}`);
  const profile = tddProfileOf(a);
  const vida = profile.id === 'vida-1';
  return {
    profile,
    version: config.version,
    documentTypeId: a.documentTypeId ?? (vida ? config.documentTypeId : profile.documentTypeId),
    processId: a.processId ?? (vida ? config.processId : profile.processId),
  };
}
