/**
 * Response schemas of the admin routes that predate the route documentation table (keys, usage,
 * calls, route traces, accounts, dry run, OAuth, discovery, quota), for the OpenAPI document only
 * (SPEC 9.3: every route with its request and response schemas). They describe what the handlers
 * answer (src/store/*, src/accounts/status.ts, pipeline/order.ts RoutePlan); objects whose inner
 * shape belongs to another module (a route trace's decisions, a dry run's targets) are documented down
 * to their main fields and left open below that.
 */
import * as v from "valibot";

const ms = (what: string) => v.pipe(v.number(), v.description(`${what} (ms since the epoch)`));

const KeyBudgetReply = v.looseObject({ window: v.string(), tokens: v.optional(v.number()), usd: v.optional(v.number()) });

const KeyLimitsReply = v.looseObject({
  rpm: v.optional(v.number()),
  tpm: v.optional(v.number()),
  concurrency: v.optional(v.number()),
  budgets: v.optional(v.array(KeyBudgetReply)),
  models: v.optional(v.array(v.string())),
});

/** One budget of a key with its use in the window open now (pipeline/ports.ts BudgetUse). */
const BudgetUseReply = v.looseObject({
  budget: v.pipe(KeyBudgetReply, v.description("The budget (its window and its tokens or USD limit).")),
  used: v.pipe(v.number(), v.description("Tokens or USD used in the window open now (0 when none is open).")),
  startedAt: v.optional(ms("window opened")),
  resetsAt: v.optional(ms("window ends")),
  unpriced: v.optional(
    v.pipe(
      v.number(),
      v.description(
        "A USD budget with an open window: the key's requests in it that used a model without a price, the one that served them or a failed attempt's (recorded unpriced, as the Usage table's cost marks them): used counts only their priced part (a failed attempt at a priced model), none of what the models without a price used; settings.pricing gives the model a price. Counted with the window's spend as each request ends (kept across restarts, reset with the window); on PostgreSQL another instance's requests show within about a second.",
      ),
    ),
  ),
});

const KeyInfoReply = v.object({
  name: v.string(),
  scopes: v.array(v.string()),
  tag: v.optional(v.string()),
  source: v.picklist(["config", "db"]),
  prefix: v.optional(
    v.pipe(
      v.string(),
      v.description("The secret's first characters (sy-mHYRP: at most 8, `sy-` counted in, at most a quarter of the secret), never enough to use the key: a pasted secret starts with it. Absent for a key stored before prefixes were kept and for a config secret under 16 characters."),
    ),
  ),
  createdAt: v.optional(ms("created")),
  revokedAt: v.optional(ms("revoked")),
  previousUntil: v.optional(ms("a rotated key's previous secret is accepted until")),
  rotatedAt: v.optional(ms("a stored key's secret was last replaced (switchyard keys rotate, the Keys page's Rotate) at; absent when never, or before rotations were kept")),
  disabledAt: v.optional(ms("disabled (switchyard keys disable) at; its requests are refused until it is enabled")),
  limits: v.optional(KeyLimitsReply),
  use: v.optional(
    v.looseObject({
      budgets: v.array(BudgetUseReply),
      inFlight: v.number(),
      minute: v.optional(
        v.pipe(
          v.object({
            requests: v.optional(v.object({ used: v.number(), limit: v.number(), freesInMs: v.optional(v.number()) })),
            tokens: v.optional(v.object({ used: v.number(), limit: v.number(), freesInMs: v.optional(v.number()) })),
          }),
          v.description("This minute's requests admitted (against rpm) and tokens of the requests that ended (against tpm), for the limits the key has; at a limit, freesInMs is how long until a request is admitted again (ms)."),
        ),
      ),
    }),
  ),
});

/** The token and cost totals a usage row and a series bucket both carry. */
const TOTALS = {
  inputTokens: v.number(),
  outputTokens: v.number(),
  cacheReadTokens: v.number(),
  cacheWriteTokens: v.number(),
  reasoningTokens: v.number(),
  costUsd: v.pipe(v.number(), v.description("The priced requests' cost at API prices, USD, subscriptions' use included (subscriptionUsd is that part).")),
  subscriptionUsd: v.pipe(
    v.number(),
    v.description("The part of costUsd served by subscription logins (claude-code, codex): their use at API prices, not money spent; costUsd − subscriptionUsd is what was spent."),
  ),
};

