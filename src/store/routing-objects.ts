/**
 * The routing-objects role of the store (SPEC 2.3, 9.3): combos, aliases and settings created through
 * the admin API, next to the read-only ones of the config file, and the disabled flag the admin API
 * puts on config-file accounts (stored accounts keep theirs in the accounts role). Written through:
 * each call commits before it returns, so an object created through the admin API survives a restart.
 * Conventions: see `./types.ts`.
 *
 * The store keeps objects as written (the config file's snake_case shape, as JSON); validating them
 * against the file and the other objects is the config layer's job (src/config/compose.ts).
 */
import type { Awaitable } from "./types.ts";

/** A combo created through the admin API, in the config file's shape (`{name, strategy, targets, …}`). */
export interface StoredCombo {
  name: string;
  /** The combo as the config file would write it (snake_case keys), `name` included. */
  spec: Record<string, unknown>;
  /** ms since the epoch */
  createdAt: number;
  /** ms since the epoch */
  updatedAt: number;
}

/** An alias created through the admin API. */
export interface StoredAlias {
  name: string;
  /** `provider/model`, a combo or another alias, as written. */
  target: string;
  createdAt: number;
  updatedAt: number;
}

/** Admin-API objects that shape routing and settings. */
export interface RoutingObjectStore {
  /** Stored combos, by name. */
  listCombos(): Awaitable<StoredCombo[]>;
  /** Creates or replaces a stored combo. @throws StoreError `invalid` for an empty name. */
  putCombo(name: string, spec: Record<string, unknown>): Awaitable<void>;
  /**
   * Creates a stored combo unless a stored combo or alias of that name exists, or of a name a person
   * cannot tell apart from it (the same after Unicode NFC, or then differing only in case:
   * src/config/lookalike-names.ts), in one check-and-insert (`POST /admin/api/combos`): of parallel
   * creates of one name or of such look-alikes (`Fast`, `fast`), on one instance or several sharing a
   * store, exactly one returns true. @returns false when the name is taken. @throws StoreError `invalid`
   * for an empty name.
   */
  createCombo(name: string, spec: Record<string, unknown>): Awaitable<boolean>;
  /** Deletes a stored combo. @returns false when there was none. */
  deleteCombo(name: string): Awaitable<boolean>;

  /** Stored aliases, by name. */
  listAliases(): Awaitable<StoredAlias[]>;
  /** Creates or replaces a stored alias. @throws StoreError `invalid` for an empty name or target. */
  putAlias(name: string, target: string): Awaitable<void>;
  /**
   * Creates a stored alias unless a stored alias or combo of that name or of a look-alike exists, in one
   * check-and-insert (`POST /admin/api/aliases`; as {@link createCombo}). @returns false when the name is taken.
   * @throws StoreError `invalid` for an empty name or target.
   */
  createAlias(name: string, target: string): Awaitable<boolean>;
  /** Deletes a stored alias. @returns false when there was none. */
  deleteAlias(name: string): Awaitable<boolean>;

  /** Stored settings: top-level key of the `settings` block → its value (file shape). */
  getSettings(): Awaitable<Record<string, unknown>>;
  /** Sets one top-level settings key; `null` removes it (back to the file or the default). */
  setSetting(key: string, value: unknown): Awaitable<void>;

  /** Accounts the admin API disabled (config-file accounts), by id. */
  listDisabledAccounts(): Awaitable<string[]>;
  /** Marks an account disabled, or removes the mark. */
  setAccountDisabledFlag(accountId: string, disabled: boolean): Awaitable<void>;
}
