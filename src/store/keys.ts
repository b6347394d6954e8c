/**
 * The client-key role of the store (SPEC G-2, 2.2 `keys …`): config keys held hashed in memory, stored
 * keys created and revoked through the CLI or admin API. Conventions: see `./types.ts`.
 */
import type { BudgetWindow, ClientKey, KeyLimits, KeyLookup } from "../../pipeline/ports.ts";
import type { Awaitable } from "./types.ts";

/**
 * A stored key whose limits another writer changed ({@link KeyStore.onKeyLimitsChanged}): its id
 * (pipeline/key-id.ts), its name, its limits as this process last read them and as it reads them now
 * (undefined: none).
 */
export interface KeyLimitsChange {
  id: string;
  name: string;
  before?: KeyLimits;
  after?: KeyLimits;
}

/** A client key declared in the config file (SPEC 2.3 `keys:`), secret already resolved from env/file. */
export interface ConfigKey {
  name: string;
  /** The secret as the client presents it. Only its SHA-256 is kept, in memory. */
  secret: string;
  /** Defaults to []. */
  scopes?: string[];
  tag?: string;
  /** SPEC 9.6 limits; absent = unlimited. */
  limits?: KeyLimits;
}

/**
 * One key's open budget window (SPEC 9.6) as persisted: tokens and USD spent since `startedAt` (ms
 * since the epoch, the first use). Written lazily by the limit counters, read back at start.
 */
export interface KeyBudgetRow {
  /** The key's id (pipeline/key-id.ts: its name, `name#N` for a stored key, `name#config`). */
  keyName: string;
  window: BudgetWindow;
  startedAt: number;
  tokens: number;
  usd: number;
  /**
   * Requests settled in the window that used a model without a price (a USD budget's `unpriced`,
   * pipeline/ports.ts BudgetUse); absent when none (and for windows stored before SQLite schema 20).
   */
  unpriced?: number;
}

/**
 * The end of the `conflict` message of a `createKey` refused for an active stored key whose name differs
 * only in case: `a key named "ci-Bot" already exists (names differ only in case)` (such names read as
 * one key in tables, filters and alerts).
 */
export const CASE_ONLY = "(names differ only in case)";

/** The first of `names` that differs from `name` only in case (`String.prototype.toLowerCase`), not `name` itself; undefined when none does. */
export function caseTwin(name: string, names: Iterable<string>): string | undefined {
  const lower = name.toLowerCase();
  for (const other of names) if (other !== name && other.toLowerCase() === lower) return other;
  return undefined;
}

/** What `createKey` returns: the only time the secret is ever visible. */
export interface CreatedKey {
  /** `sy-` followed by 43 base64url characters (32 random bytes). Show it once, then forget it. */
  secret: string;
  key: ClientKey;
  /** ms since the epoch */
  createdAt: number;
}

/** A client key as listed by `keys list` / the admin API: no secret, no hash. */
export interface KeyInfo {
  name: string;
  /**
   * What counts the key's use when it is not its name (pipeline/key-id.ts): a stored key's `name#N`, a
   * config key's `name#config`. For the gateway's own use (its limit counters); the admin API does not
   * show it.
   */
  id?: string;
  scopes: string[];
  tag?: string;
  source: "config" | "db";
  /**
   * The secret's first characters (`sy-mHYRP`; secrets.ts keyPrefix), never enough to use the key, so a
   * secret a developer pastes can be matched to its key: a config key's from its secret, a stored key's
   * kept when it was created or rotated. Absent for a stored key made before the migration "client key
   * prefixes" (SQLite 18, PostgreSQL 19), whose secret the store never saw again, and for a config secret under 16 characters.
   */
  prefix?: string;
  /** ms since the epoch; absent for config keys. */
  createdAt?: number;
  /** ms since the epoch when revoked; absent while the key is active (always absent for config keys). */
  revokedAt?: number;
  /**
   * ms since the epoch when an active stored key was disabled (`switchyard keys disable NAME`): its
   * requests are refused (403 `key_disabled`) until it is enabled again; absent while it is not.
   */
  disabledAt?: number;
  /** SPEC 9.6 limits; absent = unlimited. */
  limits?: KeyLimits;
  /** A rotated key whose previous secret is still accepted: until when (ms since the epoch). */
  previousUntil?: number;
  /**
   * When a stored key's secret was last replaced (`switchyard keys rotate`, ms since the epoch), so a
   * rotation whose answer was lost is still seen (try18 D16); absent for a key never rotated, one rotated
   * before the migration "client key rotation times" (SQLite 19, PostgreSQL 20), and a config key.
   */
  rotatedAt?: number;
}

