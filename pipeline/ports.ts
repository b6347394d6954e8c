/**
 * The ports the pipeline needs from the application (src/ implements them; tests use plain fakes).
 * Nothing here knows about SQLite, Elysia or fetch.
 */
import type { ProviderKind } from "../formats/codec.ts";
import type { ProviderFamily, Usage, Warning, WireFormat } from "../formats/hub.ts";

// ---------------------------------------------------------------------------------------------
// Time
// ---------------------------------------------------------------------------------------------

/** Wall clock and sleeping, injectable for tests. */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /**
   * Milliseconds on a clock that never steps (not set back or forward by NTP or an operator), for
   * durations such as rate windows; any origin. Optional: without it, durations are read from `now`.
   */
  monotonic?(): number;
  /** Resolves after `ms` milliseconds, or rejects with the signal's reason when it aborts first. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/**
 * Secret values this gateway instance restored into replies to one client key (SPEC S-3), so that a
 * later request of that key redacts them wherever they appear, also where nothing around them says they
 * are secret: a password recognised only by `DATABASE_PASSWORD=` comes back in the model's text ("the
 * password is …"), and the client sends that text back on its next turn. In memory only, per instance,
 * bounded in count and in time (src/restored-secrets.ts); never logged, traced or stored.
 */
export interface RestoredSecrets {
  /**
   * Notes a value just restored as a `secret` placeholder, or just found again in a request (redaction
   * calls it for each remembered value it replaces): its time is kept from now on, so a value a
   * conversation keeps sending back is not forgotten while it does. Values too short or too long to look
   * for are ignored.
   */
  remember(value: string): void;
  /**
   * The values to look for now, in no particular order. The same array is returned until the set
   * changes (a caller may cache what it builds from it by the array's identity).
   */
  values(): readonly string[];
}

/**
 * The {@link RestoredSecrets} of one instance, one memory per client key: a value restored for one key
 * is never looked for in another key's requests (which could otherwise probe guesses at it by what
 * came back redacted). Requests without a client key share one memory.
 */
export interface RestoredSecretMemories {
  /** The memory of the client key with this id (pipeline/key-id.ts `keyId`); undefined: requests without a key. */
  forKey(keyId: string | undefined): RestoredSecrets;
}

// ---------------------------------------------------------------------------------------------
// Providers, models, accounts
// ---------------------------------------------------------------------------------------------

/** What the gateway knows about one model of a provider (SPEC 2.3 `models:`). Token counts in tokens. */
export interface ModelInfo {
  contextWindow?: number;
  maxOutputTokens?: number;
  images?: boolean;
  pdf?: boolean;
  audio?: boolean;
  video?: boolean;
  /** Reasoning effort levels this model supports (SPEC P-8); absent = unknown. */
  reasoningEfforts?: string[];
  /** SPEC R-10: configured siblings, tried before the built-in table's when the upstream says this model does not exist. */
  siblings?: string[];
}

/**
 * The default bound on a streamed reply's wait for its first content (ProviderInfo.firstContentTimeoutMs),
 * ms: 4 minutes, longer than the idle timeout of a slow provider (180 s, SPEC 6.4), so a reasoning model
 * that works for minutes behind keep-alive pings is not cut, and shorter than the clients' own limits
 * (Codex gives up on a stream after 300 s without an event, the Anthropic and OpenAI SDKs on a request
 * after 600 s), so the client hears the gateway's timeout error, or the fallback's reply, instead of its own.
 */
export const DEFAULT_FIRST_CONTENT_TIMEOUT_MS = 240_000;

