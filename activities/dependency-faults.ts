import { installationFaultDependency } from '../src/validation';
import type { DependencyFaultMonitor } from '../src/observability/dependency-faults';

function documentOf(args: readonly unknown[]): { tenantId?: string; documentId?: string } {
  const first = args[0];
  if (typeof first !== 'object' || first === null) return {};
  const { tenantId, documentId } = first as Record<string, unknown>;
  return {
    ...(typeof tenantId === 'string' ? { tenantId } : {}),
    ...(typeof documentId === 'string' ? { documentId } : {}),
  };
}

/**
 * Reports every activity refused for a fault of the installation (installationFault) to the monitor (log, metrics),
 * and every later success of the same step for the same document as its end; the error itself goes on unchanged.
 */
export function withDependencyFaultReport<T extends Record<string, (...args: never[]) => Promise<unknown>>>(
  activities: T,
  monitor: DependencyFaultMonitor | undefined,
): T {
  if (!monitor) return activities;
  const wrapped: Record<string, unknown> = {};
  for (const [name, fn] of Object.entries(activities)) {
    wrapped[name] = async (...args: never[]) => {
      const doc = documentOf(args);
      try {
        const out = await fn(...args);
        monitor.passed(name, doc.tenantId, doc.documentId);
        return out;
      } catch (e) {
        const dependency = installationFaultDependency(e);
        if (dependency !== undefined)
          monitor.fault({ activity: name, dependency, message: (e as Error).message, ...doc });
        throw e;
      }
    };
  }
  return wrapped as T;
}
