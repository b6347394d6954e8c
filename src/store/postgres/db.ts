/**
 * The connection the PostgreSQL roles share (SPEC D-2): Bun's built-in SQL client (a pool), the change
 * feed (LISTEN/NOTIFY on one channel, payload `{"i": instance id, "k": change}`), and degraded operation:
 * when the database cannot be reached, write-through calls are kept in order in an outbox and the
 * instance serves from memory with one logged warning; a probe every second notices the database is
 * back, replays the outbox, then tells every role to catch up. The probe's `SELECT 1` is bounded by
 * {@link PROBE_ANSWER_MS} (a stalled database is still away; at most {@link MAX_STALLED_PROBES}
 * unanswered probes are outstanding, so a stall does not collect a statement per second), and the
 * database counts as back only when the roles' probe checks pass (the flush's kept batch is written:
 * a database that answers `SELECT 1` may still hold the usage table's lock).
 *
 * The listening connection's reconnect is this module's own (newuser12a G4): Bun's client re-LISTENs by
 * itself after a lost connection, but writes `bun:sql LISTEN "switchyard_changes" failed, retrying: …`
 * (not JSON) to stderr at every failed retry while the database is away. So when the listening
 * connection closes the subscription is dropped at once (which stops Bun's retries) and taken again here, silently, with
 * a growing back-off ({@link RELISTEN_MIN_MS}…{@link RELISTEN_MAX_MS}) and at once when the probe finds
 * the database back; a failed attempt that means the database is away enters degraded mode (its one
 * warning); every listener hears "all" once it listens again (notifications may have been missed).
 * The LISTEN runs on a client of its own ({@link PgContext.listenSql}, no query ever runs on it), since
 * Bun reports every connection's close to one `onclose`: on the pool's client a query connection the
 * server ended (`pg_terminate_backend`, a proxy recycling it) or one that failed to open dropped a
 * healthy LISTEN and re-read everything (review14 R10).
 */
import { SQL } from "bun";
import { errMessage } from "../rows.ts";
import { sqlState } from "../sql-state.ts";
import type { StoreChange } from "../shared.ts";
import { answerWithin, SHARED_ANSWER_MS } from "../shared.ts";
import { StoreError } from "../types.ts";
import { trackStatements, type TrackedStatements } from "./track-statements.ts";

/** The NOTIFY channel every instance listens on. */
export const CHANNEL = "switchyard_changes";

/** A write-through statement, kept for replay while the database is away. */
type Write = (sql: SQL) => Promise<unknown>;

/** Write-through calls kept at most while the database is away; older ones are dropped (and counted). */
const MAX_OUTBOX = 100_000;

/** How long the outage probe's `SELECT 1` may go unanswered before that probe counts as failed, ms. */
export const PROBE_ANSWER_MS = 5_000;
/**
 * How long a change ({@link PgContext.change}) whose bound passed waits, at most, for its cancelled
 * statement's outcome (never longer than the bound itself), ms: a cancel request is one more
 * connection to the server; a stalled server answers neither.
 */
export const CANCEL_ANSWER_MS = 2_000;
/** `GET /health` sends a stall check ({@link PgContext.checkNow}) at most this often, ms. */
export const HEALTH_CHECK_MS = 3_000;
/** Unanswered probe statements outstanding at most; while that many wait, no probe is sent. */
const MAX_STALLED_PROBES = 2;
/** First and longest wait before the listening connection is taken again after it closed, ms (doubling, ±25 %). */
export const RELISTEN_MIN_MS = 250;
export const RELISTEN_MAX_MS = 20_000;

/**
 * What a read that needs the database says while it cannot be reached (the admin API's 503, the
 * dashboard's banner). "serving from memory" alone read as if a refused key create had been done in
 * memory (newuser12a's tryout, G5): it says nothing was done and that requests are still served.
 */
export const UNAVAILABLE_MESSAGE = "the database cannot be reached, so this was not done; requests are still served from memory: try again when it answers";

