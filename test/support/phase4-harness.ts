/**
 * phase4 (the reference Java AS4 implementation) as a loopback peer: tools/phase4-harness built into the cache by
 * scripts/phase4-harness.js and started as child processes on 127.0.0.1.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { createInterface } from 'node:readline';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { ensurePhase4Harness } = require('../../scripts/phase4-harness.js') as {
  ensurePhase4Harness: () => { classpath: string };
};

export interface HarnessKeys {
  keystore: string;
  password: string;
  alias: string;
  truststore: string;
  /** PEM whose first certificate is the AP CA. */
  apCa: string;
}

function keyArgs(k: HarnessKeys): string[] {
  return [
    '--keystore',
    k.keystore,
    '--password',
    k.password,
    '--alias',
    k.alias,
    '--truststore',
    k.truststore,
    '--ap-ca',
    k.apCa,
  ];
}

class Phase4Process {
  readonly lines: string[] = [];
  private waiters: Array<{ test: (l: string) => boolean; resolve: (l: string) => void }> = [];
  private stderrTail = '';

  constructor(readonly child: ChildProcessWithoutNullStreams) {
    createInterface({ input: child.stdout }).on('line', (line) => {
      this.lines.push(line);
      const w = this.waiters.find((x) => x.test(line));
      if (w) {
        this.waiters = this.waiters.filter((x) => x !== w);
        w.resolve(line);
      }
    });
    child.stderr.on('data', (d: Buffer) => {
      this.stderrTail = (this.stderrTail + d.toString('utf8')).slice(-8000);
    });
  }

  /** The next stdout line (already seen or to come) that passes `test`. */
  waitFor(test: (l: string) => boolean, timeoutMs = 90_000): Promise<string> {
    const seen = this.lines.find(test);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () =>
          reject(
            new Error(`phase4 harness: no matching line within ${timeoutMs} ms; stderr tail:\n${this.stderrTail}`),
          ),
        timeoutMs,
      );
      const onExit = (code: number | null): void =>
        reject(new Error(`phase4 harness exited (${code}); stderr tail:\n${this.stderrTail}`));
      this.child.once('exit', onExit);
      this.waiters.push({
        test,
        resolve: (l) => {
          clearTimeout(timer);
          this.child.off('exit', onExit);
          resolve(l);
        },
      });
    });
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise((r) => this.child.once('exit', r));
    this.child.kill('SIGTERM');
    await exited;
  }
}

function start(args: string[]): Phase4Process {
  const { classpath } = ensurePhase4Harness();
  const child = spawn(
    'java',
    [
      '-Xmx512m',
      '-Dorg.slf4j.simpleLogger.defaultLogLevel=warn',
      '-cp',
      classpath,
      'dev.invoicegateway.phase4harness.Harness',
      ...args,
    ],
    {
      stdio: ['pipe', 'pipe', 'pipe'],
    },
  );
  return new Phase4Process(child);
}

export class Phase4Receiver {
  private constructor(
    private readonly proc: Phase4Process,
    readonly url: string,
  ) {}

  static async start(keys: HarnessKeys, options: { outDir: string; served: string[] }): Promise<Phase4Receiver> {
    const proc = start(['receive', ...keyArgs(keys), '--out', options.outDir, '--served', options.served.join(',')]);
    const ready = await proc.waitFor((l) => l.startsWith('READY '));
    return new Phase4Receiver(proc, ready.slice('READY '.length).trim());
  }

  private consumedReceipts = 0;

  /** The next message phase4 received (in arrival order, each once): its id and the file its SBD is in. */
  async nextReceived(timeoutMs = 60_000): Promise<{ messageId: string; file: string }> {
    const index = this.consumedReceipts++;
    const received = (): string[] => this.proc.lines.filter((l) => l.startsWith('RECEIVED '));
    await this.proc.waitFor(() => received().length > index, timeoutMs);
    const [, messageId, file] = (received()[index] as string).split(' ');
    return { messageId: messageId as string, file: file as string };
  }

  /** The file phase4 stored the SBD of `messageId` in. */
  async received(messageId: string): Promise<string> {
    const line = await this.proc.waitFor((l) => l.startsWith(`RECEIVED ${messageId} `), 10_000);
    return line.split(' ')[2] as string;
  }

  stop(): Promise<void> {
    return this.proc.stop();
  }
}

export interface Phase4SendResult {
  messageId: string;
  /** phase4's EAS4UserMessageSendResult id, e.g. `success`, `as4-error-message-received`. */
  result: string;
  /** RECEIPT_OK when phase4 compared the receipt's references with what it signed and they matched. */
  receiptCheck: string;
  detail: string;
}

export class Phase4Sender {
  private queue: Promise<unknown> = Promise.resolve();

  private constructor(private readonly proc: Phase4Process) {}

  static async start(keys: HarnessKeys & { seatId: string }): Promise<Phase4Sender> {
    const proc = start(['send', ...keyArgs(keys), '--seat-id', keys.seatId]);
    await proc.waitFor((l) => l === 'READY sender');
    return new Phase4Sender(proc);
  }

  /** Sends the SBD in `sbdFile` to `url`, encrypting for the certificate in `receiverCertPem`. */
  send(url: string, receiverCertPem: string, sbdFile: string, messageId: string): Promise<Phase4SendResult> {
    const run = async (): Promise<Phase4SendResult> => {
      // Sends run one at a time, so the next RESULT line answers this one.
      const index = this.consumed++;
      const results = (): string[] => this.proc.lines.filter((l) => l.startsWith('RESULT '));
      this.proc.child.stdin.write(`SEND ${url} ${receiverCertPem} ${sbdFile} ${messageId}\n`);
      await this.proc.waitFor(() => results().length > index);
      const line = results()[index] as string;
      const [, id, result, receiptCheck, ...rest] = line.split(' ');
      return {
        messageId: id as string,
        result: result as string,
        receiptCheck: receiptCheck as string,
        detail: rest.join(' '),
      };
    };
    const next = this.queue.then(run, run);
    this.queue = next.catch(() => undefined);
    return next;
  }

  private consumed = 0;

  stop(): Promise<void> {
    this.proc.child.stdin.end();
    return this.proc.stop();
  }
}
