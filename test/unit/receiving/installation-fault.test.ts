import { GatewayError } from '../../../src/core/gateway-error';
import { validateReceived } from '../../../src/receiving/validation';
import type { DocumentRepository } from '../../../src/storage/document.repository';
import { installationFault, validatorFailure } from '../../../src/validation';

const target = { tenantId: 't', documentId: 'd', formatId: 'peppol-bis3-ubl-invoice' };

function refusingValidator(error: Error) {
  return { validate: () => Promise.reject(error) } as never;
}

describe('a fault of the installation is never a verdict on a received document', () => {
  it('a missing rule pack is thrown again as retryable, and nothing is recorded', async () => {
    const recordTransition = jest.fn();
    const missing = new GatewayError('DEPENDENCY_UNAVAILABLE', 'Rule pack en16931-ubl 1.3.16 is not installed', {
      retryable: false,
      details: { reason: 'RULE_PACK_MISSING', pack: 'en16931-ubl' },
    });
    const attempt = validateReceived(
      {
        documents: { recordTransition } as unknown as DocumentRepository,
        validator: refusingValidator(missing),
        heartbeat: () => undefined,
      },
      target,
      Buffer.from('<Invoice/>'),
    );
    await expect(attempt).rejects.toMatchObject({
      code: 'DEPENDENCY_UNAVAILABLE',
      retryable: true,
      details: { reason: 'RULE_PACK_MISSING', pack: 'en16931-ubl' },
    });
    expect(recordTransition).not.toHaveBeenCalled();
  });

  it('bytes the validator cannot read stay the document’s defect (invalid, SV)', async () => {
    const recordTransition = jest.fn(() => Promise.resolve());
    const verdict = await validateReceived(
      {
        documents: { recordTransition } as unknown as DocumentRepository,
        validator: refusingValidator(new GatewayError('BAD_REQUEST', 'not this format')),
        heartbeat: () => undefined,
      },
      target,
      Buffer.from('<Invoice/>'),
    );
    expect(verdict).toMatchObject({ kind: 'invalid', reasonCodes: ['SV'] });
  });

  it('installationFault recognises only DEPENDENCY_UNAVAILABLE', () => {
    expect(installationFault(new GatewayError('DEPENDENCY_UNAVAILABLE', 'xmllint missing'))).toMatchObject({
      retryable: true,
    });
    expect(installationFault(new GatewayError('BAD_REQUEST', 'x'))).toBeUndefined();
    expect(installationFault(new Error('x'))).toBeUndefined();
  });
});

describe('validatorFailure: one reading of a failed validator call for every step that validates', () => {
  it('no pinned rules → no-rules with the reason; unreadable bytes → unreadable with the code', () => {
    const noRules = new GatewayError('NOT_IMPLEMENTED', 'No rules for format x', {
      details: { reason: 'RULES_NOT_AVAILABLE' },
    });
    expect(validatorFailure(noRules)).toEqual({ kind: 'no-rules', reason: 'No rules for format x' });
    const unreadable = new GatewayError('BAD_REQUEST', 'not a UBL invoice');
    expect(validatorFailure(unreadable)).toEqual({
      kind: 'unreadable',
      code: 'BAD_REQUEST',
      summary: 'BAD_REQUEST: not a UBL invoice',
    });
  });

  it('throws an installation fault as retryable and our own failures as they are', () => {
    const missing = new GatewayError('DEPENDENCY_UNAVAILABLE', 'xmllint is not installed', { retryable: false });
    expect(() => validatorFailure(missing)).toThrow(expect.objectContaining({ retryable: true }));
    const notImplemented = new GatewayError('NOT_IMPLEMENTED', 'something else');
    expect(validatorFailure(notImplemented)).toMatchObject({ kind: 'unreadable', code: 'NOT_IMPLEMENTED' });
    const database = new GatewayError('STORAGE_FAILED', 'db down', { retryable: true });
    expect(() => validatorFailure(database)).toThrow(database);
    const bug = new TypeError('x is undefined');
    expect(() => validatorFailure(bug)).toThrow(bug);
  });
});
