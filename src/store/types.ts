/**
 * The storage port of switchyard (SPEC D-2): everything the gateway keeps across restarts, behind one
 * interface so the embedded SQLite backend (`./sqlite.ts`) can later be joined by a PostgreSQL backend
 * that several instances share.
 *
 * Conventions for every backend:
 * - Times are milliseconds since the epoch (`number`), durations milliseconds.
 * - Methods typed `Awaitable<T>` may return `T` (SQLite, synchronous) or `Promise<T>` (a network
 *   backend). Callers that hold a `Store` always `await` them; code that holds the concrete SQLite
 *   store may use the values directly.
 * - The hot-path methods (`lookup`, `any`, `record`, `save`, `bind`, `setQuota`) are synchronous,
 *   never touch the disk or the network, and never throw: `lookup` reads an in-memory cache, the
 *   others append to a buffer that a timer flushes in one transaction (SPEC D-1).
 * - Account state that routing depends on (cooldowns, locks, removed pairings, quarantined
 *   credentials, circuits) is written through at once: when the method returns (or its promise
 *   resolves) the row is committed (SPEC 6.3).
 * - Errors thrown are `StoreError`s with a machine-readable `code`; messages never contain secrets.
 */
import type {
  Account,
  ClientKey,
  Credential,
  KeyLookup,
  RouteTrace,
  TraceSink,
  UsageRecord,
  UsageSink,
} from "../../pipeline/ports.ts";

/** A value or a promise of it: synchronous backends return the value, network backends a promise. */
export type Awaitable<T> = T | Promise<T>;

// ---------------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------------

/**
 * Why a store call failed:
 * - `conflict`: the name is taken (e.g. an active client key with that name exists);
 * - `not_found`: no such key/account;
 * - `read_only`: the object comes from the config file and cannot be changed through the store;
 * - `invalid`: a malformed argument (empty name, non-string scope, …);
 * - `closed`: the store was closed;
 * - `schema`: the database was written by a newer build (unknown migration version).
 */
export type StoreErrorCode = "conflict" | "not_found" | "read_only" | "invalid" | "closed" | "schema";

/** An expected store failure. The message names the object (key name, account id), never a secret. */
export class StoreError extends Error {
  override readonly name = "StoreError";
  constructor(
    readonly code: StoreErrorCode,
    message: string,
  ) {
    super(message);
  }
}

// ---------------------------------------------------------------------------------------------
// Client keys
// ---------------------------------------------------------------------------------------------

/** A client key declared in the config file (SPEC 2.3 `keys:`), secret already resolved from env/file. */
export interface ConfigKey {
  name: string;
  /** The secret as the client presents it. Only its SHA-256 is kept, in memory. */
  secret: string;
  /** Defaults to []. */
  scopes?: string[];
  tag?: string;
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
  scopes: string[];
  tag?: string;
  source: "config" | "db";
  /** ms since the epoch; absent for config keys. */
  createdAt?: number;
  /** ms since the epoch when revoked; absent while the key is active (always absent for config keys). */
  revokedAt?: number;
}

// ---------------------------------------------------------------------------------------------
// Accounts
// ---------------------------------------------------------------------------------------------

/** An account to create or replace; `source` is ignored (stored accounts are always `db`). */
export type AccountInput = Omit<Account, "source" | "models"> & { source?: Account["source"] };

// ---------------------------------------------------------------------------------------------
// Account state (SPEC 5.3, 6.3, 7)
// ---------------------------------------------------------------------------------------------

/** A config-file account's credential after a refresh by the gateway. */
export interface CredentialOverride {
  accountId: string;
  /** Hex SHA-256 of the access token the file held when the refresh happened. */
  baseFingerprint: string;
  credential: Credential;
}

/** Model name used for a cooldown, quota window or pairing that covers every model of the account. */
export const ALL_MODELS = "*";

/** A cooldown of one account for one model, or for all its models (`model: "*"`). */
export interface Cooldown {
  accountId: string;
  /** Upstream model id, or `"*"` (ALL_MODELS) for the whole account. */
  model: string;
  /** ms since the epoch when the account may be picked again. */
  until: number;
  /** Classification row / human-readable reason, no secrets (e.g. "429 rate limit"). */
  reason: string;
  /** Exponential-backoff step (0 = first cooldown), so the next failure can double the wait. */
  level: number;
  /** ms since the epoch when the cooldown was set; filled in by the store when omitted. */
  since?: number;
}

