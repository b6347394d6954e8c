/**
 * The embedded store (SPEC D-1): bun:sqlite in WAL mode with `synchronous=NORMAL`, one object made of
 * the four roles of `Store` (client keys, accounts, account state, usage and traces; one file each in
 * this folder) over one connection.
 *
 * - Hot path (`lookup`, `any`, `record`, `save`, `bind`, `setQuota`): memory only. Usage rows, traces,
 *   bindings, quota windows and changed key budget windows (`writeKeyBudgetsWithFlush`) are buffered
 *   and written in ONE transaction by an unref'd timer at least
 *   every `flushIntervalMs`, as soon as {@link SQLITE_EARLY_FLUSH_AT} rows are waiting, and by `flush()` /
 *   `close()`; a kill -9 loses at most one interval.
 * - Routing state (cooldowns, locks, removed pairings, quarantines, circuits) is written through: each
 *   call commits before it returns. Credentials are committed with `synchronous=FULL` (fsync of the
 *   WAL) so a rotated refresh token survives even a power loss (SPEC P-7).
 * - The database file and its `-wal`/`-shm` companions are created with mode 0600: they hold OAuth
 *   tokens and API keys.
 */
import type { Clock, Credential, KeyLimits, RouteTrace, UsageRecord } from "../../../pipeline/ports.ts";
import { LocalShared } from "../local-shared.ts";
import { PendingWrites } from "../pending.ts";
import { errMessage } from "../rows.ts";
import type {
  AccountInput,
  AccountLock,
  Binding,
  Circuit,
  ConfigKey,
  KeyChange,
  Cooldown,
  KeyBudgetRow,
  Quarantine,
  QuotaWindow,
  RemovedModel,
  SchemaUpgrade,
  SessionRow,
  Store,
  StoreChange,
  QuotaShareRequest,
  ClaimLease,
  QuotaUse,
  StoreStats,
  UsageQuery,
  CallsQuery,
  CallsPageQuery,
  UsageSeriesQuery,
  UnwrittenAtClose,
} from "../types.ts";
import { type RefusedLine, refusedAtClose, refusedOnStderr } from "../refused-rows.ts";
import { SqliteAccountState } from "./account-state.ts";
import { SqliteAccounts } from "./accounts.ts";
import { SqliteContext } from "./db.ts";
import { SqliteFlusher } from "./flush.ts";
import { SqliteKeys } from "./keys.ts";
import { SqliteUsage } from "./usage.ts";
import { SqliteRoutingObjects } from "./routing-objects.ts";
import { SqliteSessions } from "./sessions.ts";

/**
 * Usage rows (or traces) waiting that make the SQLite store flush on the next macrotask instead of at its
 * interval (the PostgreSQL store keeps ../pending.ts's 256). Part of a flush's cost is per flush, not per
 * row: each commit writes the partly filled last pages of the usage table, its `ts` index and the trace
 * blocks as WAL frames again; a 1,020-row flush writes 0.025 frames per usage row + trace, a 255-row one
 * 0.049 (docs/performance.md item 110: the flushes 0.5–2.1 µs less per request in process). The price is
 * a longer pause of the event loop under load: ~4.5 ms on average against ~2.2 on the loaded 2-core
 * machine (a flush that checkpoints the WAL takes 10–19 ms either way). SPEC D-1's promise is unchanged:
 * rows are written at least every `flushIntervalMs` (1 s), and every read flushes first.
 */
export const SQLITE_EARLY_FLUSH_AT = 1024;

