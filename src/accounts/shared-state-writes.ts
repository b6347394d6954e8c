/**
 * Account-state writes to a shared PostgreSQL (SPEC D-2) that the database rejects: a lock, a cooldown, a
 * removed account/model pairing or a provider circuit (SPEC 6.3) written through by the registry, and the
 * delete of an account's quota windows when its key or login changed (`quotas␀ACCOUNT`, since session 45). A write
 * refused because the database is away or full (connection errors, SQLSTATE classes 08 and 53) never
 * reaches here: src/store/postgres/db.ts keeps it in its outbox and replays it (test/store/pg-state-write-refused.test.ts).
 * Any other rejection was swallowed until session 43 (the registry's `.catch(() => {})`): the database kept
 * no row, other instances never saw the change, this one forgot it at its next re-read, and no line said so.
 *
 * Here, per row key (as src/accounts/retry-writes.ts: `lock␀ACCOUNT`, `cooldown␀ACCOUNT␀MODEL`,
 * `cooldowns␀ACCOUNT`, `removed␀ACCOUNT␀MODEL`, `removed␀ACCOUNT`, `circuit␀PROVIDER`) and per line
 * ({@link lineOf}: an account's lock, its cooldowns, its removals; a provider's circuit):
 * - a write is sent at once when no earlier write of its line is on its way; otherwise it waits behind
 *   it, and only the newest write of each row waits (a later one replaces it and goes last), so a line's
 *   writes reach the database in the order they were made and an old state never follows a newer one;
 * - a transient rejection ({@link TRANSIENT_SQLSTATES}: a serialization failure, a deadlock, a lock not
 *   available, a statement timeout) is tried again, at most {@link STATE_WRITE_TRIES} tries in all, after
 *   {@link STATE_WRITE_BACKOFF_MS} doubling (±50 %), unless a newer write of the same row waits (it
 *   replaces it) or the row was cleared by hand meanwhile ({@link SharedStateWrites.forget}). The writes
 *   are idempotent upserts and deletes of one row (src/store/postgres/account-state.ts), and this
 *   instance's newest change of the row: another instance's later change of it is the usual last-writer race;
 * - any other rejection (P0001 raised by a trigger, 23xxx constraint, 42xxx, …), or a transient one
 *   still failing at its last try, is dropped: one `error` line ({@link rejectedStateWriteLine}: kind,
 *   account or provider id, model, SQLSTATE, the database's message) and counted
 *   ({@link SharedStateWrites.dropped}: the stop's lost state changes and `switchyard_store_dropped_total`);
 * - a write the store refuses because it is closed (after a stop's last flush) is counted as lost too
 *   ({@link SharedStateWrites.refusedAtClose}), with the stop's writes still on their way.
 * While a write waits (queued, in flight or between tries) what it did to memory is done again after each
 * re-read ({@link SharedStateWrites.reapply}), as for the embedded store's refused writes.
 */
import { errMessage } from "../store/rows.ts";
import { sqlState } from "../store/sql-state.ts";
import { StoreError, type Store } from "../store/types.ts";
import { lineOf } from "./retry-writes.ts";

/** SQLSTATEs tried again: serialization_failure, deadlock_detected, lock_not_available, query_canceled (a statement timeout). */
export const TRANSIENT_SQLSTATES: ReadonlySet<string> = new Set(["40001", "40P01", "55P03", "57014"]);
/** Tries of a write rejected with a {@link TRANSIENT_SQLSTATES} state, the first included. */
export const STATE_WRITE_TRIES = 5;
/** Wait before the second try, ms; doubled before each further one (±50 %): about 0.75 s over the five tries. */
export const STATE_WRITE_BACKOFF_MS = 50;

/** Whether a write's rejection is tried again: its SQLSTATE is one of {@link TRANSIENT_SQLSTATES}. */
export function isTransient(err: unknown): boolean {
  const state = sqlState(err);
  return state !== undefined && TRANSIENT_SQLSTATES.has(state);
}

/** The wait after try number `tries` (1 for the first) before the next, ms: {@link STATE_WRITE_BACKOFF_MS} doubled per try, ±50 %. */
export function backoffMs(tries: number): number {
  return STATE_WRITE_BACKOFF_MS * 2 ** (tries - 1) * (0.5 + Math.random());
}

