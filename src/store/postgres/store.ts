/**
 * The shared store (SPEC D-2): PostgreSQL through Bun's built-in SQL client, for several instances that
 * behave as one gateway. Same four roles as the embedded store (one file each in this folder) plus the
 * coordination role (`./shared.ts`):
 *
 * - Hot path (`lookup`, `any`, `record`, `save`, `bind`, `setQuota`): memory only, as with SQLite.
 *   Buffers are flushed at least every `flushIntervalMs` (default 1 s), early at 256 rows, and on close.
 * - Routing state and credentials are written through and announced on a NOTIFY channel; every instance
 *   listens and re-reads (within about a second), and re-reads everything after a reconnect.
 * - Database outage: one logged warning, memory-only operation, write-through calls kept in order and
 *   replayed when the database answers again (probed every second), buffers flushed, caches re-read.
 * - Query methods return promises.
 */
import { SQL } from "bun";
import type { Clock, Credential, KeyLimits, RouteTrace, UsageRecord } from "../../../pipeline/ports.ts";
import { LEASE_TTL_MS } from "../shared.ts";
import { EARLY_FLUSH_AT, PendingWrites } from "../pending.ts";
import { type RefusedLine, refusedAtClose } from "../refused-rows.ts";
import { errMessage } from "../rows.ts";
import { StoreError } from "../types.ts";
import type {
  AccountInput,
  AccountLock,
  Binding,
  Circuit,
  ConfigKey,
  KeyChange,
  KeyLimitsChange,
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
  UnreportedBudgetUse,
  UnwrittenAtClose,
  UsageQuery,
  CallsQuery,
  CallsPageQuery,
  UsageSeriesQuery,
} from "../types.ts";
import { PgAccountState } from "./account-state.ts";
import { PgAccounts } from "./accounts.ts";
import { PgContext } from "./db.ts";
import { FLUSH_ANSWER_MS, PgFlusher } from "./flush.ts";
import { PgKeys } from "./keys.ts";
import { PgInstanceConfigs } from "./instance-configs.ts";
import { migratePg, PG_MIGRATIONS } from "./migrations.ts";
import { PgRoutingObjects } from "./routing-objects.ts";
import { PgShared } from "./shared.ts";
import { PgUsage } from "./usage.ts";
import { PgSessions } from "./sessions.ts";
import { endOf, retryUntil, settledBy, type RetryEnd } from "../../retry-until.ts";
import { countRows, emptyBatch, type IdentifiedBatch, readKept, removeKept, type RowCounts, setAsideKept, unreadableName, withoutLapsed, writeKept } from "./keep-unwritten.ts";

export { EARLY_FLUSH_AT };

/**
 * How long (ms) a database that answered so far gets for the last flush at close when the grace period
 * is already over or a second signal asked to stop now: a healthy database answers within ms; a stalled
 * one holds the stop this much past the grace period at most.
 */
const LAST_FLUSH_MIN_MS = 2_000;

