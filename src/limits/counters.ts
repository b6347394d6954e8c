/**
 * The embedded {@link KeyLimitCounters} (SPEC 9.6): per client key, in memory, O(1) per request.
 *
 * - rpm: a ring of the last `rpm` admission times; a request is admitted when the oldest of them is a
 *   minute old (an exact rolling minute); Retry-After is when that oldest one leaves the minute.
 * - tpm: 60 one-second buckets of settled tokens (a rolling minute at one-second resolution); a request
 *   is refused while the last minute's tokens are at or over the limit; Retry-After is when enough
 *   buckets have left the minute to bring it under.
 * - concurrency: a count of admitted, unsettled requests; Retry-After 1 s (nobody knows when one ends).
 * - budgets: one window per key and window size (`5h`, `1d`, `7d`, `30d`), opened by the first request
 *   admitted while none is open and closed a window length later (fixed windows aligned to the first
 *   use); a request is refused while the window's tokens (or USD) are at or over the budget, until the
 *   window ends. The window also counts its requests that used a model without a price (USD budgets
 *   count only their priced part: `BudgetUse.unpriced`), persisted and reset with it.
 * - requests in flight against tpm and budgets: what a request spends is known only when it ends, so
 *   each admitted request holds a reservation until it is settled: its expected tokens, the larger of
 *   its own input estimate ({@link RequestEstimate}, body bytes / 4) and the key's recent mean per
 *   request (an exponential moving average of settled requests, this process only), and for USD
 *   budgets those tokens at the key's USD per token so far in the budget's window or at what a token
 *   of the request's model is expected to cost, whichever is dearer ({@link RequestEstimate.usdPerToken}:
 *   the model's cost per token so far, or before one of its requests settled the dearer of its input and
 *   output price; nothing for an unpriced model), so requests to a model dearer than the window's
 *   mean hold what that model costs. While other requests of the
 *   key are in flight, a request whose reservation would take the minute's tokens or a budget's use
 *   plus every reservation over the limit is refused (Retry-After 1 s, `inFlight` set); a request
 *   arriving while none is in flight is always admitted when the limit is not yet reached. So N concurrent requests a few tokens short of a limit
 *   overshoot it by about one request (and the estimates' error), not by N.
 *
 * Budget windows survive a restart: changed windows are handed to the store by {@link
 * MemoryKeyCounters.takeDirty} (at each usage flush on the embedded store, else on a timer; and at
 * shutdown), and read back with {@link
 * MemoryKeyCounters.load}. Rates and requests in flight are not persisted (a minute, and the requests
 * of a stopped process are gone).
 *
 * Clocks: rpm and tpm read the monotonic clock given to the constructor (a running process's
 * `performance.now()`), so a wall clock stepped backwards (NTP, an operator) neither makes their
 * refusals wait for the size of the step nor, stepped forwards, lets a minute's requests through
 * early; without one (tests on a fixed clock) they read the `now` they are given. A budget window's
 * start is persisted on the wall clock (it must mean the same instant after a restart, which a
 * monotonic clock, whose origin is the process, cannot say), but while the process runs its length is
 * measured on the monotonic clock: each look at the window re-expresses its start on the wall clock as
 * `now` minus the monotonic time since it opened (or since it was loaded), so a step of the wall clock
 * neither lengthens nor shortens it, and what is persisted next (and `resetsAt`) is in the stepped
 * clock's terms. Only a step while no process runs, or between the last write of the window and a
 * restart (the window is rewritten when its key next spends), still moves its end by the step.
 */
import { BUDGET_WINDOW_MS } from "../../pipeline/index.ts";
import type { BudgetChange, BudgetUse, BudgetWindow, KeyLimitCounters, KeyLimits, LimitRefusal, MinuteUse, RequestEstimate } from "../../pipeline/ports.ts";
import type { KeyBudgetRow } from "../store/types.ts";
import { roundUsd } from "./dollars.ts";

/** One key's budget window as persisted (the store's row). */
export type BudgetWindowRow = KeyBudgetRow;

interface Window {
  /** ms since the epoch on the wall clock, as of the last look ({@link MemoryKeyCounters.open}). */
  start: number;
  tokens: number;
  usd: number;
  /** Requests settled in the window that used a model without a price (`BudgetUse.unpriced`). */
  unpriced: number;
  /** The start on the monotonic clock, when the counters have one. */
  mono?: number;
}

