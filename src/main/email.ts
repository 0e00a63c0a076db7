import { readFileSync } from 'node:fs';
import type { Config } from '../config/load-config';
import { createSmtpSender } from '../email';
import type { EmailChannel, EmailUnavailable } from '../sending';

/** The worker's e-mail channel from SMTP_* settings (CA and DKIM key files read here), or why it has none. */
export function composeEmailChannel(config: Readonly<Config>): EmailChannel | EmailUnavailable {
  const smtp = config.email.smtp;
  if (!smtp) return { unavailable: 'no SMTP relay is configured (SMTP_HOST, SMTP_FROM)' };
  const sender = createSmtpSender({
    host: smtp.host,
    port: smtp.port,
    secure: smtp.secure,
    requireTls: smtp.requireTls,
    ...(smtp.auth ? { auth: smtp.auth } : {}),
    ...(smtp.caFile ? { tls: { ca: [readFileSync(smtp.caFile, 'utf8')] } } : {}),
    timeoutMs: smtp.timeoutMs,
    ...(smtp.dkim
      ? {
          dkim: {
            domainName: smtp.dkim.domainName,
            keySelector: smtp.dkim.keySelector,
            privateKey: readFileSync(smtp.dkim.keyFile, 'utf8'),
          },
        }
      : {}),
  });
  return { smtp: sender, from: smtp.from };
}
