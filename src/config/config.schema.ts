import { isIP } from 'node:net';
import { z } from 'zod';

/** Comma-separated list in an environment variable → string[] (empty entries dropped). */
const csv = z
  .string()
  .optional()
  .transform((v) =>
    (v ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s.length > 0),
  );

const int = (def: number, min = 0) => z.coerce.number().int().min(min).default(def);
/** A period in days; fractions allowed (a test's compressed clock). */
const days = (def: number) => z.coerce.number().positive().default(def);
const bool = (def: boolean) =>
  z
    .enum(['true', 'false', '1', '0', 'yes', 'no'])
    .optional()
    .transform((v) => (v === undefined ? def : ['true', '1', 'yes'].includes(v)));

/**
 * Every setting, its environment variable and its default. `docs/configuration.md` is generated from the
 * descriptions here (`npm run docs:config`), so the comment and the behaviour cannot drift apart.
 */
export const configEnvSchema = z.object({
  NODE_ENV: z.enum(['development', 'test', 'production']).default('development').describe('Runtime mode.'),
  LOG_LEVEL: z
    .enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
    .default('info')
    .describe('pino log level.'),

  HOST: z.string().default('127.0.0.1').describe('Interface the API listens on.'),
  PORT: int(8080).describe('API port (0 = any free port).'),
  PUBLIC_BASE_URL: z
    .string()
    .url()
    .optional()
    .describe('External base URL of the API ({base_url}); default http://HOST:PORT.'),
  AUTH_BASE_URL: z
    .string()
    .url()
    .optional()
    .describe('External base URL of the identity server ({auth_url}); default = PUBLIC_BASE_URL (same server).'),
  TRUST_PROXY: z
    .string()
    .default('loopback')
    .describe('Express "trust proxy" setting, for client addresses behind a reverse proxy.'),

  MONGODB_URI: z
    .string()
    .default('mongodb://127.0.0.1:27017/invoicegateway')
    .describe('MongoDB (or FerretDB) connection string.'),
  MONGODB_DB: z
    .string()
    .regex(/^[A-Za-z]+$/)
    .optional()
    .describe('Database name (letters only, a FerretDB rule); default from the URI path.'),

  RECONCILE_INTERVAL_SECONDS: int(900).describe(
    'How often one API process compares stored documents with their workflows and looks for stored bytes nothing ' +
      'refers to (docs/decisions.md, "Storage writes"); 0 = never.',
  ),
  RECONCILE_MIN_AGE_SECONDS: int(3600, 60).describe(
    'Records and stored bytes younger than this are left alone by reconciliation (an upload or step may still be ' +
      'writing them).',
  ),
  RECONCILE_WINDOW_DAYS: int(14, 1).describe(
    'How far back reconciliation compares sales invoices with their workflows (longer than the longest delivery ' +
      'retry schedule).',
  ),
  RECONCILE_BATCH: int(500, 1).describe(
    'Records, blobs and chunks reconciliation looks at per kind and run (it goes on from there in the next run).',
  ),
  RETENTION_ENABLED: bool(false).describe(
    'The worker keeps the retention schedule (a Temporal Schedule running purgeExpiredRecords) and old records are ' +
      'deleted by the periods below; off = this worker deletes nothing (docs/decisions.md "Retention").',
  ),
  RETENTION_INTERVAL_MINUTES: int(60, 1).describe('How often the retention schedule starts a purge.'),
  RETENTION_BATCH: int(200, 1).describe('Records one purge step looks at and deletes at most (one batch).'),
  RETENTION_FAILED_INVOICE_DAYS: days(90).describe(
    'Sales invoices (and other sent documents) in the final error state InvoiceSentError are deleted this long after ' +
      'their last entry; the contract promises 90 days (at least 90 in production).',
  ),
  RETENTION_DOCUMENT_DAYS: days(3653).describe(
    'Every other document (delivered or dropped sales invoices, received documents, responses, orders, tax and ' +
      'network reports) is deleted this long after its last entry (a received one: after it arrived); default ten ' +
      'years, the longest common invoice archiving period in the EU.',
  ),
  RETENTION_AS4_MESSAGE_DAYS: days(3653).describe(
    'Received AS4 messages (the signed SBD and the receipt we answered: our non-repudiation evidence of receipt) are ' +
      'deleted this long after they arrived; at least AS4_DUPLICATE_WINDOW_HOURS.',
  ),
  RETENTION_EVENT_DAYS: days(90).describe(
    'Published events (with their routings) are deleted this long after they were published (keep it longer than ' +
      'the webhook retry window, 5 days: the events API shows what deliveries still retry).',
  ),
  RETENTION_DELIVERY_LOG_DAYS: days(90).describe('Webhook delivery log lines are deleted this long after the attempt.'),
  RETENTION_INBOX_DAYS: days(90).describe(
    'Entries of httpsin inboxes (acknowledged or not) are deleted this long after they were put there.',
  ),
  TEMPORAL_ADDRESS: z.string().default('127.0.0.1:7233').describe('Temporal frontend host:port.'),
  TEMPORAL_NAMESPACE: z.string().default('default').describe('Temporal namespace.'),
  TEMPORAL_TASK_QUEUE: z
    .string()
    .default('invoice-gateway')
    .describe('Task queue shared by the API (starts) and the worker (runs).'),
  TEMPORAL_WORKFLOW_BUNDLE: z
    .string()
    .optional()
    .describe('Path of a prebuilt workflow bundle (production); unset = bundle at worker start.'),
  WORKER_MAX_CACHED_WORKFLOWS: z.coerce
    .number()
    .int()
    .min(0)
    .refine(
      (n) => n === 0 || n >= 40,
      'must be 0 (no cache) or at least 40, the workflow tasks the worker runs at once',
    )
    .optional()
    .describe(
      'Runs the worker keeps in memory between their tasks (0 = none, else at least 40, the workflow tasks it runs ' +
        'at once); unset = the Temporal SDK default, sized from the heap (about 2 300 at a 4 GiB heap). A run ' +
        'waiting long, such as a delivery waiting for its next retry, stays cached until the room is needed, ' +
        'about 0.25 MB each; one evicted is replayed from its history on its next task.',
    ),
  WORKER_METRICS_ADDRESS: z
    .string()
    .default('127.0.0.1:9464')
    .describe('host:port of the worker Prometheus endpoint (Temporal SDK metrics plus ours); empty disables.'),

  MAX_UPLOAD_BYTES: int(24 * 1024 * 1024, 1).describe(
    'Largest accepted upload body (spec 8: 24 MB); larger → 413 before anything is stored.',
  ),

  AUTH_ISSUER: z.string().optional().describe('JWT `iss`; default = the auth base URL.'),
  AUTH_AUDIENCE: z.string().default('invoice-gateway-api').describe('JWT `aud` the API accepts.'),
  TOKEN_TTL_SECONDS: int(3600, 60).describe('Access token lifetime (spec 2.2: 3600).'),
  SIGNING_KEY_ROTATION_DAYS: int(30, 1).describe(
    'Age after which a new token signing key is generated; old keys stay published until their tokens expire.',
  ),
  SUBSCRIPTION_KEYS: csv.describe(
    'Valid `Subscription-Key` header values (comma-separated). The header is optional; when sent it must be one of ' +
      'these.',
  ),

  RATE_LIMIT_TOKEN_PER_MINUTE: int(120, 1).describe('Token requests per client id from one address per minute.'),
  RATE_LIMIT_TOKEN_FAILURES_PER_MINUTE: int(10, 1).describe(
    'Failed token requests per client id from one address per minute; then 429 for that pair.',
  ),
  RATE_LIMIT_TOKEN_SOURCE_FAILURES_PER_MINUTE: int(60, 1).describe(
    'Failed token requests from one address per minute, over all client ids; then 429 for that address.',
  ),
  RATE_LIMIT_API_PER_MINUTE: int(6000, 1).describe('API requests per client per minute.'),

  WEBHOOK_ALLOW_HTTP: bool(false).describe(
    'Accept and deliver to plain http:// hook URLs (tests, on-premise receivers); https only when false.',
  ),
  WEBHOOK_ALLOWED_RANGES: csv.describe(
    'CIDR ranges hooks may reach although the SSRF guard refuses them by default (loopback, private, link-local, ' +
      '…), comma-separated, e.g. `10.0.0.0/8,127.0.0.1/32`.',
  ),
  WEBHOOK_TIMEOUT_MS: int(100_000, 100).describe(
    'Timeout of one delivery attempt (spec 6.1: 100 s); also the most a hook may set as its own timeoutSeconds.',
  ),
  WEBHOOK_MAX_CONCURRENCY_PER_HOOK: int(20, 1).describe(
    'Delivery attempts in flight per hook and worker process; further attempts wait or come back later. Each ' +
      'timeout halves the cap of that hook (at least 1) and each answer adds one back, so a receiver that hangs ' +
      'ends up holding one connection.',
  ),
  WEBHOOK_HELD_SWEEP_SECONDS: int(60, 1).describe(
    'How often each worker releases the held deliveries of stuck hooks that fell due (the fallback when no answer ' +
      'of the hook released them first) and reads which hooks have deliveries held, so an answer of such a hook ' +
      'releases them.',
  ),
  WEBHOOK_RETRY_SCHEDULE: z
    .string()
    .optional()
    .describe(
      'Backoff between failed delivery attempts as JSON (src/core/retry-schedule.ts); unset = exponential with ' +
        'jitter over 5 days.',
    ),
  WEBHOOK_EGRESS_LOCAL_ADDRESS: z
    .string()
    .refine((v) => isIP(v) !== 0, 'must be an IPv4 or IPv6 address')
    .optional()
    .describe(
      'Source address of every outbound webhook and https-channel connection (a fixed address receivers can ' +
        'allow-list); it must be an address of this host. Unset = the system chooses.',
    ),
  WEBHOOK_EGRESS_PROXY: z
    .string()
    .url()
    .optional()
    .describe(
      'HTTP(S) proxy (`http://[user:pass@]host:port`) every outbound webhook and https-channel request goes through ' +
        "(CONNECT tunnel); receivers then allow-list the proxy's address. Unset = direct.",
    ),
  WEBHOOK_CLIENT_CERT_DIR: z
    .string()
    .optional()
    .describe(
      'Directory of client certificates for mutual TLS to hooks (`<name>.crt` with its chain and `<name>.key`, ' +
        'PEM, unencrypted); a hook names one with `admin hook-auth cert`. Unset = no hook can use mutual TLS.',
    ),
  WEBHOOK_SEARCH_ATTRIBUTES: bool(true).describe(
    'Tag delivery workflows with the HookId, EventTopic, PartyId and DeliveryAttempt search attributes (they must ' +
      'be registered on the Temporal server).',
  ),

  INVOICE_GATEWAY_CACHE: z
    .string()
    .optional()
    .describe('Cache root for downloaded tools and rule packs (outside git); default ~/.cache/invoice-gateway.'),
  RULES_CACHE_DIR: z
    .string()
    .optional()
    .describe(
      'Directory of the validation rule packs built by `npm run rules:fetch`; default <INVOICE_GATEWAY_CACHE>/rules.',
    ),
  VALIDATION_THREADS: z.coerce
    .number()
    .int()
    .min(0)
    .max(64)
    .optional()
    .describe(
      'Threads each process (API and worker) validates and converts documents on (the official rules and ' +
        'conversions run synchronously and would otherwise hold the event loop or activity thread for seconds); ' +
        'default: the cores available; 0 = in process.',
    ),
  VALIDATION_RULES_ENGINE: z
    .enum(['compiled', 'saxon-js'])
    .default('compiled')
    .describe(
      'Business rules engine: `compiled` evaluates the official Schematron XSLT compiled to JavaScript (same ' +
        'findings, much less CPU; a pack or document it cannot handle runs on SaxonJS); `saxon-js` runs every pack ' +
        'on SaxonJS.',
    ),
  VALIDATION_XSD_ENGINE: z
    .enum(['libxml2-wasm', 'xmllint'])
    .default('libxml2-wasm')
    .describe(
      'XSD engine: `libxml2-wasm` validates in process (libxml2 compiled to WebAssembly, on its own thread; each ' +
        'schema set compiled once per thread); `xmllint` runs the libxml2-utils command once per document.',
    ),
  RULES_ACCEPTED_PREVIOUS: csv.describe(
    'Previous rule pack versions still accepted in a transition window, comma-separated `id@version` (e.g. ' +
      '`peppol-bis3-ubl@2025.11,peppol-cen-en16931-ubl@2025.11`); they run beside the current version and a ' +
      'document passes a pack when it passes either.',
  ),

  PEPPOL_AP_KEYSTORE: csv.describe(
    "PKCS#12 key store(s) of this access point's Peppol AP key and certificate, comma-separated `path` or " +
      '`path#alias`; two during a certificate rollover (sign with the newest valid one, decrypt with whichever a ' +
      'sender used). Unset (and no PEM) = AS4 is off and `POST /as4` answers 503.',
  ),
  PEPPOL_AP_KEYSTORE_PASSWORD: z.string().optional().describe('Password of the PEPPOL_AP_KEYSTORE files.'),
  PEPPOL_AP_CERTIFICATE: z
    .string()
    .optional()
    .describe(
      'Instead of PKCS#12: PEM file with the AP certificate (then its chain). Our SMP publishes the AP certificate ' +
        'of whichever key source is set.',
    ),
  PEPPOL_AP_PRIVATE_KEY: z
    .string()
    .optional()
    .describe('Instead of PKCS#12: PEM file with the AP private key (PKCS#8 or PKCS#1).'),
  PEPPOL_AP_PRIVATE_KEY_PASSWORD: z.string().optional().describe('Passphrase of an encrypted PEPPOL_AP_PRIVATE_KEY.'),
  PEPPOL_AP_CA: csv.describe(
    'Peppol AP CA certificate(s) a sending or receiving access point must chain to: PEM bundles or PKCS#12 trust ' +
      'stores (`.p12`/`.pfx`), comma-separated. Required when AS4 is on; recipient lookups answer 503 while unset.',
  ),
  PEPPOL_AP_CA_PASSWORD: z.string().optional().describe('Password of PKCS#12 trust stores in PEPPOL_AP_CA.'),
  AS4_MAX_MESSAGE_BYTES: int(50 * 1024 * 1024, 1024).describe(
    'Largest AS4 request body `POST /as4` reads (counted while streaming); larger → HTTP 413 with a signed ebMS ' +
      'error, nothing stored.',
  ),
  AS4_MAX_DECOMPRESSED_BYTES: int(100 * 1024 * 1024, 1024).describe(
    'Largest SBD a compressed AS4 payload may inflate to (gzip bombs) → EBMS:0303.',
  ),
  AS4_DUPLICATE_WINDOW_HOURS: int(168, 1).describe(
    'How long a resent AS4 message (same MessageId, or same sender and SBDH InstanceIdentifier) is answered with a ' +
      'receipt instead of being stored again; later a reused id is refused (EBMS:0004).',
  ),
  AS4_REVOCATION_CHECK: bool(false).describe(
    'Check Peppol certificates for revocation — the OCSP responder the certificate names first, then the CRLs of ' +
      'its distribution points: the sending AP of a received AS4 message (revoked → EBMS:0101), the signer of a ' +
      'receipt, and the SMP signer and endpoint certificate of a recipient lookup. Off = not checked (results say ' +
      '`revocationChecked: false`).',
  ),
  AS4_REVOCATION_SOFT_FAIL: bool(false).describe(
    'With AS4_REVOCATION_CHECK: accept a certificate whose revocation status cannot be determined (no responder or ' +
      'distribution point, unreachable, expired or badly signed answers), logging a warning. Default: refuse it ' +
      '(hard fail). A certificate listed as revoked is always refused.',
  ),
  AS4_REVOCATION_TIMEOUT_MS: int(5_000, 100).describe('Timeout of one OCSP request or CRL download.'),
  AS4_REVOCATION_MAX_CRL_BYTES: int(10 * 1024 * 1024, 1024).describe(
    'Largest CRL downloaded; a larger one leaves the status unknown.',
  ),
  AS4_REVOCATION_CACHE_ENTRIES: int(100, 1).describe(
    'OCSP answers and CRLs kept in memory per process (each until its nextUpdate, least recently used out first).',
  ),
  PEPPOL_AP_ENDPOINT_URL: z
    .string()
    .url()
    .optional()
    .describe('Our AS4 receiver URL as peers reach it, published by our SMP; default <PUBLIC_BASE_URL>/as4.'),
  PEPPOL_SMP_KEYSTORE: z
    .string()
    .optional()
    .describe(
      'PKCS#12 file with the key and certificate our SMP signs its answers with (or use PEPPOL_SMP_CERTIFICATE + ' +
        'PEPPOL_SMP_PRIVATE_KEY).',
    ),
  PEPPOL_SMP_KEYSTORE_PASSWORD: z.string().optional().describe('Password of PEPPOL_SMP_KEYSTORE.'),
  PEPPOL_SMP_KEYSTORE_ALIAS: z
    .string()
    .optional()
    .describe('Alias of the key in PEPPOL_SMP_KEYSTORE when it holds several.'),
  PEPPOL_SMP_CERTIFICATE: z
    .string()
    .optional()
    .describe('PEM certificate of our SMP signing key (with PEPPOL_SMP_PRIVATE_KEY).'),
  PEPPOL_SMP_PRIVATE_KEY: z.string().optional().describe('PEM private key of our SMP (unencrypted PKCS#8).'),
  PEPPOL_SMP_BASE_PATH: z
    .string()
    .regex(/^(\/[A-Za-z0-9._~-]+)+$/)
    .default('/smp')
    .describe('Path under which the API process serves our SMP (unauthenticated, Peppol SMP 1.x).'),
  PEPPOL_SMP_PUBLIC_URL: z
    .string()
    .url()
    .optional()
    .describe('Our SMP base URL as the SML publishes it; default <PUBLIC_BASE_URL><PEPPOL_SMP_BASE_PATH>.'),
  PEPPOL_SMP_TECHNICAL_CONTACT: z
    .string()
    .optional()
    .describe('TechnicalContactUrl our SMP publishes with every endpoint (a mailto: or https: URL).'),
  PEPPOL_SML_ZONE: z
    .string()
    .regex(/^[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*\.?$/)
    .default('test')
    .describe(
      'SML DNS zone for lookups and registrations: `production`, `test` (the OpenPeppol zones) or a DNS zone name ' +
        '(a local zone in tests).',
    ),
  PEPPOL_SML_REGISTRAR: z
    .enum(['off', 'manual', 'sml'])
    .default('off')
    .describe(
      'How party registrations reach the SML: `off` refuses them (no SML client configured), `manual` publishes in ' +
        'our SMP and leaves the SML entry to the operator, `sml` registers through the SML management interface ' +
        '(EXPERIMENTAL: not yet tried against the SML test environment) with our SMP key as client certificate.',
    ),
  PEPPOL_SML_URL: z
    .string()
    .url()
    .optional()
    .describe(
      'SML management URL for PEPPOL_SML_REGISTRAR=sml; default by PEPPOL_SML_ZONE: ' +
        'https://api.sml.test.tech.peppol.org/edelivery-sml (test), https://api.sml.prod.tech.peppol.org/edelivery-sml ' +
        '(production); required for any other zone.',
    ),
  PEPPOL_SML_SMP_ID: z
    .string()
    .regex(/^[A-Za-z0-9._-]{1,64}$/)
    .optional()
    .describe('Our SMP id in the SML (required for PEPPOL_SML_REGISTRAR=sml).'),
  PEPPOL_SML_SMP_ADDRESS: z
    .string()
    .refine((v) => isIP(v) !== 0, 'an IPv4 or IPv6 address')
    .optional()
    .describe(
      "Our SMP's IP address; when set, our SMP's record in the SML is created or updated to PEPPOL_SMP_PUBLIC_URL " +
        'and this address before the first registration; unset leaves that record to the operator.',
    ),
  PEPPOL_SML_CA: z
    .string()
    .optional()
    .describe(
      "PEM file of the CA certificates the SML's TLS certificate is checked against; default the system roots.",
    ),
  PEPPOL_DNS_SERVERS: csv.describe(
    'Name servers for SML lookups (`host` or `host:port`, comma-separated); default the system resolvers.',
  ),
  PEPPOL_NETWORK_TRUST: z
    .enum(['test', 'production', 'none'])
    .optional()
    .describe(
      'Peppol PKI trust anchors used where PEPPOL_AP_CA / PEPPOL_SMP_TRUSTSTORE are unset: the G3 trust stores of the ' +
        'test or production network, from the pinned peppol-commons jar in the rules cache (`npm run rules:fetch`), ' +
        'or none. Default in production mode: the network of PEPPOL_SML_ZONE (`production` or `test`); otherwise ' +
        'none. G2 is never in them.',
    ),
  PEPPOL_SMP_TRUSTSTORE: z
    .string()
    .optional()
    .describe(
      'PEM file of the SMP CA certificates SMP answers must be signed under (the Peppol SMP CA); recipient lookups ' +
        'answer 503 while unset.',
    ),
  PEPPOL_SMP_HTTPS_ONLY: z
    .enum(['true', 'false', '1', '0', 'yes', 'no'])
    .optional()
    .transform((v) => (v === undefined ? undefined : ['true', '1', 'yes'].includes(v)))
    .describe(
      'Recipient lookups refuse an SMP whose URL (from the SML, or a redirect) is not https, as the Peppol network ' +
        'requires. Default: on in production mode, off otherwise; the local demo network (plain http on loopback) ' +
        'sets it off.',
    ),
  PEPPOL_LOOKUP_TIMEOUT_MS: int(10_000, 100).describe(
    'Timeout of one DNS query or SMP request during a recipient lookup.',
  ),
  PEPPOL_SMP_CACHE_TTL_MS: int(600_000).describe(
    "How long the worker keeps a recipient's found AS4 endpoint (SML and SMP answer) before asking again, never " +
      "past the endpoint's expiration date or its certificates' expiry; a failed delivery forgets it. 0: asked " +
      'for every document.',
  ),
  PEPPOL_SEND_RETRY_SCHEDULE: z
    .string()
    .optional()
    .describe(
      'Waits between failed Peppol delivery attempts of a sales invoice (5xx, no answer) as JSON ' +
        "(src/core/retry-schedule.ts); read by the API process and carried in each run's input. Unset = 10 min, 20 " +
        'min, 30 min, 2 h, 6 h, 12 h, 14 h (8 attempts over 35 h).',
    ),
  PEPPOL_REPORTING_ENABLED: bool(false).describe(
    'The worker keeps the monthly Peppol network reports (TSR and EUSR of the previous month, sent over AS4 between ' +
      'the 1st and the 15th) running; every access point in production must report.',
  ),
  PEPPOL_REPORTING_RECEIVER: z
    .string()
    .regex(/^[0-9]{4}:[^\s]+$/)
    .default('9925:be0848934496')
    .describe(
      'Participant id (iso6523-actorid-upis) the TSR and EUSR are sent to: OpenPeppol in production; OpenPeppol has ' +
        'no receiver on the test network.',
    ),
  PEPPOL_REPORTING_COUNTRY: z
    .string()
    .regex(/^[A-Z]{2}$/)
    .optional()
    .describe(
      "Our service provider's country (ISO 3166-1 alpha-2): COUNTRY_C1 of the reports, and the receiver country of " +
        'messages addressed to our own service provider id. Required for sending reports.',
    ),

  TAX_REPORTING_CONFIG: z
    .string()
    .optional()
    .describe(
      'JSON file of the tax reporting configuration (docs/decisions.md "Tax reporting"): the Tax Data Document ' +
        'version, our SPID, the document type and process of ViDA pilot reports, the tax authority (C5) of each ' +
        'country, the roles it requires and its TDD profile (`vida-1`, the default, or `sk-1`; optionally its own ' +
        'document type and process). The worker reads it; set it for the API too, where it enables ' +
        '`POST …/taxReport` (later reports of a document). Unset = invoices are not reported to any tax authority.',
    ),
  TAX_REPORT_ACK_TIMEOUT_MINUTES: int(1440, 1).describe(
    "How long a tax report waits for the authority's MLS after its AS4 receipt before it ends in TaxReportError.",
  ),
  SMTP_HOST: z
    .string()
    .optional()
    .describe('SMTP relay the e-mail channel sends through; unset = no e-mail channel (mail hooks end in an error).'),
  SMTP_PORT: int(587, 1).describe('SMTP relay port (587 submission with STARTTLS, 465 implicit TLS, 25).'),
  SMTP_SECURE: bool(false).describe('Implicit TLS from the first byte (port 465).'),
  SMTP_REQUIRE_TLS: bool(true).describe(
    'Send only over TLS: refuse a relay that does not offer STARTTLS (ignored with SMTP_SECURE).',
  ),
  SMTP_USER: z.string().optional().describe('SMTP AUTH user name; unset = no authentication.'),
  SMTP_PASSWORD: z.string().optional().describe('SMTP AUTH password.'),
  SMTP_CA_FILE: z.string().optional().describe('PEM file of extra CA certificates to trust for the relay.'),
  SMTP_TIMEOUT_MS: int(30_000, 100).describe('Connect, greeting and socket timeout of the SMTP relay.'),
  SMTP_FROM: z
    .string()
    .optional()
    .describe('From address of invoice mails (a tenant may set its own); required when SMTP_HOST is set.'),
  SMTP_DKIM_DOMAIN: z.string().optional().describe('DKIM signing domain; unset = mails are not DKIM-signed.'),
  SMTP_DKIM_SELECTOR: z.string().optional().describe('DKIM key selector (with SMTP_DKIM_DOMAIN).'),
  SMTP_DKIM_KEY_FILE: z.string().optional().describe('PEM file of the DKIM private key (with SMTP_DKIM_DOMAIN).'),
  EMAIL_SEND_RETRY_SCHEDULE: z
    .string()
    .optional()
    .describe(
      'Waits between e-mail attempts the relay refused for now (4xx) or that found no relay, as JSON ' +
        '(src/core/retry-schedule.ts). Unset = 5 min, 15 min, 30 min, 1 h, 2 h, 4 h, 8 h, 12 h.',
    ),
} satisfies Record<string, z.ZodType>);

export type ConfigEnv = z.infer<typeof configEnvSchema>;
