import { simpleParser, type ParsedMail } from 'mailparser';

/*
 * The local SMTP sink (scripts/lib/smtp-sink.js, smtp-server on 127.0.0.1) for tests: what arrived, parsed with
 * mailparser, and a way to script the sink's answers (421 / 550 at a given stage).
 */

export type SinkStage = 'mail' | 'rcpt' | 'data';
export interface SinkAnswer {
  code: number;
  message?: string;
}
export interface SinkMessage {
  seq: number;
  from: string;
  to: string[];
  raw: Buffer;
  file?: string;
}
export interface SmtpSink {
  host: string;
  port: number;
  messages: SinkMessage[];
  close(): Promise<void>;
}

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { startSmtpSink: start } = require('../../scripts/lib/smtp-sink') as {
  startSmtpSink(options: {
    port?: number;
    dir?: string;
    maxBytes?: number;
    answer?: (stage: SinkStage, session: unknown, address?: string) => SinkAnswer | undefined;
    delay?: (stage: SinkStage, session: unknown, address?: string) => number | undefined;
  }): Promise<SmtpSink>;
};

export function startSmtpSink(
  options: {
    dir?: string;
    answer?: (stage: SinkStage, address?: string) => SinkAnswer | undefined;
    /** Milliseconds before the sink answers RCPT (a slow server a client may leave meanwhile). */
    delay?: (stage: SinkStage, address?: string) => number | undefined;
  } = {},
): Promise<SmtpSink> {
  const { answer, delay } = options;
  return start({
    ...(options.dir ? { dir: options.dir } : {}),
    ...(answer ? { answer: (stage, _session, address) => answer(stage, address) } : {}),
    ...(delay ? { delay: (stage, _session, address) => delay(stage, address) } : {}),
  });
}

/** Answers from a script, one per message at the given stage, then acceptance (e.g. [421] then 250). */
export function scriptedAnswers(stage: SinkStage, codes: number[]): (s: SinkStage) => SinkAnswer | undefined {
  const left = [...codes];
  return (s) => {
    if (s !== stage) return undefined;
    const code = left.shift();
    return code === undefined ? undefined : { code, message: `scripted ${code}` };
  };
}

export function parseMail(message: SinkMessage): Promise<ParsedMail> {
  return simpleParser(message.raw);
}
