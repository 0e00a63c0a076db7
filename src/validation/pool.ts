import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { GATEWAY_ERROR_CODES, GatewayError, type GatewayErrorCode } from '../core/gateway-error';
import { loadManifest } from './manifest';
import type { TransformOptions, TransformResult } from '../transform/transform';
import type {
  JobMessage,
  SerializedError,
  TransferredTransformResult,
  WorkerInit,
  WorkerMessage,
} from './pool-protocol';
import type { ValidationResult } from './types';
import { createValidator, type ValidateOptions, type ValidatorOptions } from './validator';

/**
 * A pool of worker threads, each with its own Validator, so validations use every core: SaxonJS runs the Schematron
 * packs synchronously and would otherwise hold the event loop for as long as a document takes (seconds for a
 * 1,000-line invoice). Each worker loads its packs once and keeps them; jobs wait in a bounded queue, and a full queue
 * is refused at once (503 DEPENDENCY_UNAVAILABLE, reason VALIDATION_QUEUE_FULL, retryable) rather than buffering
 * documents without limit. A worker that dies mid-job fails that job with a clear error and is replaced; a job that
 * runs past its time limit has its worker stopped and replaced.
 *
 * The worker is a separate script (`workerScript`): by default the compiled pool-worker.js beside this file, i.e.
 * dist/src/validation/pool-worker.js after `npm run build`. Worker threads load plain JavaScript, so code running from
 * the TypeScript sources (the tests) passes a script of its own that compiles the sources as it loads them.
 */

export interface ValidatorPoolOptions extends ValidatorOptions {
  /** Worker threads; default: the cores available to this process (os.availableParallelism()). */
  size?: number;
  /** Jobs that may wait for a worker; more are refused. Default 8 per worker. */
  maxQueue?: number;
  /** Bytes of documents that may wait for a worker; more are refused. Default 256 MiB. */
  maxQueuedBytes?: number;
  /** Pack ids (`id` or `id@version`) every worker loads before it reports ready. */
  preload?: readonly string[];
  /** A job running longer has its worker stopped and replaced; default 5 minutes. */
  jobTimeoutMs?: number;
  /**
   * V8 old-generation limit per worker (MB; default 2048, what the largest document the XML limits accept needs to be
   * validated); a document that needs more fails alone instead of the process. Best effort: V8 still aborts the whole
   * process on some allocations past a thread's limit (one array grown by push), which is why the document readers
   * bound their own buffers and counts rather than rely on this.
   */
  maxHeapMb?: number;
  /** The worker's entry script (JavaScript). Default: pool-worker.js next to this module. */
  workerScript?: string;
}

export interface ValidatorPoolStats {
  size: number;
  /** Workers that have loaded and can take jobs. */
  ready: number;
  busy: number;
  queued: number;
  queuedBytes: number;
  maxQueue: number;
  completed: number;
  /** Jobs that failed because their worker died or timed out. */
  crashed: number;
  /** Workers started to replace one that died. */
  restarts: number;
}

export interface ValidatorPool {
  readonly size: number;
  /** Same contract as Validator.validate; runs on one of the workers. */
  validate(input: Buffer | string, options?: ValidateOptions): Promise<ValidationResult>;
  /**
   * Same contract as transformDocument (src/transform), on one of the workers: converting a large invoice holds a
   * thread for as long as validating one does. Shares the workers, queue and limits with validation.
   */
  transform(input: Buffer | string, options: TransformOptions): Promise<TransformResult>;
  /** Resolves when every worker has started and preloaded its packs; rejects naming a pack that failed to load. */
  ready(): Promise<void>;
  stats(): ValidatorPoolStats;
  /**
   * Stops taking jobs and ends the workers. With `drain` (default) queued and running jobs finish first; without,
   * they are rejected at once.
   */
  close(options?: { drain?: boolean }): Promise<void>;
}

