/**
 * Gives memory back to the system once the gateway has been idle a while (issue 17: idle RSS of the
 * compiled binary). A burst of requests leaves JIT code, the grown JS heap and the allocators' freed
 * pages resident; JavaScriptCore hands little of it back by itself (measured: 91 → 84 MB 22 s after
 * 1,000 requests). After {@link IDLE_TRIM_MS} without a request (and once after start), `Bun.shrink()`
 * runs: JavaScriptCore's `shrinkFootprintWhenIdle` (drop all compiled code, a full collection, release
 * the allocator's free memory), deferred by the VM until no JavaScript is running.
 *
 * The price: the requests after a trim run interpreted until the JIT has compiled them again. Measured
 * with a 1 s threshold and bursts of 50 requests 1.3 s apart, that doubled the CPU per request (≈125 ms
 * of CPU per trim); hence the long threshold: at most one trim per 30 s of idleness, never under
 * continuous traffic (docs/performance.md, "What was changed"). Heavy traffic after a trim pays the
 * whole JIT warm-up again (all code and bytecode are dropped: ~590 compilations, seconds of compiler
 * CPU); `Bun.gc(true)` would keep the code but also ~9–10 MB of the ~10 MB the trim gives back, and Bun
 * has nothing in between (docs/performance.md, "JIT compilation, the idle trim and allocation churn").
 *
 * After the shrink, on Linux, the executable's clean read-only pages (Bun's machine code and read-only
 * data, ~40 MB after traffic) are dropped from the process too (src/memory/file-pages.ts): they stay in
 * the page cache and come back by minor faults when the code runs again.
 */
import { releaseExecutablePages, type ReleaseResult } from "./file-pages.ts";

/** Quiet time after the last request before memory is trimmed, ms. */
export const IDLE_TRIM_MS = 30_000;

/**
 * The idle time a start uses: `SWITCHYARD_IDLE_TRIM_MS` when it is a whole number of ms (0 turns the trim
 * off; tests and benchmarks shorten it to force a trim), else {@link IDLE_TRIM_MS}.
 */
export function idleTrimMsFromEnv(env: Record<string, string | undefined>): number {
  const v = env.SWITCHYARD_IDLE_TRIM_MS;
  return v !== undefined && /^\d+$/.test(v.trim()) ? Number(v) : IDLE_TRIM_MS;
}

/**
 * How long after `Bun.shrink()` the executable's pages are released, ms: the VM runs the shrink once the
 * current JavaScript has returned, and its collection and code deletion touch code of their own; the
 * release comes after them so that it is not undone at once.
 */
export const RELEASE_DELAY_MS = 250;

/**
 * The trim as shipped: `Bun.shrink()`, then after {@link RELEASE_DELAY_MS} the executable's clean pages
 * ({@link releaseExecutablePages}; a no-op where it cannot run). `released` hears what was given back.
 */
export function trimMemory(released?: (r: ReleaseResult | undefined) => void): void {
  Bun.shrink();
  const t = setTimeout(() => void releaseExecutablePages().then((r) => released?.(r)), RELEASE_DELAY_MS);
  t.unref?.();
}

/** Options of {@link IdleTrim}. */
export interface IdleTrimOptions {
  /** Quiet time after the last request before trimming, ms (default {@link IDLE_TRIM_MS}). */
  idleMs?: number;
  /** Requests in flight now (a stream counts until it ends). */
  inflight: () => number;
  /** ms since the epoch. */
  now: () => number;
  /** The trim itself (default {@link trimMemory}: `Bun.shrink()` and the executable's clean pages). */
  trim?: () => void;
  /** How often the idle time is checked, ms (default a quarter of `idleMs`, between 50 and 1,000). */
  checkEveryMs?: number;
}

/**
 * Trims memory once per idle period: {@link activity} marks a request start; the timer (unref'd, it
 * never keeps the process alive) trims when nothing is in flight, no request started for `idleMs`, and
 * something happened since the last trim (the start counts). {@link stop} ends the timer.
 */
export class IdleTrim {
  private lastActivity: number;
  /** A trim is due: a request (or the start) happened since the last one. */
  private due = true;
  private readonly idleMs: number;
  private readonly timer: ReturnType<typeof setInterval>;
  /** Trims done (diagnostics and tests). */
  trims = 0;

  constructor(private readonly opts: IdleTrimOptions) {
    this.lastActivity = opts.now();
    this.idleMs = opts.idleMs ?? IDLE_TRIM_MS;
    this.timer = setInterval(() => this.check(), opts.checkEveryMs ?? Math.min(1000, Math.max(50, Math.floor(this.idleMs / 4))));
    this.timer.unref?.();
  }

  /** A request started. */
  activity(): void {
    this.lastActivity = this.opts.now();
    this.due = true;
  }

  /** Trims when due, idle for `idleMs` and nothing is in flight (the timer calls it). */
  check(): void {
    if (!this.due || this.opts.inflight() > 0 || this.opts.now() - this.lastActivity < this.idleMs) return;
    this.due = false;
    this.trims++;
    (this.opts.trim ?? (() => trimMemory()))();
  }

  /** Stops the timer (shutdown). */
  stop(): void {
    clearInterval(this.timer);
  }
}
