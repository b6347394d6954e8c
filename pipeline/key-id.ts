/**
 * A client key's id (SPEC 9.6): what counts its use, apart from its name. A stored key created with the
 * name of a revoked one is a new key, whose limits start fresh.
 */
import type { ClientKey } from "./ports.ts";

/**
 * The id of the `generation`th stored key of a name (0: the first, or a config key): what counts its use
 * (limit counters, persisted budget windows, the shared store's quota pools, budget alerts' claims). A
 * key created with the name of a revoked one is a new key (generation + 1), so its budgets, rates and
 * alerts start fresh, while its usage rows keep the name. The name itself for generation 0; otherwise
 * `name#N`. A name that already ends in `#` and digits (only a key stored before the name rule could
 * be) gets its `#0` too, so {@link keyNameOfId} always gives the name back.
 */
export function keyIdFor(name: string, generation: number): string {
  return generation > 0 || /#\d+$/.test(name) ? `${name}#${generation}` : name;
}

/** The name of the key whose id ({@link keyIdFor}) this is. */
export function keyNameOfId(id: string): string {
  return id.replace(/#\d+$/, "");
}

/** The id that counts `key`'s use ({@link keyIdFor}): `key.id`, else its name. */
export function keyId(key: Pick<ClientKey, "name" | "id">): string {
  return key.id ?? key.name;
}
