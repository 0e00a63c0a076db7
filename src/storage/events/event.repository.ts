import type { mongo } from 'mongoose';
import type { Models } from '../models';
import { isDuplicateKeyError } from '../connection';
import { withStorageRetries } from '../retry';
import type { DeliveryAttemptDoc, EventDoc, EventLabel, EventRouteDoc, EventRoutingDoc } from './event.schema';

export type { EventLabel, EventRouteDoc, DeliveryAttemptDoc, AttemptOutcome } from './event.schema';

/** A stored event as the rest of the gateway sees it (`id` instead of `_id`). */
export type EventRecord = Omit<EventDoc, '_id'> & { id: string };

/** Position in the (createdOn, id) order of the missed-events batch. */
export interface EventPosition {
  createdOn: Date;
  id: string;
}

export interface EventQuery {
  tenantIds: readonly string[];
  since?: Date | undefined;
  until?: Date | undefined;
  /** Exact topic, or a wildcard pattern already checked by validateTopicPattern. */
  topic?: string | undefined;
  /** Only events of this party (path form). */
  partyKey?: string | undefined;
  /** Callers restricted to some parties (password grant) see only their events; environment events are excluded. */
  onlyPartyKeys?: readonly string[] | undefined;
  after?: EventPosition | undefined;
  limit: number;
}

/** An event's routing: as published, or as the latest redelivery that routed it again recorded it. */
export interface EventRouting {
  label: EventLabel;
  routes: EventRouteDoc[];
}

/** Tries of a routing change that finds another change of the same event taking its number. */
const ROUTING_TRIES = 50;

const routingId = (eventId: string, n: number): string => `${eventId}:${n}`;

function toRecord(doc: EventDoc, routing?: EventRoutingDoc): EventRecord {
  const routed = routing ?? doc;
  return {
    id: doc._id,
    tenantId: doc.tenantId,
    topic: doc.topic,
    partyId: doc.partyId ?? '',
    partyKey: doc.partyKey ?? null,
    documentId: doc.documentId ?? null,
    refToDocumentId: doc.refToDocumentId ?? null,
    message: doc.message ?? '',
    details: { ...(doc.details ?? {}) },
    createdBy: doc.createdBy,
    createdOn: doc.createdOn,
    label: routed.label,
    routes: (routed.routes ?? []).map((r) => ({
      hookId: r.hookId,
      action: r.action,
      deliveryId: r.deliveryId,
      status: r.status,
    })),
    targetHookId: doc.targetHookId ?? null,
    excludeHookIds: [...(doc.excludeHookIds ?? [])],
  };
}

/**
 * `Send*Fallback` → /^Send.*Fallback$/. The pattern holds only [A-Za-z0-9*] (validateTopicPattern), so nothing to
 * escape.
 */
function topicCondition(topic: string): unknown {
  if (!topic.includes('*')) return topic;
  if (!/^[A-Za-z0-9*]+$/.test(topic)) throw new Error('topic pattern must be validated before querying');
  return { $regex: `^${topic.replace(/\*/g, '.*')}$` };
}

/**
 * Published events. An event document is written once, with its routing; a redelivery that routes it again records
 * the new routing as a document of its own (`eventroutings`, `<event id>:<n>`), taking the next number with an insert:
 * two redeliveries never update one document (FerretDB would lose one), and the one that loses the number reads the
 * winner's routing and builds on it. Reads give the event with its latest routing.
 */
export class EventRepository {
  constructor(private readonly models: Models) {}

  /**
   * 'exists' when an event with this id was already stored (a retried publish). Written through the driver, not a
   * mongoose document: the record is complete and typed, and the document layer (casting, validation, hydration)
   * cost more CPU than the insert itself (decisions.md "Event and delivery-log writes").
   */
  async insert(event: EventRecord): Promise<'inserted' | 'exists'> {
    const { id, ...rest } = event;
    const doc: EventDoc = {
      _id: id,
      ...rest,
      routes: rest.routes.map((r) => ({
        hookId: r.hookId,
        action: r.action,
        deliveryId: r.deliveryId,
        status: r.status,
      })),
    };
    try {
      // A transient failure (FerretDB's SQLite "database is locked" under load) is tried again: the caller may be an
      // API request with nothing else to retry it. An earlier try that did land shows as 'exists', which callers
      // already treat as a repeated publish.
      await withStorageRetries(() =>
        (this.models.WebhookEvent.collection as unknown as mongo.Collection<EventDoc>).insertOne(doc),
      );
      return 'inserted';
    } catch (e) {
      if (isDuplicateKeyError(e)) return 'exists';
      throw e;
    }
  }

  async get(tenantId: string, eventId: string): Promise<EventRecord | null> {
    return this.findInTenants([tenantId], eventId);
  }

  /**
   * By id alone, the tenant checked on the document: FerretDB 1.24 pushes an `_id` equality down into SQLite but
   * decodes every record in Go once another field joins the filter (measured: 14 ms vs 220 ms at 5,000 events).
   * Both scan: the newest of 20,000 events costs ~280 ms even by `_id` alone, so hot paths carry the event instead of
   * reading it.
   */
  async findInTenants(tenantIds: readonly string[], eventId: string): Promise<EventRecord | null> {
    const doc = await this.models.WebhookEvent.findById(eventId).lean<EventDoc>().exec();
    if (!doc || !tenantIds.includes(doc.tenantId)) return null;
    return toRecord(doc, (await this.latestRouting(eventId))?.doc);
  }