const UsageRowReply = v.looseObject({
  group: v.pipe(v.nullable(v.string()), v.description("The served provider/model / account / key / provider; null for requests without one.")),
  requests: v.pipe(
    v.number(),
    v.description(
      "Requests of the group. Its tokens and cost also count the failed attempts of other requests made with it whose usage their provider reported (billed), each under its own provider/model, account and provider, so a group only tried has tokens and cost with 0 requests.",
    ),
  ),
  errors: v.pipe(v.number(), v.description("Requests that failed: outcome error or upstream_error (the gateway's own refusals are refused).")),
  refused: v.pipe(v.number(), v.description("Requests the gateway refused itself (outcome rejected: no or wrong key 401, disabled key 403, key limits 429, a refused body).")),
  clientClosed: v.number(),
  estimated: v.number(),
  fallbacks: v.number(),
  ...TOTALS,
  unpriced: v.pipe(v.number(), v.description("Requests that used a model without a price (the one that served them or a failed attempt's whose usage its provider reported), each counted once in the group; by model, account or provider a request counts under the unpriced model's own group, which for a failed attempt may hold no request of its own. costUsd counts only the part that had a price.")),
  savedChars: v.pipe(v.number(), v.description("Characters the token savers removed from the bodies sent upstream.")),
  savedTokens: v.pipe(v.number(), v.description("Estimated tokens the token savers removed (characters / 4 per request).")),
  budgets: v.optional(v.pipe(v.array(BudgetUseReply), v.description("With by=key: the key's budgets and their use."))),
  rateLimited: v.optional(v.pipe(v.number(), v.description("With by=account: attempts this account answered with a rate limit (429), whichever account then served the request; an account only hit has a row with 0 requests."))),
  avgTotalMs: v.number(),
  avgTtfbMs: v.nullable(v.number()),
});

const BucketReply = v.object({
  t: ms("bucket start"),
  requests: v.number(),
  errors: v.pipe(v.number(), v.description("Requests that failed: outcome error or upstream_error (the gateway's own refusals are refused).")),
  refused: v.pipe(v.number(), v.description("Requests the gateway refused itself (outcome rejected: no or wrong key 401, disabled key 403, key limits 429, a refused body).")),
  fallbacks: v.number(),
  ...TOTALS,
});

const UsageReply = v.object({
  since: v.string(),
  by: v.picklist(["model", "account", "key", "provider", "instance"]),
  filter: v.optional(v.record(v.string(), v.string())),
  cost: v.pipe(
    v.object({
      spentUsd: v.pipe(v.number(), v.description("What the period's requests served by API keys and other non-subscription providers cost at their prices, USD.")),
      subscriptionUsd: v.pipe(v.number(), v.description("What the requests served by subscription logins (claude-code, codex) would have cost at API prices, USD: their value, not money spent (the subscription is paid by the month).")),
    }),
    v.description("The period's cost (of the requests the filter keeps) split into money spent and subscriptions' use at API prices; the rows' and buckets' costUsd adds both, their subscriptionUsd is the subscriptions' part."),
  ),
  rows: v.array(UsageRowReply),
  series: v.object({ bucketMs: v.number(), from: ms("first bucket"), to: ms("now"), buckets: v.array(BucketReply) }),
});

/** How a call came (`transport` of `GET /calls` and `GET /route-traces/{id}`). */
const TransportReply = v.pipe(
  v.picklist(["http", "websocket", "unknown"]),
  v.description(
    "How the request reached the gateway: http (an HTTP request of its own), websocket (a response.create frame on Codex's Responses WebSocket, whose reply went back as JSON frames, one per event), or unknown (recorded before switchyard kept it, or by an instance of an earlier version on an upgraded shared store).",
  ),
);

