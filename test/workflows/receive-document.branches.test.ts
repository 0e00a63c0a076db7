import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import { ApplicationFailure } from '@temporalio/common';
import type { Client } from '@temporalio/client';
import type { DetectionOutcome } from '../../workflows/contracts/send-invoice';
import {
  MLS_FORMAT_ID,
  RECEIVE_DOCUMENT_WORKFLOW,
  injectedMessageId,
  type AutomaticMlsDecision,
  type AutomaticMlsInput,
  type ReceiveDocumentInput,
  type ReceiveDocumentResult,
  type ReceivedDocumentInput,
  type ReceivedValidation,
  type ReceivedValidationInput,
} from '../../workflows/contracts/receive-document';
import {
  SEND_MLS_WORKFLOW,
  sendMlsWorkflowId,
  type MlsSentEventInput,
  type SendMlsAttempt,
  type SendMlsAttemptResult,
  type SendMlsInput,
  type SendMlsResult,
} from '../../workflows/contracts/send-mls';
import { timeSkippingEnvironment, withStubbedWorker } from '../support/time-skipping';

/*
 * The branches of receiveDocument with stubbed activities: a recognised format is validated before the document is
 * registered and announced, and the verdict travels to the register step whatever it is (an invalid document is
 * still registered and announced); an unreadable one is registered without validation. After a validated document
 * that came in over AS4, the MLS policy decides, and a decided MLS is the document's own sendMessageLevelStatus run
 * (started once: an MLS run that exists for the document is its only MLS).
 */

const DETECTED: DetectionOutcome = {
  ok: true,
  format: { id: 'peppol-bis3-ubl-invoice', name: 'BIS 3', syntax: 'UBL', documentType: 'Invoice' },
};
const INVALID: ReceivedValidation = {
  kind: 'invalid',
  errors: 1,
  reasonCodes: ['BV'],
  ruleIds: ['BR-CL-01'],
  summary: '[BV] BR-CL-01 at /Invoice',
};

const HISTORIES = path.resolve(__dirname, '../replay/histories');

