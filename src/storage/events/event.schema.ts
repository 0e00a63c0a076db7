import { Schema, type Connection } from 'mongoose';

export type EventLabel = 'routed' | 'dropped' | 'dead-letter';

/** Where routing sent an event: one entry per selected hook. */
export interface EventRouteDoc {
  hookId: string;
  action: string;
  deliveryId: string;
  /**
   * `started`: a delivery workflow runs or ran; `dropped`: a drop hook took it; `unsupported`: the hook's channel has
   * no delivery implementation in this version (recorded, not silently lost); `channel`: a channel hook of a sending
   * topic, acted on by the document's sendInvoice run.
   */
  status: 'started' | 'dropped' | 'unsupported' | 'channel';
}

/** An event as published once (spec 6.3 minus the per-delivery fields hookId and sentOn). */
export interface EventDoc {
  _id: string;
  tenantId: string;
  topic: string;
  /** Payload form: the legalEntityId `<country>:<scheme>:<number>`, "" for an environment-level event. */
  partyId: string;
  /** Path form `<scheme>:<number>` of the same party (routing and access), null for an environment-level event. */
  partyKey: string | null;
  documentId: string | null;
  refToDocumentId: string | null;
  message: string;
  details: Record<string, string>;
  createdBy: string;
  createdOn: Date;
  label: EventLabel;
  routes: EventRouteDoc[];
  /** Set on an event meant for one hook only (Ping): routing sends it there whatever the hook's topics. */
  targetHookId: string | null;
  /** Hooks that must not get the event (the hook whose output rule published it). */
  excludeHookIds: string[];
}

export type AttemptOutcome = 'delivered' | 'failed' | 'skipped' | 'unsupported';

/** One line of the delivery log. */
export interface DeliveryAttemptDoc {
  /** `<workflow run>:<attempt>`: a retried activity overwrites its own line instead of adding one. */
  _id: string;
  tenantId: string;
  eventId: string;
  hookId: string;
  deliveryId: string;
  attempt: number;
  at: Date;
  httpStatus: number | null;
  latencyMs: number | null;
  error: string | null;
  outcome: AttemptOutcome;
  /** Target, redacted. */
  url: string | null;
}

/**
 * A delivery of a stuck hook waiting with no run open (held): its next run starts from `input` when it is released
 * (the hook answered, a timeout freed a slot for it, or `dueAt` passed).
 */
export interface HeldDeliveryDoc {
  /** The delivery's workflow id. */
  _id: string;
  tenantId: string;
  hookId: string;
  /** The run's input with its progress, as JSON (event details may use any key). */
  input: string;
  /** Search attributes of the next run. */
  topic: string;
  partyKey: string;
  heldAt: Date;
  /** The run that held it (the latest run under the id, until a release starts the next). */
  heldByRunId: string;
  /** When the sweep releases it if nothing did before; a claim moves it on by the claim's lease. */
  dueAt: Date;
  /** New on every hold, never changed after: claims are taken on (workflow id, seq), see HeldClaimDoc. */
  seq: string;
  /** Written by releases of earlier versions (an update of the record); ignored now that claims are documents. */
  claimedUntil?: Date;
}

/**
 * A claim taken by inserting a uniquely keyed document: `_id` is `<key>#<n>`, and claim n+1 is inserted only after
 * claim n was seen expired, so exactly one taker wins each number (FerretDB keeps unique keys under concurrent inserts;
 * it does not make a guarded update a compare-and-set). Never updated; deleted by the one who holds it, or as garbage.
 */
export interface ClaimDoc {
  _id: string;
  /** What is claimed (held deliveries: `<workflow id>/<seq>`). */
  key: string;
  n: number;
  /** Who took it: a retried take by the same owner finds its own claim. */
  owner: string;
  at: Date;
  /** The lease's end. */
  until: Date;
  /** Held deliveries: the workflow id and hook of the record claimed (queries by either). */
  workflowId?: string;
  hookId?: string;
}

/**
 * A routing recorded after the event's own (a redelivery that routes again): `_id` is `<event id>:<n>`, n from 1, so
 * each new routing takes the next number with an insert and two redeliveries never write one document.
 */
export interface EventRoutingDoc {
  _id: string;
  eventId: string;
  tenantId: string;
  n: number;
  label: EventLabel;
  routes: EventRouteDoc[];
  at: Date;
}

/**
 * An event put in the inbox of an httpsin hook (spec 6.9, src/webhooks/inbox.ts): inserted once per (hook, event) under
 * the delivery id, never updated. Acknowledging it is a document of its own (InboxAckDoc), never a change of this one.
 */
export interface InboxEntryDoc {
  /** The delivery id of (event, hook). */
  _id: string;
  tenantId: string;
  hookId: string;
  eventId: string;
  /** The second part of the entry's token (32 random bytes, base64url). */
  secret: string;
  /** The event as published (GatewayEvent), as JSON: event details may use any key. */
  event: string;
  /** When the delivery put it in the inbox: the `sentOn` of its payload, and the inbox's order with `_id`. */
  createdOn: Date;
}