/** A configured provider (SPEC 2.3, P-1). */
export interface ProviderInfo {
  /** Model-name prefix: `anthropic`, `cc`, `glm`, … */
  id: string;
  kind: ProviderKind;
  /** The wire format the provider speaks. */
  format: WireFormat;
  /** Whose opaque reasoning state it accepts (SPEC F-8). */
  family: ProviderFamily;
  /** Base URL per its vendor SDK's convention (SPEC 2.3). */
  baseUrl: string;
  /** Known models by upstream id. */
  models: Record<string, ModelInfo>;
  /** Stream idle timeout in ms (SPEC 6.4: 60 s default, 180 s for slow providers). */
  idleTimeoutMs: number;
  /** Time to wait for response headers, in ms (SPEC 6.3: 60 s). */
  headerTimeoutMs: number;
  /**
   * Time to wait for a non-streamed reply, in ms: such a reply's headers come only once the upstream has
   * written all of it, so `headerTimeoutMs` would bound the whole generation (a 70 s reply was cut at
   * 60 s and its model cooled down). Undefined: the larger of
   * {@link DEFAULT_WHOLE_REPLY_TIMEOUT_MS} (pipeline/attempt-budget.ts) and `headerTimeoutMs`.
   */
  wholeReplyTimeoutMs?: number;
  /**
   * Time a streamed reply may take from its headers to its first content, in ms, however many events
   * without content (keep-alive pings) arrive meanwhile, and again from the start of a block a
   * translated lane holds until its first content (pipeline/commit.ts). Undefined: the larger of
   * {@link DEFAULT_FIRST_CONTENT_TIMEOUT_MS} and `idleTimeoutMs`.
   */
  firstContentTimeoutMs?: number;
  /** Default concurrency slots per account (SPEC A-4); undefined = unlimited. */
  defaultMaxConcurrency?: number;
  /** Where this provider came from. */
  source: "builtin" | "config" | "db";
}

/** One credential of an account. Secrets never leave the executor and the store. */
export type Credential =
  | { type: "api_key"; apiKey: string }
  | {
      type: "oauth";
      accessToken: string;
      refreshToken?: string;
      /** ms since the epoch */
      expiresAt?: number;
      /** Provider-side account id (Codex `chatgpt-account-id`). */
      accountId?: string;
      /** The login's e-mail address and plan (Claude `subscriptionType`, ChatGPT plan type), for display; not secrets. */
      email?: string;
      plan?: string;
    }
  | { type: "none" };

/** A configured account (SPEC 2.3 `accounts:`, A-1). */
export interface Account {
  id: string;
  providerId: string;
  /** Lower first. */
  priority: number;
  /** Concurrency slots; undefined = the provider kind's default. */
  maxConcurrency?: number;
  /** Per-account outbound proxy URL (SPEC P-4). */
  proxy?: string;
  credential: Credential;
  disabled: boolean;
  source: "config" | "db";
  /** Models this account advertised through discovery (SPEC P-6); undefined = not discovered. */
  models?: string[];
}

/** A value or a promise of it (synchronous and network-backed implementations of one port). */
export type Awaitable<T> = T | Promise<T>;

// ---------------------------------------------------------------------------------------------
// Client keys
// ---------------------------------------------------------------------------------------------

/** A client key after lookup (the secret itself is never held past the hash check). */
export interface ClientKey {
  name: string;
  /**
   * What counts this key's use (its limit counters, budget windows and budget alerts' claims), when it
   * is not `name`: each stored key is `name#N`, N its generation (1 for the first key of the name, one
   * more for each key created after a revoked one; pipeline/key-id.ts `keyIdFor`; a key stored before
   * 2026-12-04 may be generation 0, the name); a config-file key with the name of a stored one is
   * `name#config` (`configKeyIdFor`). Absent: the name.
   */
  id?: string;
  scopes: string[];
  /** Optional tag used by routing predicates (`key_tag`). */
  tag?: string;
  source: "config" | "db";
  /** SPEC 9.6 limits; absent = unlimited. */
  limits?: KeyLimits;
}

/** Budget window sizes (SPEC 9.6): 5 hours, 1, 7 and 30 days. */
export type BudgetWindow = "5h" | "1d" | "7d" | "30d";

/** One budget of a key: exactly one of `tokens` (input + output tokens) or `usd` (SPEC 9.5 cost). */
export interface KeyBudget {
  window: BudgetWindow;
  tokens?: number;
  usd?: number;
}

/**
 * A client key's limits (SPEC 2.3 `keys[].limits`, 9.6), each optional: `rpm` requests per rolling
 * minute, `tpm` input + output tokens per rolling minute, `concurrency` requests in flight, `budgets`
 * per fixed window aligned to the first use, `models` an allow-list of requested model names, aliases,
 * combos or `provider/*` patterns.
 */
export interface KeyLimits {
  rpm?: number;
  tpm?: number;
  concurrency?: number;
  budgets?: KeyBudget[];
  models?: string[];
}