/** What a change made by hand is, for its error when the database refuses it ({@link writeTryingAgain}). */
export interface HandChange {
  /** The change, e.g. "the unlock of account a1". */
  change: string;
  /** What holds since it was not done, e.g. "the account stays locked". */
  stays: string;
}

/**
 * The error of a change made by hand the database refused (a trigger's P0001, a constraint, or a
 * transient SQLSTATE still refused at the last try): StoreError `rejected` (the admin API's 503
 * `store_rejected`, src/http/server.ts) saying what was not done, the SQLSTATE and the database's message
 * (cut at 300 characters, as {@link rejectedStateWriteLine}). The message is the server's own for a
 * DELETE of a lock, circuit or removed-pairing row: those rows hold ids and reasons, no credentials,
 * and the connection's password is never in a server message (a login refusal never reaches here: the
 * pool's connection errors are `unavailable`).
 */
export function refusedChangeError(err: unknown, hand: HandChange, tries: number): StoreError {
  const state = sqlState(err);
  const message = errMessage(err);
  const said = message.length > 300 ? message.slice(0, 300) + "…" : message;
  const tried = tries > 1 ? `still refused after ${tries} tries` : "not tried again";
  return new StoreError("rejected", `The database refused ${hand.change} (SQLSTATE ${state}: ${said}; ${tried}), so it was not done: ${hand.stays}. Try again once the database accepts the change.`);
}

/**
 * A state change made by hand and awaited (`switchyard accounts unlock`, `close-circuit`, `restore`,
 * and the admin API's routes behind them: src/accounts/registry.ts `unlock`, `closeCircuit`,
 * `restorePairings`): `write` tried again on a transient rejection, as the background writes are
 * ({@link STATE_WRITE_TRIES} tries in all, {@link backoffMs} between them). Until session 44 a
 * serialization failure or a lock timeout was the command's error at once. `sleep`: tests shorten it.
 * `hand`: what the change is; given, a rejection with a SQLSTATE is thrown as {@link refusedChangeError}
 * (until session 44 the admin API answered it with its generic 500, no reason).
 * @returns what `write` returns
 * @throws any other rejection at once, a transient one still failing at its last try (StoreError
 *   `rejected` when `hand` is given and the error carries a SQLSTATE; the store's own StoreError as it is)
 */
export async function writeTryingAgain<T>(write: () => T | PromiseLike<T>, sleep: (ms: number) => Promise<unknown> = (ms) => Bun.sleep(ms), hand?: HandChange): Promise<T> {
  for (let tries = 1; ; tries++) {
    try {
      return await write();
    } catch (err) {
      if (tries >= STATE_WRITE_TRIES || !isTransient(err)) {
        if (hand && !(err instanceof StoreError) && sqlState(err) !== undefined) throw refusedChangeError(err, hand, tries);
        throw err;
      }
      await sleep(backoffMs(tries));
    }
  }
}

/**
 * How long a stop waits at most for the writes still on their way ({@link SharedStateWrites.settled}), ms:
 * longer than a transient rejection's tries; a stalled database's statement is not waited for (the
 * store keeps it once it notices the stall) and leaves the grace period to the store's last flush.
 */
export const SETTLE_AT_STOP_MS = 2_000;

/** A state write the database rejected, dropped (lost): what {@link rejectedStateWriteLine} says. */
export interface RejectedStateWrite {
  /** `lock`, `cooldown`, `removal`, `circuit`, or `quotas` (the delete of an account's quota windows for a new key or login). */
  kind: "lock" | "cooldown" | "removal" | "circuit" | "quotas";
  accountId?: string;
  providerId?: string;
  /** The model of a cooldown or removal row; absent for one that is about all of an account's. */
  model?: string;
  /** The database's SQLSTATE (Bun's PostgresError `errno`); absent when the error carried none. */
  sqlstate?: string;
  /** The database's message (no values of the row but its ids; no credentials are in these rows). */
  error: string;
  /** Tries made (1 for a rejection that is not tried again). */
  tries: number;
}

/** One write of a row: the store call and what it did to memory. */
interface Pending {
  key: string;
  write: (store: Store) => unknown;
  apply?: () => void;
  /** Cleared by hand meanwhile ({@link SharedStateWrites.forget}): not tried again. */
  forgotten?: boolean;
}

/** A line's write on its way (in flight or between tries) and the writes waiting behind it, by row key, in order. */
interface Line {
  current: Pending;
  queue: Map<string, Pending>;
}