/** An entry acknowledged: `_id` is the entry's, so the first acknowledgement's insert lands and repeats find it. */
export interface InboxAckDoc {
  _id: string;
  tenantId: string;
  hookId: string;
  at: Date;
}

const str = { type: String, required: true } as const;
const nullableStr = { type: String, default: null } as const;

export function buildEventModels(conn: Connection) {
  const event = new Schema<EventDoc>(
    {
      _id: str,
      tenantId: str,
      topic: str,
      partyId: { type: String, default: '' },
      partyKey: nullableStr,
      documentId: nullableStr,
      refToDocumentId: nullableStr,
      message: { type: String, default: '' },
      details: { type: Schema.Types.Mixed, default: {} },
      createdBy: str,
      createdOn: { type: Date, required: true },
      label: { type: String, enum: ['routed', 'dropped', 'dead-letter'], required: true },
      routes: {
        type: [
          {
            _id: false,
            hookId: str,
            action: str,
            deliveryId: str,
            status: { type: String, enum: ['started', 'dropped', 'unsupported', 'channel'], required: true },
          },
        ],
        default: [],
      },
      targetHookId: nullableStr,
      excludeHookIds: { type: [String], default: [] },
    },
    { versionKey: false, minimize: false },
  );
  // The missed-events batch reads one tenant in (createdOn, _id) order: that pair is also the cursor.
  event.index({ tenantId: 1, createdOn: 1, _id: 1 });

  const attempt = new Schema<DeliveryAttemptDoc>(
    {
      _id: str,
      tenantId: str,
      eventId: str,
      hookId: str,
      deliveryId: str,
      attempt: { type: Number, required: true },
      at: { type: Date, required: true },
      httpStatus: { type: Number, default: null },
      latencyMs: { type: Number, default: null },
      error: nullableStr,
      outcome: { type: String, enum: ['delivered', 'failed', 'skipped', 'unsupported'], required: true },
      url: nullableStr,
    },
    { versionKey: false },
  );
  attempt.index({ tenantId: 1, eventId: 1, at: 1 });

  const held = new Schema<HeldDeliveryDoc>(
    {
      _id: str,
      tenantId: str,
      hookId: str,
      input: str,
      topic: str,
      partyKey: { type: String, default: '' },
      heldAt: { type: Date, required: true },
      heldByRunId: str,
      dueAt: { type: Date, required: true },
      seq: str,
      claimedUntil: { type: Date },
    },
    { versionKey: false },
  );
  // The sweep reads what is due; a hook's release reads its own.
  held.index({ dueAt: 1 });
  held.index({ hookId: 1, heldAt: 1 });

  const heldClaim = new Schema<ClaimDoc>(
    {
      _id: str,
      key: str,
      n: { type: Number, required: true },
      owner: str,
      at: { type: Date, required: true },
      until: { type: Date, required: true },
      workflowId: { type: String },
      hookId: { type: String },
    },
    { versionKey: false },
  );
  // The sweep reads claims that ended without their record being removed; a hook's release skips live ones.
  heldClaim.index({ until: 1 });
  heldClaim.index({ hookId: 1, until: 1 });

  const routeStatus = { type: String, enum: ['started', 'dropped', 'unsupported', 'channel'], required: true };
  const routing = new Schema<EventRoutingDoc>(
    {
      _id: str,
      eventId: str,
      tenantId: str,
      n: { type: Number, required: true },
      label: { type: String, enum: ['routed', 'dropped', 'dead-letter'], required: true },
      routes: { type: [{ _id: false, hookId: str, action: str, deliveryId: str, status: routeStatus }], default: [] },
      at: { type: Date, required: true },
    },
    { versionKey: false },
  );
  routing.index({ eventId: 1 });

  const inboxEntry = new Schema<InboxEntryDoc>(
    {
      _id: str,
      tenantId: str,
      hookId: str,
      eventId: str,
      secret: str,
      event: str,
      createdOn: { type: Date, required: true },
    },
    { versionKey: false },
  );
  // A hook's inbox is read in (createdOn, _id) order: that pair is also the cursor.
  inboxEntry.index({ hookId: 1, createdOn: 1, _id: 1 });
  const inboxAck = new Schema<InboxAckDoc>(
    { _id: str, tenantId: str, hookId: str, at: { type: Date, required: true } },
    { versionKey: false },
  );

  return {
    InboxEntry: conn.model<InboxEntryDoc>('InboxEntry', inboxEntry, 'inboxentries'),
    InboxAck: conn.model<InboxAckDoc>('InboxAck', inboxAck, 'inboxacks'),
    HeldDelivery: conn.model<HeldDeliveryDoc>('HeldDelivery', held, 'helddeliveries'),
    HeldClaim: conn.model<ClaimDoc>('HeldClaim', heldClaim, 'heldclaims'),
    EventRouting: conn.model<EventRoutingDoc>('EventRouting', routing, 'eventroutings'),
    WebhookEvent: conn.model<EventDoc>('WebhookEvent', event, 'events'),
    DeliveryAttempt: conn.model<DeliveryAttemptDoc>('DeliveryAttempt', attempt, 'deliveryattempts'),
  };
}
