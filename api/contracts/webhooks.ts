import { z } from 'zod';
import type { ResponseContract, RouteContract } from './route-contract';

/*
 * Contract of the hook, events and delivery-log routes (decisions.md "Hook endpoints", "Missed events", "Delivery
 * log"). Built by a function of index.ts's shared response helpers; the route types come from route-contract.ts, which
 * index.ts (the importer of this file) re-exports.
 */

const iso = z.string().datetime({ offset: true });

export const OutputRule = z.object({ when: z.string(), topic: z.string() }).meta({ id: 'HookOutputRule' });

export const Hook = z
  .object({
    id: z.string(),
    action: z.string(),
    name: z.string(),
    url: z.string().nullable(),
    topic: z.string().nullable(),
    topics: z.array(z.string()),
    filter: z.string().nullable(),
    output: z.array(OutputRule),
    mlsType: z.enum(['ALWAYS_SEND', 'FAILURE_ONLY']).nullable(),
    isActive: z.boolean(),
    partyId: z.string().nullable().describe('Party (path form) of a party-level hook; null at environment level'),
    timeoutSeconds: z.number().nullable(),
    disabledReason: z.string().nullable().describe('`gone` when the gateway switched the hook off after a 410'),
    hasSecureKey: z.boolean().describe('secureKey is write-only and never returned'),
    createdOn: iso,
    changedOn: iso,
  })
  .strict()
  .meta({ id: 'Hook' });

export const HookList = z.object({ items: z.array(Hook) }).meta({ id: 'HookList' });

const hookInputShape = {
  action: z.enum(['https', 'httpsin', 'mailto', 'peppol', 'drop']).optional().describe('Default: from the url scheme'),
  name: z.string().optional(),
  url: z
    .string()
    .optional()
    .describe('https:// (or http:// where configured), httpsin://user:password@inbound?token=$token$, or mailto:'),
  topic: z.string().optional().describe('Exact topic or wildcard (Send*, *Received, Invoice*)'),
  topics: z.array(z.string()).optional(),
  secureKey: z
    .string()
    .optional()
    .describe('Write-only signing secret: at least 16 characters, or whsec_<base64 of 24-64 bytes>'),
  filter: z.string().optional().describe('e.g. sender == "0106:123" && verdict.StartsWith("OK")'),
  mlsType: z.enum(['ALWAYS_SEND', 'FAILURE_ONLY']).optional(),
  isActive: z.boolean().optional(),
  timeoutSeconds: z.number().int().optional(),
};

export const HookInput = z.object(hookInputShape).meta({ id: 'HookInput' });
export const HookInputBeta = z
  .object({
    ...hookInputShape,
    output: z
      .array(OutputRule)
      .optional()
      .describe(
        'First rule whose `when` (400, 5xx, timeout, error) matches publishes `topic` (* = the original topic)',
      ),
    partyId: z.string().optional().describe('Create only: register at the level of this party'),
  })
  .meta({ id: 'HookInputBeta' });

const Delivery = z.object({
  hookId: z.string(),
  action: z.string(),
  deliveryId: z.string(),
  status: z.enum(['started', 'dropped', 'unsupported', 'running']),
});

export const DeliveriesStarted = z
  .object({ eventId: z.string(), label: z.enum(['routed', 'dropped', 'dead-letter']), deliveries: z.array(Delivery) })
  .meta({ id: 'DeliveriesStarted' });

export const StoredEvent = z
  .object({
    id: z.string(),
    topic: z.string(),
    partyId: z.string(),
    hookId: z.string().optional(),
    documentId: z.string().optional(),
    refToDocumentId: z.string().optional(),
    message: z.string(),
    details: z.record(z.string(), z.string()),
    createdBy: z.string(),
    createdOn: iso,
    label: z.enum(['routed', 'dropped', 'dead-letter']),
    deliveries: z.array(Delivery),
  })
  .meta({ id: 'StoredEvent' });

export const EventPage = z.object({ items: z.array(StoredEvent), nextCursor: z.string().nullable() }).meta({
  id: 'EventPage',
  description: 'Oldest first; pass nextCursor as cursor for the next page (null: no more for now)',
});

