import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { GatewayError } from '../core/gateway-error';
import { isPartyId } from '../core/identifiers';
import type { DirectoryRepository } from '../storage/directory.repository';
import type { DeliveryLogRepository } from '../storage/events/event.repository';
import type { HookSecretRepository } from '../storage/hooks/hook-secret.repository';
import type { HookRecord, HookRepository } from '../storage/hooks/hook.repository';
import {
  generateSecureKey,
  parseOverlap,
  redactHttpsinUrl,
  rotateHookSecret,
  validateHookBody,
  type AllowList,
  type EventPublisher,
} from '../webhooks';

/**
 * `npm run admin -- hook …`: support sets hooks up (spec 5: "Hooks can also be set up by support"). The same storage,
 * validation (SSRF guard included) and publisher as the API's hook routes; `ping` waits for the attempt's answer.
 */

type Options = Record<string, string | boolean | undefined>;

export interface HookCommandServices {
  directory: Pick<DirectoryRepository, 'getTenant' | 'findParty' | 'listTenants'>;
  hooks: Pick<HookRepository, 'create' | 'update' | 'list' | 'findInTenants' | 'rotateSecret'>;
  secrets: Pick<HookSecretRepository, 'insert' | 'get'>;
  deliveryLog: Pick<DeliveryLogRepository, 'listForEvent'>;
  settings: { allowHttp: boolean; allowList: AllowList; maxTimeoutMs: number };
  /** Ping publishes through it; absent without Temporal. */
  publisher?: Pick<EventPublisher, 'ping'>;
  /** How long ping waits for the attempt beyond the hook's timeout. */
  pingGraceMs?: number;
}

/** A hook as the CLI shows it: the API's view (no secureKey, URL passwords masked). */
export function hookSummary(h: HookRecord) {
  return {
    id: h.id,
    tenantId: h.tenantId,
    partyId: h.partyId,
    action: h.action,
    name: h.name,
    url:
      h.url === null ? null : /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*:[^/?#]*@/i.test(h.url) ? redactHttpsinUrl(h.url) : h.url,
    topics: h.topic ? [h.topic, ...h.topics.filter((t) => t !== h.topic)] : h.topics,
    isActive: h.isActive,
    disabledReason: h.disabledReason,
    secretVersion: h.secretVersion ?? 0,
  };
}

function text(o: Options, name: string): string | undefined {
  const v = o[name];
  if (v === undefined) return undefined;
  if (typeof v !== 'string' || v.length === 0) throw new GatewayError('BAD_REQUEST', `--${name} needs a value`);
  return v;
}

function invalid(errors: { path: string; message: string }[]): GatewayError {
  return new GatewayError('BAD_REQUEST', `Invalid hook: ${errors.map((e) => `${e.path}: ${e.message}`).join('; ')}`);
}

/** The body options of create / update, in the API's hook fields (spec 2.4). */
function bodyOptions(o: Options): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  const url = text(o, 'url');
  if (url !== undefined) body['url'] = url;
  const topic = text(o, 'topic');
  if (topic !== undefined) {
    const topics = topic
      .split(',')
      .map((t) => t.trim())
      .filter(Boolean);
    body['topic'] = null;
    body['topics'] = topics;
  }
  for (const [option, field] of [
    ['name', 'name'],
    ['action', 'action'],
    ['filter', 'filter'],
    ['secure-key', 'secureKey'],
  ] as const) {
    const v = text(o, option);
    if (v !== undefined) body[field] = v;
  }
  const timeout = text(o, 'timeout-seconds');
  if (timeout !== undefined) {
    if (!/^\d{1,6}$/.test(timeout)) throw new GatewayError('BAD_REQUEST', '--timeout-seconds must be a whole number');
    body['timeoutSeconds'] = Number(timeout);
  }
  const active = text(o, 'active');
  if (active !== undefined) {
    if (active !== 'true' && active !== 'false')
      throw new GatewayError('BAD_REQUEST', '--active must be true or false');
    body['isActive'] = active === 'true';
  }
  return body;
}

async function tenantOf(s: HookCommandServices, o: Options): Promise<string> {
  const tenant = text(o, 'tenant');
  if (tenant === undefined) throw new GatewayError('BAD_REQUEST', '--tenant is required');
  if (!(await s.directory.getTenant(tenant))) throw new GatewayError('NOT_FOUND', `Tenant ${tenant} not found`);
  return tenant;
}

/** The party of `--party` within the tenant, or null (environment level). */
async function partyOf(s: HookCommandServices, o: Options, tenantId: string): Promise<string | null> {
  const party = text(o, 'party');
  if (party === undefined) return null;
  if (!isPartyId(party)) throw new GatewayError('BAD_REQUEST', '--party must be <scheme>:<number>');
  const found = await s.directory.findParty(party);
  if (!found || found.tenantId !== tenantId)
    throw new GatewayError('NOT_FOUND', `Party ${party} not found in tenant ${tenantId}`);
  return found.partyId;
}

/** The hook named by the command (positional or --id); with --tenant it must be that tenant's. */
async function hookOf(s: HookCommandServices, o: Options, id: string | undefined): Promise<HookRecord> {
  const hookId = id ?? text(o, 'id');
  if (hookId === undefined) throw new GatewayError('BAD_REQUEST', 'give the hook id: hook <verb> <hook id>');
  const tenant = text(o, 'tenant');
  // The operator may act on any tenant; with --tenant the hook must be that tenant's.
  const tenants = tenant !== undefined ? [tenant] : (await s.directory.listTenants()).map((t) => t._id);
  const hook = await s.hooks.findInTenants(tenants, hookId);
  if (!hook) throw new GatewayError('NOT_FOUND', `Hook ${hookId} not found${tenant ? ` in tenant ${tenant}` : ''}`);
  return hook;
}

