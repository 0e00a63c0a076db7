import { spawn } from 'node:child_process';
import { GatewayError } from '../core/gateway-error';
import { truncateQuoted } from '../core/truncate';

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
/** The element a libxml2 schema message is about: `{namespace}local`, or a name without namespace. */
export const ELEMENT_IN_MESSAGE = /^Element '(\{[^}]*\}[^']+|[^'{]+)'/;

export function parseXmllintOutput(
  stderr: string,
  maxIssues = DEFAULT_MAX_ISSUES,
): { issues: SchemaIssue[]; truncated: boolean; other: string[] } {
  const issues: SchemaIssue[] = [];
  const other: string[] = [];
  let truncated = false;
  // A message quoting a value with line breaks continues on the following lines, up to the next report.
  let open: { line: number; parts: string[] } | undefined;
  const close = (): void => {
    if (!open) return;
    if (issues.length >= maxIssues) truncated = true;
    else {
      const message = open.parts.join('\n').trim();
      const el = ELEMENT_IN_MESSAGE.exec(message);
      issues.push({ line: open.line, element: el?.[1], message });
    }
    open = undefined;
  };
  for (const line of stderr.split('\n')) {
    if (line === '- validates' || line === '- fails to validate') {
      close();
      continue;
    }
    const m = VALIDITY.exec(line) ?? PARSER.exec(line);
    if (m) {
      close();
      open = { line: Number(m[1]), parts: [m[2] ?? ''] };
    } else if (open) {
      open.parts.push(line);
    } else if (!/^\s*\^?\s*$/.test(line)) {
      other.push(line);
    }
  }
  close();
  return { issues, truncated, other };
}

// libxml2 2.9 does not apply the whiteSpace="collapse" facet that XSD 1.0 fixes for the date/time types when they are
// the base of a complex type with simple content (all UBL dates and times): ' 2015-01-09 ' is reported invalid
// although it is a valid xs:date. Such a report is dropped when the collapsed value is in the type's lexical space.
const DATE_TIME_REPORT =
  /^Element '[^']+': '([^']*)' is not a valid value of the atomic type 'xs:(date|time|dateTime)'\.?$/s;
const TZ = '(Z|[+-](?:(?:0\\d|1[0-3]):[0-5]\\d|14:00))?';
const DATE = '-?(?:[1-9]\\d{4,}|\\d{4})-(0[1-9]|1[0-2])-(0[1-9]|[12]\\d|3[01])';
const TIME = '(?:[01]\\d|2[0-3]):[0-5]\\d:[0-5]\\d(?:\\.\\d+)?|24:00:00(?:\\.0+)?';
const LEXICAL: Record<string, RegExp> = {
  date: new RegExp(`^${DATE}${TZ}$`),
  time: new RegExp(`^(?:${TIME})${TZ}$`),
  dateTime: new RegExp(`^${DATE}T(?:${TIME})${TZ}$`),
};

function daysInMonth(year: number, month: number): number {
  return (
    [31, year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][
      month - 1
    ] ?? 0
  );
}

/** True when `message` is libxml2's whitespace false positive described above. */
export function isCollapsibleDateTimeReport(message: string): boolean {
  const m = DATE_TIME_REPORT.exec(message);
  if (!m) return false;
  const raw = m[1] as string;
  const collapsed = raw.replace(/[ \t\r\n]+/g, ' ').trim();
  if (collapsed === raw || collapsed.includes(' ')) return false;
  const lex = LEXICAL[m[2] as string]?.exec(collapsed);
  if (!lex) return false;
  if (m[2] === 'time') return true;
  const year = Number(/^-?(\d+)/.exec(collapsed)?.[1]);
  return Number(lex[2]) <= daysInMonth(year, Number(lex[1]));
}

/** Validates `xml` against the driver schema; an empty list means schema-valid. */
export function validateWithXmllint(
  driverSchema: string,
  xml: Buffer,
  options: XmllintOptions = {},
): Promise<{ issues: SchemaIssue[]; truncated: boolean }> {
  const bin = options.xmllintPath ?? 'xmllint';
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  return new Promise((resolve, reject) => {
    const child = spawn(bin, ['--noout', '--nonet', '--huge', '--schema', driverSchema, '-'], {
      stdio: ['pipe', 'ignore', 'pipe'],
    });
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
          new GatewayError(
            'DEPENDENCY_UNAVAILABLE',
            `XSD validation needs xmllint, which is not installed (${bin}); run \`npm run rules:fetch\` (installs ` +
              `libxml2-utils) or apt-get install libxml2-utils`,
            {
              retryable: false,
              details: { reason: 'XMLLINT_MISSING' },
            },
          ),
        );
      } else reject(err);
    });
    // The child may exit (schema error) before reading all input; EPIPE then is expected, not a failure.
    child.stdin.on('error', () => undefined);
    child.stdin.end(xml);
    child.on('close', (code) => {
      clearTimeout(timer);
      if (timedOut) {
        reject(
          new GatewayError('UNPROCESSABLE', `XSD validation did not finish within ${Math.round(timeoutMs / 1000)} s`, {
            details: { reason: 'XSD_TIMEOUT' },
          }),
        );
        return;
      }
      const parsed = parseXmllintOutput(stderr, options.maxIssues);
      parsed.issues = parsed.issues.filter((i) => !isCollapsibleDateTimeReport(i.message));
      // xmllint exit codes: 0 valid, 1 parse error, 3/4 validation errors, 5 schema did not compile.
      if (
        code === 0 ||
        ((code === 3 || code === 4) && parsed.issues.length === 0 && !parsed.truncated && parsed.other.length === 0)
      ) {
        resolve({ issues: [], truncated: false });
      } else if ((code === 1 || code === 3 || code === 4) && parsed.issues.length > 0)
        resolve({ issues: parsed.issues, truncated: parsed.truncated });
      else {
        reject(
          new GatewayError(
            'DEPENDENCY_UNAVAILABLE',
            truncateQuoted(
              `xmllint could not validate with ${driverSchema} (exit ${code}): ` +
                `${parsed.other.slice(0, 3).join(' | ') || stderr.slice(0, 500)}`,
            ),
            {
              retryable: false,
              details: { reason: 'XSD_ENGINE_FAILED' },
            },
          ),
        );
      }
    });
  });
}