  /** Records a new routing (a redelivery that routes again). The caller has read the event within its tenant. */
  async setRouting(eventId: string, label: EventLabel, routes: EventRouteDoc[]): Promise<void> {
    await this.updateRouting(eventId, () => ({ label, routes }));
  }

  /**
   * Records a routing made from the event's current one (a redelivery to one hook keeps the others' routes): `next`
   * gets the latest routing; when another change took the number meanwhile, it is called again with that one.
   * Resolves the routing recorded; null when there is no such event.
   */
  async updateRouting(eventId: string, next: (current: EventRouting) => EventRouting): Promise<EventRouting | null> {
    const collection = this.models.EventRouting.collection as unknown as mongo.Collection<EventRoutingDoc>;
    for (let tries = 0; tries < ROUTING_TRIES; tries++) {
      const event = await this.models.WebhookEvent.findById(eventId, { tenantId: 1, label: 1, routes: 1 })
        .lean<EventDoc>()
        .exec();
      if (!event) return null;
      const latest = await this.latestRouting(eventId);
      const current = latest?.doc ?? event;
      const routing = next({ label: current.label, routes: current.routes.map((r) => ({ ...r })) });
      const n = (latest?.n ?? 0) + 1;
      const doc: EventRoutingDoc = {
        _id: routingId(eventId, n),
        eventId,
        tenantId: event.tenantId,
        n,
        ...routing,
        at: new Date(),
      };
      try {
        await withStorageRetries(() => collection.insertOne(doc));
        return routing;
      } catch (e) {
        if (!isDuplicateKeyError(e)) throw e;
      }
    }
    throw new Error(`the routing of event ${eventId} kept changing under ${ROUTING_TRIES} tries`);
  }

  /** The latest recorded routing of an event and its number, read by key (1, 2, … until one is missing). */
  private async latestRouting(eventId: string): Promise<{ n: number; doc: EventRoutingDoc } | undefined> {
    let latest: { n: number; doc: EventRoutingDoc } | undefined;
    for (let n = 1; ; n++) {
      const doc = await this.models.EventRouting.findById(routingId(eventId, n)).lean<EventRoutingDoc>().exec();
      if (!doc) return latest;
      latest = { n, doc };
    }
  }

  /** Oldest first, then by id; at most `limit`. */
  async list(q: EventQuery): Promise<EventRecord[]> {
    const and: Record<string, unknown>[] = [{ tenantId: { $in: [...q.tenantIds] } }];
    if (q.since || q.until) {
      and.push({ createdOn: { ...(q.since ? { $gte: q.since } : {}), ...(q.until ? { $lt: q.until } : {}) } });
    }
    if (q.topic) and.push({ topic: topicCondition(q.topic) });
    if (q.partyKey !== undefined) and.push({ partyKey: q.partyKey });
    if (q.onlyPartyKeys) and.push({ partyKey: { $in: [...q.onlyPartyKeys] } });
    if (q.after) {
      and.push({
        $or: [{ createdOn: { $gt: q.after.createdOn } }, { createdOn: q.after.createdOn, _id: { $gt: q.after.id } }],
      });
    }
    const docs = await this.models.WebhookEvent.find({ $and: and })
      .sort({ createdOn: 1, _id: 1 })
      .limit(q.limit)
      .lean<EventDoc[]>()
      .exec();
    if (docs.length === 0) return [];
    // Routings recorded after publishing (redeliveries), latest per event: one read for the page.
    const routings = await this.models.EventRouting.find({ eventId: { $in: docs.map((d) => d._id) } })
      .lean<EventRoutingDoc[]>()
      .exec();
    const latest = new Map<string, EventRoutingDoc>();
    for (const r of routings) if ((latest.get(r.eventId)?.n ?? 0) < r.n) latest.set(r.eventId, r);
    return docs.map((d) => toRecord(d, latest.get(d._id)));
  }
}

/** The delivery log: one line per attempt (and per delivery a channel could not make). */
export class DeliveryLogRepository {
  constructor(private readonly models: Models) {}

  /**
   * Writes the line: one insert. The same _id again (a retried activity) replaces it. Insert first: on FerretDB an
   * insert costs about half an upsert, and a retry is rare. Through the driver, and tried again after a transient
   * failure, as EventRepository.insert (publishing from an API request records lines too).
   */
  async record(line: DeliveryAttemptDoc): Promise<void> {
    const { _id, ...rest } = line;
    try {
      await withStorageRetries(() =>
        (this.models.DeliveryAttempt.collection as unknown as mongo.Collection<DeliveryAttemptDoc>).insertOne({
          ...line,
        }),
      );
    } catch (e) {
      if (!isDuplicateKeyError(e)) throw e;
      await this.models.DeliveryAttempt.replaceOne({ _id }, { _id, ...rest }).exec();
    }
  }

  async listForEvent(tenantId: string, eventId: string): Promise<DeliveryAttemptDoc[]> {
    return this.models.DeliveryAttempt.find({ tenantId, eventId })
      .sort({ at: 1, attempt: 1, _id: 1 })
      .lean<DeliveryAttemptDoc[]>()
      .exec();
  }
}
