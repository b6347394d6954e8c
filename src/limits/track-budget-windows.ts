/**
 * The key budget windows one instance knows of, for src/limits/shared-counters.ts (SPEC 2.3 "budgets:
 * fixed windows aligned to the first use", 9.6 with D-2). A budget's window opens at the key's first
 * counted request after the previous one ended and lasts the window's length, as on the embedded store;
 * across instances the database says when (`SharedStore.openBudgetWindow`: one upsert keeping an open
 * start, so instances opening it at once agree on one). Here each budget pool (`key:ID:budget:W:UNIT`)
 * has at most one current window:
 *
 * - known: read from the database (opened there by this instance or another), or
 * - pending: opened here, its start this instance's reading of the database's clock, until the
 *   database confirms it (the share's first refill asks it first: its start may be another instance's).
 *   While the database is away a pending window counts alone, and its start is proposed to the
 *   database when it answers again (taken when no other window opened meanwhile). A pending window no
 *   request counts in, holds, waits for or confirms (made for a request another limit refused) is not
 *   open: it is not shown, watched as unknown, and gives way to the window the database has.
 *
 * Times are ms since the epoch on the database's clock.
 */
import type { BudgetWindowSpan } from "../store/shared.ts";
import { shareAt, type Share } from "./quota-share.ts";

/** A budget pool's window as this instance knows it. */
export interface KnownWindow {
  start: number;
  end: number;
  /** Opened here, not yet confirmed by the database. */
  pending: boolean;
}

/** The current window of each budget pool this instance counts or watches; see the module comment. */
export class BudgetWindowTracker {
  private readonly windows = new Map<string, KnownWindow>();

  /** @param shares the counters' shares, keyed `name@windowStart` (src/limits/shared-counters.ts) */
  constructor(private readonly shares: Map<string, Share>) {}

  /**
   * The share of budget pool `name` in its current window (`fresh`: made by this call). No window
   * open: `opening` (a request counts) opens one here at `now`, pending; else undefined. A pending
   * window nothing counted in yet (a request refused meanwhile) is not open: it opens again at `now`
   * for `opening`, else undefined.
   */
  share(name: string, lengthMs: number, limit: number, block: number, now: number, opening: boolean): { s: Share; fresh: boolean } | undefined {
    let w = this.open(name, now);
    // Not opened yet (a request refused by another limit made it): unknown, as if never made.
    if (w && this.unopened(name, w)) {
      if (!opening) return undefined;
      this.shares.delete(`${name}@${w.start}`);
      w = undefined;
    }
    if (!w && !opening) return undefined;
    w ??= this.openHere(name, lengthMs, Math.round(now));
    const fresh = !this.shares.has(`${name}@${w.start}`);
    return { s: shareAt(this.shares, name, w.start, w.end, limit, block), fresh };
  }

  /** Whether `s` is the share of a window opened here that the database has not confirmed yet. */
  pending(s: Share, now: number): boolean {
    const w = this.open(s.name, now);
    return !!w && w.pending && w.start === s.windowStart;
  }

  /**
   * The database's answer to `s`'s pending window: the window is `span`, and `s` moves to it (with the
   * use of a share of that window known here already, read meanwhile: one share of the window).
   */
  adopt(s: Share, span: BudgetWindowSpan): void {
    this.confirm(span);
    if (span.start === s.windowStart && span.end === s.windowEnd) return;
    this.shares.delete(`${s.name}@${s.windowStart}`);
    const there = this.shares.get(`${s.name}@${span.start}`);
    if (there && there !== s) {
      s.used += there.used;
      s.reported += there.reported;
      s.unpriced += there.unpriced;
      s.unpricedReported += there.unpricedReported;
      s.othersUsed = Math.max(s.othersUsed, there.othersUsed);
      s.othersUnpriced = Math.max(s.othersUnpriced, there.othersUnpriced);
      s.stored ||= there.stored;
      s.learned ||= there.learned;
    }
    s.windowStart = span.start;
    s.windowEnd = span.end;
    this.shares.set(`${s.name}@${span.start}`, s);
  }

  /** The window of `name` open at `now` (pending ones included), or undefined (never known, or ended: forgotten). */
  open(name: string, now: number): KnownWindow | undefined {
    const w = this.windows.get(name);
    if (w && w.end <= now) {
      this.windows.delete(name);
      return undefined;
    }
    return w;
  }

  /** A pending window of `name` opening at `now` for `lengthMs` (replacing whatever was known). */
  openHere(name: string, lengthMs: number, now: number): KnownWindow {
    const w = { start: now, end: now + lengthMs, pending: true };
    this.windows.set(name, w);
    return w;
  }

  /** The database's window of a pool (confirming a pending one, whatever its start). */
  confirm(span: BudgetWindowSpan): KnownWindow {
    const w = { start: span.start, end: span.end, pending: false };
    this.windows.set(span.name, w);
    return w;
  }

  /**
   * A window read from the database: taken unless a pending one of the pool awaits its own confirmation
   * (one nothing counted in nor waits for is dropped for it). @returns whether it was taken
   */
  learn(span: BudgetWindowSpan, now: number): boolean {
    const w = this.open(span.name, now);
    if (span.end <= now || (w?.pending && !this.unopened(span.name, w))) return false;
    if (w?.pending) this.shares.delete(`${span.name}@${w.start}`);
    this.confirm(span);
    return true;
  }

  /**
   * Whether `w` is a pending window of `name` that no request counts in, holds, waits for or confirms:
   * made for a request another limit refused (SPEC 2.3: a refused request is not counted), so not open.
   */
  private unopened(name: string, w: KnownWindow): boolean {
    if (!w.pending) return false;
    const s = this.shares.get(`${name}@${w.start}`);
    return !s || (s.used === 0 && s.holding === 0 && s.unpriced === 0 && !s.syncing && s.waiting === 0);
  }
}
