import { createTransport } from 'nodemailer';
import type { InvoiceMail } from './invoice-mail';

/*
 * Hands an invoice mail to the configured SMTP relay (nodemailer) and says what the answer means for the document:
 * accepted (the relay took it: delivered), temporary (a 4xx answer, no connection, a timeout: try again later) or
 * permanent (a 5xx answer: the relay will never take it). The relay's answer is quoted so the event can say why.
 */

export interface SmtpSettings {
  host: string;
  port: number;
  /** Implicit TLS from the first byte (port 465). */
  secure: boolean;
  /** Refuse to send unless the relay offers STARTTLS (ignored with `secure`). */
  requireTls: boolean;
  auth?: { user: string; pass: string };
  /** Extra CA certificates (PEM) to trust for the relay's certificate, and whether to check it at all. */
  tls?: { ca?: string[]; rejectUnauthorized?: boolean };
  /** Connect, greeting and socket timeouts (ms). */
  timeoutMs: number;
  /** The name we greet the relay with (EHLO). */
  clientName?: string;
  dkim?: { domainName: string; keySelector: string; privateKey: string };
}

export type SmtpOutcome =
  | { kind: 'accepted'; response: string; accepted: string[]; rejected: string[] }
  | { kind: 'temporary'; code?: number; reason: string }
  | { kind: 'permanent'; code?: number; reason: string };

interface NodemailerError extends Error {
  code?: string;
  responseCode?: number;
  response?: string;
  rejected?: string[];
}

/** Errors that come before an SMTP answer (no code): trying again later may work. */
const TRANSIENT_CODES = new Set(['ECONNECTION', 'ETIMEDOUT', 'ESOCKET', 'EDNS', 'EPROTOCOL', 'EPROXY']);
const OUR_SIDE_CODES = new Set(['EAUTH', 'ENOAUTH', 'ETLS', 'EREQUIRETLS', 'ECONFIG']);

/** What a failed send means: the SMTP reply class when there is one, else whether the failure can pass. */
export function classifySmtpError(err: unknown): Exclude<SmtpOutcome, { kind: 'accepted' }> {
  const e = err as NodemailerError;
  const reason = (e.response ?? e.message ?? String(err)).replace(/\s+/g, ' ').trim().slice(0, 500);
  const code = typeof e.responseCode === 'number' ? e.responseCode : undefined;
  // Our side of the connection (credentials, TLS the relay does not offer) is ours to fix, not the recipient's: the
  // document waits for the operator whatever the relay answered.
  if (e.code && OUR_SIDE_CODES.has(e.code)) {
    return { kind: 'temporary', ...(code !== undefined ? { code } : {}), reason: `${e.code}: ${reason}` };
  }
  if (code !== undefined && code >= 400 && code < 500) return { kind: 'temporary', code, reason };
  if (code !== undefined && code >= 500) return { kind: 'permanent', code, reason };
  if (e.code && TRANSIENT_CODES.has(e.code)) return { kind: 'temporary', reason: `${e.code}: ${reason}` };
  if (e.code === 'EENVELOPE') return { kind: 'permanent', reason: `${e.code}: ${reason}` };
  return { kind: 'temporary', reason: e.code ? `${e.code}: ${reason}` : reason };
}

export interface SmtpSender {
  send(mail: InvoiceMail, signal?: AbortSignal): Promise<SmtpOutcome>;
  close(): void;
}

export function createSmtpSender(settings: SmtpSettings): SmtpSender {
  const transport = createTransport({
    host: settings.host,
    port: settings.port,
    secure: settings.secure,
    requireTLS: !settings.secure && settings.requireTls,
    ...(settings.auth ? { auth: { user: settings.auth.user, pass: settings.auth.pass } } : {}),
    tls: {
      ...(settings.tls?.ca ? { ca: settings.tls.ca } : {}),
      rejectUnauthorized: settings.tls?.rejectUnauthorized ?? true,
    },
    connectionTimeout: settings.timeoutMs,
    greetingTimeout: settings.timeoutMs,
    socketTimeout: settings.timeoutMs,
    ...(settings.clientName ? { name: settings.clientName } : {}),
    ...(settings.dkim ? { dkim: settings.dkim } : {}),
    // No file or URL access from message fields: attachments are always buffers we built.
    disableFileAccess: true,
    disableUrlAccess: true,
  });
  return {
    async send(mail, signal) {
      try {
        const info = await transport.sendMail({
          from: mail.from,
          to: mail.to,
          cc: mail.cc,
          bcc: mail.bcc,
          ...(mail.replyTo ? { replyTo: mail.replyTo } : {}),
          subject: mail.subject,
          text: mail.text,
          messageId: mail.messageId,
          attachments: mail.attachments.map((a) => ({
            filename: a.filename,
            contentType: a.contentType,
            content: a.content,
          })),
          ...(signal ? { signal } : {}),
        });
        if (info.accepted.length === 0) {
          return { kind: 'permanent', reason: `no recipient accepted: ${info.response}` };
        }
        return {
          kind: 'accepted',
          response: info.response,
          accepted: info.accepted.map(String),
          rejected: info.rejected.map(String),
        };
      } catch (err) {
        return classifySmtpError(err);
      }
    },
    close() {
      transport.close();
    },
  };
}
