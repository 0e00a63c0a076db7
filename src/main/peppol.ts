import type { PeppolApiServices, Unavailable } from '../peppol/api-services';
import type { PeppolSender } from '../sending';
import type { Config } from '../config/load-config';
import type { Logger } from '../observability/logger';
import { loadApCertificateAuthorities, loadAs4Keys } from '../peppol/as4/as4-keys';
import { loadKeyMaterial, loadTrustedCertificates, type KeyMaterial } from '../peppol/pki/key-material';
import { RecipientLookup } from '../peppol/recipient-lookup';
import { CachedRecipientLookup } from '../peppol/lookup-cache';
import { RevocationChecker } from '../peppol/pki/revocation';
import { createDnsResolver, type DnsResolverLike } from '../peppol/sml';
import { ManualSmlRegistrar, UnconfiguredSmlRegistrar, type SmlRegistrar } from '../peppol/sml-registrar';
import { SmlClient, mtlsTransport } from '../peppol/sml-client';
import { SoapSmlRegistrar } from '../peppol/sml-soap-registrar';
import { SmpClient } from '../peppol/smp-client';
import { SmpPublisher } from '../peppol/smp-publisher';
import { loadCodeLists } from '../peppol/network-rules/code-lists';
import { networkTrustAnchors } from '../peppol/network-rules/trust-stores';
import type { Models } from '../storage/models';
import { HookRepository } from '../storage/hooks/hook.repository';
import { PeppolDirectoryRepository } from '../storage/peppol/peppol-directory.repository';
import { PeppolMigrationRepository } from '../storage/peppol/peppol-migration.repository';

export interface PeppolApiOverrides {
  /** The SML registrar (tests: one that writes into their local DNS zone). */
  registrar?: SmlRegistrar;
  resolver?: DnsResolverLike;
  /** The revocation checker (tests: one that reaches their local CRL server). */
  revocation?: RevocationChecker;
  /** The clock the code lists' removal dates are compared with (tests). */
  now?: () => Date;
}

const revocationCheckers = new WeakMap<object, RevocationChecker>();

/**
 * The process's revocation checker, one per configuration so the AS4 receiver and recipient lookups share one CRL
 * cache; undefined while AS4_REVOCATION_CHECK is off.
 */
export function composeRevocationChecker(config: Readonly<Config>): RevocationChecker | undefined {
  const r = config.as4.revocation;
  if (!r.enabled) return undefined;
  let checker = revocationCheckers.get(config);
  if (!checker) {
    checker = new RevocationChecker({
      failureMode: r.softFail ? 'soft' : 'hard',
      timeoutMs: r.timeoutMs,
      maxCrlBytes: r.maxCrlBytes,
      maxCacheEntries: r.cacheEntries,
    });
    revocationCheckers.set(config, checker);
  }
  return checker;
}

function revocationOf(
  config: Readonly<Config>,
  overrides: Pick<PeppolApiOverrides, 'revocation'>,
): { revocation?: RevocationChecker } {
  const revocation = overrides.revocation ?? composeRevocationChecker(config);
  return revocation ? { revocation } : {};
}

/**
 * Recipient lookups (SML → SMP → checked endpoint) as configured; also what a sender's worker needs to find a
 * receiving access point. Unavailable, with the reason, while a trust store is not configured.
 */
export function composeRecipientLookup(
  config: Readonly<Config>,
  overrides: Pick<PeppolApiOverrides, 'resolver' | 'revocation'> = {},
): RecipientLookup | Unavailable {
  const c = config.peppol;
  const trust = config.as4.networkTrust;
  const noApCa = config.as4.apCaFiles.length === 0 && !trust;
  if ((!c.smpTruststorePath && !trust) || noApCa) {
    const missing = [!c.smpTruststorePath && !trust && 'PEPPOL_SMP_TRUSTSTORE', noApCa && 'PEPPOL_AP_CA'];
    return { unavailable: `${missing.filter(Boolean).join(' and ')} not set` };
  }
  const client = new SmpClient({
    // PEPPOL_SMP_TRUSTSTORE, else the G3 SMP trust store of the network (PEPPOL_NETWORK_TRUST).
    smpCertificateAuthorities: c.smpTruststorePath
      ? loadTrustedCertificates({ kind: 'pem', path: c.smpTruststorePath })
      : networkTrustAnchors(trust!.rulesDir, trust!.network, 'smp'),
    // The same AP CA the AS4 layer trusts: a recipient's endpoint certificate must chain to it.
    apCertificateAuthorities: loadApCertificateAuthorities(config.as4),
    timeoutMs: c.lookupTimeoutMs,
    httpsOnly: c.smpHttpsOnly,
    ...revocationOf(config, overrides),
  });
  const resolver =
    overrides.resolver ?? createDnsResolver({ servers: [...c.dnsServers], timeoutMs: c.lookupTimeoutMs, tries: 2 });
  return new RecipientLookup({ zone: c.smlZone, resolver, client });
}

/**
 * What a worker needs to deliver sales invoices over Peppol: our AP keys, the AP CA and recipient lookups. Files are
 * read now (a wrong path stops the worker at start); missing settings give `unavailable` naming them, and each
 * invoice then ends in InvoiceSentError saying so instead of waiting for a sender that cannot exist.
 */
