import { existsSync } from 'node:fs';
import type { Application } from 'express';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { createApp, type AppDeps } from '../../api/app';
import type { WorkflowStarter } from '../../api/workflow-client';
import type { Config } from '../config/load-config';
import { createLogger, type Logger } from '../observability/logger';
import { connectDatabase, type Database } from '../storage/connection';
import { DirectoryRepository } from '../storage/directory.repository';
import { DocumentRepository } from '../storage/document.repository';
import { MongoIdentityStore } from '../storage/identity.store';
import { SigningKeyService } from '../auth/signing-keys';
import { TokenService } from '../auth/token-service';
import { composePeppolApi, composeRevocationChecker } from './peppol';
import { loadAs4Keys } from '../peppol/as4/as4-keys';
import { As4Receiver, type ServedParty } from '../peppol/as4/receiver';
import type { ParticipantId } from '../peppol/identifiers';
import type { RevocationChecker } from '../peppol/pki/revocation';
import { As4InboundRepository } from '../storage/as4/as4-inbound.repository';
import { SentInstanceRepository } from '../storage/peppol/sent-instance.repository';
import { createValidatorPool, defaultWorkerScript, type ValidatorOptions, type ValidatorPool } from '../validation';
import { catalogueEntry } from '../formats/catalogue';
import { countryOfLegalEntity, recordReceivedExchanges } from '../reporting/peppol/items';
import { ReportingItemRepository } from '../storage/reporting/reporting-item.repository';

/** What every process of the gateway shares: logger, database and repositories. */
export interface Core {
  config: Readonly<Config>;
  logger: Logger;
  db: Database;
  directory: DirectoryRepository;
  documents: DocumentRepository;
  identity: MongoIdentityStore;
}

export async function composeCore(
  config: Readonly<Config>,
  name: string,
  options: { logLevel?: string } = {},
): Promise<Core> {
  const logger = createLogger({ level: options.logLevel ?? config.logLevel, name });
  const db = await connectDatabase(config.mongo.uri, { dbName: config.mongo.dbName });
  return {
    config,
    logger,
    db,
    directory: new DirectoryRepository(db.models),
    documents: new DocumentRepository(db.models),
    identity: new MongoIdentityStore(db.models),
  };
}

export async function composeIdentity(core: Core): Promise<{ signingKeys: SigningKeyService; tokens: TokenService }> {
  const signingKeys = new SigningKeyService({ store: core.identity, config: core.config, logger: core.logger });
  await signingKeys.init();
  const tokens = new TokenService({ signingKeys, config: core.config });
  return { signingKeys, tokens };
}

export function createMetricsRegistry(prefix: string): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix });
  return registry;
}

const SERVED_PARTY_TTL_MS = 10_000;
const SERVED_PARTY_CACHE_SIZE = 10_000;

/**
 * Which party a received message is for, remembered for a few seconds: a busy sender sends many messages to the same
 * receivers, and each lookup is a database round trip on the receive path. Only parties found are kept (a party
 * registered a moment ago is served at once); one removed is still served for at most the TTL.
 */
function servedPartyCache(
  lookup: (participant: string) => Promise<ServedParty | null>,
): (participant: ParticipantId) => Promise<ServedParty | null> {
  const cache = new Map<string, { party: ServedParty; until: number }>();
  return async (participant) => {
    const key = participant.value.toLowerCase();
    const hit = cache.get(key);
    if (hit && hit.until > Date.now()) return hit.party;
    // Looked up as the sender wrote it: the party's own key when the case matches (one read), else by participant key.
    const party = await lookup(participant.value);
    if (cache.size >= SERVED_PARTY_CACHE_SIZE) cache.clear();
    if (party) cache.set(key, { party, until: Date.now() + SERVED_PARTY_TTL_MS });
    else cache.delete(key);
    return party;
  };
}