const CallReply = v.looseObject({
  requestId: v.string(),
  routeId: v.optional(v.string()),
  ts: ms("arrival"),
  clientFormat: v.string(),
  requestedModel: v.string(),
  providerId: v.optional(v.string()),
  model: v.optional(v.string()),
  accountId: v.optional(v.string()),
  keyName: v.optional(v.string()),
  usage: v.looseObject({ inputTokens: v.optional(v.number()), outputTokens: v.optional(v.number()), cacheReadTokens: v.optional(v.number()), cacheWriteTokens: v.optional(v.number()), reasoningTokens: v.optional(v.number()), webSearches: v.optional(v.pipe(v.number(), v.description("Server-side web searches priced into costUsd (Anthropic's web_search_requests, a Responses reply's web_search_call items); absent when none, and for calls recorded before this was kept."))) }),
  estimated: v.boolean(),
  outcome: v.picklist(["ok", "error", "client_closed", "upstream_error", "rejected"]),
  status: v.number(),
  ttfbMs: v.optional(v.number()),
  totalMs: v.number(),
  attempts: v.number(),
  fallback: v.boolean(),
  costUsd: v.optional(v.number()),
  unpriced: v.optional(v.pipe(v.boolean(), v.description("The model served tokens but has no price: the cost is unknown, not zero."))),
  savedChars: v.optional(v.pipe(v.number(), v.description("Characters the token savers removed from the body served; absent when none."))),
  savedTokens: v.optional(v.pipe(v.number(), v.description("Estimated tokens the token savers removed (characters / 4); absent when none."))),
  recorded: v.optional(v.pipe(v.boolean(), v.description("The flight recorder holds this call's bodies (GET /calls/{id}/recording)."))),
  rateLimited: v.optional(v.pipe(v.array(v.string()), v.description("Accounts that answered an attempt of this request with 429 (rate limited), one per attempt; absent when none did."))),
  instance: v.optional(v.pipe(v.string(), v.description("Name of the instance that served the request (server.instance_name, else host:port); absent for calls recorded before this was kept."))),
  instanceId: v.optional(v.pipe(v.string(), v.description("Id of that instance (a UUID per process, OpenTelemetry's service.instance.id)."))),
  transport: TransportReply,
});

const Decision = v.looseObject({ subject: v.string(), verdict: v.string(), reason: v.string() });

const RouteTraceReply = v.looseObject({
  routeId: v.string(),
  requestId: v.string(),
  ts: ms("arrival"),
  clientFormat: v.string(),
  requestedModel: v.string(),
  keyName: v.optional(v.string()),
  candidates: v.array(v.string()),
  decisions: v.array(Decision),
  attempts: v.array(
    v.looseObject({
      target: v.string(),
      providerId: v.string(),
      model: v.string(),
      accountId: v.string(),
      startMs: v.number(),
      durationMs: v.optional(v.number()),
      status: v.optional(v.number()),
      classification: v.optional(v.string()),
      error: v.optional(v.string()),
      effect: v.optional(v.string()),
      spanId: v.optional(v.pipe(v.string(), v.description("OpenTelemetry span id of this attempt (16 hex), sent upstream in its traceparent; only while spans are exported."))),
      refresh: v.optional(
        v.pipe(
          v.object({
            ok: v.boolean(),
            note: v.string(),
            waitedMs: v.number(),
            calls: v.array(
              v.object({
                startMs: v.pipe(v.number(), v.description("ms since the request arrived (negative: a refresh that began before it, joined)")),
                durationMs: v.number(),
                status: v.optional(v.number()),
                error: v.optional(v.string()),
              }),
            ),
          }),
          v.description("The token refresh this attempt's rejected credential led to: ok when the same account is tried again with a new token, what happened in words, how long the request waited and the token-endpoint calls. Never a token."),
        ),
      ),
    }),
  ),
  warnings: v.array(v.looseObject({})),
  outcome: v.optional(v.string()),
  status: v.optional(v.number()),
  totalMs: v.optional(v.number()),
  instance: v.optional(v.pipe(v.string(), v.description("Name of the instance that served the request (server.instance_name, else host:port)."))),
  instanceId: v.optional(v.pipe(v.string(), v.description("Id of that instance (a UUID per process, OpenTelemetry's service.instance.id)."))),
  transport: TransportReply,
  otelTraceId: v.optional(v.pipe(v.string(), v.description("OpenTelemetry trace id of the request's spans (32 hex: the caller's from its traceparent, or a new one); only while spans are exported."))),
  redactions: v.optional(v.pipe(v.record(v.string(), v.number()), v.description("Redactions by kind (never the values)."))),
  restored: v.optional(v.pipe(v.record(v.string(), v.number()), v.description("Placeholders mapped back in the reply, by kind."))),
  tokenSaver: v.optional(
    v.pipe(
      v.union([
        v.object({ skipped: v.picklist(["header", "prompt_cache", "cache_marker"]) }),
        v.object({ results: v.number(), charsBefore: v.number(), charsAfter: v.number(), tokensSaved: v.number(), rules: v.record(v.string(), v.number()) }),
        v.object({ unchanged: v.pipe(v.number(), v.description("Tool results of 500 characters or more the savers looked at and left as they were (no rule recognised them, or shortening would not save 10 %).")) }),
      ]),
      v.description("What the token savers did to the body of the last attempt, why they were skipped, or how many long tool results they looked at and left alone; absent when they were off or the request had no tool result of 500 characters or more."),
    ),
  ),
  error: v.optional(
    v.pipe(
      v.looseObject({
        status: v.number(),
        kind: v.pipe(v.string(), v.description("The gateway's own error kind (invalid_request, rate_limit, api_error, …); no client reads it.")),
        message: v.string(),
        code: v.optional(v.string()),
        param: v.optional(v.string()),
        clientType: v.optional(v.pipe(v.string(), v.description("The error type the client's body carried: Chat and Responses error.type (server_error, usage_limit_reached), Anthropic error.type (rate_limit_error), Gemini error.status (RESOURCE_EXHAUSTED); absent in traces recorded before 2026-12-06."))),
        clientCode: v.optional(v.pipe(v.string(), v.description("The body's error.code when a string (Chat and Responses)."))),
      }),
      v.description("The error the client got when no reply was served."),
    ),
  ),
});