/** Options of `openSqliteStore`. */
export interface SqliteStoreOptions {
  /** Database file path (parent directories are created, mode 0700), or ":memory:". */
  path: string;
  /** Source of "now" (ms since the epoch) for timestamps and expiry; default `Date.now`. */
  clock?: Pick<Clock, "now">;
  /** Longest time a buffered usage row/trace waits before it is written, in ms. Default 1000. */
  flushIntervalMs?: number;
  /**
   * Route traces kept (the ring's size N, SPEC O-2): at least the newest N, fewer than N + 256 (whole
   * blocks of one flush each, ./trace-ring.ts). Default 10,000.
   */
  traceRingSize?: number;
  /** SQLite busy timeout in ms (waiting for another connection's write lock). Default 5000. */
  busyTimeoutMs?: number;
  /**
   * Rows buffered at most while flushes fail; further `record`/`save` calls are dropped and counted.
   * Default 100,000.
   */
  maxPending?: number;
  /**
   * Receives flush/refresh failures (messages carry no secrets): of a run of failed flushes only the
   * first (`database writes failing (…)`; the rows a close could not write are its return value).
   * Default: one line on stderr.
   */
  onError?: (message: string, error: unknown) => void;
  /** Receives the line of the flush that works again after failed ones (`database writes work again: …`). Default: none. */
  onInfo?: (message: string) => void;
  /**
   * Receives the lines of rows refused at `maxPending` while writes fail (lost; ../refused-rows.ts):
   * the outage's running count at most once a minute (`error`), and its final count in the line of the
   * flush that works again (`warn`, instead of `onInfo`). Default: one line on stderr.
   */
  onRefused?: RefusedLine;
  /**
   * Called before each flush takes the buffers (the flushes that reads run first included): work that
   * still has rows to hand over (src/after-reply.ts) hands them over now, so a read sees them.
   */
  beforeFlush?: () => void;
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

/** Stores that are open in this process; flushed when the event loop drains (`beforeExit`). */
const openStores = new Set<SqliteStore>();
let exitHookInstalled = false;

/**
 * The SQLite implementation of `Store`. Create it with `openSqliteStore`. Each method is its role's
 * (`SqliteKeys`, `SqliteAccounts`, `SqliteAccountState`, `SqliteUsage`; documented there), with the
 * synchronous return types of SQLite.
 */
export class SqliteStore implements Store {
  /** Absolute path of the database file, or ":memory:". */
  readonly path: string;
  /** The schema upgrade this open applied (Store.upgrade), with the file's copy from before it. */
  readonly upgrade: SchemaUpgrade | undefined;
  private readonly ctx: SqliteContext;
  private readonly pending: PendingWrites;
  private readonly flusher: SqliteFlusher;
  private readonly keys: SqliteKeys;
  private readonly accounts: SqliteAccounts;
  private readonly state: SqliteAccountState;
  private readonly usage: SqliteUsage;
  private readonly local: LocalShared;
  private readonly objects: SqliteRoutingObjects;
  private readonly sessions: SqliteSessions;
  private readonly timer: ReturnType<typeof setInterval>;
  private earlyFlushScheduled = false;

  /** Use `openSqliteStore`. */
  constructor(options: SqliteStoreOptions) {
    const clock = options.clock;
    const now = clock ? () => clock.now() : Date.now;
    const traceRingSize = Math.max(1, Math.floor(options.traceRingSize ?? 10_000));
    const maxPending = Math.max(1, Math.floor(options.maxPending ?? 100_000));
    const onError =
      options.onError ??
      ((message: string) => {
        console.error(`[switchyard store] ${message}`);
      });
    this.ctx = new SqliteContext(options.path, options.busyTimeoutMs, now, onError);
    this.path = this.ctx.path;
    this.upgrade = this.ctx.upgrade;
    this.pending = new PendingWrites(maxPending, now, () => this.scheduleEarlyFlush(), options.beforeFlush, SQLITE_EARLY_FLUSH_AT);
    this.local = new LocalShared(now);
    try {
      this.flusher = new SqliteFlusher(this.ctx, this.pending, traceRingSize, options.onInfo, options.onRefused ?? refusedOnStderr);
      const flush = () => this.flusher.flush();
      this.keys = new SqliteKeys(this.ctx);
      this.state = new SqliteAccountState(this.ctx, this.pending, flush);
      this.accounts = new SqliteAccounts(this.ctx, (id) => this.state.forgetAccount(id));
      this.usage = new SqliteUsage(this.ctx, this.pending, flush);
      this.objects = new SqliteRoutingObjects(this.ctx);
      this.sessions = new SqliteSessions(this.ctx);
    } catch (err) {
      this.ctx.db.close(false);
      throw err;
    }

    const interval = Math.max(1, Math.floor(options.flushIntervalMs ?? 1000));
    this.timer = setInterval(() => this.tick(), interval);
    this.timer.unref?.();
    openStores.add(this);
    installExitHook();
  }