/** One budget's use in its current window (SPEC 9.6), for the admin API, `usage --by key` and alerts. */
export interface BudgetUse {
  budget: KeyBudget;
  /**
   * Tokens or USD used in the current window (0 when no window is open). USD is a sum of prices, kept
   * to 12 significant digits where the counters sum it ($0.054, not 0.054000000000000006).
   */
  used: number;
  /** ms since the epoch when the window opened (the first use); absent when no window is open. */
  startedAt?: number;
  /** ms since the epoch when the window ends; absent when no window is open. */
  resetsAt?: number;
  /**
   * A USD budget with an open window: the key's requests settled in it that used a model without a
   * price, the one that served them or a failed attempt's (`UsageRecord.unpriced`), whose part `used`
   * cannot count (try18 D17); their priced part (`costUsd`) is in `used`. Counted by the limit
   * counters as each request settles, with the window's spend (and reset with it); absent for token
   * budgets and when no window is open.
   */
  unpriced?: number;
}

/** Why the counters refused a request. `used`/`max` are in the limit's unit (requests, tokens, USD). */
export interface LimitRefusal {
  limit: "rpm" | "tpm" | "concurrency" | "budget";
  /** ms from now until the request would be admitted (window reset, oldest request leaving the minute). */
  retryAfterMs: number;
  used: number;
  max: number;
  /** The budget refused, for `limit: "budget"`. */
  budget?: KeyBudget;
  /**
   * When the refused budget's window ends (ms since the epoch), when the counters know it exactly: the
   * message names it rather than now + `retryAfterMs` (which a clock's sub-second offset turned into
   * 23:59:59Z for a window ending at 00:00:00Z).
   */
  resetsAt?: number;
  /**
   * Set when `used` is under `max` but the key's requests in flight (this many) are expected to spend
   * the rest (tpm and budgets): the request may go once one of them has ended.
   */
  inFlight?: number;
  /**
   * Set when `used` is under `max` but other instances on the shared store hold the rest (their
   * requests in flight and spare room, SPEC D-2), none of this instance's: retry shortly.
   */
  heldElsewhere?: boolean;
  /**
   * Concurrency across instances on a shared store (SPEC D-2): the limit's slots are all taken, `here`
   * of them by this instance's requests, the rest by other instances' requests; those free a slot when
   * they end, and those of an instance that stopped answering when its lease lapses, within
   * `freedWithinMs` (ms).
   */
  slotsElsewhere?: { here: number; freedWithinMs: number };
}

/**
 * What an arriving request is expected to spend, before it is served (tpm and budgets are settled only
 * when a request ends): `tokens`, its input estimated from the body's size (UTF-8 bytes / 4), and for
 * a USD budget what a token of its model may cost.
 */
export interface RequestEstimate {
  tokens: number;
  /**
   * USD a token of the model the request names is expected to cost (what its priced requests cost per
   * token so far, or before one settled the dearer of its input and output prices; of an alias's or
   * combo's targets, the dearest), when the key has a USD budget and that model is priced: the least a
   * USD budget holds per expected token of the request while it is in flight (more when the key's own
   * spend per token so far is dearer). Absent for an unpriced model (its spend cannot be counted).
   */
  usdPerToken?: number;
}

/** What a settled request did to a budget: its use before and after (same window), for threshold alerts. */
export interface BudgetChange {
  budget: KeyBudget;
  /** The window's use before the request, in the budget's unit (USD to 12 significant digits, as {@link BudgetUse.used}). */
  before: number;
  /** The window's use after the request, likewise. */
  after: number;
  resetsAt: number;
}

/**
 * Counters behind client key limits (SPEC 9.6): rpm and tpm per minute, requests in flight, budgets per
 * fixed window. Every call is O(1) in the number of requests. The embedded implementation
 * (src/limits/counters.ts) counts in memory, answers synchronously and persists budget windows lazily
 * (no disk wait); the shared one (src/limits/shared-counters.ts, SPEC D-2) counts across instances
 * through the store's leases and counters, one database round trip per limit for keys that have limits.
 * Keys are identified by their id (pipeline/key-id.ts `keyId`: the name, or `name#N` for a key
 * created with a revoked key's name), so such a key starts with fresh counters and budget windows.
 */
