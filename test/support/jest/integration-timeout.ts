// Server-backed tests start processes and wait on real servers; jest's per-test timeout is global, so set it here.
jest.setTimeout(120_000);