/**
 * Whether an error means "the database cannot be reached" (as opposed to a rejected statement):
 * Bun's connection errors (`ERR_POSTGRES_CONNECTION_*`, socket and timeout codes) and the server's
 * connection-exception (SQLSTATE class 08), insufficient-resources (class 53: too many connections,
 * disk full) and shutdown (57P01–57P03) states.
 */
export function isUnavailable(err: unknown): boolean {
  if (err instanceof StoreError) return err.code === "unavailable";
  const e = err as { code?: unknown } | null;
  const code = typeof e?.code === "string" ? e.code : "";
  if (/^ERR_POSTGRES_(CONNECTION|SOCKET|.*TIMEOUT|IDLE|LIFETIME|SERVER_CLOSED|TLS)/.test(code)) return true;
  if (/^(ECONN|EPIPE|ETIMEDOUT|ENOTFOUND|EHOSTUNREACH|ENETUNREACH)/.test(code)) return true;
  const state = sqlState(err) ?? "";
  if (state.startsWith("08") || state === "57P01" || state === "57P02" || state === "57P03") return true;
  // Insufficient resources (53300 too many connections, 53100 disk full, 53200 out of memory): the
  // database cannot serve this instance now; it serves from memory and keeps its writes until it can.
  if (state.startsWith("53")) return true;
  return false;
}

/** The reason a change's reservation is given up with when its bound passes ({@link PgContext.change}). */
const STOPPED = new StoreError("unavailable", "the change was stopped: its bound passed");

/**
 * Whether a change's error is its stop's doing: the reservation given up, a statement never sent
 * (`ERR_POSTGRES_QUERY_CANCELLED`) or cancelled by the server (SQLSTATE 57014, query_canceled).
 */
function wasStopped(err: unknown): boolean {
  if (err === STOPPED) return true;
  return (err as { code?: unknown } | null)?.code === "ERR_POSTGRES_QUERY_CANCELLED" || sqlState(err) === "57014";
}

/** What every PostgreSQL role holds: the pool, the instance id, the clock, degraded-mode state. */
export class PgContext {
  /** This instance's id in leases, notifications and usage rows (random per process unless given). */
  readonly instanceId: string;
  /** Set by the store's `close`. */
  closed = false;
  /** False while the database cannot be reached (memory-only operation). */
  reachable = true;
  /** Write-through calls dropped because the outbox overflowed during an outage. */
  outboxDropped = 0;
  /**
   * How long a read ({@link read}) may go unanswered, ms: the caller then gets StoreError `unavailable`
   * (the admin API's 503) and {@link checkStall} runs. Default {@link SHARED_ANSWER_MS} (10 s).
   */
  answerMs = SHARED_ANSWER_MS;
  /** A stall check ({@link checkStall}) is on its way. */
  private stallCheck = false;
  /** When the last stall check was sent (ms since the epoch, `Date.now`), for {@link checkNow}'s rate. */
  private lastCheckAt = 0;
  private outbox: Write[] = [];
  private probeTimer: ReturnType<typeof setInterval> | undefined;
  private readonly listeners = new Set<(change: StoreChange) => void>();
  private readonly recoveredHooks: Array<() => Promise<void> | void> = [];
  private readonly probeChecks: Array<() => Promise<boolean>> = [];
  /** Probe statements sent that have not answered (they timed out). */
  private stalledProbes = 0;
  private pendingNotify = new Set<StoreChange>();
  private notifyScheduled = false;
  private subscription: SQL.ListenSubscription | undefined;
  /** What {@link listen} was given (the re-LISTEN after a lost connection calls it with "all"). */
  private onNotice: ((change: StoreChange) => void) | undefined;
  private relistenTimer: ReturnType<typeof setTimeout> | undefined;
  private relistenMs = RELISTEN_MIN_MS;
  /** A re-LISTEN is on its way (one at a time). */
  private relistening = false;