export interface KeyLimitCounters {
  /**
   * Checks rpm, tpm, concurrency and budgets of `key` at `now`; when all pass, counts the request (one
   * rpm slot, one slot in flight, opens budget windows that are closed) and returns ok. Otherwise counts
   * nothing and returns the refusal with the longest wait. `estimate` is what the request is expected
   * to spend: implementations may hold it against tpm and budgets while the request is in flight.
   */
  admit(key: string, limits: KeyLimits, now: number, estimate?: RequestEstimate): Awaitable<{ ok: true; ticket?: unknown } | { ok: false; refusal: LimitRefusal }>;
  /**
   * An admitted request ended: frees its slot in flight; adds `tokens` (input + output, cache reads and
   * writes included) to tpm and token budgets and `usd` to USD budgets, and one to the unpriced count
   * of USD budgets ({@link BudgetUse.unpriced}) when `unpriced` (a model without a price served it or
   * a failed attempt: its `usd` is only the priced part of its cost, 0 when nothing had a price). `ticket` is what `admit` returned with ok. Returns each budget's
   * change. Never rejects.
   */
  settle(key: string, limits: KeyLimits, spent: { tokens: number; usd: number; unpriced?: boolean }, now: number, ticket?: unknown): Awaitable<BudgetChange[]>;
  /** Each budget's use in its current window. */
  budgetUse(key: string, limits: KeyLimits, now: number): Awaitable<BudgetUse[]>;
  /** Requests of `key` in flight now (on this instance, for the shared counters). */
  inFlight(key: string): number;
  /**
   * What `key` used of its rpm and tpm limits in the current minute (the rolling last 60 s, or the
   * shared counters' fixed minute window across instances as last reported), for the limits `limits`
   * has: the requests admitted, and the tokens of the requests that ended.
   */
  minuteUse(key: string, limits: KeyLimits, now: number): MinuteUse;
}

/** A key's use of its rpm and tpm limits in the current minute ({@link KeyLimitCounters.minuteUse}). */
export interface MinuteUse {
  /**
   * Requests admitted, against `rpm`; present when the key has an rpm limit. `freesInMs`, present when
   * `used` has reached `limit`: ms until a request would be admitted again.
   */
  requests?: { used: number; limit: number; freesInMs?: number };
  /** Tokens (input + output, cache included) of the requests that ended, against `tpm`; present when the key has a tpm limit. `freesInMs` as for `requests`. */
  tokens?: { used: number; limit: number; freesInMs?: number };
}

/** Resolves a presented client key (SPEC G-2). */
export interface KeyLookup {
  /** The key's record when the secret is valid and not revoked, else undefined. */
  lookup(secret: string): ClientKey | undefined;
  /**
   * The key's record when the secret is a key's that is disabled for now (`switchyard keys disable`;
   * `lookup` refuses it), else undefined. Asked only after `lookup` refused, so a refusal can say why.
   */
  disabled?(secret: string): ClientKey | undefined;
  /** Whether any client key exists at all. */
  any(): boolean;
}

/**
 * Why {@link DecodeBody} could not decode a body: a coding it does not know (`unsupported`: the guard
 * answers 415), more codings listed than it undoes (`stacked`: 415; `coding` is then the list, each
 * stage may decode up to the limit), decoded bytes past the limit (`too_large`: 413), bytes that are not
 * that coding (`corrupt`: 400). `coding` names the coding in question, as the client wrote it (lower-case).
 */
export interface DecodeFailure {
  problem: "unsupported" | "stacked" | "too_large" | "corrupt";
  coding: string;
}

/**
 * Decodes a request body sent with `Content-Encoding` (SPEC G-4; RFC 9110 8.4: the codings listed in the
 * order they were applied, so decoded last to first). `encoding` is the header's value; `limit` is the
 * most bytes any decoded stage may hold (the body limit in force): a body that decodes to more is a
 * `too_large` failure found without holding more than about `limit` bytes (a zip bomb). Resolves with the
 * decoded bytes or the failure; never rejects.
 */
export type DecodeBody = (bytes: Uint8Array, encoding: string, limit: number) => Promise<Uint8Array | DecodeFailure>;

// ---------------------------------------------------------------------------------------------
// Usage and route traces
// ---------------------------------------------------------------------------------------------

/** How a request ended. */
export type Outcome = "ok" | "error" | "client_closed" | "upstream_error" | "rejected";

