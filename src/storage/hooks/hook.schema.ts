import { Schema, type Connection } from 'mongoose';

/** An output rule (spec 2.4, v1-beta): when the delivery result matches `when`, publish `topic`. */
export interface HookOutputRuleDoc {
  when: string;
  topic: string;
}

/**
 * A hook (spec 2.4). `partyId` null = environment (tenant) level. `secureKey` is kept because every delivery is signed
 * with it; the API never returns it. A PUT is one write, never delete + create. `rev` counts updates; it is exact on
 * MongoDB, while FerretDB 1.24 applies concurrent updates of one document as read-modify-write and can lose increments.
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
  rev: number;
  createdOn: Date;
  changedOn: Date;
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
      rev: { type: Number, default: 0 },
      createdOn: { type: Date, required: true },
      changedOn: { type: Date, required: true },
    },
    { versionKey: false },
  );
  // Routing reads the active hooks of one tenant (environment level plus one party) for every event.
  hook.index({ tenantId: 1, partyId: 1, isActive: 1 });
  return { Hook: conn.model<HookDoc>('Hook', hook, 'hooks') };
}
