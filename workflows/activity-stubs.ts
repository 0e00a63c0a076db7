import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';

/**
 * Activity proxies grouped by timeout/retry profile, in one place. Document steps are short and idempotent; they
 * retry on infrastructure failures (database, blob store) and fail fast on non-retryable GatewayErrors.
 */
export const documentSteps = proxyActivities<Activities>({
  startToCloseTimeout: '2 minutes',
  // Activities heartbeat while they stream a document, so a crashed worker's attempt is retried within seconds.
  heartbeatTimeout: '10 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 20 },
});

/**
 * Validation runs the official artefacts (SaxonJS, xmllint) on the whole document: minutes for the largest invoices,
 * so a longer start-to-close; missing rule packs (DEPENDENCY_UNAVAILABLE) retry for about an hour, time for an
 * operator to run `npm run rules:fetch`, before the run fails visibly.
 */
export const validationSteps = proxyActivities<Activities>({
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: '1 minute',
  retry: { initialInterval: '5 seconds', backoffCoefficient: 2, maximumInterval: '5 minutes', maximumAttempts: 15 },
});