/** A lock of the whole account (quota exhausted, spend cap, ban, 402). */
export interface AccountLock {
  accountId: string;
  /** ms since the epoch when the lock ends, or null = until changed (cleared or credential replaced). */
  until: number | null;
  reason: string;
  /** ms since the epoch; filled in by the store when omitted. */
  since?: number;
}

/** An account/model pairing removed after a model-scoped 403 / 404 (SPEC 6.3). */
export interface RemovedModel {
  accountId: string;
  model: string;
  reason: string;
  /** ms since the epoch when the pairing may be tried again, or null = until restored. */
  until: number | null;
  /** ms since the epoch; filled in by the store when omitted. */
  since?: number;
}

/** A credential rejected after refresh, quarantined by fingerprint until replaced (SPEC 6.3, P-7). */
export interface Quarantine {
  /** `credentialFingerprint()`: hex SHA-256 of the refresh token (OAuth) or the API key. */
  fingerprint: string;
  /** The account that held it, for display. */
  accountId?: string;
  reason: string;
  /** ms since the epoch; filled in by the store when omitted. */
  since?: number;
}

/** A provider circuit that is open (SPEC 6.3: 10 consecutive 5xx → open for 5 min, then half-open). */
export interface Circuit {
  providerId: string;
  /** ms since the epoch when the circuit turns half-open. */
  openUntil: number;
  reason?: string;
  /** ms since the epoch; filled in by the store when omitted. */
  since?: number;
}

/** One quota window read from a provider's rate-limit headers (SPEC P-5). */
export interface QuotaWindow {
  accountId: string;
  /** The provider's window name, e.g. "requests", "tokens", "5h", "weekly". */
  window: string;
  /** Upstream model id this window applies to, or `"*"` for every model of the account. */
  model: string;
  /** 0–100, when the provider reports usage as a percentage. */
  usedPercent?: number;
  /** Remaining units (requests or tokens) when the provider reports them. */
  remaining?: number;
  /** The window's size in the same units as `remaining`, when known. */
  limit?: number;
  /** ms since the epoch when the window resets; the row is dropped after that. */
  resetAt?: number;
  /** ms since the epoch of the response it was read from; filled in by the store when omitted. */
  updatedAt?: number;
}

/** A conversation bound to the account that last answered it successfully (SPEC A-2). */
export interface Binding {
  /** Conversation fingerprint or explicit session id (opaque to the store). */
  key: string;
  accountId: string;
  /** ms since the epoch when the binding lapses (15 min after the success). */
  expiresAt: number;
}

/** Models an account advertised through discovery (SPEC P-6); for config and db accounts alike. */
export interface DiscoveredModels {
  accountId: string;
  models: string[];
  /** ms since the epoch */
  discoveredAt: number;
}

/**
 * Every piece of live account state, as plain objects, without expired rows
 * (cooldowns, locks, pairings, circuits past `until`; quota windows past `resetAt`; bindings past
 * `expiresAt`). All optional fields the store fills in (`since`, `updatedAt`) are present.
 */
export interface AccountState {
  cooldowns: Required<Cooldown>[];
  locks: Required<AccountLock>[];
  removedModels: Required<RemovedModel>[];
  quarantined: (Required<Omit<Quarantine, "accountId">> & { accountId?: string })[];
  circuits: (Required<Omit<Circuit, "reason">> & { reason?: string })[];
  quotas: (QuotaWindow & { updatedAt: number })[];
  bindings: Binding[];
  discoveredModels: DiscoveredModels[];
}

// ---------------------------------------------------------------------------------------------
// Usage and traces
// ---------------------------------------------------------------------------------------------

/** Grouping of `usageSummary`. */
export type UsageGroupBy = "model" | "account" | "key" | "provider";

/** Query of `usageSummary`. */
export interface UsageQuery {
  /** Only requests that arrived at or after this time (ms since the epoch). */
  sinceMs: number;
  /** Only requests that arrived before this time (ms since the epoch); default: no upper bound. */
  untilMs?: number;
  by: UsageGroupBy;
}

