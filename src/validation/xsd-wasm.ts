import { Worker } from 'node:worker_threads';
import { GatewayError } from '../core/gateway-error';
import { truncateQuoted } from '../core/truncate';
import { ELEMENT_IN_MESSAGE, isCollapsibleDateTimeReport, type SchemaIssue } from './xsd';

/**
 * XSD validation in process with libxml2 compiled to WebAssembly (the `libxml2-wasm` package): the same library as
 * xmllint, without a process per document and with each schema set compiled once per thread (about 0.3 s for UBL)
 * instead of once per document (about 60 ms of every xmllint run). A document then costs well under a millisecond.
 *
 * The package is an ES module with top-level await, which CommonJS cannot `require`; it runs on its own worker thread,
 * whose script (below) imports it natively. The thread also bounds a runaway validation: libxml2 cannot be
 * interrupted, so a validation past its time limit ends the thread, and the next call starts another. Schemas load
 * from the rule cache's files only (the file-system input provider; no network provider is registered), and the
 * documents reaching it have passed the gateway's secure parser (no DTD, no entities, bounded size and depth), which is
 * why XML_PARSE_HUGE (text nodes over 10 MB, e.g. embedded attachments) is safe, as `--huge` is for xmllint.
 */

export interface WasmXsdOptions {
  timeoutMs?: number;
  /** Stop collecting after this many issues (a broken document can produce one per line). */
  maxIssues?: number;
}

const DEFAULT_TIMEOUT_MS = 120_000;
const DEFAULT_MAX_ISSUES = 500;

// The thread: CommonJS evaluated by Node (not by a test runner's module system), so `import()` is the native one.
// Messages in: { id, schema, xml: Uint8Array }. Out: { id, ok: true, issues } or { id, ok: false, kind, message }.
const THREAD_SOURCE = String.raw`
'use strict';
const { parentPort, workerData } = require('node:worker_threads');
const path = require('node:path');
const { pathToFileURL } = require('node:url');
let lib;
const validators = new Map();
async function library() {
  if (!lib) {
    lib = await import(pathToFileURL(workerData.entry).href);
    const node = await import(pathToFileURL(path.join(path.dirname(workerData.entry), 'nodejs.mjs')).href);
    lib.xmlRegisterInputProvider(node.fsInputProviders);
  }
  return lib;
}
function details(e) {
  return Array.isArray(e && e.details)
    ? e.details.map((d) => ({ line: d.line, message: String(d.message || '') }))
    : [{ line: undefined, message: String((e && e.message) || e) }];
}
parentPort.on('message', async (m) => {
  let x;
  try {
    x = await library();
  } catch (e) {
    parentPort.postMessage({ id: m.id, ok: false, kind: 'library', message: String((e && e.message) || e) });
    return;
  }
  let validator = validators.get(m.schema);
  if (!validator) {
    let schemaDoc;
    try {
      schemaDoc = x.XmlDocument.fromBuffer(require('node:fs').readFileSync(m.schema), { url: pathToFileURL(m.schema).href });
      validator = x.XsdValidator.fromDoc(schemaDoc);
      validators.set(m.schema, validator);
    } catch (e) {
      parentPort.postMessage({ id: m.id, ok: false, kind: 'schema', message: details(e).map((d) => d.message).join(' | ') });
      return;
    } finally {
      if (schemaDoc) schemaDoc.dispose();
    }
  }
  let doc;
  try {
    doc = x.XmlDocument.fromBuffer(m.xml, { option: x.ParseOption.XML_PARSE_HUGE | x.ParseOption.XML_PARSE_NONET });
  } catch (e) {
    parentPort.postMessage({ id: m.id, ok: true, issues: details(e) });
    return;
  }
  try {
    validator.validate(doc);
    parentPort.postMessage({ id: m.id, ok: true, issues: [] });
  } catch (e) {
    if (e instanceof x.XmlValidateError) parentPort.postMessage({ id: m.id, ok: true, issues: details(e) });
    else parentPort.postMessage({ id: m.id, ok: false, kind: 'validate', message: String((e && e.message) || e) });
  } finally {
    doc.dispose();
  }
});
`;