/** The row a key names, for the rejected-write line. */
function rowOf(key: string): Pick<RejectedStateWrite, "kind" | "accountId" | "providerId" | "model"> {
  const [kind = "", id = "", model] = key.split("\u0000");
  if (kind === "circuit") return { kind: "circuit", providerId: id };
  if (kind === "quotas") return { kind: "quotas", accountId: id };
  const k = kind === "removed" ? "removal" : kind === "lock" ? "lock" : "cooldown";
  return model === undefined ? { kind: k, accountId: id } : { kind: k, accountId: id, model };
}

/** What the line names: "account a1's lock", "account a1's cooldown of model m", "provider p's circuit", … */
function rowName(r: Pick<RejectedStateWrite, "kind" | "accountId" | "providerId" | "model">): string {
  if (r.kind === "circuit") return `provider ${r.providerId}'s circuit`;
  if (r.kind === "lock") return `account ${r.accountId}'s lock`;
  if (r.kind === "quotas") return `account ${r.accountId}'s quota windows (their delete for a new key or login)`;
  const what = r.kind === "removal" ? "removed pairing" : "cooldown";
  return r.model === undefined ? `account ${r.accountId}'s ${what}s (all of them)` : `account ${r.accountId}'s ${what} of model ${r.model}`;
}

/**
 * The `error` log line of a dropped state write (JSON; `time` ms since the epoch): what was lost, the
 * SQLSTATE and the database's message (cut at 300 characters), the tries, and the fields `kind`,
 * `accountId` / `providerId`, `model`, `sqlstate`, `error`, `tries`.
 */
export function rejectedStateWriteLine(r: RejectedStateWrite, time: number): string {
  const error = r.error.length > 300 ? r.error.slice(0, 300) + "…" : r.error;
  const state = r.sqlstate ? `SQLSTATE ${r.sqlstate}: ${error}` : error;
  const tried = r.tries > 1 ? `after ${r.tries} tries` : "not tried again";
  const lost =
    r.kind === "quotas"
      ? "the change is lost (the database keeps the old credential's windows until they reset, and this instance and the others read them again at their next re-read of the state; counted in switchyard_store_dropped_total)"
      : "the change is lost (the database keeps no row of it, other instances do not see it, and this one forgets it at its next re-read of the state; counted in switchyard_store_dropped_total)";
  const msg = `the database rejected the write of ${rowName(r)} (${state}), ${tried}: ${lost}`;
  return JSON.stringify({ level: "error", time, msg, ...r, error });
}

/** The state writes of one registry on a shared store (see the module comment). */
export class SharedStateWrites {
  /** By line ({@link lineOf}). */
  private readonly lines = new Map<string, Line>();
  private rejected = 0;
  private refusedClosed = 0;

  /**
   * @param onRejected receives each dropped write (the registry logs it: {@link rejectedStateWriteLine})
   * @param sleep waits between tries (tests shorten it)
   */
  constructor(
    private readonly onRejected: (r: RejectedStateWrite) => void,
    private readonly sleep: (ms: number) => Promise<unknown> = (ms) => Bun.sleep(ms),
  ) {}

  /** How many writes are on their way or wait behind one. */
  get size(): number {
    let n = 0;
    for (const l of this.lines.values()) n += 1 + l.queue.size;
    return n;
  }

  /** How many writes were lost since the start: those the database rejected ({@link rejectedCount}) and those the closed store refused ({@link refusedAtClose}). */
  get dropped(): number {
    return this.rejected + this.refusedClosed;
  }

  /** How many writes the database rejected since the start (each said in its `error` line then). */
  get rejectedCount(): number {
    return this.rejected;
  }

  /**
   * How many writes the store refused because it was closed (a stop's last flush done): still on their
   * way (between tries, or sent after the stop counted them) when it closed; lost. Until session 44
   * they were left uncounted.
   */
  get refusedAtClose(): number {
    return this.refusedClosed;
  }

  /**
   * Sends `write` to `store` now (synchronously up to its first await), or queues it behind the write of
   * its line on its way (replacing a queued write of the same row). `apply`: what it did to memory. Never throws.
   */
  persist(store: Store, key: string, write: (store: Store) => unknown, apply?: () => void): void {
    const name = lineOf(key);
    const p: Pending = { key, write, apply };
    const l = this.lines.get(name);
    if (l) {
      l.queue.delete(key);
      l.queue.set(key, p);
      return;
    }
    const line: Line = { current: p, queue: new Map() };
    this.lines.set(name, line);
    void this.run(store, name, line);
  }

