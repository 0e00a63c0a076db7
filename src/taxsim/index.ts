/**
 * taxsim: a local reference tax authority (the ViDA pilot's C5) for tests and the demo. It receives Tax Data Documents
 * over Peppol AS4 and over plain HTTP, validates them with the official artefacts, keeps the lifecycle per invoice and
 * reporter role, matches the supplier's and the buyer's reports, and answers with a Peppol MLS. Everything is kept in
 * memory: it is a simulator, and a restart forgets what it received.
 */
import type { X509Certificate } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { peppolParticipant, spidOfSeatId, type ParticipantId } from '../peppol/identifiers';
import type { KeyMaterial } from '../peppol/pki/key-material';
import type { ApKeyRing } from '../peppol/pki/key-ring';
import type { RevocationChecker } from '../peppol/pki/revocation';
import type { RecipientLookup } from '../peppol/recipient-lookup';
import type { Validator } from '../validation';
import { createTaxsimApp } from './app';
import { createTaxsimAs4 } from './as4';
import { Authority } from './authority';
import { Faults } from './faults';
import { Ledger } from './ledger';
import { MlsSender } from './mls-sender';

export { createTaxsimApp, isLoopbackAddress, type TaxsimAppDeps } from './app';
export { Authority, AuthorityUnavailableError, type IncomingReport } from './authority';
export { Faults, parseFault, type Fault } from './faults';
export { Ledger, exchangeKeyOf, type ReportRecord, type MatchView } from './ledger';
export { readTddFacts, TddUnreadableError, type TddFacts } from './tdd-facts';
export { TDD_DOCUMENT_TYPE, TDD_PROCESS } from './smp';

/** The Seat ID taxsim's demo certificate carries (its SPID is 0242:000950). */
export const TAXSIM_SEAT_ID = 'PTX000950';
export const TAXSIM_DEFAULT_PORT = 8090;
/** The countries taxsim serves by default, each under `0242:<SPID digits>-taxsim.tax_<cc>`. */
export const TAXSIM_DEFAULT_COUNTRIES = ['AT', 'BE', 'DE', 'DK', 'FI', 'FR', 'NL', 'NO'] as const;

/** The default participants: one per country, under the service provider id `spid` (`0242:nnnnnn`). */
export function defaultTaxsimParticipants(spid: ParticipantId): Record<string, string> {
  const digits = spid.value.replace(/^0242:/, '');
  return Object.fromEntries(
    TAXSIM_DEFAULT_COUNTRIES.map((cc) => [cc, `0242:${digits}-taxsim.tax_${cc.toLowerCase()}`]),
  );
}

export interface TaxsimPeppolOptions {
  keys: ApKeyRing;
  apCertificateAuthorities: readonly X509Certificate[];
  /** SML → SMP lookups of where the MLS goes; without it the MLS is recorded but not sent. */
  lookup?: Pick<RecipientLookup, 'findEndpoint'>;
  revocation?: RevocationChecker;
  /** Serve taxsim's own SMP at `/smp`, signed with this key. */
  smpSigner?: KeyMaterial;
  /** Waits between MLS attempts (default 1 s, 5 s, 30 s). */
  mlsRetryDelaysMs?: readonly number[];
  maxDecompressedBytes?: number;
  duplicateWindowMs?: number;
}

export interface StartTaxsimOptions {
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 0: a free port. */
  port?: number;
  /** The URL others reach it at (its AS4 endpoint and SMP are published under it); default `http://host:port`. */
  publicUrl?: string;
  /** Country → participant id (`0242:…`); default defaultTaxsimParticipants. */
  participants?: Readonly<Record<string, string>>;
  /** The gateway's validator over the pinned rule packs (validateTdd runs it). */
  validator: Validator;
  /** AS4 receiving and MLS sending; without it only the HTTP API works and /as4 answers 503. */
  peppol?: TaxsimPeppolOptions;
  limits?: { maxTddBytes?: number; maxAs4Bytes?: number; maxReports?: number; maxStoredBytes?: number };
  log?: (level: 'info' | 'warn' | 'error', message: string, fields?: Record<string, unknown>) => void;
  now?: () => Date;
}

export interface RunningTaxsim {
  /** Base URL, e.g. `http://127.0.0.1:8090`. */
  url: string;
  /** `<url>/as4`, or undefined without an AP key. */
  as4Url: string | undefined;
  /** `<url>/smp`, when it serves its SMP. */
  smpUrl: string | undefined;
  /** Country → participant id (`0242:…`). */
  participants: Record<string, string>;
  /** Our service provider id, the MLS sender (`0242:nnnnnn`). */
  spid: string;
  ledger: Ledger;
  faults: Faults;
  /** Settles when every AS4 report received so far is judged and its MLS sent or given up. */
  idle(): Promise<void>;
  stop(): Promise<void>;
}

const DEFAULT_LIMITS = {
  maxTddBytes: 10 * 1024 * 1024,
  maxAs4Bytes: 20 * 1024 * 1024,
  maxReports: 5000,
  maxStoredBytes: 256 * 1024 * 1024,
};