// Strict, unlike its neighbours: a member a window gains for the store's own use (its key hash, src/store
// account-state.ts QuotaWindow.keyHash) fails test/admin/quota-key-hash-shown.test.ts, which checks live
// replies against this schema, until it is left out (src/accounts/quota.ts shownQuotaWindow) or named here.
const QuotaWindowReply = v.strictObject({
  accountId: v.string(),
  window: v.string(),
  model: v.string(),
  usedPercent: v.optional(v.number()),
  remaining: v.optional(v.number()),
  limit: v.optional(v.number()),
  resetAt: v.optional(ms("reset")),
  updatedAt: v.optional(ms("read")),
  remainingPercent: v.optional(v.number()),
});

const AccountStatusReply = v.looseObject({
  id: v.string(),
  providerId: v.string(),
  providerKind: v.optional(v.string()),
  source: v.pipe(v.picklist(["config", "db", "implicit"]), v.description("implicit: the keyless account a *-compatible provider without accounts is called with (read-only).")),
  credential: v.pipe(v.picklist(["api_key", "oauth", "none"]), v.description("The credential's type only, never its value.")),
  priority: v.number(),
  disabled: v.boolean(),
  eligible: v.boolean(),
  reasons: v.array(v.string()),
  lock: v.optional(
    v.object({
      reason: v.string(),
      until: v.pipe(v.nullable(v.number()), v.description("When the lock ends, ms since the epoch; null: until the account's key changes or it is unlocked.")),
      advice: v.pipe(v.string(), v.description("What an operator does about it: replace the key and reload, log in again, or switchyard accounts unlock ID (POST /admin/api/accounts/{id}/unlock).")),
    }),
  ),
  quarantine: v.optional(
    v.pipe(
      v.object({ reason: v.string(), advice: v.pipe(v.string(), v.description("The way back: a new login or import.")) }),
      v.description("The credential's quarantine (rejected after a refresh, or nothing to refresh with): the account is not used until its credential is replaced."),
    ),
  ),
  cooldowns: v.array(v.object({ model: v.string(), reason: v.string(), until: ms("end"), level: v.number() })),
  removedModels: v.array(v.object({ model: v.string(), reason: v.string(), until: v.nullable(v.number()) })),
  quota: v.array(QuotaWindowReply),
  slots: v.object({ inUse: v.number(), limit: v.nullable(v.number()), waiting: v.number() }),
  bindings: v.number(),
  health: v.pipe(
    v.object({
      successRate: v.pipe(
        v.number(),
        v.description("0–1: the share of the counted attempts that succeeded, each attempt's weight halving every halfLifeMs (recent ones weigh most; it does not change while the account is idle); 0 for an account with no success; 1 while none was seen."),
      ),
      succeeded: v.pipe(v.number(), v.description("Attempts with the account that succeeded, since this instance started (not weighted).")),
      failed: v.pipe(v.number(), v.description("Attempts with the account that failed by its fault (not a refused body), since this instance started (not weighted).")),
      latencyMs: v.optional(v.pipe(v.number(), v.description("Time to the first byte, an average giving the newest reply 30 %; absent before the first success."))),
      halfLifeMs: v.pipe(v.number(), v.description("How fast an attempt's weight in successRate halves (300000: 5 min).")),
      seen: v.pipe(v.boolean(), v.description("Whether this instance recorded any attempt with the account since it started (the figures are in its memory).")),
    }),
    v.description("Health over this instance's attempts with the account since it started, the newest weighing most; the scored strategy reads the same weighted counts with one virtual success added, so a fresh account ranks as sound."),
  ),
  circuit: v.object({ state: v.picklist(["closed", "open", "half-open"]), openUntil: v.optional(v.number()), consecutive5xx: v.number() }),
  models: v.array(v.object({ model: v.string(), eligible: v.boolean(), reason: v.optional(v.string()), until: v.optional(v.number()) })),
  login: v.optional(
    v.pipe(
      v.object({
        email: v.optional(v.string()),
        plan: v.optional(v.pipe(v.string(), v.description("Claude's subscriptionType or the ChatGPT plan type, as the login or import read it."))),
        expiresAt: v.optional(ms("the access token in use expires")),
        refreshable: v.pipe(v.boolean(), v.description("Whether a refresh token is held (the access token can be renewed).")),
        refresh: v.object({
          state: v.picklist(["never", "refreshing", "ok", "failed_temporarily", "rejected", "no_refresh_token"]),
          at: v.optional(ms("the last refresh ended")),
          retryAt: v.optional(ms("a temporarily failed refresh is tried again")),
          reason: v.optional(v.string()),
        }),
      }),
      v.description("A subscription login's e-mail, plan, token expiry and refresh state (this instance's refreshes); never a token. Absent for API keys."),
    ),
  ),
});

