import { agreementGate } from '../../support/validation/agreement-gate';

/**
 * The compiled Schematron engine's gate, first part: the CEN suite, the corpus and the first half of the seeded
 * variants (test/support/validation/agreement-gate.ts; the second half is compiled-agreement-variants.test.ts).
 */
agreementGate({ suites: true, from: 0, to: 0.5 });
