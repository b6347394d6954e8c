/**
 * The storage port of switchyard (SPEC D-2): everything the gateway keeps across restarts, behind one
 * interface so the embedded SQLite backend (`./sqlite/`) can be joined by a PostgreSQL backend
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
import type { AccountStateStore } from "./account-state.ts";
import type { AccountStore } from "./accounts.ts";
import type { KeyStore } from "./keys.ts";
import type { SessionStore } from "./sessions.ts";
import type { SharedStore } from "./shared.ts";
import type { RoutingObjectStore } from "./routing-objects.ts";
import type { StoreStats, UsageStore } from "./usage.ts";

export * from "./account-state.ts";
export * from "./accounts.ts";
export * from "./keys.ts";
export * from "./sessions.ts";
export * from "./shared.ts";
export * from "./usage.ts";
export * from "./routing-objects.ts";

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
 * - `schema`: the database was written by a newer build (unknown migration version);
 * - `unavailable`: a shared database (PostgreSQL) cannot be reached right now; the instance serves from
 *   memory and catches up when it returns (SPEC D-2);
 * - `rejected`: a shared database (PostgreSQL) refused a change made by hand (a trigger, a constraint, or a
 *   transient refusal still failing at the last try): the message names the change, the SQLSTATE and the
 *   database's message (src/accounts/shared-state-writes.ts `refusedChangeError`).
 */
export type StoreErrorCode = "conflict" | "not_found" | "read_only" | "invalid" | "closed" | "schema" | "unavailable" | "rejected";

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
// The store
// ---------------------------------------------------------------------------------------------

/**
 * Persistent state of the gateway, one interface per role (SPEC D-2): client keys (`./keys.ts`),
 * accounts (`./accounts.ts`), account state (`./account-state.ts`), usage and traces (`./usage.ts`),
 * coordination between instances (`./shared.ts`), dashboard sessions (`./sessions.ts`), plus the lifecycle below. Implementations:
 * `openSqliteStore` (embedded, default) and `openPostgresStore` (several instances on one database).
 * See the module comment for the conventions (units, awaiting, write-through vs buffered, errors).
 */
/**
 * A schema upgrade that opening the store applied to a database an earlier build wrote: from and to
 * schema versions, and for the embedded SQLite file the copy of it made just before (an earlier build
 * refuses a newer schema, so the copy is the way back to it). Absent for a new or current database.
 */
export interface SchemaUpgrade {
  from: number;
  to: number;
  /** Absolute path of the file's copy as it was before the upgrade (SQLite only). */
  backup?: string;
  /** The names of the schema steps applied, in order (PostgreSQL only: what an earlier instance still running does without). */
  steps?: string[];
}

export interface Store extends KeyStore, AccountStore, AccountStateStore, UsageStore, SharedStore, RoutingObjectStore, SessionStore {
  /** The schema upgrade this open applied ({@link SchemaUpgrade}); undefined when there was none. */
  readonly upgrade?: SchemaUpgrade;
  /** Buffer and flush counters (for /metrics). */
  stats(): StoreStats;
  /**
   * How many route traces the store keeps (SPEC O-2, `settings.trace_ring_size`; at least 1), from its
   * next flush on: the ring is trimmed to it then. Set at open (`traceRingSize`) and again on every
   * configuration change, the admin API's stored settings too.
   */
  setTraceRingSize(n: number): void;
  /** True when the backend answers a trivial query (GET /health readiness). Never throws. */
  health(): Awaitable<boolean>;
  /**
   * The embedded store only: whether its last flush failed (a full disk, a read-only file) while its
   * queries answer; its rows wait in memory until a flush works (GET /health: `db: "failing"`). Never throws.
   */
  writesFailing?(): boolean;
  /**
   * Flushes buffered rows, checkpoints and closes. Idempotent. Afterwards `record`/`save` drop
   * silently (counted in `stats().dropped`), `lookup` still answers from memory, queries throw
   * StoreError `closed`.
   * @param until ms since the epoch (the end of a shutdown's grace period), or a function answering it
   *   (a second signal moves it to now): a store whose database is away keeps trying its last flush until
   *   then (PostgreSQL; SQLite writes at once)
   * @returns what could not be written by then (PostgreSQL): kept on disk for the next start, or lost
   *   when that failed; undefined when everything was written
   */
  close(until?: number | (() => number)): Awaitable<UnwrittenAtClose | undefined | void>;
}

/**
 * What a store's {@link Store.close} could not write before it gave up (try20 D2): counts, never
 * contents. `usage`, `traces`, `state` and `keyUse` are lost (neither written nor kept; usage rows and
 * traces are counted in `stats().dropped` too); `kept` is what waits on disk for the next start instead.
 */
export interface UnwrittenAtClose {
  usage: number;
  traces: number;
  /** Bindings, quota windows and client keys' budget windows. */
  state: number;
  /** Key budget windows whose use a stop could not report (`SharedStore.keepUnreportedUse`). */
  keyUse: number;
  /**
   * Why they were not written, after "stopping while": default "the database is away" (PostgreSQL, whose
   * close retries within the shutdown grace period); SQLite's names its file ("writes to PATH fail"), and
   * its close does not wait (the stop's line then names no grace period).
   */
  while?: string;
  /**
   * Usage rows and route traces refused earlier, while the store's writes failed (a full disk, PostgreSQL
   * away or refusing them), at its cap of rows waiting (the newest; lost then, counted in
   * `stats().dropped` then), since it was opened; `while` says where, after "refused" ("at the store's
   * cap of 100,000 waiting rows of each while writes to PATH failed", "… to PostgreSQL failed";
   * src/store/refused-rows.ts). Lost as the others: the stop exits 1.
   */
  refused?: { usage: number; traces: number; while: string };
  /** Rows kept in `file` (absolute path, in the data directory), which the next start writes to the database (and the key budget use it counts back). */
  kept?: { file: string; usage: number; traces: number; state: number; keyUse: number };
}
