/**
 * The error classification table (SPEC 6.3): one place in code that maps what an upstream said —
 * status, headers, body, provider — to what happens to the account and to the attempt loop. Every
 * other module asks this table; none re-derives it.
 */
import { hubError, type HubError } from "../formats/hub.ts";
import { epochMs, parseGoDuration } from "../formats/retry-after.ts";
import { CUT_TOOL_CALL_CODE, UNFINISHED_REPLY_CODE } from "../formats/normalize.ts";
import type { TransportError } from "./execute.ts";
import { scrubText } from "./scrub.ts";

/**
 * What happens to the account (or account/model pairing) that served the attempt. SPEC 6.2 loop 2:
 * cooldowns are for the model that failed unless the error is about the whole account; the table's
 * rate-limit, backoff, 5xx and transport rows are per model, and what is about the whole account
 * (exhausted quota, a ban, 402, a rejected credential) is a `lock` or `credential` effect.
 */
export type AccountEffect =
  | { type: "none" }
  /** Cooldown until a known time (ms since the epoch), for one model or the whole account. */
  | { type: "cooldown_until"; scope: "model" | "account"; until: number; reason: string }
  /** Cooldown for a fixed time, in ms. */
  | { type: "cooldown_for"; scope: "model" | "account"; ms: number; reason: string }
  /**
   * Exponential backoff: 2 s doubling per consecutive hit, ceiling 5 min (per account/model); at least
   * until `until` (ms since the epoch, capped at 6 h) when the provider named a longer wait.
   */
  | { type: "backoff"; reason: string; until?: number }
  /** The whole account is locked until `until` (ms since the epoch) or until changed (undefined). */
  | { type: "lock"; until?: number; reason: string }
  /** The credential is rejected: refresh once when OAuth, else disable it. */
  | { type: "credential"; reason: string }
  /** This account cannot serve this model: remove the pairing. */
  | { type: "remove_pairing"; reason: string };

/** What the attempt loop does next. */
export type LoopEffect =
  /** Retry on the same account (502/503/504, connection errors), up to 3 times a few seconds apart. */
  | "retry_same"
  /** Pick another account of the same target. */
  | "next_account"
  /** Give up on this target (no other account), move on to the next combo target. */
  | "next_target"
  /** Return this error to the client at once: no fallback could help. */
  | "return";

/** A row of the table, applied. */
export interface Classification {
  /** Row id for traces and tests. */
  row: ClassificationRow;
  account: AccountEffect;
  loop: LoopEffect;
  /** Seconds the provider asked to wait, when it said. */
  retryAfterSeconds?: number;
}

/** A per-minute token window's limit and a request's size as a 429's text gives them ("Limit 30000, Requested 35364"). */
export interface WindowFigures {
  limit?: number;
  requested?: number;
}

/** The rows of SPEC 6.3. */
export type ClassificationRow =
  | "rate_limit_with_reset"
  | "rate_limit_per_minute"
  | "rate_limit_backoff"
  | "quota_exhausted"
  | "credential"
  | "model_unavailable"
  | "payment_required"
  | "request_too_large"
  | "too_large_for_window"
  | "no_capacity"
  | "client_error"
  | "server_error"
  | "transport"
  | "empty_reply"
  | "redirect"
  | "gateway_stopping"
  | "gateway_error";

/** Everything known about one failed attempt. */
export interface FailureFacts {
  /**
   * HTTP status; undefined for a transport failure. A 200 whose first event was an error carries that
   * error's status; an unusable 2xx (`unusable`) the status the upstream sent (the route trace shows it
   * beside the error text; the client gets a 502).
   */
  status?: number;
  transport?: TransportError["reason"];
  headers?: Headers;
  /** The upstream error body text (bounded). */
  bodyText?: string;
  /** The upstream error as parsed by the provider's format. */
  error?: HubError;
  /** true when the error arrived as the first event of a 200 stream (SPEC R-8). */
  inBand?: boolean;
  /**
   * true when the gateway itself failed on the reply (a reply driver that threw before the commit
   * point: a decoder or encoder bug), not the upstream: whatever `status` says, no row about the
   * upstream applies.
   */
  gateway?: boolean;
  /**
   * true when this gateway's own shutdown cut the call (the grace period ended while it waited, SPEC
   * D-3): no row about the upstream applies. Not read from the error's code: an upstream (another
   * switchyard in front of the provider) may answer a 503 `gateway_stopping` of its own, which is an
   * upstream failure like any other (fallback to the next account or target).
   */
  stopping?: boolean;
  /**
   * true when the upstream answered 2xx with a reply the gateway cannot use at all (not JSON, not the
   * format's shape, an HTML page, no body, a stream that ended before its first byte; pipeline/commit-failures.ts):
   * SPEC 6.3's last row, as a reply with nothing usable. No row about an upstream error applies: the
   * status the upstream sent was a success.
   */
  unusable?: boolean;
  /** Whether the cached quota windows for this account/model look healthy (> 2 % left). */
  quotaHealthy?: boolean;
  /** ms since the epoch, for converting reset times. */
  now: number;
}

