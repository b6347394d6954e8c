/**
 * The in-memory client-key cache every store backend answers `lookup` and `any` from (SPEC G-2): config
 * keys (hashed here, never written) and the active stored keys (their hashes as read from the database).
 * Lookups hash the presented secret with SHA-256, find the candidate by its hex hash and confirm with a
 * constant-time compare. No I/O.
 */
import { configKeyIdFor, keyIdFor } from "../../pipeline/index.ts";
import type { ClientKey } from "../../pipeline/ports.ts";
import { checkLimits, checkName, checkScopes, checkTag, freezeKey, MAX_SECRET_LENGTH, omitUndefined, parseLimits, parseScopes } from "./rows.ts";
import { bytesEqual, keyPrefix, sha256 } from "./secrets.ts";
import { type ConfigKey, type KeyInfo, type KeyLimitsChange, StoreError } from "./types.ts";

interface CachedKey {
  hash: Buffer;
  key: ClientKey;
  /** A rotated key's previous secret: accepted until this time (ms since the epoch), then not. */
  until?: number;
  /** The key is disabled for now (`switchyard keys disable`): refused by `lookup`, named by `disabled`. */
  disabled?: true;
}

/** A config-file key as checked, before its id is known (it depends on the stored keys' names). */
interface ConfigEntry {
  hex: string;
  hash: Buffer;
  name: string;
  scopes: string[];
  tag?: string;
  limits?: ClientKey["limits"];
  /** The secret's non-secret prefix (keyPrefix), listed; undefined for a short secret. */
  prefix?: string;
}

/** A stored key as read from the `client_keys` table. */
export interface KeyRow {
  name: string;
  /** Hex SHA-256 of the secret. */
  hash: string;
  /** JSON array of scopes. */
  scopes: string;
  tag: string | null;
  created_at: number;
  revoked_at: number | null;
  /** JSON KeyLimits (SPEC 9.6), or null. */
  limits: string | null;
  /** A rotated key's previous secret (hex SHA-256) while it has a grace period, else null. */
  prev_hash?: string | null;
  /** Until when (ms since the epoch) `prev_hash` is accepted; null without a grace period. */
  prev_until?: number | null;
  /** 1 for the first key of its name (0 when stored before 2026-12-04); one more for each key created after a revoked one of that name (its id: `keyIdFor`). */
  generation: number;
  /** When the key was disabled (ms since the epoch; `switchyard keys disable`), null while it is not. */
  disabled_at?: number | null;
  /** The current secret's first characters (secrets.ts keyPrefix), kept at create and rotate; null for a key stored before the column. */
  prefix?: string | null;
  /** When the key's secret was last replaced (ms since the epoch; `switchyard keys rotate`); null when never, or before the column (SQLite 19, PostgreSQL 20). */
  rotated_at?: number | null;
}

/** Config keys and active stored keys, by the hex SHA-256 of their secret. */
export class KeyCache {
  private configKeys = new Map<string, CachedKey>();
  private configNames = new Set<string>();
  private configEntries: ConfigEntry[] = [];
  /** The names of the stored keys, active and revoked, as last set. */
  private storedNames = new Set<string>();
  /** The config names that a stored key (active or revoked) has too: their keys count as `name#config`. */
  private namesakes = new Set<string>();
  private dbKeys = new Map<string, CachedKey>();
  /** How many stored keys are disabled (`disabled` answers at once while there are none). */
  private disabledCount = 0;
  /** The active stored keys' limits as stored (JSON text, or null), by key id, as last set. */
  private storedLimits = new Map<string, string | null>();
  /** Told of the stored keys whose limits a re-read found changed ({@link onLimitsChanged}). */
  private readonly limitsListeners = new Set<(changes: KeyLimitsChange[]) => void>();

  /** @param now ms since the epoch (when a rotated key's previous secret stops being accepted) */
  constructor(private readonly now: () => number = Date.now) {}

  /**
   * The key whose secret this is, when valid and not revoked; else undefined. The returned object is
   * frozen and shared; do not mutate it.
   */
  lookup(secret: string): ClientKey | undefined {
    if (typeof secret !== "string" || secret.length === 0 || secret.length > MAX_SECRET_LENGTH) return undefined;
    const hash = sha256(secret);
    const hex = hash.toString("hex");
    const hit = this.dbKeys.get(hex) ?? this.configKeys.get(hex);
    if (!hit || hit.disabled || !bytesEqual(hit.hash, hash)) return undefined;
    if (hit.until !== undefined && this.now() >= hit.until) return undefined;
    return hit.key;
  }

