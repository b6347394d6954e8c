/**
 * The attempt loop (SPEC 6.1, 6.2) around pick → translate → save-tokens → execute → commit (the
 * commit point is commit.ts).
 *
 * States: SELECT → CONNECT → WAITING_FOR_FIRST_BYTE → COMMITTED → STREAMING → COMPLETE | FAILED.
 * Retry and fallback happen only before COMMITTED. Three nested loops: the same account (502/503/504,
 * connection errors, an overloaded first event), the next account (cooldown written first), the next
 * combo target. Bounds: `maxAttempts` attempts and a pre-commit deadline, spent so that later candidates
 * are still tried (attempt-budget.ts: a header wait cut to half the time left while another candidate
 * remains, no same-account retry after a header timeout then, same-account retries only while the
 * attempts left cover the untried candidates, and the trace naming candidates the budget left out).
 */
import { codecFor } from "../formats/index.ts";
import { hubError, type HubError } from "../formats/hub.ts";
import { concatBytes } from "../formats/sse.ts";
import { affinityHints } from "./affinity.ts";
import { classify, misdirected404, misdirected404Error, redirectError, type Classification } from "./classify.ts";
import { commitReply, type CommitAttempt } from "./commit.ts";
import { clientHeadersOf, type RequestContext } from "./context.ts";
import { startCall, TransportError, type ClientAbort, type UpstreamReply } from "./execute.ts";
import { pickAccount, verdictDecision, type PickHints, type Picked } from "./pick.ts";
import type { Account, AttemptRecording, AttemptTrace } from "./ports.ts";
import type { Target } from "./resolve.ts";
import { circuitOpenError, gatewayStoppingError, noAccountError, type Unserved } from "./unserved-errors.ts";
import { translate, type Translated } from "./translate.ts";
import { saveTokens } from "./save-tokens.ts";
import { clampOutputTokens } from "./clamp-output-tokens.ts";
import { siblingTargets } from "./siblings.ts";
import { attemptHeaderWait, retryFitsBudget, untriedCandidates, wholeReplyWaitMs } from "./attempt-budget.ts";
import { assembleFinalError, finalError, type Failed } from "./assemble-final-error.ts";
import { upstreamTraceparent } from "./trace-context.ts";
import { presentedSecrets, scrubAndCut, scrubbedHead, scrubText, TRACE_TEXT_MAX } from "./scrub.ts";

export type { AccountHealth, AttemptDeps, AttemptRoute, AttemptSettings, RefreshReport } from "./attempt-deps.ts";
import type { AttemptDeps, AttemptRoute, RefreshReport } from "./attempt-deps.ts";

/** Same-account retry bounds (SPEC 6.1/6.2). */
const SAME_ACCOUNT_RETRIES = 3;
const FIRST_BACKOFF_MS = 100;
const MAX_BACKOFF_MS = 1000;
/** A provider asking to wait longer than this ends same-account retries (SPEC 6.2). */
const LONG_WAIT_MS = 60_000;
/** Error bodies are read up to this many bytes. */
const ERROR_BODY_LIMIT = 64 * 1024;
/** Characters of an error body read past {@link ERROR_BODY_LIMIT} so that a secret the cut goes through is scrubbed whole. */
const ERROR_BODY_MARGIN = 16 * 1024;

/** What {@link pickAccount} is given before a target's first account was tried (read only). */
const NONE_TRIED: ReadonlySet<string> = new Set();

/**
 * Runs the targets in order until one commits. Returns the client Response: a committed reply, or the
 * last error in the client's format (with Retry-After when accounts were cooling down).
 */
