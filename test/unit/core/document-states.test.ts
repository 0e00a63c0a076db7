import {
  DocumentState,
  Transition,
  generationKey,
  generationOf,
  historyOrder,
  isFinalOrder,
  sendTransition,
} from '../../../src/core/document-states';
import { KNOWN_TOPICS } from '../../../src/core/topics';

const S = DocumentState;

/** Where an entry of `state` stands when it precedes attempt `attempt`'s transition. */
function orderBefore(state: string, attempt: number): number {
  switch (state) {
    case S.Received:
      return historyOrder('received', state);
    case S.Accepted:
      return historyOrder('accepted', state);
    case S.Detected:
    case S.Rejected:
      return historyOrder('detect', state);
    case S.Validated:
    case S.NotValidated:
    case S.Invalid:
      return historyOrder('validate', state);
    case S.Sending:
      return historyOrder(`send-attempt-${attempt - 1}`, state);
    case S.Retrying:
      return historyOrder(`retry-${attempt - 1}`, state);
    case S.Resending:
      return historyOrder(generationKey(1, 'resend'), state);
    case S.InvoiceSentError:
      return historyOrder('send-error', state);
    default:
      throw new Error(`no order for ${state}`);
  }
}

describe('document transition table', () => {
  const transitions = Object.entries(Transition);

  it.each(transitions)('%s writes a state its history key may hold', (_name, t) => {
    expect(() => historyOrder(t.key(1), t.to)).not.toThrow();
  });

  it.each(transitions)('%s never moves a document back in its sequence', (_name, t) => {
    const attempt = 2;
    for (const from of t.from) {
      // A resend and what follows it are written in the next generation of keys.
      const generation = t.to === S.Resending || from === S.Resending ? 1 : 0;
      const to = historyOrder(generationKey(generation, t.key(attempt)), t.to);
      // A retry entry follows the attempt with its own number; everything else follows what came before.
      const before =
        t.to === S.Retrying && from === S.Sending
          ? historyOrder(`send-attempt-${attempt}`, from)
          : orderBefore(from, attempt);
      expect(before).toBeLessThan(to);
    }
  });

  it('publishes only known topics, and the final transitions end the document', () => {
    for (const [, t] of transitions) if ('topic' in t) expect(KNOWN_TOPICS).toContain(t.topic);
    expect(isFinalOrder(historyOrder(Transition.delivered.key(0), Transition.delivered.to))).toBe(true);
    expect(isFinalOrder(historyOrder(Transition.sendError.key(0), Transition.sendError.to))).toBe(true);
    expect(isFinalOrder(historyOrder(Transition.retry.key(3), Transition.retry.to))).toBe(false);
  });

  it('maps each InvoiceSent* topic to the transition that publishes it', () => {
    for (const topic of ['InvoiceSent', 'InvoiceSentRetry', 'InvoiceSentError'] as const) {
      expect(sendTransition(topic).topic).toBe(topic);
    }
    expect(sendTransition('InvoiceSentRetry').key(4)).toBe('retry-4');
  });

  it('orders a resend generation after everything before it, final entries included', () => {
    const firstEnd = historyOrder('send-error', S.InvoiceSentError);
    const resend = historyOrder(generationKey(1, 'resend'), S.Resending);
    const attempt = historyOrder(generationKey(1, 'send-attempt-1'), S.Sending);
    const end = historyOrder(generationKey(1, 'delivered'), S.Delivered);
    expect(firstEnd).toBeLessThan(resend);
    expect(resend).toBeLessThan(attempt);
    expect(attempt).toBeLessThan(end);
    expect(historyOrder(generationKey(2, 'resend'), S.Resending)).toBeGreaterThan(end);
    expect([isFinalOrder(firstEnd), isFinalOrder(resend), isFinalOrder(attempt), isFinalOrder(end)]).toEqual([
      true,
      false,
      false,
      true,
    ]);
    expect([generationOf('retry-3'), generationOf('g2:retry-3'), generationKey(0, 'x')]).toEqual([0, 2, 'x']);
    expect(() => historyOrder('g1:resend', S.Sending)).toThrow(/cannot record/);
  });
});
