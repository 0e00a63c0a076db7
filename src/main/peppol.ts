import type { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { PeppolApiServices, Unavailable } from '../../api/routes/peppol.routes';
import type { Config } from '../config/load-config';
import type { Logger } from '../observability/logger';
import { parseCertificates } from '../peppol/pki/certificates';
import { loadKeyMaterial, loadTrustedCertificates, type KeyMaterial } from '../peppol/pki/key-material';
import { RecipientLookup } from '../peppol/recipient-lookup';
import { createDnsResolver, type DnsResolverLike } from '../peppol/sml';
import { ManualSmlRegistrar, UnconfiguredSmlRegistrar, type SmlRegistrar } from '../peppol/sml-registrar';
import { SmpClient } from '../peppol/smp-client';
import { SmpPublisher } from '../peppol/smp-publisher';
import type { Models } from '../storage/models';
import { HookRepository } from '../storage/hooks/hook.repository';
import { PeppolDirectoryRepository } from '../storage/peppol/peppol-directory.repository';

export interface PeppolApiOverrides {
  /** The SML registrar (tests: one that writes into their local DNS zone). */
  registrar?: SmlRegistrar;
  resolver?: DnsResolverLike;
}

/** Our AP certificates from a PEM file: every end-entity certificate in it (CA certificates of the chain skipped). */
function apCertificatesOf(path: string): X509Certificate[] {
  let text: Buffer;
  try {
    text = readFileSync(path);
  } catch (e) {
    throw new Error(`Invalid configuration:\n  PEPPOL_AP_CERTIFICATE: cannot read ${path}: ${(e as Error).message}`);
  }
  const certs = parseCertificates(text).filter((c) => !c.ca);
  if (certs.length === 0) throw new Error(`Invalid configuration:\n  PEPPOL_AP_CERTIFICATE: ${path} holds no end-entity certificate`);
  return certs;
}

/**
 * Recipient lookups (SML → SMP → checked endpoint) as configured; also what a sender's worker needs to find a
 * receiving access point. Unavailable, with the reason, while a trust store is not configured.
 */
export function composeRecipientLookup(config: Readonly<Config>, overrides: Pick<PeppolApiOverrides, 'resolver'> = {}): RecipientLookup | Unavailable {
  const c = config.peppol;
  if (!c.smpTruststorePath || !c.apTruststorePath) {
    return { unavailable: `${[!c.smpTruststorePath && 'PEPPOL_SMP_TRUSTSTORE', !c.apTruststorePath && 'PEPPOL_AP_TRUSTSTORE'].filter(Boolean).join(' and ')} not set` };
  }
  const client = new SmpClient({
    smpCertificateAuthorities: loadTrustedCertificates({ kind: 'pem', path: c.smpTruststorePath }),
    apCertificateAuthorities: loadTrustedCertificates({ kind: 'pem', path: c.apTruststorePath }),
    timeoutMs: c.lookupTimeoutMs,
  });
  const resolver = overrides.resolver ?? createDnsResolver({ servers: [...c.dnsServers], timeoutMs: c.lookupTimeoutMs, tries: 2 });
  return new RecipientLookup({ zone: c.smlZone, resolver, client });
}

/**
 * The Peppol directory and lookup services of the API process. Files named in the configuration are read now, so a
 * wrong path or password stops the process at start; parts whose settings are absent answer 503 naming them.
 */
export function composePeppolApi(config: Readonly<Config>, models: Models, logger: Logger, overrides: PeppolApiOverrides = {}): PeppolApiServices {
  const c = config.peppol;
  const apCertificates = c.apCertificatePath ? apCertificatesOf(c.apCertificatePath) : [];
  const smpKey: KeyMaterial | undefined = c.smpKey ? loadKeyMaterial(c.smpKey) : undefined;

  let smp: SmpPublisher | Unavailable;
  if (apCertificates.length === 0) smp = { unavailable: 'PEPPOL_AP_CERTIFICATE (our access point certificate) is not set' };
  else if (!smpKey) smp = { unavailable: 'PEPPOL_SMP_KEYSTORE (or PEPPOL_SMP_CERTIFICATE + PEPPOL_SMP_PRIVATE_KEY), the key our SMP signs with, is not set' };
  else {
    smp = new SmpPublisher({
      publicUrl: c.smpPublicUrl,
      signer: smpKey,
      endpointUrl: c.apEndpointUrl,
      apCertificates,
      ...(c.smpTechnicalContact ? { technicalContactUrl: c.smpTechnicalContact } : {}),
    });
  }

  const lookup = composeRecipientLookup(config, overrides);

  const registrar = overrides.registrar ?? (c.smlRegistrar === 'manual' ? new ManualSmlRegistrar() : new UnconfiguredSmlRegistrar());
  if ('unavailable' in smp) logger.debug({ reason: smp.unavailable }, 'our SMP is not served');
  if ('unavailable' in lookup) logger.debug({ reason: lookup.unavailable }, 'recipient lookups are off');

  return {
    directory: new PeppolDirectoryRepository(models),
    hooks: new HookRepository(models),
    registrar,
    smp,
    lookup,
    settings: {
      apEndpointUrl: c.apEndpointUrl,
      apCertificates,
      smpPublicUrl: c.smpPublicUrl,
      smpCertificate: smpKey?.certificate ?? null,
      smlZone: c.smlZone,
    },
  };
}