export const DeliveryLog = z
  .object({
    eventId: z.string(),
    label: z.enum(['routed', 'dropped', 'dead-letter']),
    items: z.array(
      z.object({
        deliveryId: z.string(),
        hookId: z.string(),
        attempt: z.number().int(),
        at: iso,
        httpStatus: z.number().int().nullable(),
        latencyMs: z.number().nullable(),
        error: z.string().nullable(),
        outcome: z.enum(['delivered', 'failed', 'skipped', 'unsupported']),
        url: z.string().nullable(),
      }),
    ),
  })
  .meta({ id: 'DeliveryLog' });

const EventPayload = z
  .object({
    topic: z.string(),
    partyId: z.string(),
    hookId: z.string(),
    documentId: z.string().optional(),
    refToDocumentId: z.string().optional(),
    message: z.string(),
    details: z.record(z.string(), z.string()),
    createdBy: z.string(),
    createdOn: iso,
    sentOn: iso.describe('When the delivery put the event in the inbox'),
  })
  .meta({ id: 'EventPayload', description: 'The event as spec 6.3 shapes a delivery' });

export const InboxEntry = z
  .object({
    token: z
      .string()
      .describe('Names this entry in the inbox (`$token$` of the hook URL): `<deliveryId>.<secret>`, unguessable'),
    eventId: z.string(),
    deliveryId: z.string().describe('The delivery id of (event, hook): the idempotency key'),
    addedOn: iso,
    acknowledgedOn: iso.nullable().describe('null until acknowledged; acknowledged entries leave the listing'),
    event: EventPayload,
    links: z.object({
      self: z.string(),
      document: z.string().nullable().describe("The event's document; null when the event has none"),
      ack: z.string(),
    }),
  })
  .meta({ id: 'InboxEntry' });

export const InboxPage = z.object({ items: z.array(InboxEntry), nextCursor: z.string().nullable() }).meta({
  id: 'InboxPage',
  description: 'Unacknowledged entries, oldest first; pass nextCursor as cursor for the next page (null: no more now)',
});

export interface ContractHelpers {
  problem: (description: string) => ResponseContract;
  authenticated: Record<number, ResponseContract>;
  partyScoped: Record<number, ResponseContract>;
  partyParam: Record<string, string>;
}

