import { randomUUID } from 'node:crypto';
import type { Request, Response, Router } from 'express';
import { principalOf, type Principal } from '../../src/auth/authenticate';
import { GatewayError } from '../../src/core/gateway-error';
import { isLegalEntityId, isPartyId, partyIdOfLegalEntity } from '../../src/core/identifiers';
import { validateTopicPattern } from '../../src/core/topics';
import type { DirectoryRepository, PartyRecord } from '../../src/storage/directory.repository';
import type { DeliveryLogRepository, EventRecord, EventRepository } from '../../src/storage/events/event.repository';
import type { HookRecord, HookRepository } from '../../src/storage/hooks/hook.repository';
import {
  redactHttpsinUrl,
  validateHookBody,
  type AllowList,
  type DeliveryStart,
  type EventPublisher,
  type HookValidationOptions,
  type HttpsinInbox,
} from '../../src/webhooks';
import { canReachParty, environmentTenant, partyOf, requireParty } from '../access';
import { jsonBody, queryString } from '../request';

/**
 * Hooks (decisions.md "Hook endpoints"), the missed-events batch and the delivery log. Access: a hook or event belongs
 * to a tenant and optionally a party. Environment-level hooks and events are for client_credentials callers of that
 * tenant; a password-grant user reaches only its linked parties (spec 5.3). Anything outside a caller's reach is
 * answered exactly as if it did not exist (404), except `{partyId}` paths, which answer 403 as the rest of the API.
 */

export interface WebhookApiServices {
  hooks: HookRepository;
  events: EventRepository;
  deliveryLog: DeliveryLogRepository;
  /** The inboxes of httpsin hooks (api/routes/inbox.routes.ts). */
  inbox: HttpsinInbox;
  publisher: EventPublisher;
  settings: { allowHttp: boolean; allowList: AllowList; maxTimeoutMs: number };
}

export interface WebhookRouteDeps {
  directory: DirectoryRepository;
  /** Absent in a process not wired for webhooks: the routes exist (the contract is complete) and answer 503. */
  webhooks?: WebhookApiServices | undefined;
}

