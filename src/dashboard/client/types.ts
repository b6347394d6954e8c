/**
 * The admin API's answers as the dashboard reads them (SPEC 9.3; /work contract of h/admin-api, the
 * OpenAPI document at /admin/api/openapi.json). Imported (`import type`, gone from the bundle) from server
 * modules whose type graph stays free of Bun and Node code (formats/hub.ts, pipeline/ports.ts, src/store/usage.ts);
 * written out here where it does not (src/accounts/status.ts reaches the whole pipeline), and the
 * browser tests (test/dashboard) catch drift in those.
 */
import type { CallRow as StoreCallRow, UsageBucket, UsageSummaryRow as UsageRow } from "../../store/usage.ts";

/** `GET /accounts` (src/accounts/status.ts). Times are ms since the epoch. */
export interface AccountsStatus {
  now: number;
  strategy: string;
  accounts: AccountStatus[];
  /**
   * Providers without an account, of a kind that needs one: `error` is the 503 their requests get
   * (absent from an older server). `builtin`: a built-in provider nobody configured, listed because the
   * aliases and combos in `routes` name it or this instance refused `requests` for it (the last at
   * `lastAt` with `lastStatus`).
   */
  providersWithoutAccounts?: Array<{ id: string; kind: string; error: string; builtin?: { routes: string[]; requests: number; lastAt?: number; lastStatus?: number } }>;
}

export interface QuotaWindowRow {
  accountId?: string;
  window: string;
  model: string;
  usedPercent?: number;
  remaining?: number;
  limit?: number;
  resetAt?: number;
  updatedAt?: number;
  remainingPercent?: number;
}

export interface AccountStatus {
  id: string;
  providerId: string;
  providerKind?: string;
  /** `implicit`: the keyless account of a `*-compatible` provider without accounts (nothing to change on it). */
  source: "config" | "db" | "implicit";
  credential: "api_key" | "oauth" | "none";
  priority: number;
  disabled: boolean;
  eligible: boolean;
  reasons: string[];
  /** `advice`: what an operator does about it (replace the key and reload, log in again, or Unlock). */
  lock?: { reason: string; until: number | null; advice: string };
  /** The credential's quarantine: why, and the way back (a new login or import). */
  quarantine?: { reason: string; advice: string };
  cooldowns: Array<{ model: string; reason: string; until: number; level: number }>;
  removedModels: Array<{ model: string; reason: string; until: number | null }>;
  quota: QuotaWindowRow[];
  slots: { inUse: number; limit: number | null; waiting: number };
  bindings: number;
  /** This instance's attempts since it started, the newest weighing most (see health in GET /accounts). */
  health: { successRate: number; succeeded: number; failed: number; latencyMs?: number; halfLifeMs: number; seen: boolean };
  circuit: { state: "closed" | "open" | "half-open"; openUntil?: number; consecutive5xx: number };
  models: Array<{ model: string; eligible: boolean; reason?: string; until?: number }>;
  /** A subscription login (src/accounts/credentials.ts LoginFacts): never a token. */
  login?: {
    email?: string;
    plan?: string;
    expiresAt?: number;
    refreshable: boolean;
    refresh: { state: "never" | "refreshing" | "ok" | "failed_temporarily" | "rejected" | "no_refresh_token"; at?: number; retryAt?: number; reason?: string };
  };
}

/** Token counts of one request. */
export type { Usage } from "../../../formats/hub.ts";

/** `GET /calls` rows: the store's row plus whether the flight recorder holds the call's bodies. */
export interface CallRow extends Omit<StoreCallRow, "transport"> {
  recorded?: boolean;
  /** How the call came: `unknown` for one recorded before switchyard kept it (absent from an older server). */
  transport?: "http" | "websocket" | "unknown";
}

/** `GET /route-traces/{id}`: the server's own type (pipeline/ports.ts is types only, so the browser build can check against it). */
export type { RouteTrace } from "../../../pipeline/ports.ts";

/** One recorded body (flight recorder). */
export interface RecordedBody {
  body: string;
  bytes: number;
  truncated: boolean;
  events?: Array<{ event: string; data: string }>;
}

/** `GET /calls/{id}/recording`. */
export interface Recording {
  requestId: string;
  routeId: string;
  at: number;
  endpoint: string;
  clientFormat: string;
  /** `websocket`: the request came over Codex's Responses WebSocket (absent from an older server). */
  transport?: "http" | "websocket";
  client: RecordedBody;
  attempts: Array<{ n: number; target: string; accountId?: string; upstreamFormat: string; status?: number; request: RecordedBody; reply?: RecordedBody }>;
  /** `frames`: a WebSocket reply's JSON frames as sent, one per event (`body` holds them one a line). */
  response?: RecordedBody & { status: number; frames?: string[] };
}

