'use strict';
// The validator pool's real worker (src/validation/pool-worker.ts), loaded from the sources for the tests.
require('./ts-require');
require('../../../src/validation/pool-worker.ts');
