import os from 'node:os';
import path from 'node:path';
import { configEnvSchema, type ConfigEnv } from './config.schema';
import {
  EMAIL_SEND_SCHEDULE,
  PEPPOL_SEND_SCHEDULE,
  validateRetrySchedule,
  WEBHOOK_RETRY_SCHEDULE,
  type RetrySchedule,
} from '../core/retry-schedule';

export interface Config {
  env: 'development' | 'test' | 'production';
  logLevel: string;
  http: { host: string; port: number; publicBaseUrl: string; trustProxy: string; maxUploadBytes: number };
  auth: {
    baseUrl: string;
    issuer: string;
    audience: string;
    tokenTtlSeconds: number;
    signingKeyRotationDays: number;
    subscriptionKeys: readonly string[];
    /** Token requests per minute for one client id from one source address. */
    rateLimitTokenPerMinute: number;
    /** Failed token requests per minute for one client id from one source address. */
    rateLimitTokenFailuresPerMinute: number;
    /** Failed token requests per minute from one source address, whatever client ids they name. */
    rateLimitTokenSourceFailuresPerMinute: number;
    rateLimitApiPerMinute: number;
  };
  mongo: { uri: string; dbName: string | undefined };
  /** Storage reconciliation (src/maintenance): 0 = off. */
  reconcile: { intervalMs: number; minAgeMs: number; windowMs: number; limit: number };
  /** Retention (src/maintenance/retention.ts): the schedule, the batch, and each kind's period. */
  retention: {
    enabled: boolean;
    intervalMs: number;
    batchSize: number;
    periodsMs: RetentionPeriods;
  };
  temporal: {
    address: string;
    namespace: string;
    taskQueue: string;
    workflowBundlePath: string | undefined;
    workerMetricsAddress: string;
    /** WORKER_MAX_CACHED_WORKFLOWS; undefined = the SDK's default. */
    maxCachedWorkflows: number | undefined;
  };
  webhooks: {
    allowHttp: boolean;
    /** CIDR strings; parsed (and checked) by src/webhooks/ssrf-guard parseAllowList. */
    allowedRanges: readonly string[];
    timeoutMs: number;
    maxConcurrencyPerHook: number;
    /** How often the worker releases held deliveries that fell due. */
    heldSweepMs: number;
    retrySchedule: RetrySchedule;
    searchAttributes: boolean;
    /** Outbound traffic of deliveries: source address and/or proxy (docs/operations.md, what receivers allow-list). */
    egress: { localAddress: string | undefined; proxyUrl: string | undefined };
    /** Where hooks' mutual-TLS client certificates are (`<name>.crt`, `<name>.key`). */
    clientCertDir: string | undefined;
  };
  /** Peppol AS4 (keys loaded and checked by the composition root, src/main/compose.ts). */
  as4: {
    keystores: ReadonlyArray<{ path: string; alias: string | undefined }>;
    keystorePassword: string | undefined;
    certificatePath: string | undefined;
    privateKeyPath: string | undefined;
    privateKeyPassword: string | undefined;
    apCaFiles: readonly string[];
    apCaPassword: string | undefined;
    /**
     * The network whose G3 trust stores (in the rules cache) stand in for PEPPOL_AP_CA and PEPPOL_SMP_TRUSTSTORE
     * where those are unset (PEPPOL_NETWORK_TRUST); undefined: none.
     */
    networkTrust: { network: 'test' | 'production'; rulesDir: string } | undefined;
    maxMessageBytes: number;
    maxDecompressedBytes: number;
    duplicateWindowHours: number;
    /** CRL revocation checks of AP and SMP certificates (src/peppol/pki/revocation.ts). */
    revocation: { enabled: boolean; softFail: boolean; timeoutMs: number; maxCrlBytes: number; cacheEntries: number };
    /** True when a key is configured (PKCS#12 or PEM). */
    enabled: boolean;
  };
  /** Tax reporting: the configuration file (read by the worker), undefined = off; the acknowledgement wait. */
  taxReporting: { configFile: string | undefined; acknowledgementTimeoutMs: number };
  /** The e-mail channel; `smtp` undefined = not configured. Files (CA, DKIM key) are read by the composition root. */
  email: {
    smtp:
      | {
          host: string;
          port: number;
          secure: boolean;
          requireTls: boolean;
          auth: { user: string; pass: string } | undefined;
          caFile: string | undefined;
          timeoutMs: number;
          from: string;
          dkim: { domainName: string; keySelector: string; keyFile: string } | undefined;
        }
      | undefined;
    retrySchedule: RetrySchedule;
  };
  validation: {
    /** Fetched rule packs (scripts/rules/lib/paths.js applies the same rule). */
    rulesDir: string;
    /** `id@version` of previous pack versions still accepted. */
    acceptedPrevious: readonly string[];
    /** Validation threads in the worker process; 0 = on the activity thread. */
    threads: number;
    /** Business rules engine (VALIDATION_RULES_ENGINE). */
    rulesEngine: 'compiled' | 'saxon-js';
    /** XSD engine (VALIDATION_XSD_ENGINE). */
    xsdEngine: 'libxml2-wasm' | 'xmllint';
  };
  peppol: {
    /** Our AS4 receiver URL as published by our SMP. */
    apEndpointUrl: string;
    smpKey:
      | { kind: 'pkcs12'; path: string; password: string; alias?: string }
      | { kind: 'pem'; certificatePath: string; privateKeyPath: string }
      | undefined;
    smpBasePath: string;
    smpPublicUrl: string;
    smpTechnicalContact: string | undefined;
    /** The DNS zone itself (the names production and test resolved). */
    smlZone: string;
    smlRegistrar: 'off' | 'manual' | 'sml';
    /** PEPPOL_SML_REGISTRAR=sml (experimental): the management URL, our SMP id and address, the TLS CA file. */
    sml: {
      url: string | undefined;
      smpId: string | undefined;
      smpAddress: string | undefined;
      caPath: string | undefined;
    };
    dnsServers: readonly string[];
    smpTruststorePath: string | undefined;
    lookupTimeoutMs: number;
    /** How long the worker keeps a found endpoint (PEPPOL_SMP_CACHE_TTL_MS); 0 keeps none. */
    smpCacheTtlMs: number;
    /** Recipient lookups refuse SMP URLs that are not https (PEPPOL_SMP_HTTPS_ONLY). */
    smpHttpsOnly: boolean;
    /** Waits between failed delivery attempts of a sales invoice; travels in each sendInvoice run's input. */
    sendRetrySchedule: RetrySchedule;
    /** The monthly network reports (TSR, EUSR): docs/decisions.md "Peppol network reporting". */
    reporting: { enabled: boolean; receiver: string; country: string | undefined };
  };
}

