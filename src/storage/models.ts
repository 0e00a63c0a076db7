import { Schema, type Connection } from 'mongoose';
import type { DetectedFormatSummary } from '../../workflows/contracts/send-invoice';
import { buildHookModels } from './hooks/hook.schema';
import { buildEventModels } from './events/event.schema';
import { buildReplayModels } from './replay/replay-journal.schema';
import { buildPeppolDirectoryModels } from './peppol/peppol-directory.schema';
import { buildPeppolMigrationModels } from './peppol/peppol-migration.schema';
import { buildAs4Models } from './as4/as4-inbound.schema';
import { buildSentInstanceModels } from './peppol/sent-instance.schema';
import { buildReportingItemModels } from './reporting/reporting-item.schema';
import { buildSentReferenceModels } from './peppol/sent-reference.schema';
import { buildLeaseModel } from './lease.schema';
import { buildRetentionModels } from './retention/retention.schema';
import { buildPartnerModels } from './partners/partner.schema';

/*
 * Persistence shapes. Only features that both MongoDB and FerretDB 1.24 support: no multi-document transactions,
 * no TTL or partial indexes, no $lookup, no positional array updates. FerretDB 1.x also makes no single-document
 * update atomic and no conditional update a compare-and-set: anything two writers can reach at once is a uniquely
 * keyed insert, never an update (test/integration/storage-guarantees.test.ts; "Storage writes" in docs/decisions.md).
 */

export interface TenantDoc {
  _id: string;
  name: string;
  createdAt: Date;
}

export interface PartyDoc {
  _id: string;
  tenantId: string;
  /** Path form `<scheme>:<number>`, e.g. `0106:12345678` (spec 2.3). Unique across the gateway. */
  partyId: string;
  /**
   * The party id lower-cased: Peppol participant identifiers (iso6523-actorid-upis) are case-insensitive, so two
   * parties that differ only in case would be one participant. Unique; the AS4 receiver finds a party by it.
   */
  participantKey: string;
  /** Payload form `<country>:<scheme>:<number>`, the legalEntityId. */
  legalEntityId: string;
  name: string;
  createdAt: Date;
}

export interface ClientSecretDoc {
  id: string;
  hash: string;
  createdAt: Date;
  revokedAt?: Date | null;
}

export interface ClientDoc {
  _id: string;
  name: string;
  tenantIds: string[];
  secrets: ClientSecretDoc[];
  disabled: boolean;
  createdAt: Date;
}

export interface UserDoc {
  _id: string;
  tenantId: string;
  username: string;
  passwordHash: string;
  partyIds: string[];
  disabled: boolean;
  createdAt: Date;
}

export interface SigningKeyDoc {
  _id: string;
  alg: string;
  privateJwk: Record<string, unknown>;
  publicJwk: Record<string, unknown>;
  createdAt: Date;
  notAfter?: Date | null;
}

export interface HistoryEntry {
  state: string;
  at: Date;
  detail?: string;
  channel?: string;
  nextAttemptOn?: Date;
  /** An invoice response's status code (AB, IP, UQ, CA, RE, AP, PD) on the sales invoice it answers. */
  responseCode?: string;
  /** Idempotency key of the transition that wrote this entry. */
  key: string;
}

/** The format detection found, as the workflow carries it and the record keeps it (one shape for both). */
export type DocumentFormatInfo = DetectedFormatSummary;

/** One assertion kept on the record (the validate endpoint's shape). */
export interface ValidationAssertionInfo {
  artifact: string;
  flag: string;
  ruleId: string;
  location: string;
  text: string;
  reasonCode: string;
  ruleSet: string;
}

/** An assertion as the record keeps it and the status resource shows it: these fields only, in this order. */
export function assertionInfo(a: ValidationAssertionInfo): ValidationAssertionInfo {
  return {
    artifact: a.artifact,
    flag: a.flag,
    ruleId: a.ruleId,
    location: a.location,
    text: a.text,
    reasonCode: a.reasonCode,
    ruleSet: a.ruleSet,
  };
}

/** The outcome of the validation step, kept on the record for the status endpoint and the audit trail. */
export interface DocumentValidationInfo {
  isValid: boolean;
  ruleSets: Array<{ id: string; version: string; outcome: string }>;
  /** Errors first, capped (see `truncated`); warnings are kept after them while room remains. */
  assertions: ValidationAssertionInfo[];
  errorCount: number;
  warningCount: number;
  truncated: boolean;
  validatedAt: Date;
}

/**
 * A stored document: written once at upload (or when a received message is registered) and never updated, so no two
 * writers ever meet on it. What happens to it later is in its history entries (`DocumentHistoryDoc`).
 */
export interface DocumentDoc {
  _id: string;
  tenantId: string;
  /** Caller-visible id (X-Service-DocumentId or generated). Unique per tenant. */
  documentId: string;
  partyId: string;
  /** The party's legal-entity id when the record was written (null on records written before it was kept). */
  legalEntityId?: string | null;
  direction: 'outbound' | 'inbound';
  channel?: string | null;
  createdBy: string;
  contentType: string;
  filename?: string | null;
  size: number;
  sha256: string;
  blobId: string;
  createdAt: Date;
}

/**
 * One step of a document's life, inserted once under `<record key>#<step key>` (a retried step's insert meets the
 * unique `_id` and writes nothing). The detection entry carries the format found, the validation entry the verdict.
 */