/** One group of `usageSummary`. Token sums count only what providers reported (unknown = 0). */
export interface UsageSummaryRow {
  /** The model / account id / key name / provider id, or null for requests without one (e.g. rejected). */
  group: string | null;
  requests: number;
  /** Requests whose outcome was `error`, `upstream_error` or `rejected`. */
  errors: number;
  /** Requests the client abandoned (`client_closed`). */
  clientClosed: number;
  /** Requests whose token counts are estimates (provider gave no usage). */
  estimated: number;
  /** Requests served after a fallback. */
  fallbacks: number;
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  reasoningTokens: number;
  /** Mean ms from arrival to end of response. */
  avgTotalMs: number;
  /** Mean ms to first byte over requests that have one; null when none did. */
  avgTtfbMs: number | null;
}

/** A row of `calls list`: the usage record plus the route id of its trace when one is stored. */
export interface CallRow extends UsageRecord {
  routeId?: string;
}

/** Counters for /metrics and diagnostics. */
export interface StoreStats {
  /** Usage records waiting for the next flush. */
  pendingUsage: number;
  /** Route traces waiting for the next flush. */
  pendingTraces: number;
  /** Records/traces dropped because the buffer overflowed while flushes failed, or after close. */
  dropped: number;
  /** Flushes that failed (their rows were kept for the next one). */
  flushErrors: number;
  /** ms since the epoch of the last successful flush that wrote something; 0 = never. */
  lastFlushAt: number;
}

// ---------------------------------------------------------------------------------------------
// The store
// ---------------------------------------------------------------------------------------------

/**
 * Persistent state of the gateway. Implementations: `openSqliteStore` (embedded, default).
 * See the module comment for the conventions (units, awaiting, write-through vs buffered, errors).
 */
export interface Store extends KeyLookup, UsageSink, TraceSink {
  // -- client keys (SPEC G-2, 2.2 `keys …`) ---------------------------------------------------

  /**
   * Replaces the set of keys declared in the config file. They are hashed and held in memory only,
   * never written, and are looked up with `source: "config"`. Call again on every config reload.
   * @throws StoreError `invalid` when a name or secret is empty or two config keys share a name.
   */
  setConfigKeys(keys: ConfigKey[]): void;

  /**
   * Creates a client key and returns its secret, the only time it is visible (only its SHA-256 is
   * stored). A revoked key of the same name is replaced.
   * @throws StoreError `conflict` when an active key of that name exists, `read_only` when a config key
   *   has that name, `invalid` for an empty/oversized name or non-string scopes.
   */
  createKey(name: string, scopes?: string[], tag?: string): Awaitable<CreatedKey>;

  /** All keys, config and stored, active and revoked, by name; never secrets or hashes. */
  listKeys(): Awaitable<KeyInfo[]>;

  /**
   * Revokes the stored key of that name; `lookup` rejects it from the moment this returns.
   * @returns false when no active stored key has that name.
   * @throws StoreError `read_only` when the name belongs to a config key.
   */
  revokeKey(name: string): Awaitable<boolean>;

  /** Re-reads stored keys into the lookup cache (picks up changes made by other instances). */
  refreshKeys(): Awaitable<void>;

  // -- accounts (SPEC A-1, P-6, P-7, P-9) -------------------------------------------------------

  /** Accounts created through the CLI, admin API or login (source `db`), by priority then id. */
  listAccounts(): Awaitable<Account[]>;

  /** One stored account, or undefined. */
  getAccount(id: string): Awaitable<Account | undefined>;

  /**
   * Creates or replaces a stored account (durably: the credential survives a power loss once this
   * returns). Discovered models are kept. @throws StoreError `invalid` for an empty id or provider.
   */
  upsertAccount(account: AccountInput): Awaitable<void>;

  /**
   * Replaces an account's credential (OAuth refresh). Durable before it returns/resolves, so a rotated
   * refresh token is never lost (SPEC P-7). @throws StoreError `not_found`.
   */
  updateCredential(id: string, credential: Credential): Awaitable<void>;

  /**
   * Records the refreshed credential of a config-file account, durably, keyed by the fingerprint of the
   * file's credential it replaces (SPEC P-7); it applies only while the file still holds that credential.
   */
  setCredentialOverride(accountId: string, baseFingerprint: string, credential: Credential): Awaitable<void>;
  /** Every credential override of config-file accounts. */
  listCredentialOverrides(): Awaitable<CredentialOverride[]>;
  /** Forgets the override of an account. */
  clearCredentialOverride(accountId: string): Awaitable<void>;

  /** Enables or disables a stored account. @throws StoreError `not_found`. */
  setAccountDisabled(id: string, disabled: boolean): Awaitable<void>;