/** The Peppol AS4 receiver over a composed core, or undefined when no AP key is configured. */
export function composeAs4Receiver(
  core: Core,
  options: { now?: () => Date; workflows?: WorkflowStarter; revocation?: RevocationChecker } = {},
): As4Receiver | undefined {
  const cfg = core.config.as4;
  if (!cfg.enabled) return undefined;
  const { keys, apCertificateAuthorities } = loadAs4Keys(cfg);
  const revocation = options.revocation ?? composeRevocationChecker(core.config);
  const sentInstances = new SentInstanceRepository(core.db.models);
  return new As4Receiver({
    keys,
    apCertificateAuthorities,
    store: new As4InboundRepository(core.db.models, core.db.blobs),
    // Participant identifiers are case-insensitive; party ids are stored as registered.
    findParty: servedPartyCache(async (participant) => {
      const party = await core.directory.findPartyByParticipant(participant);
      return party ? { tenantId: party.tenantId, partyId: party.partyId } : null;
    }),
    // An MLS addressed to our own service provider id is the document of the party whose message it answers.
    findMlsOwner: async (instanceId) => {
      const sent = await sentInstances.find(instanceId);
      return sent ? { tenantId: sent.tenantId, partyId: sent.partyId } : null;
    },
    maxDecompressedBytes: cfg.maxDecompressedBytes,
    ...(revocation
      ? {
          revocation,
          onRevocationUnknown: (message: string) =>
            core.logger.warn(
              { reason: message },
              'AS4 sender certificate accepted without a revocation status (AS4_REVOCATION_SOFT_FAIL)',
            ),
        }
      : {}),
    duplicateWindowMs: cfg.duplicateWindowHours * 3_600_000,
    ...(options.workflows?.startReceiveDocument
      ? {
          onStored: async (stored) => {
            await options.workflows?.startReceiveDocument?.({ tenantId: stored.tenantId, messageId: stored.messageId });
          },
          onStoredFailed: (stored, error) =>
            core.logger.error(
              { as4MessageId: stored.messageId, tenantId: stored.tenantId, err: error },
              'receive workflow not started; a resend of the message retries',
            ),
        }
      : {}),
    // Each committed message is a reporting item (TSR / EUSR), its C4 country the receiving party's.
    onCommitted: recordReceivedExchanges({
      sink: new ReportingItemRepository(core.db.models),
      countryOfParty: async (_tenantId, partyId) =>
        countryOfLegalEntity((await core.directory.findParty(partyId))?.legalEntityId),
      ownCountry: core.config.peppol.reporting.country,
      onFailed: (messageId, error) =>
        core.logger.error(
          { as4MessageId: messageId, err: error },
          "Peppol reporting item of a received message not recorded; the month's reports will miss it",
        ),
    }),
    ...(options.now ? { now: options.now } : {}),
  });
}

export function validatorOptions(config: Readonly<Config>): ValidatorOptions {
  return {
    rulesDir: config.validation.rulesDir,
    acceptedPrevious: config.validation.acceptedPrevious,
    rulesEngine: config.validation.rulesEngine,
    xsdEngine: config.validation.xsdEngine,
    xmlLimits: { maxBytes: config.http.maxUploadBytes },
  };
}

/**
 * Threads for synchronous document work: the official rules (SaxonJS) and conversions hold a thread for as long as a
 * document takes (seconds for a 1,000-line invoice), so neither the API's event loop nor the worker's activity thread
 * runs them. Built at start, so a bad manifest or transition-window setting stops the process; packs load on first
 * use, except `preload` (`id@version`), which every thread loads as it starts. Undefined when configured off
 * (VALIDATION_THREADS=0) or when running from the TypeScript sources (the tests), which have no compiled thread
 * script: the work then runs in process.
 */
export function composeDocumentPool(
  config: Readonly<Config>,
  logger: Logger,
  preload: readonly string[] = [],
): ValidatorPool | undefined {
  if (config.validation.threads <= 0) return undefined;
  if (!existsSync(defaultWorkerScript())) {
    logger.info('running from sources: validation and conversions run in process (no compiled pool-worker.js)');
    return undefined;
  }
  // A heap cap per thread: a document that needs more fails alone instead of taking the process down.
  return createValidatorPool({
    ...validatorOptions(config),
    size: config.validation.threads,
    maxHeapMb: 2048,
    ...(preload.length ? { preload } : {}),
  });
}

/** The formats whose rule packs the worker's threads load at start: what the send path validates most. */
const WARM_FORMATS = ['peppol-bis3-ubl'];

/** The rule packs (`id@version`) of the warm formats, each once. */
export function warmRulePacks(formats: readonly string[] = WARM_FORMATS): string[] {
  const packs = new Set<string>();
  for (const id of formats) {
    const rules = catalogueEntry(id)?.rules;
    if (!rules || !('packs' in rules)) throw new Error(`no rule packs are mapped to the format ${id}`);
    for (const use of rules.packs) packs.add(use.pack);
  }
  return [...packs];
}

/** The HTTP application over a composed core: the one wiring the API process and the HTTP tests share. */
export function composeApp(
  core: Core,
  identity: { signingKeys: SigningKeyService; tokens: TokenService },
  workflows: WorkflowStarter,
  options: {
    metricsPrefix: string;
    metrics?: Registry;
    webhooks?: AppDeps['webhooks'];
    peppol?: AppDeps['peppol'];
    as4?: AppDeps['as4'];
    revocation?: RevocationChecker;
    documentWork?: AppDeps['documentWork'];
    /** Readiness checks besides the database and Temporal (the API process adds the rule packs). */
    readiness?: AppDeps['readiness'];
  },
): Application {
  const revocation = options.revocation ? { revocation: options.revocation } : {};
  const as4 = options.as4 ?? composeAs4Receiver(core, { workflows, ...revocation });
  return createApp({
    config: core.config,
    logger: core.logger,
    metrics: options.metrics ?? createMetricsRegistry(options.metricsPrefix),
    identity: core.identity,
    tokens: identity.tokens,
    signingKeys: identity.signingKeys,
    directory: core.directory,
    documents: core.documents,
    blobs: core.db.blobs,
    workflows,
    readiness: { database: () => core.db.ping(), temporal: () => workflows.ping(), ...options.readiness },
    ...(options.webhooks ? { webhooks: options.webhooks } : {}),
    peppol: options.peppol ?? composePeppolApi(core.config, core.db.models, core.logger, revocation),
    ...(as4 ? { as4 } : {}),
    ...(options.documentWork ? { documentWork: options.documentWork } : {}),
  });
}