describe('receiveDocument branches (time-skipping server, stubbed activities)', () => {
  const env = timeSkippingEnvironment();

  async function run(
    detection: DetectionOutcome,
    verdict: ReceivedValidation | Error,
    input: Partial<ReceiveDocumentInput> = {},
    record?: string,
    mls: {
      decision?: AutomaticMlsDecision | Error;
      /** What the MLS run's attempts answer, in turn (default: delivered). */
      outcomes?: Array<SendMlsAttemptResult['outcome']>;
      documentId?: string;
      before?: (client: Client, taskQueue: string) => Promise<void>;
    } = {},
  ) {
    const calls: string[] = [];
    const validations: ReceivedValidationInput[] = [];
    const registers: ReceivedDocumentInput[] = [];
    const decisions: AutomaticMlsInput[] = [];
    const attempts: Array<SendMlsAttempt & { at: number }> = [];
    const sentEvents: MlsSentEventInput[] = [];
    const documentId = mls.documentId ?? randomUUID();
    const activities = {
      detectReceivedFormat: async () => {
        calls.push('detect');
        return detection;
      },
      validateReceivedDocument: async (i: ReceivedValidationInput) => {
        calls.push('validate');
        validations.push(i);
        if (verdict instanceof Error) throw verdict;
        return verdict;
      },
      registerReceivedDocument: async (i: ReceivedDocumentInput) => {
        calls.push('register');
        registers.push(i);
        return { documentId, state: 'x', eventId: i.eventId, topic: 'InvoiceReceived' };
      },
      decideAutomaticMls: async (i: AutomaticMlsInput): Promise<AutomaticMlsDecision> => {
        calls.push('decide-mls');
        decisions.push(i);
        if (mls.decision instanceof Error) throw mls.decision;
        return mls.decision ?? { send: false, reason: 'not-requested' };
      },
      sendMlsAttempt: async (i: SendMlsAttempt): Promise<SendMlsAttemptResult> => {
        attempts.push({ ...i, at: await env().currentTimeMs() });
        return {
          outcome: mls.outcomes?.[attempts.length - 1] ?? 'delivered',
          mlsDocumentId: `mls-of-${i.documentId}`,
          to: 'iso6523-actorid-upis::0242:000777',
          endpoint: 'https://c2.example.test/as4',
          messageId: 'm-1@invoice-gateway',
        };
      },
      publishMlsSent: async (i: MlsSentEventInput) => {
        sentEvents.push(i);
        return { eventId: i.eventId };
      },
    };
    const args: ReceiveDocumentInput = { tenantId: 'test', messageId: `${randomUUID()}@peer`, ...input };
    const { result, mlsRun } = await withStubbedWorker(env(), activities, async (client, taskQueue) => {
      await mls.before?.(client, taskQueue);
      const workflowId = `receive-document:test:${args.messageId}`;
      const out = (await client.workflow.execute(RECEIVE_DOCUMENT_WORKFLOW, {
        taskQueue,
        workflowId,
        args: [args],
      })) as ReceiveDocumentResult;
      // RECORD_REPLAY_HISTORIES=1 saves the run as a replay fixture (test/workflows/replay.test.ts).
      if (process.env['RECORD_REPLAY_HISTORIES'] && record) {
        const history = await client.workflow.getHandle(workflowId).fetchHistory();
        writeFileSync(path.join(HISTORIES, `${record}.json`), `${historyToJSON(history)}\n`);
      }
      // The MLS run outlives this one: wait for it while the worker still runs.
      const automatic = out.automaticMls;
      const mlsResult =
        automatic && automatic.sent
          ? ((await client.workflow.getHandle(automatic.workflowId).result()) as SendMlsResult)
          : undefined;
      return { result: out, mlsRun: mlsResult };
    });
    return { result, calls, validations, registers, decisions, attempts, sentEvents, mlsRun, args, documentId };
  }

  it('validates a recognised format with its id, then registers with the verdict (an invalid one too)', async () => {
    const r = await run(DETECTED, INVALID, {}, 'receive-document-invalid');
    expect(r.calls).toEqual(['detect', 'validate', 'register', 'decide-mls']);
    expect(r.validations[0]).toMatchObject({ ...r.args, formatId: 'peppol-bis3-ubl-invoice' });
    expect(r.registers[0]).toMatchObject({ ...r.args, detection: DETECTED, validation: INVALID });
    expect(r.result).toMatchObject({ state: 'detected', validation: INVALID, received: { topic: 'InvoiceReceived' } });
  });

  it('still registers and announces a document whose validation cannot run, as not validated and why', async () => {
    const r = await run(
      DETECTED,
      ApplicationFailure.nonRetryable('rule pack en16931-ubl missing', 'DEPENDENCY_UNAVAILABLE'),
      {},
      'receive-document-validation-failed',
    );
    expect(r.calls).toEqual(['detect', 'validate', 'register', 'decide-mls']);
    expect(r.registers[0]?.validation).toEqual({
      kind: 'not-validated',
      reason: 'Validation could not run: rule pack en16931-ubl missing',
    });
    expect(r.result).toMatchObject({ state: 'detected', received: { topic: 'InvoiceReceived' } });
  });

  it('registers an unreadable document without validating it', async () => {
    const unreadable: DetectionOutcome = { ok: false, code: 'UNSAFE_XML', message: 'DTD refused' };
    const r = await run(unreadable, INVALID, {}, 'receive-document-unreadable');
    expect(r.calls).toEqual(['detect', 'register']);
    expect(r.registers[0]).not.toHaveProperty('validation');
    expect(r.result).toMatchObject({ state: 'rejected' });
    expect(r.result.validation).toBeUndefined();
  });

  it('registers a received MLS without the official validation (the register step reads it with the MLS rules)', async () => {
    const mls: DetectionOutcome = {
      ok: true,
      format: { id: MLS_FORMAT_ID, name: 'Peppol MLS', syntax: 'UBL', documentType: 'ApplicationResponse' },
    };
    const r = await run(mls, INVALID, {}, 'receive-document-mls');
    expect(r.calls).toEqual(['detect', 'register']);
    expect(r.registers[0]).toMatchObject({ ...r.args, detection: mls });
    expect(r.registers[0]).not.toHaveProperty('validation');
    expect(r.result).toMatchObject({ state: 'detected' });
    expect(r.result.validation).toBeUndefined();
  });

  it('runs an injected document through the same steps, naming its record', async () => {
    const documentId = randomUUID();
    const valid: ReceivedValidation = { kind: 'valid', warnings: 0, ruleSets: ['r@1'] };
    const r = await run(
      DETECTED,
      valid,
      { messageId: injectedMessageId(documentId), injected: { documentId } },
      'receive-document-injected',
    );
    expect(r.calls).toEqual(['detect', 'validate', 'register']);
    expect(r.validations[0]).toMatchObject({ injected: { documentId } });
    // No access point sent it: nothing to answer with an MLS.
    expect(r.result.automaticMls).toBeUndefined();
    expect(r.registers[0]).toMatchObject({ injected: { documentId }, validation: valid });
  });

  describe('automatic MLS', () => {
    const VALID: ReceivedValidation = { kind: 'valid', warnings: 0, ruleSets: ['en16931-ubl@1.3.13'] };
    const HOUR = 3_600_000;
    // Unlike the built-in Peppol schedule (10 minutes first): the MLS run must wait what the receive run was given.
    const SCHEDULE = { kind: 'table' as const, delaysMs: [7 * HOUR] };

    it('asks the policy about a validated document received over AS4, and ends there when it sends nothing', async () => {
      const decision: AutomaticMlsDecision = { send: false, reason: 'failure-only' };
      const r = await run(DETECTED, VALID, {}, undefined, { decision });
      expect(r.decisions).toEqual([
        {
          tenantId: 'test',
          messageId: r.args.messageId,
          documentId: r.documentId,
          documentType: 'Invoice',
          validation: VALID,
        },
      ]);
      expect(r.result.automaticMls).toEqual({ sent: false, reason: 'failure-only' });
      expect(r.attempts).toEqual([]);
    });

    it("starts the document's MLS run for an AP: sent on the Peppol schedule, MessageLevelStatusSent", async () => {
      const decision: AutomaticMlsDecision = { send: true, responseCode: 'AP', lines: [], requestedBy: ['party'] };
      const r = await run(DETECTED, VALID, { peppolSchedule: SCHEDULE }, 'receive-document-automatic-mls', {
        decision,
        outcomes: ['retryable', 'delivered'],
      });
      const workflowId = sendMlsWorkflowId('test', r.documentId);
      expect(r.result.automaticMls).toEqual({ sent: true, responseCode: 'AP', workflowId, started: true });
      // The run's input reaches no step; the MLS run gets it.
      expect(r.registers[0]).not.toHaveProperty('peppolSchedule');
      expect(r.attempts).toHaveLength(2);
      expect(r.attempts[0]).toMatchObject({ tenantId: 'test', documentId: r.documentId, responseCode: 'AP' });
      expect(r.attempts[0]).not.toHaveProperty('lines');
      expect(r.attempts[1]!.at - r.attempts[0]!.at).toBeGreaterThanOrEqual(7 * HOUR);
      expect(r.mlsRun).toMatchObject({ outcome: 'sent', attempts: 2 });
      expect(r.sentEvents).toEqual([expect.objectContaining({ documentId: r.documentId, responseCode: 'AP' })]);
    });

    it('sends an RE with its lines for an invalid document', async () => {
      const lines = [
        { reasonCode: 'BV' as const, description: 'Amount due mismatch', ruleId: 'BR-CO-16', location: '/Invoice' },
        { reasonCode: 'BW' as const, description: 'Warning', ruleId: 'PEPPOL-EN16931-R001' },
      ];
      const decision: AutomaticMlsDecision = {
        send: true,
        responseCode: 'RE',
        description: 'The document was rejected: 1 failure (BV)',
        lines,
        requestedBy: ['sender'],
      };
      const r = await run(DETECTED, INVALID, {}, undefined, { decision });
      expect(r.result.automaticMls).toMatchObject({ sent: true, responseCode: 'RE', started: true });
      expect(r.attempts[0]).toMatchObject({
        responseCode: 'RE',
        description: 'The document was rejected: 1 failure (BV)',
        lines,
      });
      expect(r.mlsRun?.outcome).toBe('sent');
    });

    it('ends with the document announced and says why when the MLS cannot be decided', async () => {
      const decision = ApplicationFailure.nonRetryable('received message m@peer not found', 'DOCUMENT_NOT_FOUND');
      const r = await run(DETECTED, VALID, {}, undefined, { decision });
      expect(r.calls).toEqual(['detect', 'validate', 'register', 'decide-mls']);
      expect(r.result.automaticMls).toEqual({
        sent: false,
        reason: 'MLS not decided: received message m@peer not found',
      });
      expect(r.attempts).toEqual([]);
    });

    it('starts no second MLS when the document has one already (one MLS per document)', async () => {
      const decision: AutomaticMlsDecision = { send: true, responseCode: 'AP', lines: [], requestedBy: ['party'] };
      const documentId = randomUUID();
      const manual: SendMlsInput = {
        tenantId: 'test',
        documentId,
        responseCode: 'AB',
        description: 'Received',
        requestedBy: 'api',
      };
      const r = await run(DETECTED, VALID, {}, 'receive-document-mls-exists', {
        decision,
        documentId,
        // An MLS sent through the API before the run decided, under the document's MLS run id.
        before: async (client, taskQueue) => {
          await client.workflow.execute(SEND_MLS_WORKFLOW, {
            taskQueue,
            workflowId: sendMlsWorkflowId('test', documentId),
            args: [manual],
          });
        },
      });
      expect(r.result.automaticMls).toEqual({
        sent: true,
        responseCode: 'AP',
        workflowId: sendMlsWorkflowId('test', documentId),
        started: false,
      });
      // The API's MLS is the only one that went out.
      expect(r.attempts.map((a) => a.responseCode)).toEqual(['AB']);
      expect(r.sentEvents).toHaveLength(1);
    });
  });
});