function checkedParticipants(input: Readonly<Record<string, string>>): Record<string, ParticipantId> {
  const out: Record<string, ParticipantId> = {};
  for (const [cc, id] of Object.entries(input)) {
    if (!/^[A-Z]{2}$/.test(cc)) throw new Error(`taxsim participants: "${cc}" is not an ISO 3166-1 alpha-2 code`);
    out[cc] = peppolParticipant(id.replace(/^iso6523-actorid-upis::/, ''));
  }
  if (Object.keys(out).length === 0) throw new Error('taxsim participants: at least one country is needed');
  return out;
}

/** taxsim's parts and its Express app, not yet listening (tests send requests to `app` in process). */
export interface ComposedTaxsim extends Omit<RunningTaxsim, 'stop'> {
  app: ReturnType<typeof createTaxsimApp>;
  /** Stops sending MLS (the attempts still waiting give up). */
  close: () => void;
}

/** Builds taxsim for the base URL `url` (its AS4 endpoint and SMP are published under it). */
export function composeTaxsim(options: StartTaxsimOptions & { url: string }): ComposedTaxsim {
  const url = options.url.replace(/\/+$/, '');
  const limits = { ...DEFAULT_LIMITS, ...(options.limits ?? {}) };
  const log = options.log ?? (() => undefined);
  const now = options.now ?? (() => new Date());
  const peppol = options.peppol;
  const spid = peppol ? spidOfSeatId(peppol.keys.seatId) : spidOfSeatId(TAXSIM_SEAT_ID);
  const participants = checkedParticipants(options.participants ?? defaultTaxsimParticipants(spid));

  const ledger = new Ledger({ maxReports: limits.maxReports, maxBytes: limits.maxStoredBytes });
  const faults = new Faults();
  const authority = new Authority({
    ledger,
    faults,
    validator: options.validator,
    participants,
    spid,
    maxTddBytes: limits.maxTddBytes,
    now,
  });
  const mlsSender =
    peppol?.lookup &&
    new MlsSender({
      keys: peppol.keys,
      apCertificateAuthorities: peppol.apCertificateAuthorities,
      lookup: peppol.lookup,
      ...(peppol.revocation ? { revocation: peppol.revocation } : {}),
      ...(peppol.mlsRetryDelaysMs ? { retryDelaysMs: peppol.mlsRetryDelaysMs } : {}),
    });
  const as4 =
    peppol &&
    createTaxsimAs4(
      {
        keys: peppol.keys,
        apCertificateAuthorities: peppol.apCertificateAuthorities,
        maxDecompressedBytes: peppol.maxDecompressedBytes ?? limits.maxTddBytes * 2,
        duplicateWindowMs: peppol.duplicateWindowMs ?? 7 * 86_400_000,
        ...(peppol.revocation ? { revocation: peppol.revocation } : {}),
      },
      {
        authority,
        ledger,
        participants,
        spid,
        ...(mlsSender ? { mlsSender } : {}),
        maxMessages: limits.maxReports,
        onError: (e, messageId) =>
          log('error', 'AS4 report could not be judged', { as4MessageId: messageId, err: String(e) }),
      },
    );
  const as4Url = as4 ? `${url}/as4` : undefined;
  const smpUrl = peppol?.smpSigner ? `${url}/smp` : undefined;
  const app = createTaxsimApp({
    authority,
    ledger,
    faults,
    participants,
    ...(as4 && as4Url ? { as4: { receiver: as4.receiver, url: as4Url, reset: () => as4.store.reset() } } : {}),
    ...(peppol?.smpSigner && smpUrl && as4Url
      ? {
          smp: {
            baseUrl: smpUrl,
            signer: peppol.smpSigner,
            participants: Object.values(participants),
            as4Url,
            apCertificate: peppol.keys.signing().certificate,
          },
        }
      : {}),
    maxTddBytes: limits.maxTddBytes,
    maxAs4Bytes: limits.maxAs4Bytes,
    log,
  });
  return {
    app,
    url,
    as4Url,
    smpUrl,
    participants: Object.fromEntries(Object.entries(participants).map(([cc, p]) => [cc, p.value])),
    spid: spid.value,
    ledger,
    faults,
    idle: () => (as4 ? as4.idle() : Promise.resolve()),
    close: () => mlsSender?.stop(),
  };
}

/** Starts taxsim on an HTTP server of its own (port 0: a free one). */
export async function startTaxsim(options: StartTaxsimOptions): Promise<RunningTaxsim> {
  const host = options.host ?? '127.0.0.1';
  const server: Server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const url = options.publicUrl ?? `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  const { app, close, ...taxsim } = composeTaxsim({ ...options, url });
  server.on('request', app);
  let stopping: Promise<void> | undefined;
  return {
    ...taxsim,
    stop: () => {
      stopping ??= (async () => {
        close();
        server.closeAllConnections();
        await new Promise<void>((r) => server.close(() => r()));
      })();
      return stopping;
    },
  };
}
