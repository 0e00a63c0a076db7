import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { mongo } from 'mongoose';
import { GatewayError } from '../../core/gateway-error';
import type { Models } from '../models';
import { withStorageRetries } from '../retry';
import { dropNumberedLeases, takeNumberedLease } from '../lease';
import type { HookDeliveryAuthDoc, HookDoc, HookOutputRuleDoc, HookWriteDoc } from './hook.schema';

/** A stored hook as the rest of the gateway sees it (`id` instead of `_id`). */
export type HookRecord = Omit<HookDoc, '_id'> & { id: string };

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

/**
 * Which hooks a call may touch: a tenant, and optionally exactly one level (party path form, or null = environment).
 */
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
    ...(doc.deliveryAuth ? { deliveryAuth: doc.deliveryAuth } : {}),
    rev: doc.rev ?? 0,
    ...(doc.secretVersion ? { secretVersion: doc.secretVersion } : {}),
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

/** How long a hook write keeps other writers of the hook off: one update, far less than this. */
export const HOOK_WRITE_LEASE_MS = 15_000;
/** Tries of a write that finds another writer at the hook, with pauses growing from 5 ms to 200 ms (about 23 s). */
const WRITE_TRIES = 120;

function inScope(doc: HookDoc, scope: HookScope): boolean {
  return doc.tenantId === scope.tenantId && (scope.partyId === undefined || (doc.partyId ?? null) === scope.partyId);
}

/**
 * Hooks, always read and written within one tenant. A hook is one document, changed in place (never absent while it
 * changes, so the delete/create race of spec 6.10 cannot happen), by one writer at a time: FerretDB applies an update
 * as read-modify-write, so two updates of one document (a PUT and the worker's 410 switch-off) could lose one, and a
 * guarded update is no compare-and-set. A writer reads the hook at rev r and takes the write lease of rev r+1 with an
 * insert (HookWriteDoc); the one whose insert lands reads the hook again, still at r, writes it with rev r+1 and
 * drops the lease. The others read again and retry, so every write is counted in `rev` and none is lost.
 */
export class HookRepository {
  constructor(private readonly models: Models) {}

  async create(
    input: HookFields & { id: string; tenantId: string; partyId: string | null; secureKey: string | null },
  ): Promise<HookRecord> {
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

  /**
   * A hook by id alone, whatever its tenant: only for callers whose credentials are the hook's own (the httpsin inbox,
   * which checks the hook URL's user:password before anything of the hook is used).
   */
  async findForCredentials(hookId: string): Promise<HookRecord | null> {
    const doc = await this.models.Hook.findById(hookId).lean<HookDoc>().exec();
    return doc ? toRecord(doc) : null;
  }

  /** Hooks of exactly one level: the environment (partyId null) or one party; oldest first. */
  async list(tenantId: string, partyId: string | null): Promise<HookRecord[]> {
    const docs = await this.models.Hook.find({ tenantId, partyId })
      .sort({ createdOn: 1, _id: 1 })
      .lean<HookDoc[]>()
      .exec();
    return docs.map(toRecord);
  }

  /** Active hooks an event of this tenant and party can go to: the environment level plus that party's. */
  async listForRouting(tenantId: string, partyKey: string | null): Promise<HookRecord[]> {
    const levels: Array<string | null> = partyKey ? [null, partyKey] : [null];
    const docs = await this.models.Hook.find({ tenantId, isActive: true, partyId: { $in: levels } })
      .lean<HookDoc[]>()
      .exec();
    return docs.map(toRecord);
  }

  /**
   * Replaces the writable fields in one write. `secureKey` undefined keeps the stored key (it is write-only, so
   * a client cannot send it back); `output` undefined keeps the stored rules (v1 does not know them). Switching a
   * hook on clears the gateway's own disabledReason.
   */
  async update(
    scope: HookScope,
    hookId: string,
    fields: Omit<HookFields, 'output'> & Partial<Pick<HookFields, 'output'>>,
    secureKey: string | undefined,
  ): Promise<HookRecord | null> {
    const set: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(fields)) if (v !== undefined) set[k] = v;
    if (secureKey !== undefined) set['secureKey'] = secureKey;
    if (fields.isActive) set['disabledReason'] = null;
    try {
      return await this.write(hookId, async (doc, rev) => {
        if (!inScope(doc, scope)) return { result: null };
        const changed = { ...set, changedOn: new Date(), rev };
        await withStorageRetries(() => this.hooks.updateOne({ _id: hookId }, { $set: changed }));
        return { result: toRecord({ ...doc, ...changed }) };
      });
    } finally {
      // Also when nothing matched: a cache may hold the hook under a scope that no longer fits it.
      hookChanged(scope.tenantId, hookId);
    }
  }

