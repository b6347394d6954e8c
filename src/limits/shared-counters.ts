/**
 * {@link KeyLimitCounters} across instances (SPEC 9.6, D-2: "per-key limits count across instances";
 * "the hot path reads memory, never waits on a database round trip") by leased local quotas over the
 * store's coordination role (src/store/shared.ts, `setQuotaShare` / `reportQuotaUse`):
 *
 * - Every limit of a key is a pool in the database: rpm = requests per fixed minute window, tpm = tokens
 *   per fixed minute window, a budget = tokens or USD per fixed window of its length opened by the
 *   key's first counted request after the previous one ended (SPEC 2.3; the database keeps its start,
 *   so every instance agrees: src/limits/track-budget-windows.ts), concurrency = slots. Windows follow
 *   the database's clock (the offset is learned from every answer).
 * - Each instance holds a share of each pool it serves and admits from that share in memory: a request
 *   is admitted when every limit's share has room (rpm: an unused request; tpm, budgets: use below the
 *   share and the window's known total below the limit; concurrency: a free slot).
 * - Refills run ahead of need, in the background: when a share's spare room drops under half of its
 *   block (block = an eighth of the limit, at least one request or token; concurrency keeps no spare
 *   slot below 8), the instance asks for `used + block`. The database grants what is left when others
 *   hold the rest (one statement, `switchyard_quota_share`). Near a minute window's end (last 5 s) the
 *   next minute's share is taken ahead (a budget's next window opens at first use, one round trip
 *   more). A key idle on this instance for 5 s gives its spare back.
 * - Use is reported every second in one batched statement (and at once when a share overran), which
 *   also brings back the other instances' use (budget alerts, `budgetUse`, the tpm/budget check), with
 *   a USD budget share's count of requests a model without a price served (`BudgetUse.unpriced`): the
 *   shares whose use changed here go in, the pools the other instances have shares of come out
 *   (`exchangeQuotaUse`), so a watched key nobody uses costs nothing.
 * - Shares are renewed with the store's leases; an instance that dies stops renewing, and after ~15 s
 *   its share counts only its reported use (windows) or nothing (slots): the rest returns to the pool.
 *
 * Waiting: only when this instance has no room at all for a limit (no share yet: the key's first
 * request here, a new window that was not taken ahead, or a share used up) does `admit` wait for one
 * database round trip (coalesced per share) and decide from its answer; a share the database could not
 * refill less than a second ago is refused from memory without asking again.
 *
 * Exactness (stated in README "Running several instances"):
 * - rpm: the sum of shares never exceeds the limit, so while every instance lives a fixed minute window
 *   admits at most `rpm` requests across instances. An instance that dies took with it up to one
 *   block of admissions it had not reported yet (at most 1 s of them): those are granted again, so a
 *   window with a dead instance may admit up to one block more than `rpm` (block = max(1, ⌊rpm/8⌋)).
 *   Spare held by other instances is not lent: a window may refuse while up to one block per other
 *   instance is unused (given back after 5 s idle). As with the embedded counters across a boundary of
 *   fixed windows, any 60 s span may see up to 2 × rpm.
 * - tpm and budgets: tokens are known when a request ends, so each request in flight holds its expected
 *   spend (src/limits/key-means.ts `expected`) on the instance's share until it is settled. A request
 *   arriving while none of the key's is in flight on its instance is admitted while the share has room
 *   and the window's known use is under the limit; while some are, only when their reservations, its
 *   own and the window's use fit in the share (refilled first, one round trip) and under the limit,
 *   else it is refused with Retry-After 1 s (`inFlight`). Shares never sum past the limit, so a window
 *   may end over its limit by about one request per instance (the one admitted with none in flight
 *   there), by the estimates' error, and by what others settled since their last report (≤ 1 s); not
 *   by the number of requests in flight. Room another instance holds for its requests in flight is not
 *   lent: a request elsewhere is refused with Retry-After 1 s (`heldElsewhere`) until they end and
 *   the room returns (an instance gives back spare beyond two blocks as soon as it has it).
 * - concurrency: never more than the limit in flight across instances (below 8 every admission beyond
 *   the held slots asks the database; from 8 a busy instance keeps ⌊n/8⌋ spare slots the others cannot
 *   use until it gives them back). A share being given back loses its room at once, before the answer.
 * Keys this instance has not served (`SharedCountersOptions.keys`: every active key with limits) are
 * watched too: each second's report also reads the other instances' use in their budget and minute
 * windows, so this instance's budget use, minute use and budget alerts count them (`budgetUse` of a key
 * not read yet asks the database once). What the first report after start reads is taken as known, not
 * as crossings (the alerts were raised, or are raised, where the use happened).
 *
 * When the database cannot be reached (`StoreError` `unavailable`), or an admission's refill gets no
 * answer within `SHARED_ANSWER_MS` (10 s), the instance counts alone (degraded mode, logged once per
 * outage: src/limits/say-store-outage.ts) until the database answers the probe again, in the same
 * windows (aligned on the database's clock as last learned), from what it last knew: the others' use as last reported and its own, against the whole
 * limit (not its share; no spare to ask for), concurrency against the whole limit on this instance. So
 * a key at its budget stays refused, and each instance may admit up to what was left. When the probe
 * answers, the use counted meanwhile is reported (one row per instance and window, which only grows: it
 * is counted once) and the others' comes back with it. A stop while it is still away hands the budget
 * windows' unreported use to the store (`close`; the next start counts it back into each window still
 * current); the rpm/tpm minute windows' is lost.
 */
