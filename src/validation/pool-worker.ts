import { parentPort, workerData } from 'node:worker_threads';
import { isGatewayError } from '../core/gateway-error';
import type { JobMessage, SerializedError, WorkerInit, WorkerMessage } from './pool-protocol';
import { createValidator, type Validator } from './validator';
import { transformDocument } from '../transform/transform';

/**
 * One thread of the validator pool (pool.ts): a Validator of its own, whose packs it loads once and keeps, answering
 * one job at a time: a validation, or a transformation (synchronous too, and long for a large invoice). Compiled to
 * dist/src/validation/pool-worker.js, which is the pool's default worker script.
 */

function serialize(e: unknown): SerializedError {
  if (isGatewayError(e)) {
    return {
      name: e.name,
      message: e.message,
      code: e.code,
      retryable: e.retryable,
      ...(e.details ? { details: e.details } : {}),
    };
  }
  if (e instanceof Error) return { name: e.name, message: e.message };
  return { name: 'Error', message: String(e) };
}

function asBuffer(input: Uint8Array | string): Buffer | string {
  return typeof input === 'string' ? input : Buffer.from(input.buffer, input.byteOffset, input.byteLength);
}

async function main(): Promise<void> {
  const port = parentPort;
  if (!port) throw new Error('pool-worker.js runs as a worker thread of the validator pool, not on its own');
  const send = (m: WorkerMessage): void => port.postMessage(m);
  const init = workerData as WorkerInit;
  let validator: Validator;
  try {
    validator = createValidator(init.validator);
  } catch (e) {
    send({ type: 'init-failed', error: serialize(e) });
    return;
  }
  port.on('message', (msg: JobMessage) => {
    if (msg.kind === 'transform') {
      try {
        const { xml, body, contentType, pdf, report } = transformDocument(asBuffer(msg.input), msg.options);
        send({ type: 'result', id: msg.id, result: { xml, body, contentType, ...(pdf ? { pdf } : {}), report } });
      } catch (e) {
        send({ type: 'error', id: msg.id, error: serialize(e) });
      }
      return;
    }
    validator.validate(asBuffer(msg.input), msg.options).then(
      (result) => send({ type: 'result', id: msg.id, result }),
      (e: unknown) => send({ type: 'error', id: msg.id, error: serialize(e) }),
    );
  });
  // A pack that cannot be loaded now is reported, not fatal: jobs that need it get the validator's own error naming
  // it, and after `rules:fetch` the next job loads it (the store does not cache failures).
  let preloadError: SerializedError | undefined;
  try {
    await Promise.all(
      init.preload.map((ref) => {
        const [id, version] = ref.split('@') as [string, string | undefined];
        return validator.store.get(id, version);
      }),
    );
  } catch (e) {
    preloadError = serialize(e);
  }
  send({ type: 'ready', ...(preloadError ? { preloadError } : {}) });
}

void main();
