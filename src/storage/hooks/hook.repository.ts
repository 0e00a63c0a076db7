import type { Models } from '../models';
import type { HookDoc, HookOutputRuleDoc } from './hook.schema';

/** A stored hook as the rest of the gateway sees it (`id` instead of `_id`). */
export interface HookRecord {
  id: string;
  tenantId: string;
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
  timeoutMs: number | null;
  disabledReason: string | null;
  rev: number;
  createdOn: Date;
  changedOn: Date;
}

/** The fields a caller writes; the rest (ids, timestamps, rev) belong to the repository. */
export interface HookFields {
  action: string;
  name: string;
  url: string | null;
  topic: string | null;
  topics: string[];
  filter: string | null;
  output: HookOutputRuleDoc[];
  mlsType: string | null;
  isActive: boolean;
  timeoutMs: number | null;
}

/** Which hooks a call may touch: a tenant, and optionally exactly one level (party path form, or null = environment). */
export interface HookScope {
  tenantId: string;
  /** undefined: any level of the tenant; null: environment level only; a string: that party only. */
  partyId?: string | null;
}

function toRecord(doc: HookDoc): HookRecord {
  return {
    id: doc._id,
    tenantId: doc.tenantId,
    partyId: doc.partyId ?? null,
    action: doc.action,
    name: doc.name ?? '',
    url: doc.url ?? null,
    topic: doc.topic ?? null,
    topics: [...(doc.topics ?? [])],
    secureKey: doc.secureKey ?? null,
    filter: doc.filter ?? null,
    output: (doc.output ?? []).map((r) => ({ when: r.when, topic: r.topic })),
    mlsType: doc.mlsType ?? null,
    isActive: doc.isActive,
    timeoutMs: doc.timeoutMs ?? null,
    disabledReason: doc.disabledReason ?? null,
    rev: doc.rev ?? 0,
    createdOn: doc.createdOn,
    changedOn: doc.changedOn,
  };
}

/** Called after a write to a hook in this process (created, updated, deleted, switched off). */
export type HookChangeListener = (tenantId: string, hookId: string) => void;

/**
 * Process-wide, so every repository instance's writes reach every cache of hooks in the process (the API's routes and
 * the worker's activities may each hold their own repository).
 */
const changeListeners = new Set<HookChangeListener>();

/** Subscribes to hook writes made in this process; returns the unsubscribe function. */
export function onHookChange(listener: HookChangeListener): () => void {
  changeListeners.add(listener);
  return () => changeListeners.delete(listener);
}

function hookChanged(tenantId: string, hookId: string): void {
  for (const listener of changeListeners) listener(tenantId, hookId);
}

function scopeFilter(scope: HookScope): Record<string, unknown> {
  return scope.partyId === undefined ? { tenantId: scope.tenantId } : { tenantId: scope.tenantId, partyId: scope.partyId };
}

/**
 * Hooks, always read and written within one tenant. Every write is a single-document operation; an update is one
 * findOneAndUpdate, so a hook is never absent while it changes (the delete/create race of spec 6.10 cannot happen).
 */
export class HookRepository {
  constructor(private readonly models: Models) {}

  async create(input: HookFields & { id: string; tenantId: string; partyId: string | null; secureKey: string | null }): Promise<HookRecord> {
    const now = new Date();
    const doc: HookDoc = {
      _id: input.id,
      tenantId: input.tenantId,
      partyId: input.partyId,
      action: input.action,
      name: input.name,
      url: input.url,
      topic: input.topic,
      topics: input.topics,
      secureKey: input.secureKey,
      filter: input.filter,
      output: input.output,
      mlsType: input.mlsType,
      isActive: input.isActive,
      timeoutMs: input.timeoutMs,
      disabledReason: null,
      rev: 0,
      createdOn: now,
      changedOn: now,
    };
    await this.models.Hook.create(doc);
    hookChanged(doc.tenantId, doc._id);
    return toRecord(doc);
  }

  /** By id, then the scope checked on the document (FerretDB scans when more than `_id` is in the filter). */
  async get(scope: HookScope, hookId: string): Promise<HookRecord | null> {
    const doc = await this.models.Hook.findById(hookId).lean<HookDoc>().exec();
    if (!doc || doc.tenantId !== scope.tenantId) return null;
    if (scope.partyId !== undefined && (doc.partyId ?? null) !== scope.partyId) return null;
    return toRecord(doc);
  }

  /** A hook by id within any of these tenants (a caller holding several). */
  async findInTenants(tenantIds: readonly string[], hookId: string): Promise<HookRecord | null> {
    const doc = await this.models.Hook.findById(hookId).lean<HookDoc>().exec();
    return doc && tenantIds.includes(doc.tenantId) ? toRecord(doc) : null;
  }

  /** Hooks of exactly one level: the environment (partyId null) or one party; oldest first. */
  async list(tenantId: string, partyId: string | null): Promise<HookRecord[]> {
    const docs = await this.models.Hook.find({ tenantId, partyId }).sort({ createdOn: 1, _id: 1 }).lean<HookDoc[]>().exec();
    return docs.map(toRecord);
  }

  /** Active hooks an event of this tenant and party can go to: the environment level plus that party's. */
  async listForRouting(tenantId: string, partyKey: string | null): Promise<HookRecord[]> {
    const levels: Array<string | null> = partyKey ? [null, partyKey] : [null];
    const docs = await this.models.Hook.find({ tenantId, isActive: true, partyId: { $in: levels } }).lean<HookDoc[]>().exec();
    return docs.map(toRecord);
  }

  /**
   * Replaces the writable fields in one atomic write. `secureKey` undefined keeps the stored key (it is write-only, so
   * a client cannot send it back); `output` undefined keeps the stored rules (v1 does not know them). Switching a hook on clears the gateway's own disabledReason.
   */
  async update(
    scope: HookScope,
    hookId: string,
    fields: Omit<HookFields, 'output'> & Partial<Pick<HookFields, 'output'>>,
    secureKey: string | undefined,
  ): Promise<HookRecord | null> {
    const set: Record<string, unknown> = { changedOn: new Date() };
    for (const [k, v] of Object.entries(fields)) if (v !== undefined) set[k] = v;
    if (secureKey !== undefined) set['secureKey'] = secureKey;
    if (fields.isActive) set['disabledReason'] = null;
    const doc = await this.models.Hook.findOneAndUpdate(
      { ...scopeFilter(scope), _id: hookId },
      { $set: set, $inc: { rev: 1 } },
      { returnDocument: 'after' },
    )
      .lean<HookDoc>()
      .exec();
    // Also when nothing matched: a cache may hold the hook under a scope that no longer fits it.
    hookChanged(scope.tenantId, hookId);
    return doc ? toRecord(doc) : null;
  }

  async delete(scope: HookScope, hookId: string): Promise<boolean> {
    const res = await this.models.Hook.deleteOne({ ...scopeFilter(scope), _id: hookId }).exec();
    hookChanged(scope.tenantId, hookId);
    return res.deletedCount === 1;
  }

  /** Switches a hook off on the gateway's own account (a 410 from the receiver). True when this call did it. */
  async disable(tenantId: string, hookId: string, reason: string): Promise<boolean> {
    const res = await this.models.Hook.updateOne(
      { tenantId, _id: hookId, isActive: true },
      { $set: { isActive: false, disabledReason: reason, changedOn: new Date() }, $inc: { rev: 1 } },
    ).exec();
    hookChanged(tenantId, hookId);
    return res.modifiedCount === 1;
  }
}