import { BUDGET_WINDOW_MS, keyId } from "../../pipeline/index.ts";
import type { BudgetChange, BudgetUse, ClientKey, KeyBudget, KeyLimitCounters, KeyLimits, LimitRefusal, MinuteUse, RequestEstimate } from "../../pipeline/ports.ts";
import { answerWithin, LEASE_TTL_MS, SHARED_ANSWER_MS, type SharedStore, type UnreportedBudgetUse } from "../store/shared.ts";
import { StoreError } from "../store/types.ts";
import { roundUsd } from "./dollars.ts";
import { decideAdmission, type Need, type Ticket } from "./decide-admission.ts";
import { KeyMeans } from "./key-means.ts";
import { monoNow, reportRow, shareAt, unreported, usedAll, type Share } from "./quota-share.ts";
import { endOf, retryUntil, settledBy, type RetryEnd } from "../retry-until.ts";
import { MINUTE, readMinuteUse } from "./read-minute-use.ts";
import { StoreOutageLines } from "./say-store-outage.ts";
import { BudgetWindowTracker } from "./track-budget-windows.ts";
import { blockOf, hasRoom, isRequests, knownShort, needsSync, SHORT_RETRY_MS } from "./weigh-shares.ts";

/** How often use is reported and idle spare given back, ms. */
const REPORT_MS = 1000;
/** A key unused this long on this instance gives its spare back, ms. */
const IDLE_MS = 5000;
/** The next window's share is taken this long before the window ends (at most a twelfth of it), ms. */
const AHEAD_MS = 5000;

/** Tuning of {@link SharedKeyCounters} (tests shorten the timers). */
export interface SharedCountersOptions {
  /** Report interval, ms (default 1000). */
  reportMs?: number;
  /** Idle time before spare is given back, ms (default 5000). */
  idleMs?: number;
  /** How long an admission waits for a refill before counting locally, ms (default `SHARED_ANSWER_MS`). */
  answerMs?: number;
  /** The keys to watch (every active key; those without limits are skipped), read at each report. */
  keys?: () => Iterable<Pick<ClientKey, "name" | "id" | "limits">>;
}

const budgetName = (key: string, b: KeyBudget) => `key:${key}:budget:${b.window}:${b.usd !== undefined ? "usd" : "tokens"}`;

/** Counts client key limits through leased shares of a shared store; see the module comment. */
export class SharedKeyCounters implements KeyLimitCounters {
  private degraded = false;
  /** The unreachable / reachable-again lines, once per outage. */
  private readonly outage: StoreOutageLines;
  private readonly shares = new Map<string, Share>();
  /** The budget windows known here (opened at first use; the database says when). */
  private readonly windows = new BudgetWindowTracker(this.shares);
  /** Watched budgets with no window known at the last watch pass (the report learns theirs when others open one). */
  private unknown = new Map<string, unknown>();
  private readonly inFlightHere = new Map<string, number>();
  /** The keys' recent spend per request here, for the holds of requests in flight (key-means.ts). */
  private readonly means = new KeyMeans();
  /** Database clock minus the local monotonic clock ({@link monoNow}), ms. */
  private offset = 0;
  private readonly timer: ReturnType<typeof setInterval>;
  private readonly idleMs: number;
  private reporting: Promise<void> | undefined;
  private ticking = false;
  private readonly answerMs: number;
  private readonly keys?: () => Iterable<Pick<ClientKey, "name" | "id" | "limits">>;
  /** Watch passes done ({@link watch}); 0 before the first. */
  private pass = 0;
  /**
   * Called when a report or refill brings back more use by the other instances in a budget's window:
   * the key, that step of the window's known use (`before` → `after`, tokens or USD) and now (ms on the
   * database's clock). With {@link settle}'s own steps, every threshold the instances' use crosses is
   * seen here within about a second (src/app.ts hands it to the alerts, SPEC 9.7).
   */
  onOthersBudgetChange?: (key: string, changes: BudgetChange[], now: number) => void;