export async function runAttempts(ctx: RequestContext, planned: Target[], route: AttemptRoute, deps: AttemptDeps): Promise<Response> {
  /** The planned targets; siblings of a missing model are inserted after it (SPEC R-10). */
  let targets = planned;
  /** The failure of a model that siblings stood in for: reported instead of a missing sibling's own (R-10). */
  let missing: Map<string, Failed> | undefined;
  const { maxAttempts, precommitDeadlineMs } = deps.settings();
  const deadline = deps.clock.now() + precommitDeadlineMs;
  let attempts = 0;
  let last: Failed | undefined;
  /** Whether every attempt so far failed as too large for a per-minute window (`x-should-retry: false` only then). */
  let onlyTooLarge = true;
  /**
   * Targets passed over for capacity before their body was built (the provider's circuit open, no account
   * free), each with its failure; made by the first. Read only when another target refused the body.
   */
  let skipped: Failed[] | undefined;
  /** Whether a target was passed over because its model is gone at every account (not capacity, not the body). */
  let goneSkipped = false;
  /** Whether a target's translation built the body (it could take it, whether or not a call was made). */
  let bodyBuilt = false;
  /** The earliest time an account of any target frees up: its cooldown's end, or the Retry-After of an attempt given up on (SPEC 2.4). */
  let firstFreeAt: number | undefined;
  /** Each target none of whose accounts could serve, with why (one message names them all); made by the first. */
  let unserved: Unserved[] | undefined;
  let fallback = false;
  const hints = affinityHints(ctx, route.cacheAffinity);
  /** Targets an account was picked for: their accounts' state after the request gives Retry-After (attempt-budget.ts). */
  let reached: Target[] | undefined;
  /** Eligible accounts of the current target not tried yet (its last pick's `others`). */
  let others = 0;
  /** The target whose turn the budget (attempts, deadline) ended, when it ended the loop. */
  let stopTi: number | undefined;
  /** Whether an account was passed over for want of a concurrency slot in time. */
  let slotMissed = false;

  for (let ti = 0; ti < targets.length; ti++) {
    const target = targets[ti];
    if (deps.health.circuitOpen(target.provider.id)) {
      ctx.trace.decisions.push({ subject: target.label, verdict: "out", reason: `provider ${target.provider.id} circuit open` });
      const until = deps.health.circuitOpenUntil?.(target.provider.id);
      if (until !== undefined && (firstFreeAt === undefined || until < firstFreeAt)) firstFreeAt = until;
      const open: Failed = { target, error: circuitOpenError(target, until, deps.clock.now()), classification: { row: "server_error", account: { type: "none" }, loop: "next_target" }, freeAt: until };
      (skipped ??= []).push(open);
      last ??= open;
      continue;
    }
    /** The first account of the target tried; the set of all tried is made at the next pick (most requests make one pick: no set). */
    let triedFirst: string | undefined;
    let tried: Set<string> | undefined;
    /** Accounts whose exclusion is already in the trace (each account's decision is recorded once). */
    let reported: Set<string> | undefined; // made by the first exclusion
    let translated: Translated | undefined;
    targetLoop: for (;;) {
      const picked = pickAccount(deps.pool, target, tried ?? (triedFirst === undefined ? NONE_TRIED : (tried = new Set([triedFirst]))), hints);
      for (const v of picked.verdicts) {
        if (v.verdict === "out") {
          reported ??= new Set();
          if (reported.has(v.accountId)) continue;
          reported.add(v.accountId);
        }
        ctx.trace.decisions.push(verdictDecision(target, v));
      }
      if (picked.firstFreeAt !== undefined && (firstFreeAt === undefined || picked.firstFreeAt < firstFreeAt)) firstFreeAt = picked.firstFreeAt;
      const account = picked.account;
      if (!account) {
        if (triedFirst === undefined) {
          // None free before the body was built: capacity (or a model gone everywhere), not the body's fault.
          const gone = modelGone(target, picked);
          const none = gone ? undefined : noAccountError(target, picked);
          if (none) (unserved ??= []).push({ target, ...none });
          const failed = gone ?? { target, error: none!.error, classification: { row: "client_error", account: { type: "none" }, loop: "next_target" }, freeAt: picked.firstFreeAt };
          if (gone) goneSkipped = true;
          else (skipped ??= []).push(failed);
          last ??= failed;
          // The upstream said earlier that the model does not exist for any of the target's accounts:
          // as after that attempt, its siblings come next (R-10), on every later request too.
          if (gone && !target.siblingOf) targets = withSiblings(targets, planned, ti, gone, (missing ??= new Map()), ctx);
        }
        break;
      }
      if (tried) tried.add(account.id); // the second account or later
      else {
        triedFirst = account.id;
        (reached ??= []).push(target);
      }
      others = picked.others;
      // SPEC 2.4: X-Switchyard-Fallback when a target or account other than the first serves.
      if (ti > 0 || !picked.firstChoice || tried !== undefined) fallback = true;

      // The body depends on the target only: built once, reused by every account of the target.
      if (!translated) {
        const built = translate(ctx, target, route.portability);
        if ("kind" in built) {
          // The request cannot be expressed for this target: another target may accept it. A failure of a
          // target that was called (it could take the body) stays the answer: a 400 would say "do not send
          // this body again" of a body another target took (its 5xx is retryable).
          const refusal: Failed = { error: built, classification: { row: "client_error", account: { type: "none" }, loop: "next_target" }, target, refused: true };
          if (last?.account === undefined) last = refusal;
          ctx.trace.decisions.push({ subject: target.label, verdict: "out", reason: built.message });
          break;
        }
        bodyBuilt = true;
        clampOutputTokens(ctx, target, built);
        deps.adjust?.(target, built);
        saveTokens(ctx, target, built, deps.tokenSavers?.());
        translated = built;
      }

      let sameRetries = 0;
      let refreshed = false;
      for (;;) {
        if (attempts >= maxAttempts || deps.clock.now() > deadline || requestEnded(ctx, deps)) break targetLoop;
        const release = deps.pool.acquireNow?.(account) ?? (await deps.pool.acquire(account, waitSignal(ctx, deps)));
        if (!release) {
          if (requestEnded(ctx, deps)) break targetLoop;
          ctx.trace.decisions.push({ subject: `${target.label} @ ${account.id}`, verdict: "out", reason: "no free concurrency slot in time" });
          slotMissed = true; // a slot frees by itself: not an operator's to end (below)
          continue targetLoop;
        }
        attempts++;
        const headerMs = translated.upstreamStream
          ? attemptHeaderWait(target.provider.headerTimeoutMs, deadline, deps.clock.now(), targets, ti, others, deps, hints)
          : wholeReplyWaitMs(target.provider);
        const result = await attemptOnce(ctx, target, account, translated, deps, attempts, fallback, release, hints, headerMs);
        if (result instanceof Response) return result;
        last = { ...result, target, account };
        const c = result.classification;
        if (c.row !== "too_large_for_window") onlyTooLarge = false;
        if (requestEnded(ctx, deps)) break targetLoop; // no account effect: the upstream did not fail
        if (c.account.type === "credential" && deps.health.refresh && !refreshed) {
          refreshed = true; // SPEC 6.2/P-7: one coalesced refresh and one retry on an OAuth account.
          const waitFrom = deps.clock.now();
          const report = await deps.health.refresh(account, result.sentWith);
          // The trace says what the refresh did, and that a refreshed token is tried on the same
          // account (it read "credential rejected; next_account" though the same account served next).
          const failed = ctx.trace.attempts.at(-1);
          if (failed) {
            failed.refresh = {
              ok: report.ok,
              note: report.note,
              waitedMs: deps.clock.now() - waitFrom,
              calls: callsFrom(report.calls, ctx.startedAt),
            };
            failed.effect = `credential rejected; ${report.note}; ${report.ok ? "retrying the same account" : c.loop}`;
          }
          // The attempt's failure counts once (try19 D3): here when a refreshed token is tried, else below.
          if (report.ok) deps.health.failure(account, target.provider, target.model, c, { retrying: true });
          if (report.ok) continue;
        }
        // Same-account retries leave the untried candidates their attempts; a header timeout is not
        // retried while another candidate remains (attempt-budget.ts).
        let skipRetry: string | undefined;
        if (c.loop === "retry_same" && sameRetries < SAME_ACCOUNT_RETRIES) {
          const untried = untriedCandidates(targets, ti, others, deps, hints, maxAttempts);
          if (result.headerTimeout && untried > 0) skipRetry = "no same-account retry after a header timeout while other candidates remain";
          else if (untried > 0 && !retryFitsBudget(maxAttempts, attempts, untried)) skipRetry = `same-account retries skipped: the ${maxAttempts - attempts} attempts left are kept for ${untried} untried candidate${untried === 1 ? "" : "s"}`;
          const failed = skipRetry ? ctx.trace.attempts.at(-1) : undefined;
          if (failed) failed.effect = `${describeEffect({ ...c, loop: "next_account" })}; ${skipRetry}`;
        }
        if (c.loop === "retry_same" && sameRetries < SAME_ACCOUNT_RETRIES && !skipRetry) {
          // SPEC 6.1: 100 ms doubling to 1 s between same-account attempts unless the provider names a wait;
          // a provider asking for more than a minute ends same-account retries (6.2).
          const wait = c.retryAfterSeconds !== undefined ? c.retryAfterSeconds * 1000 : Math.min(MAX_BACKOFF_MS, FIRST_BACKOFF_MS * 2 ** sameRetries);
          if (wait <= LONG_WAIT_MS && deps.clock.now() + wait < deadline) {
            sameRetries++;
            deps.health.failure(account, target.provider, target.model, c, { retrying: true });
            try {
              await deps.clock.sleep(wait, waitSignal(ctx, deps));
            } catch {
              break targetLoop;
            }
            continue;
          }
        }
        deps.health.failure(account, target.provider, target.model, c);
        if (c.loop === "return") return finalError(ctx, result.error, deps, { attempts, fallback, target, account, cache: deps.pool.cacheState?.(hints, target.provider.id) });
        if (c.row === "model_unavailable" && !target.siblingOf) {
          // SPEC R-10: the model does not exist here; its siblings on the same provider come next.
          targets = withSiblings(targets, planned, ti, last, (missing ??= new Map()), ctx);
        }
        if (c.loop === "next_target") break targetLoop;
        continue targetLoop; // next account
      }
    }
    if (attempts >= maxAttempts || deps.clock.now() > deadline || requestEnded(ctx, deps)) {
      stopTi = ti;
      break;
    }
    others = 0;
  }
  return assembleFinalError(ctx, { targets, missing, attempts, maxAttempts, precommitDeadlineMs, fallback, last, onlyTooLarge, skipped, goneSkipped, bodyBuilt, firstFreeAt, unserved, reached, others, stopTi, slotMissed }, route, deps, hints);
}

