import pino, { type Logger } from 'pino';

export type { Logger };

/**
 * JSON logs. Secrets and document contents never reach a log line: known secret-bearing fields are redacted as a
 * second line of defence; call sites log identifiers only.
 */
export function createLogger(options: { level: string; name?: string }): Logger {
  return pino({
    name: options.name ?? 'invoice-gateway',
    level: options.level,
    redact: {
      paths: [
        'req.headers.authorization',
        'req.headers["subscription-key"]',
        'req.headers.cookie',
        '*.client_secret',
        '*.password',
        '*.secret',
        '*.secureKey',
        '*.clientSecret',
        'client_secret',
        'password',
      ],
      censor: '[redacted]',
    },
  });
}