/** Options of `openPostgresStore`. */
export interface PostgresStoreOptions {
  /** `postgres://user:password@host:port/database` (also `postgresql://`). */
  url: string;
  /** Source of "now" (ms since the epoch) for timestamps and expiry; default `Date.now`. */
  clock?: Pick<Clock, "now">;
  /** Longest time a buffered usage row/trace waits before it is written, in ms. Default 1000. */
  flushIntervalMs?: number;
  /** Route traces kept (the ring's size, SPEC O-2). Default 10,000. */
  traceRingSize?: number;
  /** Rows buffered at most while flushes fail. Default 100,000. */
  maxPending?: number;
  /** Connections in the pool (plus one for LISTEN). Default 10. */
  maxConnections?: number;
  /**
   * How often listeners hear "state" anyway (the safety net under LISTEN/NOTIFY: a notification missed
   * while the listening connection was reconnecting is caught up by the next re-read), ms. Default 2000.
   */
  resyncMs?: number;
  /** How long a lease outlives its instance's last renewal, ms. Default 15,000. */
  leaseTtlMs?: number;
  /** Receives background failures and outage notices (no secrets). Default: one line on stderr. */
  onError?: (message: string, error: unknown) => void;
  /** Called before each flush takes the buffers (see `SqliteStoreOptions.beforeFlush`). */
  beforeFlush?: () => void;
  /** How long a flush statement may go unanswered before the database counts as away, ms. Default `FLUSH_ANSWER_MS` (10 s). */
  flushAnswerMs?: number;
  /**
   * How long a query the caller waits for (the admin API's reads and changes) may go unanswered before
   * it throws StoreError `unavailable` and a `SELECT 1` checks for a stalled database, ms. Default 10 s.
   */
  queryAnswerMs?: number;
  /** This process's instance id (leases, notifications, `instance_configs`); default a new UUID. */
  instanceId?: string;
  /**
   * Where a stop keeps the rows it could not write (./keep-unwritten.ts; `unwritten-rows.jsonl` in the
   * gateway's data directory), and where the start reads and writes them back. Without it a stop's
   * unwritten rows are lost (counted).
   */
  unwrittenFile?: string;
  /** Receives notices that are not failures (the rows a previous stop kept, written; `database reachable again`). Default: none (the outage's end then goes to `onError`). */
  onInfo?: (message: string) => void;
  /**
   * Receives the lines of rows refused at `maxPending` while the database is away or refuses the
   * flushes (lost; ../refused-rows.ts): the outage's running count at most once a minute (`error`), and
   * its final count in the `database reachable again` line (`warn`, instead of `onInfo`). Default: one
   * line on stderr.
   */
  onRefused?: RefusedLine;
}

export { isPostgresUrl } from "./url.ts";

/**
 * Connects, applies pending migrations, loads the client-key cache and starts listening for other
 * instances' changes.
 * @throws StoreError `schema` for a database written by a newer build; the client's error when the
 *   database cannot be reached at start (an instance does not start without its shared state).
 */
export async function openPostgresStore(options: PostgresStoreOptions): Promise<PostgresStore> {
  const clock = options.clock;
  const now = clock ? () => clock.now() : Date.now;
  const onError =
    options.onError ??
    ((message: string) => {
      console.error(`[switchyard store] ${message}`);
    });
  const sql = new SQL(options.url, { max: Math.max(2, options.maxConnections ?? 10), idleTimeout: 60, connectionTimeout: 10 });
  let applied: number[];
  try {
    applied = await migratePg(sql, now);
  } catch (err) {
    await sql.close().catch(() => {});
    throw err;
  }
  // The LISTEN on a client of its own, so that its `onclose` hears the listening connection only (a
  // query connection's close is not the LISTEN's: review14 R10); the reconnect is PgContext's own
  // (connectionClosed: Bun's logs lines that are not JSON). No query runs on it: no other connection opens.
  let ctx: PgContext | undefined;
  const listenSql = new SQL(options.url, { max: 1, connectionTimeout: 10, onclose: (err) => ctx?.connectionClosed(err) });
  // The stall check's SELECT 1 on a connection of its own (PgContext.checkStall): it measures the database, not the pool.
  const checkSql = new SQL(options.url, { max: 1, idleTimeout: 60, connectionTimeout: 10 });
  ctx = new PgContext(sql, now, onError, options.instanceId, listenSql, checkSql);
  const onInfo = options.onInfo;
  if (onInfo) ctx.sayBack = onInfo;
  if (options.queryAnswerMs !== undefined) ctx.answerMs = Math.max(1, options.queryAnswerMs);
  const store = new PostgresStore(ctx, options);
  store.readKeptRows();
  store.upgrade = schemaUpgrade(applied);
  if (applied.length > 0 && applied[0] === PG_MIGRATIONS[0]!.version) store.createdSchema = PG_MIGRATIONS[PG_MIGRATIONS.length - 1]!.version;
  await store.start();
  return store;
}

/**
 * What {@link migratePg} applying `applied` was, as Store.upgrade: from the version before the first one
 * applied (PG_MIGRATIONS' versions, in order) to the latest, with the steps' names; undefined for a new
 * database (it started from nothing) or a current one.
 */
function schemaUpgrade(applied: readonly number[]): SchemaUpgrade | undefined {
  if (applied.length === 0) return undefined;
  const first = PG_MIGRATIONS.findIndex((m) => m.version === applied[0]);
  if (first <= 0) return undefined;
  return {
    from: PG_MIGRATIONS[first - 1]!.version,
    to: PG_MIGRATIONS[PG_MIGRATIONS.length - 1]!.version,
    steps: PG_MIGRATIONS.slice(first).map((m) => m.name),
  };
}