/**
 * Whether the request is over before its commit point whatever its upstream does: the client left
 * (`ctx.signal`), or a shutdown's grace period ended ({@link AttemptDeps.graceOver}). The loops stop
 * trying then; which of the two it was decides the answer (499, or the 503 `gateway_stopping`).
 */
function requestEnded(ctx: RequestContext, deps: AttemptDeps): boolean {
  return ctx.signal.aborted || deps.graceOver?.over === true;
}

/** A refresh's token-endpoint calls for the route trace, their start in ms after the request's (`startedAt`). */
function callsFrom(calls: RefreshReport["calls"], startedAt: number): NonNullable<AttemptTrace["refresh"]>["calls"] {
  return calls.map(({ at, ...call }) => ({ startMs: at - startedAt, ...call }));
}

/**
 * The signal a request's waits before an attempt (a concurrency slot, a retry's pause) end on: the
 * client's, or, while a shutdown may end the grace period ({@link AttemptDeps.graceOver}), either; made
 * only for such a wait, not per request.
 */
function waitSignal(ctx: RequestContext, deps: AttemptDeps): AbortSignal {
  return deps.graceOver ? AbortSignal.any([ctx.signal, deps.graceOver.signal]) : ctx.signal;
}

/**
 * `targets` with the siblings (SPEC R-10) of the missing model of `targets[ti]` inserted after it, the
 * failure it met recorded in `missing` (reported instead of a missing sibling's own), and one trace
 * decision per sibling. A copy is made before the first insertion, so the caller's `planned` list stays
 * as planned; without siblings `targets` is answered as it is.
 */
