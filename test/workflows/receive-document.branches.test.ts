import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import { ApplicationFailure } from '@temporalio/common';
import type { DetectionOutcome } from '../../workflows/contracts/send-invoice';
import {
  MLS_FORMAT_ID,
  RECEIVE_DOCUMENT_WORKFLOW,
  injectedMessageId,
  type ReceiveDocumentInput,
  type ReceiveDocumentResult,
  type ReceivedDocumentInput,
  type ReceivedValidation,
  type ReceivedValidationInput,
} from '../../workflows/contracts/receive-document';
import { timeSkippingEnvironment, withStubbedWorker } from '../support/time-skipping';

/*
 * The branches of receiveDocument with stubbed activities: a recognised format is validated before the document is
 * registered and announced, and the verdict travels to the register step whatever it is (an invalid document is
 * still registered and announced); an unreadable one is registered without validation.
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
  ) {
    const calls: string[] = [];
    const validations: ReceivedValidationInput[] = [];
    const registers: ReceivedDocumentInput[] = [];
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
        return { documentId: 'd-1', state: 'x', eventId: i.eventId, topic: 'InvoiceReceived' };
      },
    };
    const args: ReceiveDocumentInput = { tenantId: 'test', messageId: `${randomUUID()}@peer`, ...input };
    const result = await withStubbedWorker(env(), activities, async (client, taskQueue) => {
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
      return out;
    });
    return { result, calls, validations, registers, args };
  }

  it('validates a recognised format with its id, then registers with the verdict (an invalid one too)', async () => {
    const r = await run(DETECTED, INVALID, {}, 'receive-document-invalid');
    expect(r.calls).toEqual(['detect', 'validate', 'register']);
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
    expect(r.calls).toEqual(['detect', 'validate', 'register']);
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
    expect(r.registers[0]).toMatchObject({ injected: { documentId }, validation: valid });
  });
});
