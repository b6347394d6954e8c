/**
 * What the attempt loop (pipeline/attempt-loop.ts) takes from src/: the account effects and successes
 * ({@link AccountHealth}), the refresh report of subscription accounts, the loop's settings and
 * dependencies, and what it takes from the request's resolution ({@link AttemptRoute}). Types only.
 */
import type { GraceEnd } from "./grace-end.ts";
import type { Classification } from "./classify.ts";
import type { CommitDeps, OpenStreams } from "./commit.ts";
import type { Finished, RequestContext } from "./context.ts";
import type { ExecutorFor } from "./execute.ts";
import type { AccountPool } from "./pick.ts";
import type { Account, Clock, Credential, ProviderInfo } from "./ports.ts";
import type { RoutingTable, Target } from "./resolve.ts";
import type { Portability, Translated } from "./translate.ts";
import type { TokenSaverSettings } from "./save-tokens.ts";

/** Applies the account effects of the classification table and records successes. */
export interface AccountHealth {
  /**
   * Records a failed attempt. With `retrying` the same account is about to be tried again: only the
   * provider's consecutive-5xx count moves. Otherwise the account effect is written through (memory and
   * store) before the next pick (SPEC 6.3).
   */
  failure(account: Account, provider: ProviderInfo, model: string, c: Classification, opts?: { retrying?: boolean }): void;
  /**
   * Clears error state after a committed reply (SPEC R-8) and feeds latency to scoring. `now`: the
   * commit's time, ms since the epoch (default: the clock now), which the success is stamped with.
   */
  success(account: Account, provider: ProviderInfo, model: string, latencyMs: number, now?: number): void;
  /**
   * Whether the cached quota windows of this account/model look healthy (more than 2 % left); undefined
   * when none are known. Feeds the 90 s per-minute rule of SPEC 6.3.
   */
  quotaHealthy?(account: Account, model: string): boolean | undefined;
  /**
   * The smallest per-minute token limit (tokens) the account's rate-limit headers last reported for
   * `model` (SPEC P-5: OpenAI `x-ratelimit-limit-tokens`, Anthropic `anthropic-ratelimit-tokens-limit` /
   * `-input-tokens-limit`), kept after the window resets; undefined when none was seen. Read only for a
   * request too large for every per-minute window that answered, to know whether an account it did not
   * try could take it (assemble-final-error.ts).
   */
  tokenWindowLimit?(account: Account, model: string): number | undefined;
  /** Whether the provider's circuit is open (SPEC 6.3: 10 consecutive 5xx). */
  circuitOpen(providerId: string): boolean;
  /**
   * When the provider's open circuit lets a request through again (ms since the epoch; a past time while
   * another request's half-open probe is out), undefined when closed. Read only for a provider that
   * {@link circuitOpen} kept out, to tell the client why and for how long (SPEC 2.4 Retry-After).
   */
  circuitOpenUntil?(providerId: string): number | undefined;
  /**
   * SPEC 6.2/P-7: refresh an OAuth credential after a 401 (one coalesced refresh per account); `ok`
   * when a new token is in place, with what happened in words and the token calls waited on (for the
   * route trace). `sentWith` is the credential the failed call carried (a newer one may already be
   * current: then no refresh is needed). Undefined for API-key accounts.
   */
  refresh?(account: Account, sentWith?: Credential): Promise<RefreshReport>;
  /**
   * SPEC P-7: when the last refresh of the account's credential failed temporarily (the token endpoint
   * answered 5xx or could not be reached), until when it backs off (ms since the epoch) and why;
   * undefined otherwise. Undefined for API-key accounts.
   */
  refreshBackoff?(account: Account): { until: number; reason: string } | undefined;
  /**
   * SPEC P-5: sees every upstream reply's status and headers (success or error, before its body is
   * read), e.g. to read quota windows from rate-limit headers. Optional; must not throw.
   */
  observe?(account: Account, provider: ProviderInfo, model: string, status: number, headers: Headers): void;
}

