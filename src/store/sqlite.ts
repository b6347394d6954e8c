/**
 * The embedded store (SPEC D-1): bun:sqlite in WAL mode with `synchronous=NORMAL`.
 *
 * - Hot path (`lookup`, `any`, `record`, `save`, `bind`, `setQuota`): memory only. Usage rows, traces,
 *   bindings and quota windows are buffered and written in ONE transaction by an unref'd timer at least
 *   every `flushIntervalMs`, as soon as {@link EARLY_FLUSH_AT} rows are waiting, and by `flush()` /
 *   `close()`; a kill -9 loses at most one interval.
 * - Routing state (cooldowns, locks, removed pairings, quarantines, circuits) is written through: each
 *   call commits before it returns. Credentials are committed with `synchronous=FULL` (fsync of the
 *   WAL) so a rotated refresh token survives even a power loss (SPEC P-7).
 * - The database file and its `-wal`/`-shm` companions are created with mode 0600: they hold OAuth
 *   tokens and API keys.
 */
import { Database, type Statement } from "bun:sqlite";
import { chmodSync, closeSync, existsSync, mkdirSync, openSync } from "node:fs";
import { dirname, resolve } from "node:path";
import type { Account, ClientKey, Clock, Credential, RouteTrace, UsageRecord } from "../../pipeline/ports.ts";
import { migrate } from "./migrations.ts";
import { bytesEqual, generateKeySecret, sha256, sha256Hex } from "./secrets.ts";
import {
  type AccountInput,
  type AccountLock,
  type AccountState,
  type Binding,
  type CallRow,
  type Circuit,
  type ConfigKey,
  type Cooldown,
  type CreatedKey,
  type CredentialOverride,
  type KeyInfo,
  type Quarantine,
  type QuotaWindow,
  type RemovedModel,
  type Store,
  StoreError,
  type StoreStats,
  type UsageGroupBy,
  type UsageQuery,
  type UsageSummaryRow,
} from "./types.ts";

/** Options of `openSqliteStore`. */
export interface SqliteStoreOptions {
  /** Database file path (parent directories are created, mode 0700), or ":memory:". */
  path: string;
  /** Source of "now" (ms since the epoch) for timestamps and expiry; default `Date.now`. */
  clock?: Pick<Clock, "now">;
  /** Longest time a buffered usage row/trace waits before it is written, in ms. Default 1000. */
  flushIntervalMs?: number;
  /** Route traces kept (the ring's size, SPEC O-2). Default 10,000. */
  traceRingSize?: number;
  /** SQLite busy timeout in ms (waiting for another connection's write lock). Default 5000. */
  busyTimeoutMs?: number;
  /**
   * Rows buffered at most while flushes fail; further `record`/`save` calls are dropped and counted.
   * Default 100,000.
   */
  maxPending?: number;
  /** Receives flush/refresh failures (messages carry no secrets). Default: one line on stderr. */
  onError?: (message: string, error: unknown) => void;
}

/**
 * Opens (creating when missing) the SQLite store at `path`, applies pending migrations and loads the
 * client-key cache. The returned store's query methods are synchronous.
 * @throws StoreError `schema` when the file was written by a newer build; bun:sqlite errors when the
 *   file cannot be opened (not a database, permission denied).
 */
export function openSqliteStore(options: SqliteStoreOptions): SqliteStore {
  return new SqliteStore(options);
}

/** Largest accepted client-key name, in characters. */
const MAX_NAME_LENGTH = 128;
/** Longest secret `lookup` will hash; longer inputs are rejected without hashing. */
const MAX_SECRET_LENGTH = 4096;
/**
 * Buffered usage rows (or traces) that trigger an early flush, on the next macrotask. A flush holds the
 * event loop for ~20 µs per row (usage + trace, measured): 256 rows keep that pause near 5 ms, where
 * one flush per second at 2,000–3,500 requests per second holds it for 40–70 ms. The CPU per row is
 * the same from batches of ~256 up (microbenchmark of `flush`: 21–24 µs per row at 256, 512 and 3,000).
 */
const EARLY_FLUSH_AT = 256;
/** Quota windows not updated for this long are pruned, ms (30 days). */
const QUOTA_STALE_MS = 30 * 24 * 3600 * 1000;

interface CachedKey {
  hash: Buffer;
  key: ClientKey;
}

interface KeyRow {
  name: string;
  hash: string;
  scopes: string;
  tag: string | null;
  created_at: number;
  revoked_at: number | null;
}

interface AccountRow {
  id: string;
  provider_id: string;
  credential: string;
  priority: number;
  max_concurrency: number | null;
  proxy: string | null;
  disabled: number;
  models: string | null;
}

interface UsageRow {
  request_id: string;
  ts: number;
  client_format: string;
  requested_model: string;
  provider_id: string | null;
  model: string | null;
  account_id: string | null;
  key_name: string | null;
  input_tokens: number | null;
  output_tokens: number | null;
  cache_read_tokens: number | null;
  cache_write_tokens: number | null;
  reasoning_tokens: number | null;
  estimated: number;
  outcome: string;
  status: number;
  ttfb_ms: number | null;
  total_ms: number;
  attempts: number;
  fallback: number;
  route_id?: string | null;
}

const GROUP_COLUMNS: Record<UsageGroupBy, string> = {
  model: "model",
  account: "account_id",
  key: "key_name",
  provider: "provider_id",
};

/** Stores that are open in this process; flushed when the event loop drains (`beforeExit`). */
const openStores = new Set<SqliteStore>();
let exitHookInstalled = false;

/** The SQLite implementation of `Store`. Create it with `openSqliteStore`. */
export class SqliteStore implements Store {
  /** Absolute path of the database file, or ":memory:". */
  readonly path: string;
  private readonly db: Database;
  private readonly now: () => number;
  private readonly traceRingSize: number;
  private readonly maxPending: number;
  private readonly onError: (message: string, error: unknown) => void;
  private readonly timer: ReturnType<typeof setInterval>;
  private closed = false;
  private earlyFlushScheduled = false;

  // write buffers
  /** Usage rows as `usageInsert` parameters (flat arrays of primitives until the flush). */
  private usageBuf: UsageParams[] = [];
  /** Traces as `traceInsert` parameters: route id, request id, ts, the JSON body. */
  private traceBuf: TraceParams[] = [];
  private bindBuf = new Map<string, Binding>();
  private quotaBuf = new Map<string, QuotaWindow & { updatedAt: number }>();

  // counters
  private dropped = 0;
  private flushErrors = 0;
  private lastFlushAt = 0;

  // client-key cache: hex SHA-256 → key
  private configKeys = new Map<string, CachedKey>();
  private configNames = new Set<string>();
  private dbKeys = new Map<string, CachedKey>();
  private dataVersion = 0;

