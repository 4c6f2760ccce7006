/**
 * Minimal Reflect metadata polyfill for tests that use @peculiar/x509: its DI container (tsyringe)
 * refuses to load without `Reflect.getMetadata`, and the repo does not ship `reflect-metadata`.
 * Import this before `@peculiar/x509`. Implements only what tsyringe and tslib's `__metadata` call.
 */
type MetadataTarget = object;

const store = new WeakMap<MetadataTarget, Map<string | symbol, Map<unknown, unknown>>>();

function ownMap(target: MetadataTarget, property: string | symbol | undefined, create: boolean): Map<unknown, unknown> | undefined {
  let byProperty = store.get(target);
  if (!byProperty) {
    if (!create) return undefined;
    byProperty = new Map();
    store.set(target, byProperty);
  }
  const key = property ?? '';
  let map = byProperty.get(key);
  if (!map && create) {
    map = new Map();
    byProperty.set(key, map);
  }
  return map;
}

const reflect = Reflect as unknown as Record<string, unknown>;

if (typeof reflect.getMetadata !== 'function') {
  const defineMetadata = (key: unknown, value: unknown, target: MetadataTarget, property?: string | symbol): void => {
    ownMap(target, property, true)!.set(key, value);
  };
  const getOwnMetadata = (key: unknown, target: MetadataTarget, property?: string | symbol): unknown =>
    ownMap(target, property, false)?.get(key);
  const getMetadata = (key: unknown, target: MetadataTarget, property?: string | symbol): unknown => {
    for (let current: MetadataTarget | null = target; current; current = Object.getPrototypeOf(current) as MetadataTarget | null) {
      const map = ownMap(current, property, false);
      if (map?.has(key)) return map.get(key);
    }
    return undefined;
  };
  reflect.defineMetadata = defineMetadata;
  reflect.getOwnMetadata = getOwnMetadata;
  reflect.getMetadata = getMetadata;
  reflect.hasOwnMetadata = (key: unknown, target: MetadataTarget, property?: string | symbol) => ownMap(target, property, false)?.has(key) ?? false;
  reflect.hasMetadata = (key: unknown, target: MetadataTarget, property?: string | symbol) => getMetadata(key, target, property) !== undefined;
  reflect.metadata =
    (key: unknown, value: unknown) =>
    (target: MetadataTarget, property?: string | symbol): void =>
      defineMetadata(key, value, target, property);
}

export {};