  // -- client keys -----------------------------------------------------------------------------
  lookup(secret: string) { return this.keys.lookup(secret); }
  any() { return this.keys.any(); }
  activeKeys() { return this.keys.activeKeys(); }
  setConfigKeys(keys: ConfigKey[]) { this.keys.setConfigKeys(keys); }
  setTraceRingSize(n: number) { this.flusher.traceRingSize = Math.max(1, Math.floor(n)); }
  createKey(name: string, scopes?: string[], tag?: string, limits?: KeyLimits) { return this.keys.createKey(name, scopes, tag, limits); }
  listKeys() { return this.keys.listKeys(); }
  revokeKey(name: string) { return this.keys.revokeKey(name); }
  rotateKey(name: string, graceMs?: number) { return this.keys.rotateKey(name, graceMs); }
  updateKey(name: string, change: KeyChange) { return this.keys.updateKey(name, change); }
  setKeyDisabled(name: string, disabled: boolean) { return this.keys.setKeyDisabled(name, disabled); }
  disabled(secret: string) { return this.keys.disabled(secret); }
  refreshKeys() { this.keys.refreshKeys(); }
  loadKeyBudgets() { return this.keys.loadKeyBudgets(); }
  saveKeyBudgets(rows: KeyBudgetRow[]) { this.keys.saveKeyBudgets(rows); }
  writeKeyBudgetsWithFlush(take: () => KeyBudgetRow[]) { this.pending.pullKeyBudgets(take); }

  // -- accounts --------------------------------------------------------------------------------
  listAccounts() { return this.accounts.listAccounts(); }
  getAccount(id: string) { return this.accounts.getAccount(id); }
  upsertAccount(account: AccountInput) { this.accounts.upsertAccount(account); }
  updateCredential(id: string, credential: Credential) { this.accounts.updateCredential(id, credential); }
  setCredentialOverride(accountId: string, baseFingerprint: string, credential: Credential) {
    this.accounts.setCredentialOverride(accountId, baseFingerprint, credential);
  }
  listCredentialOverrides() { return this.accounts.listCredentialOverrides(); }
  clearCredentialOverride(accountId: string) { this.accounts.clearCredentialOverride(accountId); }
  setAccountDisabled(id: string, disabled: boolean) { this.accounts.setAccountDisabled(id, disabled); }
  deleteAccount(id: string) { return this.accounts.deleteAccount(id); }
  setAccountModels(id: string, models: string[] | null) { this.accounts.setAccountModels(id, models); }

  // -- account state ---------------------------------------------------------------------------
  setCooldown(c: Cooldown) { this.state.setCooldown(c); }
  clearCooldown(accountId: string, model?: string) { this.state.clearCooldown(accountId, model); }
  setLock(l: AccountLock) { this.state.setLock(l); }
  clearLock(accountId: string) { this.state.clearLock(accountId); }
  removeModel(r: RemovedModel) { this.state.removeModel(r); }
  restoreModel(accountId: string, model?: string) { this.state.restoreModel(accountId, model); }
  quarantine(q: Quarantine) { this.state.quarantine(q); }
  unquarantine(fingerprint: string) { this.state.unquarantine(fingerprint); }
  setCircuit(c: Circuit) { this.state.setCircuit(c); }
  clearCircuit(providerId: string) { this.state.clearCircuit(providerId); }
  setQuota(q: QuotaWindow) { this.state.setQuota(q); }
  bind(b: Binding) { this.state.bind(b); }
  unbind(key: string) { this.state.unbind(key); }
  clearQuotas(accountId: string) { this.state.clearQuotas(accountId); }
  loadAccountState() { return this.state.loadAccountState(); }