/**
 * The PostgreSQL implementation of `Store`. Create it with `openPostgresStore`. Each method is its
 * role's (`PgKeys`, `PgAccounts`, `PgAccountState`, `PgUsage`, `PgShared`; documented there).
 */
export class PostgresStore implements Store {
  /** The schema upgrade this instance's open applied (Store.upgrade; set by `openPostgresStore`). */
  upgrade: SchemaUpgrade | undefined;
  /** The schema version this instance's open created in a database that held none (set by `openPostgresStore`). */
  createdSchema: number | undefined;
  private readonly pending: PendingWrites;
  private readonly flusher: PgFlusher;
  private readonly keys: PgKeys;
  private readonly accounts: PgAccounts;
  private readonly state: PgAccountState;
  private readonly usage: PgUsage;
  private readonly coord: PgShared;
  private readonly objects: PgRoutingObjects;
  private readonly sessions: PgSessions;
  private readonly configs: PgInstanceConfigs;
  private readonly timer: ReturnType<typeof setInterval>;
  private readonly resync: ReturnType<typeof setInterval>;
  private earlyFlushScheduled = false;
  private closing: Promise<UnwrittenAtClose | undefined> | undefined;
  /** {@link PostgresStoreOptions.unwrittenFile}; unset when it cannot be read (a stop then does not replace it). */
  private unwrittenFile: string | undefined;
  /** Where that file goes once its readable rows are written, when some of its lines could not be read (a stop replacing it before copies it there). */
  private unreadable: string | undefined;
  /** The ids of every batch that file held when this instance read it at its start, lapsed ones too: a stop replacing the file neither keeps them again nor takes them for another process's. */
  private readAtStart = new Set<string>();
  private readonly onInfo: (message: string) => void;

  /** Use `openPostgresStore`. */
  constructor(
    private readonly ctx: PgContext,
    options: PostgresStoreOptions,
  ) {
    this.unwrittenFile = options.unwrittenFile;
    this.onInfo = options.onInfo ?? (() => {});
    const traceRingSize = Math.max(1, Math.floor(options.traceRingSize ?? 10_000));
    const maxPending = Math.max(1, Math.floor(options.maxPending ?? 100_000));
    this.pending = new PendingWrites(maxPending, ctx.now, () => this.scheduleEarlyFlush(), options.beforeFlush);
    this.flusher = new PgFlusher(ctx, this.pending, traceRingSize, options.flushAnswerMs, options.onRefused);
    // the outage's rows refused at the cap are said in the line of its end (a warn line then, not info)
    const back = ctx.sayBack;
    ctx.sayBack = (message) => {
      if (!this.flusher.refused.again(message)) back(message);
    };
    // rows of requests answered just before the outage's end, recorded by the first flush's settle, belong to it
    ctx.beforeBack = () => this.pending.settle();
    const flush = () => this.flusher.flush();
    this.keys = new PgKeys(ctx);
    this.state = new PgAccountState(ctx, this.pending, flush);
    this.accounts = new PgAccounts(ctx, (id) => this.state.forgetPending(id));
    this.usage = new PgUsage(ctx, this.pending, flush);
    this.coord = new PgShared(ctx, options.leaseTtlMs ?? LEASE_TTL_MS);
    this.objects = new PgRoutingObjects(ctx);
    this.sessions = new PgSessions(ctx);
    this.configs = new PgInstanceConfigs(ctx);
    const interval = Math.max(1, Math.floor(options.flushIntervalMs ?? 1000));
    this.timer = setInterval(() => void this.flush(), interval);
    this.timer.unref?.();
    this.resync = setInterval(() => {
      if (!ctx.reachable || ctx.closed) return;
      ctx.dispatch("state");
      // Client keys too: a revocation announced while this instance's LISTEN connection was away (it
      // reconnects with a growing back-off, ~20 s after a minute's outage) would otherwise be missed
      // until that reconnect, and a revoked key accepted meanwhile.
      void this.keys.reloadKeys().catch(() => {});
    }, Math.max(100, Math.floor(options.resyncMs ?? 2000)));
    this.resync.unref?.();
    ctx.onRecovered(async () => {
      await this.flusher.flush();
      await this.keys.reloadKeys();
      ctx.dispatch("all");
    });
  }

