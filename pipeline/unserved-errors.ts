/**
 * What the client hears when no attempt could be made or none served (SPEC 6.1, 6.3, 2.4): a target none
 * of whose accounts may serve now (cooling down, locked, quarantined, none configured), several such
 * targets at once, the provider's circuit open, and the provider refusing switchyard's own account
 * credential (before and after a refresh that backs off). Each is a {@link HubError} in the hub's terms;
 * the caller (attempt-loop.ts) adds Retry-After and writes it in the client's format. None names an
 * account (SPEC 2.4): the operator finds it in `switchyard accounts status`.
 */
import { GATEWAY_STOPPING_CODE } from "./classify.ts";
import { hubError, type HubError } from "../formats/hub.ts";
import type { Picked } from "./pick.ts";
import { addAccountHint, noAccountMessage, type Target } from "./resolve.ts";

/** What the client hears about a lock until changed: how an operator ends it (src/accounts/lock-advice.ts says it to the operator, naming the account). */
const UNLOCK_HINT = "an operator brings a locked account back by replacing its key and reloading, or with switchyard accounts unlock";
/**
 * The error when no account of any of several targets could serve (a combo whose every target is
 * cooling down, …): one message naming each target and why, where the first target's alone named only
 * its provider (newuser12b H3). The status and type are a rate limit's when any target is rate-limited
 * (a 429: its Retry-After, the earliest end, is added by the caller), else the first target's.
 */
export function allUnserved(unserved: Unserved[]): HubError {
  const parts = unserved.map((u) => `${u.target.label}: ${u.reason}`);
  const lead = unserved.find((u) => u.error.status === 429) ?? unserved[0];
  const { operatorOnly, ...error } = lead.error;
  // only an operator can end it when that holds of every target (else another may serve later)
  const all = operatorOnly && unserved.every((u) => u.error.operatorOnly) ? { operatorOnly } : {};
  return { ...error, ...all, message: `No target can serve this request right now: ${parts.join("; ")}.` };
}

/** What the client hears about a quarantined subscription credential: how an operator ends it (src/accounts/lock-advice.ts names the account and the commands). */
const QUARANTINE_HINT = "the provider rejected the subscription's credential; an operator brings it back with a new switchyard login or import, and switchyard accounts status says which account";

/** A target none of whose accounts could serve: its error, and why in words {@link allUnserved} puts beside the others'. */
export interface Unserved {
  target: Target;
  error: HubError;
  /** The error message's reason part, without the "No account of P can serve M: " lead or a final period. */
  reason: string;
}

/**
 * The error for a target none of whose accounts may serve now, and its reason part. It says why
 * (cooling down, locked, …) without naming accounts (SPEC 2.4). A rate-limit cooldown answers 429;
 * other exclusions 503; both get Retry-After from the caller when an end time is known.
 */
export function noAccountError(target: Target, picked: Picked): Omit<Unserved, "target"> {
  const out = picked.verdicts.filter((v) => v.verdict === "out");
  if (out.length === 0) {
    const reason = `no account is configured: ${addAccountHint(target.provider)}`;
    return { reason, error: hubError("api_error", noAccountMessage(target.provider), { status: 503, code: "no_account", operatorOnly: true }) };
  }
  let why = [...new Set(out.map((v) => v.note ?? "not eligible"))].slice(0, 4).join("; ");
  // A lock until changed (a refused key, exhausted quota) ends only by an operator's hand: say how, without naming the account (SPEC 2.4).
  if (out.some((v) => (v.cause === "lock" || v.cause === "quota") && v.until === undefined)) why += ` (${UNLOCK_HINT})`;
  const rateLimited = out.some((v) => v.cause === "rate_limit" || v.cause === "quota");
  // A quarantined credential with nothing that ends by itself beside it: not an overload to retry
  // (Claude Code retries an overloaded_error as Anthropic being busy) but the account's credential,
  // said as the 503 of a credential the provider refuses (upstreamAuthError).
  if (!rateLimited && out.some((v) => v.cause === "quarantined") && out.every((v) => v.until === undefined)) {
    const reason = `${why} (${QUARANTINE_HINT}). This is not about the key you sent to switchyard`;
    return { reason, error: hubError("api_error", `No account of ${target.provider.id} can serve ${target.model}: ${reason}.`, { status: 503, code: "upstream_auth_failed", operatorOnly: true }) };
  }
  const message = `No account of ${target.provider.id} can serve ${target.model} right now: ${why}.`;
  return {
    reason: why,
    error: rateLimited ? hubError("rate_limit", message, { code: "no_account" }) : hubError("overloaded", message, { status: 503, code: "no_account" }),
  };
}