interface Reply {
  id: number;
  ok: boolean;
  issues?: Array<{ line: number | undefined; message: string }>;
  kind?: 'library' | 'schema' | 'validate';
  message?: string;
}

interface Pending {
  resolve: (r: Reply) => void;
  reject: (e: Error) => void;
  timer: NodeJS.Timeout;
}

function engineFailed(message: string): GatewayError {
  return new GatewayError('DEPENDENCY_UNAVAILABLE', truncateQuoted(message), {
    retryable: false,
    details: { reason: 'XSD_ENGINE_FAILED' },
  });
}

/** One thread per process (per validation thread, when validation runs on a pool), started on first use. */
class XsdThread {
  private worker: Worker | undefined;
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();

  private start(): Worker {
    if (this.worker) return this.worker;
    let entry: string;
    try {
      entry = require.resolve('libxml2-wasm');
    } catch {
      throw engineFailed('XSD validation needs the libxml2-wasm package, which is not installed (npm ci)');
    }
    const worker = new Worker(THREAD_SOURCE, { eval: true, workerData: { entry } });
    // An idle thread must not keep a process alive (CLI commands, tests).
    worker.unref();
    worker.on('message', (r: Reply) => {
      const p = this.pending.get(r.id);
      if (!p) return;
      this.pending.delete(r.id);
      clearTimeout(p.timer);
      p.resolve(r);
    });
    const fail = (e: Error): void => {
      if (this.worker === worker) this.worker = undefined;
      for (const [id, p] of this.pending) {
        clearTimeout(p.timer);
        p.reject(e);
        this.pending.delete(id);
      }
    };
    worker.on('error', (e) => fail(engineFailed(`the XSD thread failed: ${e.message}`)));
    worker.on('exit', (code) => fail(engineFailed(`the XSD thread ended (exit ${code})`)));
    this.worker = worker;
    return worker;
  }

  request(schema: string, xml: Buffer, timeoutMs: number): Promise<Reply> {
    const worker = this.start();
    const id = this.nextId++;
    return new Promise<Reply>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        // libxml2 cannot be interrupted: the thread ends, and the next document starts a new one.
        if (this.worker === worker) this.worker = undefined;
        void worker.terminate();
        reject(
          new GatewayError('UNPROCESSABLE', `XSD validation did not finish within ${Math.round(timeoutMs / 1000)} s`, {
            details: { reason: 'XSD_TIMEOUT' },
          }),
        );
      }, timeoutMs);
      this.pending.set(id, { resolve, reject, timer });
      worker.ref();
      worker.postMessage({ id, schema, xml: new Uint8Array(xml.buffer, xml.byteOffset, xml.byteLength) });
    }).finally(() => {
      if (this.pending.size === 0) worker.unref();
    });
  }
}

const thread = new XsdThread();

/** Validates `xml` against the driver schema with libxml2 in process; an empty list means schema-valid. */
export async function validateWithLibxml2Wasm(
  driverSchema: string,
  xml: Buffer,
  options: WasmXsdOptions = {},
): Promise<{ issues: SchemaIssue[]; truncated: boolean }> {
  const maxIssues = options.maxIssues ?? DEFAULT_MAX_ISSUES;
  const r = await thread.request(driverSchema, xml, options.timeoutMs ?? DEFAULT_TIMEOUT_MS);
  if (!r.ok) {
    throw engineFailed(
      r.kind === 'schema'
        ? `libxml2 could not compile ${driverSchema}: ${r.message ?? ''}`
        : `libxml2 could not validate with ${driverSchema}: ${r.message ?? ''}`,
    );
  }
  const all = (r.issues ?? [])
    .map((d) => {
      const message = d.message.trim();
      return { line: d.line || undefined, element: ELEMENT_IN_MESSAGE.exec(message)?.[1], message };
    })
    .filter((i) => !isCollapsibleDateTimeReport(i.message));
  return { issues: all.slice(0, maxIssues), truncated: all.length > maxIssues };
}
