/**
 * Token counts (SPEC 2.1): POST /v1/messages/count_tokens and Gemini's `:countTokens`, run by the
 * gateway after guard, resolve and order. The count comes from the first target's provider when it
 * speaks the client's format, else it is estimated locally.
 */
import type { GraceEnd } from "./grace-end.ts";
import * as v from "valibot";
import { hubError } from "../formats/hub.ts";
import { clientHeadersOf, errorAnswer, responseHeaders, tryHubOf, type RequestContext } from "./context.ts";
import { executeCall, TransportError, type ExecutorFor } from "./execute.ts";
import { CallbackDeadline } from "./deadline-sweep.ts";
import { pickAccount, verdictDecision, type AccountPool } from "./pick.ts";
import type { Account, AttemptTrace, Clock } from "./ports.ts";
import { estimateInputTokens } from "./predicates.ts";
import type { Target } from "./resolve.ts";
import { upstreamTraceparent } from "./trace-context.ts";

/** Anthropic's count_tokens answer: `{"input_tokens": N}` (other fields ignored). */
const CountTokensReply = v.object({ input_tokens: v.pipe(v.number(), v.integer(), v.minValue(0)) });
/** Gemini's countTokens answer: `{"totalTokens": N}` (other fields ignored). */
const GeminiCountTokensReply = v.object({ totalTokens: v.pipe(v.number(), v.integer(), v.minValue(0)) });

/**
 * The most of a token count's reply read, bytes: `{"input_tokens": N}` is a few bytes, an error body a
 * few hundred; a reply past this is no count (an endless body is not read on until the idle timeout).
 */
export const MAX_COUNT_REPLY_BYTES = 64 * 1024;

/** A token count's reply as text, or undefined when it grew past {@link MAX_COUNT_REPLY_BYTES} (the rest is cancelled). */
async function readCount(body: ReadableStream<Uint8Array> | null): Promise<string | undefined> {
  if (!body) return "";
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let text = "";
  let n = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return text + decoder.decode();
      if ((n += value.byteLength) > MAX_COUNT_REPLY_BYTES) return undefined;
      text += decoder.decode(value, { stream: true });
    }
  } finally {
    void reader.cancel().catch(() => {});
  }
}

/**
 * The body forwarded to a provider's token count: Anthropic gets the client's body with the upstream
 * model id; Gemini gets `contents` (or a `generateContentRequest` whose `model` names the upstream id),
 * the model itself being in the URL.
 */
function countTokensBody(ctx: RequestContext, model: string): string {
  if (ctx.clientFormat !== "gemini") return JSON.stringify({ ...ctx.body, model });
  const inner = ctx.body.generateContentRequest;
  if (ctx.body.contents === undefined && typeof inner === "object" && inner !== null) {
    return JSON.stringify({ ...ctx.body, generateContentRequest: { ...(inner as Record<string, unknown>), model: `models/${model}` } });
  }
  return JSON.stringify(ctx.body);
}

/** What token counting needs (the attempt loop's pool, executors and clock). */
export interface CountTokensDeps {
  /** The account pool, to pick the account whose credential the forwarded call uses. */
  pool: AccountPool;
  /** The provider executors (the attempt loop's): URL, auth, forwarded headers, fresh OAuth credentials, proxy. */
  executorFor: ExecutorFor;
  clock: Clock;
  /** Ended when a shutdown's grace period is over (the attempt loop's {@link AttemptDeps.graceOver}): the call is aborted, the count estimated. */
  graceOver?: GraceEnd;
  /** Spans are exported: the call sends a `traceparent` naming the attempt's span (the attempt loop's {@link AttemptDeps.traceUpstream}). */
  traceUpstream?: boolean;
}

/**
 * Filled by {@link countTokens} when the first target's provider gave the count (not estimated
 * locally): that target and the account it was asked with, for the request's metrics, span and log
 * line (its serving provider, as a generation's).
 */
export interface CountedBy {
  target?: Target;
  account?: Account;
}

/**
 * POST /v1/messages/count_tokens and Gemini's `:countTokens` after the gateway's guard, resolve and
 * order stages (SPEC 2.1): when the first target's provider speaks the client's format (Anthropic
 * Messages, or Gemini) and has an eligible account, the client's body (model replaced by the upstream
 * id) goes through that provider's executor to `{base_url}/v1/messages/count_tokens` or
 * `{base_url}/v1beta/models/{model}:countTokens` (UpstreamCall `endpoint: "count_tokens"`: the account's auth,
 * the allow-listed client headers, a subscription's fresh token and headers, the account's proxy),
 * within the provider's header timeout; its `{input_tokens}` (Gemini: `{totalTokens}`) is returned. Otherwise, or when that call
 * fails in any way (status, transport, timeout, a body without `input_tokens`), the count is estimated
 * locally from the parsed request (predicates.ts {@link estimateInputTokens}); upstream error
 * bodies never reach the client. A body that is no Messages request at all is a 400. The route trace
 * records the attempt and which way the answer was made.
 */