function withSiblings(targets: Target[], planned: Target[], ti: number, failed: Failed, missing: Map<string, Failed>, ctx: RequestContext): Target[] {
  const target = targets[ti]!;
  const siblings = siblingTargets(target);
  if (siblings.length === 0) return targets;
  const out = targets === planned ? planned.slice() : targets;
  missing.set(target.label, failed);
  out.splice(ti + 1, 0, ...siblings);
  for (const s of siblings) ctx.trace.decisions.push({ subject: s.label, verdict: "in", reason: `sibling of ${target.model}: the upstream said ${target.model} does not exist` });
  return out;
}

/**
 * The failure of a target whose model every one of its accounts has had removed (SPEC 6.3: the
 * upstream answered that the model does not exist, or that the account has no access to it, a
 * pairing kept until changed): a 404
 * `model_not_found` naming the upstream's answer, classified as that answer was (`model_unavailable`,
 * next target), as the request that met it got. Undefined when any account is out for another reason
 * (cooling down, locked, …: {@link noAccountError}'s 429 / 503), or none is.
 */
function modelGone(target: Target, picked: Picked): Failed | undefined {
  const out = picked.verdicts.filter((v) => v.verdict === "out");
  if (out.length === 0 || out.some((v) => v.cause !== "removed")) return undefined;
  const why = [...new Set(out.map((v) => v.note ?? "model removed"))].slice(0, 2).join("; ");
  return {
    target,
    error: hubError("model_not_found", `The model ${target.model} is not available at provider ${target.provider.id}: ${why}.`, { code: "model_not_found", param: "model" }),
    classification: { row: "model_unavailable", account: { type: "none" }, loop: "next_target" },
  };
}

