/**
 * Faults the reference tax authority can be told to show, for tests of the reporting side: answer HTTP 500 the next n
 * times, reject every report (or every report of one reporter role) with a given reason (MLS RE), or answer slowly.
 * One mode at a time; bounded values.
 */
import { z } from 'zod';

export const MAX_FAULT_COUNT = 1000;
export const MAX_FAULT_DELAY_MS = 120_000;
export const MAX_REASON_LENGTH = 500;

const FaultSchema = z.discriminatedUnion('mode', [
  z.object({ mode: z.literal('none') }).strict(),
  z.object({ mode: z.literal('http-500'), count: z.number().int().min(1).max(MAX_FAULT_COUNT).default(1) }).strict(),
  z
    .object({
      mode: z.literal('reject'),
      reason: z.string().trim().min(1).max(MAX_REASON_LENGTH).default('rejected by the simulator (fault injected)'),
      /** How many reports to reject; without it, every report until the mode is changed. */
      count: z.number().int().min(1).max(MAX_FAULT_COUNT).optional(),
      /** Only reports of this reporter role (the other role's reports pass and leave the count as it is). */
      role: z.enum(['C2', 'C3']).optional(),
    })
    .strict(),
  z
    .object({
      mode: z.literal('slow'),
      delayMs: z.number().int().min(1).max(MAX_FAULT_DELAY_MS),
      count: z.number().int().min(1).max(MAX_FAULT_COUNT).optional(),
    })
    .strict(),
]);

export type Fault = z.infer<typeof FaultSchema>;

export function parseFault(body: unknown): { ok: true; fault: Fault } | { ok: false; problems: string[] } {
  const r = FaultSchema.safeParse(body);
  if (r.success) return { ok: true, fault: r.data };
  return {
    ok: false,
    problems: r.error.issues.slice(0, 5).map((i) => `${i.path.join('.') || '(body)'}: ${i.message}`),
  };
}

/** The current fault and what is left of it. */
export class Faults {
  private fault: Fault = { mode: 'none' };

  set(fault: Fault): void {
    this.fault = fault;
  }

  get current(): Fault {
    return this.fault;
  }

  /** Whether this request is answered with 500 (counts one down). */
  takeHttp500(): boolean {
    const f = this.fault;
    if (f.mode !== 'http-500') return false;
    this.consume(f);
    return true;
  }

  /** The delay before this answer, in ms (counts one down when counted). */
  takeDelay(): number {
    const f = this.fault;
    if (f.mode !== 'slow') return 0;
    this.consume(f);
    return f.delayMs;
  }

  /** The reason to reject this report with, if rejecting it (counts one down when counted). */
  takeReject(report: { role?: string }): string | undefined {
    const f = this.fault;
    if (f.mode !== 'reject' || (f.role && f.role !== report.role)) return undefined;
    this.consume(f);
    return f.reason;
  }

  private consume(f: Exclude<Fault, { mode: 'none' }>): void {
    if (f.count === undefined) return;
    this.fault = f.count <= 1 ? { mode: 'none' } : { ...f, count: f.count - 1 };
  }
}