export function composePeppolSender(
  config: Readonly<Config>,
  overrides: Pick<PeppolApiOverrides, 'resolver'> = {},
): PeppolSender | Unavailable {
  const missing = [
    !config.as4.enabled && 'PEPPOL_AP_KEYSTORE (or PEPPOL_AP_CERTIFICATE + PEPPOL_AP_PRIVATE_KEY)',
    config.as4.apCaFiles.length === 0 && !config.as4.networkTrust && 'PEPPOL_AP_CA',
    !config.peppol.smpTruststorePath && !config.as4.networkTrust && 'PEPPOL_SMP_TRUSTSTORE',
  ].filter((m): m is string => typeof m === 'string');
  if (missing.length > 0) return { unavailable: `${missing.join(', ')} not set` };
  const lookup = composeRecipientLookup(config, overrides);
  if ('unavailable' in lookup) return lookup;
  const { keys, apCertificateAuthorities } = loadAs4Keys(config.as4);
  // A run of invoices to one recipient asks its SMP once per PEPPOL_SMP_CACHE_TTL_MS, not once per document.
  const cached = new CachedRecipientLookup(lookup, { ttlMs: config.peppol.smpCacheTtlMs });
  const revocation = composeRevocationChecker(config);
  return {
    lookup: cached,
    keys,
    apCertificateAuthorities,
    codeLists: () => loadCodeLists(config.validation.rulesDir),
    ...(revocation ? { revocation } : {}),
  };
}

/**
 * The SML registrar as configured. `sml` (experimental) talks to the SML's management interface with our SMP key as
 * the TLS client certificate, as the SML authenticates SMPs; it is refused at start without that key.
 */
export function composeSmlRegistrar(
  config: Readonly<Config>,
  smpKey: KeyMaterial | undefined,
  logger: Logger,
): SmlRegistrar {
  const c = config.peppol;
  if (c.smlRegistrar === 'manual') return new ManualSmlRegistrar();
  if (c.smlRegistrar !== 'sml') return new UnconfiguredSmlRegistrar();
  if (!smpKey)
    throw new Error(
      'PEPPOL_SML_REGISTRAR=sml needs our SMP key (PEPPOL_SMP_KEYSTORE, or PEPPOL_SMP_CERTIFICATE + ' +
        'PEPPOL_SMP_PRIVATE_KEY): the SML authenticates our SMP by that certificate',
    );
  const client = composeSmlClient(config, smpKey);
  logger.warn(
    { smlUrl: c.sml.url, smpId: c.sml.smpId },
    'SML registration through the SML management interface is EXPERIMENTAL: built to the published WSDL and tried ' +
      'against a local stand-in only, not yet against the SML test environment',
  );
  return new SoapSmlRegistrar({
    client,
    smpUrl: c.smpPublicUrl,
    ...(c.sml.smpAddress ? { smpAddress: c.sml.smpAddress } : {}),
  });
}

/**
 * The client of the SML's management interface (experimental, see composeSmlRegistrar): PEPPOL_SML_URL and
 * PEPPOL_SML_SMP_ID, our SMP key as the TLS client certificate, PEPPOL_SML_CA to trust the SML's server.
 */
export function composeSmlClient(config: Readonly<Config>, smpKey: KeyMaterial): SmlClient {
  const c = config.peppol;
  const { url, smpId, caPath } = c.sml;
  if (!url || !smpId) throw new Error('PEPPOL_SML_REGISTRAR=sml needs PEPPOL_SML_URL and PEPPOL_SML_SMP_ID');
  const transport = mtlsTransport({
    clientKey: smpKey,
    ...(caPath ? { ca: loadTrustedCertificates({ kind: 'pem', path: caPath }) } : {}),
    timeoutMs: Math.max(c.lookupTimeoutMs, 10_000),
  });
  return new SmlClient({ url, smpId, transport });
}

/**
 * The Peppol directory and lookup services of the API process. Files named in the configuration are read now, so a
 * wrong path or password stops the process at start; parts whose settings are absent answer 503 naming them.
 */
export function composePeppolApi(
  config: Readonly<Config>,
  models: Models,
  logger: Logger,
  overrides: PeppolApiOverrides = {},
): PeppolApiServices {
  const c = config.peppol;
  // Our SMP publishes the certificate of the AS4 key source (PKCS#12 or PEM), so the two can never disagree.
  const apCertificates = config.as4.enabled ? loadAs4Keys(config.as4).keys.certificates() : [];
  const smpKey: KeyMaterial | undefined = c.smpKey ? loadKeyMaterial(c.smpKey) : undefined;

  let smp: SmpPublisher | Unavailable;
  if (apCertificates.length === 0)
    smp = {
      unavailable:
        'no access point key is configured (PEPPOL_AP_KEYSTORE, or PEPPOL_AP_CERTIFICATE + PEPPOL_AP_PRIVATE_KEY)',
    };
  else if (!smpKey)
    smp = {
      unavailable:
        'PEPPOL_SMP_KEYSTORE (or PEPPOL_SMP_CERTIFICATE + PEPPOL_SMP_PRIVATE_KEY), the key our SMP signs with, is ' +
        'not set',
    };
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

  const registrar = overrides.registrar ?? composeSmlRegistrar(config, smpKey, logger);
  if ('unavailable' in smp) logger.debug({ reason: smp.unavailable }, 'our SMP is not served');
  if ('unavailable' in lookup) logger.debug({ reason: lookup.unavailable }, 'recipient lookups are off');

  return {
    directory: new PeppolDirectoryRepository(models),
    migrations: new PeppolMigrationRepository(models),
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
    networkRules: {
      codeLists: () => loadCodeLists(config.validation.rulesDir),
      now: overrides.now ?? (() => new Date()),
    },
  };
}