/**
 * One attempt as the commit point sees it ({@link CommitAttempt}): its target, account and body, the
 * upstream's reply once it answered, and its two operations as methods: `release` (the account's
 * concurrency slot, idempotent) and `fail` (classifies a failure, fills the trace, and records the usage
 * the provider reported for a reply that failed at the commit point: RequestContext.billed). One object per
 * attempt instead of a record and two closures (docs/performance.md item 234).
 */
class Attempt implements CommitAttempt {
  /** The upstream's reply and the call's controller and client listener: set when its headers arrived. */
  reply = undefined as unknown as UpstreamReply;
  controller = undefined as unknown as AbortController;
  clientAbort = undefined as unknown as ClientAbort;
  /** {@link CommitAttempt.streaming}: set by the commit point when the reply streams on (the stream owns the slot). */
  streaming = false;
  /** {@link CommitAttempt.driver}: set by the commit point once the reply's driver is made. */
  driver: CommitAttempt["driver"] = undefined;
  private released = false;

  constructor(
    readonly target: Target,
    readonly account: Account,
    readonly translated: Translated,
    /** ms since the epoch when the attempt started. */
    readonly started: number,
    readonly trace: AttemptTrace,
    readonly recording: AttemptRecording | undefined,
    readonly attempts: number,
    readonly fallback: boolean,
    readonly hints: PickHints,
    /** Releases the slot the attempt holds (the pool's, called once). */
    private readonly slot: () => void,
    private readonly deps: AttemptDeps,
    /** The request, for the key it presented (scrubbed from trace text as the instance's secrets are). */
    private readonly ctx: RequestContext,
  ) {}

  release(): void {
    if (!this.released) {
      this.released = true;
      this.slot();
    }
  }

  fail(facts: Omit<Parameters<typeof classify>[0], "now">, error: HubError): Failed {
    const { deps, trace } = this;
    const classification = classify({ quotaHealthy: deps.health.quotaHealthy?.(this.account, this.target.model), ...facts, now: deps.clock.now() });
    trace.durationMs = deps.clock.now() - this.started;
    trace.status = facts.status;
    trace.classification = classification.row;
    trace.error = this.traceText(error.traceMessage ?? error.message);
    trace.effect = describeEffect(classification);
    // SPEC 9.5, O-1: what the provider reported for a reply that then failed is billed all the same.
    const driver = this.driver;
    if (driver !== undefined && driver.usageSeen) {
      this.driver = undefined; // recorded once
      (this.ctx.billed ??= []).push({ target: this.target, accountId: this.account.id, usage: { ...driver.usage } });
    }
    const retryAfterSeconds = error.retryAfterSeconds ?? classification.retryAfterSeconds;
    return { error: retryAfterSeconds !== undefined ? { ...error, retryAfterSeconds } : error, classification };
  }

  traceText(text: string): string {
    return scrubAndCut(text, TRACE_TEXT_MAX, this.secrets());
  }

  /**
   * An upstream error body as read (at most {@link ERROR_BODY_LIMIT} + {@link ERROR_BODY_MARGIN}
   * characters), scrubbed of every secret as a whole and cut to {@link ERROR_BODY_LIMIT} characters
   * (scrub.ts scrubbedHead): what classification, the codec's error message and the flight recorder
   * read, so that no later cut of it keeps part of a secret.
   */
  errorBody(read: string): string {
    return read.length > ERROR_BODY_LIMIT ? scrubbedHead(read, read.slice(0, ERROR_BODY_LIMIT), this.secrets()) : scrubText(read, this.secrets());
  }

