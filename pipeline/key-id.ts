/**
 * A client key's id (SPEC 9.6): what counts its use, apart from its name. A stored key created with the
 * name of a revoked one is a new key, whose limits start fresh; so is a config-file key that has the name
 * of a stored one, and a stored key made with the name of a config key that is gone.
 */
import type { ClientKey } from "./ports.ts";

/**
 * The generation of a name's first stored key (since 2026-12-04): 1, so a stored key is never counted
 * under its bare name, which a config-file key of that name counted under (`keys create ci` after `ci`
 * left the config file would have taken over its windows). Keys stored before are generation 0.
 */
export const FIRST_STORED_GENERATION = 1;

/**
 * The id of the `generation`th stored key of a name (what counts its use: limit counters, persisted
 * budget windows, the shared store's quota pools, budget alerts' claims): `name#N`, so each stored key
 * starts fresh, its usage rows keeping the name. Generation 0 (a key stored before 2026-12-04, or a
 * config key) is the name itself, so the windows such a key had stay its own. A name that already ends
 * in `#` and digits (only a key stored before the name rule could be) gets its `#0` too, so
 * {@link keyNameOfId} always gives the name back.
 */
export function keyIdFor(name: string, generation: number): string {
  return generation > 0 || ID_SUFFIX.test(name) ? `${name}#${generation}` : name;
}

/** The suffix an id adds to a key's name: `#N` ({@link keyIdFor}) or `#config` ({@link configKeyIdFor}). */
const ID_SUFFIX = /#(\d+|config)$/;

/**
 * The id of a key declared in the config file: its name, unless a stored key (active or revoked) has
 * that name (`storedNamesake`), then `name#config`: a key of its own, whose budgets and rates start
 * fresh instead of taking over the stored key's windows (a key stored before 2026-12-04 counts under
 * the name). Config names follow the name rule (no `#`), so the id never equals a stored key's.
 */
export function configKeyIdFor(name: string, storedNamesake: boolean): string {
  return storedNamesake ? `${name}#config` : name;
}

/** The name of the key whose id ({@link keyIdFor}, {@link configKeyIdFor}) this is. */
export function keyNameOfId(id: string): string {
  return id.replace(ID_SUFFIX, "");
}

/** The id that counts `key`'s use ({@link keyIdFor}): `key.id`, else its name. */
export function keyId(key: Pick<ClientKey, "name" | "id">): string {
  return key.id ?? key.name;
}
