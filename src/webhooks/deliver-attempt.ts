import type { AttemptResult } from '../../workflows/contracts/deliver-webhook';
import type { Admission, AttemptRun } from './admission';
import type { Dispatch, DispatchInput, DispatchResult } from './dispatch';

export type { AttemptResult } from '../../workflows/contracts/deliver-webhook';

/**
 * One attempt of one delivery: admission (a slot under the hook's cap, or the delivery throttled, held or overdue),
 * then dispatch (build, sign, send, log), then admission hears the outcome (the slot back; releases of what is held
 * for the hook).
 */

export interface AttemptInput extends DispatchInput {
  /** The run making the attempt, with its input and progress; without it (the benchmark's fan-out) nothing is held. */
  run?: AttemptRun;
}

export class DeliveryAttempts {
  constructor(
    private readonly admission: Admission,
    private readonly dispatch: Dispatch,
  ) {}

  async attempt(input: AttemptInput, heartbeat: () => void = () => undefined): Promise<AttemptResult> {
    const admitted = await this.admission.admit(input.hookId, input.event, input.run);
    if (admitted.kind !== 'admitted') return admitted;
    let result: DispatchResult | undefined;
    try {
      result = await this.dispatch.dispatch(input, heartbeat, (timedOut) =>
        this.admission.reached(input.hookId, timedOut),
      );
      return result;
    } finally {
      admitted.release();
      if (result) this.admission.settled(input.hookId, result);
    }
  }
}