/** One request's usage row (SPEC O-1). Times in ms. */
export interface UsageRecord {
  requestId: string;
  /** ms since the epoch when the request arrived */
  ts: number;
  clientFormat: WireFormat;
  requestedModel: string;
  providerId?: string;
  model?: string;
  accountId?: string;
  keyName?: string;
  usage: Usage;
  /** true when the provider gave no usage and the numbers are estimates (or zero). */
  estimated: boolean;
  /**
   * Cost in USD (SPEC 9.5): the price table or a `settings.pricing` override applied to `usage`; for a
   * subscription account, the API-price equivalent. Absent when nothing was served or the model has no price.
   */
  costUsd?: number;
  /** true when a model served tokens but has no price: the cost is unknown (not zero). */
  unpriced?: boolean;
  /**
   * SPEC S-1, S-4: what the token savers removed from the body that was served, in characters (UTF-16
   * code units) and estimated tokens (characters / 4, rounded). Absent (0) when they removed nothing.
   */
  savedChars?: number;
  savedTokens?: number;
  outcome: Outcome;
  status: number;
  /** ms from arrival to the first byte written to the client */
  ttfbMs?: number;
  /** ms from arrival to the end of the response */
  totalMs: number;
  attempts: number;
  fallback: boolean;
  /**
   * The accounts that answered an attempt of this request with a rate limit (HTTP 429), one entry per
   * such attempt, in order: counted against the account that was hit, not the one that served
   * (`accountId`). Absent when none was.
   */
  rateLimited?: string[];
  /**
   * Which of several instances on one store served the request: its name (`server.instance_name`,
   * else `host:port` of the machine and the port it listens on) and its id (a random UUID per process,
   * OpenTelemetry's `service.instance.id`). Set by the instance when it reports the request.
   */
  instance?: string;
  instanceId?: string;
  /**
   * How the request reached the gateway (try17's tryout): `http`, an HTTP request of its own, or `websocket`, a
   * `response.create` frame on Codex's Responses WebSocket (SPEC 2.5), whose reply went back as JSON
   * frames, one per event. Absent in rows recorded before switchyard kept it (SQLite schema 17,
   * PostgreSQL schema 18) or by an instance of an earlier version on an upgraded shared store: unknown.
   */
  transport?: RequestTransport;
  /**
   * SPEC 9.5, O-1: set when failed attempts' usage, as their providers reported it, was counted
   * (src/limits/accounting.ts): `usage`, `costUsd` and `unpriced` above are the request's totals (its
   * call, log line, event and key limits), and this splits them by attempt, so that usage by provider,
   * model and account, money spent against subscriptions' use, and the token metrics count each
   * attempt's share under its own provider, model and account: `served` is the reply's own share (under
   * `providerId`, `model` and `accountId` above; empty when no attempt served), `billed` each failed
   * attempt's. Absent when no failed attempt's usage counted (the request's usage is all its reply's).
   */
  split?: { served: UsageShare; billed: BilledShare[] };
}

/** One attempt's share of a request's tokens and cost ({@link UsageRecord.split}). */
export interface UsageShare {
  usage: Usage;
  /** USD (SPEC 9.5); absent when the share was not priced (no tokens, or its model has no price). */
  costUsd?: number;
  /** true when the share has tokens but its model has no price. */
  unpriced?: boolean;
}

/** A failed attempt's share ({@link UsageRecord.split}): under the provider, model and account it was made with. */
export interface BilledShare extends UsageShare {
  providerId: string;
  model: string;
  accountId?: string;
}

/** How a request reached the gateway ({@link UsageRecord.transport}). */
export type RequestTransport = "http" | "websocket";

/** Receives usage rows; implementations batch writes (SPEC D-1). Never blocks the caller. */
export interface UsageSink {
  record(rec: UsageRecord): void;
}

/** One upstream attempt as recorded in the route trace. */
export interface AttemptTrace {
  target: string;
  providerId: string;
  model: string;
  accountId?: string;
  /** ms since the request arrived */
  startMs: number;
  durationMs?: number;
  status?: number;
  /** Classification row name (SPEC 6.3) or a transport error name. */
  classification?: string;
  /** e.g. "cooldown 90s for model x" */
  effect?: string;
  error?: string;
  /**
   * The token refresh a rejected credential led to before the next attempt (SPEC 6.2/P-7): whether a
   * new token was in place, what happened in words, and the token-endpoint calls waited on.
   */
  refresh?: RefreshTrace;
  /**
   * The OpenTelemetry span id (16 hex) of this attempt's span, sent upstream in its `traceparent`
   * (pipeline/trace-context.ts); only while spans are exported (SPEC O-5).
   */
  spanId?: string;
}