  /**
   * The key whose secret this is when that key is disabled (`switchyard keys disable NAME`), so a
   * refusal can say so instead of calling the key unknown; else undefined. Off the hot path: the guard
   * asks only after `lookup` refused.
   */
  disabled(secret: string): ClientKey | undefined {
    if (this.disabledCount === 0) return undefined; // the usual case: no hash for a local tool's placeholder
    if (typeof secret !== "string" || secret.length === 0 || secret.length > MAX_SECRET_LENGTH) return undefined;
    const hash = sha256(secret);
    const hit = this.dbKeys.get(hash.toString("hex"));
    if (!hit?.disabled || !bytesEqual(hit.hash, hash)) return undefined;
    if (hit.until !== undefined && this.now() >= hit.until) return undefined;
    return hit.key;
  }

  /**
   * The active key whose secret has this hex SHA-256 (what a dashboard session keeps of the key it was
   * signed in with, src/admin/sessions.ts); else undefined. Frozen and shared, like `lookup`'s.
   */
  lookupHash(hex: string): ClientKey | undefined {
    if (typeof hex !== "string" || !/^[0-9a-f]{64}$/.test(hex)) return undefined;
    const hit = this.dbKeys.get(hex) ?? this.configKeys.get(hex);
    return hit && !hit.disabled && (hit.until === undefined || this.now() < hit.until) ? hit.key : undefined;
  }

  /**
   * The hex SHA-256 of the active stored key named `name` (disabled or not) and, while a rotation's grace
   * lasts, of its previous secret: what a dashboard session keeps of the key it was signed in with
   * (src/admin/sessions.ts), so ending "this key's sessions" ends the stored key's and not those of a
   * config key of the same name. Empty when no active stored key has the name. No I/O.
   */
  storedHashes(name: string): string[] {
    const out: string[] = [];
    for (const [hex, c] of this.dbKeys) if (c.key.name === name) out.push(hex);
    return out;
  }

  /** Whether any active client key (config or stored) exists. */
  any(): boolean {
    return this.dbKeys.size > 0 || this.configKeys.size > 0;
  }

  /**
   * Every active key (config and stored, disabled ones included: their limits' windows stay watched;
   * frozen and shared, do not mutate). No I/O.
   */
  active(): ClientKey[] {
    return [...this.configKeys.values(), ...[...this.dbKeys.values()].filter((c) => c.until === undefined)].map((c) => c.key);
  }

  /** Whether a config-file key has this name. */
  isConfigName(name: string): boolean {
    return this.configNames.has(name);
  }

  /**
   * Replaces the config-file keys.
   * @throws StoreError `invalid` for an empty name or secret, a duplicate name, or a shared secret.
   */
  setConfigKeys(keys: ConfigKey[]): void {
    const entries: ConfigEntry[] = [];
    const byHash = new Map<string, ConfigEntry>();
    const names = new Set<string>();
    for (const k of keys) {
      const name = checkName(k?.name);
      if (typeof k.secret !== "string" || k.secret.length === 0) {
        throw new StoreError("invalid", `config key ${JSON.stringify(name)} has an empty secret`);
      }
      if (k.secret.length > MAX_SECRET_LENGTH) {
        throw new StoreError("invalid", `config key ${JSON.stringify(name)} has a secret longer than ${MAX_SECRET_LENGTH} characters`);
      }
      if (names.has(name)) throw new StoreError("invalid", `config key name ${JSON.stringify(name)} is used twice`);
      const hash = sha256(k.secret);
      const hex = hash.toString("hex");
      const other = byHash.get(hex);
      if (other) {
        throw new StoreError("invalid", `config keys ${JSON.stringify(other.name)} and ${JSON.stringify(name)} have the same secret`);
      }
      names.add(name);
      const entry: ConfigEntry = { hex, hash, name, scopes: checkScopes(k.scopes), tag: checkTag(k.tag), limits: checkLimits(k.limits), prefix: keyPrefix(k.secret) };
      byHash.set(hex, entry);
      entries.push(entry);
    }
    this.configEntries = entries;
    this.configNames = names;
    this.namesakes = new Set([...names].filter((n) => this.storedNames.has(n)));
    this.buildConfigKeys();
  }