interface KeyState {
  /** Admission times of the last `rpm` admitted requests; `ring[head]` is the oldest (0 = free). */
  ring?: Float64Array;
  head: number;
  /** Second (epoch s) of each tpm bucket, and its tokens. */
  tpmSec?: Float64Array;
  tpmTok?: Float64Array;
  inFlight: number;
  windows: Map<BudgetWindow, Window>;
  /** Sum of the reservations ({@link Reservation}) of the requests in flight. */
  reservedTokens: number;
  reservedUsd: number;
  /** Exponential moving average of the tokens of settled requests; undefined before the first. */
  meanTokens?: number;
}

/** What {@link MemoryKeyCounters.admit} holds for an admitted request until it is settled (its ticket). */
export interface Reservation {
  tokens: number;
  usd: number;
}

const MINUTE = 60_000;

/** USD a token of the request's model is expected to cost ({@link RequestEstimate.usdPerToken}), 0 when unpriced or unknown. */
export function modelRate(estimate?: RequestEstimate): number {
  const r = estimate?.usdPerToken;
  return r !== undefined && Number.isFinite(r) && r > 0 ? r : 0;
}

/** Weight of the newest settled request in {@link KeyState.meanTokens}. */
const MEAN_WEIGHT = 0.3;

/** In-memory counters for client key limits; see the module comment. */
export class MemoryKeyCounters implements KeyLimitCounters {
  private readonly keys = new Map<string, KeyState>();
  private readonly dirty = new Set<string>();

  /**
   * @param monotonic ms on a clock that never steps (see the module comment), for rpm and tpm;
   *   default: the `now` each call is given
   */
  constructor(private readonly monotonic?: () => number) {}

  private state(key: string): KeyState {
    let s = this.keys.get(key);
    if (!s) {
      s = { head: 0, inFlight: 0, windows: new Map(), reservedTokens: 0, reservedUsd: 0 };
      this.keys.set(key, s);
    }
    return s;
  }

  /** The ring sized for `rpm`, keeping the most recent admissions when the limit changed. */
  private ring(s: KeyState, rpm: number): Float64Array {
    const old = s.ring;
    if (old && old.length === rpm) return old;
    const next = new Float64Array(rpm);
    if (old) {
      // old[head] is the oldest; copy in age order, keeping the newest `rpm`.
      const ordered: number[] = [];
      for (let i = 0; i < old.length; i++) ordered.push(old[(s.head + i) % old.length]);
      const keep = ordered.slice(Math.max(0, ordered.length - rpm));
      next.set(keep, rpm - keep.length);
    }
    s.ring = next;
    s.head = 0;
    return next;
  }

  private tpmUsed(s: KeyState, now: number): number {
    if (!s.tpmSec) return 0;
    const sec = Math.floor(now / 1000);
    let sum = 0;
    for (let i = 0; i < 60; i++) if (s.tpmSec[i] > sec - 60) sum += s.tpmTok![i];
    return sum;
  }

  /** ms until the last minute's tokens drop under `tpm`. */
  private tpmWait(s: KeyState, now: number, tpm: number): number {
    const sec = Math.floor(now / 1000);
    const live: Array<[number, number]> = [];
    for (let i = 0; i < 60; i++) if (s.tpmSec![i] > sec - 60) live.push([s.tpmSec![i], s.tpmTok![i]]);
    live.sort((a, b) => a[0] - b[0]);
    let sum = live.reduce((n, [, t]) => n + t, 0);
    for (const [bucket, tokens] of live) {
      sum -= tokens;
      if (sum < tpm) return Math.max(1, (bucket + 60) * 1000 - now);
    }
    return 1000;
  }

  /**
   * The open window of `w` at `now`, or undefined when it never opened or has ended; with a monotonic
   * clock its start is first re-expressed on the wall clock, in whole ms (the module comment's "Clocks").
   */
  private open(s: KeyState, w: BudgetWindow, now: number): Window | undefined {
    const win = s.windows.get(w);
    if (!win) return undefined;
    if (win.mono !== undefined && this.monotonic) win.start = Math.round(now - (this.monotonic() - win.mono));
    return now < win.start + BUDGET_WINDOW_MS[w] ? win : undefined;
  }