/**
 * One request's wait for an OAuth token refresh after its attempt's credential was rejected (SPEC
 * 6.2/P-7). `note` in words: "token refreshed", "joined a refresh already running: …", "a newer token
 * was already in place", "refresh failed temporarily (…); backing off until …", "refresh token
 * rejected (…)". Times are ms; `startMs` counts from the request's arrival. Never a token.
 */
export interface RefreshTrace {
  /** A new token is in place: the same account is tried again. */
  ok: boolean;
  note: string;
  /** How long the request waited for the refresh. */
  waitedMs: number;
  /** The token-endpoint calls of the refresh round waited on (none when no call was needed). */
  calls: TokenCallTrace[];
}

/** One token-endpoint call of a refresh: when, how long, and its HTTP status or failure (none: it succeeded). */
export interface TokenCallTrace {
  /** ms since the request arrived (negative: the call of a round that began before this request). */
  startMs: number;
  durationMs: number;
  /** The token endpoint's HTTP status when it answered with an error. */
  status?: number;
  /** Why the call failed, in words; absent when it succeeded. */
  error?: string;
}

/** A routing decision about one candidate (target or account): in, out or moved, and why. */
export interface DecisionTrace {
  subject: string;
  verdict: "in" | "out" | "moved";
  reason: string;
}

/** The record of one request (SPEC O-2). No secrets, no prompt text. */
export interface RouteTrace {
  /** Opaque `sy_…` id the client sees in X-Switchyard-Route-Id. */
  routeId: string;
  requestId: string;
  /** ms since the epoch */
  ts: number;
  clientFormat: WireFormat;
  requestedModel: string;
  keyName?: string;
  candidates: string[];
  decisions: DecisionTrace[];
  attempts: AttemptTrace[];
  warnings: Warning[];
  outcome?: Outcome;
  status?: number;
  totalMs?: number;
  /** Counts of redactions by kind (never the values). */
  redactions?: Record<string, number>;
  /** Counts of placeholders mapped back to their values in the reply, by kind (SPEC S-3; never the values). */
  restored?: Record<string, number>;
  /** What the token savers did to the body of the last attempt (SPEC S-1, S-2); absent when they were off or found nothing. */
  tokenSaver?: TokenSaverTrace;
  /**
   * The error the client got when no reply was served: a refusal before routing (bad request, a key's
   * limit, an unknown model) or the last error after every target failed. Absent for a served reply
   * (an error after the commit point is an attempt's `error`). Scrubbed of secrets before it is stored.
   */
  error?: TraceError;
  /** The instance that served the request, name and id, as its usage row has them ({@link UsageRecord.instance}). */
  instance?: string;
  instanceId?: string;
  /** How the request reached the gateway, as its usage row has it ({@link UsageRecord.transport}); absent in traces of earlier versions. */
  transport?: RequestTransport;
  /**
   * The OpenTelemetry trace id (32 hex) of the request's spans, set at its first attempt while spans
   * are exported (the caller's, from a valid `traceparent`, or a new one; pipeline/trace-context.ts).
   */
  otelTraceId?: string;
}

/**
 * The error answer of a request as its client read it (SPEC O-2, the dashboard's call view): HTTP
 * status, the hub error kind (`invalid_request`, `rate_limit`, `model_not_found`, …: the gateway's own
 * word, which no client reads), the provider or gateway code and offending parameter when known, the
 * message, and the type and code the client's format wrote in the body it got.
 */
export interface TraceError {
  status: number;
  kind: string;
  message: string;
  code?: string;
  param?: string;
  /**
   * The error's type as the client's body carried it (each format's errors.ts `errorBody`, e.g. formats/openai-chat/errors.ts): Chat's and
   * Responses' `error.type` (`server_error`, `rate_limit_error`, `usage_limit_reached`), Anthropic's
   * `error.type` (`rate_limit_error`), Gemini's `error.status` (`RESOURCE_EXHAUSTED`). Absent in traces
   * recorded before 2026-12-06, which kept the hub kind alone.
   */
  clientType?: string;
  /** The body's `error.code` when it is a string (Chat and Responses: `key_budget_exceeded`, `model_not_found`); absent otherwise. */
  clientCode?: string;
}