export interface DocumentHistoryDoc {
  _id: string;
  /** The record's `_id`. */
  docKey: string;
  key: string;
  state: string;
  /** The step's place in the document's sequence (src/core/document-states.ts). */
  order: number;
  at: Date;
  detail?: string;
  /** The delivery channel of a sending step: its hook id, or `peppol` for the implicit Peppol channel. */
  channel?: string;
  /** A scheduled retry's entry: when the next attempt is due. */
  nextAttemptOn?: Date;
  /** An invoice response entry: the buyer's status code. */
  responseCode?: string;
  format?: DocumentFormatInfo | null;
  validation?: DocumentValidationInfo | null;
}

const str = { type: String, required: true } as const;

export function buildModels(conn: Connection) {
  const tenant = new Schema<TenantDoc>(
    { _id: str, name: str, createdAt: { type: Date, required: true } },
    { versionKey: false },
  );

  const party = new Schema<PartyDoc>(
    {
      _id: str,
      tenantId: str,
      partyId: str,
      participantKey: str,
      legalEntityId: str,
      name: str,
      createdAt: { type: Date, required: true },
    },
    { versionKey: false },
  );
  party.index({ partyId: 1 }, { unique: true });
  party.index({ participantKey: 1 }, { unique: true });
  party.index({ tenantId: 1, partyId: 1 });

  const client = new Schema<ClientDoc>(
    {
      _id: str,
      name: str,
      tenantIds: { type: [String], default: [] },
      secrets: {
        type: [
          {
            _id: false,
            id: str,
            hash: str,
            createdAt: { type: Date, required: true },
            revokedAt: { type: Date, default: null },
          },
        ],
        default: [],
      },
      disabled: { type: Boolean, default: false },
      createdAt: { type: Date, required: true },
    },
    { versionKey: false },
  );

  const user = new Schema<UserDoc>(
    {
      _id: str,
      tenantId: str,
      username: str,
      passwordHash: str,
      partyIds: { type: [String], default: [] },
      disabled: { type: Boolean, default: false },
      createdAt: { type: Date, required: true },
    },
    { versionKey: false },
  );
  user.index({ username: 1 }, { unique: true });

  const signingKey = new Schema<SigningKeyDoc>(
    {
      _id: str,
      alg: str,
      privateJwk: { type: Schema.Types.Mixed, required: true },
      publicJwk: { type: Schema.Types.Mixed, required: true },
      createdAt: { type: Date, required: true },
      notAfter: { type: Date, default: null },
    },
    { versionKey: false },
  );

  const formatSchema = new Schema(
    {
      id: str,
      name: str,
      syntax: str,
      documentType: str,
      customizationId: String,
      profileId: String,
      documentTypeId: String,
    },
    { _id: false },
  );
  const validationSchema = new Schema(
    {
      isValid: { type: Boolean, required: true },
      ruleSets: { type: [{ _id: false, id: str, version: str, outcome: str }], default: [] },
      assertions: {
        type: [
          {
            _id: false,
            artifact: str,
            flag: str,
            ruleId: str,
            location: str,
            text: str,
            reasonCode: str,
            ruleSet: str,
          },
        ],
        default: [],
      },
      errorCount: { type: Number, required: true },
      warningCount: { type: Number, required: true },
      truncated: { type: Boolean, required: true },
      validatedAt: { type: Date, required: true },
    },
    { _id: false },
  );

  const document = new Schema<DocumentDoc>(
    {
      _id: str,
      tenantId: str,
      documentId: str,
      partyId: str,
      direction: { type: String, enum: ['outbound', 'inbound'], required: true },
      legalEntityId: { type: String, default: null },
      channel: { type: String, default: null },
      createdBy: str,
      contentType: str,
      filename: { type: String, default: null },
      size: { type: Number, required: true },
      sha256: str,
      blobId: str,
      createdAt: { type: Date, required: true },
    },
    { versionKey: false },
  );
  // The permanent idempotency guard for X-Service-DocumentId (Temporal only remembers ids for its retention).
  document.index({ tenantId: 1, documentId: 1 }, { unique: true });
  document.index({ tenantId: 1, partyId: 1, createdAt: -1 });

  const history = new Schema<DocumentHistoryDoc>(
    {
      _id: str,
      docKey: str,
      key: str,
      state: str,
      order: { type: Number, required: true },
      at: { type: Date, required: true },
      detail: String,
      channel: String,
      nextAttemptOn: Date,
      responseCode: String,
      format: { type: formatSchema, default: undefined },
      validation: { type: validationSchema, default: undefined },
    },
    { versionKey: false },
  );
  history.index({ docKey: 1 });

  return {
    Tenant: conn.model<TenantDoc>('Tenant', tenant, 'tenants'),
    Party: conn.model<PartyDoc>('Party', party, 'parties'),
    Client: conn.model<ClientDoc>('Client', client, 'clients'),
    User: conn.model<UserDoc>('User', user, 'users'),
    SigningKey: conn.model<SigningKeyDoc>('SigningKey', signingKey, 'signingkeys'),
    Document: conn.model<DocumentDoc>('Document', document, 'documents'),
    DocumentHistory: conn.model<DocumentHistoryDoc>('DocumentHistory', history, 'documenthistory'),
    Lease: buildLeaseModel(conn),
    ...buildHookModels(conn),
    ...buildEventModels(conn),
    ...buildPeppolDirectoryModels(conn),
    ...buildPeppolMigrationModels(conn),
    ...buildAs4Models(conn),
    ...buildSentInstanceModels(conn),
    ...buildSentReferenceModels(conn),
    ...buildReportingItemModels(conn),
    ...buildRetentionModels(conn),
    ...buildReplayModels(conn),
    ...buildPartnerModels(conn),
  };
}

export type Models = ReturnType<typeof buildModels>;
