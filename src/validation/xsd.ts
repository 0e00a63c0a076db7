import { spawn } from 'node:child_process';
import { GatewayError } from '../core/gateway-error';

/**
 * XSD validation with xmllint (libxml2), run as a child process per document. SaxonJS has no schema validation;
 * libxml2 validates the UBL 2.1, CII D16B, Factur-X, FatturaPA, ebInterface and Svefaktura schemas correctly, starts
 * in milliseconds and compiles a UBL schema set in ~50 ms, so a process per document costs little and shares nothing
 * between documents. The document reaching it has already passed the gateway's secure parser (no DTD, no entities,
 * bounded size and depth), which is why `--huge` (text nodes over 10 MB, e.g. embedded attachments) is safe here.
 */

export interface SchemaIssue {
  /** 1-based line of the element the message is about, as libxml2 reports it. */
  line: number | undefined;
  /** `{namespace}local` of that element, when the message names one. */
  element: string | undefined;
  message: string;
}

export interface XmllintOptions {
  xmllintPath?: string;
  timeoutMs?: number;
  /** Stop collecting after this many issues (a broken document can produce one per line). */
  maxIssues?: number;
}

const DEFAULT_TIMEOUT_MS = 120_000;
const DEFAULT_MAX_ISSUES = 500;
const MAX_STDERR_BYTES = 4 * 1024 * 1024;

// "-:108: element PayableAmount: Schemas validity error : Element '{urn:…}PayableAmount': '1.5E2' is not a valid …"
const VALIDITY = /^-:(\d+): (?:element [^:]+: )?Schemas validity error : (.*)$/;
const PARSER = /^-:(\d+): (?:parser error|namespace error) : (.*)$/;
const ELEMENT_IN_MESSAGE = /^Element '(\{[^}]*\}[^']+|[^'{]+)'/;

export function parseXmllintOutput(stderr: string, maxIssues = DEFAULT_MAX_ISSUES): { issues: SchemaIssue[]; truncated: boolean; other: string[] } {
  const issues: SchemaIssue[] = [];
  const other: string[] = [];
  let truncated = false;
  for (const line of stderr.split('\n')) {
    if (line === '' || line === '- validates' || line === '- fails to validate') continue;
    const m = VALIDITY.exec(line) ?? PARSER.exec(line);
    if (m) {
      if (issues.length >= maxIssues) {
        truncated = true;
        continue;
      }
      const message = (m[2] ?? '').trim();
      const el = ELEMENT_IN_MESSAGE.exec(message);
      issues.push({ line: Number(m[1]), element: el?.[1], message });
    } else if (!/^\s*\^?\s*$/.test(line)) {
      other.push(line);
    }
  }
  return { issues, truncated, other };
}

/** Validates `xml` against the driver schema; an empty list means schema-valid. */
export function validateWithXmllint(driverSchema: string, xml: Buffer, options: XmllintOptions = {}): Promise<{ issues: SchemaIssue[]; truncated: boolean }> {
  const bin = options.xmllintPath ?? 'xmllint';
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  return new Promise((resolve, reject) => {
    const child = spawn(bin, ['--noout', '--nonet', '--huge', '--schema', driverSchema, '-'], { stdio: ['pipe', 'ignore', 'pipe'] });
    let stderr = '';
    let stderrBytes = 0;
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => {
      stderrBytes += chunk.length;
      if (stderrBytes <= MAX_STDERR_BYTES) stderr += chunk;
    });
    child.on('error', (err: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      if (err.code === 'ENOENT') {
        reject(
          new GatewayError('DEPENDENCY_UNAVAILABLE', `XSD validation needs xmllint, which is not installed (${bin}); run \`npm run rules:fetch\` (installs libxml2-utils) or apt-get install libxml2-utils`, {
            retryable: false,
            details: { reason: 'XMLLINT_MISSING' },
          }),
        );
      } else reject(err);
    });
    // The child may exit (schema error) before reading all input; EPIPE then is expected, not a failure.
    child.stdin.on('error', () => undefined);
    child.stdin.end(xml);
    child.on('close', (code) => {
      clearTimeout(timer);
      if (timedOut) {
        reject(new GatewayError('UNPROCESSABLE', `XSD validation did not finish within ${Math.round(timeoutMs / 1000)} s`, { details: { reason: 'XSD_TIMEOUT' } }));
        return;
      }
      const parsed = parseXmllintOutput(stderr, options.maxIssues);
      // xmllint exit codes: 0 valid, 1 parse error, 3/4 validation errors, 5 schema did not compile.
      if (code === 0) resolve({ issues: [], truncated: false });
      else if ((code === 1 || code === 3 || code === 4) && parsed.issues.length > 0) resolve({ issues: parsed.issues, truncated: parsed.truncated });
      else {
        reject(
          new GatewayError('DEPENDENCY_UNAVAILABLE', `xmllint could not validate with ${driverSchema} (exit ${code}): ${parsed.other.slice(0, 3).join(' | ') || stderr.slice(0, 500)}`, {
            retryable: false,
            details: { reason: 'XSD_ENGINE_FAILED' },
          }),
        );
      }
    });
  });
}
