import { randomUUID } from 'node:crypto';
import { Client, Connection, type WorkflowExecutionInfo, type WorkflowHandle } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import { NativeConnection, Worker } from '@temporalio/worker';
import { TemporalWorkflowStarter } from '../../api/workflow-client';
import { sendInvoiceWorkflowId } from '../../src/core/identifiers';
import { requiredSearchAttributes } from '../../src/main/search-attributes';
import { sendOrderWorkflowId } from '../../workflows/contracts/send-order';
import type { RetrySchedule } from '../../src/core/retry-schedule';
import type {
  CheckDocumentResult,
  ChooseChannelInput,
  ChooseChannelOutcome,
  DocumentFacts,
  ResolveRecipientOutcome,
  SendEventInput,
  SendInvoiceInput,
  SendPeppolInput,
  SendPeppolOutcome,
} from '../../workflows/contracts/send-invoice';
import { RETRY_NOW_SIGNAL } from '../../workflows/contracts/send-invoice';
import type { CheckOrderResult } from '../../workflows/contracts/send-order';
import { eventually } from '../support/poll';
import { requireEnv } from '../support/services';
import { testWorkflowBundle } from '../support/workflow-bundle';

/*
 * The searches of docs/operations.md on the local Temporal dev server (which `npm test` starts with the gateway's
 * search attributes registered): sendInvoice and sendOrder runs with stubbed steps end in different ways for two
 * tenants, and each query an operator runs finds exactly the documents it is meant to. Each query is scoped to this
 * file's task queue, so runs of other tests on the same server do not count. Visibility is eventually consistent:
 * every query is asked again until it answers, within a bound.
 */

const { temporalAddress } = requireEnv();
const SOURCE_TYPE = 'urn:oasis:names:specification:ubl:schema:xsd:Invoice-2::Invoice##bis3::2.1';
const PARTY_A = '0106:11111111';
const PARTY_B = '0106:22222222';

const facts = (partyId: string): DocumentFacts => ({
  blobId: 'blob',
  partyId,
  legalEntityId: `NL:${partyId}`,
  createdBy: 'api',
  pdf: false,
  routing: {
    ok: true,
    sender: { scheme: 'iso6523-actorid-upis', value: partyId },
    receiver: { scheme: 'iso6523-actorid-upis', value: '0106:87654321' },
    countryC1: 'NL',
  },
});
const detected = (documentType: string): CheckDocumentResult['detection'] => ({
  ok: true,
  format: { id: 'peppol-bis3-ubl', name: 'BIS 3', syntax: 'UBL', documentType, documentTypeId: SOURCE_TYPE },
});
const ROUTE = {
  sender: { scheme: 'iso6523-actorid-upis', value: PARTY_A },
  receiver: { scheme: 'iso6523-actorid-upis', value: '0106:87654321' },
  countryC1: 'NL',
  documentType: { scheme: 'busdox-docid-qns', value: SOURCE_TYPE },
  process: { scheme: 'cenbii-procid-ubl', value: 'urn:fdc:peppol.eu:2017:poacc:billing:01:1.0' },
  smpUrl: 'https://smp.example.test',
  endpointUrl: 'https://ap.example.test/as4',
  receiverCertificate: 'AA==',
};
const peppolAnswer = (outcome: SendPeppolOutcome['outcome']): SendPeppolOutcome => ({
  outcome,
  messageId: 'm@gateway',
  endpoint: ROUTE.endpointUrl,
  ...(outcome === 'delivered' ? { receiptMessageId: 'r' } : { httpStatus: outcome === 'failed' ? 400 : 503 }),
});

/** How a document's stubbed steps answer. */
interface Script {
  check: CheckDocumentResult;
  /** sendPeppol's answers in turn (the last repeats). */
  send?: SendPeppolOutcome['outcome'][];
}