/**
 * Token-saver outcome of one attempt (SPEC S-1): the tool results shortened, their length before and
 * after in characters (UTF-16 code units), the estimated tokens saved (characters / 4, rounded) and
 * results shortened per rule; or why the savers were skipped (S-2: `header` for
 * `X-Switchyard-Token-Saver: off`, `prompt_cache` for an Anthropic-format provider with prompt caching;
 * S-4: `cache_marker` when the client's conversation holds a `cache_control` marker and the provider's
 * format carries markers to it, pipeline/save-tokens.ts `MARKERS_REACH_PROVIDER`);
 * or, when they ran and shortened nothing, `unchanged`: how many tool results long enough to shorten
 * (pipeline/savers MIN_CHARS) they looked at and left as they were (no rule recognised them, or
 * shortening would not have saved MIN_SAVING). A request without such a tool result records nothing.
 * Worded for people by pipeline/trace-words.ts.
 */
export type TokenSaverTrace =
  | { skipped: "header" | "prompt_cache" | "cache_marker" }
  | { results: number; charsBefore: number; charsAfter: number; tokensSaved: number; rules: Record<string, number> }
  | { unchanged: number };

/** Stores route traces in a bounded ring (SPEC O-2). */
export interface TraceSink {
  save(trace: RouteTrace): void;
}

// ---------------------------------------------------------------------------------------------
// Flight recorder (SPEC O-6)
// ---------------------------------------------------------------------------------------------

/**
 * What the flight recorder sees of one request (SPEC O-6). The application sets it on the request
 * context when the recorder is on; the pipeline then reports each attempt's upstream body and reply
 * bytes, and the gateway hands it the client's Response. Implementations copy what they keep (bounded)
 * and never throw.
 */
export interface FlightRecording {
  /**
   * The client's body as it arrived, handed over by a stage about to rewrite it (redaction, SPEC S-3):
   * the recording's client request is what the client sent, and each attempt's body what went upstream.
   * Without this call the recorder reads the context's body when the reply goes out.
   */
  clientBody(bytes: Uint8Array): void;
  /** An attempt is about to send `body` upstream; the returned hooks see its reply. */
  attempt(a: { target: string; accountId: string; upstreamFormat: string; body: string | Uint8Array }): AttemptRecording;
  /** The Response about to go to the client; returns a Response with the same status, headers and bytes, observed as they pass. */
  response(res: Response): Response;
  /**
   * Events handed to an event transport's sink ({@link ReplyEventSink}) instead of an SSE body, in
   * order: recorded as the SSE text they stand for, so the recording reads like an HTTP reply's.
   */
  events(batch: readonly ReplyEvent[]): void;
}

/** The flight recorder's hooks for one attempt. */
export interface AttemptRecording {
  /** The upstream reply's status and headers arrived. */
  headers(status: number, headers: Headers): void;
  /** Bytes of the upstream reply body as they were read (an error body as its text). */
  bytes(chunk: Uint8Array | string): void;
}

// ---------------------------------------------------------------------------------------------
// Event transports (the Responses WebSocket, SPEC 2.5)
// ---------------------------------------------------------------------------------------------

/**
 * One event of a streamed reply handed to a transport that frames events itself: the SSE `event:` name
 * when the event has one, and its data (for the Responses format one JSON object whose `type` equals the
 * name). The same events an HTTP client gets as SSE, without the SSE framing.
 */
export interface ReplyEvent {
  event: string | undefined;
  data: string;
}

/**
 * Where a request that came over an event transport (`IncomingRequest.events`) gets its committed
 * reply: `events` is called with the events of each upstream read (one batch per read, in order, never
 * empty), then `end` exactly once, when the reply has ended (completed, failed in-band, or the client
 * left). The gateway's Response for such a request is then the status and headers only, without a body.
 * A request refused before the commit point is an ordinary error Response and the sink is not called.
 */
export interface ReplyEventSink {
  events(batch: readonly ReplyEvent[]): void;
  end(): void;
  /**
   * Backpressure: undefined while the transport takes more events, else a promise that settles when
   * its send buffer has drained (or it closed). The pipeline reads no more of the upstream reply until
   * it settles, as an HTTP body is pulled only as fast as the client reads it. Optional: a sink
   * without it is fed as fast as the upstream sends.
   */
  ready?(): Promise<void> | undefined;
}
