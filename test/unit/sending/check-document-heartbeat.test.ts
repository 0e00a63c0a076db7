import { validate } from '../../../src/sending/check-document';
import type { ValidationResult } from '../../../src/validation';

// The validation step beats while the validator works: a validation longer than the step's heartbeat timeout (a
// 1,000-line invoice on a loaded machine) must not be taken for a dead worker's and started again beside itself.

describe('the validation step heartbeats while it waits for the validator', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('beats every few seconds until the validation answers, then stops', async () => {
    let answer!: (r: ValidationResult) => void;
    const heartbeat = jest.fn();
    const recordTransition = jest.fn(async () => undefined);
    const deps = {
      heartbeat,
      validator: { validate: () => new Promise<ValidationResult>((resolve) => (answer = resolve)) },
      documents: { recordTransition },
    } as unknown as Parameters<typeof validate>[0];
    const outcome = validate(deps, { tenantId: 't', documentId: 'd' }, Buffer.from('<Invoice/>'), 'peppol-bis3-ubl');
    await jest.advanceTimersByTimeAsync(90_000);
    // Past the step's 1-minute heartbeat timeout, and beating all along.
    expect(heartbeat.mock.calls.length).toBeGreaterThanOrEqual(18);
    answer({ isValid: true, assertions: [], ruleSets: [{ id: 'peppol-bis3-ubl', version: '2026.5' }] } as never);
    await expect(outcome).resolves.toMatchObject({ kind: 'valid', ruleSets: ['peppol-bis3-ubl@2026.5'] });
    const beats = heartbeat.mock.calls.length;
    await jest.advanceTimersByTimeAsync(30_000);
    expect(heartbeat.mock.calls.length).toBe(beats);
    expect(recordTransition).toHaveBeenCalledTimes(1);
  });
});