/** `GET /usage` rows: the server's own type (src/store/usage.ts imports types only). */
export type { UsageSummaryRow as UsageRow } from "../../store/usage.ts";
export type { UsageBucket } from "../../store/usage.ts";

/** `GET /usage`. */
export interface UsageAnswer {
  since: string;
  by: string;
  rows: UsageRow[];
  /** The period's cost apart: money spent (API keys, other providers) and subscriptions' use at API prices (SPEC 9.5). */
  cost?: { spentUsd: number; subscriptionUsd: number };
  series?: { bucketMs: number; from: number; to: number; buckets: UsageBucket[] };
}

/** A key's limits (SPEC 9.6; the config file's `keys[].limits`). */
export interface KeyLimits {
  rpm?: number;
  tpm?: number;
  concurrency?: number;
  budgets?: Array<{ window: string; tokens?: number; usd?: number }>;
  models?: string[];
}

/** One budget's use in its current window. Times are ms since the epoch. */
export interface BudgetUse {
  budget: { window: string; tokens?: number; usd?: number };
  used: number;
  startedAt?: number;
  resetsAt?: number;
  /** A USD budget with an open window: the key's requests in it that a model without a price served (not in `used`). */
  unpriced?: number;
}

/** A key's use of its rpm and tpm limits in the current minute (present for the limits it has). */
export interface MinuteUse {
  /** Requests admitted. */
  requests?: { used: number; limit: number };
  /** Tokens of the requests that ended. */
  tokens?: { used: number; limit: number };
}

/** `GET /keys` entries (never a secret). */
export interface KeyInfo {
  name: string;
  scopes: string[];
  tag?: string;
  source: "config" | "db";
  createdAt?: number;
  revokedAt?: number;
  /** When an active key was disabled (its requests refused until it is enabled); absent while it is not. */
  disabledAt?: number;
  /** The secret's first characters (`sy-mHYRP`, never enough to use it); absent for a key stored before prefixes were kept. */
  prefix?: string;
  /** When a stored key's secret was last replaced (Rotate, `switchyard keys rotate`); absent when never. */
  rotatedAt?: number;
  /** A rotated key's previous secret is still accepted until then; absent when it is not. */
  previousUntil?: number;
  limits?: KeyLimits;
  /** Current use of the limits, for active keys with limits. */
  use?: { budgets: BudgetUse[]; inFlight: number; minute?: MinuteUse };
}

/** `POST /dry-run` (pipeline/order.ts RoutePlan). */
export interface RoutePlan {
  requestedModel: string;
  clientFormat: string;
  via: string;
  alias?: string;
  combo?: string;
  candidates: string[];
  /** For a guessed name: the alias or combo it is plausibly a typo of. */
  nearName?: string;
  targets: Array<{
    target: string;
    providerId: string;
    model: string;
    verdict: "in" | "out";
    reason?: string;
    accounts: Array<{ accountId: string; verdict: "in" | "out"; reason: string; until?: number }>;
  }>;
  /**
   * The attempts in order (pipeline/attempt-budget.ts `PlannedAttempt`): `notReached` says why a request
   * never makes one (past settings.max_attempts); `notReachedIf`, when it would not (an earlier
   * non-streamed call that never answers outwaits settings.precommit_deadline_ms).
   */
  attempts: Array<{ target: string; accountId: string; notReached?: string; notReachedIf?: string }>;
  decisions: Array<{ subject: string; verdict: "in" | "out" | "moved"; reason: string }>;
  affinity: string;
  accountStrategy?: string;
}

/** `GET /combos` entries. */
export interface Combo {
  name: string;
  strategy: string;
  targets: Array<{ model: string; account?: string; weight?: number; when?: unknown; params?: unknown }>;
  source: "config" | "db";
  /** false for a stored combo that does not take effect (shadowed by the file, or invalid): see `error`. */
  active?: boolean;
  error?: string;
  [k: string]: unknown;
}

/** `GET /aliases` entries. */
export interface Alias {
  name: string;
  target: string;
  source: "config" | "db";
  active?: boolean;
  error?: string;
}

/** `GET /providers` entries. */
export interface Provider {
  id: string;
  kind: string;
  format?: string;
  baseUrl?: string;
  source?: string;
  models?: Record<string, unknown>;
  discoveredModels?: string[];
  accounts?: string[];
}
