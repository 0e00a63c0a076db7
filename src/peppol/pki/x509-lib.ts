/**
 * @peculiar/x509, for generating the test PKI and reading CRLs. It depends on tsyringe, which refuses to load without a
 * Reflect metadata API (normally the reflect-metadata package, which is not a dependency here). tsyringe only reads
 * constructor parameter types through it, and @peculiar/x509's build emits none, so a minimal WeakMap-backed API is
 * enough. It is installed only when no such API exists, so a real reflect-metadata loaded elsewhere takes precedence.
 *
 * The test PKI generator and the CRL reader (./revocation.ts) import this module; the rest of the production code
 * parses certificates with node:crypto and ./der.
 */
type MetadataMap = Map<unknown, unknown>;
const store = new WeakMap<object, Map<string | symbol | undefined, MetadataMap>>();

function own(target: object, property: string | symbol | undefined, create: boolean): MetadataMap | undefined {
  let byProp = store.get(target);
  if (!byProp && create) store.set(target, (byProp = new Map<string | symbol | undefined, MetadataMap>()));
  let map = byProp?.get(property);
  if (!map && create && byProp) byProp.set(property, (map = new Map()));
  return map;
}

const R = Reflect as unknown as Record<string, unknown>;
if (typeof R.getMetadata !== 'function') {
  R.defineMetadata = (key: unknown, value: unknown, target: object, property?: string | symbol): void => {
    own(target, property, true)?.set(key, value);
  };
  R.getOwnMetadata = (key: unknown, target: object, property?: string | symbol): unknown =>
    own(target, property, false)?.get(key);
  R.hasOwnMetadata = (key: unknown, target: object, property?: string | symbol): boolean =>
    own(target, property, false)?.has(key) ?? false;
  R.getMetadata = (key: unknown, target: object, property?: string | symbol): unknown => {
    for (let t: object | null = target; t; t = Object.getPrototypeOf(t) as object | null) {
      const m = own(t, property, false);
      if (m?.has(key)) return m.get(key);
    }
    return undefined;
  };
  R.hasMetadata = (key: unknown, target: object, property?: string | symbol): boolean =>
    (R.getMetadata as (k: unknown, t: object, p?: string | symbol) => unknown)(key, target, property) !== undefined;
  R.metadata =
    (key: unknown, value: unknown) =>
    (target: object, property?: string | symbol): void => {
      own(target, property, true)?.set(key, value);
    };
}

// eslint-disable-next-line @typescript-eslint/no-require-imports -- must load after the API above exists
export const x509 = require('@peculiar/x509') as typeof import('@peculiar/x509');