  constructor(
    private readonly store: SharedStore,
    private readonly log: (line: string) => void = () => {},
    options: SharedCountersOptions = {},
  ) {
    this.idleMs = options.idleMs ?? IDLE_MS;
    this.answerMs = options.answerMs ?? SHARED_ANSWER_MS;
    this.keys = options.keys;
    this.outage = new StoreOutageLines(log);
    this.timer = setInterval(() => void this.tick(), options.reportMs ?? REPORT_MS);
    this.timer.unref?.();
  }

  // -- the port ---------------------------------------------------------------------------------

  /**
   * Admits from the shares in memory when every limit has room (no I/O, returns synchronously);
   * otherwise waits for the shares that have none to be refilled (one round trip) and decides then.
   */
  admit(key: string, limits: KeyLimits, now: number, estimate?: RequestEstimate): { ok: true; ticket: Ticket } | { ok: false; refusal: LimitRefusal } | Promise<{ ok: true; ticket: Ticket } | { ok: false; refusal: LimitRefusal }> {
    const want = this.means.expected(key, limits, estimate);
    const shares = this.sharesOf(key, limits, want);
    if (this.degraded) return this.decide(key, shares);
    const empty = shares.filter(([s, , n]) => !hasRoom(s, n, this.degraded) && !knownShort(s));
    if (empty.length === 0) {
      const d = this.decide(key, shares);
      return d.ok || !d.refusal.heldElsewhere ? d : this.recheckElsewhere(key, limits, want, d);
    }
    return (async () => {
      // No room here for some limit: wait for those shares to be refilled, then decide. Requests that
      // arrive together wait for the same refill, which asks for room for all of them.
      let waitFor = empty;
      const opening = ([s]: Need) => this.windows.pending(s, this.dbNow());
      // (Up to 2 rounds more when only unopened windows are left to ask for: their limits are not decided without.)
      for (let round = 0; waitFor.length && (round < 8 || (round < 10 && waitFor.every(opening))); round++) {
        // A budget's window opens only for a request the key's other limits admit (a refused one is not
        // counted, SPEC 2.3): their shares are refilled first, and a refusal by them opens nothing.
        if (waitFor.some(opening)) {
          // known windows only: one just opened here stays (until 2026-12-07 reopened: each request confirmed its own, each alerting)
          const rest = this.sharesOf(key, limits, want, false);
          if (!waitFor.every(opening)) waitFor = waitFor.filter((x) => !opening(x));
          else if (rest.some(([s, , n]) => !hasRoom(s, n, this.degraded))) return this.decide(key, rest);
        }
        for (const [s, , n] of waitFor) {
          s.waiting++;
          s.waitingAmount += n;
        }
        const sent = monoNow();
        try {
          // Bounded: a database that does not answer in time counts as away (the refills go on and
          // apply their answers when they come; the key is counted here alone until the probe answers).
          const answered = await answerWithin(Promise.all(waitFor.map(([s]) => this.sync(s, true))), this.answerMs, () => {});
          if (!answered) throw new StoreError("unavailable", `the shared store did not answer within ${this.answerMs} ms`);
        } catch (err) {
          if (!this.unavailable(err, sent)) throw err;
          return this.decide(key, this.sharesOf(key, limits, want));
        } finally {
          for (const [s, , n] of waitFor) {
            s.waiting--;
            s.waitingAmount = s.waiting === 0 ? 0 : Math.max(0, s.waitingAmount - n);
          }
        }
        if (this.degraded) return this.decide(key, this.sharesOf(key, limits, want));
        waitFor = this.sharesOf(key, limits, want).filter(([s, , n]) => !hasRoom(s, n, this.degraded) && !knownShort(s));
      }
      // Another limit still refuses: a budget window never opened (never asked for) is no part of the answer.
      const all = this.sharesOf(key, limits, want);
      const rest = all.filter((x) => !opening(x));
      const d = this.decide(key, rest.length < all.length && rest.some(([s, , n]) => !hasRoom(s, n, this.degraded)) ? rest : all);
      return d.ok || !d.refusal.heldElsewhere ? d : this.recheckElsewhere(key, limits, want, d);
    })();
  }

  /**
   * A refusal that blames room held on other instances: reads their reported use once more (at most every
   * {@link SHORT_RETRY_MS}/4 per share) and decides again, so a window they used up is refused as used up
   * (with its reset) rather than as held, with Retry-After 1 s, by requests in flight there.
   */
  private async recheckElsewhere(key: string, limits: KeyLimits, want: { tokens: number; usd: number }, first: { ok: false; refusal: LimitRefusal }) {
    const stale = this.sharesOf(key, limits, want).filter(([s]) => s.windowEnd !== 0 && !isRequests(s) && monoNow() - (s.readAt ?? 0) > SHORT_RETRY_MS / 4).map(([s]) => s);
    if (stale.length === 0) return first;
    const sent = monoNow();
    for (const s of stale) s.readAt = sent;
    try {
      if (!(await answerWithin(this.refresh(stale), Math.min(2000, this.answerMs), () => {}))) return first;
    } catch (err) {
      if (!this.unavailable(err, sent)) throw err;
    }
    return this.decide(key, this.sharesOf(key, limits, want));
  }