  // -- dashboard sessions ----------------------------------------------------------------------
  putSession(row: SessionRow, maxOfKind: number) { return this.sessions.putSession(row, maxOfKind); }
  getSession(tokenHash: string) { return this.sessions.getSession(tokenHash); }
  deleteSession(tokenHash: string) { return this.sessions.deleteSession(tokenHash); }
  deleteSessionsOfKeys(keyHashes: string[]) { return this.sessions.deleteSessionsOfKeys(keyHashes); }
  /** The active key whose secret has this hex SHA-256 (a dashboard session's sign-in key), from memory. */
  lookupHash(hex: string) { return this.keys.lookupHash(hex); }
  /** The hex SHA-256 of the active stored key of that name (and its previous secret in a grace), from memory. */
  storedKeyHashes(name: string) { return this.keys.storedKeyHashes(name); }

  // -- routing objects of the admin API ---------------------------------------------------------
  listCombos() { return this.objects.listCombos(); }
  putCombo(name: string, spec: Record<string, unknown>) { this.objects.putCombo(name, spec); }
  createCombo(name: string, spec: Record<string, unknown>) { return this.objects.createCombo(name, spec); }
  deleteCombo(name: string) { return this.objects.deleteCombo(name); }
  listAliases() { return this.objects.listAliases(); }
  putAlias(name: string, target: string) { this.objects.putAlias(name, target); }
  createAlias(name: string, target: string) { return this.objects.createAlias(name, target); }
  deleteAlias(name: string) { return this.objects.deleteAlias(name); }
  getSettings() { return this.objects.getSettings(); }
  setSetting(key: string, value: unknown) { this.objects.setSetting(key, value); }
  listDisabledAccounts() { return this.objects.listDisabledAccounts(); }
  setAccountDisabledFlag(accountId: string, disabled: boolean) { this.objects.setAccountDisabledFlag(accountId, disabled); }

  // -- usage and traces ------------------------------------------------------------------------
  record(rec: UsageRecord) { this.usage.record(rec); }
  save(trace: RouteTrace) { this.usage.save(trace); }
  usageSummary(q: UsageQuery) { return this.usage.usageSummary(q); }
  usageSeries(q: UsageSeriesQuery) { return this.usage.usageSeries(q); }
  recentCalls(limit: number, q?: CallsQuery) { return this.usage.recentCalls(limit, q); }
  callsPage(q: CallsPageQuery) { return this.usage.callsPage(q); }
  getTrace(id: string) { return this.usage.getTrace(id); }
  recentTraces(limit: number) { return this.usage.recentTraces(limit); }
  pruneUsage(beforeMs: number, limit?: number) { return this.usage.pruneUsage(beforeMs, limit); }
  servedPerModel(only?: ReadonlySet<string>) { return this.usage.servedPerModel(only); }

  // -- coordination (one instance: process memory, see LocalShared) ------------------------------
  readonly shared = false;
  tryLease(scope: string, limit: number) { return this.local.tryLease(scope, limit); }
  releaseLease(id: string) { this.local.releaseLease(id); }
  addToCounter(name: string, windowMs: number, amount: number) { return this.local.addToCounter(name, windowMs, amount); }
  claimOnce(name: string, until: number, lease?: ClaimLease) { return this.local.claimOnce(name, until, lease); }
  settleClaim(name: string, until: number) { return this.local.settleClaim(name, until); }
  releaseClaims(prefix: string) { this.local.releaseClaims(prefix); }
  lapseClaim(name: string) { this.local.lapseClaim(name); }
  setQuotaShare(req: QuotaShareRequest) { return this.local.setQuotaShare(req); }
  reportQuotaUse(rows: readonly QuotaUse[]) { return this.local.reportQuotaUse(rows); }
  exchangeQuotaUse(rows: readonly QuotaUse[]) { return this.local.exchangeQuotaUse(rows); }
  openBudgetWindow(name: string, lengthMs: number, start?: number) { return this.local.openBudgetWindow(name, lengthMs, start); }
  readBudgetWindows(names: readonly string[]) { return this.local.readBudgetWindows(names); }
  withRefreshLock<T>(accountId: string, fn: () => Promise<T>) { return this.local.withRefreshLock(accountId, fn); }
  onChange(listener: (change: StoreChange) => void) { return this.local.onChange(listener); }