  /** A window opening at `now` (wall clock), with its start on the monotonic clock when there is one. */
  private opening(now: number): Window {
    return this.monotonic ? { start: now, tokens: 0, usd: 0, unpriced: 0, mono: this.monotonic() } : { start: now, tokens: 0, usd: 0, unpriced: 0 };
  }

  /** USD per token spent so far in the key's open budget windows (the first that has tokens), or 0. */
  private usdPerToken(s: KeyState, limits: KeyLimits, now: number): number {
    for (const b of limits.budgets ?? []) {
      const win = this.open(s, b.window, now);
      if (win && win.tokens > 0) return win.usd / win.tokens;
    }
    return 0;
  }

  admit(key: string, limits: KeyLimits, now: number, estimate?: RequestEstimate): { ok: true; ticket: Reservation } | { ok: false; refusal: LimitRefusal } {
    const s = this.state(key);
    let refusal: LimitRefusal | undefined;
    const refuse = (r: LimitRefusal) => {
      if (!refusal || r.retryAfterMs > refusal.retryAfterMs) refusal = r;
    };
    const budgets = limits.budgets ?? [];
    const counted = limits.tpm !== undefined || budgets.length > 0;
    const own = estimate && Number.isFinite(estimate.tokens) && estimate.tokens > 0 ? estimate.tokens : 0;
    const tokens = counted ? Math.max(own, s.meanTokens ?? 0) : 0;
    // USD: at the window's USD per token so far, or at what a token of the request's model is expected
    // to cost when that is dearer (a burst to a dearer model than the window's mean holds its own price;
    // nothing for an unpriced model, whose spend no USD budget counts).
    const usd = tokens > 0 && budgets.some((b) => b.usd !== undefined) ? tokens * Math.max(this.usdPerToken(s, limits, now), modelRate(estimate)) : 0;
    for (const b of budgets) {
      const win = this.open(s, b.window, now);
      if (!win) continue;
      const used = b.usd !== undefined ? win.usd : win.tokens;
      const max = b.usd ?? b.tokens!;
      if (used >= max) refuse({ limit: "budget", budget: b, used, max, retryAfterMs: win.start + BUDGET_WINDOW_MS[b.window] - now });
      else if (s.inFlight > 0 && used + (b.usd !== undefined ? s.reservedUsd + usd : s.reservedTokens + tokens) > max) {
        refuse({ limit: "budget", budget: b, used, max, retryAfterMs: 1000, inFlight: s.inFlight });
      }
    }
    // Rates read the monotonic clock (see the module comment); budgets the wall clock `now`.
    const at = this.monotonic ? this.monotonic() : now;
    if (limits.rpm !== undefined) {
      const ring = this.ring(s, limits.rpm);
      const oldest = ring[s.head];
      if (oldest !== 0 && oldest > at - MINUTE) refuse({ limit: "rpm", used: limits.rpm, max: limits.rpm, retryAfterMs: oldest + MINUTE - at });
    }
    if (limits.tpm !== undefined) {
      const used = this.tpmUsed(s, at);
      if (used >= limits.tpm) refuse({ limit: "tpm", used, max: limits.tpm, retryAfterMs: this.tpmWait(s, at, limits.tpm) });
      else if (s.inFlight > 0 && used + s.reservedTokens + tokens > limits.tpm) refuse({ limit: "tpm", used, max: limits.tpm, retryAfterMs: 1000, inFlight: s.inFlight });
    }
    if (limits.concurrency !== undefined && s.inFlight >= limits.concurrency) {
      refuse({ limit: "concurrency", used: s.inFlight, max: limits.concurrency, retryAfterMs: 1000 });
    }
    if (refusal) return { ok: false, refusal };

    if (limits.rpm !== undefined) {
      s.ring![s.head] = at;
      s.head = (s.head + 1) % s.ring!.length;
    }
    s.inFlight++;
    s.reservedTokens += tokens;
    s.reservedUsd += usd;
    for (const b of budgets) {
      if (!this.open(s, b.window, now)) {
        s.windows.set(b.window, this.opening(now));
        this.dirty.add(key);
      }
    }
    return { ok: true, ticket: { tokens, usd } };
  }