  /** Adds the request's tokens/USD to this instance's shares, frees its slot; refills or reports in the background. */
  async settle(key: string, limits: KeyLimits, spent: { tokens: number; usd: number; unpriced?: boolean }, now: number, ticket?: unknown): Promise<BudgetChange[]> {
    const t = (ticket ?? {}) as Ticket;
    if (ticket) this.track(key, -1);
    const tokens = Number.isFinite(spent.tokens) && spent.tokens > 0 ? spent.tokens : 0;
    const usd = Number.isFinite(spent.usd) && spent.usd > 0 ? spent.usd : 0;
    const at = monoNow();
    const touched: Share[] = [];
    for (const [s, n] of t.holds ?? []) {
      s.holding = Math.max(0, s.holding - 1);
      s.reserved = s.holding === 0 ? 0 : Math.max(0, s.reserved - n);
      touched.push(s);
    }
    if (tokens > 0) this.means.learn(key, tokens, usd);
    if (t.slots) {
      t.slots.used = Math.max(0, t.slots.used - 1);
      t.slots.lastUse = at;
      touched.push(t.slots);
    }
    if (limits.tpm !== undefined && tokens > 0) {
      const s = this.windowShare(`key:${key}:tpm`, MINUTE, limits.tpm, "tokens");
      s.used += tokens;
      s.lastUse = at;
      touched.push(s);
    }
    // Each budget's change is this request's step alone, taken now: the window's use as known before and
    // after adding it. What the other instances used meanwhile is a step of its own (learnOthers), so a
    // threshold is crossed once on this instance, not again by a settle that overlaps another.
    const changes: BudgetChange[] = (limits.budgets ?? []).map((b) => {
      const s = this.budgetShare(key, b)!; // a window ended while the request ran: its use opens the next
      const before = usedAll(s);
      s.used += b.usd !== undefined ? usd : tokens;
      if (spent.unpriced && b.usd !== undefined) s.unpriced++; // told with the next report (≤ 1 s)
      s.lastUse = at;
      touched.push(s);
      return { budget: b, before, after: usedAll(s), resetsAt: s.windowEnd };
    });
    const sent = monoNow();
    try {
      // Background work (the reply has ended): an overrun is reported at once, a low share refilled,
      // a slot beyond the spare given back (degraded: all of it when the database is back).
      if (!this.degraded) await Promise.all(touched.filter((s) => needsSync(s)).map((s) => this.sync(s, false)));
    } catch (err) {
      if (!this.unavailable(err, sent)) this.log(JSON.stringify({ level: "warn", time: Date.now(), msg: "settling a key's limits failed", error: err instanceof Error ? err.message : String(err) }));
    }
    return changes;
  }

  /**
   * Each budget's use in its current window across instances, as last reported (within about a second;
   * degraded: as last known plus this instance's since); no window open: 0, no start nor reset. A key
   * it never served nor watched has its window, then its use, read first: a round trip each, ≤ 2 s.
   */
  async budgetUse(key: string, limits: KeyLimits, _now: number): Promise<BudgetUse[]> {
    const budgets = limits.budgets ?? [];
    const unread = budgets.filter((b) => !this.budgetShare(key, b, false) && !this.unknown.has(budgetName(key, b)));
    // No open window known here of a key not watched: another instance may have opened one (one round trip, at most 2 s).
    if (!this.degraded && unread.length) await this.readWindows(unread.map((b) => budgetName(key, b)));
    const shares = budgets.map((b) => this.budgetShare(key, b, false));
    const unknownUse = shares.filter((s): s is Share => s !== undefined && !s.learned && !this.windows.pending(s, this.dbNow()));
    if (unknownUse.length && !this.degraded) {
      const sent = monoNow();
      try {
        await answerWithin(this.refresh(unknownUse), Math.min(2000, this.answerMs), () => {});
      } catch (err) {
        if (!this.unavailable(err, sent)) this.log(JSON.stringify({ level: "warn", time: Date.now(), msg: "reading a key's budget use failed", error: err instanceof Error ? err.message : String(err) }));
      }
    }
    return budgets.map((b, i) => {
      const s = shares[i];
      // No window open (or one opened here that nothing counted in yet): nothing used, no reset to name.
      if (!s || (this.windows.pending(s, this.dbNow()) && s.used === 0 && s.holding === 0)) return { budget: b, used: 0 };
      const use: BudgetUse = { budget: b, used: usedAll(s), startedAt: s.windowStart, resetsAt: s.windowEnd };
      return b.usd !== undefined ? { ...use, unpriced: s.othersUnpriced + s.unpriced } : use;
    });
  }

