/**
 * What the gateway tells its operator about the requests the browser rules refused (SPEC 2.6,
 * src/http/browser-guard.ts): a web page attacking the gateway (DNS rebinding: a 421 for its Host; a
 * foreign Origin without a key, or its CORS preflight: a 403) must be seen, not only stopped.
 *
 * Every refusal is counted in `switchyard_browser_refusals_total` (GatewayMetrics.browserRefusal), by
 * `reason` (`host`, `origin`, `preflight`) and `surface` (which part of the gateway was asked:
 * {@link surfaceOf}); labels from those fixed lists only, never the Host or Origin itself.
 *
 * And it is logged, a JSON line of level `warn` (`msg` "browser rules refused a request") naming the
 * reason, the surface, the status, the method, the path without its query, and the refused Host or Origin
 * value, each cut at {@link SHOWN_CHARS} characters and its control characters escaped as the CLI
 * escapes them (src/cli/terminal.ts `visible`). A page can send thousands of requests a minute, so the
 * lines are bounded ({@link BrowserRefusalLog}): the first refusal of a reason and value in a minute is
 * logged, the others only counted, and the next line of that reason and value says how many in `more`;
 * when that value is not refused again, a line of what was held back says it once its minute is over
 * ({@link BrowserRefusalLog.sweep}: on the app's periodic timer, or when another refusal line is written).
 *
 * Runs on refusals only: an allowed request never reaches this module.
 */
import { visible } from "../cli/terminal.ts";
import { pathOf, type BrowserRefusal, type BrowserRefusalReason } from "./browser-guard.ts";

/**
 * The part of the gateway a refused request asked for: `websocket` (an upgrade, on any path), `api`
 * (`/v1`, `/v1beta`), `admin` (`/admin/…`), `dashboard`, `metrics`, `health` (`/health`, `/api/hello`),
 * `other` (any other path).
 */
export type BrowserSurface = "api" | "websocket" | "admin" | "dashboard" | "metrics" | "health" | "other";

/** Characters of a refused value, a method or a path a log line shows, before its control characters are escaped. */
export const SHOWN_CHARS = 200;

/** How long after a logged line a refusal of the same reason and value is only counted, ms. */
export const REFUSAL_LOG_WINDOW_MS = 60_000;

/**
 * The most (reason, value) pairs remembered at once. A refusal of a new pair while that many were logged
 * within the window is not logged; it is counted in the next line's `moreOtherValues` (and in the metric).
 * So at most this many refusal lines are written per window, whatever a caller varies.
 */
export const MAX_REFUSAL_KEYS = 100;

/** The surface of a refused request's `path` (as in its URL, not decoded): see {@link BrowserSurface}. */
export function surfaceOf(request: Request, path: string): BrowserSurface {
  if ((request.headers.get("upgrade") ?? "").toLowerCase() === "websocket") return "websocket";
  const p = path.includes("//") ? path.replace(/\/{2,}/g, "/") : path;
  if (/^\/v1(beta)?(\/|$)/.test(p)) return "api";
  if (p === "/admin" || p.startsWith("/admin/")) return "admin";
  if (p === "/dashboard" || p.startsWith("/dashboard/")) return "dashboard";
  if (p === "/metrics") return "metrics";
  if (p === "/health" || p === "/api/hello") return "health";
  return "other";
}

/**
 * `value` as a log line shows it: its first {@link SHOWN_CHARS} characters (then "…" when it was longer),
 * each C0 and C1 control character, DEL, bidi control and U+2028/2029 escaped as `\u001b`, `\r`… (the
 * CLI's `visible`), so that a log viewer printing the string raw shows one line, in its own order.
 */
export function shownValue(value: string): string {
  let cut = value.length > SHOWN_CHARS ? value.slice(0, SHOWN_CHARS) : value;
  // never half a surrogate pair
  if (cut.length < value.length && /[\ud800-\udbff]$/.test(cut)) cut = cut.slice(0, -1);
  return visible(cut) + (cut.length < value.length ? "…" : "");
}

/** Where a refusal is counted (GatewayMetrics). */
export interface RefusalCounter {
  browserRefusal(reason: BrowserRefusalReason, surface: BrowserSurface): void;
}

/** A (reason, value) pair's log state: until when its refusals are only counted, and how many were. */
interface Logged {
  until: number;
  more: number;
  reason: BrowserRefusalReason;
  /** The value as its lines show it ({@link shownValue}). */
  value: string;
}

/** The `msg` of the line that says the refusals held back of values not refused again ({@link BrowserRefusalLog.sweep}). */
export const HELD_BACK_MSG = "browser rules refused more requests than were logged";

/**
 * Counts and logs the browser rules' refusals (see the module comment). `note` is called once per
 * refusal, after the guard refused and before the answer is sent; constant work (a Map lookup, and a
 * log line at most once per reason and value per {@link REFUSAL_LOG_WINDOW_MS}).
 */