/**
 * A change of a stored key's limits, tag and scopes (`updateKey`, `PATCH /admin/api/keys/{name}`): a
 * field given replaces the key's, `null` clears it, a field left out stays as it is. `budgets` and
 * `models` are replaced as whole lists (an empty list clears them too); `limits: null` clears every
 * limit. `scopes` replaces the key's scopes (SPEC 9.3: `admin`, which lets it use the admin API and
 * dashboard); `null` or `[]` leaves it none.
 */
export interface KeyChange {
  tag?: string | null;
  limits?: { [K in keyof KeyLimits]?: KeyLimits[K] | null } | null;
  scopes?: string[] | null;
}

/** What `rotateKey` returns: the new secret (shown once) and until when the previous one is accepted. */
export interface RotatedKey extends CreatedKey {
  /** ms since the epoch: when the secret was replaced (what `listKeys` lists as `rotatedAt` from then on). */
  rotatedAt: number;
  /** ms since the epoch; absent when the previous secret was refused at once (no grace). */
  previousUntil?: number;
}

/** Client keys: `lookup`/`any` answer from memory; the rest reads or writes the database. */
export interface KeyStore extends KeyLookup {
  /**
   * Replaces the set of keys declared in the config file. They are hashed and held in memory only,
   * never written, and are looked up with `source: "config"`. Call again on every config reload.
   * @throws StoreError `invalid` when a name or secret is empty or two config keys share a name.
   */
  setConfigKeys(keys: ConfigKey[]): void;

  /** The disabled stored key whose secret this is (`setKeyDisabled`), else undefined; from memory. */
  disabled(secret: string): ClientKey | undefined;

  /**
   * The hex SHA-256 of the active stored key of that name (its secret, and its previous one during a
   * rotation's grace), from memory; empty when there is none. A config key of the same name is not
   * included: its dashboard sessions are its own (ended by the key's hashes, not its name).
   */
  storedKeyHashes(name: string): string[];

  /** Every active key, config and stored (as `lookup` returns them), from memory: what the shared counters watch. */
  activeKeys(): ClientKey[];

  /**
   * Creates a client key and returns its secret, the only time it is visible (only its SHA-256 is
   * stored). The first key of a name is generation 1 (its id `name#1`, never the bare name a config key
   * of that name may have counted under); a key created with the name of a revoked key is a new key
   * beside it (the revoked key stays listed, with its dates): its generation is one more, so its id
   * (`ClientKey.id`, pipeline/key-id.ts) is new and its limits count afresh.
   * `limits` (SPEC 9.6) are stored with it and carried by `lookup`.
   * @throws StoreError `conflict` when an active key of that name exists, or an active stored key whose
   *   name differs only in case (the message then ends with {@link CASE_ONLY}; checked in the same step
   *   as the insert, so of creates of `ci-Bot` and `ci-bot` at once on instances sharing a store one
   *   succeeds), `read_only` when a config key has that name, `invalid` for an empty/oversized name,
   *   non-string scopes or malformed limits.
   */
  createKey(name: string, scopes?: string[], tag?: string, limits?: KeyLimits): Awaitable<CreatedKey>;

  /**
   * All keys, config and stored, active and revoked (a name may have one active key and any number of
   * revoked ones), by name, the active key first; never secrets or hashes.
   */
  listKeys(): Awaitable<KeyInfo[]>;

  /**
   * Revokes the stored key of that name; `lookup` rejects it from the moment this returns.
   * @returns false when no active stored key has that name.
   * @throws StoreError `read_only` when the name belongs to a config key.
   */
  revokeKey(name: string): Awaitable<boolean>;

