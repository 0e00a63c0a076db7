import { Schema, type Connection } from 'mongoose';

/** An output rule (spec 2.4, v1-beta): when the delivery result matches `when`, publish `topic`. */
export interface HookOutputRuleDoc {
  when: string;
  topic: string;
}

/** OAuth2 client credentials the receiver issued to the gateway (spec 5 item 12; RFC 6749 §4.4). */
export interface HookOAuth2Doc {
  tokenUrl: string;
  clientId: string;
  /** Kept as the secureKey is (sent in clear to the token endpoint); never returned by the API or the admin CLI. */
  clientSecret: string;
  scope?: string | null;
  audience?: string | null;
  /** How the gateway authenticates at the token endpoint; default `client_secret_basic`. */
  clientAuth?: 'client_secret_basic' | 'client_secret_post' | null;
}

/**
 * How deliveries to the hook authenticate beyond the HMAC signature, set by an operator (`admin hook-auth`), never
 * through the API, which neither takes nor shows it (the contract's hook resource has no such fields).
 */
export interface HookDeliveryAuthDoc {
  oauth2?: HookOAuth2Doc | null;
  /** Name of a client certificate in `WEBHOOK_CLIENT_CERT_DIR` (`<name>.crt` + `<name>.key`, PEM): mutual TLS. */
  clientCertificate?: string | null;
}

/**
 * A hook (spec 2.4). `partyId` null = environment (tenant) level. `secureKey` is kept because every delivery is signed
 * with it; the API never returns it. A PUT is one write, never delete + create. `rev` counts writes: each is made by
 * the one writer that took the hook's write lease for that rev (HookWriteDoc), so none is lost on FerretDB either.
 */
export interface HookDoc {
  _id: string;
  tenantId: string;
  /** Path form `<scheme>:<number>` of the party, or null for an environment-level hook. */
  partyId: string | null;
  action: string;
  name: string;
  url: string | null;
  topic: string | null;
  topics: string[];
  secureKey: string | null;
  filter: string | null;
  output: HookOutputRuleDoc[];
  mlsType: string | null;
  isActive: boolean;
  /** Per-hook attempt timeout, at most the configured maximum; null = the maximum. */
  timeoutMs: number | null;
  /** Why the gateway switched the hook off (`gone`: the receiver answered 410); null when a user did, or it is on. */
  disabledReason: string | null;
  /** Delivery authentication beyond the HMAC signature; absent or null = none. */
  deliveryAuth?: HookDeliveryAuthDoc | null;
  rev: number;
  /**
   * The hook's secret version after a rotation (`hook rotate-secret`): its HookSecretDoc `<hook id>:<version>` holds
   * the key before it and until when that one still signs. Absent (0) for a hook never rotated.
   */
  secretVersion?: number;
  createdOn: Date;
  changedOn: Date;
}

/**
 * One version of a hook's secret, written by a rotation: `_id` is `<hook id>:<version>`, inserted once and never
 * changed, so two rotations of one hook cannot both take a version. The hook then points at it (`secretVersion`, one
 * write under the hook's write lease). Deliveries sign with `previousSecureKey` too until `previousValidUntil`.
 */
export interface HookSecretDoc {
  _id: string;
  hookId: string;
  tenantId: string;
  version: number;
  secureKey: string;
  previousSecureKey: string | null;
  previousValidUntil: Date;
  createdOn: Date;
}

/**
 * The lease of one write of a hook: `_id` is `<hook id>:<rev written>:<n>`. A writer that read the hook at rev r
 * inserts `<id>:<r+1>:1`; the insert that lands makes it the hook's only writer (claim n+1 only once claim n has
 * expired: a writer that died). Deleted by its writer once the write is made.
 */
export interface HookWriteDoc {
  _id: string;
  hookId: string;
  rev: number;
  n: number;
  owner: string;
  at: Date;
  until: Date;
}

const str = { type: String, required: true } as const;
const nullableStr = { type: String, default: null } as const;

export function buildHookModels(conn: Connection) {
  const hook = new Schema<HookDoc>(
    {
      _id: str,
      tenantId: str,
      partyId: nullableStr,
      action: str,
      name: { type: String, default: '' },
      url: nullableStr,
      topic: nullableStr,
      topics: { type: [String], default: [] },
      secureKey: nullableStr,
      filter: nullableStr,
      output: { type: [{ _id: false, when: str, topic: str }], default: [] },
      mlsType: nullableStr,
      isActive: { type: Boolean, required: true },
      timeoutMs: { type: Number, default: null },
      disabledReason: nullableStr,
      deliveryAuth: { type: Schema.Types.Mixed, default: undefined },
      rev: { type: Number, default: 0 },
      secretVersion: { type: Number },
      createdOn: { type: Date, required: true },
      changedOn: { type: Date, required: true },
    },
    { versionKey: false },
  );
  // Routing reads the active hooks of one tenant (environment level plus one party) for every event.
  hook.index({ tenantId: 1, partyId: 1, isActive: 1 });
  const write = new Schema<HookWriteDoc>(
    {
      _id: str,
      hookId: str,
      rev: { type: Number, required: true },
      n: { type: Number, required: true },
      owner: str,
      at: { type: Date, required: true },
      until: { type: Date, required: true },
    },
    { versionKey: false },
  );
  const secret = new Schema<HookSecretDoc>(
    {
      _id: str,
      hookId: str,
      tenantId: str,
      version: { type: Number, required: true },
      secureKey: str,
      previousSecureKey: nullableStr,
      previousValidUntil: { type: Date, required: true },
      createdOn: { type: Date, required: true },
    },
    { versionKey: false },
  );
  return {
    HookSecret: conn.model<HookSecretDoc>('HookSecret', secret, 'hooksecrets'),
    Hook: conn.model<HookDoc>('Hook', hook, 'hooks'),
    HookWrite: conn.model<HookWriteDoc>('HookWrite', write, 'hookwrites'),
  };
}