  /**
   * Reads the rows a previous stop kept in {@link PostgresStoreOptions.unwrittenFile}, for the flushes to
   * write first (the first one at once, from `start`); the file is removed once they are written (kept
   * as `unwritten-rows.jsonl.unreadable-MS`, mode 0600, when some lines of it could not be read). A
   * file that cannot be read is reported and left alone, by this instance's stop too (called by
   * `openPostgresStore`). Never throws.
   */
  readKeptRows(): void {
    const path = this.unwrittenFile;
    if (!path) return;
    let kept;
    try {
      kept = readKept(path);
    } catch (err) {
      this.unwrittenFile = undefined;
      this.ctx.onError(`cannot read ${path}, where an earlier stop kept the rows it could not write (${errMessage(err)}): they are not written, and this instance's stop keeps nothing there; move the file away and restart to keep the next stop's`, err);
      return;
    }
    if (!kept) return;
    this.readAtStart = new Set(kept.batches.map((b) => b.id));
    // Lines that could not be read are not lost with the file: it is set aside once the rest is written.
    const skipped = kept.skippedLines;
    const aside = skipped ? unreadableName(path, Date.now()) : undefined;
    if (skipped) this.ctx.onError(`${path}: ${skipped} lines could not be read and are skipped; once the rest is written the file is kept as ${aside}`, undefined);
    this.unreadable = aside;
    const done = (file: string): string => {
      if (!aside) return (removeKept(file), "the file is removed");
      setAsideKept(file, aside);
      this.unreadable = undefined;
      this.ctx.onError(`${skipped} lines of ${file} could not be read: the file is kept as ${aside} (mode 0600) for a look by hand`, undefined);
      return `the file is kept as ${aside}`;
    };
    // bindings and quota windows that have lapsed since are not written back (they would replace newer ones)
    const batches = withoutLapsed(kept.batches, this.ctx.now());
    if (!batches.length) {
      try {
        done(path);
      } catch (err) {
        this.ctx.onError(`nothing in ${path} is left to write, but moving or removing the file failed (${errMessage(err)}): move it away by hand`, err);
      }
      return;
    }
    const n = countRows(batches);
    const keyUse = n.keyUse ? `, the key budget use of ${n.keyUse} windows` : "";
    this.onInfo(`writing what an earlier stop could not write and kept in ${path}: ${n.usage} usage rows, ${n.traces} route traces, ${n.state} routing state changes${keyUse}`);
    this.flusher.writeDiskFirst(path, batches, (file, rows, use) => {
      try {
        const what = done(file);
        // a window's use written already (by an earlier start that died before removing the file) counts in neither of the two
        const before = rows.keyUse - use.counted - use.dropped;
        const counted = rows.keyUse ? `; the key budget use of ${rows.keyUse} windows: ${use.counted} counted back into their windows, ${use.dropped} dropped (their windows had ended)${before > 0 ? `, ${before} written already by an earlier start` : ""}` : "";
        this.onInfo(`written: the ${rows.usage} usage rows, ${rows.traces} route traces and ${rows.state} routing state changes an earlier stop kept in ${file}${counted}; ${what}`);
      } catch (err) {
        this.ctx.onError(`the rows kept in ${file} are written, but ${aside ? `moving the file to ${aside}` : "removing the file"} failed (${errMessage(err)}): ${aside ? "move" : "remove"} it by hand (a start writes nothing twice from it)`, err);
      }
    });
  }

  /** Loads the key cache and subscribes to the change channel (called by `openPostgresStore`). */
  async start(): Promise<void> {
    await this.keys.reloadKeys();
    await this.ctx.listen((change) => {
      // While the database is away (the LISTEN connection may come back before the probe does) the
      // recovery reloads the keys and says "all" itself; a reload refused for want of the database says
      // nothing either: the outage has its own line (until 2026-12-07 a `key refresh failed` warn too).
      if ((change === "keys" || change === "all") && this.ctx.reachable) {
        void this.keys.reloadKeys().catch((err) => {
          if (!(err instanceof StoreError && err.code === "unavailable")) this.ctx.onError(`key refresh failed: ${errMessage(err)}`, err);
        });
      }
      this.ctx.dispatch(change);
    });
    if (this.flusher.diskWaiting) void this.flush();
  }