  // prepared statements
  private readonly s: ReturnType<SqliteStore["prepareAll"]>;
  private readonly summaryStmts = new Map<string, Statement>();

  /** Use `openSqliteStore`. */
  constructor(options: SqliteStoreOptions) {
    const clock = options.clock;
    this.now = clock ? () => clock.now() : Date.now;
    this.traceRingSize = Math.max(1, Math.floor(options.traceRingSize ?? 10_000));
    this.maxPending = Math.max(1, Math.floor(options.maxPending ?? 100_000));
    this.onError =
      options.onError ??
      ((message) => {
        console.error(`[switchyard store] ${message}`);
      });
    const memory = options.path === ":memory:" || options.path === "";
    this.path = memory ? ":memory:" : resolve(options.path);
    if (!memory) prepareFile(this.path);

    this.db = new Database(this.path, { create: true, readwrite: true, strict: true });
    try {
      const busy = Math.max(0, Math.floor(options.busyTimeoutMs ?? 5000));
      this.db.run(`PRAGMA busy_timeout = ${busy}`);
      this.db.run("PRAGMA journal_mode = WAL");
      this.db.run("PRAGMA synchronous = NORMAL");
      this.db.run("PRAGMA foreign_keys = ON");
      this.db.run("PRAGMA journal_size_limit = 67108864");
      migrate(this.db, this.now);
      if (!memory) tightenModes(this.path);
      this.s = this.prepareAll();
      this.reloadKeys();
    } catch (err) {
      this.db.close(false);
      throw err;
    }

    const interval = Math.max(1, Math.floor(options.flushIntervalMs ?? 1000));
    this.timer = setInterval(() => this.tick(), interval);
    this.timer.unref?.();
    openStores.add(this);
    installExitHook();
  }