  /** Learns the open windows of these budget pools from the database (at most 2 s; a failure leaves them unknown). */
  private async readWindows(names: string[]): Promise<void> {
    const sent = monoNow();
    try {
      const got = await answerWithin(Promise.resolve(this.store.readBudgetWindows(names)), Math.min(2000, this.answerMs), () => {});
      if (!got) return;
      for (const w of got.value.windows) this.windows.learn(w, got.value.now);
      this.recovered(sent);
    } catch (err) {
      if (!this.unavailable(err, sent)) this.log(JSON.stringify({ level: "warn", time: Date.now(), msg: "reading a key's budget windows failed", error: err instanceof Error ? err.message : String(err) }));
    }
  }

  inFlight(key: string): number { return this.inFlightHere.get(key) ?? 0; }

  /** The current fixed minute window's requests and tokens across instances, as last reported (read-minute-use.ts). */
  minuteUse(key: string, limits: KeyLimits, _now: number): MinuteUse {
    return readMinuteUse(this.shares, key, limits, this.dbNow());
  }

  /**
   * Reports every share's use now and gives idle spare back (what the timer does every second); tests
   * and shutdown call it. Never throws.
   */
  async report(): Promise<void> {
    while (this.reporting) await this.reporting;
    this.reporting = this.reportNow().finally(() => {
      this.reporting = undefined;
    });
    await this.reporting;
  }

  /**
   * Stops the timer after a last report, retried while the database is away until `until` (ms since the
   * epoch; the store's close then gives the unused shares back; try20 D2). Returns the use still
   * unreported then: each budget window's, for the store to keep and the next start to count back
   * (`SharedStore.keepUnreportedUse`), and how many rpm/tpm minute windows had some (not kept: they
   * lapse within a minute, before a next start could count it).
   */
  async close(until: RetryEnd = 0): Promise<{ budgets: UnreportedBudgetUse[]; minuteWindows: number }> {
    clearInterval(this.timer);
    // each try bounded by the end too: a stalled database's report must not hold the stop past its grace period
    await retryUntil(until, async () => (await (endOf(until) > Date.now() ? settledBy(this.report(), until) : this.report()), [...this.shares.values()].filter((s) => s.windowEnd !== 0 && unreported(s)).length));
    const left = [...this.shares.values()].filter((s) => s.windowEnd !== 0 && unreported(s));
    const budgets = left.filter((s) => s.budgetOf).map((s): UnreportedBudgetUse => {
      const use = { name: s.name, windowStart: s.windowStart, windowEnd: s.windowEnd, pending: this.windows.pending(s, this.dbNow()), used: s.used, reported: s.reported };
      return s.unpriced > 0 ? { ...use, unpriced: s.unpriced } : use;
    });
    return { budgets, minuteWindows: left.length - budgets.length };
  }

  // -- admission --------------------------------------------------------------------------------

  /** The shares `limits` needs for a request now, with what each refusal would say and what it expects to spend there (`opening` false: budgets of known windows only). */
  private sharesOf(key: string, limits: KeyLimits, want: { tokens: number; usd: number }, opening = true): Need[] {
    const out: Need[] = [];
    const wait = (s: Share) => Math.max(1, s.windowEnd - this.dbNow());
    for (const b of limits.budgets ?? []) {
      const max = b.usd ?? b.tokens!;
      if (!opening && !(this.windows.open(budgetName(key, b), this.dbNow())?.pending === false)) continue;
      const s = this.budgetShare(key, b)!;
      out.push([s, (x) => ({ limit: "budget", budget: b, used: usedAll(x), max, retryAfterMs: wait(x), resetsAt: x.windowEnd }), b.usd !== undefined ? want.usd : want.tokens]);
    }
    if (limits.rpm !== undefined) {
      const rpm = limits.rpm;
      out.push([this.windowShare(`key:${key}:rpm`, MINUTE, rpm, "requests"), (x) => ({ limit: "rpm", used: rpm, max: rpm, retryAfterMs: wait(x) }), 0]);
    }
    if (limits.tpm !== undefined) {
      const tpm = limits.tpm;
      out.push([this.windowShare(`key:${key}:tpm`, MINUTE, tpm, "tokens"), (x) => ({ limit: "tpm", used: x.othersUsed + x.used, max: tpm, retryAfterMs: wait(x) }), want.tokens]);
    }
    if (limits.concurrency !== undefined) {
      const n = limits.concurrency;
      // slots held on other instances: said so, and when a stopped instance's slots lapse (newuser12a G20: it said "in about 1 s" for 15 s)
      out.push([
        this.slotShare(`key:${key}:concurrency`, n),
        (x) => ({ limit: "concurrency", used: n, max: n, retryAfterMs: 1000, ...(x.used < n ? { slotsElsewhere: { here: x.used, freedWithinMs: LEASE_TTL_MS } } : {}) }),
        0,
      ]);
    }
    return out;
  }