  /** `ticket` is the {@link Reservation} `admit` returned: it is released. `spent.unpriced` counts one in each window's unpriced requests. */
  settle(key: string, limits: KeyLimits, spent: { tokens: number; usd: number; unpriced?: boolean }, now: number, ticket?: unknown): BudgetChange[] {
    const s = this.state(key);
    s.inFlight = Math.max(0, s.inFlight - 1);
    const held = ticket as Reservation | undefined;
    if (held) {
      s.reservedTokens = s.inFlight === 0 ? 0 : Math.max(0, s.reservedTokens - held.tokens);
      s.reservedUsd = s.inFlight === 0 ? 0 : Math.max(0, s.reservedUsd - held.usd);
    }
    const tokens = Number.isFinite(spent.tokens) && spent.tokens > 0 ? spent.tokens : 0;
    const usd = Number.isFinite(spent.usd) && spent.usd > 0 ? spent.usd : 0;
    if (tokens > 0) {
      s.meanTokens = s.meanTokens === undefined ? tokens : s.meanTokens + MEAN_WEIGHT * (tokens - s.meanTokens);
      if (!s.tpmSec) {
        s.tpmSec = new Float64Array(60);
        s.tpmTok = new Float64Array(60);
      }
      const sec = Math.floor((this.monotonic ? this.monotonic() : now) / 1000);
      const i = sec % 60;
      if (s.tpmSec[i] !== sec) {
        s.tpmSec[i] = sec;
        s.tpmTok![i] = 0;
      }
      s.tpmTok![i] += tokens;
    }
    const changes: BudgetChange[] = [];
    const budgets = limits.budgets ?? [];
    if (budgets.length === 0) return changes;
    const before = new Map<BudgetWindow, Window>();
    for (const b of budgets) {
      if (before.has(b.window)) continue;
      let win = this.open(s, b.window, now);
      if (!win) {
        // The window ended while the request ran: its use opens the next one.
        win = this.opening(now);
        s.windows.set(b.window, win);
      }
      before.set(b.window, { ...win });
      win.tokens += tokens;
      // a sum of prices, kept to 12 significant digits (every reader sees $0.054, not 0.054000000000000006);
      // only when something was added: the rounding is a string round trip (~0.24 µs, review14 R3)
      if (usd > 0) win.usd = roundUsd(win.usd + usd);
      if (spent.unpriced) win.unpriced++;
    }
    if (tokens > 0 || usd > 0 || spent.unpriced) this.dirty.add(key);
    for (const b of budgets) {
      const was = before.get(b.window)!;
      const win = s.windows.get(b.window)!;
      const unit = b.usd !== undefined ? "usd" : "tokens";
      changes.push({ budget: b, before: was[unit], after: win[unit], resetsAt: win.start + BUDGET_WINDOW_MS[b.window] });
    }
    return changes;
  }

  budgetUse(key: string, limits: KeyLimits, now: number): BudgetUse[] {
    const s = this.keys.get(key);
    return (limits.budgets ?? []).map((b) => {
      const win = s && this.open(s, b.window, now);
      if (!win) return { budget: b, used: 0 };
      const use: BudgetUse = { budget: b, used: b.usd !== undefined ? win.usd : win.tokens, startedAt: win.start, resetsAt: win.start + BUDGET_WINDOW_MS[b.window] };
      if (b.usd !== undefined) use.unpriced = win.unpriced;
      return use;
    });
  }

  inFlight(key: string): number {
    return this.keys.get(key)?.inFlight ?? 0;
  }

  /** The rolling last minute on the rates' clock (see the module comment): admissions in the rpm ring, settled tokens in the tpm buckets; at a limit, `freesInMs` as `admit` would wait. */
  minuteUse(key: string, limits: KeyLimits, now: number): MinuteUse {
    const s = this.keys.get(key);
    const at = this.monotonic ? this.monotonic() : now;
    const out: MinuteUse = {};
    if (limits.rpm !== undefined) {
      let used = 0;
      let oldest = Infinity;
      for (const t of s?.ring ?? []) {
        if (t !== 0 && t > at - MINUTE) {
          used++;
          oldest = Math.min(oldest, t);
        }
      }
      out.requests = used >= limits.rpm ? { used, limit: limits.rpm, freesInMs: oldest + MINUTE - at } : { used, limit: limits.rpm };
    }
    if (limits.tpm !== undefined) {
      const used = s ? this.tpmUsed(s, at) : 0;
      out.tokens = s && used >= limits.tpm ? { used, limit: limits.tpm, freesInMs: this.tpmWait(s, at, limits.tpm) } : { used, limit: limits.tpm };
    }
    return out;
  }

