import { ApplicationFailure } from '@temporalio/activity';
import { isGatewayError } from '../src/core/gateway-error';

/** The activity edge of GatewayError: its code becomes the failure type, its retry class decides nonRetryable. */
export function toApplicationFailure(e: unknown): unknown {
  if (!isGatewayError(e)) return e;
  return ApplicationFailure.create({
    type: e.code,
    message: e.message,
    nonRetryable: !e.retryable,
    details: e.details ? [e.details] : [],
    cause: e,
  });
}

/** Wraps every function of an activity object so GatewayErrors cross the boundary as ApplicationFailures. */
export function withFailureMapping<T extends Record<string, (...args: never[]) => Promise<unknown>>>(activities: T): T {
  const wrapped: Record<string, unknown> = {};
  for (const [name, fn] of Object.entries(activities)) {
    wrapped[name] = async (...args: never[]) => {
      try {
        return await fn(...args);
      } catch (e) {
        throw toApplicationFailure(e);
      }
    };
  }
  return wrapped as T;
}
