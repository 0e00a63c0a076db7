// HTTP tests on a real database; the first token request also generates a signing key.
jest.setTimeout(30_000);