export async function countTokens(ctx: RequestContext, targets: Target[], deps: CountTokensDeps, served?: CountedBy): Promise<Response> {
  const gemini = ctx.clientFormat === "gemini";
  const answer = (n: number) => {
    const headers = responseHeaders(ctx);
    headers.set("content-type", "application/json");
    return new Response(JSON.stringify(gemini ? { totalTokens: n } : { input_tokens: n }), { status: 200, headers });
  };
  const local = (reason: string) => {
    let parseError: unknown;
    const hub = tryHubOf(ctx, (e) => (parseError = e));
    if (!hub) {
      const message = parseError instanceof Error ? parseError.message : "The request body is not a Messages request.";
      return errorAnswer(ctx, hubError("invalid_request", message));
    }
    ctx.trace.decisions.push({ subject: "count_tokens", verdict: "in", reason: `estimated locally: ${reason}` });
    return answer(Math.max(1, estimateInputTokens(hub)));
  };
  const target = targets[0];
  if (!target) return local("no target");
  if (target.provider.format !== ctx.clientFormat) return local(`${target.provider.id} speaks ${target.provider.format}`);
  const picked = pickAccount(deps.pool, target, new Set(), {});
  for (const v of picked.verdicts) ctx.trace.decisions.push(verdictDecision(target, v));
  const account = picked.account;
  if (!account) return local(`no eligible account of ${target.provider.id}`);

  const started = deps.clock.now();
  const attempt: AttemptTrace = { target: target.label, providerId: target.provider.id, model: target.model, accountId: account.id, startMs: started - ctx.startedAt };
  ctx.trace.attempts.push(attempt);
  let controller: AbortController | undefined;
  let idle: CallbackDeadline | undefined;
  let unstop: { unstop(): void } | undefined;
  try {
    const call = {
      provider: target.provider,
      account,
      model: target.model,
      body: countTokensBody(ctx, target.model),
      stream: false,
      upstreamFormat: ctx.clientFormat,
      clientFormat: ctx.clientFormat,
      clientHeaders: clientHeadersOf(ctx),
      endpoint: "count_tokens" as const,
      traceparent: deps.traceUpstream ? upstreamTraceparent(ctx, attempt) : undefined,
    };
    // The end of a shutdown's grace period aborts the call too (SPEC D-3): the count is then estimated here.
    const sent = await executeCall(deps.executorFor(target.provider), call, ctx.signal, target.provider.headerTimeoutMs, deps.graceOver);
    controller = sent.controller;
    unstop = sent.clientAbort;
    const reply = sent.reply;
    attempt.status = reply.status;
    // The reply is a few bytes: reading it may take no longer than the provider's idle timeout (a
    // deadline on the shared sweep, as a generation's: pipeline/deadline-sweep.ts).
    idle = new CallbackDeadline(() => sent.controller.abort());
    idle.arm(target.provider.idleTimeoutMs);
    const text = await readCount(reply.body);
    attempt.durationMs = deps.clock.now() - started;
    if (text === undefined) {
      attempt.error = `reply larger than ${MAX_COUNT_REPLY_BYTES} bytes`;
      return local(`${target.provider.id} sent no token count`);
    }
    if (reply.status < 200 || reply.status >= 300) {
      attempt.error = `upstream answered ${reply.status}`;
      return local(`${target.provider.id} answered ${reply.status}`);
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    const count = gemini ? (v.is(GeminiCountTokensReply, parsed) ? parsed.totalTokens : undefined) : v.is(CountTokensReply, parsed) ? parsed.input_tokens : undefined;
    if (count === undefined) {
      attempt.error = gemini ? "reply without totalTokens" : "reply without input_tokens";
      return local(`${target.provider.id} sent no token count`);
    }
    ctx.trace.decisions.push({ subject: "count_tokens", verdict: "in", reason: `counted by ${target.label}` });
    if (served) {
      served.target = target;
      served.account = account;
    }
    return answer(count);
  } catch (e) {
    attempt.durationMs = deps.clock.now() - started;
    const timedOut = (e instanceof TransportError && (e.reason === "header_timeout" || e.reason === "aborted")) || controller?.signal.aborted === true;
    attempt.error = timedOut ? "timeout or client gone" : "transport error";
    return local(`${target.provider.id} could not be reached`);
  } finally {
    idle?.disarm();
    unstop?.unstop();
    controller?.abort();
  }
}
