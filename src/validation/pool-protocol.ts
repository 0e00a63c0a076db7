import type { TransformOptions, TransformReport } from '../transform/transform';
import type { ValidateOptions, ValidatorOptions } from './validator';
import type { ValidationResult } from './types';

/** Messages between the validator pool (main thread) and its workers (pool-worker.ts). Plain data only. */

/** What a worker is started with (`workerData`). */
export interface WorkerInit {
  validator: ValidatorOptions;
  /** Pack ids (`id` or `id@version`) to load before the worker reports ready. */
  preload: string[];
}

export type JobMessage = {
  type: 'job';
  id: number;
  /** A Buffer arrives in the worker as a plain Uint8Array (structured clone). */
  input: Uint8Array | string;
} & ({ kind: 'validate'; options: ValidateOptions } | { kind: 'transform'; options: TransformOptions });

/** A TransformResult as it crosses threads: its Buffers arrive as Uint8Arrays. */
export interface TransferredTransformResult {
  xml: string;
  body: Uint8Array;
  contentType: 'application/xml' | 'application/pdf';
  pdf?: Uint8Array;
  report: TransformReport;
}

export interface SerializedError {
  name: string;
  message: string;
  /** Set for GatewayErrors: enough to rebuild one on the main thread. */
  code?: string;
  details?: Record<string, unknown>;
  retryable?: boolean;
}

export type WorkerMessage =
  | { type: 'ready'; preloadError?: SerializedError }
  | { type: 'init-failed'; error: SerializedError }
  | { type: 'result'; id: number; result: ValidationResult | TransferredTransformResult }
  | { type: 'error'; id: number; error: SerializedError };