  /**
   * The instance's secrets and the key the request presented ({@link CommitAttempt.secrets}): what the
   * attempt's trace text, error body and a streamed reply's in-band error are scrubbed of.
   */
  secrets(): string[] {
    const request = this.ctx.request;
    return [...(this.deps.secrets?.() ?? []), ...presentedSecrets(request.headers, request.url)];
  }
}

/**
 * One attempt: execute, then either commit (returning the client Response) or report the failure.
 * Nothing is written to the client before the commit. The concurrency slot (`release`, the pool's) is
 * released when the attempt fails, and otherwise when the reply is complete or the client left.
 */
async function attemptOnce(
  ctx: RequestContext,
  target: Target,
  account: Account,
  translated: Translated,
  deps: AttemptDeps,
  attempts: number,
  fallback: boolean,
  release: () => void,
  hints: PickHints,
  /** The attempt's header wait, ms: the provider's header timeout or less (attempt-budget.ts headerWaitMs). */
  headerMs: number,
): Promise<Response | Failed> {
  let a: Attempt | undefined;
  /** The streamed reply owns the slot from here on (released at its end or when the client leaves). */
  let handedOff = false;
  try {
    const provider = target.provider;
    const started = deps.clock.now();
    const trace: AttemptTrace = { target: target.label, providerId: provider.id, model: target.model, accountId: account.id, startMs: started - ctx.startedAt };
    ctx.trace.attempts.push(trace);
    // SPEC O-6: the body sent upstream and the reply's bytes, when the flight recorder is on.
    const recording = ctx.recording?.attempt({ target: target.label, accountId: account.id, upstreamFormat: translated.upstreamFormat, body: translated.body });
    a = new Attempt(target, account, translated, started, trace, recording, attempts, fallback, hints, release, deps, ctx);
    const providerCodec = codecFor(translated.upstreamFormat);
    try {
      // executeCall's steps (execute.ts), taken here: one async layer fewer per attempt (item 263).
      const executor = deps.executorFor(provider);
      const call = { provider, account, model: target.model, body: translated.body, stream: translated.upstreamStream, clientHeaders: clientHeadersOf(ctx), upstreamFormat: translated.upstreamFormat, clientFormat: ctx.clientFormat, promptCacheKey: translated.promptCacheKey, droppedBetas: translated.droppedBetas, traceparent: deps.traceUpstream ? upstreamTraceparent(ctx, trace) : undefined, signal: undefined as unknown as AbortSignal };
      const sent = startCall(call, ctx.signal, headerMs, deps.graceOver);
      try {
        const pending = executor.send(call);
        primeCacheState(deps.pool, hints, provider.id);
        sent.reply = await pending;
      } catch (e) {
        throw sent.failed(e);
      } finally {
        sent.disarm();
      }
      a.reply = sent.reply;
      a.controller = sent.controller;
      a.clientAbort = sent;
    } catch (e) {
      if (deps.graceOver?.over && !ctx.signal.aborted) {
        const stopping = gatewayStoppingError(); // the gateway's own shutdown cut the call: no account effect
        return a.fail({ transport: "aborted", stopping: true, error: stopping }, stopping);
      }
      const te = e instanceof TransportError ? e : new TransportError("other", String(e));
      if (te.reason === "header_timeout") {
        // The upstream was reached (it has the request); it only sent no status line and headers in time.
        const cut = headerMs < provider.headerTimeoutMs ? `; cut from header_timeout_ms ${provider.headerTimeoutMs} to half the pre-commit deadline left, so the next candidate gets the rest` : "";
        const what = translated.upstreamStream ? `sent no response headers within ${headerMs} ms (header_timeout${cut})` : `sent no reply to a non-streamed request within ${headerMs} ms (reply_timeout_ms)`;
        return { ...a.fail({ transport: te.reason }, hubError("timeout", `Upstream ${provider.id} ${what}.`, { status: 504 })), headerTimeout: true };
      }
      return a.fail({ transport: te.reason }, hubError("api_error", `Upstream ${provider.id} could not be reached (${te.reason}).`, { status: 502 }));
    }
    const reply = a.reply;

    try {
      deps.health.observe?.(account, provider, target.model, reply.status, reply.headers);
    } catch {
      // observing is best effort and never fails an attempt
    }
    recording?.headers(reply.status, reply.headers);

    if (reply.status < 200 || reply.status >= 300) {
      // Scrubbed before anything cuts it (this bound, a codec's raw message of 500 characters, the trace's 300).
      const read = await readBounded(reply.body, ERROR_BODY_LIMIT + ERROR_BODY_MARGIN);
      const text = a.errorBody(read);
      // The flight recorder scrubs what it shows before its own cut: it gets the body as the upstream
      // sent it, unless the body is longer than the bound (then what was kept of it, scrubbed).
      recording?.bytes(read.length > ERROR_BODY_LIMIT ? text : read);
      a.controller.abort();
      const error =
        reply.status < 400
          ? redirectError(provider.id, reply.status, reply.headers.get("location"), a.secrets())
          : misdirected404({ status: reply.status, bodyText: text })
            ? misdirected404Error(provider.id, reply.url, text)
            : providerCodec.parseError(reply.status, text, reply.headers, deps.clock.now());
      return { ...a.fail({ status: reply.status, headers: reply.headers, bodyText: text, error }, error), sentWith: reply.credential };
    }

    // ---- 2xx: the commit point (commit.ts) ---------------------------------------------------------
    const committed = await commitReply(ctx, a, deps);
    handedOff = a.streaming === true; // set by the commit point when the reply streams on
    return committed; // the Response, or the failure
  } finally {
    a?.clientAbort?.unstop(); // committed (a stream ends at shutdown through openStreams) or failed
    if (handedOff) {
      // the reply stream releases the slot
    } else if (a) a.release();
    else release(); // failed before the attempt was made
  }
}

