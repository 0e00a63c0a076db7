import { fork } from 'node:child_process';
import path from 'node:path';

/**
 * Runs one exported function of a source module in a child process with a capped V8 heap, and reports how it ended:
 * returned, threw (with the error's code, message and details), or died (heap exhausted, V8 abort, time out), with
 * how far the call raised the process's peak resident memory. A call that would take the memory of a real process
 * with it ends the child only, so a test can prove that hostile input stays within a bound, and fail cleanly when not.
 * A worker thread would not do: V8 aborts the whole process on some allocations even under a thread's resourceLimits.
 *
 * The child compiles the TypeScript sources as it loads them (about 30 MB of heap for the compiler and the modules,
 * reported as `baselineHeapBytes`); the cap covers that too.
 */

interface Figures {
  ms: number;
  baselineHeapBytes: number;
  /** How much the call raised the child's peak RSS (ru_maxrss) above what loading the modules had taken. */
  peakRssGrowthBytes: number;
}

export type BoundedOutcome =
  | ({ kind: 'returned'; value: unknown } & Figures)
  | ({ kind: 'threw'; code?: string; message: string; details?: Record<string, unknown> } & Figures)
  | { kind: 'died'; message: string };

const RUNNER = path.resolve(__dirname, 'bounded-run.js');

export function runBounded(
  modulePath: string,
  fn: string,
  input: Uint8Array,
  options: { maxHeapMb: number; args?: unknown[]; timeoutMs?: number },
): Promise<BoundedOutcome> {
  const timeoutMs = options.timeoutMs ?? 60_000;
  return new Promise((resolve) => {
    const child = fork(RUNNER, [], {
      execArgv: [`--max-old-space-size=${options.maxHeapMb}`, '--expose-gc'],
      serialization: 'advanced',
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    });
    let stderr = '';
    child.stderr?.on('data', (d: Buffer) => {
      if (stderr.length < 4000) stderr += d.toString();
    });
    let settled = false;
    const settle = (o: BoundedOutcome): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (child.exitCode === null) child.kill('SIGKILL');
      resolve(o);
    };
    const timer = setTimeout(() => settle({ kind: 'died', message: `no answer within ${timeoutMs} ms` }), timeoutMs);
    child.on('message', (m: BoundedOutcome) => settle(m));
    child.on('exit', (code, signal) =>
      settle({
        kind: 'died',
        message: `exited (${signal ?? code}): ${stderr.split('\n').find((l) => /FATAL|Error/.test(l)) ?? ''}`,
      }),
    );
    child.send({ module: modulePath, fn, input, args: options.args ?? [] });
  });
}