  /**
   * @param sql the pool (Bun's SQL client)
   * @param now ms since the epoch
   * @param onError receives failures of background work and degraded-mode notices (no secrets)
   * @param instanceId this process's id (the gateway's, also OpenTelemetry's `service.instance.id`); default a new UUID
   * @param listenSql the client holding the LISTEN (its `onclose` calls {@link connectionClosed}; only its
   *   dedicated listening connection ever opens); default `sql`
   * @param checkSql the client of {@link checkStall}'s `SELECT 1` (one connection of its own, so that the
   *   check measures the database, not a pool whose connections wait on slow statements); closed by
   *   {@link stopProbe} once the store is closed; default `sql`
   */
  /**
   * Receives the `database reachable again` line (the end of an outage: info, not a failure); default
   * {@link onError}. The store sets it to its `onInfo`.
   */
  sayBack: (message: string) => void;

  /**
   * Runs just before the `database reachable again` line: the store settles the app's queued
   * bookkeeping there (PendingWrites.settle), so that the rows it records while the buffers are still
   * full, refused at their cap, are counted in that line, not in the first flush's after it.
   */
  beforeBack: () => void = () => {};

  constructor(
    readonly sql: SQL,
    readonly now: () => number,
    readonly onError: (message: string, error: unknown) => void,
    instanceId?: string,
    readonly listenSql: SQL = sql,
    readonly checkSql: SQL = sql,
  ) {
    this.instanceId = instanceId ?? crypto.randomUUID();
    this.sayBack = (message) => onError(message, undefined);
  }

  /** @throws StoreError `closed` once the store is closed. */
  assertOpen(): void {
    if (this.closed) throw new StoreError("closed", "the store is closed");
  }

  /**
   * Runs a read (or a statement the caller waits for that is not stopped at the bound: leases, claims,
   * counters, whose `late` gives back what was granted late; the admin API's changes use {@link change}).
   * @throws StoreError `unavailable`
   * when the database cannot be reached (and enters degraded mode) or leaves the statement unanswered
   * for {@link answerMs} (then {@link checkStall}; the statement may still complete later: `late`
   * then receives what it returned, e.g. to give back a lease granted after the caller gave up), the
   * statement's error otherwise.
   */
  async read<T>(fn: (sql: SQL) => Promise<T>, late: (value: T) => void = () => {}): Promise<T> {
    this.assertOpen();
    if (!this.reachable) throw new StoreError("unavailable", UNAVAILABLE_MESSAGE);
    let got: { value: T } | undefined;
    try {
      got = await answerWithin(fn(this.sql), this.answerMs, late);
    } catch (err) {
      if (isUnavailable(err)) {
        this.degrade(err);
        throw new StoreError("unavailable", UNAVAILABLE_MESSAGE);
      }
      throw err;
    }
    if (got) return got.value;
    // A stalled database (connections open, no answer) or a slow statement (a lock, a busy server): the
    // caller hears "cannot be reached" now, and a bounded SELECT 1 on a connection of its own tells a
    // stall (degraded mode) from a slow statement (nothing more). A read is not cancelled (a change is:
    // see `change`); it keeps its pool connection until it completes, and `late` may undo it.
    this.checkStall(`the database did not answer a statement within ${this.answerMs} ms`);
    throw new StoreError("unavailable", UNAVAILABLE_MESSAGE);
  }

