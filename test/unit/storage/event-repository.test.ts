import type { Models } from '../../../src/storage/models';
import { DeliveryLogRepository, EventRepository, type EventRecord } from '../../../src/storage/events/event.repository';

/** A collection whose insertOne answers from a script: an error to throw, or undefined for success. */
function collectionWith(script: (Error | undefined)[]) {
  const calls: unknown[] = [];
  const collection = {
    insertOne: async (doc: unknown) => {
      calls.push(doc);
      const next = script.shift();
      if (next) throw next;
      return { acknowledged: true };
    },
  };
  return { collection, calls };
}

function repositoryWith(script: (Error | undefined)[]) {
  const { collection, calls } = collectionWith(script);
  return { repo: new EventRepository({ WebhookEvent: { collection } } as unknown as Models), calls };
}

const busy = () => new Error('[db.go:134 fsql.(*DB).InTransaction] database is locked (5) (SQLITE_BUSY)');
const duplicate = () => Object.assign(new Error('E11000 duplicate key error'), { code: 11000 });

const event: EventRecord = {
  id: '0b0c4c6e-8f0a-4b7e-9a59-3d7f1f0c2a11',
  tenantId: 't1',
  topic: 'Ping',
  partyId: '',
  partyKey: null,
  documentId: null,
  refToDocumentId: null,
  message: 'ping',
  details: {},
  createdBy: 'test',
  createdOn: new Date('2026-11-26T00:00:00Z'),
  label: 'dead-letter',
  routes: [],
  targetHookId: null,
  excludeHookIds: [],
};

describe('EventRepository.insert', () => {
  it('tries an insert again after a transient "database is locked" answer', async () => {
    const { repo, calls } = repositoryWith([busy(), busy()]);
    await expect(repo.insert(event)).resolves.toBe('inserted');
    expect(calls).toHaveLength(3);
  });

  it('reports an earlier try that landed as an existing event', async () => {
    const { repo, calls } = repositoryWith([busy(), duplicate()]);
    await expect(repo.insert(event)).resolves.toBe('exists');
    expect(calls).toHaveLength(2);
  });

  it('gives up after its bounded tries and on errors that are not transient', async () => {
    const stuck = repositoryWith([busy(), busy(), busy(), busy()]);
    await expect(stuck.repo.insert(event)).rejects.toThrow(/SQLITE_BUSY/);
    expect(stuck.calls).toHaveLength(4);
    const broken = repositoryWith([new Error('document too large')]);
    await expect(broken.repo.insert(event)).rejects.toThrow(/too large/);
    expect(broken.calls).toHaveLength(1);
  });
});

describe('DeliveryLogRepository.record', () => {
  it('tries a line again after a transient "database is locked" answer', async () => {
    const { collection, calls } = collectionWith([busy()]);
    const log = new DeliveryLogRepository({ DeliveryAttempt: { collection } } as unknown as Models);
    await log.record({
      _id: 'run-1:1',
      tenantId: 't1',
      eventId: event.id,
      hookId: 'h1',
      deliveryId: 'd1',
      attempt: 1,
      at: new Date('2026-11-26T00:00:01Z'),
      httpStatus: null,
      latencyMs: null,
      error: 'not sent: e-mail delivery of events is not implemented in this version',
      outcome: 'skipped',
      url: null,
    });
    expect(calls).toHaveLength(2);
  });
});