/** The hook's writable fields as a PUT body, so an update can change a few of them and keep the rest. */
function currentBody(h: HookRecord): Record<string, unknown> {
  return {
    action: h.action,
    name: h.name,
    url: h.url,
    topic: h.topic,
    topics: h.topics,
    filter: h.filter,
    output: h.output,
    mlsType: h.mlsType,
    isActive: h.isActive,
    timeoutSeconds: h.timeoutMs === null ? null : h.timeoutMs / 1000,
  };
}

export async function runHookCommand(
  verb: string | undefined,
  id: string | undefined,
  o: Options,
  s: HookCommandServices,
): Promise<unknown> {
  const validation = (mode: 'create' | 'update', hasStoredSecureKey = false) => ({
    mode,
    allowOutput: true,
    hasStoredSecureKey,
    ...s.settings,
  });
  switch (verb) {
    case 'list': {
      const tenantId = await tenantOf(s, o);
      const partyId = await partyOf(s, o, tenantId);
      return (await s.hooks.list(tenantId, partyId)).map(hookSummary);
    }
    case 'create': {
      const tenantId = await tenantOf(s, o);
      const partyId = await partyOf(s, o, tenantId);
      const body = bodyOptions(o);
      // A signed hook without a key given gets a new one, shown once.
      const url = text(o, 'url') ?? '';
      const action = text(o, 'action');
      const generated =
        body['secureKey'] === undefined && (action === 'https' || (action === undefined && /^https?:/i.test(url)));
      if (generated) body['secureKey'] = generateSecureKey();
      const v = validateHookBody(body, validation('create'));
      if (!v.ok) throw invalid(v.errors);
      const hook = await s.hooks.create({
        id: randomUUID(),
        tenantId,
        partyId,
        ...v.fields,
        secureKey: v.secureKey ?? null,
      });
      return { ...hookSummary(hook), ...(generated && v.secureKey ? { secureKey: v.secureKey } : {}) };
    }
    case 'update':
    case 'disable': {
      const hook = await hookOf(s, o, id);
      const body = { ...currentBody(hook), ...(verb === 'disable' ? { isActive: false } : bodyOptions(o)) };
      const v = validateHookBody(body, validation('update', hook.secureKey !== null));
      if (!v.ok) throw invalid(v.errors);
      const updated = await s.hooks.update(
        { tenantId: hook.tenantId, partyId: hook.partyId },
        hook.id,
        v.fields,
        v.secureKey,
      );
      if (!updated) throw new GatewayError('NOT_FOUND', `Hook ${hook.id} not found`);
      return hookSummary(updated);
    }
    case 'ping':
      return ping(s, await hookOf(s, o, id));
    case 'rotate-secret': {
      const hook = await hookOf(s, o, id);
      const overlap = text(o, 'overlap');
      const overlapMs = parseOverlap(overlap ?? '24h');
      const r = await rotateHookSecret({ hooks: s.hooks, secrets: s.secrets }, [hook.tenantId], hook.id, overlapMs);
      return {
        id: r.hook.id,
        secretVersion: r.version,
        secureKey: r.secureKey,
        previousKeyValidUntil: r.previousValidUntil.toISOString(),
      };
    }
    default:
      throw new GatewayError(
        'BAD_REQUEST',
        `hook ${verb ?? ''}: unknown; use hook list|create|update|disable|ping|rotate-secret`,
      );
  }
}

/** Publishes a Ping to the hook (signed like every delivery) and waits for its attempt's line in the delivery log. */
async function ping(s: HookCommandServices, hook: HookRecord): Promise<unknown> {
  if (!s.publisher) throw new GatewayError('DEPENDENCY_UNAVAILABLE', 'hook ping needs the Temporal server');
  const owner = hook.partyId ? await s.directory.findParty(hook.partyId) : null;
  const { event, deliveries } = await s.publisher.ping(hook, owner, 'admin');
  const delivery = deliveries.find((d) => d.hookId === hook.id);
  if (!delivery || (delivery.status !== 'started' && delivery.status !== 'running'))
    throw new GatewayError(
      'BAD_REQUEST',
      `Hook ${hook.id} (${hook.action}) is not delivered to over HTTP; nothing was sent`,
    );
  const waitMs =
    Math.min(hook.timeoutMs ?? s.settings.maxTimeoutMs, s.settings.maxTimeoutMs) + (s.pingGraceMs ?? 15_000);
  const until = Date.now() + waitMs;
  while (Date.now() < until) {
    const line = (await s.deliveryLog.listForEvent(hook.tenantId, event.id)).find((l) => l.hookId === hook.id);
    if (line)
      return {
        hookId: hook.id,
        eventId: event.id,
        deliveryId: line.deliveryId,
        outcome: line.outcome,
        httpStatus: line.httpStatus,
        latencyMs: line.latencyMs,
        error: line.error,
      };
    await sleep(200);
  }
  throw new GatewayError(
    'DEPENDENCY_UNAVAILABLE',
    `Ping ${event.id} was published but no attempt was logged within ${Math.round(waitMs / 1000)} s: is a worker running?`,
  );
}