/** How long each kind of record is kept (ms); the kinds are those of src/maintenance/retention.ts. */
export interface RetentionPeriods {
  failedDocument: number;
  document: number;
  as4Message: number;
  event: number;
  deliveryLog: number;
  inboxEntry: number;
}

const DAY_MS = 86_400_000;

function retentionOf(e: ConfigEnv): Config['retention'] {
  if (e.NODE_ENV === 'production' && e.RETENTION_FAILED_INVOICE_DAYS < 90)
    throw new Error(
      'Invalid configuration:\n  RETENTION_FAILED_INVOICE_DAYS: the contract keeps failed invoices 90 days',
    );
  if (e.RETENTION_AS4_MESSAGE_DAYS * 24 < e.AS4_DUPLICATE_WINDOW_HOURS)
    throw new Error(
      'Invalid configuration:\n  RETENTION_AS4_MESSAGE_DAYS: shorter than AS4_DUPLICATE_WINDOW_HOURS (a resent ' +
        'message would be stored twice)',
    );
  const ms = (d: number) => Math.round(d * DAY_MS);
  return {
    enabled: e.RETENTION_ENABLED,
    intervalMs: e.RETENTION_INTERVAL_MINUTES * 60_000,
    batchSize: e.RETENTION_BATCH,
    periodsMs: {
      failedDocument: ms(e.RETENTION_FAILED_INVOICE_DAYS),
      document: ms(e.RETENTION_DOCUMENT_DAYS),
      as4Message: ms(e.RETENTION_AS4_MESSAGE_DAYS),
      event: ms(e.RETENTION_EVENT_DAYS),
      deliveryLog: ms(e.RETENTION_DELIVERY_LOG_DAYS),
      inboxEntry: ms(e.RETENTION_INBOX_DAYS),
    },
  };
}