  /** Decides from memory (decide-admission.ts); an admitted request's shares that need it are refilled in the background. */
  private decide(key: string, shares: Need[]): { ok: true; ticket: Ticket } | { ok: false; refusal: LimitRefusal } {
    const d = decideAdmission(shares, this.degraded, this.inFlightHere.get(key));
    if (!d.ok) return d;
    for (const [s] of shares) if (!this.degraded && needsSync(s)) void this.sync(s, false).catch(this.failedFrom(monoNow()));
    this.track(key, 1);
    return d;
  }

  // -- shares -----------------------------------------------------------------------------------

  private dbNow(): number {
    return monoNow() + this.offset;
  }

  /**
   * This instance's share of the current window of a windowed pool (created empty; `watched`: created
   * idle, for reading the others' use, and quiet before the first watch pass).
   */
  private windowShare(name: string, windowMs: number, limit: number, unit: "requests" | "tokens" | "usd", watched = false): Share {
    const start = Math.floor(this.dbNow() / windowMs) * windowMs;
    const fresh = !this.shares.has(`${name}@${start}`);
    const s = shareAt(this.shares, name, start, start + windowMs, limit, blockOf(limit, unit));
    if (fresh && watched) {
      s.lastUse = 0;
      s.quiet = this.pass === 0;
    }
    return s;
  }

  /**
   * The share of a key's budget in its current window, knowing its key and budget (alerts). No window
   * open: `opening` (a request counts) opens one here, pending until its first refill asks the database
   * (track-budget-windows.ts); else undefined. `opening` false: a share made is watched (see windowShare).
   */
  private budgetShare(key: string, b: KeyBudget, opening = true): Share | undefined {
    const limit = b.usd ?? b.tokens!;
    const got = this.windows.share(budgetName(key, b), BUDGET_WINDOW_MS[b.window], limit, blockOf(limit, b.usd !== undefined ? "usd" : "tokens"), this.dbNow(), opening);
    if (!got) return undefined;
    const { s, fresh } = got;
    if (fresh && !opening) {
      s.lastUse = 0;
      s.quiet = this.pass === 0;
    }
    if (s.budgetOf?.budget !== b) s.budgetOf = { key, budget: b };
    return s;
  }

  /**
   * Asks the database for the window of a budget share opened here (pending): another instance's when
   * it opened one, else from now (from this one's start when it counted while the database was away);
   * the share moves to it. @throws StoreError `unavailable`
   */
  private async confirmWindow(s: Share): Promise<void> {
    const sentAt = monoNow();
    const got = await this.store.openBudgetWindow(s.name, s.windowEnd - s.windowStart, s.used > 0 || s.unpriced > 0 ? s.windowStart : undefined);
    this.offset = got.now - Math.round((sentAt + monoNow()) / 2);
    this.windows.adopt(s, got);
  }

  /** This instance's concurrency slots of a key. */
  private slotShare(name: string, limit: number): Share {
    return shareAt(this.shares, name, 0, 0, limit, Math.floor(limit / 8));
  }

  /**
   * Sets the share to `used + reserved + block` (refill, or give back what is above it; a waiting
   * admission's expected spend when larger than a block), reporting the use; learns
   * the others' use and the database clock. Coalesced: a caller finding one in flight waits for it and,
   * when `forAdmission` and it still has no room, asks once more.
   * @throws StoreError `unavailable`
   */
  private async sync(s: Share, forAdmission: boolean): Promise<void> {
    if (s.syncing) {
      await s.syncing;
      if (!forAdmission || hasRoom(s, s.waitingAmount, this.degraded) || knownShort(s)) return;
    }
    const run = (async () => {
      if (this.windows.pending(s, this.dbNow())) await this.confirmWindow(s);
      const used = s.used;
      const counted = s.windowEnd === 0 || isRequests(s);
      const need = forAdmission ? (counted ? Math.max(1, s.waiting) : s.waitingAmount) : 0;
      // tpm and budgets: the reservations of the requests in flight here keep their room.
      const reserved = s.reserved;
      const target = Math.min(s.limit, used + reserved + Math.max(need, s.block));
      // Giving back: the room is gone from now on, not once the database has answered (an admission
      // meanwhile must not use what another instance may already be taking).
      if (target < s.granted) s.granted = target;
      const sentAt = monoNow();
      const got = await this.store.setQuotaShare({ name: s.name, windowStart: s.windowStart, windowEnd: s.windowEnd, limit: s.limit, target, used });
      this.offset = got.now - Math.round((sentAt + monoNow()) / 2);
      s.granted = got.granted;
      s.stored = true;
      this.learnOthers(s, got.othersUsed);
      s.reported = used;
      // Short also when a waiting admission's expected spend cannot fit under the limit at all.
      s.shortAt = got.granted < target || (!counted && need > 0 && used + reserved + need > s.limit) ? monoNow() : 0;
      this.recovered(sentAt);
    })();
    s.syncing = run;
    try {
      await run;
    } finally {
      s.syncing = undefined;
    }
    // What changed while it ran (a request ended, another was admitted) may need another turn.
    if (needsSync(s)) void this.sync(s, false).catch(this.failedFrom(monoNow()));
  }