  /**
   * Deletes a stored account together with its account state (cooldowns, locks, pairings, quotas,
   * bindings, discovered models). Quarantined fingerprints are kept. @returns false when absent.
   */
  deleteAccount(id: string): Awaitable<boolean>;

  /**
   * Records the models an account (config or stored) advertised through discovery (SPEC P-6);
   * null forgets them (= not discovered).
   */
  setAccountModels(id: string, models: string[] | null): Awaitable<void>;

  // -- account state, written through (SPEC 6.3) ------------------------------------------------

  /** Sets (replaces) the cooldown of (accountId, model). */
  setCooldown(cooldown: Cooldown): Awaitable<void>;
  /** Clears the cooldown of (accountId, model), or every cooldown of the account when model is omitted. */
  clearCooldown(accountId: string, model?: string): Awaitable<void>;
  /** Sets (replaces) the whole-account lock. */
  setLock(lock: AccountLock): Awaitable<void>;
  /** Clears the whole-account lock. */
  clearLock(accountId: string): Awaitable<void>;
  /** Removes an account/model pairing. */
  removeModel(removed: RemovedModel): Awaitable<void>;
  /** Restores one pairing, or every removed pairing of the account when model is omitted. */
  restoreModel(accountId: string, model?: string): Awaitable<void>;
  /** Quarantines a credential fingerprint until `unquarantine`. */
  quarantine(q: Quarantine): Awaitable<void>;
  /** Lifts a quarantine (a new login replaced the credential). */
  unquarantine(fingerprint: string): Awaitable<void>;
  /** Opens (or extends) a provider circuit. */
  setCircuit(circuit: Circuit): Awaitable<void>;
  /** Closes a provider circuit. */
  clearCircuit(providerId: string): Awaitable<void>;

  // -- account state, buffered (per-request writes; flushed with usage) -------------------------

  /**
   * Stores a quota window (replacing the one with the same account, window and model). Buffered and
   * coalesced: called on every response, written at the next flush.
   */
  setQuota(q: QuotaWindow): void;
  /**
   * Binds a conversation to an account (SPEC A-2; only after a success). Buffered and coalesced per
   * key: called on every success, written at the next flush. A crash loses at most one flush interval
   * of bindings, which costs only cache warmth.
   */
  bind(binding: Binding): void;
  /** Drops a binding (also a pending one). Written through. */
  unbind(key: string): Awaitable<void>;

  /**
   * Loads all live account state (expired rows are left out and deleted). Used at start and by the
   * periodic account re-read (SPEC A-1). Pending buffered writes are flushed first.
   */
  loadAccountState(): Awaitable<AccountState>;

  // -- usage and traces (SPEC O-1, O-2, D-1) ----------------------------------------------------

  /** Appends a usage row to the write buffer. Never blocks, never throws. */
  record(rec: UsageRecord): void;
  /** Appends a route trace to the write buffer (kept in a bounded ring). Never blocks, never throws. */
  save(trace: RouteTrace): void;

  /** Writes every buffered row now, in one transaction. Flush failures are counted, not thrown. */
  flush(): Awaitable<void>;

  /** Usage per group since a time, most requests first (pending rows are flushed first). */
  usageSummary(q: UsageQuery): Awaitable<UsageSummaryRow[]>;
  /** The most recent requests, newest first (pending rows are flushed first). */
  recentCalls(limit: number): Awaitable<CallRow[]>;
  /** The trace with this route id (`sy_…`), or else the newest trace with this request id. */
  getTrace(id: string): Awaitable<RouteTrace | undefined>;
  /** The most recent traces, newest first. */
  recentTraces(limit: number): Awaitable<RouteTrace[]>;
  /** Deletes usage rows older than `beforeMs` (ms since the epoch). @returns rows deleted. */
  pruneUsage(beforeMs: number): Awaitable<number>;

  // -- lifecycle -------------------------------------------------------------------------------

  /** Buffer and flush counters (for /metrics). */
  stats(): StoreStats;
  /** True when the backend answers a trivial query (GET /health readiness). Never throws. */
  health(): Awaitable<boolean>;
  /**
   * Flushes buffered rows, checkpoints and closes. Idempotent. Afterwards `record`/`save` drop
   * silently (counted in `stats().dropped`), `lookup` still answers from memory, queries throw
   * StoreError `closed`.
   */
  close(): Awaitable<void>;
}