  /** The writes go by themselves: how many are on their way or wait. */
  retry(_store: Store): number {
    return this.size;
  }

  /** Does again what each write on its way or waiting did to memory, in order (after a re-read). */
  reapply(): void {
    for (const l of this.lines.values()) {
      if (!l.current.forgotten) l.current.apply?.();
      for (const p of l.queue.values()) p.apply?.();
    }
  }

  /** Whether a write of the row `key` is on its way or waits. */
  has(key: string): boolean {
    const l = this.lines.size > 0 ? this.lines.get(lineOf(key)) : undefined;
    return !!l && ((l.current.key === key && !l.current.forgotten) || l.queue.has(key));
  }

  /** Whether a write of a row of `kind` for `id` is on its way or waits. */
  waitsFor(kind: string, id: string): boolean {
    for (const key of this.keys()) {
      const [k, i] = key.split("\u0000");
      if (k === kind && i === id) return true;
    }
    return false;
  }

  /** Drops the waiting writes of the account's lock and cooldowns, and stops tries of the one on its way (cleared by hand, a new login, the account removed). */
  forgetAccount(accountId: string): void {
    this.drop((k, i) => i === accountId && (k === "lock" || k === "cooldown" || k === "cooldowns"));
  }

  /** Drops the waiting writes of the rows of `kind` for `id` (`kind␀id␀sub` only when `sub` is given), and stops tries of the one on its way. */
  forget(kind: string, id: string, sub?: string): void {
    this.drop((k, i, s) => k === kind && i === id && (sub === undefined || s === sub));
  }

  /** Resolves when no write is on its way or waits, or at `until()` (ms since the epoch), or after {@link SETTLE_AT_STOP_MS}, whichever comes first. */
  async settled(until: () => number): Promise<void> {
    const by = Date.now() + SETTLE_AT_STOP_MS;
    while (this.lines.size > 0 && Date.now() < Math.min(until(), by)) await Bun.sleep(10);
  }

  private *keys(): Iterable<string> {
    for (const l of this.lines.values()) {
      if (!l.current.forgotten) yield l.current.key;
      yield* l.queue.keys();
    }
  }

  private drop(match: (kind: string, id: string, sub: string | undefined) => boolean): void {
    for (const l of this.lines.values()) {
      const split = (key: string) => key.split("\u0000") as [string, string, string | undefined];
      if (match(...split(l.current.key))) l.current.forgotten = true;
      for (const key of [...l.queue.keys()]) if (match(...split(key))) l.queue.delete(key);
    }
  }

  /** Writes the line's writes one after another, then removes the line. */
  private async run(store: Store, name: string, line: Line): Promise<void> {
    try {
      for (;;) {
        await this.attempt(store, line);
        const next = line.queue.entries().next();
        if (next.done) break;
        line.queue.delete(next.value[0]);
        line.current = next.value[1];
      }
    } finally {
      this.lines.delete(name);
    }
  }

  /** Writes the line's current write, trying a transient rejection again; a rejection dropped is said and counted. */
  private async attempt(store: Store, line: Line): Promise<void> {
    const p = line.current;
    for (let tries = 1; ; tries++) {
      let err: unknown;
      try {
        await p.write(store);
        return;
      } catch (e) {
        err = e;
      }
      // A newer write of the row replaces it (goes next), or the row was cleared by hand meanwhile.
      if (p.forgotten || line.queue.has(p.key)) return;
      // The store closed (a stop): lost, counted with the writes still on their way at the stop (no line of its own: the stop's says it).
      if (err instanceof StoreError && err.code === "closed") {
        this.refusedClosed++;
        return;
      }
      const sqlstate = sqlState(err);
      if (isTransient(err) && tries < STATE_WRITE_TRIES) {
        await this.sleep(backoffMs(tries));
        if (p.forgotten || line.queue.has(p.key)) return;
        continue;
      }
      this.rejected++;
      try {
        this.onRejected({ ...rowOf(p.key), ...(sqlstate ? { sqlstate } : {}), error: errMessage(err), tries });
      } catch {
        // the log's failure is not the write's
      }
      return;
    }
  }
}
