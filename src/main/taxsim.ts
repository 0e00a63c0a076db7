/**
 * `npm run taxsim` (node dist/src/main/taxsim.js): the local reference tax authority as a process of its own. Its
 * Peppol side uses the gateway's settings as found in its environment (PEPPOL_AP_* its own AP key, PEPPOL_AP_CA,
 * PEPPOL_SMP_KEYSTORE the key its SMP signs with, PEPPOL_SMP_TRUSTSTORE / PEPPOL_SML_ZONE / PEPPOL_DNS_SERVERS for
 * finding where MLS go); its own are TAXSIM_* (src/config/taxsim-config.ts). Without an AP key it serves the HTTP API
 * only. State is in memory.
 */
import { loadConfig, type Config } from '../config/load-config';
import { loadTaxsimConfig, type TaxsimConfig } from '../config/taxsim-config';
import { createLogger } from '../observability/logger';
import { loadAs4Keys } from '../peppol/as4/as4-keys';
import { peppolParticipant } from '../peppol/identifiers';
import { loadKeyMaterial } from '../peppol/pki/key-material';
import { DnsZoneSmlRegistrar } from '../peppol/sml-registrar';
import { startTaxsim, type RunningTaxsim, type TaxsimPeppolOptions } from '../taxsim';
import { createValidator } from '../validation';
import { validatorOptions } from './compose';
import { composeRecipientLookup, composeRevocationChecker } from './peppol';
import { JsonZoneFile } from './seed-demo';

export async function runTaxsim(config: Readonly<Config>, settings: Readonly<TaxsimConfig>): Promise<RunningTaxsim> {
  const logger = createLogger({ level: config.logLevel, name: 'taxsim' });
  let peppol: TaxsimPeppolOptions | undefined;
  if (config.as4.enabled) {
    const { keys, apCertificateAuthorities } = loadAs4Keys(config.as4);
    const lookup = composeRecipientLookup(config);
    if ('unavailable' in lookup)
      logger.warn({ reason: lookup.unavailable }, 'MLS are recorded but not sent: recipient lookups are off');
    const revocation = composeRevocationChecker(config);
    peppol = {
      keys,
      apCertificateAuthorities,
      ...('unavailable' in lookup ? {} : { lookup }),
      ...(revocation ? { revocation } : {}),
      ...(config.peppol.smpKey ? { smpSigner: loadKeyMaterial(config.peppol.smpKey) } : {}),
      maxDecompressedBytes: config.as4.maxDecompressedBytes,
      duplicateWindowMs: config.as4.duplicateWindowHours * 3_600_000,
    };
  } else {
    logger.warn('no Peppol AP key (PEPPOL_AP_KEYSTORE or PEPPOL_AP_CERTIFICATE): HTTP API only, /as4 answers 503');
  }
  const taxsim = await startTaxsim({
    host: settings.host,
    port: settings.port,
    ...(settings.publicUrl ? { publicUrl: settings.publicUrl } : {}),
    ...(settings.participants ? { participants: settings.participants } : {}),
    validator: createValidator(validatorOptions(config)),
    ...(peppol ? { peppol } : {}),
    limits: { maxTddBytes: settings.maxTddBytes, maxReports: settings.maxReports },
    log: (level, message, fields) => logger[level](fields ?? {}, message),
  });
  if (settings.smlZoneFile) {
    if (!taxsim.smpUrl)
      logger.warn('TAXSIM_SML_ZONE_FILE is set but taxsim serves no SMP (no AP key or no PEPPOL_SMP_KEYSTORE)');
    else {
      const registrar = new DnsZoneSmlRegistrar(config.peppol.smlZone, new JsonZoneFile(settings.smlZoneFile));
      for (const id of Object.values(taxsim.participants))
        await registrar.register(peppolParticipant(id), taxsim.smpUrl);
    }
  }
  logger.info(
    {
      url: taxsim.url,
      as4Url: taxsim.as4Url,
      smpUrl: taxsim.smpUrl,
      spid: taxsim.spid,
      participants: taxsim.participants,
    },
    'taxsim listening (state in memory)',
  );
  return taxsim;
}

if (require.main === module) {
  let config: Readonly<Config>;
  let settings: Readonly<TaxsimConfig>;
  try {
    config = loadConfig();
    settings = loadTaxsimConfig();
  } catch (e) {
    console.error(e instanceof Error ? e.message : e);
    process.exit(1);
  }
  runTaxsim(config, settings).then(
    (taxsim) => {
      const shutdown = () => {
        taxsim.stop().then(
          () => process.exit(0),
          () => process.exit(1),
        );
      };
      process.once('SIGTERM', shutdown);
      process.once('SIGINT', shutdown);
    },
    (e: unknown) => {
      console.error('taxsim failed to start:', e instanceof Error ? e.message : e);
      process.exit(1);
    },
  );
}