/**
 * The answer when the last failure was the provider refusing an account's credential (SPEC 6.3's row
 * "401 / credential 403", after the OAuth refresh when there is one): it was switchyard's own account key
 * that the provider refused, not the client's. Passed on as the upstream's 401, a client read it as its
 * own key being wrong (Claude Code asked to /login, SDKs raise AuthenticationError); a 503 in the client's
 * format says whose credential it was, with the provider's words (scrubbed later like any error text)
 * and without naming the account (SPEC 2.4). `upstream` is the provider's error as parsed.
 */
export function upstreamAuthError(target: Target, upstream: HubError): HubError {
  const id = target.provider.id;
  return hubError(
    "api_error",
    `No account of ${id} could authenticate upstream: the provider refused switchyard's own account credential (${upstream.status}: ${upstream.message}). ` +
      `The gateway's account keys need attention (an operator sees why in switchyard accounts status); this is not about the key you sent to switchyard.`,
    { status: 503, code: "upstream_auth_failed" },
  );
}

/**
 * The answer when the last failure was a credential the provider refused and its refresh failed
 * temporarily (SPEC P-7: the refresh backs off): a 503 saying it usually passes and when switchyard
 * tries again (the caller adds Retry-After), without naming the account (SPEC 2.4).
 */
export function refreshBackoffError(target: Target, backoff: { until: number; reason: string }): HubError {
  return hubError(
    "api_error",
    `No account of ${target.provider.id} could refresh its subscription credential: ${backoff.reason}, which usually passes; switchyard tries again after ${new Date(backoff.until).toISOString()}. This is not about the key you sent to switchyard.`,
    { status: 503, code: "credential_refresh_failed" },
  );
}

/**
 * The answer for a target whose provider's circuit is open (SPEC 6.3: consecutive upstream 5xx): a 503
 * saying so and until when (a Retry-After is added by the caller); nothing was sent upstream. It read
 * "No target could serve this request." with no Retry-After, and `accounts status` called the account
 * eligible, so a client (Codex reconnecting for half a minute) and its user could not tell why.
 */
export function circuitOpenError(target: Target, until: number | undefined, now: number): HubError {
  const when =
    until === undefined ? "for a while" : until > now ? `until ${new Date(until).toISOString()}` : "until the request now testing it succeeds or fails";
  return hubError(
    "overloaded",
    `Provider ${target.provider.id} is not being called ${when}: its circuit is open after consecutive upstream 5xx errors (switchyard accounts status shows it). Nothing was sent upstream.`,
    { status: 503, code: "circuit_open" },
  );
}

/**
 * The answer of a request still waiting on its upstream (no reply committed: the upstream had not
 * answered, or its whole reply had not arrived) when a shutdown's grace period ended (SPEC D-3:
 * `server.shutdown_grace_ms` over, or a second signal), its upstream call aborted: a 503
 * `gateway_stopping` in the client's format, as a stream still open then ends with its in-band error.
 * No Retry-After: when this gateway, or the one after it, takes requests again is not known here.
 */
export function gatewayStoppingError(): HubError {
  return hubError(
    "overloaded",
    "The gateway is shutting down: its grace period for requests in flight ended before the upstream had answered this request, and the upstream call was cancelled. Send the request again.",
    { status: 503, code: GATEWAY_STOPPING_CODE },
  );
}