export class BrowserRefusalLog {
  private readonly logged = new Map<string, Logged>();
  /** Refusals not logged because {@link MAX_REFUSAL_KEYS} other pairs were, said in the next line. */
  private unlisted = 0;

  constructor(
    private readonly counter: RefusalCounter,
    private readonly log: (line: string) => void,
    /** Milliseconds since the epoch (the app's clock). */
    private readonly now: () => number,
  ) {}

  /**
   * Counts one refusal of `request` (answered with `status`) and logs it unless a line of its reason and
   * value was logged in the window. A bound function (ServerDeps.onBrowserRefusal takes it as it is).
   */
  readonly note = (request: Request, refusal: BrowserRefusal, status: number): void => {
    const path = pathOf(request.url);
    const surface = surfaceOf(request, path);
    this.counter.browserRefusal(refusal.reason, surface);
    const value = shownValue(refusal.value);
    const key = refusal.reason + "\u0000" + value;
    const now = this.now();
    let entry = this.logged.get(key);
    if (entry !== undefined && now < entry.until) {
      entry.more++;
      return;
    }
    if (entry === undefined && this.logged.size >= MAX_REFUSAL_KEYS) {
      this.prune(now);
      if (this.logged.size >= MAX_REFUSAL_KEYS) {
        this.unlisted++;
        return;
      }
    }
    const more = entry?.more ?? 0;
    if (entry === undefined) this.logged.set(key, (entry = { until: 0, more: 0, reason: refusal.reason, value }));
    entry.until = now + REFUSAL_LOG_WINDOW_MS;
    entry.more = 0;
    const moreOtherValues = this.unlisted;
    this.unlisted = 0;
    this.log(
      JSON.stringify({
        level: "warn",
        time: now,
        msg: "browser rules refused a request",
        reason: refusal.reason,
        surface,
        status,
        method: shownValue(request.method),
        path: shownValue(path),
        [refusal.reason === "host" ? "host" : "origin"]: value,
        // refusals of this reason and value since its last line, counted, not logged
        more: more || undefined,
        // refusals of other values not logged (too many different ones within a window)
        moreOtherValues: moreOtherValues || undefined,
        hint:
          refusal.reason === "host"
            ? "a web page may be trying DNS rebinding; if the name is yours, add it to server.allowed_hosts"
            : "a web page of another origin called the gateway without a key; server.cors_origins lists the origins trusted on the client API (/v1, /v1beta)",
      }),
    );
    // The other pairs whose window ended: what they held back is said now, not only if refused again.
    this.prune(now, key);
  };

  /**
   * Says what was held back and not said yet, so that no count is left to the metric alone when refusals
   * of a value stop within their minute: one line ({@link HELD_BACK_MSG}, level `warn`) listing, in
   * `refused`, each reason and value whose window ended with refusals counted but not logged (`more`),
   * and in `moreOtherValues` the refusals of values not logged at all (over {@link MAX_REFUSAL_KEYS}), if
   * any; no line when there is nothing to say. The app calls it on its periodic timer (src/app.ts, every
   * 10 s); a refusal line written calls it too (for the pairs other than its own). A pair whose window is
   * running is left for its window's end. At most {@link MAX_REFUSAL_KEYS} entries; O(pairs remembered).
   */
  sweep(): void {
    this.prune(this.now(), undefined, true);
  }

  /**
   * {@link sweep} at a stop: every pair's held-back refusals are said now, its window running or not (no
   * later refusal or timer will come to say them), in the same line; the pairs are then forgotten.
   */
  flush(): void {
    this.prune(this.now(), undefined, true, true);
  }

  /**
   * Forgets the pairs whose window ended (but `except`'s) and logs the refusals they counted and had not
   * said yet ({@link sweep}'s line); with `withUnlisted`, that line also says `moreOtherValues`, which
   * otherwise waits for the next refusal line; with `everyWindow`, the pairs whose window is still
   * running too ({@link flush}).
   */
  private prune(now: number, except?: string, withUnlisted = false, everyWindow = false): void {
    let refused: Array<Record<string, unknown>> | undefined;
    for (const [key, e] of this.logged) {
      if ((now < e.until && !everyWindow) || key === except) continue;
      this.logged.delete(key);
      if (e.more > 0) (refused ??= []).push({ reason: e.reason, [e.reason === "host" ? "host" : "origin"]: e.value, more: e.more });
    }
    const moreOtherValues = withUnlisted ? this.unlisted : 0;
    if (refused === undefined && moreOtherValues === 0) return;
    if (withUnlisted) this.unlisted = 0;
    this.log(JSON.stringify({ level: "warn", time: now, msg: HELD_BACK_MSG, refused: refused ?? [], moreOtherValues: moreOtherValues || undefined }));
  }
}