const RoutePlanReply = v.looseObject({
  requestedModel: v.string(),
  clientFormat: v.string(),
  via: v.string(),
  alias: v.optional(v.string()),
  combo: v.optional(v.string()),
  candidates: v.array(v.string()),
  nearName: v.optional(v.pipe(v.string(), v.description("for a name taken as a guess: the alias or combo it is plausibly a typo of (`codng` → `coding`)"))),
  targets: v.array(
    v.looseObject({
      target: v.string(),
      providerId: v.string(),
      model: v.string(),
      verdict: v.picklist(["in", "out"]),
      reason: v.optional(v.string()),
      accounts: v.pipe(
        v.array(v.looseObject({ accountId: v.string(), verdict: v.picklist(["in", "out"]), reason: v.string(), until: v.optional(ms("exclusion ends")) })),
        v.description("Eligible accounts in the order attempts would use them, then the excluded ones."),
      ),
      siblingOf: v.optional(v.pipe(v.string(), v.description("This target is a sibling of that model, which every account of the target before it has had removed."))),
    }),
  ),
  attempts: v.array(
    v.object({
      target: v.string(),
      accountId: v.string(),
      notReached: v.optional(v.pipe(v.string(), v.description("Why a request would never make this attempt: it lies beyond settings.max_attempts."))),
      notReachedIf: v.optional(v.pipe(v.string(), v.description("When a request would not make this attempt: an earlier non-streamed call that never answers waits past settings.precommit_deadline_ms."))),
    }),
  ),
  decisions: v.array(Decision),
  affinity: v.picklist(["session", "fingerprint", "off", "none"]),
  accountStrategy: v.string(),
});

const AccountSavedReply = v.object({ id: v.string(), provider: v.string(), kind: v.string(), created: v.boolean(), unquarantined: v.boolean(), reenabled: v.boolean(), sameLogin: v.array(v.string()), expiresAt: v.nullable(v.number()) });

/** A key answer's `note` when the config file declares a key of the stored key's name too (admin-api.ts `configNamesakeNote`). */
const NAMESAKE_NOTE = v.pipe(v.string(), v.description("The config file also declares a key of this name: the stored key was acted on, the config key is not affected (changed in the file)."));

