import { agreementGate } from '../../support/validation/agreement-gate';

/** The compiled Schematron engine's gate, second part: the second half of the seeded variants. */
agreementGate({ suites: false, from: 0.5, to: 1 });
