'use strict';
// AS4 benchmark: our sender and receiver against phase4 4.4.1 (the reference Java implementation) on 127.0.0.1,
// with the project's test PKI. Four flows, each at two SBD sizes, closed loop at the same fixed concurrency:
//   (1) our sender → our receiver    (2) our sender → phase4 receiver
//   (3) phase4 sender → our receiver (4) phase4 sender → phase4 receiver (the reference)
// Our receiver is the compiled API process (POST /as4) storing every message in the database; phase4's receiver is
// tools/phase4-harness in Jetty storing every SBD as a file. Our sender runs in this process (buildPeppolMessage:
// gzip, sign, encrypt; then sendAs4Message: POST and receipt check), phase4's in the harness's sender JVM (its Peppol
// sbdhBuilder, the same steps). A message counts only when its receipt verified on the sending side; every message
// has a new MessageId and SBDH InstanceIdentifier, so no receiver takes its duplicate path.

const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { execFileSync, spawn } = require('node:child_process');
const { createInterface } = require('node:readline');
const gateway = require('./lib/gateway');
const cpu = require('./lib/cpu');
const { summarize } = require('./lib/load');
const { buildUblInvoice, formatBytes, KiB, MiB } = require('./lib/invoices');
const { ensurePhase4Harness } = require('../scripts/phase4-harness');
const services = require('../scripts/lib/services');

const ROOT = services.REPO_ROOT;
const dist = (p) => require(path.join(ROOT, 'dist', 'src', p));

/**
 * The test PKI generator is test code (test/support/peppol/test-pki.ts), outside the build: compiled into dist/ next
 * to the built sources it uses, as `npm run pki:test` compiles it.
 */
function testPkiModule() {
  const tsc = require.resolve('typescript/bin/tsc', { paths: [ROOT] });
  const args = ['test/support/peppol/test-pki.ts', '--outDir', 'dist', '--rootDir', '.', '--module', 'commonjs'];
  args.push('--target', 'ES2022', '--esModuleInterop', '--skipLibCheck', '--types', 'node');
  try {
    execFileSync(process.execPath, [tsc, ...args], { cwd: ROOT, encoding: 'utf8', stdio: 'pipe' });
  } catch (e) {
    throw new Error(`could not compile the test PKI generator: ${e.stdout || e.stderr || e.message}`);
  }
  return require(path.join(ROOT, 'dist', 'test', 'support', 'peppol', 'test-pki.js'));
}

// The receiving party both receivers serve, and the header every message carries.
const RECEIVER_ID = '0088:4562458856624';
const SENDER_ID = '0088:7315458756324';
const PASSWORD = 'test';

const PLANS = {
  full: {
    concurrency: 4,
    jvmWarmup: 150,
    sizes: [
      { key: '10k', label: '10 KB', bytes: 10 * KiB, warmup: 40, count: 200 },
      { key: '5m', label: '5 MB', bytes: 5 * MiB, warmup: 4, count: 20 },
    ],
  },
  quick: {
    concurrency: 4,
    jvmWarmup: 20,
    sizes: [
      { key: '10k', label: '10 KB', bytes: 10 * KiB, warmup: 8, count: 24 },
      { key: '5m', label: '5 MB', bytes: 5 * MiB, warmup: 1, count: 4 },
    ],
  },
};

const FLOWS = [
  { key: 'ours-ours', label: '(1) our sender → our receiver', sender: 'ours', receiver: 'ours' },
  { key: 'ours-phase4', label: '(2) our sender → phase4 receiver', sender: 'ours', receiver: 'phase4' },
  { key: 'phase4-ours', label: '(3) phase4 sender → our receiver', sender: 'phase4', receiver: 'ours' },
  { key: 'phase4-phase4', label: '(4) phase4 sender → phase4 receiver', sender: 'phase4', receiver: 'phase4' },
];

/**
 * The harness classes compiled into the run's own directory (the dependencies come from the shared build cache):
 * the cached classes are rebuilt, removed first, whenever a test run of another checkout starts with other sources.
 */
function compileHarness(work, log) {
  const { classpath } = ensurePhase4Harness(process.env, log);
  const deps = classpath.split(path.delimiter).slice(1);
  const srcDir = path.join(ROOT, 'tools', 'phase4-harness', 'src', 'main', 'java');
  const sources = fs
    .readdirSync(srcDir, { recursive: true })
    .filter((f) => f.endsWith('.java'))
    .map((f) => path.join(srcDir, f));
  const classes = path.join(work, 'classes');
  execFileSync('javac', ['--release', '17', '-d', classes, '-cp', deps.join(path.delimiter), ...sources], {
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: 5 * 60_000,
  });
  return [classes, ...deps].join(path.delimiter);
}