const DEFAULT_JOB_TIMEOUT_MS = 5 * 60_000;
const DEFAULT_QUEUE_PER_WORKER = 8;
const DEFAULT_MAX_QUEUED_BYTES = 256 * 1024 * 1024;
const DEFAULT_MAX_HEAP_MB = 2048;

type Job = {
  id: number;
  input: Buffer | string;
  bytes: number;
  reject(e: Error): void;
} & (
  | { kind: 'validate'; options: ValidateOptions; resolve(r: ValidationResult): void }
  | { kind: 'transform'; options: TransformOptions; resolve(r: TransformResult): void }
);

/** Words for a job's errors: 'validation' or 'transformation', and the reason-code prefix. */
const JOB_WORDS = {
  validate: { noun: 'validation', verb: 'validated', reason: 'VALIDATION' },
  transform: { noun: 'transformation', verb: 'converted', reason: 'TRANSFORM' },
} as const;

function asBuffer(u: Uint8Array): Buffer {
  return Buffer.from(u.buffer, u.byteOffset, u.byteLength);
}

/** Buffers become Uint8Arrays on their way between threads; the caller gets a TransformResult as in-process. */
function reviveTransformResult(r: TransferredTransformResult): TransformResult {
  return {
    xml: r.xml,
    body: asBuffer(r.body),
    contentType: r.contentType,
    ...(r.pdf ? { pdf: asBuffer(r.pdf) } : {}),
    report: r.report,
  };
}

interface Slot {
  worker: Worker;
  ready: boolean;
  job?: Job;
  timer?: NodeJS.Timeout;
  timedOut?: boolean;
  /** Stopped on purpose (close); its exit is not a crash. */
  retiring?: boolean;
  error?: NodeJS.ErrnoException;
}

function revive(e: SerializedError): Error {
  if (e.code !== undefined && e.code in GATEWAY_ERROR_CODES) {
    return new GatewayError(e.code as GatewayErrorCode, e.message, {
      ...(e.details ? { details: e.details } : {}),
      ...(e.retryable !== undefined ? { retryable: e.retryable } : {}),
    });
  }
  const err = new Error(e.message);
  err.name = e.name;
  return err;
}

function unavailable(message: string, reason: string, extra: Record<string, unknown> = {}): GatewayError {
  return new GatewayError('DEPENDENCY_UNAVAILABLE', message, { details: { reason, ...extra } });
}

export function defaultWorkerScript(): string {
  return path.join(__dirname, 'pool-worker.js');
}