  private async reportNow(): Promise<void> {
    const now = monoNow();
    const dbNow = this.dbNow();
    // Written: the shares whose use changed here; read: every open window's (the others' use in it).
    const rows: Share[] = [];
    const read: Share[] = [];
    const work: Promise<void>[] = [];
    const unknown = this.watch();
    for (const [id, s] of this.shares) {
      const ended = s.windowEnd !== 0 && s.windowEnd < dbNow;
      // An ended window told, or a watched key no longer active (revoked, its limits gone) never used here.
      if ((ended && !unreported(s)) || (s.seen !== undefined && s.seen !== this.pass && !s.stored && s.used === 0 && s.unpriced === 0 && s.holding === 0 && !s.syncing)) {
        this.shares.delete(id);
        continue;
      }
      const idle = now - s.lastUse > this.idleMs;
      if (!ended && !s.syncing && idle && s.granted > s.used + s.reserved) {
        // Idle here: give the spare back to the other instances.
        work.push(this.giveBack(s));
        continue;
      }
      if (s.windowEnd === 0 && idle && s.used === 0 && s.granted === 0 && !s.syncing) {
        this.shares.delete(id);
        continue;
      }
      if (unreported(s) && !s.stored) {
        // Counted while the database was away in a pool this instance has no row of: the row is made with it.
        if (!s.syncing) work.push(this.sync(s, false).catch(this.failedFrom(monoNow())));
      } else {
        if (unreported(s)) rows.push(s);
        if (s.windowEnd !== 0 && !ended && !this.windows.pending(s, this.dbNow())) read.push(s); // the others' use (idle, watched too)
      }
      // Take the next minute's share ahead while the key is busy here (a budget's opens at first use).
      const ahead = Math.min(AHEAD_MS, (s.windowEnd - s.windowStart) / 12);
      if (s.windowEnd !== 0 && !s.budgetOf && !idle && !ended && s.windowEnd - dbNow < ahead) {
        const next = shareAt(this.shares, s.name, s.windowEnd, 2 * s.windowEnd - s.windowStart, s.limit, s.block);
        if (next.granted === 0 && !next.syncing && !knownShort(next)) work.push(this.sync(next, false).catch(this.failedFrom(monoNow())));
      }
    }
    if (rows.length || read.length || unknown.size) {
      const asked = monoNow();
      work.push(
        (async () => {
          // One statement: the changed rows in, the pools the others use out (a watched key nobody
          // uses costs nothing; until 2026-12-04 every watched pool was a row each way, every second).
          const sent = rows.map(reportRow);
          const others = await this.store.exchangeQuotaUse(sent);
          const elsewhere = new Map(others.map((o) => [`${o.name}@${o.windowStart}`, o]));
          rows.forEach((s, i) => void ((s.reported = sent[i]!.used), (s.unpricedReported = sent[i]!.unpriced ?? 0)));
          const of = (s: Share) => elsewhere.get(`${s.name}@${s.windowStart}`);
          for (const s of new Set([...rows, ...read])) this.learnOthers(s, of(s)?.used ?? 0, of(s)?.unpriced ?? 0);
          // Watched budgets with no window known here that others count in: the window they opened.
          const opened = new Set(others.filter((o) => unknown.has(o.name) && o.windowStart + BUDGET_WINDOW_MS[unknown.get(o.name)!.budget.window] > dbNow).map((o) => o.name));
          if (opened.size) await this.readWindows([...opened]);
          for (const name of opened) {
            const { key, budget } = unknown.get(name)!;
            const s = this.budgetShare(key, budget, false);
            if (!s) continue;
            s.seen = this.pass;
            if (!s.learned) s.quiet = this.pass === 1; // read at start: known, not crossed here
            this.learnOthers(s, of(s)?.used ?? 0, of(s)?.unpriced ?? 0);
          }
          this.recovered(asked);
        })().catch((err) => {
          if (!this.unavailable(err, asked)) this.log(JSON.stringify({ level: "warn", time: Date.now(), msg: "reporting key limit use failed", error: err instanceof Error ? err.message : String(err) }));
        }),
      );
    }
    await Promise.all(work);
  }

  /**
   * Makes the current windows' shares of every watched key's budgets, rpm and tpm (idle, holding
   * nothing), so that the report reads the others' use in them; counts the pass. @returns the watched
   * budgets with no window known here, by pool name (their windows are read when others count in them).
   */
  private watch(): Map<string, { key: string; budget: KeyBudget }> {
    const unknown = new Map<string, { key: string; budget: KeyBudget }>();
    if (!this.keys) return unknown;
    const pass = this.pass + 1;
    for (const k of this.keys()) {
      const l = k.limits;
      if (!l) continue;
      const id = keyId(k);
      const mark = (s: Share) => void (s.seen = pass);
      for (const b of l.budgets ?? []) {
        const s = this.budgetShare(id, b, false);
        if (s) mark(s);
        else unknown.set(budgetName(id, b), { key: id, budget: b });
      }
      if (l.rpm !== undefined) mark(this.windowShare(`key:${id}:rpm`, MINUTE, l.rpm, "requests", true));
      if (l.tpm !== undefined) mark(this.windowShare(`key:${id}:tpm`, MINUTE, l.tpm, "tokens", true));
    }
    this.pass = pass;
    this.unknown = unknown;
    return unknown;
  }