  /**
   * Writes every buffered usage row, trace, binding and quota window in one IMMEDIATE transaction and
   * trims the trace ring. On failure the rows stay buffered for the next attempt and the error goes to
   * `onError`; nothing is thrown. No-op once closed.
   */
  flush(): void {
    this.flusher.flush();
  }

  // -- lifecycle -------------------------------------------------------------------------------

  /** Buffer and flush counters. */
  stats(): StoreStats {
    return {
      pendingUsage: this.pending.pendingUsage,
      pendingTraces: this.pending.pendingTraces,
      dropped: this.pending.dropped,
      flushErrors: this.flusher.flushErrors,
      lastFlushAt: this.flusher.lastFlushAt,
    };
  }

  /**
   * Whether the last flush failed (a full disk, a read-only file): rows wait in memory until one works.
   * GET /health then says `db: "failing"` (src/app.ts). Never throws.
   */
  writesFailing(): boolean {
    return !this.ctx.closed && this.flusher.failing;
  }

  /** True when `SELECT 1` succeeds; false when closed or failing. Never throws. */
  health(): boolean {
    if (this.ctx.closed) return false;
    try {
      return (this.ctx.db.query("SELECT 1 AS ok").get() as { ok: number } | null)?.ok === 1;
    } catch {
      return false;
    }
  }

  /**
   * Flushes, checkpoints (truncating the WAL) and closes. Idempotent; never throws for a flush failure.
   * @returns what the last flush could not write (a full disk): lost, counted in `stats().dropped`
   *   (usage rows and traces; the stop's error line says so), with the rows refused at `maxPending`
   *   since the open while writes failed (`refused`, lost then); undefined when everything was written
   *   and nothing was refused. No file keeps them: on a full disk it could not be written either, and a
   *   start on SQLite does not read one.
   */
  close(): UnwrittenAtClose | undefined {
    if (this.ctx.closed) return undefined;
    clearInterval(this.timer);
    this.flush();
    const p = this.pending;
    const refused = refusedAtClose(p, this.path);
    const lost = p.empty && !refused
      ? undefined
      : { usage: p.pendingUsage, traces: p.pendingTraces, state: p.pendingState, keyUse: 0, while: `writes to ${this.path} fail`, ...(refused ? { refused } : {}) };
    this.pending.discard();
    this.pending.closed = true;
    this.ctx.closed = true;
    openStores.delete(this);
    try {
      this.ctx.db.run("PRAGMA wal_checkpoint(TRUNCATE)");
    } catch (err) {
      this.ctx.onError(`checkpoint at close failed: ${errMessage(err)}`, err);
    }
    this.usage.finalize();
    this.state.finalize();
    this.accounts.finalize();
    this.keys.finalize();
    this.flusher.finalize();
    this.ctx.db.close(false);
    return lost;
  }

  private tick(): void {
    if (this.ctx.closed) return;
    this.flush();
    // data_version changes when another connection (another process) commits: refresh the key cache.
    this.keys.refreshIfChanged();
  }

  private scheduleEarlyFlush(): void {
    if (this.earlyFlushScheduled) return;
    this.earlyFlushScheduled = true;
    setTimeout(() => {
      this.earlyFlushScheduled = false;
      this.flush();
    }, 0);
  }
}

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on("beforeExit", () => {
    for (const store of openStores) store.flush();
  });
}