  /**
   * Runs a change the caller waits for (the admin API's: keys, accounts, routing objects, settings,
   * dashboard sessions, usage prune, the instance's config), bounded like {@link read}, but stopped
   * when the bound passes, so that the caller's "not done" is true: `fn`'s statements run on a
   * connection reserved for them (no other statement is pipelined with them, so Bun sends the server
   * a cancel for the running one), and when {@link answerMs} passes the reservation is given up if
   * still waiting, the running statement is cancelled (PostgreSQL rolls it back, and the transaction
   * it runs in: `sql.begin` then rolls back) and a statement the change would send next is never
   * sent. It then waits for the outcome, at most {@link CANCEL_ANSWER_MS}: a statement cancelled (or
   * never sent) throws StoreError `unavailable` ("not done", and it was not); one that ended first
   * (committed just before the cancel landed) returns its value, as if answered in time; no outcome
   * (a stalled server: the cancel request is not read either, and may still land or not when it
   * resumes) throws `unavailable` too, and `late` receives the value if it commits after all (the
   * keys' undo). {@link checkStall} runs when the bound passes, as for a read.
   * @throws StoreError `closed`, `unavailable`; the statement's own error otherwise.
   */
  async change<T>(fn: (sql: SQL) => Promise<T>, late: (value: T) => void = () => {}): Promise<T> {
    this.assertOpen();
    if (!this.reachable) throw new StoreError("unavailable", UNAVAILABLE_MESSAGE);
    const stop = new AbortController();
    let tracked: TrackedStatements | undefined;
    const work = (async () => {
      const conn = await this.sql.reserve({ signal: stop.signal });
      try {
        if (stop.signal.aborted) throw stop.signal.reason; // reserved just as the bound passed: nothing sent
        tracked = trackStatements(conn);
        return await fn(tracked.sql);
      } finally {
        void conn.release().catch(() => {});
      }
    })();
    const settled = work.then(
      (value): { value: T } | { error: unknown } => ({ value }),
      (error: unknown): { value: T } | { error: unknown } => ({ error }),
    );
    let got = (await answerWithin(settled, this.answerMs, () => {}))?.value;
    let stopped = false;
    if (!got) {
      stopped = true;
      stop.abort(STOPPED);
      tracked?.cancel();
      this.checkStall(`the database did not answer a statement within ${this.answerMs} ms`);
      got = (await answerWithin(settled, Math.min(CANCEL_ANSWER_MS, this.answerMs), () => {}))?.value;
      if (!got) {
        // No outcome (a stalled server): it may still commit; `late` then hears of it.
        void settled.then((o) => {
          if ("value" in o) late(o.value);
        });
        throw new StoreError("unavailable", UNAVAILABLE_MESSAGE);
      }
    }
    if ("value" in got) return got.value;
    const err = got.error;
    if (stopped && wasStopped(err)) throw new StoreError("unavailable", UNAVAILABLE_MESSAGE);
    if (isUnavailable(err)) {
      this.degrade(err);
      throw new StoreError("unavailable", UNAVAILABLE_MESSAGE);
    }
    throw err;
  }

  /**
   * Runs a write-through statement and announces `change` to the other instances. While the database
   * cannot be reached the statement is kept (in order) and replayed when it returns; the call then
   * resolves at once (memory already holds the state). A statement unanswered for {@link answerMs}
   * enters degraded mode and is kept likewise. A rejected statement throws.
   */
  async write(change: StoreChange | undefined, fn: Write): Promise<void> {
    this.assertOpen();
    if (!this.reachable) {
      this.keep(fn, change);
      return;
    }
    let got: { value: unknown } | undefined;
    try {
      got = await answerWithin(fn(this.sql), this.answerMs, () => {});
    } catch (err) {
      if (!isUnavailable(err)) throw err;
      this.degrade(err);
      this.keep(fn, change);
      return;
    }
    if (!got) {
      // Unanswered (a stalled database): away, as for a flush. The statement may still commit; it is
      // kept and replayed after it (in order: a stalled server runs what it had received first), which
      // writes the same values again.
      this.degrade(new StoreError("unavailable", `the database did not answer a write within ${this.answerMs} ms`));
      this.keep(fn, change);
      return;
    }
    if (change) this.announce(change);
  }

  /** Announces a change to the other instances (coalesced per macrotask). Never throws. */
  announce(change: StoreChange): void {
    this.pendingNotify.add(change);
    if (this.notifyScheduled) return;
    this.notifyScheduled = true;
    setTimeout(() => {
      this.notifyScheduled = false;
      const kinds = [...this.pendingNotify];
      this.pendingNotify.clear();
      if (this.closed || !this.reachable) return;
      for (const k of kinds) {
        this.sql.notify(CHANNEL, JSON.stringify({ i: this.instanceId, k })).catch((err) => {
          if (isUnavailable(err)) this.degrade(err);
        });
      }
    }, 0);
  }