  /** Reads the other instances' use of these shares now (telling nothing new). @throws StoreError `unavailable` */
  private async refresh(shares: Share[]): Promise<void> {
    const asked = monoNow();
    const others = await this.store.reportQuotaUse(shares.map((s) => ({ name: s.name, windowStart: s.windowStart, used: s.reported })));
    shares.forEach((s, i) => others[i] !== undefined && this.learnOthers(s, others[i]!));
    this.recovered(asked);
  }

  /**
   * Takes the other instances' use in `s`'s window from an answer (and their unpriced requests in it,
   * from a report's answer: `othersUnpriced`). Answers to statements sent on different connections (a
   * report, a refill) may come back in any order, and a window's use only grows: an older, smaller
   * figure arriving last does not take it back.
   */
  private learnOthers(s: Share, othersUsed: number, othersUnpriced?: number): void {
    if (othersUnpriced !== undefined) s.othersUnpriced = Math.max(s.othersUnpriced, othersUnpriced);
    const before = s.othersUsed;
    const quiet = s.quiet;
    s.quiet = false;
    s.learned = true;
    s.othersUsed = s.windowEnd === 0 ? othersUsed : Math.max(s.othersUsed, othersUsed);
    if (!quiet && s.budgetOf && s.othersUsed > before && this.onOthersBudgetChange) {
      this.onOthersBudgetChange(s.budgetOf.key, [{ budget: s.budgetOf.budget, before: roundUsd(before + s.used), after: usedAll(s), resetsAt: s.windowEnd }], this.dbNow());
    }
  }

  private async giveBack(s: Share): Promise<void> {
    const asked = monoNow();
    const run = (async () => {
      const used = s.used;
      const keep = used + s.reserved; // requests in flight here keep their reservations
      s.granted = Math.min(s.granted, keep); // given back from now on (see sync)
      const got = await this.store.setQuotaShare({ name: s.name, windowStart: s.windowStart, windowEnd: s.windowEnd, limit: s.limit, target: keep, used });
      s.granted = Math.min(s.granted, got.granted);
      s.stored = true;
      this.learnOthers(s, got.othersUsed);
      s.reported = used;
      this.recovered(asked);
    })();
    s.syncing = run;
    try {
      await run;
    } catch (err) {
      void this.unavailable(err, asked);
    } finally {
      s.syncing = undefined;
    }
  }

  private async tick(): Promise<void> {
    // One tick at a time: a database that stopped answering must not collect a statement per second.
    if (this.ticking) return;
    this.ticking = true;
    try {
      if (this.degraded) {
        // Degraded: one harmless statement tells whether the database is back.
        const asked = monoNow();
        try {
          await this.store.reportQuotaUse([{ name: "switchyard:probe", windowStart: 0, used: 0 }]);
          this.recovered(asked);
        } catch (err) {
          this.unavailable(err, asked); // sent after the last recovery: an outage of its own, said once
          return;
        }
      }
      await this.report();
    } finally {
      this.ticking = false;
    }
  }

  // -- degraded mode ----------------------------------------------------------------------------

  /**
   * A statement sent at `sent` (ms, {@link monoNow}) failed with `err`: when it means the store cannot
   * be reached (StoreError `unavailable`), the instance counts alone from now on, and the outage's line
   * is logged unless the statement was sent before the store last came back. @returns whether it did
   */
  private unavailable(err: unknown, sent: number): boolean {
    if (!(err instanceof StoreError && err.code === "unavailable")) return false;
    this.degraded = true;
    this.outage.down(sent);
    return true;
  }

  /** The background handler of a statement sent at `sent` (ms, {@link monoNow}): its failure as {@link unavailable}'s. */
  private failedFrom(sent: number): (err: unknown) => void {
    return (err) => void this.unavailable(err, sent);
  }

  /**
   * A statement sent at `sent` (ms, {@link monoNow}) was answered: the instance counts across instances
   * again, and the outage ends in the log when the statement was sent after it began.
   */
  private recovered(sent: number): void {
    this.outage.up(sent);
    this.degraded = false;
  }

  private track(key: string, d: number): void {
    const n = (this.inFlightHere.get(key) ?? 0) + d;
    if (n <= 0) this.inFlightHere.delete(key);
    else this.inFlightHere.set(key, n);
  }
}