  /** Restores persisted budget windows (at start, before the first request). Ended windows are skipped. */
  load(rows: readonly BudgetWindowRow[], now: number): void {
    for (const r of rows) {
      const ms = BUDGET_WINDOW_MS[r.window];
      if (!ms || now >= r.startedAt + ms) continue;
      const win: Window = { start: r.startedAt, tokens: r.tokens, usd: roundUsd(r.usd), unpriced: r.unpriced ?? 0 };
      if (this.monotonic) win.mono = this.monotonic() - (now - r.startedAt);
      this.state(r.keyName).windows.set(r.window, win);
    }
  }

  /** The budget windows changed since the last call (for the store to persist), and forgets them. */
  takeDirty(): BudgetWindowRow[] {
    const out: BudgetWindowRow[] = [];
    for (const key of this.dirty) {
      const s = this.keys.get(key);
      if (!s) continue;
      for (const [window, w] of s.windows) out.push({ keyName: key, window, startedAt: w.start, tokens: w.tokens, usd: w.usd, ...(w.unpriced > 0 ? { unpriced: w.unpriced } : {}) });
    }
    this.dirty.clear();
    return out;
  }
}

/** How often changed key budget windows are written to a store that does not take them with its usage flush (SPEC 9.6), ms. */
export const BUDGET_SAVE_MS = 5_000;

/** The store's role that keeps budget windows (src/store/keys.ts). */
export interface BudgetWindowStore {
  loadKeyBudgets(): KeyBudgetRow[] | Promise<KeyBudgetRow[]>;
  saveKeyBudgets(rows: KeyBudgetRow[]): void | Promise<void>;
  writeKeyBudgetsWithFlush?(take: () => KeyBudgetRow[]): void;
}

/** What {@link persistBudgetWindows} hands back: the timer's stop and the last save (at shutdown). */
export interface BudgetWindowPersistence {
  /** Stops the periodic save (none runs when the store's usage flush writes the windows). */
  stop(): void;
  /** Writes the windows changed since the last save; never rejects (a failure is logged). */
  save(): Promise<void>;
}

/**
 * Budget windows survive restarts (SPEC 9.6): reads the stored windows into `counters` now (a read
 * failure is logged and budgets start empty), then has the changed ones written: by each usage flush,
 * in its transaction, when the store offers it (`writeKeyBudgetsWithFlush`, both stores: a
 * process killed without shutdown loses the budget use of the usage rows it loses, the last flush
 * interval), else every {@link BUDGET_SAVE_MS} (it loses at most that much). Call `save` at shutdown.
 */
export async function persistBudgetWindows(
  counters: MemoryKeyCounters,
  store: BudgetWindowStore,
  now: () => number,
  log: (line: string) => void,
): Promise<BudgetWindowPersistence> {
  const warn = (msg: string, err: unknown) => log(JSON.stringify({ level: "warn", time: now(), msg, error: err instanceof Error ? err.message : String(err) }));
  try {
    counters.load(await store.loadKeyBudgets(), now());
  } catch (err) {
    warn("key budget windows could not be read; budgets start empty", err);
  }
  const save = async () => {
    const rows = counters.takeDirty();
    if (rows.length === 0) return;
    try {
      await store.saveKeyBudgets(rows);
    } catch (err) {
      warn("key budget windows could not be saved", err);
    }
  };
  if (store.writeKeyBudgetsWithFlush) {
    store.writeKeyBudgetsWithFlush(() => counters.takeDirty());
    return { stop: () => {}, save };
  }
  const timer = setInterval(() => void save(), BUDGET_SAVE_MS);
  timer.unref?.();
  return { stop: () => clearInterval(timer), save };
}