  private prepareAll() {
    const db = this.db;
    return {
      health: db.prepare("SELECT 1 AS ok"),
      dataVersion: db.prepare("PRAGMA data_version"),
      // keys
      keysAll: db.prepare("SELECT name, hash, scopes, tag, created_at, revoked_at FROM client_keys ORDER BY name"),
      keyByName: db.prepare("SELECT revoked_at FROM client_keys WHERE name = ?"),
      keyUpsert: db.prepare(
        `INSERT INTO client_keys (name, hash, scopes, tag, created_at, revoked_at) VALUES (?, ?, ?, ?, ?, NULL)
         ON CONFLICT (name) DO UPDATE SET hash = excluded.hash, scopes = excluded.scopes, tag = excluded.tag,
           created_at = excluded.created_at, revoked_at = NULL`,
      ),
      keyRevoke: db.prepare("UPDATE client_keys SET revoked_at = ? WHERE name = ? AND revoked_at IS NULL"),
      // accounts
      accountsAll: db.prepare(
        `SELECT a.id, a.provider_id, a.credential, a.priority, a.max_concurrency, a.proxy, a.disabled, m.models
         FROM accounts a LEFT JOIN account_models m ON m.account_id = a.id ORDER BY a.priority, a.id`,
      ),
      accountOne: db.prepare(
        `SELECT a.id, a.provider_id, a.credential, a.priority, a.max_concurrency, a.proxy, a.disabled, m.models
         FROM accounts a LEFT JOIN account_models m ON m.account_id = a.id WHERE a.id = ?`,
      ),
      accountUpsert: db.prepare(
        `INSERT INTO accounts (id, provider_id, credential, priority, max_concurrency, proxy, disabled, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (id) DO UPDATE SET provider_id = excluded.provider_id, credential = excluded.credential,
           priority = excluded.priority, max_concurrency = excluded.max_concurrency, proxy = excluded.proxy,
           disabled = excluded.disabled, updated_at = excluded.updated_at`,
      ),
      accountCredential: db.prepare("UPDATE accounts SET credential = ?, updated_at = ? WHERE id = ?"),
      overrideUpsert: db.prepare(
        "INSERT INTO credential_overrides (account_id, base_fingerprint, credential, updated_at) VALUES (?, ?, ?, ?) ON CONFLICT(account_id) DO UPDATE SET base_fingerprint = excluded.base_fingerprint, credential = excluded.credential, updated_at = excluded.updated_at",
      ),
      overrideList: db.prepare("SELECT account_id, base_fingerprint, credential FROM credential_overrides"),
      overrideDelete: db.prepare("DELETE FROM credential_overrides WHERE account_id = ?"),
      accountDisabled: db.prepare("UPDATE accounts SET disabled = ?, updated_at = ? WHERE id = ?"),
      accountDelete: db.prepare("DELETE FROM accounts WHERE id = ?"),
      modelsUpsert: db.prepare(
        `INSERT INTO account_models (account_id, models, discovered_at) VALUES (?, ?, ?)
         ON CONFLICT (account_id) DO UPDATE SET models = excluded.models, discovered_at = excluded.discovered_at`,
      ),
      modelsDelete: db.prepare("DELETE FROM account_models WHERE account_id = ?"),
      // account state
      cooldownSet: db.prepare(
        `INSERT INTO cooldowns (account_id, model, until, reason, level, since) VALUES (?, ?, ?, ?, ?, ?)
         ON CONFLICT (account_id, model) DO UPDATE SET until = excluded.until, reason = excluded.reason,
           level = excluded.level, since = excluded.since`,
      ),
      cooldownClearOne: db.prepare("DELETE FROM cooldowns WHERE account_id = ? AND model = ?"),
      cooldownClearAll: db.prepare("DELETE FROM cooldowns WHERE account_id = ?"),
      lockSet: db.prepare(
        `INSERT INTO account_locks (account_id, until, reason, since) VALUES (?, ?, ?, ?)
         ON CONFLICT (account_id) DO UPDATE SET until = excluded.until, reason = excluded.reason, since = excluded.since`,
      ),
      lockClear: db.prepare("DELETE FROM account_locks WHERE account_id = ?"),
      removedSet: db.prepare(
        `INSERT INTO removed_models (account_id, model, reason, until, since) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (account_id, model) DO UPDATE SET reason = excluded.reason, until = excluded.until, since = excluded.since`,
      ),
      removedClearOne: db.prepare("DELETE FROM removed_models WHERE account_id = ? AND model = ?"),
      removedClearAll: db.prepare("DELETE FROM removed_models WHERE account_id = ?"),
      quarantineSet: db.prepare(
        `INSERT INTO quarantined_credentials (fingerprint, account_id, reason, since) VALUES (?, ?, ?, ?)
         ON CONFLICT (fingerprint) DO UPDATE SET account_id = excluded.account_id, reason = excluded.reason, since = excluded.since`,
      ),
      quarantineClear: db.prepare("DELETE FROM quarantined_credentials WHERE fingerprint = ?"),
      circuitSet: db.prepare(
        `INSERT INTO provider_circuits (provider_id, open_until, reason, since) VALUES (?, ?, ?, ?)
         ON CONFLICT (provider_id) DO UPDATE SET open_until = excluded.open_until, reason = excluded.reason, since = excluded.since`,
      ),
      circuitClear: db.prepare("DELETE FROM provider_circuits WHERE provider_id = ?"),
      quotaSet: db.prepare(
        `INSERT INTO quota_windows (account_id, window, model, used_percent, remaining, quota_limit, reset_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (account_id, window, model) DO UPDATE SET used_percent = excluded.used_percent,
           remaining = excluded.remaining, quota_limit = excluded.quota_limit, reset_at = excluded.reset_at,
           updated_at = excluded.updated_at`,
      ),
      bindSet: db.prepare(
        `INSERT INTO bindings (key, account_id, expires_at) VALUES (?, ?, ?)
         ON CONFLICT (key) DO UPDATE SET account_id = excluded.account_id, expires_at = excluded.expires_at`,
      ),
      bindClear: db.prepare("DELETE FROM bindings WHERE key = ?"),
      // account state: prune + load
      pruneCooldowns: db.prepare("DELETE FROM cooldowns WHERE until <= ?"),
      pruneLocks: db.prepare("DELETE FROM account_locks WHERE until IS NOT NULL AND until <= ?"),
      pruneRemoved: db.prepare("DELETE FROM removed_models WHERE until IS NOT NULL AND until <= ?"),
      pruneCircuits: db.prepare("DELETE FROM provider_circuits WHERE open_until <= ?"),
      pruneQuotas: db.prepare(
        "DELETE FROM quota_windows WHERE (reset_at IS NOT NULL AND reset_at <= ?) OR updated_at <= ?",
      ),
      pruneBindings: db.prepare("DELETE FROM bindings WHERE expires_at <= ?"),
      loadCooldowns: db.prepare(
        "SELECT account_id, model, until, reason, level, since FROM cooldowns WHERE until > ? ORDER BY account_id, model",
      ),
      loadLocks: db.prepare(
        "SELECT account_id, until, reason, since FROM account_locks WHERE until IS NULL OR until > ? ORDER BY account_id",
      ),
      loadRemoved: db.prepare(
        "SELECT account_id, model, reason, until, since FROM removed_models WHERE until IS NULL OR until > ? ORDER BY account_id, model",
      ),
      loadQuarantined: db.prepare(
        "SELECT fingerprint, account_id, reason, since FROM quarantined_credentials ORDER BY since",
      ),
      loadCircuits: db.prepare(
        "SELECT provider_id, open_until, reason, since FROM provider_circuits WHERE open_until > ? ORDER BY provider_id",
      ),
      loadQuotas: db.prepare(
        `SELECT account_id, window, model, used_percent, remaining, quota_limit, reset_at, updated_at FROM quota_windows
         WHERE (reset_at IS NULL OR reset_at > ?) AND updated_at > ? ORDER BY account_id, window, model`,
      ),
      loadBindings: db.prepare("SELECT key, account_id, expires_at FROM bindings WHERE expires_at > ?"),
      loadModels: db.prepare("SELECT account_id, models, discovered_at FROM account_models ORDER BY account_id"),
      deleteStateCooldowns: db.prepare("DELETE FROM cooldowns WHERE account_id = ?"),
      deleteStateLocks: db.prepare("DELETE FROM account_locks WHERE account_id = ?"),
      deleteStateRemoved: db.prepare("DELETE FROM removed_models WHERE account_id = ?"),
      deleteStateQuotas: db.prepare("DELETE FROM quota_windows WHERE account_id = ?"),
      deleteStateBindings: db.prepare("DELETE FROM bindings WHERE account_id = ?"),
      // usage and traces
      usageInsert: db.prepare(
        `INSERT INTO usage (request_id, ts, client_format, requested_model, provider_id, model, account_id, key_name,
           input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, reasoning_tokens, estimated, outcome,
           status, ttfb_ms, total_ms, attempts, fallback)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ),
      usageRecent: db.prepare(
        `SELECT u.*, (SELECT t.route_id FROM route_traces t WHERE t.request_id = u.request_id ORDER BY t.seq DESC LIMIT 1) AS route_id
         FROM usage u ORDER BY u.ts DESC, u.id DESC LIMIT ?`,
      ),
      usagePrune: db.prepare("DELETE FROM usage WHERE ts < ?"),
      traceInsert: db.prepare(
        "INSERT OR REPLACE INTO route_traces (route_id, request_id, ts, body) VALUES (?, ?, ?, ?)",
      ),
      traceTrim: db.prepare("DELETE FROM route_traces WHERE seq <= (SELECT MAX(seq) FROM route_traces) - ?"),
      traceByRoute: db.prepare("SELECT body FROM route_traces WHERE route_id = ?"),
      traceByRequest: db.prepare("SELECT body FROM route_traces WHERE request_id = ? ORDER BY seq DESC LIMIT 1"),
      traceRecent: db.prepare("SELECT body FROM route_traces ORDER BY seq DESC LIMIT ?"),
    };
  }

  // ===========================================================================================
  // Client keys
  // ===========================================================================================

  /**
   * The key whose secret this is, when valid and not revoked; else undefined. Memory only: hashes the
   * presented secret (SHA-256), finds the candidate by its hash and confirms with a constant-time
   * compare. The returned object is frozen and shared; do not mutate it.
   */
  lookup(secret: string): ClientKey | undefined {
    if (typeof secret !== "string" || secret.length === 0 || secret.length > MAX_SECRET_LENGTH) return undefined;
    const hash = sha256(secret);
    const hex = hash.toString("hex");
    const hit = this.dbKeys.get(hex) ?? this.configKeys.get(hex);
    if (!hit || !bytesEqual(hit.hash, hash)) return undefined;
    return hit.key;
  }

  /** Whether any active client key (config or stored) exists. Memory only. */
  any(): boolean {
    return this.dbKeys.size > 0 || this.configKeys.size > 0;
  }

  /**
   * Replaces the config-file keys (held hashed in memory, never written).
   * @throws StoreError `invalid` for an empty name or secret, a duplicate name, or a shared secret.
   */
  setConfigKeys(keys: ConfigKey[]): void {
    const byHash = new Map<string, CachedKey>();
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
        throw new StoreError("invalid", `config keys ${JSON.stringify(other.key.name)} and ${JSON.stringify(name)} have the same secret`);
      }
      names.add(name);
      byHash.set(hex, { hash, key: freezeKey({ name, scopes: checkScopes(k.scopes), tag: checkTag(k.tag), source: "config" }) });
    }
    this.configKeys = byHash;
    this.configNames = names;
  }

  /**
   * Creates a stored key; returns its secret once (only the SHA-256 is written). A revoked key of the
   * same name is replaced.
   * @throws StoreError `conflict` (active key of that name), `read_only` (config key of that name),
   *   `invalid` (bad name, scopes or tag), `closed`.
   */
  createKey(name: string, scopes: string[] = [], tag?: string): CreatedKey {
    this.assertOpen();
    const n = checkName(name);
    const sc = checkScopes(scopes);
    const tg = checkTag(tag);
    if (this.configNames.has(n)) {
      throw new StoreError("read_only", `key ${JSON.stringify(n)} is declared in the config file`);
    }
    const secret = generateKeySecret();
    const createdAt = Math.round(this.now());
    this.db
      .transaction(() => {
        const row = this.s.keyByName.get(n) as { revoked_at: number | null } | null;
        if (row && row.revoked_at === null) {
          throw new StoreError("conflict", `a key named ${JSON.stringify(n)} already exists`);
        }
        this.s.keyUpsert.run(n, sha256Hex(secret), JSON.stringify(sc), tg ?? null, createdAt);
      })
      .immediate();
    this.reloadKeys();
    return { secret, key: freezeKey({ name: n, scopes: sc, tag: tg, source: "db" }), createdAt };
  }

  /** Every key, config and stored (active and revoked), sorted by name; no secrets, no hashes. */
  listKeys(): KeyInfo[] {
    this.assertOpen();
    const out: KeyInfo[] = [];
    for (const { key } of this.configKeys.values()) {
      out.push(omitUndefined({ name: key.name, scopes: [...key.scopes], tag: key.tag, source: "config" as const }));
    }
    for (const row of this.s.keysAll.all() as KeyRow[]) {
      out.push(
        omitUndefined({
          name: row.name,
          scopes: parseScopes(row.scopes),
          tag: row.tag ?? undefined,
          source: "db" as const,
          createdAt: row.created_at,
          revokedAt: row.revoked_at ?? undefined,
        }),
      );
    }
    return out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : a.source < b.source ? -1 : 1));
  }

  /**
   * Revokes the active stored key of that name; effective for `lookup` on return.
   * @returns false when there is none. @throws StoreError `read_only` for a config key's name.
   */
  revokeKey(name: string): boolean {
    this.assertOpen();
    const changed = this.s.keyRevoke.run(Math.round(this.now()), String(name)).changes > 0;
    if (changed) {
      this.reloadKeys();
      return true;
    }
    if (this.configNames.has(name)) {
      throw new StoreError("read_only", `key ${JSON.stringify(name)} is declared in the config file`);
    }
    return false;
  }

  /** Re-reads the stored keys into the lookup cache. */
  refreshKeys(): void {
    this.assertOpen();
    this.reloadKeys();
  }

  private reloadKeys(): void {
    const map = new Map<string, CachedKey>();
    for (const row of this.s.keysAll.all() as KeyRow[]) {
      if (row.revoked_at !== null) continue;
      map.set(row.hash, {
        hash: Buffer.from(row.hash, "hex"),
        key: freezeKey({ name: row.name, scopes: parseScopes(row.scopes), tag: row.tag ?? undefined, source: "db" }),
      });
    }
    this.dbKeys = map;
    this.dataVersion = (this.s.dataVersion.get() as { data_version: number }).data_version;
  }

  // ===========================================================================================
  // Accounts
  // ===========================================================================================

  /** Stored accounts (source `db`), by priority then id, with their discovered models. */
  listAccounts(): Account[] {
    this.assertOpen();
    return (this.s.accountsAll.all() as AccountRow[]).map(rowToAccount);
  }

  /** One stored account, or undefined. */
  getAccount(id: string): Account | undefined {
    this.assertOpen();
    const row = this.s.accountOne.get(String(id)) as AccountRow | null;
    return row ? rowToAccount(row) : undefined;
  }

  /**
   * Creates or replaces a stored account, committed with fsync (it carries a credential).
   * @throws StoreError `invalid` for an empty id/provider or a malformed credential, `closed`.
   */
  upsertAccount(account: AccountInput): void {
    this.assertOpen();
    const id = checkId(account?.id, "account id");
    const providerId = checkId(account.providerId, "provider id");
    const credential = checkCredential(account.credential, id);
    const now = Math.round(this.now());
    this.durably(() =>
      this.s.accountUpsert.run(
        id,
        providerId,
        JSON.stringify(credential),
        intOr(account.priority, 0),
        intOrNull(account.maxConcurrency),
        typeof account.proxy === "string" && account.proxy ? account.proxy : null,
        account.disabled ? 1 : 0,
        now,
        now,
      ),
    );
  }

  /**
   * Replaces an account's credential, committed with fsync before returning (SPEC P-7).
   * @throws StoreError `not_found`, `invalid` (malformed credential), `closed`.
   */
  updateCredential(id: string, credential: Credential): void {
    this.assertOpen();
    const cred = checkCredential(credential, id);
    const changes = this.durably(
      () => this.s.accountCredential.run(JSON.stringify(cred), Math.round(this.now()), String(id)).changes,
    );
    if (changes === 0) throw new StoreError("not_found", `no stored account ${JSON.stringify(id)}`);
  }

  /**
   * Records the refreshed credential of a config-file account, durably (fsync), keyed by the
   * fingerprint of the file's credential it replaces. @throws StoreError `invalid`, `closed`.
   */
  setCredentialOverride(accountId: string, baseFingerprint: string, credential: Credential): void {
    this.assertOpen();
    const cred = checkCredential(credential, accountId);
    this.durably(() => this.s.overrideUpsert.run(String(accountId), String(baseFingerprint), JSON.stringify(cred), Math.round(this.now())));
  }

  /** Every credential override (config-file accounts refreshed by the gateway). */
  listCredentialOverrides(): CredentialOverride[] {
    this.assertOpen();
    return (this.s.overrideList.all() as Array<{ account_id: string; base_fingerprint: string; credential: string }>).map((r) => ({
      accountId: r.account_id,
      baseFingerprint: r.base_fingerprint,
      credential: JSON.parse(r.credential) as Credential,
    }));
  }

  /** Forgets the override of an account. */
  clearCredentialOverride(accountId: string): void {
    this.assertOpen();
    this.s.overrideDelete.run(String(accountId));
  }

  /** Enables or disables a stored account. @throws StoreError `not_found`, `closed`. */
  setAccountDisabled(id: string, disabled: boolean): void {
    this.assertOpen();
    const changes = this.s.accountDisabled.run(disabled ? 1 : 0, Math.round(this.now()), String(id)).changes;
    if (changes === 0) throw new StoreError("not_found", `no stored account ${JSON.stringify(id)}`);
  }

  /** Deletes a stored account and its state (not quarantines). @returns false when it did not exist. */
  deleteAccount(id: string): boolean {
    this.assertOpen();
    const key = String(id);
    for (const [k, b] of this.bindBuf) if (b.accountId === key) this.bindBuf.delete(k);
    for (const [k, q] of this.quotaBuf) if (q.accountId === key) this.quotaBuf.delete(k);
    let existed = false;
    this.db
      .transaction(() => {
        existed = this.s.accountDelete.run(key).changes > 0;
        this.s.modelsDelete.run(key);
        this.s.deleteStateCooldowns.run(key);
        this.s.deleteStateLocks.run(key);
        this.s.deleteStateRemoved.run(key);
        this.s.deleteStateQuotas.run(key);
        this.s.deleteStateBindings.run(key);
      })
      .immediate();
    return existed;
  }

  /**
   * Records the models an account advertised (config or stored account); null forgets them.
   * @throws StoreError `invalid` when models is not an array of strings, `closed`.
   */
  setAccountModels(id: string, models: string[] | null): void {
    this.assertOpen();
    const key = checkId(id, "account id");
    if (models === null) {
      this.s.modelsDelete.run(key);
      return;
    }
    if (!Array.isArray(models) || models.some((m) => typeof m !== "string")) {
      throw new StoreError("invalid", `models of account ${JSON.stringify(key)} must be an array of strings`);
    }
    this.s.modelsUpsert.run(key, JSON.stringify([...new Set(models)]), Math.round(this.now()));
  }

  // ===========================================================================================
  // Account state, written through
  // ===========================================================================================

  /** Sets the cooldown of (accountId, model); committed on return. @throws StoreError `invalid`, `closed`. */
  setCooldown(c: Cooldown): void {
    this.assertOpen();
    this.s.cooldownSet.run(
      checkId(c?.accountId, "account id"),
      checkId(c.model, "model"),
      checkTime(c.until, "until"),
      String(c.reason ?? ""),
      intOr(c.level, 0),
      this.since(c.since),
    );
  }

  /** Clears one cooldown, or all of the account's when model is omitted. Committed on return. */
  clearCooldown(accountId: string, model?: string): void {
    this.assertOpen();
    if (model === undefined) this.s.cooldownClearAll.run(String(accountId));
    else this.s.cooldownClearOne.run(String(accountId), String(model));
  }

  /** Sets the whole-account lock; committed on return. @throws StoreError `invalid`, `closed`. */
  setLock(l: AccountLock): void {
    this.assertOpen();
    this.s.lockSet.run(
      checkId(l?.accountId, "account id"),
      l.until === null || l.until === undefined ? null : checkTime(l.until, "until"),
      String(l.reason ?? ""),
      this.since(l.since),
    );
  }

  /** Clears the whole-account lock. Committed on return. */
  clearLock(accountId: string): void {
    this.assertOpen();
    this.s.lockClear.run(String(accountId));
  }

  /** Removes an account/model pairing; committed on return. @throws StoreError `invalid`, `closed`. */
  removeModel(r: RemovedModel): void {
    this.assertOpen();
    this.s.removedSet.run(
      checkId(r?.accountId, "account id"),
      checkId(r.model, "model"),
      String(r.reason ?? ""),
      r.until === null || r.until === undefined ? null : checkTime(r.until, "until"),
      this.since(r.since),
    );
  }

  /** Restores one pairing, or all of the account's when model is omitted. Committed on return. */
  restoreModel(accountId: string, model?: string): void {
    this.assertOpen();
    if (model === undefined) this.s.removedClearAll.run(String(accountId));
    else this.s.removedClearOne.run(String(accountId), String(model));
  }

  /** Quarantines a credential fingerprint; committed on return. @throws StoreError `invalid`, `closed`. */
  quarantine(q: Quarantine): void {
    this.assertOpen();
    this.s.quarantineSet.run(
      checkId(q?.fingerprint, "fingerprint"),
      q.accountId ?? null,
      String(q.reason ?? ""),
      this.since(q.since),
    );
  }

  /** Lifts a quarantine. Committed on return. */
  unquarantine(fingerprint: string): void {
    this.assertOpen();
    this.s.quarantineClear.run(String(fingerprint));
  }

  /** Opens (or extends) a provider circuit; committed on return. @throws StoreError `invalid`, `closed`. */
  setCircuit(c: Circuit): void {
    this.assertOpen();
    this.s.circuitSet.run(
      checkId(c?.providerId, "provider id"),
      checkTime(c.openUntil, "openUntil"),
      c.reason ?? null,
      this.since(c.since),
    );
  }

  /** Closes a provider circuit. Committed on return. */
  clearCircuit(providerId: string): void {
    this.assertOpen();
    this.s.circuitClear.run(String(providerId));
  }

  // ===========================================================================================
  // Account state, buffered
  // ===========================================================================================

  /** Buffers a quota window (coalesced per account/window/model) for the next flush. Never throws. */
  setQuota(q: QuotaWindow): void {
    if (this.closed || !q || typeof q.accountId !== "string" || typeof q.window !== "string") return;
    const model = typeof q.model === "string" && q.model ? q.model : "*";
    const updatedAt = finiteOrUndefined(q.updatedAt) ?? this.now();
    this.quotaBuf.set(`${q.accountId}\u0000${q.window}\u0000${model}`, { ...q, model, updatedAt });
  }

  /** Buffers a conversation binding (coalesced per key) for the next flush. Never throws. */
  bind(b: Binding): void {
    if (this.closed || !b || typeof b.key !== "string" || typeof b.accountId !== "string") return;
    if (!Number.isFinite(b.expiresAt)) return;
    this.bindBuf.set(b.key, { key: b.key, accountId: b.accountId, expiresAt: b.expiresAt });
  }

  /** Drops a binding, pending or stored. Committed on return. */
  unbind(key: string): void {
    this.assertOpen();
    this.bindBuf.delete(key);
    this.s.bindClear.run(String(key));
  }

  /**
   * Flushes pending writes, deletes expired state and returns what is live (see `AccountState`).
   * @throws StoreError `closed`.
   */
  loadAccountState(): AccountState {
    this.assertOpen();
    this.flush();
    const now = Math.round(this.now());
    const staleBefore = now - QUOTA_STALE_MS;
    let state!: AccountState;
    this.db
      .transaction(() => {
        this.s.pruneCooldowns.run(now);
        this.s.pruneLocks.run(now);
        this.s.pruneRemoved.run(now);
        this.s.pruneCircuits.run(now);
        this.s.pruneQuotas.run(now, staleBefore);
        this.s.pruneBindings.run(now);
        state = {
          cooldowns: (this.s.loadCooldowns.all(now) as any[]).map((r) => ({
            accountId: r.account_id,
            model: r.model,
            until: r.until,
            reason: r.reason,
            level: r.level,
            since: r.since,
          })),
          locks: (this.s.loadLocks.all(now) as any[]).map((r) => ({
            accountId: r.account_id,
            until: r.until,
            reason: r.reason,
            since: r.since,
          })),
          removedModels: (this.s.loadRemoved.all(now) as any[]).map((r) => ({
            accountId: r.account_id,
            model: r.model,
            reason: r.reason,
            until: r.until,
            since: r.since,
          })),
          quarantined: (this.s.loadQuarantined.all() as any[]).map((r) =>
            omitUndefined({ fingerprint: r.fingerprint, accountId: r.account_id ?? undefined, reason: r.reason, since: r.since }),
          ),
          circuits: (this.s.loadCircuits.all(now) as any[]).map((r) =>
            omitUndefined({ providerId: r.provider_id, openUntil: r.open_until, reason: r.reason ?? undefined, since: r.since }),
          ),
          quotas: (this.s.loadQuotas.all(now, staleBefore) as any[]).map((r) =>
            omitUndefined({
              accountId: r.account_id,
              window: r.window,
              model: r.model,
              usedPercent: r.used_percent ?? undefined,
              remaining: r.remaining ?? undefined,
              limit: r.quota_limit ?? undefined,
              resetAt: r.reset_at ?? undefined,
              updatedAt: r.updated_at as number,
            }),
          ),
          bindings: (this.s.loadBindings.all(now) as any[]).map((r) => ({
            key: r.key,
            accountId: r.account_id,
            expiresAt: r.expires_at,
          })),
          discoveredModels: (this.s.loadModels.all() as any[]).map((r) => ({
            accountId: r.account_id,
            models: parseStringArray(r.models),
            discoveredAt: r.discovered_at,
          })),
        };
      })
      .immediate();
    return state;
  }

  // ===========================================================================================
  // Usage and traces
  // ===========================================================================================

  /** Buffers a usage row for the next flush. O(1), no I/O, never throws. */
  record(rec: UsageRecord): void {
    if (this.closed || !rec) {
      this.dropped++;
      return;
    }
    if (this.usageBuf.length >= this.maxPending) {
      this.dropped++;
      return;
    }
    this.usageBuf.push(usageParams(rec));
    if (this.usageBuf.length >= EARLY_FLUSH_AT) this.scheduleEarlyFlush();
  }

  /**
   * Buffers a route trace for the next flush, serialised now (the buffer holds one string per trace,
   * not the trace's object graph, for the GC to keep until the flush). Never throws: a trace that
   * cannot be serialised is dropped and counted.
   */
  save(trace: RouteTrace): void {
    if (this.closed || !trace || typeof trace.routeId !== "string") {
      this.dropped++;
      return;
    }
    if (this.traceBuf.length >= this.maxPending) {
      this.dropped++;
      return;
    }
    let body: string;
    try {
      body = JSON.stringify(trace);
    } catch {
      this.dropped++;
      return;
    }
    this.traceBuf.push([trace.routeId, str(trace.requestId) ?? "", intOr(trace.ts, 0), body]);
    if (this.traceBuf.length >= EARLY_FLUSH_AT) this.scheduleEarlyFlush();
  }

  /**
   * Writes every buffered usage row, trace, binding and quota window in one IMMEDIATE transaction and
   * trims the trace ring. On failure the rows stay buffered for the next attempt and the error goes to
   * `onError`; nothing is thrown. No-op once closed.
   */
  flush(): void {
    if (this.closed) return;
    if (!this.usageBuf.length && !this.traceBuf.length && !this.bindBuf.size && !this.quotaBuf.size) return;
    const usage = this.usageBuf;
    const traces = this.traceBuf;
    const binds = this.bindBuf;
    const quotas = this.quotaBuf;
    this.usageBuf = [];
    this.traceBuf = [];
    this.bindBuf = new Map();
    this.quotaBuf = new Map();
    try {
      this.db
        .transaction(() => {
          const ins = this.s.usageInsert;
          for (const r of usage) ins.run(...r);
          if (traces.length) {
            const tins = this.s.traceInsert;
            for (const row of traces) tins.run(...row);
            this.s.traceTrim.run(this.traceRingSize);
          }
          for (const b of binds.values()) this.s.bindSet.run(b.key, b.accountId, Math.round(b.expiresAt));
          for (const q of quotas.values()) {
            this.s.quotaSet.run(
              q.accountId,
              q.window,
              q.model,
              finiteOrNull(q.usedPercent),
              finiteOrNull(q.remaining),
              finiteOrNull(q.limit),
              intOrNull(q.resetAt),
              Math.round(q.updatedAt),
            );
          }
        })
        .immediate();
      this.lastFlushAt = this.now();
    } catch (err) {
      this.flushErrors++;
      // Put everything back (older first), bounded; newer calls made meanwhile cannot exist (sync).
      this.usageBuf = usage.length > this.maxPending ? usage.slice(0, this.maxPending) : usage;
      this.dropped += usage.length - this.usageBuf.length;
      this.traceBuf = traces.length > this.maxPending ? traces.slice(0, this.maxPending) : traces;
      this.dropped += traces.length - this.traceBuf.length;
      this.bindBuf = binds;
      this.quotaBuf = quotas;
      this.onError(`flush of ${usage.length} usage rows and ${traces.length} traces failed: ${errMessage(err)}`, err);
    }
  }

  /**
   * Usage per group since `sinceMs` (and before `untilMs`), most requests first.
   * @throws StoreError `invalid` for an unknown `by`, `closed`.
   */
  usageSummary(q: UsageQuery): UsageSummaryRow[] {
    this.assertOpen();
    const col = GROUP_COLUMNS[q?.by];
    if (!col) throw new StoreError("invalid", `usage summary: unknown grouping ${JSON.stringify(q?.by)}`);
    this.flush();
    let stmt = this.summaryStmts.get(col);
    if (!stmt) {
      stmt = this.db.prepare(
        `SELECT ${col} AS grp, COUNT(*) AS requests,
           SUM(outcome IN ('error', 'upstream_error', 'rejected')) AS errors,
           SUM(outcome = 'client_closed') AS client_closed,
           SUM(estimated) AS estimated,
           SUM(fallback) AS fallbacks,
           COALESCE(SUM(input_tokens), 0) AS input_tokens,
           COALESCE(SUM(output_tokens), 0) AS output_tokens,
           COALESCE(SUM(cache_read_tokens), 0) AS cache_read_tokens,
           COALESCE(SUM(cache_write_tokens), 0) AS cache_write_tokens,
           COALESCE(SUM(reasoning_tokens), 0) AS reasoning_tokens,
           AVG(total_ms) AS avg_total_ms,
           AVG(ttfb_ms) AS avg_ttfb_ms
         FROM usage WHERE ts >= ? AND ts < ?
         GROUP BY ${col} ORDER BY requests DESC, grp`,
      );
      this.summaryStmts.set(col, stmt);
    }
    const since = Math.floor(Number(q.sinceMs) || 0);
    const until = q.untilMs === undefined ? Number.MAX_SAFE_INTEGER : Math.floor(Number(q.untilMs));
    return (stmt.all(since, until) as any[]).map((r) => ({
      group: r.grp ?? null,
      requests: r.requests,
      errors: r.errors ?? 0,
      clientClosed: r.client_closed ?? 0,
      estimated: r.estimated ?? 0,
      fallbacks: r.fallbacks ?? 0,
      inputTokens: r.input_tokens,
      outputTokens: r.output_tokens,
      cacheReadTokens: r.cache_read_tokens,
      cacheWriteTokens: r.cache_write_tokens,
      reasoningTokens: r.reasoning_tokens,
      avgTotalMs: r.avg_total_ms ?? 0,
      avgTtfbMs: r.avg_ttfb_ms ?? null,
    }));
  }

  /** The `limit` (1–10,000) most recent requests, newest first. @throws StoreError `closed`. */
  recentCalls(limit: number): CallRow[] {
    this.assertOpen();
    this.flush();
    return (this.s.usageRecent.all(clampLimit(limit)) as UsageRow[]).map(rowToCall);
  }

  /** The trace with this route id, else the newest with this request id. @throws StoreError `closed`. */
  getTrace(id: string): RouteTrace | undefined {
    this.assertOpen();
    this.flush();
    const row = (this.s.traceByRoute.get(String(id)) ?? this.s.traceByRequest.get(String(id))) as {
      body: string;
    } | null;
    return row ? (JSON.parse(row.body) as RouteTrace) : undefined;
  }

  /** The `limit` (1–10,000) most recent traces, newest first. @throws StoreError `closed`. */
  recentTraces(limit: number): RouteTrace[] {
    this.assertOpen();
    this.flush();
    return (this.s.traceRecent.all(clampLimit(limit)) as { body: string }[]).map((r) => JSON.parse(r.body));
  }

  /** Deletes usage rows with `ts` < beforeMs. @returns rows deleted. @throws StoreError `closed`. */
  pruneUsage(beforeMs: number): number {
    this.assertOpen();
    this.flush();
    return this.s.usagePrune.run(Math.floor(Number(beforeMs))).changes;
  }

  // ===========================================================================================
  // Lifecycle
  // ===========================================================================================

  /** Buffer and flush counters. */
  stats(): StoreStats {
    return {
      pendingUsage: this.usageBuf.length,
      pendingTraces: this.traceBuf.length,
      dropped: this.dropped,
      flushErrors: this.flushErrors,
      lastFlushAt: this.lastFlushAt,
    };
  }

  /** True when `SELECT 1` succeeds; false when closed or failing. Never throws. */
  health(): boolean {
    if (this.closed) return false;
    try {
      return (this.s.health.get() as { ok: number } | null)?.ok === 1;
    } catch {
      return false;
    }
  }

  /** Flushes, checkpoints (truncating the WAL) and closes. Idempotent; never throws for a flush failure. */
  close(): void {
    if (this.closed) return;
    clearInterval(this.timer);
    this.flush();
    this.dropped += this.usageBuf.length + this.traceBuf.length;
    this.usageBuf = [];
    this.traceBuf = [];
    this.bindBuf.clear();
    this.quotaBuf.clear();
    this.closed = true;
    openStores.delete(this);
    try {
      this.db.run("PRAGMA wal_checkpoint(TRUNCATE)");
    } catch (err) {
      this.onError(`checkpoint at close failed: ${errMessage(err)}`, err);
    }
    for (const stmt of this.summaryStmts.values()) stmt.finalize();
    for (const stmt of Object.values(this.s)) stmt.finalize();
    this.db.close(false);
  }

  // ===========================================================================================
  // Internals
  // ===========================================================================================

  private tick(): void {
    if (this.closed) return;
    this.flush();
    try {
      // data_version changes when another connection (another process) commits: refresh the key cache.
      const v = (this.s.dataVersion.get() as { data_version: number }).data_version;
      if (v !== this.dataVersion) this.reloadKeys();
    } catch (err) {
      this.onError(`key refresh failed: ${errMessage(err)}`, err);
    }
  }

  private scheduleEarlyFlush(): void {
    if (this.earlyFlushScheduled) return;
    this.earlyFlushScheduled = true;
    setTimeout(() => {
      this.earlyFlushScheduled = false;
      this.flush();
    }, 0);
  }

  private durably<T>(fn: () => T): T {
    this.db.run("PRAGMA synchronous = FULL");
    try {
      return fn();
    } finally {
      this.db.run("PRAGMA synchronous = NORMAL");
    }
  }

  private since(v: number | undefined): number {
    return Math.round(finiteOrUndefined(v) ?? this.now());
  }

  private assertOpen(): void {
    if (this.closed) throw new StoreError("closed", "the store is closed");
  }
}

// ---------------------------------------------------------------------------------------------
// File handling
// ---------------------------------------------------------------------------------------------

/** Creates the parent directory (0700) and the database file (0600) before SQLite opens it. */
function prepareFile(path: string): void {
  const dir = dirname(path);
  if (!existsSync(dir)) mkdirSync(dir, { recursive: true, mode: 0o700 });
  closeSync(openSync(path, "a", 0o600));
  chmodSync(path, 0o600);
}

/**
 * Sets 0600 on the database file and its -wal/-shm companions. SQLite creates the companions with the
 * database file's mode, so this only repairs files left by an older, looser setup.
 */
function tightenModes(path: string): void {
  for (const p of [path, `${path}-wal`, `${path}-shm`]) {
    try {
      chmodSync(p, 0o600);
    } catch {
      // absent: fine
    }
  }
}

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on("beforeExit", () => {
    for (const store of openStores) store.flush();
  });
}

// ---------------------------------------------------------------------------------------------
// Validation and conversion
// ---------------------------------------------------------------------------------------------

function checkName(name: unknown): string {
  if (typeof name !== "string" || name.trim().length === 0) throw new StoreError("invalid", "key name must be a non-empty string");
  if (name.length > MAX_NAME_LENGTH) throw new StoreError("invalid", `key name is longer than ${MAX_NAME_LENGTH} characters`);
  // biome-ignore lint/suspicious/noControlCharactersInRegex: rejecting control characters on purpose
  if (/[\u0000-\u001f\u007f]/.test(name)) throw new StoreError("invalid", "key name contains control characters");
  return name;
}

function checkScopes(scopes: unknown): string[] {
  if (scopes === undefined || scopes === null) return [];
  if (!Array.isArray(scopes) || scopes.some((s) => typeof s !== "string" || s.length === 0)) {
    throw new StoreError("invalid", "scopes must be an array of non-empty strings");
  }
  return [...new Set(scopes as string[])];
}

function checkTag(tag: unknown): string | undefined {
  if (tag === undefined || tag === null || tag === "") return undefined;
  if (typeof tag !== "string") throw new StoreError("invalid", "tag must be a string");
  return tag;
}

function checkId(v: unknown, what: string): string {
  if (typeof v !== "string" || v.length === 0) throw new StoreError("invalid", `${what} must be a non-empty string`);
  return v;
}

function checkTime(v: unknown, what: string): number {
  if (typeof v !== "number" || !Number.isFinite(v)) throw new StoreError("invalid", `${what} must be a time in ms since the epoch`);
  return Math.round(v);
}

function checkCredential(c: unknown, accountId: string): Credential {
  const t = (c as { type?: unknown } | null)?.type;
  if (t !== "api_key" && t !== "oauth" && t !== "none") {
    throw new StoreError("invalid", `credential of account ${JSON.stringify(accountId)} has no valid type`);
  }
  return c as Credential;
}

function freezeKey(k: ClientKey): ClientKey {
  const key: ClientKey = { name: k.name, scopes: Object.freeze([...k.scopes]) as string[], source: k.source };
  if (k.tag !== undefined) key.tag = k.tag;
  return Object.freeze(key);
}

function parseScopes(json: string): string[] {
  return parseStringArray(json);
}

function parseStringArray(json: string | null): string[] {
  if (!json) return [];
  try {
    const v = JSON.parse(json);
    return Array.isArray(v) ? v.filter((s): s is string => typeof s === "string") : [];
  } catch {
    return [];
  }
}

function rowToAccount(r: AccountRow): Account {
  let credential: Credential;
  try {
    credential = JSON.parse(r.credential) as Credential;
  } catch {
    // Never echo the parser's message: it may quote part of a token.
    throw new StoreError("invalid", `stored credential of account ${JSON.stringify(r.id)} is not valid JSON`);
  }
  const a: Account = {
    id: r.id,
    providerId: r.provider_id,
    priority: r.priority,
    credential,
    disabled: r.disabled !== 0,
    source: "db",
  };
  if (r.max_concurrency !== null) a.maxConcurrency = r.max_concurrency;
  if (r.proxy !== null) a.proxy = r.proxy;
  if (r.models !== null) a.models = parseStringArray(r.models);
  return a;
}

/** Positional parameters of `usageInsert`. */
type UsageParams = (string | number | null)[];
/** Positional parameters of `traceInsert`: route id, request id, ts (ms), JSON body. */
type TraceParams = [string, string, number, string];

/** Positional parameters of `usageInsert`, coerced so a malformed record cannot fail the batch. */
function usageParams(r: UsageRecord): UsageParams {
  const u = r.usage ?? {};
  return [
    str(r.requestId) ?? "",
    intOr(r.ts, 0),
    str(r.clientFormat) ?? "",
    str(r.requestedModel) ?? "",
    str(r.providerId),
    str(r.model),
    str(r.accountId),
    str(r.keyName),
    intOrNull(u.inputTokens),
    intOrNull(u.outputTokens),
    intOrNull(u.cacheReadTokens),
    intOrNull(u.cacheWriteTokens),
    intOrNull(u.reasoningTokens),
    r.estimated ? 1 : 0,
    str(r.outcome) ?? "error",
    intOr(r.status, 0),
    intOrNull(r.ttfbMs),
    intOr(r.totalMs, 0),
    intOr(r.attempts, 0),
    r.fallback ? 1 : 0,
  ];
}

function rowToCall(r: UsageRow): CallRow {
  const usage: CallRow["usage"] = {};
  if (r.input_tokens !== null) usage.inputTokens = r.input_tokens;
  if (r.output_tokens !== null) usage.outputTokens = r.output_tokens;
  if (r.cache_read_tokens !== null) usage.cacheReadTokens = r.cache_read_tokens;
  if (r.cache_write_tokens !== null) usage.cacheWriteTokens = r.cache_write_tokens;
  if (r.reasoning_tokens !== null) usage.reasoningTokens = r.reasoning_tokens;
  const c: CallRow = {
    requestId: r.request_id,
    ts: r.ts,
    clientFormat: r.client_format as CallRow["clientFormat"],
    requestedModel: r.requested_model,
    usage,
    estimated: r.estimated !== 0,
    outcome: r.outcome as CallRow["outcome"],
    status: r.status,
    totalMs: r.total_ms,
    attempts: r.attempts,
    fallback: r.fallback !== 0,
  };
  if (r.provider_id !== null) c.providerId = r.provider_id;
  if (r.model !== null) c.model = r.model;
  if (r.account_id !== null) c.accountId = r.account_id;
  if (r.key_name !== null) c.keyName = r.key_name;
  if (r.ttfb_ms !== null) c.ttfbMs = r.ttfb_ms;
  if (r.route_id) c.routeId = r.route_id;
  return c;
}

function str(v: unknown): string | null {
  if (v === undefined || v === null) return null;
  return typeof v === "string" ? v : String(v);
}

function intOr(v: unknown, dflt: number): number {
  return typeof v === "number" && Number.isFinite(v) ? Math.round(v) : dflt;
}

function intOrNull(v: unknown): number | null {
  return typeof v === "number" && Number.isFinite(v) ? Math.round(v) : null;
}

function finiteOrNull(v: unknown): number | null {
  return typeof v === "number" && Number.isFinite(v) ? v : null;
}

function finiteOrUndefined(v: unknown): number | undefined {
  return typeof v === "number" && Number.isFinite(v) ? v : undefined;
}

function clampLimit(limit: number): number {
  const n = Math.floor(Number(limit));
  return Number.isFinite(n) ? Math.min(10_000, Math.max(1, n)) : 50;
}

function errMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function omitUndefined<T extends object>(o: T): T {
  for (const k of Object.keys(o) as (keyof T)[]) if (o[k] === undefined) delete o[k];
  return o;
}
