import type { MetricCounter, MetricGauge, MetricMeter } from '@temporalio/common';
import type { Logger } from './logger';

/** A document step refused because of the installation (a rule pack, xmllint, the validation pool), not the document. */
export interface DependencyFault {
  activity: string;
  /** The refusal's reason (RULE_PACK_MISSING, XMLLINT_MISSING...): the metric's label. */
  dependency: string;
  message: string;
  tenantId?: string | undefined;
  documentId?: string | undefined;
}

/** A waiting document is forgotten when no new refusal came for this long (its run ended some other way). */
const FORGET_AFTER_MS = 60 * 60_000;

/**
 * What operators see of documents waiting on a fault of ours (issue: "a fault of ours never becomes the customer's
 * error"): each refused attempt is an error log line and one more on the counter
 * `gateway_worker_dependency_faults{dependency,activity}`, and the gauge
 * `gateway_worker_documents_waiting_on_dependency{dependency}` says how many documents this worker last saw refused
 * and has not seen get past the step since. Both are served with the worker's Temporal metrics
 * (WORKER_METRICS_ADDRESS); an alert on the gauge above 0 is the page.
 */
export class DependencyFaultMonitor {
  private readonly waiting = new Map<string, { dependency: string; at: number }>();
  private readonly seen = new Set<string>();
  private readonly counter: MetricCounter | undefined;
  private readonly gauge: MetricGauge | undefined;

  constructor(
    private readonly logger: Logger,
    meter?: MetricMeter,
    private readonly now: () => number = Date.now,
  ) {
    this.counter = meter?.createCounter(
      'gateway_worker_dependency_faults',
      'attempts',
      'Document steps refused because of a fault of the installation (rule packs, xmllint, the validation pool)',
    );
    this.gauge = meter?.createGauge(
      'gateway_worker_documents_waiting_on_dependency',
      'int',
      'Documents whose last step was refused for a fault of the installation; they retry and proceed once fixed',
    );
  }

  fault(f: DependencyFault): void {
    this.counter?.add(1, { dependency: f.dependency, activity: f.activity });
    this.waiting.set(keyOf(f.activity, f.tenantId, f.documentId), { dependency: f.dependency, at: this.now() });
    this.logger.error(
      {
        dependencyFault: {
          activity: f.activity,
          dependency: f.dependency,
          tenantId: f.tenantId,
          documentId: f.documentId,
        },
        reason: f.message,
      },
      `document waits on ${f.dependency}: ${f.message}`,
    );
    this.publish();
  }

  /** The step went through (this time): the document no longer waits. */
  passed(activity: string, tenantId?: string, documentId?: string): void {
    if (this.waiting.size === 0) return;
    const key = keyOf(activity, tenantId, documentId);
    const was = this.waiting.get(key);
    if (!was) return;
    this.waiting.delete(key);
    this.logger.info({ dependencyFault: { activity, dependency: was.dependency, tenantId, documentId } }, 'resumed');
    this.publish();
  }

  /** Documents waiting, by dependency. */
  snapshot(): Record<string, number> {
    const cutoff = this.now() - FORGET_AFTER_MS;
    const out: Record<string, number> = {};
    for (const [key, w] of this.waiting) {
      if (w.at < cutoff) {
        this.waiting.delete(key);
        continue;
      }
      out[w.dependency] = (out[w.dependency] ?? 0) + 1;
    }
    return out;
  }

  private publish(): void {
    const counts = this.snapshot();
    for (const d of Object.keys(counts)) this.seen.add(d);
    // A dependency that no longer holds anything back goes to 0 rather than keeping its last count.
    for (const d of this.seen) this.gauge?.set(counts[d] ?? 0, { dependency: d });
  }
}

function keyOf(activity: string, tenantId?: string, documentId?: string): string {
  return `${activity}|${tenantId ?? ''}|${documentId ?? ''}`;
}