/** PEPPOL_NETWORK_TRUST, or in production mode the network of the SML zone (docs/decisions.md "Network rules"). */
function networkTrustOf(e: ConfigEnv, rulesDir: string): Config['as4']['networkTrust'] {
  const chosen =
    e.PEPPOL_NETWORK_TRUST ??
    (e.NODE_ENV === 'production' && (e.PEPPOL_SML_ZONE === 'production' || e.PEPPOL_SML_ZONE === 'test')
      ? e.PEPPOL_SML_ZONE
      : 'none');
  return chosen === 'none' ? undefined : { network: chosen, rulesDir };
}

const SML_ZONE_NAMES: Record<string, string> = {
  production: 'participant.sml.prod.tech.peppol.org',
  test: 'participant.sml.test.tech.peppol.org',
};

const SML_MANAGEMENT_URLS: Record<string, string> = {
  'participant.sml.prod.tech.peppol.org': 'https://api.sml.prod.tech.peppol.org/edelivery-sml',
  'participant.sml.test.tech.peppol.org': 'https://api.sml.test.tech.peppol.org/edelivery-sml',
};

function smlOf(e: {
  PEPPOL_SML_REGISTRAR: string;
  PEPPOL_SML_ZONE: string;
  PEPPOL_SML_URL?: string | undefined;
  PEPPOL_SML_SMP_ID?: string | undefined;
  PEPPOL_SML_SMP_ADDRESS?: string | undefined;
  PEPPOL_SML_CA?: string | undefined;
}): Config['peppol']['sml'] {
  const zone = SML_ZONE_NAMES[e.PEPPOL_SML_ZONE] ?? e.PEPPOL_SML_ZONE.replace(/\.$/, '').toLowerCase();
  const url = e.PEPPOL_SML_URL ?? SML_MANAGEMENT_URLS[zone];
  if (e.PEPPOL_SML_REGISTRAR === 'sml') {
    const missing = [
      !url && 'PEPPOL_SML_URL (no default for the zone ' + zone + ')',
      !e.PEPPOL_SML_SMP_ID && 'PEPPOL_SML_SMP_ID',
    ].filter(Boolean);
    if (missing.length > 0)
      throw new Error(`Invalid configuration:\n  PEPPOL_SML_REGISTRAR=sml needs ${missing.join(' and ')}`);
  }
  return {
    url,
    smpId: e.PEPPOL_SML_SMP_ID,
    smpAddress: e.PEPPOL_SML_SMP_ADDRESS,
    caPath: e.PEPPOL_SML_CA ? path.resolve(e.PEPPOL_SML_CA) : undefined,
  };
}

function smpKeyOf(e: {
  PEPPOL_SMP_KEYSTORE?: string | undefined;
  PEPPOL_SMP_KEYSTORE_PASSWORD?: string | undefined;
  PEPPOL_SMP_KEYSTORE_ALIAS?: string | undefined;
  PEPPOL_SMP_CERTIFICATE?: string | undefined;
  PEPPOL_SMP_PRIVATE_KEY?: string | undefined;
}): Config['peppol']['smpKey'] {
  if (e.PEPPOL_SMP_KEYSTORE && (e.PEPPOL_SMP_CERTIFICATE || e.PEPPOL_SMP_PRIVATE_KEY)) {
    throw new Error(
      'Invalid configuration:\n  PEPPOL_SMP_KEYSTORE: give either a key store or PEPPOL_SMP_CERTIFICATE + ' +
        'PEPPOL_SMP_PRIVATE_KEY, not both',
    );
  }
  if (e.PEPPOL_SMP_KEYSTORE) {
    if (e.PEPPOL_SMP_KEYSTORE_PASSWORD === undefined)
      throw new Error('Invalid configuration:\n  PEPPOL_SMP_KEYSTORE_PASSWORD: required with PEPPOL_SMP_KEYSTORE');
    return {
      kind: 'pkcs12',
      path: e.PEPPOL_SMP_KEYSTORE,
      password: e.PEPPOL_SMP_KEYSTORE_PASSWORD,
      ...(e.PEPPOL_SMP_KEYSTORE_ALIAS ? { alias: e.PEPPOL_SMP_KEYSTORE_ALIAS } : {}),
    };
  }
  if (e.PEPPOL_SMP_CERTIFICATE || e.PEPPOL_SMP_PRIVATE_KEY) {
    if (!e.PEPPOL_SMP_CERTIFICATE || !e.PEPPOL_SMP_PRIVATE_KEY)
      throw new Error(
        'Invalid configuration:\n  PEPPOL_SMP_CERTIFICATE: PEPPOL_SMP_CERTIFICATE and PEPPOL_SMP_PRIVATE_KEY go ' +
          'together',
      );
    return { kind: 'pem', certificatePath: e.PEPPOL_SMP_CERTIFICATE, privateKeyPath: e.PEPPOL_SMP_PRIVATE_KEY };
  }
  return undefined;
}