/** One harness JVM; its stderr goes to `logFile`. */
function startJava(classpath, args, logFile) {
  const child = spawn(
    'java',
    [
      '-Xmx1g',
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
  const log = fs.createWriteStream(logFile);
  child.stderr.pipe(log);
  let waiter;
  let received = 0;
  let onReady;
  let onExit;
  const ready = new Promise((resolve, reject) => {
    onReady = resolve;
    onExit = reject;
  });
  ready.catch(() => {});
  let exited;
  child.on('exit', (code, signal) => {
    exited = `phase4 harness (${args[0]}) exited (${signal || `code ${code}`}); see ${logFile}`;
    if (waiter) waiter.reject(new Error(exited));
    onExit(new Error(exited));
  });
  createInterface({ input: child.stdout }).on('line', (line) => {
    if (line.startsWith('RECEIVED ')) {
      received += 1;
      return;
    }
    if (line.startsWith('READY ')) {
      onReady(line.slice('READY '.length).trim());
      return;
    }
    if (waiter && line.startsWith(waiter.prefix)) {
      const w = waiter;
      waiter = undefined;
      w.resolve(line.slice(w.prefix.length));
    } else log.write(`stdout: ${line}\n`);
  });
  return {
    pid: () => child.pid,
    received: () => received,
    crashed: () => exited,
    /** The rest of the READY line (the receiver's URL). */
    ready(timeoutMs) {
      return Promise.race([
        ready,
        new Promise((_, reject) => {
          const timer = setTimeout(
            () =>
              reject(
                new Error(
                  exited || `phase4 harness (${args[0]}) not ready within ${timeoutMs / 1000} s; see ${logFile}`,
                ),
              ),
            timeoutMs,
          );
          ready.then(() => clearTimeout(timer));
        }),
      ]);
    },
    /** The rest of the next stdout line starting with `prefix`. */
    next(prefix, timeoutMs) {
      if (exited) return Promise.reject(new Error(exited));
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiter = undefined;
          reject(new Error(`phase4 harness: no "${prefix}" line within ${timeoutMs / 1000} s; see ${logFile}`));
        }, timeoutMs);
        waiter = {
          prefix,
          resolve: (v) => {
            clearTimeout(timer);
            resolve(v);
          },
          reject: (e) => {
            clearTimeout(timer);
            reject(e);
          },
        };
      });
    },
    write: (line) => child.stdin.write(`${line}\n`),
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const gone = new Promise((r) => child.once('exit', r));
      child.stdin.end();
      child.kill('SIGTERM');
      await gone;
      log.end();
    },
  };
}

/** An SBD of exactly `bytes` bytes around a grown UBL invoice, and a way to give a copy a new InstanceIdentifier. */
function buildSbdOfSize(bytes) {
  const { buildSbd } = dist('peppol/sbdh.js');
  const { peppolParticipant, documentTypeId, processId, DOCTYPE_SCHEME_BUSDOX, PROCESS_SCHEME } =
    dist('peppol/identifiers.js');
  const header = {
    sender: peppolParticipant(SENDER_ID),
    receiver: peppolParticipant(RECEIVER_ID),
    documentType: documentTypeId(
      DOCTYPE_SCHEME_BUSDOX,
      'urn:oasis:names:specification:ubl:schema:xsd:Invoice-2::Invoice##urn:cen.eu:en16931:2017#compliant#urn:fdc:peppol.eu:2017:poacc:billing:3.0::2.1',
    ),
    process: processId(PROCESS_SCHEME, 'urn:fdc:peppol.eu:2017:poacc:billing:01:1.0'),
  };
  const build = (invoiceBytes) =>
    buildSbd({ ...header, countryC1: 'NL', payload: { xml: buildUblInvoice(invoiceBytes).body } });
  // The envelope's size does not depend on the invoice's, so one trial build gives the invoice size to aim for.
  const trial = build(8 * KiB);
  const sbd = build(bytes - (trial.xml.length - 8 * KiB));
  if (sbd.xml.length !== bytes) throw new Error(`SBD is ${sbd.xml.length} bytes, wanted ${bytes}`);
  const id = sbd.header.instanceIdentifier;
  const at = sbd.xml.indexOf(Buffer.from(`>${id}<`));
  if (at < 0 || at > 8 * KiB) throw new Error('InstanceIdentifier not found in the SBDH');
  return {
    header,
    xml: sbd.xml,
    /** A copy with a new InstanceIdentifier (a UUID, the same length). */
    fresh() {
      const copy = Buffer.from(sbd.xml);
      copy.write(crypto.randomUUID(), at + 1, 'latin1');
      return copy;
    },
  };
}

