import pino from 'pino';
import { Writable } from 'node:stream';
import type { MetricMeter, MetricTags } from '@temporalio/common';
import { GatewayError } from '../../../src/core/gateway-error';
import { DependencyFaultMonitor } from '../../../src/observability/dependency-faults';
import { installationFault, installationFaultDependency } from '../../../src/validation';
import { withDependencyFaultReport } from '../../../activities/dependency-faults';

/** A meter that keeps what was recorded: counter sums and the last gauge values, by name and tags. */
function recordingMeter() {
  const counters = new Map<string, number>();
  const gauges = new Map<string, number>();
  const key = (name: string, tags: MetricTags = {}) => `${name}${JSON.stringify(tags)}`;
  const meter = {
    createCounter: (name: string) => ({
      add: (v: number, tags?: MetricTags) => counters.set(key(name, tags), (counters.get(key(name, tags)) ?? 0) + v),
    }),
    createGauge: (name: string) => ({ set: (v: number, tags?: MetricTags) => gauges.set(key(name, tags), v) }),
  } as unknown as MetricMeter;
  return { meter, counters, gauges };
}

function capturedLogger() {
  const lines: Array<Record<string, unknown>> = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, cb) {
      lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      cb();
    },
  });
  return { logger: pino({ level: 'info' }, stream), lines };
}

const packMissing = () =>
  installationFault(
    new GatewayError('DEPENDENCY_UNAVAILABLE', 'Rule pack en16931-ubl 1.3.16 is not installed', {
      retryable: false,
      details: { reason: 'RULE_PACK_MISSING', pack: 'en16931-ubl' },
    }),
  )!;

describe('documents waiting on a fault of ours are visible to operators', () => {
  it('installationFaultDependency names the refusal of an installation fault, and nothing else', () => {
    expect(installationFaultDependency(packMissing())).toBe('RULE_PACK_MISSING');
    // The validator's own 503 (the API answers it) is not yet a document waiting.
    expect(
      installationFaultDependency(new GatewayError('DEPENDENCY_UNAVAILABLE', 'x', { details: { reason: 'R' } })),
    ).toBeUndefined();
    expect(installationFaultDependency(new GatewayError('BAD_REQUEST', 'x'))).toBeUndefined();
    expect(installationFaultDependency(new Error('x'))).toBeUndefined();
  });

  it('each refused step is an error log line, a count, and the document on the waiting gauge until it passes', async () => {
    const { meter, counters, gauges } = recordingMeter();
    const { logger, lines } = capturedLogger();
    const monitor = new DependencyFaultMonitor(logger, meter);
    let broken = true;
    const activities = withDependencyFaultReport(
      {
        checkDocument: async (input: { tenantId: string; documentId: string }) => {
          if (broken) throw packMissing();
          return `checked ${input.documentId}`;
        },
        other: async () => {
          throw new GatewayError('BAD_REQUEST', 'not ours');
        },
      },
      monitor,
    );
    for (const documentId of ['a', 'b', 'a']) {
      await expect(activities.checkDocument({ tenantId: 't', documentId })).rejects.toMatchObject({
        code: 'DEPENDENCY_UNAVAILABLE',
        retryable: true,
      });
    }
    await expect(activities.other()).rejects.toMatchObject({ code: 'BAD_REQUEST' });

    expect(
      counters.get('gateway_worker_dependency_faults{"dependency":"RULE_PACK_MISSING","activity":"checkDocument"}'),
    ).toBe(3);
    expect(gauges.get('gateway_worker_documents_waiting_on_dependency{"dependency":"RULE_PACK_MISSING"}')).toBe(2);
    const errors = lines.filter((l) => l['level'] === 50);
    expect(errors).toHaveLength(3);
    expect(errors[0]).toMatchObject({
      dependencyFault: { activity: 'checkDocument', dependency: 'RULE_PACK_MISSING', tenantId: 't', documentId: 'a' },
    });
    expect(String(errors[0]!['msg'])).toContain('Rule pack en16931-ubl 1.3.16 is not installed');

    // The operator fetches the packs: the retried steps pass and the gauge goes back to 0.
    broken = false;
    await expect(activities.checkDocument({ tenantId: 't', documentId: 'a' })).resolves.toBe('checked a');
    expect(gauges.get('gateway_worker_documents_waiting_on_dependency{"dependency":"RULE_PACK_MISSING"}')).toBe(1);
    await activities.checkDocument({ tenantId: 't', documentId: 'b' });
    expect(gauges.get('gateway_worker_documents_waiting_on_dependency{"dependency":"RULE_PACK_MISSING"}')).toBe(0);
    expect(monitor.snapshot()).toEqual({});
  });

  it('a document not refused again within the hour is forgotten (its run ended some other way)', () => {
    let now = 0;
    const { logger } = capturedLogger();
    const monitor = new DependencyFaultMonitor(logger, undefined, () => now);
    monitor.fault({
      activity: 'checkDocument',
      dependency: 'XMLLINT_MISSING',
      message: 'x',
      tenantId: 't',
      documentId: 'd',
    });
    expect(monitor.snapshot()).toEqual({ XMLLINT_MISSING: 1 });
    now = 61 * 60_000;
    expect(monitor.snapshot()).toEqual({});
  });
});