function smtpOf(e: ConfigEnv): Config['email']['smtp'] {
  if (!e.SMTP_HOST) return undefined;
  const problems: string[] = [];
  if (!e.SMTP_FROM) problems.push('SMTP_FROM: required when SMTP_HOST is set');
  if (e.SMTP_USER !== undefined && e.SMTP_PASSWORD === undefined)
    problems.push('SMTP_PASSWORD: required with SMTP_USER');
  const dkimParts = [e.SMTP_DKIM_DOMAIN, e.SMTP_DKIM_SELECTOR, e.SMTP_DKIM_KEY_FILE];
  if (dkimParts.some((v) => v !== undefined) && dkimParts.some((v) => v === undefined)) {
    problems.push('SMTP_DKIM_DOMAIN, SMTP_DKIM_SELECTOR, SMTP_DKIM_KEY_FILE: set all three or none');
  }
  if (problems.length > 0) throw new Error(`Invalid configuration:\n  ${problems.join('\n  ')}`);
  return {
    host: e.SMTP_HOST,
    port: e.SMTP_PORT,
    secure: e.SMTP_SECURE,
    requireTls: e.SMTP_REQUIRE_TLS,
    auth: e.SMTP_USER !== undefined ? { user: e.SMTP_USER, pass: e.SMTP_PASSWORD ?? '' } : undefined,
    caFile: e.SMTP_CA_FILE,
    timeoutMs: e.SMTP_TIMEOUT_MS,
    from: e.SMTP_FROM ?? '',
    dkim:
      e.SMTP_DKIM_DOMAIN && e.SMTP_DKIM_SELECTOR && e.SMTP_DKIM_KEY_FILE
        ? { domainName: e.SMTP_DKIM_DOMAIN, keySelector: e.SMTP_DKIM_SELECTOR, keyFile: e.SMTP_DKIM_KEY_FILE }
        : undefined,
  };
}

/**
 * A retry schedule setting (WEBHOOK_RETRY_SCHEDULE, PEPPOL_SEND_RETRY_SCHEDULE): JSON checked by the schedule's own
 * validator; the default when unset.
 */
function retryScheduleOf(
  text: string | undefined,
  name = 'WEBHOOK_RETRY_SCHEDULE',
  fallback: RetrySchedule = WEBHOOK_RETRY_SCHEDULE,
): RetrySchedule {
  if (text === undefined || text.trim() === '') return fallback;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new Error(`Invalid configuration:\n  ${name}: not valid JSON`);
  }
  const problem = validateRetrySchedule(value);
  if (problem) throw new Error(`Invalid configuration:\n  ${name}: ${problem}`);
  return value as RetrySchedule;
}

function deepFreeze<T>(o: T): Readonly<T> {
  if (o && typeof o === 'object') {
    for (const v of Object.values(o)) deepFreeze(v);
    Object.freeze(o);
  }
  return o;
}