/** A hook as the API shows it: never the secureKey, a password in the URL masked. */
export function hookView(h: HookRecord) {
  return {
    id: h.id,
    action: h.action,
    name: h.name,
    // Credentials in a URL (httpsin always, https sometimes) are as secret as the secureKey.
    url:
      h.url === null ? null : /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*:[^/?#]*@/i.test(h.url) ? redactHttpsinUrl(h.url) : h.url,
    topic: h.topic,
    topics: h.topics,
    filter: h.filter,
    output: h.output,
    mlsType: h.mlsType,
    isActive: h.isActive,
    partyId: h.partyId,
    timeoutSeconds: h.timeoutMs === null ? null : h.timeoutMs / 1000,
    disabledReason: h.disabledReason,
    hasSecureKey: h.secureKey !== null,
    createdOn: h.createdOn.toISOString(),
    changedOn: h.changedOn.toISOString(),
  };
}

export function eventView(e: EventRecord) {
  const firstHook = e.routes.find((r) => r.status === 'started')?.hookId;
  return {
    id: e.id,
    topic: e.topic,
    partyId: e.partyId,
    ...(firstHook ? { hookId: firstHook } : {}),
    ...(e.documentId ? { documentId: e.documentId } : {}),
    ...(e.refToDocumentId ? { refToDocumentId: e.refToDocumentId } : {}),
    message: e.message,
    details: e.details,
    createdBy: e.createdBy,
    createdOn: e.createdOn.toISOString(),
    label: e.label,
    deliveries: e.routes.map((r) => ({
      hookId: r.hookId,
      action: r.action,
      deliveryId: r.deliveryId,
      status: r.status,
    })),
  };
}

const deliveriesView = (d: DeliveryStart[]) =>
  d.map((x) => ({ hookId: x.hookId, action: x.action, deliveryId: x.deliveryId, status: x.status }));

function invalidHook(errors: { path: string; message: string }[]): GatewayError {
  return new GatewayError('BAD_REQUEST', `Invalid hook: ${errors.map((e) => `${e.path}: ${e.message}`).join('; ')}`, {
    details: { errors },
  });
}

const HOOK_ID = /^[A-Za-z0-9._:-]{1,128}$/;
const EVENT_ID = HOOK_ID;

function hookIdParam(req: Request): string {
  const id = String(req.params['hookId'] ?? '');
  if (!HOOK_ID.test(id)) throw new GatewayError('NOT_FOUND', `Hook ${id.slice(0, 64)} not found`);
  return id;
}

function eventIdParam(req: Request): string {
  const id = String(req.params['eventId'] ?? '');
  if (!EVENT_ID.test(id)) throw new GatewayError('NOT_FOUND', `Event ${id.slice(0, 64)} not found`);
  return id;
}

export function registerWebhookRoutes(router: Router, deps: WebhookRouteDeps): void {
  const party = requireParty(deps.directory);
  const svc = (): WebhookApiServices => {
    if (!deps.webhooks)
      throw new GatewayError('DEPENDENCY_UNAVAILABLE', 'Webhooks are not configured in this API process');
    return deps.webhooks;
  };

  const validation = (
    mode: 'create' | 'update',
    allowOutput: boolean,
    hasStoredSecureKey = false,
  ): HookValidationOptions => {
    const s = svc().settings;
    return {
      mode,
      allowOutput,
      hasStoredSecureKey,
      allowHttp: s.allowHttp,
      allowList: s.allowList,
      maxTimeoutMs: s.maxTimeoutMs,
    };
  };

  /** A hook the caller may see (any level), or 404. */
  async function reachableHook(res: Response, hookId: string): Promise<HookRecord> {
    const p = principalOf(res);
    const hook = await svc().hooks.findInTenants(p.tenantIds, hookId);
    if (hook && (await canReachHook(p, hook))) return hook;
    throw new GatewayError('NOT_FOUND', `Hook ${hookId} not found`);
  }

  async function canReachHook(p: Principal, hook: HookRecord): Promise<boolean> {
    if (hook.partyId === null) return p.grantType !== 'password' && p.tenantIds.includes(hook.tenantId);
    const owner = await deps.directory.findParty(hook.partyId);
    return !!owner && owner.tenantId === hook.tenantId && canReachParty(p, owner);
  }

  /** The hook at `{partyId}/hook/{hookId}`: it must belong to that party. */
  async function partyHook(req: Request, res: Response): Promise<HookRecord> {
    const { tenantId, partyId } = partyOf(res);
    const hookId = hookIdParam(req);
    const hook = await svc().hooks.get({ tenantId, partyId }, hookId);
    if (!hook) throw new GatewayError('NOT_FOUND', `Hook ${hookId} not found for party ${partyId}`);
    return hook;
  }

  async function createHook(
    req: Request,
    res: Response,
    level: { tenantId: string; partyId: string | null },
    allowOutput: boolean,
  ) {
    const v = validateHookBody(req.body, validation('create', allowOutput));
    if (!v.ok) throw invalidHook(v.errors);
    const hook = await svc().hooks.create({ id: randomUUID(), ...level, ...v.fields, secureKey: v.secureKey ?? null });
    res.status(201).location(`/api/v1/hook/${hook.id}`).json(hookView(hook));
  }

  async function updateHook(req: Request, res: Response, hook: HookRecord, allowOutput: boolean) {
    const v = validateHookBody(req.body, validation('update', allowOutput, hook.secureKey !== null));
    if (!v.ok) throw invalidHook(v.errors);
    // v1 does not know output rules: an update through it keeps the stored ones.
    const { output, ...rest } = v.fields;
    const updated = await svc().hooks.update(
      { tenantId: hook.tenantId, partyId: hook.partyId },
      hook.id,
      allowOutput ? { ...rest, output } : rest,
      v.secureKey,
    );
    if (!updated) throw new GatewayError('NOT_FOUND', `Hook ${hook.id} not found`);
    res.json(hookView(updated));
  }

  async function deleteHook(res: Response, hook: HookRecord) {
    await svc().hooks.delete({ tenantId: hook.tenantId, partyId: hook.partyId }, hook.id);
    res.status(204).end();
  }

  async function ping(res: Response, hook: HookRecord) {
    const owner = hook.partyId ? await deps.directory.findParty(hook.partyId) : null;
    const { event, deliveries } = await svc().publisher.ping(hook, owner, 'api');
    res.status(202).json({ eventId: event.id, label: event.label, deliveries: deliveriesView(deliveries) });
  }

  const bodyJson = jsonBody('64kb', 'the hook');

  // Environment level.
  router.get('/api/v1/hook', async (req: Request, res: Response) => {
    const tenantId = environmentTenant(req, principalOf(res));
    res.json({ items: (await svc().hooks.list(tenantId, null)).map(hookView) });
  });
  router.post('/api/v1/hook', bodyJson, async (req: Request, res: Response) => {
    await createHook(req, res, { tenantId: environmentTenant(req, principalOf(res)), partyId: null }, false);
  });
  router.post('/api/v1-beta/hook', bodyJson, async (req: Request, res: Response) => {
    // v1-beta may register at party level through the body (there is no v1-beta party path).
    const asked = (req.body as { partyId?: unknown } | undefined)?.partyId;
    if (asked !== undefined && asked !== null) {
      if (typeof asked !== 'string' || !isPartyId(asked))
        throw invalidHook([{ path: 'partyId', message: 'partyId must have the form <scheme>:<number>' }]);
      const owner = await deps.directory.findParty(asked);
      if (!owner || !canReachParty(principalOf(res), owner))
        throw new GatewayError('PARTY_NOT_ACCESSIBLE', `Party ${asked} is not accessible with this token`);
      await createHook(req, res, { tenantId: owner.tenantId, partyId: owner.partyId }, true);
      return;
    }
    await createHook(req, res, { tenantId: environmentTenant(req, principalOf(res)), partyId: null }, true);
  });

  // One hook by id, whatever its level.
  router.get('/api/v1/hook/:hookId', async (req: Request, res: Response) => {
    res.json(hookView(await reachableHook(res, hookIdParam(req))));
  });
  router.put('/api/v1/hook/:hookId', bodyJson, async (req: Request, res: Response) => {
    await updateHook(req, res, await reachableHook(res, hookIdParam(req)), false);
  });
  router.put('/api/v1-beta/hook/:hookId', bodyJson, async (req: Request, res: Response) => {
    await updateHook(req, res, await reachableHook(res, hookIdParam(req)), true);
  });
  router.delete('/api/v1/hook/:hookId', async (req: Request, res: Response) => {
    await deleteHook(res, await reachableHook(res, hookIdParam(req)));
  });
  router.post('/api/v1/hook/:hookId/ping', async (req: Request, res: Response) => {
    await ping(res, await reachableHook(res, hookIdParam(req)));
  });

  // Party level.
  router.get('/api/v1/:partyId/hook', party, async (_req: Request, res: Response) => {
    const { tenantId, partyId } = partyOf(res);
    res.json({ items: (await svc().hooks.list(tenantId, partyId)).map(hookView) });
  });
  router.post('/api/v1/:partyId/hook', party, bodyJson, async (req: Request, res: Response) => {
    const { tenantId, partyId } = partyOf(res);
    await createHook(req, res, { tenantId, partyId }, false);
  });
  router.get('/api/v1/:partyId/hook/:hookId', party, async (req: Request, res: Response) => {
    res.json(hookView(await partyHook(req, res)));
  });
  router.put('/api/v1/:partyId/hook/:hookId', party, bodyJson, async (req: Request, res: Response) => {
    await updateHook(req, res, await partyHook(req, res), false);
  });
  router.delete('/api/v1/:partyId/hook/:hookId', party, async (req: Request, res: Response) => {
    await deleteHook(res, await partyHook(req, res));
  });
  router.post('/api/v1/:partyId/hook/:hookId/ping', party, async (req: Request, res: Response) => {
    await ping(res, await partyHook(req, res));
  });

  registerEventRoutes(router, deps, svc, canReachHook);
}

// ---------------------------------------------------------------------------------------------------------------
// Missed events and the delivery log

const MAX_LIMIT = 1000;
const DEFAULT_LIMIT = 100;

function encodeCursor(e: EventRecord): string {
  return Buffer.from(JSON.stringify({ t: e.createdOn.getTime(), i: e.id }), 'utf8').toString('base64url');
}

function decodeCursor(text: string): { createdOn: Date; id: string } {
  try {
    const v = JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as { t?: unknown; i?: unknown };
    if (typeof v.t === 'number' && Number.isFinite(v.t) && typeof v.i === 'string' && EVENT_ID.test(v.i))
      return { createdOn: new Date(v.t), id: v.i };
  } catch {
    // fall through
  }
  throw new GatewayError('BAD_REQUEST', 'cursor is not one this API returned');
}

function dateParam(req: Request, name: string): Date | undefined {
  const v = queryString(req, name);
  if (v === undefined || v === '') return undefined;
  // ISO 8601 with a time and an offset, as every timestamp of this API.
  if (
    !/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/.test(v) ||
    Number.isNaN(Date.parse(v))
  ) {
    throw new GatewayError(
      'BAD_REQUEST',
      `${name} must be an ISO 8601 timestamp with offset, e.g. 2026-01-31T12:00:00Z`,
    );
  }
  return new Date(v);
}

function registerEventRoutes(
  router: Router,
  deps: WebhookRouteDeps,
  svc: () => WebhookApiServices,
  canReachHook: (p: Principal, hook: HookRecord) => Promise<boolean>,
): void {
  /** The event if the caller may see it, else 404. */
  async function reachableEvent(res: Response, eventId: string): Promise<EventRecord> {
    const p = principalOf(res);
    const event = await svc().events.findInTenants(p.tenantIds, eventId);
    const visible =
      event && (p.grantType !== 'password' || (event.partyKey !== null && (p.partyIds ?? []).includes(event.partyKey)));
    if (!event || !visible) throw new GatewayError('NOT_FOUND', `Event ${eventId} not found`);
    return event;
  }

  router.get('/api/v1/events', async (req: Request, res: Response) => {
    const p = principalOf(res);
    const askedTenant = queryString(req, 'tenantId');
    if (askedTenant !== undefined && !p.tenantIds.includes(askedTenant)) {
      throw new GatewayError('FORBIDDEN', `Tenant ${askedTenant.slice(0, 64)} is not accessible with this token`);
    }
    const since = dateParam(req, 'since');
    const until = dateParam(req, 'until');
    const topic = queryString(req, 'topic') || undefined;
    if (topic !== undefined) {
      const problem = validateTopicPattern(topic);
      if (problem) throw new GatewayError('BAD_REQUEST', problem);
    }
    const limitText = queryString(req, 'limit');
    const limit = limitText === undefined || limitText === '' ? DEFAULT_LIMIT : Number(limitText);
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT)
      throw new GatewayError('BAD_REQUEST', `limit must be an integer from 1 to ${MAX_LIMIT}`);
    const cursorText = queryString(req, 'cursor');
    const after = cursorText ? decodeCursor(cursorText) : undefined;

    let partyKey: string | undefined;
    const partyText = queryString(req, 'partyId') || undefined;
    if (partyText !== undefined) {
      const path = isLegalEntityId(partyText) ? partyIdOfLegalEntity(partyText) : partyText;
      if (!isPartyId(path))
        throw new GatewayError('BAD_REQUEST', 'partyId must be <scheme>:<number> or <country>:<scheme>:<number>');
      const owner: PartyRecord | null = await deps.directory.findParty(path);
      if (!owner || !canReachParty(p, owner))
        throw new GatewayError('PARTY_NOT_ACCESSIBLE', `Party ${partyText} is not accessible with this token`);
      partyKey = owner.partyId;
    }

    const items = await svc().events.list({
      tenantIds: askedTenant !== undefined ? [askedTenant] : p.tenantIds,
      since,
      until,
      topic,
      partyKey,
      onlyPartyKeys: p.grantType === 'password' ? (p.partyIds ?? []) : undefined,
      after,
      limit,
    });
    const last = items.at(-1);
    res.json({ items: items.map(eventView), nextCursor: items.length === limit && last ? encodeCursor(last) : null });
  });

  router.get('/api/v1/events/:eventId/deliveries', async (req: Request, res: Response) => {
    const event = await reachableEvent(res, eventIdParam(req));
    const lines = await svc().deliveryLog.listForEvent(event.tenantId, event.id);
    res.json({
      eventId: event.id,
      label: event.label,
      items: lines.map((l) => ({
        deliveryId: l.deliveryId,
        hookId: l.hookId,
        attempt: l.attempt,
        at: l.at.toISOString(),
        httpStatus: l.httpStatus,
        latencyMs: l.latencyMs,
        error: l.error,
        outcome: l.outcome,
        url: l.url,
      })),
    });
  });

  router.post('/api/v1/events/:eventId/redeliver', async (req: Request, res: Response) => {
    const event = await reachableEvent(res, eventIdParam(req));
    const hookId = queryString(req, 'hookId') || undefined;
    if (hookId !== undefined) {
      if (!HOOK_ID.test(hookId)) throw new GatewayError('NOT_FOUND', `Hook ${hookId.slice(0, 64)} not found`);
      const p = principalOf(res);
      const hook = await svc().hooks.get({ tenantId: event.tenantId }, hookId);
      if (!hook || !(await canReachHook(p, hook))) throw new GatewayError('NOT_FOUND', `Hook ${hookId} not found`);
    }
    const result = await svc().publisher.redeliver(event.tenantId, event.id, hookId);
    if (hookId !== undefined && result.deliveries.every((d) => d.status === 'running')) {
      throw new GatewayError('CONFLICT', `A delivery of event ${event.id} to hook ${hookId} is in progress`);
    }
    res
      .status(202)
      .json({ eventId: result.event.id, label: result.event.label, deliveries: deliveriesView(result.deliveries) });
  });
}