/** Cooldown reasons the table writes for a 429 rate limit (with a reset time, per-minute, backoff). */
const RATE_LIMIT_RESET_REASON = "429 with a reset time";
const RATE_LIMIT_MINUTE_REASON = "429 rate limit (per-minute window)";
const RATE_LIMIT_BACKOFF_REASON = "429";

/**
 * The cooldown reasons that mean the account was rate limited (a 429). Accounts cooling down for one
 * of these make a request that finds no account a 429 rather than a 503. Cooldowns are stored with
 * their reason only, so the registry reads the cause back from it.
 */
export const RATE_LIMIT_REASONS: ReadonlySet<string> = new Set([RATE_LIMIT_RESET_REASON, RATE_LIMIT_MINUTE_REASON, RATE_LIMIT_BACKOFF_REASON]);

/** The lock reason of an account whose quota is exhausted (or that is blocked): excluded for quota. */
export const QUOTA_LOCK_REASON = "quota exhausted or account blocked";

/** The error code of a request whose upstream call the end of a shutdown's grace period cut (unserved-errors.ts gatewayStoppingError). */
export const GATEWAY_STOPPING_CODE = "gateway_stopping";

/** Upper bound of any cooldown (SPEC 6.3): 6 h in ms. */
export const MAX_COOLDOWN_MS = 6 * 3600_000;
/** Cooldown of the (account, model) pair after transport/5xx failures once same-account retries are spent (SPEC 6.3): 30 s. */
export const SHORT_COOLDOWN_MS = 30_000;
/**
 * The furthest a quota lock follows a named reset: 31 days (switchyard's bound, not the SPEC's: a
 * monthly window resets within 31 days, so a reset named further ahead is more likely misread than real).
 */
export const MAX_QUOTA_LOCK_MS = 31 * 24 * 3600_000;
/** The per-minute rate-limit rule (SPEC 6.3): 90 s. */
export const PER_MINUTE_COOLDOWN_MS = 90_000;

const QUOTA_WORDS =
  /insufficient_quota|quota (?:has been )?exceeded|exceeded your (?:current )?quota|usage limit|spend(?:ing)? (?:limit|cap)|enforced_spend_limit|monthly (?:limit|cap)|billing|credit balance|verify your|verification required|account (?:is )?(?:banned|suspended|disabled|deactivated)|organization (?:has been )?disabled|usage_not_included/i;
const RATE_WORDS = /rate[ _-]?limit|too many requests|per[ -]minute|requests per|tokens per|try again in/i;
const OVERLOAD_WORDS = /overloaded|overload/i;
const CONTEXT_WORDS =
  /context[_ ]length|context window|prompt is too long|too many tokens|maximum context|request too large|request_too_large|input is too long|exceeds the (?:maximum|max)/i;
const NO_CAPACITY_WORDS = /no capacity available/i;
/**
 * A 429 about the request's own size against a per-window limit (OpenAI: "Request too large for
 * gpt-4o-mini … on tokens per min (TPM): Limit 30000, Requested 35364", code `rate_limit_exceeded`):
 * waiting cannot make it pass. A genuine rate limit ("Rate limit reached … Limit 30000, Used 29000,
 * Requested 2000") names a request within the limit and does not match.
 */
const TOO_LARGE_FOR_WINDOW_WORDS = /request too large|request_too_large/i;
/**
 * OpenAI's (and Groq's) figures: "Limit N, Requested M" or "Limit N, Used U, Requested M", numbers with
 * or without thousands separators ("Limit 1,000,000, Used 999,000, Requested 2,000").
 */