/** The only reader of process.env. Throws a readable message naming every invalid variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Readonly<Config> {
  const parsed = configEnvSchema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
    throw new Error(`Invalid configuration:\n${lines.join('\n')}`);
  }
  const e = parsed.data;
  const pem = !!(e.PEPPOL_AP_CERTIFICATE || e.PEPPOL_AP_PRIVATE_KEY);
  if (pem && !(e.PEPPOL_AP_CERTIFICATE && e.PEPPOL_AP_PRIVATE_KEY)) {
    throw new Error('Invalid configuration:\n  PEPPOL_AP_CERTIFICATE / PEPPOL_AP_PRIVATE_KEY: set both or neither');
  }
  const as4Enabled = pem || e.PEPPOL_AP_KEYSTORE.length > 0;
  const rulesDir = path.resolve(
    e.RULES_CACHE_DIR ||
      path.join(e.INVOICE_GATEWAY_CACHE || path.join(os.homedir(), '.cache', 'invoice-gateway'), 'rules'),
  );
  const networkTrust = networkTrustOf(e, rulesDir);
  if (as4Enabled && e.PEPPOL_AP_CA.length === 0 && !networkTrust)
    throw new Error(
      'Invalid configuration:\n  PEPPOL_AP_CA: required when an AP key is configured (or PEPPOL_NETWORK_TRUST)',
    );
  const publicBaseUrl = (e.PUBLIC_BASE_URL ?? `http://${e.HOST}:${e.PORT}`).replace(/\/$/, '');
  const authBaseUrl = (e.AUTH_BASE_URL ?? publicBaseUrl).replace(/\/$/, '');
  return deepFreeze({
    env: e.NODE_ENV,
    logLevel: e.LOG_LEVEL,
    http: { host: e.HOST, port: e.PORT, publicBaseUrl, trustProxy: e.TRUST_PROXY, maxUploadBytes: e.MAX_UPLOAD_BYTES },
    auth: {
      baseUrl: authBaseUrl,
      issuer: e.AUTH_ISSUER ?? authBaseUrl,
      audience: e.AUTH_AUDIENCE,
      tokenTtlSeconds: e.TOKEN_TTL_SECONDS,
      signingKeyRotationDays: e.SIGNING_KEY_ROTATION_DAYS,
      subscriptionKeys: e.SUBSCRIPTION_KEYS,
      rateLimitTokenPerMinute: e.RATE_LIMIT_TOKEN_PER_MINUTE,
      rateLimitTokenFailuresPerMinute: e.RATE_LIMIT_TOKEN_FAILURES_PER_MINUTE,
      rateLimitTokenSourceFailuresPerMinute: e.RATE_LIMIT_TOKEN_SOURCE_FAILURES_PER_MINUTE,
      rateLimitApiPerMinute: e.RATE_LIMIT_API_PER_MINUTE,
    },
    mongo: { uri: e.MONGODB_URI, dbName: e.MONGODB_DB },
    reconcile: {
      intervalMs: e.RECONCILE_INTERVAL_SECONDS * 1000,
      minAgeMs: e.RECONCILE_MIN_AGE_SECONDS * 1000,
      windowMs: e.RECONCILE_WINDOW_DAYS * 86_400_000,
      limit: e.RECONCILE_BATCH,
    },
    retention: retentionOf(e),
    temporal: {
      address: e.TEMPORAL_ADDRESS,
      namespace: e.TEMPORAL_NAMESPACE,
      taskQueue: e.TEMPORAL_TASK_QUEUE,
      workflowBundlePath: e.TEMPORAL_WORKFLOW_BUNDLE,
      workerMetricsAddress: e.WORKER_METRICS_ADDRESS,
      maxCachedWorkflows: e.WORKER_MAX_CACHED_WORKFLOWS,
    },
    webhooks: {
      allowHttp: e.WEBHOOK_ALLOW_HTTP,
      allowedRanges: e.WEBHOOK_ALLOWED_RANGES,
      timeoutMs: e.WEBHOOK_TIMEOUT_MS,
      maxConcurrencyPerHook: e.WEBHOOK_MAX_CONCURRENCY_PER_HOOK,
      heldSweepMs: e.WEBHOOK_HELD_SWEEP_SECONDS * 1000,
      retrySchedule: retryScheduleOf(e.WEBHOOK_RETRY_SCHEDULE),
      searchAttributes: e.WEBHOOK_SEARCH_ATTRIBUTES,
      egress: { localAddress: e.WEBHOOK_EGRESS_LOCAL_ADDRESS, proxyUrl: e.WEBHOOK_EGRESS_PROXY },
      clientCertDir: e.WEBHOOK_CLIENT_CERT_DIR,
    },
    as4: {
      keystores: e.PEPPOL_AP_KEYSTORE.map((entry) => {
        const i = entry.lastIndexOf('#');
        return i > 0 ? { path: entry.slice(0, i), alias: entry.slice(i + 1) } : { path: entry, alias: undefined };
      }),
      keystorePassword: e.PEPPOL_AP_KEYSTORE_PASSWORD,
      certificatePath: e.PEPPOL_AP_CERTIFICATE,
      privateKeyPath: e.PEPPOL_AP_PRIVATE_KEY,
      privateKeyPassword: e.PEPPOL_AP_PRIVATE_KEY_PASSWORD,
      apCaFiles: e.PEPPOL_AP_CA,
      apCaPassword: e.PEPPOL_AP_CA_PASSWORD,
      networkTrust,
      maxMessageBytes: e.AS4_MAX_MESSAGE_BYTES,
      maxDecompressedBytes: e.AS4_MAX_DECOMPRESSED_BYTES,
      duplicateWindowHours: e.AS4_DUPLICATE_WINDOW_HOURS,
      revocation: {
        enabled: e.AS4_REVOCATION_CHECK,
        softFail: e.AS4_REVOCATION_SOFT_FAIL,
        timeoutMs: e.AS4_REVOCATION_TIMEOUT_MS,
        maxCrlBytes: e.AS4_REVOCATION_MAX_CRL_BYTES,
        cacheEntries: e.AS4_REVOCATION_CACHE_ENTRIES,
      },
      enabled: as4Enabled,
    },
    taxReporting: {
      configFile: e.TAX_REPORTING_CONFIG ? path.resolve(e.TAX_REPORTING_CONFIG) : undefined,
      acknowledgementTimeoutMs: e.TAX_REPORT_ACK_TIMEOUT_MINUTES * 60_000,
    },
    email: {
      smtp: smtpOf(e),
      retrySchedule: retryScheduleOf(e.EMAIL_SEND_RETRY_SCHEDULE, 'EMAIL_SEND_RETRY_SCHEDULE', EMAIL_SEND_SCHEDULE),
    },
    validation: {
      rulesDir,
      acceptedPrevious: e.RULES_ACCEPTED_PREVIOUS,
      threads: e.VALIDATION_THREADS ?? os.availableParallelism(),
      rulesEngine: e.VALIDATION_RULES_ENGINE,
      xsdEngine: e.VALIDATION_XSD_ENGINE,
    },
    peppol: {
      apEndpointUrl: e.PEPPOL_AP_ENDPOINT_URL ?? `${publicBaseUrl}/as4`,
      smpKey: smpKeyOf(e),
      smpBasePath: e.PEPPOL_SMP_BASE_PATH,
      smpPublicUrl: (e.PEPPOL_SMP_PUBLIC_URL ?? `${publicBaseUrl}${e.PEPPOL_SMP_BASE_PATH}`).replace(/\/+$/, ''),
      smpTechnicalContact: e.PEPPOL_SMP_TECHNICAL_CONTACT,
      smlZone: SML_ZONE_NAMES[e.PEPPOL_SML_ZONE] ?? e.PEPPOL_SML_ZONE,
      smlRegistrar: e.PEPPOL_SML_REGISTRAR,
      sml: smlOf(e),
      dnsServers: e.PEPPOL_DNS_SERVERS,
      smpTruststorePath: e.PEPPOL_SMP_TRUSTSTORE,
      lookupTimeoutMs: e.PEPPOL_LOOKUP_TIMEOUT_MS,
      smpCacheTtlMs: e.PEPPOL_SMP_CACHE_TTL_MS,
      smpHttpsOnly: e.PEPPOL_SMP_HTTPS_ONLY ?? e.NODE_ENV === 'production',
      sendRetrySchedule: retryScheduleOf(
        e.PEPPOL_SEND_RETRY_SCHEDULE,
        'PEPPOL_SEND_RETRY_SCHEDULE',
        PEPPOL_SEND_SCHEDULE,
      ),
      reporting: {
        enabled: e.PEPPOL_REPORTING_ENABLED,
        receiver: e.PEPPOL_REPORTING_RECEIVER,
        country: e.PEPPOL_REPORTING_COUNTRY,
      },
    },
  });
}