  /**
   * The config keys' lookup map from {@link configEntries}: each key's id is its name, or `name#config`
   * when a stored key has that name ({@link configKeyIdFor}), so a config key never counts in a stored
   * key's windows (a revoked one's included).
   */
  private buildConfigKeys(): void {
    const byHash = new Map<string, CachedKey>();
    for (const e of this.configEntries) {
      const id = configKeyIdFor(e.name, this.namesakes.has(e.name));
      byHash.set(e.hex, { hash: e.hash, key: freezeKey({ name: e.name, id, scopes: e.scopes, tag: e.tag, limits: e.limits, source: "config" }) });
    }
    this.configKeys = byHash;
  }

  /**
   * Calls `listener` when {@link setStoredKeys} finds active stored keys whose limits differ from the
   * previous rows' (same id): see `KeyStore.onKeyLimitsChanged`. Returns the unsubscribe.
   */
  onLimitsChanged(listener: (changes: KeyLimitsChange[]) => void): () => void {
    this.limitsListeners.add(listener);
    return () => this.limitsListeners.delete(listener);
  }

  /**
   * Replaces the stored keys with these rows (revoked rows are skipped; every row's name counts for the
   * config keys' ids, and a change there rebuilds them). Active keys whose stored limits differ from the
   * previous rows' are reported to the {@link onLimitsChanged} listeners, but the key named `ownChange`
   * (the re-read of this process's own `updateKey`, whose caller knows the change).
   */
  setStoredKeys(rows: Iterable<KeyRow>, ownChange?: string): void {
    const map = new Map<string, CachedKey>();
    const storedNames = new Set<string>();
    const namesakes = new Set<string>();
    const storedLimits = new Map<string, string | null>();
    const changed: KeyLimitsChange[] = [];
    let disabledCount = 0;
    for (const row of rows) {
      storedNames.add(row.name);
      if (this.configNames.has(row.name)) namesakes.add(row.name);
      if (row.revoked_at !== null) continue;
      const id = keyIdFor(row.name, row.generation ?? 0);
      const key = freezeKey({ name: row.name, id, scopes: parseScopes(row.scopes), tag: row.tag ?? undefined, limits: parseLimits(row.limits), source: "db" });
      const text = row.limits ?? null;
      storedLimits.set(id, text);
      const was = this.storedLimits.get(id);
      if (was !== undefined && was !== text && row.name !== ownChange && this.limitsListeners.size > 0) changed.push({ id, name: row.name, before: parseLimits(was), after: key.limits });
      const off = row.disabled_at != null ? { disabled: true as const } : {};
      if (row.disabled_at != null) disabledCount++;
      map.set(row.hash, { hash: Buffer.from(row.hash, "hex"), key, ...off });
      // A rotated key's previous secret counts as the same key (same id: its limits and use) in its grace period.
      if (row.prev_hash && row.prev_until != null && row.prev_until > this.now()) map.set(row.prev_hash, { hash: Buffer.from(row.prev_hash, "hex"), key, until: row.prev_until, ...off });
    }
    this.dbKeys = map;
    this.disabledCount = disabledCount;
    this.storedNames = storedNames;
    this.storedLimits = storedLimits;
    if (namesakes.size !== this.namesakes.size || [...namesakes].some((n) => !this.namesakes.has(n))) {
      this.namesakes = namesakes;
      this.buildConfigKeys();
    }
    if (changed.length === 0) return;
    for (const listener of this.limitsListeners) {
      try {
        listener(changed);
      } catch {
        // a listener's failure does not undo the re-read
      }
    }
  }