const LIMIT_REQUESTED = /\blimit:?\s*(\d[\d,]*)\s*,\s*(?:used:?\s*\d[\d,]*\s*,\s*)?requested:?\s*(\d[\d,]*)/i;
const THOUSANDS = /,/g;

/**
 * Whether a 429's text says the request alone exceeds the limit it was measured against: the
 * "Request too large" wording, or a "Limit N, (Used U,) Requested M" list with M > N.
 */
function tooLargeForWindow(text: string): boolean {
  if (TOO_LARGE_FOR_WINDOW_WORDS.test(text)) return true;
  const m = LIMIT_REQUESTED.exec(text);
  return m !== null && Number(m[2]!.replace(THOUSANDS, "")) > Number(m[1]!.replace(THOUSANDS, ""));
}

/**
 * The figures of a "Limit N, (Used U,) Requested M" list in a 429's text (OpenAI's, Groq's): the
 * window's limit N and the request's M tokens; empty when the text has no such list.
 */
export function windowFigures(text: string): WindowFigures {
  const m = LIMIT_REQUESTED.exec(text);
  return m === null ? {} : { limit: Number(m[1]!.replace(THOUSANDS, "")), requested: Number(m[2]!.replace(THOUSANDS, "")) };
}
const MODEL_WORDS = /model[_ ]not[_ ]found|does not exist|not supported for|do not have access to (?:the )?model|model .* (?:is not|isn't) (?:available|supported)|unknown model|invalid model|not_found_error/i;
const CREDENTIAL_403_WORDS = /invalid (?:api[ _-]?key|token|credential)|token (?:has )?expired|unauthori[sz]ed|authentication|revoked|invalid_grant|oauth/i;

/**
 * Reads the time a provider says to wait until, in ms since the epoch: `Retry-After` (seconds or an
 * HTTP date), Anthropic `anthropic-ratelimit-*-reset` (RFC 3339), Claude subscriptions'
 * `anthropic-ratelimit-unified-reset` (Unix seconds; a window's own `-reset` only when its `-status`
 * is `rejected`), Codex `x-codex-*-reset-at` / `-reset-after-seconds` of a window at 100 % used,
 * OpenAI `x-ratelimit-reset-*`
 * ("1s", "6m0s", "20ms"), a hub error's `retryAfterSeconds` (Gemini RetryInfo), or "try again in 1.5s"
 * / "resets at <ISO time>" in the body. Undefined when none is given.
 */
export function resetTimeOf(f: Pick<FailureFacts, "headers" | "bodyText" | "error" | "now">): number | undefined {
  const h = f.headers;
  const candidates: number[] = [];
  if (h) {
    const ra = h.get("retry-after");
    if (ra) {
      const secs = Number(ra);
      if (Number.isFinite(secs)) candidates.push(f.now + secs * 1000);
      else {
        const d = Date.parse(ra);
        if (Number.isFinite(d)) candidates.push(d);
      }
    }
    const retryMs = h.get("retry-after-ms");
    if (retryMs && Number.isFinite(Number(retryMs))) candidates.push(f.now + Number(retryMs));
    h.forEach((value, name) => {
      if (name.startsWith("anthropic-ratelimit-unified-")) {
        // Claude subscriptions (Unix seconds): the overall reset names the binding window; a window's
        // own reset counts only when that window is the rejected one (a 7-day reset must not
        // stretch a 5-hour rejection).
        const w = /^anthropic-ratelimit-unified-(?:(.+)-)?reset$/.exec(name);
        // `overage` (paid extra usage) is not the subscription's window.
        if (w && (w[1] === undefined || (!w[1].startsWith("overage") && h.get(`anthropic-ratelimit-unified-${w[1]}-status`) === "rejected"))) {
          const d = epochMs(value);
          if (d !== undefined && d > f.now) candidates.push(d);
        }
      } else if (/^anthropic-ratelimit-.*-reset$/.test(name)) {
        const d = Date.parse(value);
        if (Number.isFinite(d) && d > f.now) candidates.push(d);
      } else if (/^x-codex(?:[-_].+)?-(?:primary|secondary)-used-percent$/.test(name) && Number(value) >= 100) {
        // Codex: the reset of a window that is used up (reset-at in Unix seconds wins over reset-after-seconds).
        const base = name.slice(0, -"used-percent".length);
        const at = epochMs(h.get(`${base}reset-at`) ?? "");
        const after = Number(h.get(`${base}reset-after-seconds`) ?? NaN);
        if (at !== undefined && at > f.now) candidates.push(at);
        else if (Number.isFinite(after) && after > 0) candidates.push(f.now + after * 1000);
      } else if (/^x-ratelimit-reset-(requests|tokens)$/.test(name)) {
        const ms = parseGoDuration(value);
        if (ms !== undefined) candidates.push(f.now + ms);
      }
    });
  }
  // A format's parsed wait repeats the headers (rounded up to whole seconds: `retry-after-ms: 2500` reads
  // as 3 s there), so it counts only when the headers named none (Gemini's RetryInfo lives in the body).
  if (f.error?.retryAfterSeconds !== undefined && candidates.length === 0) candidates.push(f.now + f.error.retryAfterSeconds * 1000);
  const text = f.bodyText ?? f.error?.message ?? "";
  const m = /try again in ([\d.]+)\s*(ms|s|seconds?|m|minutes?|h|hours?)\b/i.exec(text);
  if (m) {
    const n = Number(m[1]);
    const unit = m[2].toLowerCase();
    const mult = unit === "ms" ? 1 : unit.startsWith("m") ? 60_000 : unit.startsWith("h") ? 3600_000 : 1000;
    candidates.push(f.now + n * mult);
  }
  const iso = /resets? (?:at|on) (\d{4}-\d{2}-\d{2}T[\d:.]+(?:Z|[+-]\d{2}:?\d{2})?)/i.exec(text);
  if (iso) {
    const d = Date.parse(iso[1]);
    if (Number.isFinite(d)) candidates.push(d);
  }
  const resetsIn = /"resets_in_seconds"\s*:\s*(\d+)/.exec(text);
  if (resetsIn) candidates.push(f.now + Number(resetsIn[1]) * 1000);
  const resetsAt = /"resets_at"\s*:\s*(\d{9,})/.exec(text);
  if (resetsAt) {
    const v = Number(resetsAt[1]);
    candidates.push(v < 1e12 ? v * 1000 : v);
  }
  if (candidates.length === 0) return undefined;
  return Math.max(...candidates);
}



/** The cooldown reason of a 404 that is not the provider's error JSON ({@link misdirected404}). */
export const MISDIRECTED_404_REASON = "upstream 404 that is not the provider's error (check providers[].base_url)";

/**
 * Whether a failed attempt is a 404 whose body is not the provider's own error JSON — empty, an HTML
 * page, plain text not naming a model — i.e. the URL switchyard built from the provider's `base_url`
 * and `kind` is not an API endpoint there (a wrong path, `/v1` where the kind wants the host root). A
 * JSON 404 (the provider's "model not found") and an in-band error are not.
 */
export function misdirected404(f: Pick<FailureFacts, "status" | "inBand" | "bodyText">): boolean {
  if (f.status !== 404 || f.inBand || f.bodyText === undefined) return false;
  const body = f.bodyText.trim();
  // A page is a web server's, whatever words it holds ("The requested URL does not exist").
  if (body.startsWith("<")) return true;
  if (MODEL_WORDS.test(body)) return false;
  if (body.startsWith("{")) {
    try {
      return isBareNotFound(JSON.parse(body));
    } catch {
      // not JSON after all: a wrong URL's page
    }
  }
  return true;
}

/**
 * Whether a JSON 404 body is a web framework's answer to a path it has no route for rather than the
 * provider's error: one field (`detail`, `message` or `error`) reading just "Not Found" — FastAPI's
 * `{"detail":"Not Found"}`, which vLLM, LiteLLM and other OpenAI-compatible servers answer for a wrong
 * path (observed; review19 R1), and the same from Express-style servers.
 */
function isBareNotFound(json: unknown): boolean {
  if (typeof json !== "object" || json === null || Array.isArray(json)) return false;
  const entries = Object.entries(json);
  if (entries.length !== 1) return false;
  const [name, value] = entries[0]!;
  return (name === "detail" || name === "message" || name === "error") && typeof value === "string" && /^\s*not found\.?\s*$/i.test(value);
}

/**
 * The error for a {@link misdirected404} reply (502: the gateway's upstream is misconfigured). The
 * client's `message` names the provider and what came back (an HTML page, no body, other text) and says
 * the gateway's `providers[].base_url` is probably wrong — never the URL: the client of a gateway is not
 * its operator, and a hosted gateway's path carries the operator's data (an account id, a deployment
 * name; review19 R4). `traceMessage`, for the attempt's route trace (the operator's `calls inspect` and
 * dashboard), starts with the URL called without its query string (Gemini's `key=`) or user info, so
 * that the trace's 300 characters keep it whole however long the reason after it.
 */
export function misdirected404Error(providerId: string, url: string | undefined, bodyText: string): HubError {
  const body = bodyText.trim();
  const what = body === "" ? "no body" : /^<(?:!doctype|html|head|body|h\d|p|title)\b/i.test(body) ? "an HTML page" : "a body that is not an API error";
  let called: string | undefined;
  try {
    const u = new URL(url ?? "");
    called = `${u.origin}${u.pathname}`;
  } catch {
    // no URL to name
  }
  return hubError(
    "api_error",
    `Upstream ${providerId} answered HTTP 404 with ${what}, so the URL the gateway called there is not an API endpoint: the gateway's provider configuration (providers[].base_url of ${providerId}) is probably wrong, not the model. The gateway's operator finds that URL in this request's route trace.`,
    {
      status: 502,
      code: "upstream_url_not_found",
      // the URL first: the trace keeps 300 characters, and a hosted gateway's URL can take most of them (review20 R1)
      traceMessage: `URL called (query left out): ${called ?? "unknown"} — upstream ${providerId} answered HTTP 404 with ${what}: that URL is not an API endpoint there, so providers[].base_url of ${providerId} is probably wrong (not the model).`,
    },
  );
}

/**
 * Classifies one failed attempt per SPEC 6.3. Pure: the caller applies the effects (cooldowns written
 * through to the store, circuit counts, refresh).
 */
export function classify(f: FailureFacts): Classification {
  // The gateway's own failure says nothing about the account or the provider: no cooldown, no health
  // or circuit count; the same reply would fail the same way elsewhere, so no other attempt is spent.
  if (f.gateway) return { row: "gateway_error", account: { type: "none" }, loop: "return" };
  // A streamed reply the provider ended with nothing in it (a Chat stream of only `choices: []` chunks,
  // formats/openai-chat/decoder.ts EMPTY_REPLY_ERROR), or whose token limit cut its tool call for a client
  // given calls only whole (formats/normalize.ts cutToolCallError): the row of a whole reply with nothing
  // usable (commit.ts), whatever its 502 says: no account effect, no same-account retry, the next target.
  // A 2xx the gateway cannot read at all (commit-failures.ts unusableReply) takes the same row: the upstream
  // sent no error status, so nothing counts toward its circuit or cools the account; another target may serve.
  if (f.unusable || f.error?.code === "upstream_empty_reply" || f.error?.code === CUT_TOOL_CALL_CODE || f.error?.code === UNFINISHED_REPLY_CODE) return { row: "empty_reply", account: { type: "none" }, loop: "next_target" };
  // The gateway's own shutdown cut the call (SPEC D-3: the grace period ended while it waited): nothing
  // about the upstream, no account effect, no other attempt (unserved-errors.ts gatewayStoppingError).
  if (f.stopping) return { row: "gateway_stopping", account: { type: "none" }, loop: "return" };
  if (f.status === undefined) {
    // SPEC 6.2 loop 2: a cooldown for that model, the error being about no more than this call (a
    // connection to one model's endpoint, one model's server down); the account's other models still serve.
    return { row: "transport", account: { type: "cooldown_for", scope: "model", ms: SHORT_COOLDOWN_MS, reason: `transport: ${f.transport ?? "error"}` }, loop: "retry_same" };
  }
  const s = f.status;
  // A redirect (3xx, not followed: the call carries the account's key) says the provider's base_url is
  // wrong, not the key or the account: as SPEC 6.3's "any other 4xx" (the configuration is at fault), no
  // account effect and no count toward the circuit; the provider's other accounts share the URL, so the
  // next target, not the next account.
  if (s >= 300 && s < 400) return { row: "redirect", account: { type: "none" }, loop: "next_target" };
  const text = `${f.error?.code ?? ""} ${f.error?.message ?? ""} ${f.bodyText ?? ""}`;
  const kind = f.error?.kind;
  const reset = resetTimeOf(f);
  const retryAfterSeconds = reset !== undefined ? Math.max(0, Math.ceil((reset - f.now) / 1000)) : undefined;

  // Requests no other account or model can fix (SPEC 6.3 "400/413/422 prompt or request too large").
  if ((s === 400 || s === 413 || s === 422) && (kind === "context_length_exceeded" || kind === "request_too_large" || CONTEXT_WORDS.test(text))) {
    return { row: "request_too_large", account: { type: "none" }, loop: "return" };
  }
  // A 429 (or an in-band rate-limit notice) saying this request alone exceeds the per-minute limit:
  // no wait lets it through on this account, so no cooldown for the model's other callers and no
  // Retry-After; but the limit is this account's (its organisation's usage tier) and this model's, so
  // another account of the pool, or the combo's next target, may serve it (review16 R1).
  if ((s === 429 || (kind === "rate_limit" && f.inBand)) && tooLargeForWindow(text)) {
    return { row: "too_large_for_window", account: { type: "none" }, loop: "next_account" };
  }
  if (NO_CAPACITY_WORDS.test(text)) return { row: "no_capacity", account: { type: "none" }, loop: "return" };

  if (s === 402) return { row: "payment_required", account: { type: "lock", until: reset, reason: "402 payment required" }, loop: "next_account" };

  if (kind === "quota_exhausted" || kind === "billing" || ((s === 429 || s === 403 || s === 400) && QUOTA_WORDS.test(text))) {
    return {
      row: "quota_exhausted",
      account: { type: "lock", until: reset !== undefined ? Math.min(reset, f.now + MAX_QUOTA_LOCK_MS) : undefined, reason: QUOTA_LOCK_REASON },
      loop: "next_account",
      retryAfterSeconds,
    };
  }

  // The status decides first (SPEC 6.2/6.3): a 502/503/504 is the same-account row whatever its body
  // says (an OpenAI or Gemini 503 reads as "overloaded"), so only a 429, a 529 or an in-band notice (the
  // first event of a 200, which carries no status of its own) can reach the backoff row.
  const statusSays5xx = s >= 500 && s !== 529 && !f.inBand;
  if (!statusSays5xx && (s === 429 || s === 529 || kind === "overloaded" || (kind === "rate_limit" && f.inBand))) {
    const overloaded = s === 529 || kind === "overloaded" || OVERLOAD_WORDS.test(text);
    if (overloaded) {
      // SPEC 6.3: backoff and the next account. SPEC R-8/6.2: an overloaded notice as the first event of
      // a 200 counts as a 503: first retried on the same account, then backs off.
      const account: AccountEffect = reset !== undefined ? { type: "backoff", reason: "overloaded", until: Math.min(reset, f.now + MAX_COOLDOWN_MS) } : { type: "backoff", reason: "overloaded" };
      return { row: "rate_limit_backoff", account, loop: f.inBand ? "retry_same" : "next_account", retryAfterSeconds };
    }
    if (reset !== undefined) {
      return {
        row: "rate_limit_with_reset",
        account: { type: "cooldown_until", scope: "model", until: Math.min(reset, f.now + MAX_COOLDOWN_MS), reason: RATE_LIMIT_RESET_REASON },
        loop: "next_account",
        retryAfterSeconds,
      };
    }
    if (RATE_WORDS.test(text) && f.quotaHealthy !== false) {
      return { row: "rate_limit_per_minute", account: { type: "cooldown_for", scope: "model", ms: PER_MINUTE_COOLDOWN_MS, reason: RATE_LIMIT_MINUTE_REASON }, loop: "next_account", retryAfterSeconds: 90 };
    }
    return { row: "rate_limit_backoff", account: { type: "backoff", reason: RATE_LIMIT_BACKOFF_REASON }, loop: "next_account" };
  }

  if (s === 401) return { row: "credential", account: { type: "credential", reason: "401 unauthorized" }, loop: "next_account" };
  if (s === 403) {
    if (MODEL_WORDS.test(text)) return { row: "model_unavailable", account: { type: "remove_pairing", reason: "403 model not available to this account" }, loop: "next_target" };
    if (CREDENTIAL_403_WORDS.test(text)) return { row: "credential", account: { type: "credential", reason: "403 credential rejected" }, loop: "next_account" };
    // A request-policy 403: the request is at fault, not the key (SPEC 6.3 "any other 4xx").
    return { row: "client_error", account: { type: "none" }, loop: "next_target" };
  }
  // A 404 whose body is not the provider's own error JSON (a web server's HTML page, no body, plain
  // text) says the URL is wrong, not the model (try19 D7: a base_url with the wrong path): the server
  // row of this account — a short cooldown for the model, the next account, the circuit's count — and
  // no removed pairing, which would outlive the operator's fix of the base_url.
  if (misdirected404(f)) {
    return { row: "server_error", account: { type: "cooldown_for", scope: "model", ms: SHORT_COOLDOWN_MS, reason: MISDIRECTED_404_REASON }, loop: "next_account" };
  }
  if (s === 404 && (kind === "model_not_found" || kind === "not_found" || MODEL_WORDS.test(text))) {
    return { row: "model_unavailable", account: { type: "remove_pairing", reason: "404 model not found" }, loop: "next_target" };
  }
  if (s >= 400 && s < 500) return { row: "client_error", account: { type: "none" }, loop: "next_target" };

  if (s >= 500) {
    const retryable = s === 502 || s === 503 || s === 504;
    const waitsLong = reset !== undefined && reset - f.now > 60_000;
    return {
      row: "server_error",
      // For that model (SPEC 6.2 loop 2): a 5xx, or a stream that broke before the commit point, says
      // nothing about the account's other models (what is about the whole account is a lock, above).
      // A named wait longer than the short cooldown (a 503 with `Retry-After: 120`) is kept until then,
      // capped at 6 h as a 429's reset is (SPEC 6.3): 30 s would send the next request back too early.
      account:
        reset !== undefined && reset - f.now > SHORT_COOLDOWN_MS
          ? { type: "cooldown_until", scope: "model", until: Math.min(reset, f.now + MAX_COOLDOWN_MS), reason: `upstream ${s}` }
          : { type: "cooldown_for", scope: "model", ms: SHORT_COOLDOWN_MS, reason: `upstream ${s}` },
      loop: retryable && !waitsLong ? "retry_same" : "next_account",
      retryAfterSeconds,
    };
  }
  return { row: "client_error", account: { type: "none" }, loop: "next_target" };
}

/**
 * The error for an upstream's redirect (a 3xx, which the gateway does not follow: the call carries the
 * account's key, which must not go where the redirect says; src/providers/index.ts fetches with
 * `redirect: "manual"`): 502 `upstream_redirect` in the client's format, naming the status and saying
 * the provider's `providers[].base_url` probably needs correcting. Where it pointed (its `Location`
 * without query string or user info, scrubbed of `secrets`: usually the base_url to use, http:// moved
 * to https://, a path wanting its trailing slash) goes in `traceMessage` only, for the operator's route
 * trace: the client of a gateway is not its operator ({@link misdirected404Error}, review19 R4).
 */
export function redirectError(providerId: string, status: number, location: string | null, secrets: Iterable<string> = []): HubError {
  let where = "without a Location";
  if (location) {
    try {
      const u = new URL(location, "http://relative.invalid");
      const shown = u.origin === "http://relative.invalid" ? u.pathname : `${u.origin}${u.pathname}`;
      where = `to ${scrubText(shown.slice(0, 200), secrets)}`;
    } catch {
      where = "to an address that is not a URL";
    }
  }
  return hubError(
    "api_error",
    `Upstream ${providerId} answered HTTP ${status}, a redirect, which the gateway does not follow (the call carries the account's key): providers[].base_url of ${providerId} probably needs to be the address it redirects to. The gateway's operator finds that address in this request's route trace.`,
    {
      status: 502,
      code: "upstream_redirect",
      traceMessage: `Redirect ${where} — upstream ${providerId} answered HTTP ${status}, which the gateway does not follow (the call carries the account's key): providers[].base_url of ${providerId} probably needs to be that address.`,
    },
  );
}