export function webhookRoutes(h: ContractHelpers): RouteContract[] {
  const { problem } = h;
  const json = (schema: z.ZodType) => ({ 'application/json': schema });
  const unavailable = { 503: problem('Webhooks not configured in this process, or a delivery could not be started') };
  const envLevel = {
    ...h.authenticated,
    400: problem('Invalid request, or a token reaching several tenants without ?tenantId='),
    403: problem('Environment-level hooks need a client_credentials token of the tenant'),
    ...unavailable,
  };
  const byId = { ...h.authenticated, 404: problem('No such hook within reach of this token'), ...unavailable };
  const writeBody = (beta: boolean) => ({ description: 'The hook', content: json(beta ? HookInputBeta : HookInput) });
  const writes = {
    400: problem(
      'Invalid hook: `errors[]` names each field (https URL required, malformed wildcard, unparseable filter, …)',
    ),
    413: problem('Body larger than 64 KB'),
    415: problem('Body is not application/json'),
  };
  const tenantQuery = { tenantId: 'For a token reaching several tenants: the tenant to act on' };
  const hookIdParam = { hookId: 'Hook id' };
  const tags = ['Hooks'];

  return [
    {
      method: 'get',
      path: '/api/v1/hook',
      summary: 'Environment-level hooks of the tenant',
      tags,
      auth: true,
      query: tenantQuery,
      responses: { 200: { description: 'The hooks', content: json(HookList) }, ...envLevel },
    },
    {
      method: 'post',
      path: '/api/v1/hook',
      summary: 'Register an environment-level hook',
      tags,
      auth: true,
      query: tenantQuery,
      requestBody: writeBody(false),
      responses: {
        201: { description: 'Registered', content: json(Hook), headers: { Location: 'The hook' } },
        ...envLevel,
        ...writes,
      },
    },
    {
      method: 'post',
      path: '/api/v1-beta/hook',
      summary: 'Register a hook with output rules (v1-beta), at environment level or for `partyId`',
      tags,
      auth: true,
      query: tenantQuery,
      requestBody: writeBody(true),
      responses: {
        201: { description: 'Registered', content: json(Hook), headers: { Location: 'The hook' } },
        ...envLevel,
        ...writes,
      },
    },
    ...inboxRoutes(h),
    {
      method: 'get',
      path: '/api/v1/hook/:hookId',
      summary: 'One hook (any level within reach)',
      tags,
      auth: true,
      params: hookIdParam,
      responses: { 200: { description: 'The hook', content: json(Hook) }, ...byId },
    },
    {
      method: 'put',
      path: '/api/v1/hook/:hookId',
      summary: 'Update a hook in one atomic write (secureKey absent = kept; output rules kept)',
      tags,
      auth: true,
      params: hookIdParam,
      requestBody: writeBody(false),
      responses: { 200: { description: 'Updated', content: json(Hook) }, ...byId, ...writes },
    },
    {
      method: 'put',
      path: '/api/v1-beta/hook/:hookId',
      summary: 'Update a hook including its output rules (v1-beta)',
      tags,
      auth: true,
      params: hookIdParam,
      requestBody: writeBody(true),
      responses: { 200: { description: 'Updated', content: json(Hook) }, ...byId, ...writes },
    },
    {
      method: 'delete',
      path: '/api/v1/hook/:hookId',
      summary: 'Delete a hook',
      tags,
      auth: true,
      params: hookIdParam,
      responses: { 204: { description: 'Deleted' }, ...byId },
    },
    {
      method: 'post',
      path: '/api/v1/hook/:hookId/ping',
      summary: 'Send a Ping event to this hook (also when it is switched off)',
      tags,
      auth: true,
      params: hookIdParam,
      responses: { 202: { description: 'Ping event published', content: json(DeliveriesStarted) }, ...byId },
    },
    {
      method: 'get',
      path: '/api/v1/:partyId/hook',
      summary: 'Hooks of a party',
      tags,
      auth: true,
      params: h.partyParam,
      responses: { 200: { description: 'The hooks', content: json(HookList) }, ...h.partyScoped, ...unavailable },
    },
    {
      method: 'post',
      path: '/api/v1/:partyId/hook',
      summary: 'Register a party-level hook',
      tags,
      auth: true,
      params: h.partyParam,
      requestBody: writeBody(false),
      responses: {
        201: { description: 'Registered', content: json(Hook), headers: { Location: 'The hook' } },
        ...h.partyScoped,
        ...unavailable,
        ...writes,
      },
    },
    {
      method: 'get',
      path: '/api/v1/:partyId/hook/:hookId',
      summary: 'One hook of a party',
      tags,
      auth: true,
      params: { ...h.partyParam, ...hookIdParam },
      responses: {
        200: { description: 'The hook', content: json(Hook) },
        ...h.partyScoped,
        404: problem('No such hook for this party'),
        ...unavailable,
      },
    },
    {
      method: 'put',
      path: '/api/v1/:partyId/hook/:hookId',
      summary: 'Update a hook of a party in one atomic write',
      tags,
      auth: true,
      params: { ...h.partyParam, ...hookIdParam },
      requestBody: writeBody(false),
      responses: {
        200: { description: 'Updated', content: json(Hook) },
        ...h.partyScoped,
        404: problem('No such hook for this party'),
        ...unavailable,
        ...writes,
      },
    },
    {
      method: 'delete',
      path: '/api/v1/:partyId/hook/:hookId',
      summary: 'Delete a hook of a party',
      tags,
      auth: true,
      params: { ...h.partyParam, ...hookIdParam },
      responses: {
        204: { description: 'Deleted' },
        ...h.partyScoped,
        404: problem('No such hook for this party'),
        ...unavailable,
      },
    },
    {
      method: 'post',
      path: '/api/v1/:partyId/hook/:hookId/ping',
      summary: 'Send a Ping event to a hook of a party',
      tags,
      auth: true,
      params: { ...h.partyParam, ...hookIdParam },
      responses: {
        202: { description: 'Ping event published', content: json(DeliveriesStarted) },
        ...h.partyScoped,
        404: problem('No such hook for this party'),
        ...unavailable,
      },
    },
    {
      method: 'get',
      path: '/api/v1/events',
      summary:
        'Missed events: the stored events, oldest first, with their routing label (routed, dropped, dead-letter)',
      tags: ['Events'],
      auth: true,
      query: {
        since: 'ISO 8601 timestamp with offset: events created at or after',
        until: 'ISO 8601 timestamp with offset: events created before',
        topic: 'Exact topic or wildcard',
        partyId: 'Party, path form or legalEntityId',
        limit: `Page size, 1-1000 (default 100)`,
        cursor: 'nextCursor of the previous page',
        tenantId: 'For a token reaching several tenants: only this tenant',
      },
      responses: {
        200: { description: 'A page of events', content: json(EventPage) },
        ...h.authenticated,
        400: problem('Invalid query parameter'),
        403: problem('Party or tenant not reachable with this token'),
        ...unavailable,
      },
    },
    {
      method: 'get',
      path: '/api/v1/events/:eventId/deliveries',
      summary: 'Delivery log of an event: every attempt with time, hook, HTTP status, latency and error',
      tags: ['Events'],
      auth: true,
      params: { eventId: 'Event id' },
      responses: {
        200: { description: 'The attempts, oldest first', content: json(DeliveryLog) },
        ...h.authenticated,
        404: problem('No such event within reach'),
        ...unavailable,
      },
    },
    {
      method: 'post',
      path: '/api/v1/events/:eventId/redeliver',
      summary: 'Start a fresh delivery of an event: to one hook, or routed again against the current hooks',
      tags: ['Events'],
      auth: true,
      params: { eventId: 'Event id' },
      query: { hookId: 'Deliver to this hook only' },
      responses: {
        202: { description: 'Deliveries started', content: json(DeliveriesStarted) },
        ...h.authenticated,
        404: problem('No such event or hook within reach'),
        409: problem('A delivery of this event to that hook is still in progress, or the hook cannot be delivered to'),
        ...unavailable,
      },
    },
  ];
}