  async delete(scope: HookScope, hookId: string): Promise<boolean> {
    try {
      return (
        (await this.write(hookId, async (doc) => {
          if (!inScope(doc, scope)) return { result: false };
          await withStorageRetries(() => this.hooks.deleteOne({ _id: hookId }));
          return { result: true };
        })) ?? false
      );
    } finally {
      hookChanged(scope.tenantId, hookId);
    }
  }

  /** Switches a hook off on the gateway's own account (a 410 from the receiver). True when this call did it. */
  async disable(tenantId: string, hookId: string, reason: string): Promise<boolean> {
    try {
      return (
        (await this.write(hookId, async (doc, rev) => {
          if (doc.tenantId !== tenantId || !doc.isActive) return { result: false };
          const off = { isActive: false, disabledReason: reason, changedOn: new Date(), rev };
          await withStorageRetries(() => this.hooks.updateOne({ _id: hookId }, { $set: off }));
          return { result: true };
        })) ?? false
      );
    } finally {
      hookChanged(tenantId, hookId);
    }
  }

  /**
   * Points the hook at secret version `version` (already stored) and makes its key the hook's: one write under the
   * hook's lease. 'moved' when the hook is no longer at the version before (another rotation, or a change of scope).
   */
  async rotateSecret(
    scope: HookScope,
    hookId: string,
    version: number,
    secureKey: string,
  ): Promise<HookRecord | 'moved' | null> {
    try {
      return await this.write<HookRecord | 'moved' | null>(hookId, async (doc, rev) => {
        if (!inScope(doc, scope)) return { result: null };
        if ((doc.secretVersion ?? 0) !== version - 1) return { result: 'moved' as const };
        const changed = { secureKey, secretVersion: version, changedOn: new Date(), rev };
        await withStorageRetries(() => this.hooks.updateOne({ _id: hookId }, { $set: changed }));
        return { result: toRecord({ ...doc, ...changed }) };
      });
    } finally {
      hookChanged(scope.tenantId, hookId);
    }
  }

  /**
   * Sets (or with null removes) how deliveries to the hook authenticate beyond the signature: the operator's write
   * (admin CLI), under the hook write lease like every other. Null when the hook is not in the tenant.
   */
  async setDeliveryAuth(
    tenantId: string,
    hookId: string,
    auth: HookDeliveryAuthDoc | null,
  ): Promise<HookRecord | null> {
    try {
      return await this.write(hookId, async (doc, rev) => {
        if (doc.tenantId !== tenantId) return { result: null };
        const changed = { deliveryAuth: auth, changedOn: new Date(), rev };
        await withStorageRetries(() => this.hooks.updateOne({ _id: hookId }, { $set: changed }));
        return { result: toRecord({ ...doc, ...changed }) };
      });
    } finally {
      hookChanged(tenantId, hookId);
    }
  }

  private get hooks(): mongo.Collection<HookDoc> {
    return this.models.Hook.collection as unknown as mongo.Collection<HookDoc>;
  }

  private get leases(): mongo.Collection<HookWriteDoc> {
    return this.models.HookWrite.collection as unknown as mongo.Collection<HookWriteDoc>;
  }

  /**
   * Runs `change` as the hook's only writer, with the rev it is to write; null when the hook does not exist. The
   * lease is keyed by the rev written, so a writer that read the hook before another's write finds it taken, or, once
   * dropped, finds the hook at a later rev when it reads it again, and starts over.
   */
  private async write<T>(
    hookId: string,
    change: (doc: HookDoc, rev: number) => Promise<{ result: T }>,
  ): Promise<T | null> {
    const owner = randomUUID();
    for (let tries = 0, pause = 5; tries < WRITE_TRIES; tries++, pause = Math.min(pause * 2, 200)) {
      const doc = await this.models.Hook.findById(hookId).lean<HookDoc>().exec();
      if (!doc) return null;
      const rev = (doc.rev ?? 0) + 1;
      const key = `${hookId}:${rev}`;
      const now = new Date();
      const until = new Date(now.getTime() + HOOK_WRITE_LEASE_MS);
      const lease = await takeNumberedLease(this.leases, key, owner, now, until, { hookId, rev });
      if (lease) {
        try {
          const again = await this.models.Hook.findById(hookId).lean<HookDoc>().exec();
          if (!again) return null;
          if ((again.rev ?? 0) + 1 === rev) return (await change(again, rev)).result;
        } finally {
          await dropNumberedLeases(this.leases, key, lease.n);
        }
      }
      await sleep(pause);
    }
    throw new GatewayError('STORAGE_FAILED', `hook ${hookId} is being written by others; try again`);
  }
}