/** `count` operations on `concurrency` loops, each starting its next as soon as the last is answered. */
async function closedCount(count, concurrency, op) {
  let next = 0;
  const latencies = [];
  let failed = 0;
  let firstError;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let i = next++; i < count; i = next++) {
        const s = performance.now();
        try {
          await op(i);
          latencies.push(performance.now() - s);
        } catch (e) {
          failed += 1;
          firstError ??= e.message;
        }
      }
    }),
  );
  return { ok: latencies.length, failed, elapsedMs: performance.now() - t0, latencies, firstError };
}

async function run(ctx) {
  const plan = ctx.quick ? PLANS.quick : PLANS.full;
  const result = { scenarios: [], figures: [], targets: [], notes: [], problems: [], tables: [] };
  const loads = [['start', os.loadavg()]];
  const { ensureTestPki } = testPkiModule();
  const { buildPeppolMessage } = dist('peppol/as4/message.js');
  const { sendAs4Message } = dist('peppol/as4/sender.js');
  const { Agent } = require(require.resolve('undici', { paths: [ROOT] }));

  const pkiDir = path.join(os.tmpdir(), 'invoice-gateway-test-pki');
  const { pki } = await ensureTestPki(pkiDir);
  const pkiFile = (n) => path.join(pkiDir, n);
  const keyArgs = (entry) => [
    '--keystore',
    pkiFile(`${entry}.p12`),
    '--password',
    PASSWORD,
    '--alias',
    entry,
    '--truststore',
    pkiFile('ap-truststore.p12'),
    '--ap-ca',
    pkiFile('ap-ca.crt.pem'),
  ];

  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-as4-'));
  const cp = compileHarness(work, ctx.log);

  const gw = await gateway.startGateway({
    svc: ctx.svc,
    logDir: ctx.logDir,
    label: 'as4',
    worker: false,
    env: {
      PEPPOL_AP_KEYSTORE: pkiFile('ap-receiver.p12'),
      PEPPOL_AP_KEYSTORE_PASSWORD: PASSWORD,
      PEPPOL_AP_CA: pkiFile('ap-ca.crt.pem'),
    },
  });
  const inDir = path.join(work, 'phase4-in');
  const p4in = startJava(
    cp,
    ['receive', ...keyArgs('ap-receiver'), '--out', inDir, '--served', RECEIVER_ID],
    path.join(ctx.logDir, 'as4-phase4-receiver.log'),
  );
  const p4out = startJava(
    cp,
    ['send', ...keyArgs('ap-sender'), '--seat-id', 'POP000001'],
    path.join(ctx.logDir, 'as4-phase4-sender.log'),
  );
  const dispatcher = new Agent({ connections: plan.concurrency * 2, keepAliveTimeout: 30_000 });
  const { MongoClient } = require(require.resolve('mongodb', { paths: [ROOT] }));
  const mongo = new MongoClient(ctx.svc.mongodbUri, { serverSelectionTimeoutMS: 5000 });
  try {
    const [p4url] = await Promise.all([p4in.ready(180_000), p4out.ready(180_000)]);
    await gateway.seedTenant(gw, { partyId: RECEIVER_ID, country: 'NL' });
    await mongo.connect();
    const inbound = mongo.db(gw.dbName).collection('as4inbound');
    const urls = { ours: `${gw.url}/as4`, phase4: p4url };

    const sbds = Object.fromEntries(
      plan.sizes.map((s) => {
        const sbd = buildSbdOfSize(s.bytes);
        const file = path.join(work, `sbd-${s.key}.xml`);
        fs.writeFileSync(file, sbd.xml);
        return [s.key, { ...sbd, file }];
      }),
    );
    const sendOpts = {
      apCertificateAuthorities: [pki.apCa.certificate],
      receiverCertificate: pki.apReceiver.certificate,
      timeoutMs: 120_000,
      dispatcher,
    };

    let seq = 0;
    /** One pass of a flow: `count` messages at the plan's concurrency; latencies from the sending side. */
    async function pass(flow, size, count) {
      const sbd = sbds[size.key];
      const url = urls[flow.receiver];
      const prefix = `bench-${flow.key}-${size.key}-${++seq}-${crypto.randomUUID().slice(0, 8)}`;
      if (flow.sender === 'phase4') {
        p4out.write(
          `BENCH ${url} ${pkiFile('ap-receiver.crt.pem')} ${sbd.file} ${count} ${plan.concurrency} ${prefix}`,
        );
        const r = JSON.parse(await p4out.next('BENCHRESULT ', 20 * 60_000));
        if (r.error) throw new Error(`phase4 bench: ${r.error}`);
        return {
          ok: r.ok,
          failed: r.failed,
          elapsedMs: r.elapsedMs,
          latencies: r.latenciesMs,
          firstError: r.firstError,
        };
      }
      return closedCount(count, plan.concurrency, async (i) => {
        const msg = buildPeppolMessage({
          sbd: sbd.fresh(),
          header: sbd.header,
          signer: pki.apSender,
          receiverCertificate: pki.apReceiver.certificate,
          messageId: `${prefix}-${i}@invoice-gateway`,
        });
        const out = await sendAs4Message(msg, url, sendOpts);
        if (out.outcome !== 'delivered') throw new Error(`${msg.messageId}: ${out.outcome}: ${out.reason}`);
      });
    }

    const pids = () => ({ api: gw.api.pid, phase4Receiver: p4in.pid(), phase4Sender: p4out.pid(), ...ctx.serverPids });
    const broken = (what, r, expected) => {
      if (r.failed || r.ok !== expected)
        result.problems.push(
          `${what}: ${r.ok} of ${expected} messages delivered, ${r.failed} failed; first error: ${r.firstError}`,
        );
    };

    // The JVMs compile their hot paths during the first few hundred messages; so does V8 on our side.
    ctx.log(`as4: warming up (${plan.jvmWarmup} messages of 10 KB per flow)`);
    for (const flow of FLOWS)
      broken(`warm-up ${flow.label}`, await pass(flow, plan.sizes[0], plan.jvmWarmup), plan.jvmWarmup);

    const measured = [];
    for (const size of plan.sizes) {
      for (const flow of FLOWS) {
        broken(`warm-up ${flow.label} ${size.label}`, await pass(flow, size, size.warmup), size.warmup);
        const storedBefore = await inbound.countDocuments();
        const receivedBefore = p4in.received();
        ctx.log(`as4: ${flow.label}, ${size.label}: ${size.count} messages at concurrency ${plan.concurrency}`);
        const m = await cpu.measureCpu(pids(), () => pass(flow, size, size.count));
        const r = m.result;
        broken(`${flow.label} ${size.label}`, r, size.count);
        // Each receiver must have stored what its senders counted as delivered.
        const stored =
          flow.receiver === 'ours' ? (await inbound.countDocuments()) - storedBefore : p4in.received() - receivedBefore;
        if (stored !== r.ok)
          result.problems.push(`${flow.label} ${size.label}: ${r.ok} receipts but the receiver stored ${stored}`);
        const lat = summarize(r.latencies);
        const perSecond = r.ok / (r.elapsedMs / 1000);
        const cost = m.duringPass ? cpu.cpuCost(m, r.ok, ctx.cores) : undefined;
        measured.push({ flow, size, r, lat, perSecond, cost });
      }
    }
    loads.push(['end', os.loadavg()]);

    const fmt = (v, d = 1) => (Number.isFinite(v) ? v.toFixed(d) : '-');
    const cpuMs = (c, ...keys) => {
      if (!c) return '-';
      const v = keys.reduce((a, k) => a + (c.perRequestMs[k] ?? 0), 0);
      return fmt(v, 1);
    };
    result.tables.push({
      title: `AS4 messages, closed loop at concurrency ${plan.concurrency}; latency = send until the receipt is verified (sender side)`,
      header: ['flow', 'SBD', 'msgs', 'secs', 'msg/s', 'p50 ms', 'p99 ms', 'max ms'],
      rows: measured.map((x) => [
        x.flow.label,
        x.size.label,
        String(x.r.ok),
        fmt(x.r.elapsedMs / 1000),
        fmt(x.perSecond, 2),
        fmt(x.lat.p50, 0),
        fmt(x.lat.p99, 0),
        fmt(x.lat.max, 0),
      ]),
    });
    result.tables.push({
      title:
        'CPU ms per message by side (our sender runs in the benchmark process; our receiver = API + database; Temporal: the receive workflow starts)',
      header: [
        'flow',
        'SBD',
        'sender',
        'receiver',
        'of it API',
        'of it database',
        'Temporal',
        'machine busy',
        'other programs',
      ],
      rows: measured.map((x) => {
        const c = x.cost;
        const ours = x.flow.receiver === 'ours';
        const senderMs = x.flow.sender === 'ours' ? cpuMs(c, 'loadGenerator') : cpuMs(c, 'phase4Sender');
        const receiverMs = ours ? cpuMs(c, 'api', 'database') : cpuMs(c, 'phase4Receiver');
        return [
          x.flow.label,
          x.size.label,
          senderMs,
          receiverMs,
          ours ? cpuMs(c, 'api') : '-',
          ours ? cpuMs(c, 'database') : '-',
          cpuMs(c, 'temporal'),
          c ? `${fmt(100 * c.machineBusyShare)}%` : '-',
          c ? `${fmt(100 * c.othersShare)}%` : '-',
        ];
      }),
    });
    for (const x of measured) {
      const id = `as4-${x.flow.key}-${x.size.key}`;
      result.figures.push(
        {
          id: `${id}-mps`,
          label: `${x.flow.label}, ${x.size.label}: messages per second`,
          value: Number(fmt(x.perSecond, 2)),
          unit: '/s',
        },
        { id: `${id}-p50`, label: `${x.flow.label}, ${x.size.label}: p50`, value: Math.round(x.lat.p50), unit: 'ms' },
        { id: `${id}-p99`, label: `${x.flow.label}, ${x.size.label}: p99`, value: Math.round(x.lat.p99), unit: 'ms' },
      );
    }

    const at = (flowKey, sizeKey) => measured.find((x) => x.flow.key === flowKey && x.size.key === sizeKey);
    const small = plan.sizes[0].key;
    const ref = at('phase4-phase4', small);
    const recv = at('phase4-ours', small);
    const send = at('ours-phase4', small);
    // Per message at 10 KB: the same phase4 sender and concurrency, only the receiver differs, so the throughput
    // ratio is the receiver's per-message cost ratio.
    const recvRatio = ref.perSecond / recv.perSecond;
    const sendRatio = ref.perSecond / send.perSecond;
    result.targets.push(
      {
        id: 'as4-receiver-vs-phase4',
        label: `our receiver against phase4's at 10 KB: phase4's msg/s ÷ ours, phase4 sender both times (${fmt(recv.perSecond, 2)} vs ${fmt(ref.perSecond, 2)} msg/s)`,
        measured: Number(fmt(recvRatio, 2)),
        unit: '×',
        target: 1,
        pass: recvRatio <= 1,
      },
      {
        id: 'as4-sender-vs-phase4',
        label: `our sender against phase4's at 10 KB: phase4's msg/s ÷ ours, phase4 receiver both times (${fmt(send.perSecond, 2)} vs ${fmt(ref.perSecond, 2)} msg/s)`,
        measured: Number(fmt(sendRatio, 2)),
        unit: '×',
        target: 1.5,
        pass: sendRatio <= 1.5,
      },
    );
    result.notes.push(
      `SBDs: exactly ${plan.sizes.map((s) => `${formatBytes(s.bytes)} (${s.bytes} bytes)`).join(' and ')}: a Peppol SBDH around ${'en16931/ubl-examples/ubl-tc434-example1.xml'} grown with invoice lines; the same file for both senders`,
      `per flow and size: ${plan.sizes.map((s) => `${s.label} ${s.warmup} warm-up + ${s.count} measured`).join(', ')} messages at concurrency ${plan.concurrency}, after ${plan.jvmWarmup} warm-up messages of 10 KB per flow (JIT of both JVMs and V8)`,
      'our receiver: the API process (NODE_ENV=production) storing into the database and starting the receive workflow (no worker runs, so nothing processes the stored messages during the passes); phase4 receiver: its AS4 servlet in Jetty storing each SBD as a file',
      "our sender runs on this process's one event loop (signing and encryption are synchronous, so its four loops share one core); phase4's sender on four JVM threads",
      `load average (1, 5, 15 min) on ${ctx.cores} cores: ${loads.map(([when, l]) => `${when} ${l.map((v) => v.toFixed(1)).join(' / ')}`).join('; ')}`,
    );
    for (const c of [gw.crashed(), p4in.crashed(), p4out.crashed()].flat().filter(Boolean)) result.problems.push(c);
    return result;
  } finally {
    await dispatcher.close().catch(() => {});
    await mongo.close().catch(() => {});
    await Promise.all([p4in.stop(), p4out.stop()]);
    await gw.stop();
    if (ctx.svc.providers.database === 'env') await gateway.dropDatabase(ctx.svc.mongodbUri, gw.dbName).catch(() => {});
    fs.rmSync(work, { recursive: true, force: true });
  }
}

module.exports = {
  name: 'as4',
  title: 'AS4: our sender and receiver against phase4 (messages per second, p50/p99), 10 KB and 5 MB SBDs',
  run,
};