/** The inbox of an httpsin hook (decisions.md "httpsin hooks: a pull inbox"): HTTP Basic with the hook URL's user:password. */
function inboxRoutes(h: ContractHelpers): RouteContract[] {
  const { problem } = h;
  const json = (schema: z.ZodType) => ({ 'application/json': schema });
  const tags = ['Inbox (httpsin hooks)'];
  const hookId = { hookId: 'The httpsin hook' };
  const withToken = { ...hookId, token: 'An entry token from the listing' };
  const guarded = {
    401: problem(
      'Missing or wrong Basic credentials, or no httpsin hook with this id (one answer for all; WWW-Authenticate: ' +
        'Basic), or an invalid Subscription-Key',
    ),
    429: problem('Too many refused requests from this address, or too many requests for this inbox'),
    503: problem('Webhooks not configured in this process'),
  };
  const noEntry = {
    404: problem('No such entry in this inbox (a token of another hook or tenant, malformed, unknown)'),
  };
  return [
    {
      method: 'get',
      path: '/api/v1/inbox/:hookId',
      summary: 'Unacknowledged entries of an httpsin hook, oldest first',
      tags,
      auth: 'hookBasic',
      params: hookId,
      query: { limit: 'Entries per page, 1 to 500 (default 50)', cursor: 'nextCursor of the previous page' },
      responses: {
        200: { description: 'A page of the inbox', content: json(InboxPage) },
        400: problem('limit out of range, or a cursor this inbox did not return'),
        ...guarded,
      },
    },
    {
      method: 'get',
      path: '/api/v1/inbox/:hookId/:token',
      summary: 'One entry of the inbox (also once acknowledged)',
      tags,
      auth: 'hookBasic',
      params: withToken,
      responses: { 200: { description: 'The entry', content: json(InboxEntry) }, ...noEntry, ...guarded },
    },
    {
      method: 'get',
      path: '/api/v1/inbox/:hookId/:token/document',
      summary: "The entry's document, byte for byte (as the generic download)",
      tags,
      auth: 'hookBasic',
      params: withToken,
      responses: {
        200: {
          description: 'The stored bytes with their content type',
          content: { 'application/xml': null, 'application/pdf': null },
        },
        404: problem('No such entry in this inbox, or its event has no document (or no longer has it)'),
        ...guarded,
      },
    },
    {
      method: 'post',
      path: '/api/v1/inbox/:hookId/:token/ack',
      summary: 'Acknowledge an entry: it leaves the listing (idempotent)',
      tags,
      auth: 'hookBasic',
      params: withToken,
      responses: {
        200: { description: "The entry, with the first acknowledgement's time", content: json(InboxEntry) },
        ...noEntry,
        ...guarded,
      },
    },
  ];
}