  /**
   * Every key for `listKeys`: the config keys plus these stored rows (a revoked key's row stays when a
   * new key takes its name), sorted by name, then source, then the active key before the revoked ones,
   * newest first.
   */
  list(rows: Iterable<KeyRow>): KeyInfo[] {
    const out: KeyInfo[] = [];
    const prefixes = new Map(this.configEntries.map((e) => [e.name, e.prefix]));
    for (const { key } of this.configKeys.values()) {
      out.push(omitUndefined({ name: key.name, id: key.id, scopes: [...key.scopes], tag: key.tag, limits: key.limits, source: "config" as const, prefix: prefixes.get(key.name) }));
    }
    // Newest generation first: the sort below is stable, so a name's revoked keys stay newest first.
    for (const row of [...rows].sort((a, b) => (b.generation ?? 0) - (a.generation ?? 0))) {
      out.push(
        omitUndefined({
          name: row.name,
          id: idUnlessName(row.name, keyIdFor(row.name, row.generation ?? 0)),
          scopes: parseScopes(row.scopes),
          tag: row.tag ?? undefined,
          source: "db" as const,
          prefix: row.prefix ?? undefined,
          createdAt: row.created_at,
          revokedAt: row.revoked_at ?? undefined,
          disabledAt: row.revoked_at === null ? (row.disabled_at ?? undefined) : undefined,
          rotatedAt: row.rotated_at ?? undefined,
          previousUntil: row.revoked_at === null && row.prev_until != null && row.prev_until > this.now() ? row.prev_until : undefined,
          limits: parseLimits(row.limits),
        }),
      );
    }
    return out.sort(
      (a, b) =>
        (a.name < b.name ? -1 : a.name > b.name ? 1 : 0) ||
        (a.source < b.source ? -1 : a.source > b.source ? 1 : 0) ||
        (a.revokedAt === undefined ? 0 : 1) - (b.revokedAt === undefined ? 0 : 1),
    );
  }
}

/** `id` when it is not the key's name (a {@link KeyInfo} carries only an id that says more). */
function idUnlessName(name: string, id: string): string | undefined {
  return id === name ? undefined : id;
}

/**
 * The memory-only half of a backend's `KeyStore` role, the same on SQLite and PostgreSQL: lookups, the
 * active keys and the config-file keys, answered by the backend's {@link KeyCache} (which the backend
 * re-reads from its `client_keys` table with `cache.setStoredKeys`). A backend class extends it with
 * what reads and writes that table.
 */
export abstract class CachedKeys {
  protected readonly cache: KeyCache;

  /** `now`: ms since the epoch, for a rotated secret's grace. */
  constructor(now: () => number) {
    this.cache = new KeyCache(now);
  }

  /**
   * The key whose secret this is, when valid and not revoked; else undefined. Memory only: hashes the
   * presented secret (SHA-256), finds the candidate by its hash and confirms with a constant-time
   * compare. The returned object is frozen and shared; do not mutate it.
   */
  lookup(secret: string): ClientKey | undefined {
    return this.cache.lookup(secret);
  }

  /** The active key whose secret has this hex SHA-256 (KeyCache.lookupHash). */
  lookupHash(hex: string): ClientKey | undefined {
    return this.cache.lookupHash(hex);
  }

  /** The hex SHA-256 of the active stored key of that name, and of its previous secret in a grace (KeyCache.storedHashes). Memory only. */
  storedKeyHashes(name: string): string[] {
    return this.cache.storedHashes(name);
  }

  /** Every active client key (config and stored). Memory only. */
  activeKeys(): ClientKey[] {
    return this.cache.active();
  }

  /** Whether any active client key (config or stored) exists. Memory only. */
  any(): boolean {
    return this.cache.any();
  }

  /**
   * Replaces the config-file keys (held hashed in memory, never written).
   * @throws StoreError `invalid` for an empty name or secret, a duplicate name, or a shared secret.
   */
  setConfigKeys(keys: ConfigKey[]): void {
    this.cache.setConfigKeys(keys);
  }

  /** Tells `listener` of the stored keys whose limits a re-read found changed (KeyStore.onKeyLimitsChanged, KeyCache.onLimitsChanged). */
  onKeyLimitsChanged(listener: (changes: KeyLimitsChange[]) => void): () => void {
    return this.cache.onLimitsChanged(listener);
  }

  /** The disabled key whose secret this is (KeyCache.disabled). Memory only. */
  disabled(secret: string): ClientKey | undefined {
    return this.cache.disabled(secret);
  }

  /** @throws StoreError `read_only` when `name` is a config-file key's (the file, not the store, changes it). */
  protected refuseConfigName(name: string): void {
    if (this.cache.isConfigName(name)) throw new StoreError("read_only", `key ${JSON.stringify(name)} is declared in the config file`);
  }
}