/** Response schemas by `METHOD /path` (Elysia's spelling), merged into the OpenAPI document. */
export const OLDER_ROUTE_RESPONSES: Record<string, v.GenericSchema | Record<number, v.GenericSchema>> = {
  "GET /admin/api/keys": v.object({ keys: v.array(KeyInfoReply) }),
  "POST /admin/api/keys": { 201: v.object({ secret: v.pipe(v.string(), v.description("The key; shown this once.")), key: v.looseObject({ name: v.string(), scopes: v.array(v.string()), tag: v.optional(v.string()), limits: v.optional(KeyLimitsReply), source: v.literal("db") }), createdAt: ms("created") }) },
  "DELETE /admin/api/keys/:name": v.object({ revoked: v.string(), note: v.optional(NAMESAKE_NOTE) }),
  "POST /admin/api/keys/:name/rotate": v.object({
    secret: v.pipe(v.string(), v.description("The key's new secret; shown this once.")),
    key: v.looseObject({ name: v.string(), scopes: v.array(v.string()), tag: v.optional(v.string()), limits: v.optional(KeyLimitsReply), source: v.literal("db") }),
    createdAt: ms("created (the key's, kept by a rotation)"),
    rotatedAt: ms("rotated: GET /admin/api/keys lists it as the key's rotatedAt from now on"),
    previousUntil: v.optional(ms("the previous secret is accepted until; absent: refused from now on")),
    note: v.optional(NAMESAKE_NOTE),
  }),
  "PATCH /admin/api/keys/:name": v.object({ key: KeyInfoReply, note: v.optional(NAMESAKE_NOTE) }),
  "POST /admin/api/keys/:name/disable": v.object({ name: v.string(), disabled: v.literal(true), disabledAt: ms("disabled (the first disable's time, kept by a second)"), note: v.optional(NAMESAKE_NOTE) }),
  "POST /admin/api/keys/:name/enable": v.object({ name: v.string(), disabled: v.literal(false), note: v.optional(NAMESAKE_NOTE) }),
  "GET /admin/api/usage": UsageReply,
  "GET /admin/api/calls": v.object({
    calls: v.array(CallReply),
    older: v.optional(v.pipe(v.string(), v.description("Cursor of the next older page (pass as before); absent when no older call matches."))),
    newer: v.optional(v.pipe(v.string(), v.description("Cursor of the next newer page (pass as after); absent on the newest page."))),
  }),
  "GET /admin/api/route-traces/:id": RouteTraceReply,
  "GET /admin/api/accounts": v.object({
    now: ms("now"),
    strategy: v.string(),
    accounts: v.array(AccountStatusReply),
    providersWithoutAccounts: v.pipe(
      v.array(
        v.object({
          id: v.string(),
          kind: v.string(),
          error: v.pipe(v.string(), v.description("The message of the 503 no_account its requests get, with how to add an account.")),
          builtin: v.optional(
            v.pipe(
              v.object({ routes: v.array(v.string()), requests: v.number(), lastAt: v.optional(ms("lastAt")), lastStatus: v.optional(v.number()) }),
              v.description(
                "Only for a built-in provider nobody configured: the aliases and combos that resolve to it (`alias NAME`, `combo NAME`), and the requests this instance answered for want of its account since it started (the last one's time and status: 503, or 404 for a bare model name guessed onto it).",
              ),
            ),
          ),
        }),
      ),
      v.description(
        "Providers without any account, of a kind that needs one (not *-compatible): every request routed to one is answered 503 no_account. Every one set in the config file or the database; a built-in one nobody configured only when an alias or combo names it or a request went to it (`builtin`).",
      ),
    ),
  }),
  "POST /admin/api/accounts": { 200: AccountSavedReply, 201: AccountSavedReply },
  "DELETE /admin/api/accounts/:id": v.object({ removed: v.string() }),
  "POST /admin/api/dry-run": RoutePlanReply,
  "GET /admin/api/oauth/:kind": v.object({
    providers: v.array(v.object({ id: v.string(), kind: v.string(), oauth: v.looseObject({ authorizeUrl: v.string(), tokenUrl: v.string(), clientId: v.string(), scopes: v.array(v.string()), redirectUri: v.string() }) })),
  }),
  "POST /admin/api/discovery": v.object({
    results: v.array(
      v.object({
        accountId: v.string(),
        providerId: v.string(),
        ok: v.boolean(),
        models: v.optional(v.pipe(v.array(v.string()), v.description("The models the account's provider advertised (when ok)."))),
        error: v.optional(v.pipe(v.string(), v.description("Why discovery failed for the account (never a token)."))),
      }),
    ),
  }),
  "GET /admin/api/quota": v.object({ now: ms("now"), accounts: v.array(v.object({ id: v.string(), providerId: v.string(), windows: v.array(QuotaWindowReply) })) }),
  "GET /admin/api/openapi.json": v.pipe(v.looseObject({ openapi: v.string(), info: v.looseObject({}), paths: v.record(v.string(), v.unknown()) }), v.description("This document.")),
};
