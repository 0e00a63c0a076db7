/** Transient storage failures and their bounded repetition (no driver import: usable from any layer). */

/**
 * A failure worth repeating as it is: a lost connection, a server that labels it retryable, or FerretDB's SQLite
 * backend answering "database is locked" (SQLITE_BUSY) when a writer held the lock past its busy timeout.
 */
export function isTransientStorageError(e: unknown): boolean {
  if (typeof e !== 'object' || e === null) return false;
  const err = e as {
    name?: unknown;
    message?: unknown;
    errorLabels?: unknown;
    hasErrorLabel?: (label: string) => boolean;
  };
  if (err.name === 'MongoNetworkError' || err.name === 'MongoNetworkTimeoutError') return true;
  if (
    typeof err.hasErrorLabel === 'function' &&
    (err.hasErrorLabel('RetryableWriteError') || err.hasErrorLabel('TransientTransactionError'))
  )
    return true;
  return typeof err.message === 'string' && err.message.includes('SQLITE_BUSY');
}

/** Runs an idempotent storage call again after transient failures, with short growing pauses (bounded). */
export async function withStorageRetries<T>(
  call: () => Promise<T>,
  pausesMs: readonly number[] = [100, 400, 1600],
): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await call();
    } catch (e) {
      const pause = pausesMs[attempt];
      if (pause === undefined || !isTransientStorageError(e)) throw e;
      await new Promise((r) => setTimeout(r, pause));
    }
  }
}
