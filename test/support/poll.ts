/**
 * The one polling helper of the tests: waits for something that happens elsewhere (a workflow, a server, a thread)
 * by asking again and again, never longer than a deadline, and says what it waited for when that passes.
 */

/** What `check` answers while the condition does not hold yet. */
type NotYet = undefined | false;

/**
 * Calls `check` until it answers something other than `undefined` or `false`, and returns that answer. Past
 * `timeoutMs` it fails with `what` (a function is asked at that moment, so it can name the last thing seen). An error
 * thrown by `check` is not retried: it fails the wait at once.
 */
export async function eventually<T>(
  check: () => Promise<T | NotYet> | T | NotYet,
  timeoutMs = 30_000,
  what: string | (() => string) = 'condition',
  intervalMs = 50,
): Promise<Exclude<T, NotYet>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const answer = await check();
    if (answer !== undefined && answer !== false) return answer as Exclude<T, NotYet>;
    if (Date.now() >= deadline) {
      throw new Error(`${typeof what === 'function' ? what() : what} not reached within ${timeoutMs} ms`);
    }
    await new Promise((resolve) => setTimeout(resolve, Math.min(intervalMs, Math.max(0, deadline - Date.now()))));
  }
}
