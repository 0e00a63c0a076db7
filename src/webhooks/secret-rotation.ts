import { randomBytes } from 'node:crypto';
import { GatewayError } from '../core/gateway-error';
import type { HookSecretDoc, HookSecretRepository } from '../storage/hooks/hook-secret.repository';
import { hookSecretId } from '../storage/hooks/hook-secret.repository';
import type { HookRecord, HookRepository } from '../storage/hooks/hook.repository';
import { SIGNED_ACTIONS } from './hook-validation';

/**
 * Rotating a hook's secret with an overlap window (decisions.md "Webhook secret rotation"): the new key signs at once,
 * the old one still signs until the window ends, so a receiver can switch its key at any moment inside it. Versions
 * are keyed inserts (`<hook id>:<version>`), the hook points at its latest with one write under its lease.
 */

/** Longest overlap accepted: longer than any receiver needs to change a key, short enough to retire a leaked one. */
export const MAX_OVERLAP_MS = 30 * 24 * 3_600_000;

/** `--overlap`: a whole number of seconds, minutes, hours or days (`90s`, `30m`, `24h`, `7d`); `0` ends it at once. */
export function parseOverlap(text: string): number {
  const m = /^(\d{1,7})([smhd])?$/.exec(text.trim());
  const unit = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };
  const ms = m ? Number(m[1]) * unit[(m[2] ?? 's') as keyof typeof unit] : NaN;
  if (!Number.isFinite(ms) || ms > MAX_OVERLAP_MS)
    throw new GatewayError('BAD_REQUEST', '--overlap must be a duration like 30m, 24h or 7d, at most 30d');
  return ms;
}

/** A new key in the Standard Webhooks form (`whsec_` + 32 random bytes, base64). */
export function generateSecureKey(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

export interface RotationResult {
  hook: HookRecord;
  version: number;
  /** Shown once: the receiver's new key. */
  secureKey: string;
  /** Until when the previous key signs too. */
  previousValidUntil: Date;
}

export interface RotationDeps {
  hooks: Pick<HookRepository, 'findInTenants' | 'rotateSecret'>;
  secrets: Pick<HookSecretRepository, 'insert' | 'get'>;
  now?: () => Date;
}

/**
 * Rotates the secret of a hook in the tenants. A rotation that stopped after storing its version and before switching
 * the hook is finished by the next call (with the key it stored), so a key is never issued twice for one version.
 */
export async function rotateHookSecret(
  deps: RotationDeps,
  tenantIds: readonly string[],
  hookId: string,
  overlapMs: number,
): Promise<RotationResult> {
  const now = deps.now?.() ?? new Date();
  const hook = await deps.hooks.findInTenants(tenantIds, hookId);
  if (!hook) throw new GatewayError('NOT_FOUND', `Hook ${hookId} not found in tenant ${tenantIds.join(', ')}`);
  if (!SIGNED_ACTIONS.has(hook.action))
    throw new GatewayError(
      'BAD_REQUEST',
      `Hook ${hookId} has action ${hook.action}; only signed (https) hooks have a secret`,
    );
  const version = (hook.secretVersion ?? 0) + 1;
  const draft: HookSecretDoc = {
    _id: hookSecretId(hook.id, version),
    hookId: hook.id,
    tenantId: hook.tenantId,
    version,
    secureKey: generateSecureKey(),
    previousSecureKey: hook.secureKey,
    previousValidUntil: new Date(now.getTime() + overlapMs),
    createdOn: now,
  };
  const stored = (await deps.secrets.insert(draft)) === 'inserted' ? draft : await deps.secrets.get(hook.id, version);
  if (!stored) throw new GatewayError('STORAGE_FAILED', `secret version ${version} of hook ${hook.id} cannot be read`);
  const rotated = await deps.hooks.rotateSecret({ tenantId: hook.tenantId }, hook.id, version, stored.secureKey);
  if (rotated === null) throw new GatewayError('NOT_FOUND', `Hook ${hookId} not found`);
  if (rotated === 'moved')
    throw new GatewayError('CONFLICT', `The secret of hook ${hookId} was rotated meanwhile; run the rotation again`);
  return { hook: rotated, version, secureKey: stored.secureKey, previousValidUntil: stored.previousValidUntil };
}

/** Immutable versions read by key, kept per process (a version never changes once written). */
export class HookSecretVersions {
  private readonly cache = new Map<string, HookSecretDoc>();

  constructor(
    private readonly secrets: Pick<HookSecretRepository, 'get'>,
    private readonly maxEntries = 10_000,
  ) {}

  /**
   * The key that signs beside the hook's own at `at`: the previous one while the latest rotation's window lasts and
   * the hook still has that rotation's key (a key set since through the API ends the overlap). Null otherwise.
   */
  async previousKey(hook: Pick<HookRecord, 'id' | 'secureKey' | 'secretVersion'>, at: Date): Promise<string | null> {
    const version = hook.secretVersion ?? 0;
    if (version === 0) return null;
    const id = hookSecretId(hook.id, version);
    let doc: HookSecretDoc | null | undefined = this.cache.get(id);
    if (doc === undefined) {
      doc = await this.secrets.get(hook.id, version);
      if (this.cache.size >= this.maxEntries) this.cache.clear();
      if (doc) this.cache.set(id, doc);
    }
    if (!doc || doc.secureKey !== hook.secureKey || !doc.previousSecureKey) return null;
    return at.getTime() < doc.previousValidUntil.getTime() ? doc.previousSecureKey : null;
  }
}