/**
 * What one request's refresh after a credential failure did (SPEC 6.2/P-7): `ok` when a new token is
 * in place; `note` in words (see RefreshTrace in ./ports.ts); the token-endpoint calls waited on, `at` in ms
 * since the epoch. Never a token.
 */
export interface RefreshReport {
  ok: boolean;
  note: string;
  calls: Array<{ at: number; durationMs: number; status?: number; error?: string }>;
}

/** Bounds of the attempt loop (SPEC 6.1). */
export interface AttemptSettings {
  /** At most this many attempts per request (default 8, capped at 20). */
  maxAttempts: number;
  /** No new attempt starts after this many ms from arrival (default 60 000). */
  precommitDeadlineMs: number;
}

/** Dependencies of the attempt loop. */
export interface AttemptDeps {
  pool: AccountPool;
  health: AccountHealth;
  executorFor: ExecutorFor;
  clock: Clock;
  settings: () => AttemptSettings;
  /** Called exactly once per request when its reply is complete, failed, or the client left. */
  finish: (ctx: RequestContext, f: Finished) => void;
  /**
   * Provider-capability adjustments of a translated body before it is sent (SPEC P-8: a reasoning
   * effort the model does not support is clamped); may replace `translated.body` and push warnings.
   */
  adjust?: (target: Target, translated: Translated) => void;
  /** Token-saver settings (SPEC S-1, config `settings.token_savers`); savers are off when absent. */
  tokenSavers?: () => TokenSaverSettings;
  /** Streamed replies still open, ended by a shutdown whose grace period is over (commit.ts, SPEC D-3). */
  openStreams?: OpenStreams;
  /**
   * Ended when a shutdown's grace period is over (SPEC D-3: `server.shutdown_grace_ms`, or a second
   * signal): a request still waiting on its upstream before its commit point (for the reply's headers,
   * its whole body, a concurrency slot or a retry's pause) has its upstream call aborted and is answered
   * a 503 `gateway_stopping` in its format (unserved-errors.ts), no account effect; a committed stream
   * ends through {@link openStreams} instead. Never ends when absent.
   */
  graceOver?: GraceEnd;
  /** Runs the commit's success and binding after the reply is handed over ({@link CommitDeps.later}); at once when absent. */
  later?: CommitDeps["later"];
  /**
   * The routing table in force (its aliases, combos and near-name search `suggest`), read only when a
   * guessed name failed at every target with "no such model" ({@link AttemptRoute.guessed}); the 404
   * then names the alias or combo the name is near (resolve.ts nearAliasOrCombo). No hint when absent.
   */
  routing?: () => RoutingTable;
  /**
   * Spans are exported (SPEC O-5): each attempt sends its provider a `traceparent` naming the attempt's
   * span (pipeline/trace-context.ts). Without it the client's `traceparent` is forwarded as sent.
   */
  traceUpstream?: boolean;
  /**
   * Every secret the instance holds (account credentials, client keys): scrubbed from error answers
   * and, before it is cut, from the error text an attempt's route-trace entry keeps. Only
   * credential-shaped text is scrubbed when absent.
   */
  secrets?: () => Iterable<string>;
}

/** What the attempt loop takes from the request's resolution: the settings of the combo addressed, if any. */
export interface AttemptRoute {
  /** What to do with request features a target cannot express (SPEC 5.1; default strip_with_warning). */
  portability: Portability;
  /** false when the combo turned cache affinity off (SPEC A-2): accounts are not steered or bound by conversation. */
  cacheAffinity: boolean;
  /**
   * true for a name taken as a guess (SPEC R-2, resolution `via: "guess"`): when every target answered
   * that the model does not exist, the 404 asks whether an alias or combo near it was meant
   * ({@link AttemptDeps.routing}).
   */
  guessed?: boolean;
}
