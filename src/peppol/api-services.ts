import type { X509Certificate } from 'node:crypto';
import type { HookRecord } from '../storage/hooks/hook.repository';
import type { PeppolDirectoryRepository } from '../storage/peppol/peppol-directory.repository';
import type { PeppolMigrationRepository } from '../storage/peppol/peppol-migration.repository';
import type { RecipientLookup } from './recipient-lookup';
import type { SmlRegistrar } from './sml-registrar';
import type { SmpPublisher } from './smp-publisher';
import type { CodeLists } from './network-rules/code-lists';

/** A part that is not configured in this process: the reason, for a 503 that says what to set. */
export interface Unavailable {
  unavailable: string;
}

/** The Peppol services the API's directory, SMP and lookup routes use (wired by src/main/peppol.ts). */
export interface PeppolApiServices {
  directory: PeppolDirectoryRepository;
  /** Migration keys prepared and used (participant migration between providers). */
  migrations: PeppolMigrationRepository;
  /** Hooks of a tenant and party, to find the e-mail fallback channel. */
  hooks: { listForRouting(tenantId: string, partyKey: string | null): Promise<HookRecord[]> };
  registrar: SmlRegistrar;
  smp: SmpPublisher | Unavailable;
  lookup: RecipientLookup | Unavailable;
  settings: {
    apEndpointUrl: string;
    apCertificates: readonly X509Certificate[];
    smpPublicUrl: string;
    smpCertificate: X509Certificate | null;
    smlZone: string;
  };
  /** The Peppol code lists registrations and our SMP's answers are checked against, and the clock for their dates. */
  networkRules: { codeLists(): CodeLists; now(): Date };
}

export function isUnavailable(x: object): x is Unavailable {
  return 'unavailable' in x;
}