/**
 * Reads the request's affinity key (SPEC 2.4 `X-Switchyard-Cache`) while the upstream call is in
 * flight: the hints keep it, and the commit point's `cacheState` needs it before the reply's headers
 * are written, so computing it here (the conversation fingerprint: a SHA-256 over the first turns)
 * takes it off the reply's critical path at no extra cost. `cacheState` without an account reads the
 * key exactly when the commit point's call will (not under round-robin or with affinity off). A
 * failure is left to the commit point, where it surfaces as before.
 */
function primeCacheState(pool: AttemptDeps["pool"], hints: PickHints, providerId: string): void {
  try {
    pool.cacheState?.(hints, providerId);
  } catch {
    // read again, and thrown, at the commit point
  }
}

function describeEffect(c: Classification): string {
  const a = c.account;
  // A same-account retry comes first; the account effect applies only once those retries are spent
  // ("cooldown (model) 30 s; retry_same" read as a cooldown followed by the same account again).
  if (c.loop === "retry_same" && a.type !== "none") return `retry_same; once same-account retries are spent: ${describeEffect({ ...c, loop: "next_account" })}`;
  switch (a.type) {
    case "none":
      return `no account effect; ${c.loop}`;
    case "cooldown_until":
      return `cooldown (${a.scope}) until ${new Date(a.until).toISOString()}; ${c.loop}`;
    case "cooldown_for":
      return `cooldown (${a.scope}) ${Math.round(a.ms / 1000)} s; ${c.loop}`;
    case "backoff":
      return `backoff; ${c.loop}`;
    case "lock":
      return `account locked${a.until ? ` until ${new Date(a.until).toISOString()}` : ""}; ${c.loop}`;
    case "credential":
      return `credential rejected; ${c.loop}`;
    case "remove_pairing":
      return `account/model pairing removed; ${c.loop}`;
  }
}

/**
 * Reads at most `limit` bytes (UTF-8 text, cut to `limit` characters) of an upstream error body and
 * cancels the rest; a body that breaks mid-read yields what arrived. Used for classification and by
 * the admin account test.
 */
export async function readBounded(body: ReadableStream<Uint8Array> | null, limit: number): Promise<string> {
  if (!body) return "";
  const reader = body.getReader();
  const parts: Uint8Array[] = [];
  let n = 0;
  try {
    while (n < limit) {
      const { done, value } = await reader.read();
      if (done) break;
      parts.push(value);
      n += value.byteLength;
    }
  } catch {
    // a broken error body is still an error: classify what arrived
  } finally {
    void reader.cancel().catch(() => {});
  }
  return new TextDecoder().decode(concatBytes(parts)).slice(0, limit);
}