// The first retry waits an hour: the run waits until retryNow wakes it (or the test ends it).
const SCHEDULE: RetrySchedule = { kind: 'table', delaysMs: [3_600_000] };

describe('operator searches (docs/operations.md) on the dev server', () => {
  const taskQueue = `opsearch-${randomUUID()}`;
  const tenantA = `opsA${randomUUID().slice(0, 8)}`;
  const tenantB = `opsB${randomUUID().slice(0, 8)}`;
  const since = new Date(Date.now() - 60_000).toISOString();
  const scripts = new Map<string, Script>();
  const doc = (script: Script) => {
    const id = randomUUID();
    scripts.set(id, script);
    return id;
  };
  const valid = (documentType: string, partyId: string): CheckDocumentResult => ({
    detection: detected(documentType),
    validation: { kind: 'valid', warnings: 0, ruleSets: ['r@1'] },
    facts: facts(partyId),
  });
  // tenant A: a delivered invoice, an invalid one, a delivered credit note of party B; tenant B: a refused invoice,
  // one waiting for its second attempt, an order refused by its seller; tenant A again: a run without attributes.
  const delivered = doc({ check: valid('Invoice', PARTY_A), send: ['delivered'] });
  const invalid = doc({
    check: {
      detection: detected('Invoice'),
      validation: { kind: 'invalid', errors: 1, reasonCodes: ['BR-01'], summary: 'BR-01' },
      facts: facts(PARTY_A),
    },
  });
  const creditNote = doc({ check: valid('CreditNote', PARTY_B), send: ['delivered'] });
  const refused = doc({ check: valid('Invoice', PARTY_B), send: ['failed'] });
  const waiting = doc({ check: valid('Invoice', PARTY_B), send: ['retryable', 'delivered'] });
  const order = randomUUID();
  const received = randomUUID();
  const unindexed = doc({ check: valid('Invoice', PARTY_A), send: ['delivered'] });

  let connection: Connection;
  let client: Client;
  let worker: Worker;
  let running: Promise<void>;
  let starter: TemporalWorkflowStarter;
  let bare: TemporalWorkflowStarter;

  beforeAll(async () => {
    const sendCounts = new Map<string, number>();
    const activities = {
      checkDocument: async (input: SendInvoiceInput) => scripts.get(input.documentId)!.check,
      chooseChannel: async (input: ChooseChannelInput): Promise<ChooseChannelOutcome> => ({
        ok: true,
        channel: { kind: 'peppol', hookId: null, output: [], mlsType: null },
        event: { eventId: input.eventId, label: 'routed' },
      }),
      resolveRecipient: async (): Promise<ResolveRecipientOutcome> => ({ kind: 'found', route: ROUTE }),
      sendPeppol: async (input: Pick<SendPeppolInput, 'documentId'>) => {
        const answers = scripts.get(input.documentId)!.send!;
        const n = sendCounts.get(input.documentId) ?? 0;
        sendCounts.set(input.documentId, n + 1);
        return peppolAnswer(answers[Math.min(n, answers.length - 1)]!);
      },
      resolveAndSendPeppol: async (input: Pick<SendPeppolInput, 'documentId'>) => ({
        resolved: { kind: 'found', route: ROUTE },
        sent: await activities.sendPeppol(input),
      }),
      publishSendEvent: async (input: SendEventInput) => ({ eventId: input.eventId, label: input.topic }),
      checkOrder: async (): Promise<CheckOrderResult> => ({ ok: true, orderId: 'PO-1' }),
      sendOrderAttempt: async () => ({
        outcome: 'failed',
        to: '0106:87654321',
        endpoint: ROUTE.endpointUrl,
        messageId: 'o@gateway',
        reason: 'HTTP 400',
      }),
      publishOrderEvent: async (input: { eventId: string }) => ({ eventId: input.eventId }),
      // A received invoice that cannot be read: registered as the party's document, announced as an error.
      detectReceivedFormat: async () => ({ ok: false, code: 'UNKNOWN_FORMAT', message: 'not a known format' }),
      registerReceivedDocument: async () => ({
        documentId: received,
        state: 'rejected',
        eventId: randomUUID(),
        topic: 'InvoiceReceivedError',
      }),
    };
    const native = await NativeConnection.connect({ address: temporalAddress });
    worker = await Worker.create({
      connection: native,
      namespace: 'default',
      taskQueue,
      workflowBundle: await testWorkflowBundle(),
      activities,
    });
    running = worker.run().finally(() => native.close());
    const settings = { address: temporalAddress, namespace: 'default', taskQueue, peppolSendSchedule: SCHEDULE };
    starter = await TemporalWorkflowStarter.connect({ ...settings, searchAttributes: true });
    bare = await TemporalWorkflowStarter.connect({ ...settings, searchAttributes: false });
    connection = await Connection.connect({ address: temporalAddress });
    client = new Client({ connection, namespace: 'default' });

    for (const [tenantId, documentId] of [
      [tenantA, delivered],
      [tenantA, invalid],
      [tenantA, creditNote],
      [tenantB, refused],
      [tenantB, waiting],
    ] as const)
      expect(await starter.startSendInvoice({ tenantId, documentId })).toBe('started');
    expect(await starter.startSendOrder({ tenantId: tenantB, documentId: order })).toBe('started');
    expect(await bare.startSendInvoice({ tenantId: tenantA, documentId: unindexed })).toBe('started');
    const message = { tenantId: tenantA, messageId: `opsearch-${received}@sender.example` };
    expect(await starter.startReceiveDocument(message)).toBe('started');
  });

  afterAll(async () => {
    await client?.workflow
      .getHandle(sendInvoiceWorkflowId(tenantB, waiting))
      .terminate('test over')
      .catch(() => undefined);
    await starter?.close();
    await bare?.close();
    await connection?.close();
    worker?.shutdown();
    await running;
  });

  /** The gateway's search attributes of a run as the server has them (not the server's own, e.g. BuildIds). */
  const gatewayAttributes = async (handle: WorkflowHandle): Promise<Record<string, unknown>> => {
    const names = new Set(requiredSearchAttributes(true).map((k) => k.name));
    const pairs = (await handle.describe()).typedSearchAttributes.getAll();
    return Object.fromEntries(pairs.filter((p) => names.has(p.key.name)).map((p) => [p.key.name, p.value]));
  };

  /** The documents (DocumentId) of the runs a query finds, on this file's task queue, sorted. */
  const find = async (query: string): Promise<string[]> => {
    const found: WorkflowExecutionInfo[] = [];
    for await (const run of client.workflow.list({ query: `(${query}) AND TaskQueue = '${taskQueue}'` }))
      found.push(run);
    return found.map((r) => String(r.searchAttributes['DocumentId']?.[0] ?? r.workflowId)).sort();
  };
  /** Asks `query` until it finds exactly `expected` (visibility lags the runs), failing with what it found last. */
  const expectFound = async (query: string, expected: string[]) => {
    let last: string[] = [];
    await eventually(
      async () => {
        last = await find(query);
        return JSON.stringify(last) === JSON.stringify([...expected].sort());
      },
      20_000,
      () => `${query} finding ${JSON.stringify([...expected].sort())} (last: ${JSON.stringify(last)})`,
      200,
    );
  };

  it('keeps the attributes of each run current: kind, party, state, outcome, channel, attempt', async () => {
    const handle = client.workflow.getHandle(sendInvoiceWorkflowId(tenantA, delivered));
    await handle.result();
    expect(await gatewayAttributes(handle)).toEqual({
      TenantId: tenantA,
      DocumentId: delivered,
      PartyId: PARTY_A,
      DocumentKind: 'invoice',
      DocumentState: 'delivered',
      Outcome: 'InvoiceSent',
      Channel: 'peppol',
      Attempt: 1,
    });
    // A run started without attributes sets none, and still completes (an unregistered key would stop it).
    const plain = client.workflow.getHandle(sendInvoiceWorkflowId(tenantA, unindexed));
    expect((await plain.result()).state).toBe('delivered');
    expect(await gatewayAttributes(plain)).toEqual({});
  });

  it('finds every invoice that ended in InvoiceSentError since a time, and by tenant', async () => {
    await expectFound(`WorkflowType = 'sendInvoice' AND Outcome = 'InvoiceSentError' AND CloseTime > '${since}'`, [
      invalid,
      refused,
    ]);
    await expectFound(`WorkflowType = 'sendInvoice' AND Outcome = 'InvoiceSentError' AND TenantId = '${tenantB}'`, [
      refused,
    ]);
    // Refused before any channel was chosen (detection, validation): no Channel.
    await expectFound(`WorkflowType = 'sendInvoice' AND Outcome = 'InvoiceSentError' AND Channel IS NULL`, [invalid]);
  });

  it('finds a document by its id, a party, a kind and a channel', async () => {
    await expectFound(`TenantId = '${tenantA}' AND DocumentId = '${creditNote}'`, [creditNote]);
    await expectFound(`PartyId = '${PARTY_B}' AND WorkflowType = 'sendInvoice'`, [creditNote, refused, waiting]);
    await expectFound(`DocumentKind = 'creditNote'`, [creditNote]);
    await expectFound(`Channel = 'peppol' AND Outcome = 'InvoiceSent'`, [creditNote, delivered]);
    await expectFound(`DocumentKind = 'order' AND Outcome = 'OrderSentError'`, [order]);
    // A received document is found by the party's document id, which its run learns when it registers it.
    await expectFound(`WorkflowType = 'receiveDocument' AND Outcome = 'InvoiceReceivedError'`, [received]);
    await expectFound(`TenantId = '${tenantA}' AND DocumentState = 'rejected'`, [received]);
  });

  it('finds the documents waiting for their next attempt, and until when; retryNow takes one out', async () => {
    const soon = new Date(Date.now() + 2 * 3_600_000).toISOString();
    await expectFound(`ExecutionStatus = 'Running' AND DocumentState = 'retrying' AND NextAttemptOn < '${soon}'`, [
      waiting,
    ]);
    await expectFound(`NextAttemptOn < '${new Date().toISOString()}'`, []);
    await expectFound(`WorkflowType = 'sendInvoice' AND Attempt >= 1 AND ExecutionStatus = 'Running'`, [waiting]);
    const handle = client.workflow.getHandle(sendInvoiceWorkflowId(tenantB, waiting));
    await handle.signal(RETRY_NOW_SIGNAL);
    expect((await handle.result()).state).toBe('delivered');
    const values = await gatewayAttributes(handle);
    expect(values).toMatchObject({ DocumentState: 'delivered', Outcome: 'InvoiceSent', Attempt: 2 });
    // The states it went through, as the record's: checked, an attempt, the wait, the next attempt, delivered.
    const history = await handle.fetchHistory();
    const states = (history.events ?? []).flatMap((e) => {
      const field = e.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields?.['DocumentState'];
      return field ? [defaultPayloadConverter.fromPayload(field)] : [];
    });
    expect(states).toEqual(['validated', 'sending', 'retrying', 'sending', 'delivered']);
    expect(values).not.toHaveProperty('NextAttemptOn');
    await expectFound(`NextAttemptOn IS NOT NULL`, []);
    // The order's run: a refusal on the first attempt, its state the record's.
    expect(await gatewayAttributes(client.workflow.getHandle(sendOrderWorkflowId(tenantB, order)))).toEqual({
      TenantId: tenantB,
      DocumentId: order,
      DocumentKind: 'order',
      DocumentState: 'InvoiceSentError',
      Outcome: 'OrderSentError',
      Attempt: 1,
    });
  });
});