  /** Adds a change listener (see `SharedStore.onChange`). */
  onChange(listener: (change: StoreChange) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Tells local listeners about a change (another instance's, "all" after a gap, or the periodic "state"). */
  dispatch(change: StoreChange): void {
    for (const l of this.listeners) {
      try {
        l(change);
      } catch (err) {
        this.onError(`change listener failed: ${errMessage(err)}`, err);
      }
    }
  }

  /**
   * Registers a check the probe runs before the database counts as back (after `SELECT 1` and the
   * outbox replay): false or a throw = still away. The flusher's replay of its kept batch is one.
   */
  onProbe(check: () => Promise<boolean>): void {
    this.probeChecks.push(check);
  }

  /** Registers work to run when the database is back (after the outbox replay): flush, reload caches. */
  onRecovered(hook: () => Promise<void> | void): void {
    this.recoveredHooks.push(hook);
  }

  /**
   * Subscribes to the change channel. After a reconnect of the listening connection (notifications
   * may have been missed) `onChange` hears "all". @throws the client's error when it cannot LISTEN.
   */
  async listen(onChange: (change: StoreChange) => void): Promise<void> {
    this.onNotice = onChange;
    this.subscription = await this.listenSql.listen(CHANNEL, (payload) => {
      try {
        const m = JSON.parse(payload) as { i?: string; k?: StoreChange };
        if (m.i === this.instanceId || typeof m.k !== "string") return;
        this.onNotice?.(m.k);
      } catch {
        // not ours
      }
    });
  }

  /**
   * The listening connection closed ({@link listenSql}'s `onclose`; `err` says why): the subscription is
   * dropped now (before Bun's own retry, which logs a line that is not JSON at each failure) and taken
   * again by {@link relisten}. Idle and lifetime timeouts are ignored (the listening connection has
   * neither); without a subscription (a re-LISTEN on its way) it waits.
   */
  connectionClosed(err: Error | null): void {
    if (this.closed || !this.subscription || !this.onNotice) return;
    const code = (err as { code?: unknown } | null)?.code;
    if (code === "ERR_POSTGRES_IDLE_TIMEOUT" || code === "ERR_POSTGRES_LIFETIME_TIMEOUT") return;
    const lost = this.subscription;
    this.subscription = undefined;
    // unlisten() clears Bun's retry timer before it returns (the channel's last subscriber is gone)
    void lost.unlisten().catch(() => {});
    this.relisten(RELISTEN_MIN_MS);
  }

  /** Takes the change channel again after `delayMs` (jittered ±25 %), doubling the wait after each failure. */
  private relisten(delayMs: number): void {
    if (this.closed || this.subscription || this.relistenTimer || this.relistening || !this.onNotice) return;
    this.relistenTimer = setTimeout(() => {
      this.relistenTimer = undefined;
      if (this.closed || this.subscription || this.relistening || !this.onNotice) return;
      this.relistening = true;
      this.listen(this.onNotice).then(
        () => {
          this.relistening = false;
          this.relistenMs = RELISTEN_MIN_MS;
          if (this.closed) void this.unlisten();
          else this.onNotice?.("all"); // notifications sent meanwhile were missed
        },
        (err) => {
          this.relistening = false;
          if (isUnavailable(err)) this.degrade(err);
          else this.onError(`listening for other instances' changes failed (${errMessage(err)}); trying again`, err);
          this.relistenMs = Math.min(this.relistenMs * 2, RELISTEN_MAX_MS);
          this.relisten(this.relistenMs);
        },
      );
    }, delayMs * (0.75 + Math.random() * 0.5));
    this.relistenTimer.unref?.();
  }

  /**
   * Tells a stalled database (sockets open, nothing answers: a paused server, a network partition) from
   * a slow statement: a `SELECT 1` unanswered within {@link PROBE_ANSWER_MS} (or failing for want of the
   * database) enters degraded mode with `why`. It runs on {@link checkSql}'s connection, not the pool's:
   * slow statements holding every pool connection (a table lock; each keeps its connection until it
   * completes) would keep it waiting for a connection although the database answers. One at a time;
   * never throws.
   */
  checkStall(why: string): void {
    if (this.stallCheck || !this.reachable || this.closed) return;
    this.stallCheck = true;
    this.lastCheckAt = Date.now();
    let ping: Promise<unknown>;
    try {
      ping = Promise.resolve(this.checkSql`SELECT 1`);
    } catch (err) {
      this.stallCheck = false;
      if (isUnavailable(err)) this.degrade(err);
      return;
    }
    void answerWithin(ping, PROBE_ANSWER_MS, () => {})
      .then(
        (got) => {
          if (!got) this.degrade(new StoreError("unavailable", `${why}, nor a SELECT 1 within ${PROBE_ANSWER_MS} ms`));
        },
        (err) => {
          if (isUnavailable(err)) this.degrade(err);
        },
      )
      .finally(() => {
        this.stallCheck = false;
      });
  }

  /**
   * A stall check ({@link checkStall}) for `GET /health`, at most one every {@link HEALTH_CHECK_MS}:
   * an idle instance (no flush, no query) notices a stalled database within that and
   * {@link PROBE_ANSWER_MS}. Never throws.
   */
  checkNow(): void {
    if (Date.now() - this.lastCheckAt < HEALTH_CHECK_MS) return;
    this.checkStall("the database did not answer");
  }

  /** Enters degraded mode (once per outage): a warning, then a probe every second until it answers. */
  degrade(err: unknown): void {
    if (!this.reachable || this.closed) return;
    this.reachable = false;
    this.onError(`database unreachable (${errMessage(err)}): serving from memory; writes are kept and replayed when it returns`, err);
    this.probeTimer = setInterval(() => void this.probe(), 1000);
    this.probeTimer.unref?.();
  }

  /**
   * Stops the probe and a pending re-LISTEN (recovery, close); once {@link closed}, also closes
   * {@link checkSql}'s connection (when it is a client of its own; a check on its way then fails quietly).
   */
  stopProbe(): void {
    if (this.probeTimer) clearInterval(this.probeTimer);
    this.probeTimer = undefined;
    if (this.relistenTimer) clearTimeout(this.relistenTimer);
    this.relistenTimer = undefined;
    if (this.closed && this.checkSql !== this.sql) void this.checkSql.close({ timeout: 0 }).catch(() => {});
  }

  /** Unsubscribes from the change channel. Never throws. */
  async unlisten(): Promise<void> {
    try {
      await this.subscription?.unlisten();
    } catch {
      // closing anyway
    }
    this.subscription = undefined;
  }

  private keep(fn: Write, change: StoreChange | undefined): void {
    this.outbox.push(change ? async (sql) => {
      await fn(sql);
      this.announce(change);
    } : fn);
    if (this.outbox.length > MAX_OUTBOX) {
      this.outbox.shift();
      this.outboxDropped++;
    }
  }

  private probing = false;

  /** One recovery attempt: answer a trivial query, replay the outbox in order, run the catch-up hooks. */
  private async probe(): Promise<void> {
    if (this.probing || this.closed || this.stalledProbes >= MAX_STALLED_PROBES) return;
    this.probing = true;
    try {
      const ping = this.sql`SELECT 1`;
      if (!(await answerWithin(ping, PROBE_ANSWER_MS, () => {}))) {
        // Stalled: still away. The statement is left to answer (counted until it does).
        this.stalledProbes++;
        void Promise.resolve(ping).then(
          () => this.stalledProbes--,
          () => this.stalledProbes--,
        );
        return;
      }
      while (this.outbox.length) {
        const fn = this.outbox[0]!;
        try {
          await fn(this.sql);
        } catch (err) {
          if (isUnavailable(err)) return;
          this.onError(`a write kept during the outage was rejected: ${errMessage(err)}`, err);
        }
        this.outbox.shift();
      }
      for (const check of this.probeChecks) if (!(await check())) return;
      this.stopProbe();
      this.reachable = true;
      this.beforeBack();
      this.sayBack("database reachable again: kept writes replayed, catching up");
      // listening again now, not at the end of the re-LISTEN's back-off (stopProbe cleared its timer)
      this.relistenMs = RELISTEN_MIN_MS;
      this.relisten(0);
      for (const hook of this.recoveredHooks) {
        try {
          await hook();
        } catch (err) {
          this.onError(`catch-up after the outage failed: ${errMessage(err)}`, err);
        }
      }
      this.announce("all");
    } catch {
      // still away
    } finally {
      this.probing = false;
    }
  }

  /** Write-through calls waiting for the database. */
  get keptWrites(): number {
    return this.outbox.length;
  }
}