  /** This instance's id in leases and notifications. */
  get instanceId(): string {
    return this.ctx.instanceId;
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
  refreshKeys() { return this.keys.refreshKeys(); }
  onKeyLimitsChanged(listener: (changes: KeyLimitsChange[]) => void) { return this.keys.onKeyLimitsChanged(listener); }

  // -- accounts --------------------------------------------------------------------------------
  listAccounts() { return this.accounts.listAccounts(); }
  getAccount(id: string) { return this.accounts.getAccount(id); }
  upsertAccount(account: AccountInput) { return this.accounts.upsertAccount(account); }
  updateCredential(id: string, credential: Credential) { return this.accounts.updateCredential(id, credential); }
  setCredentialOverride(accountId: string, baseFingerprint: string, credential: Credential) {
    return this.accounts.setCredentialOverride(accountId, baseFingerprint, credential);
  }
  listCredentialOverrides() { return this.accounts.listCredentialOverrides(); }
  clearCredentialOverride(accountId: string) { return this.accounts.clearCredentialOverride(accountId); }
  setAccountDisabled(id: string, disabled: boolean) { return this.accounts.setAccountDisabled(id, disabled); }
  deleteAccount(id: string) { return this.accounts.deleteAccount(id); }
  setAccountModels(id: string, models: string[] | null) { return this.accounts.setAccountModels(id, models); }

  // -- account state ---------------------------------------------------------------------------
  setCooldown(c: Cooldown) { return this.state.setCooldown(c); }
  clearCooldown(accountId: string, model?: string) { return this.state.clearCooldown(accountId, model); }
  setLock(l: AccountLock) { return this.state.setLock(l); }
  clearLock(accountId: string) { return this.state.clearLock(accountId); }
  removeModel(r: RemovedModel) { return this.state.removeModel(r); }
  restoreModel(accountId: string, model?: string) { return this.state.restoreModel(accountId, model); }
  quarantine(q: Quarantine) { return this.state.quarantine(q); }
  unquarantine(fingerprint: string) { return this.state.unquarantine(fingerprint); }
  setCircuit(c: Circuit) { return this.state.setCircuit(c); }
  clearCircuit(providerId: string) { return this.state.clearCircuit(providerId); }
  setQuota(q: QuotaWindow) { this.state.setQuota(q); }
  bind(b: Binding) { this.state.bind(b); }
  unbind(key: string) { return this.state.unbind(key); }
  clearQuotas(accountId: string) { return this.state.clearQuotas(accountId); }
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
  putCombo(name: string, spec: Record<string, unknown>) { return this.objects.putCombo(name, spec); }
  createCombo(name: string, spec: Record<string, unknown>) { return this.objects.createCombo(name, spec); }
  deleteCombo(name: string) { return this.objects.deleteCombo(name); }
  listAliases() { return this.objects.listAliases(); }
  putAlias(name: string, target: string) { return this.objects.putAlias(name, target); }
  createAlias(name: string, target: string) { return this.objects.createAlias(name, target); }
  deleteAlias(name: string) { return this.objects.deleteAlias(name); }
  getSettings() { return this.objects.getSettings(); }
  setSetting(key: string, value: unknown) { return this.objects.setSetting(key, value); }
  listDisabledAccounts() { return this.objects.listDisabledAccounts(); }
  setAccountDisabledFlag(accountId: string, disabled: boolean) { return this.objects.setAccountDisabledFlag(accountId, disabled); }

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

  // -- coordination ----------------------------------------------------------------------------
  readonly shared = true;
  tryLease(scope: string, limit: number) { return this.coord.tryLease(scope, limit); }
  releaseLease(id: string) { return this.coord.releaseLease(id); }
  addToCounter(name: string, windowMs: number, amount: number) { return this.coord.addToCounter(name, windowMs, amount); }
  claimOnce(name: string, until: number, lease?: ClaimLease) { return this.coord.claimOnce(name, until, lease); }
  settleClaim(name: string, until: number) { return this.coord.settleClaim(name, until); }
  releaseClaims(prefix: string) { return this.coord.releaseClaims(prefix); }
  lapseClaim(name: string) { return this.coord.lapseClaim(name); }
  publishInstanceConfig(label: string, parts: Record<string, string>, origin?: string) { return this.configs.publish(label, parts, origin); }
  otherInstanceConfigs(maxAgeMs: number) { return this.configs.others(maxAgeMs); }
  instanceConfigSalt() { return this.configs.salt(); }
  setQuotaShare(req: QuotaShareRequest) { return this.coord.setQuotaShare(req); }
  reportQuotaUse(rows: readonly QuotaUse[]) { return this.coord.reportQuotaUse(rows); }
  exchangeQuotaUse(rows: readonly QuotaUse[]) { return this.coord.exchangeQuotaUse(rows); }
  openBudgetWindow(name: string, lengthMs: number, start?: number) { return this.coord.openBudgetWindow(name, lengthMs, start); }
  readBudgetWindows(names: readonly string[]) { return this.coord.readBudgetWindows(names); }
  withRefreshLock<T>(accountId: string, fn: () => Promise<T>) { return this.coord.withRefreshLock(accountId, fn); }
  onChange(listener: (change: StoreChange) => void) { return this.coord.onChange(listener); }

  /**
   * The key budget use a stop could not report (`SharedStore.keepUnreportedUse`): one batch of its own,
   * with this instance's id, written by the next flush after the disk's (./count-back-key-use.ts), or
   * kept with the unwritten rows by {@link close}.
   * @returns false (nothing taken) once the store is closing: the caller counts that use as lost. Never throws.
   */
  keepUnreportedUse(uses: readonly UnreportedBudgetUse[]): boolean {
    if (this.closing) return false;
    if (!uses.length) return true;
    const keyUse = uses.map((u) => ({ ...u, instanceId: this.ctx.instanceId }));
    this.flusher.queue({ id: crypto.randomUUID(), batch: { ...emptyBatch(), keyUse } });
    return true;
  }

  /** Writes every buffered row now, in one transaction. Failures are counted, not thrown. */
  flush(): Promise<void> {
    return this.flusher.flush();
  }

  // -- lifecycle -------------------------------------------------------------------------------

  /** Buffer and flush counters. */
  stats(): StoreStats {
    return {
      // The batch kept for its replay after a stalled flush counts as waiting too.
      // So does what a flush took from the buffers to write after the batches ahead of them (PgFlusher.flush).
      pendingUsage: this.pending.pendingUsage + this.flusher.keptRows + this.flusher.queuedRows.usage,
      pendingTraces: this.pending.pendingTraces + this.flusher.queuedRows.traces,
      dropped: this.pending.dropped + this.ctx.outboxDropped,
      flushErrors: this.flusher.flushErrors,
      lastFlushAt: this.flusher.lastFlushAt,
    };
  }

  /**
   * Whether the database answered the last statement (false while serving from memory). Also sends a
   * stall check, at most every few seconds (PgContext.checkNow): a stalled database reads as unreachable
   * within those and 5 s. Never throws.
   */
  health(): boolean {
    // a stalled database is noticed without a flush or a query: a bounded SELECT 1 now and then (PgContext.checkNow)
    if (!this.ctx.closed && this.ctx.reachable) this.ctx.checkNow();
    return !this.ctx.closed && this.ctx.reachable;
  }

  /**
   * Flushes, gives back this instance's leases, stops listening and closes the pool. Idempotent.
   * Afterwards `record`/`save` drop (counted), `lookup` answers from memory, queries throw `closed`.
   * While the database is away the last flush is tried again (backing off from 0.1 s to 2 s; the outage
   * probe replays a kept batch each second) until `until` (default: one try): a database back by
   * then loses nothing (try20 D2: a SIGTERM during an outage dropped the buffers at once, silently).
   * What is still unwritten then is kept in {@link PostgresStoreOptions.unwrittenFile} for the next
   * start ({@link keepUnwritten}); only what cannot be kept there is lost.
   * @returns the rows lost (counted in `stats().dropped`, usage rows and traces) and those kept on disk,
   *   with the rows refused at `maxPending` since the open while writes failed (`refused`, lost then:
   *   the stop exits 1); undefined when everything was written and nothing was refused
   */
  close(until?: RetryEnd): Promise<UnwrittenAtClose | undefined> {
    this.closing ??= (async () => {
      clearInterval(this.timer);
      clearInterval(this.resync);
      const end = until ?? Date.now();
      // Each step is bounded: a database that stopped answering must not keep the process from exiting.
      // The last flush ends with the grace period even while a statement of it waits for its answer (a
      // stalled database): its batch is kept with its flush id like the buffers' rows (keepUnwritten).
      const lastFlush = retryUntil(end, async () => (await this.flusher.flush(), this.unwritten() ? 1 : 0));
      // Without `until` (one try), that try gets its statement's answer bound (10 s) and a moment. With
      // it, a database that answered so far gets LAST_FLUSH_MIN_MS for its one try even when the grace
      // period is over (streams used it up) or a second signal moved its end to now: a healthy database
      // answers within ms, and its rows belong in it, not in the unwritten file (review25: every stop whose
      // stream outlived the grace period kept its rows in the file and gave no leases back).
      const floor = this.ctx.reachable ? Date.now() + LAST_FLUSH_MIN_MS : 0;
      const by = until === undefined ? Date.now() + FLUSH_ANSWER_MS + 1_000 : () => Math.max(endOf(until) + 200, floor);
      if (!(await settledBy(lastFlush, by))) this.ctx.onError("closing the store: the database did not answer the last flush by the end of the shutdown grace period; going on", undefined);
      const lost = this.keepUnwritten();
      // A database that did not answer (degraded mode: a stall) gets no more statements: they would wait too.
      const answers = this.ctx.reachable && !this.flusher.waiting;
      if (answers) await this.bounded("giving leases back", this.coord.releaseAll(), 3_000);
      if (answers) await this.bounded("removing this instance's config row", this.configs.remove(), 2_000);
      this.pending.discard();
      this.pending.closed = true;
      this.ctx.closed = true;
      this.ctx.stopProbe();
      if (answers) await this.bounded("stopping LISTEN", this.ctx.unlisten(), 2_000);
      try {
        const t = answers ? 2 : 0;
        await this.bounded("closing the connection pool", Promise.all([this.ctx.sql.close({ timeout: t }), this.ctx.listenSql.close({ timeout: t })]), answers ? 5_000 : 1_000);
      } catch (err) {
        this.ctx.onError(`closing the connection pool failed: ${errMessage(err)}`, err);
      }
      return lost;
    })();
    return this.closing;
  }

  /**
   * At close, after the last flush: what is still unwritten (the batch in the air, a previous stop's
   * batches not written yet, the key budget use handed over by {@link keepUnreportedUse}, the buffers)
   * goes to the unwritten file, replacing it (./keep-unwritten.ts) with those and the batches another
   * process kept there since this one read it ({@link keptMeanwhile}); the buffers are emptied. Rows
   * that cannot be kept there (no file given, the file cannot be read or written: logged) are lost and
   * counted in `dropped` (usage rows and traces); the file is then left as it was. The rows refused at
   * the buffers' cap since the open are `refused` (../refused-rows.ts). Undefined when nothing is
   * unwritten and nothing was refused.
   */
  private keepUnwritten(): UnwrittenAtClose | undefined {
    const inAir = this.flusher.inAir;
    const disk = this.flusher.detachDisk();
    const queued = this.flusher.detachQueued();
    this.pending.settle();
    const buffered = this.pending.empty ? undefined : { id: crypto.randomUUID(), batch: this.pending.take() };
    const all = [...(inAir ? [inAir] : []), ...disk, ...queued, ...(buffered ? [buffered] : [])];
    // rows refused at the buffers' cap since the open (lost then): the stop says them and exits 1
    const refused = refusedAtClose(this.pending, "PostgreSQL");
    if (!all.length) return refused ? { usage: 0, traces: 0, state: 0, keyUse: 0, refused } : undefined;
    const oldFile = this.unwrittenFile && (disk.length || (inAir && this.flusher.cameFromDisk(inAir.id))) ? this.unwrittenFile : undefined;
    const onlyInOld = (b: IdentifiedBatch) => oldFile !== undefined && (disk.includes(b) || this.flusher.cameFromDisk(b.id));
    let kept: { file: string; rows: RowCounts } | undefined;
    let lost: IdentifiedBatch[] = all;
    if (this.unwrittenFile && all.some((b) => !onlyInOld(b))) {
      try {
        const theirs = this.keptMeanwhile(this.unwrittenFile, all);
        writeKept(this.unwrittenFile, [...all, ...theirs], this.ctx.now());
        kept = { file: this.unwrittenFile, rows: countRows(all) };
        lost = [];
        const n = countRows(theirs);
        if (theirs.length) this.onInfo(`${this.unwrittenFile} held what another process had kept there since this one started (${n.usage} usage rows, ${n.traces} route traces, ${n.state} routing state changes, the key budget use of ${n.keyUse} windows): it is kept there too`);
      } catch (err) {
        this.ctx.onError(`could not keep the unwritten rows in ${this.unwrittenFile} (${errMessage(err)})`, err);
      }
    }
    if (!kept && oldFile) {
      // the previous stop's rows are still in the file as it was
      kept = { file: oldFile, rows: countRows(all.filter(onlyInOld)) };
      lost = all.filter((b) => !onlyInOld(b));
    }
    const gone = countRows(lost);
    this.pending.dropped += gone.usage + gone.traces;
    return { ...gone, ...(kept ? { kept: { file: kept.file, ...kept.rows } } : {}), ...(refused ? { refused } : {}) };
  }

  /**
   * The batches in the unwritten file `file` now that neither `all` holds nor this process wrote nor it
   * read there at its start (a batch whose rows had all lapsed then is not kept again): kept
   * there by another process on this data directory since this one read it at its start (two processes
   * around a restart; review21 R8), so that replacing the file does not lose them (each keeps its
   * flush id: one written already writes nothing again). Lines that cannot be read are not in them: a
   * copy of the file keeps them first (`.unreadable-MS`, mode 0600; a failed copy is logged).
   * @throws the file system's error, or an Error for a file of a newer format: it must not be replaced
   */
  private keptMeanwhile(file: string, all: readonly IdentifiedBatch[]): IdentifiedBatch[] {
    const now = readKept(file);
    if (!now) return [];
    if (now.skippedLines) {
      const aside = this.unreadable ?? unreadableName(file, Date.now());
      try {
        setAsideKept(file, aside, true);
        this.ctx.onError(`${file} held lines that could not be read: a copy of it is kept as ${aside} (mode 0600) before it is replaced`, undefined);
      } catch (err) {
        this.ctx.onError(`${file} held lines that could not be read, and copying it to ${aside} failed (${errMessage(err)}): they are lost when it is replaced`, err);
      }
    }
    const have = new Set(all.map((b) => b.id));
    return now.batches.filter((b) => !have.has(b.id) && !this.readAtStart.has(b.id) && !this.flusher.cameFromDisk(b.id));
  }

  /** What waits unwritten now (the buffers, a kept batch, a previous stop's, the queued batches: key budget use, rows taken from the buffers); undefined when nothing does. */
  private unwritten(): UnwrittenAtClose | undefined {
    const k = this.flusher.kept;
    const d = this.flusher.diskRows;
    const q = this.flusher.queuedRows;
    const out = {
      usage: this.pending.pendingUsage + k.usage + d.usage + q.usage,
      traces: this.pending.pendingTraces + k.traces + d.traces + q.traces,
      state: this.pending.pendingState + k.state + d.state + q.state,
      keyUse: k.keyUse + d.keyUse + q.keyUse,
    };
    return out.usage || out.traces || out.state || out.keyUse ? out : undefined;
  }

  /** Waits for `work` at most `ms`; reports (and goes on) when it takes longer. Never throws for a timeout. */
  private async bounded(what: string, work: Promise<unknown>, ms: number): Promise<void> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<"late">((resolve) => {
      timer = setTimeout(() => resolve("late"), ms);
    });
    try {
      if ((await Promise.race([work, late])) === "late") this.ctx.onError(`closing the store: ${what} did not finish within ${ms} ms; going on`, undefined);
    } finally {
      clearTimeout(timer);
    }
  }

  private scheduleEarlyFlush(): void {
    if (this.earlyFlushScheduled) return;
    this.earlyFlushScheduled = true;
    setTimeout(() => {
      this.earlyFlushScheduled = false;
      void this.flush();
    }, 0);
  }
}