  /**
   * Gives the active stored key of that name a new secret (returned once; only its SHA-256 is stored) and
   * keeps everything else: its name, id (so its limits' use, budget windows and alerts go on), scopes,
   * tag, limits and creation time. The previous secret is accepted for `graceMs` more (0: refused from
   * the moment this returns); a second rotation ends the first one's grace.
   * A stored key that shares its name with a config key is the one rotated (as `revokeKey` revokes it).
   * @throws StoreError `not_found` when no active stored key has that name, `read_only` for a config
   *   key's name without an active stored key of it, `invalid` for a negative or non-finite grace, `closed`, `unavailable`.
   */
  rotateKey(name: string, graceMs?: number): Awaitable<RotatedKey>;

  /**
   * Disables (`disabled` true) or enables the active stored key of that name: a disabled key keeps
   * everything (secret, id, limits and their use) but `lookup` refuses it and `disabled` names it, here
   * from the moment this returns (other instances of a shared store within about a second). Disabling a
   * disabled key keeps its first `disabledAt`.
   * A stored key that shares its name with a config key is the one turned off or on (as `revokeKey`
   * revokes it; the config key is not affected).
   * @returns false when no active stored key has that name.
   * @throws StoreError `read_only` when the name belongs to a config key alone, `closed`, `unavailable`.
   */
  setKeyDisabled(name: string, disabled: boolean): Awaitable<boolean>;

  /**
   * Changes the limits, tag and scopes of the active stored key of that name ({@link KeyChange}) and keeps
   * everything else: its secret, id (generation, so the use of its limits so far: budget windows, this
   * minute's requests and tokens), dates and disabled state. `lookup` carries the new limits and scopes
   * from the moment this returns (the next request is checked against them), other instances of a
   * shared store within about a second (the same announcement as a revoke). A stored key that shares
   * its name with a config key is the one changed (as `revokeKey` revokes it).
   * @returns the key as `listKeys` lists it now.
   * @throws StoreError `not_found` when no active stored key has that name, `read_only` for a config
   *   key's name without an active stored key of it, `invalid` for malformed limits, tag or scopes, `closed`, `unavailable`.
   */
  updateKey(name: string, change: KeyChange): Awaitable<KeyInfo>;

  /** Re-reads stored keys into the lookup cache (picks up changes made by other instances). */
  refreshKeys(): Awaitable<void>;

  /**
   * Calls `listener` after a re-read of the stored keys found active keys whose limits differ from the
   * previous read's (same key id; a key new to the cache, revoked or only re-read is not reported): a
   * change another instance of a shared store made (learned within about a second of its announcement,
   * or at the periodic re-read), or one made in this process's database by another connection. The
   * re-read a key's own `updateKey` makes here does not report that key (its caller knows the change).
   * Called synchronously, once per re-read with every such key; a listener that throws is ignored.
   * Optional (the embedded store's keys change only through this process). Returns the unsubscribe.
   */
  onKeyLimitsChanged?(listener: (changes: KeyLimitsChange[]) => void): () => void;

  /**
   * SPEC 9.6, the embedded store only: the persisted budget windows of every key (ended ones included;
   * the caller skips them), which the in-memory key counters (src/limits/counters.ts) start from. The
   * shared store (PostgreSQL) has none of these three: its key limits count in the shared counters
   * (src/limits/shared-counters.ts, rows of their own), and its `key_budget_windows` table, written by
   * earlier versions, is neither read nor written any more (kept so that they still start on it).
   */
  loadKeyBudgets?(): Awaitable<KeyBudgetRow[]>;
  /** SPEC 9.6, the embedded store only: writes these budget windows (one row per key and window size, replacing the old one). */
  saveKeyBudgets?(rows: KeyBudgetRow[]): Awaitable<void>;
  /**
   * SPEC 9.6, the embedded store only: every usage flush takes the changed budget windows from `take`
   * and writes them in its own transaction, so they are as durable as the usage rows of the requests
   * that spent them (a kill -9 loses the last flush interval of both). Without it the caller saves them
   * with `saveKeyBudgets` on a timer of its own.
   */
  writeKeyBudgetsWithFlush?(take: () => KeyBudgetRow[]): void;
}