export function createValidatorPool(options: ValidatorPoolOptions): ValidatorPool {
  const size = Math.max(1, Math.floor(options.size ?? os.availableParallelism()));
  const maxQueue = Math.max(0, Math.floor(options.maxQueue ?? size * DEFAULT_QUEUE_PER_WORKER));
  const maxQueuedBytes = options.maxQueuedBytes ?? DEFAULT_MAX_QUEUED_BYTES;
  const jobTimeoutMs = options.jobTimeoutMs ?? DEFAULT_JOB_TIMEOUT_MS;
  const script = options.workerScript ?? defaultWorkerScript();
  if (!existsSync(script)) {
    throw new Error(
      `validator pool: worker script ${script} not found; run from the compiled build (\`npm run build\` emits ` +
        `dist/src/validation/pool-worker.js) or pass workerScript`,
    );
  }
  const {
    size: _s,
    maxQueue: _q,
    maxQueuedBytes: _b,
    preload,
    jobTimeoutMs: _t,
    maxHeapMb: _h,
    workerScript: _w,
    ...validatorOptions
  } = options;
  const maxHeapMb = options.maxHeapMb ?? DEFAULT_MAX_HEAP_MB;
  // The manifest is read and the options checked here, once, so a configuration error surfaces at creation.
  const manifest = validatorOptions.manifest ?? loadManifest();
  createValidator({ ...validatorOptions, manifest });
  const init: WorkerInit = { validator: { ...validatorOptions, manifest }, preload: [...(preload ?? [])] };

  const slots: Slot[] = [];
  const queue: Job[] = [];
  let queuedBytes = 0;
  let nextId = 1;
  let closed = false;
  let broken: Error | undefined;
  const counters = { completed: 0, crashed: 0, restarts: 0 };
  const startedOnce = new Set<number>();
  let preloadError: Error | undefined;
  let idleWaiters: Array<() => void> = [];

  let settleReady!: (e?: Error) => void;
  const readyPromise = new Promise<void>((resolve, reject) => {
    settleReady = (e) => (e ? reject(e) : resolve());
  });
  // Nobody has to ask whether the pool is ready; an unobserved failure must not crash the process.
  readyPromise.catch(() => undefined);

  function failAllQueued(e: Error): void {
    for (const job of queue.splice(0)) job.reject(e);
    queuedBytes = 0;
  }

  function notifyIdle(): void {
    if (queue.length === 0 && slots.every((s) => !s.job)) {
      const waiters = idleWaiters;
      idleWaiters = [];
      for (const w of waiters) w();
    }
  }

  function dispatch(): void {
    for (const slot of slots) {
      if (queue.length === 0) break;
      if (!slot.ready || slot.job || slot.retiring) continue;
      const job = queue.shift() as Job;
      queuedBytes -= job.bytes;
      slot.job = job;
      slot.timer = setTimeout(() => {
        slot.timedOut = true;
        void slot.worker.terminate();
      }, jobTimeoutMs);
      const msg: JobMessage =
        job.kind === 'transform'
          ? { type: 'job', kind: 'transform', id: job.id, input: job.input, options: job.options }
          : { type: 'job', kind: 'validate', id: job.id, input: job.input, options: job.options };
      slot.worker.postMessage(msg);
    }
    notifyIdle();
  }

  function finishJob(slot: Slot): Job | undefined {
    const job = slot.job;
    if (slot.timer) clearTimeout(slot.timer);
    slot.job = undefined;
    slot.timer = undefined;
    return job;
  }

  function spawn(index: number): void {
    const worker = new Worker(script, {
      workerData: init,
      resourceLimits: { maxOldGenerationSizeMb: maxHeapMb },
    });
    const slot: Slot = { worker, ready: false };
    slots[index] = slot;
    worker.on('message', (m: WorkerMessage) => onMessage(index, slot, m));
    worker.on('error', (e) => {
      slot.error = e;
    });
    worker.on('exit', (code) => onExit(index, slot, code));
  }

  function onMessage(index: number, slot: Slot, m: WorkerMessage): void {
    if (m.type === 'ready') {
      slot.ready = true;
      if (m.preloadError && !preloadError) preloadError = revive(m.preloadError);
      startedOnce.add(index);
      if (startedOnce.size === size) settleReady(preloadError);
      dispatch();
    } else if (m.type === 'init-failed') {
      breakPool(revive(m.error));
    } else {
      if (slot.job?.id !== m.id) return;
      const job = finishJob(slot) as Job;
      counters.completed += 1;
      if (m.type === 'error') job.reject(revive(m.error));
      else if (job.kind === 'transform') job.resolve(reviveTransformResult(m.result as TransferredTransformResult));
      else job.resolve(m.result as ValidationResult);
      dispatch();
    }
  }

  function breakPool(cause: Error): void {
    if (broken) return;
    broken = unavailable(`validator pool could not start a worker: ${cause.message}`, 'VALIDATION_POOL_FAILED');
    settleReady(broken);
    failAllQueued(broken);
  }

  function onExit(index: number, slot: Slot, code: number): void {
    const job = finishJob(slot);
    if (slot.retiring) {
      job?.reject(
        unavailable(
          `validator pool was closed before this document was ${JOB_WORDS[job.kind].verb}`,
          'VALIDATION_POOL_CLOSED',
        ),
      );
      notifyIdle();
      return;
    }
    if (job) {
      counters.crashed += 1;
      const w = JOB_WORDS[job.kind];
      if (slot.timedOut) {
        job.reject(
          new GatewayError(
            'UNPROCESSABLE',
            `${w.noun} did not finish within ` +
              `${jobTimeoutMs < 10_000 ? `${jobTimeoutMs} ms` : `${Math.round(jobTimeoutMs / 1000)} s`}; its worker ` +
              `was stopped and replaced`,
            {
              details: { reason: `${w.reason}_TIMEOUT` },
            },
          ),
        );
      } else if (slot.error?.code === 'ERR_WORKER_OUT_OF_MEMORY') {
        job.reject(
          new GatewayError(
            'UNPROCESSABLE',
            `the ${w.noun} of this document needed more memory than a pool worker may use (${maxHeapMb} MB heap); ` +
              `the worker was replaced`,
            {
              details: { reason: `${w.reason}_OUT_OF_MEMORY` },
            },
          ),
        );
      } else {
        job.reject(
          new GatewayError(
            'INTERNAL',
            `the pool worker stopped during the ${w.noun} of this document (exit code ` +
              `${code}${slot.error ? `: ${slot.error.message}` : ''}); it was replaced`,
            {
              details: { reason: `${w.reason}_WORKER_CRASHED`, exitCode: code },
            },
          ),
        );
      }
    }
    if (!slot.ready) {
      // Died before it could take work: starting another would fail the same way.
      breakPool(slot.error ?? new Error(`worker exited with code ${code} before it was ready`));
      return;
    }
    counters.restarts += 1;
    spawn(index);
  }

  /** Queues a job, or refuses it at once when the pool is closed, broken or its queue is full. */
  function enqueue<R>(
    make: (resolve: (r: R) => void, reject: (e: Error) => void) => Omit<Job, 'id' | 'input' | 'bytes'>,
    input: Buffer | string,
  ): Promise<R> {
    if (closed) return Promise.reject(unavailable('validator pool is closed', 'VALIDATION_POOL_CLOSED'));
    if (broken) return Promise.reject(broken);
    const bytes = typeof input === 'string' ? Buffer.byteLength(input) : input.length;
    if (queue.length >= maxQueue || (queue.length > 0 && queuedBytes + bytes > maxQueuedBytes)) {
      // A busy pool refuses instead of buffering without bound; the caller may retry later (503, retryable).
      return Promise.reject(
        unavailable(
          `document work is busy: ${queue.length} document(s) (${queuedBytes} bytes) already wait for ${size} ` +
            `worker(s); retry later`,
          'VALIDATION_QUEUE_FULL',
          {
            queued: queue.length,
            maxQueue,
          },
        ),
      );
    }
    return new Promise<R>((resolve, reject) => {
      queue.push({ id: nextId++, input, bytes, ...make(resolve, reject) } as Job);
      queuedBytes += bytes;
      dispatch();
    });
  }

  for (let k = 0; k < size; k++) spawn(k);

  return {
    size,
    validate(input, validateOptions = {}) {
      return enqueue<ValidationResult>(
        (resolve, reject) => ({ kind: 'validate', options: validateOptions, resolve, reject }),
        input,
      );
    },
    transform(input, transformOptions) {
      return enqueue<TransformResult>(
        (resolve, reject) => ({ kind: 'transform', options: transformOptions, resolve, reject }),
        input,
      );
    },
    ready: () => readyPromise,
    stats: () => ({
      size,
      ready: slots.filter((s) => s.ready).length,
      busy: slots.filter((s) => s.job).length,
      queued: queue.length,
      queuedBytes,
      maxQueue,
      ...counters,
    }),
    async close({ drain = true } = {}) {
      if (!drain)
        failAllQueued(
          unavailable('validator pool was closed before this document was handled', 'VALIDATION_POOL_CLOSED'),
        );
      closed = true;
      if (drain && !broken) {
        await new Promise<void>((resolve) => {
          idleWaiters.push(resolve);
          notifyIdle();
        });
      }
      await Promise.all(
        slots.map((s) => {
          s.retiring = true;
          return s.worker.terminate();
        }),
      );
    },
  };
}
