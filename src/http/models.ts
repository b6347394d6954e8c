/**
 * GET /v1/models (SPEC 2.1): provider models, combos and aliases the caller may use, in OpenAI's list
 * shape, or Anthropic's when the client sent `anthropic-version`; and POST /v1/messages/count_tokens
 * (which runs through the gateway's guard, resolve and order stages first; see {@link countTokensUpstream}).
 */
import * as v from "valibot";
import { hubError } from "../../formats/hub.ts";
import { errorResponse, tryHubOf, type RequestContext } from "../../pipeline/context.ts";
import { executeCall, TransportError, type ExecutorFor } from "../../pipeline/execute.ts";
import { pickAccount, verdictDecision, type AccountPool } from "../../pipeline/pick.ts";
import type { AttemptTrace, Clock } from "../../pipeline/ports.ts";
import { estimateInputTokens } from "../../pipeline/predicates.ts";
import type { Target } from "../../pipeline/resolve.ts";
import type { RuntimeConfig } from "../config/types.ts";

interface Entry {
  id: string;
  owner: string;
}

/**
 * Models discovered per provider id (SPEC P-6: the union of what a subscription pool's accounts
 * advertised), listed under the provider prefix next to the configured ones.
 */
export type DiscoveredModels = Map<string, string[]>;

function entries(cfg: RuntimeConfig, discovered?: DiscoveredModels): Entry[] {
  const out: Entry[] = [];
  for (const p of cfg.providers.values()) {
    const names = new Set(Object.keys(p.models));
    for (const m of discovered?.get(p.id) ?? []) names.add(m);
    for (const m of names) out.push({ id: `${p.id}/${m}`, owner: p.id });
  }
  for (const name of cfg.combos.keys()) out.push({ id: name, owner: "switchyard-combo" });
  for (const name of cfg.aliases.keys()) out.push({ id: name, owner: "switchyard-alias" });
  return out;
}

const CREATED = 1_700_000_000;

function shape(e: Entry, anthropic: boolean): unknown {
  return anthropic
    ? { type: "model", id: e.id, display_name: e.id, created_at: new Date(CREATED * 1000).toISOString() }
    : { id: e.id, object: "model", created: CREATED, owned_by: e.owner };
}

/** The model list body. */
export function modelList(cfg: RuntimeConfig, anthropic: boolean, discovered?: DiscoveredModels): unknown {
  const list = entries(cfg, discovered).map((e) => shape(e, anthropic));
  if (anthropic) {
    return { data: list, has_more: false, first_id: (list[0] as { id?: string })?.id ?? null, last_id: (list.at(-1) as { id?: string })?.id ?? null };
  }
  return { object: "list", data: list };
}

/** One model entry, or undefined when the id is not listed. */
export function modelEntry(cfg: RuntimeConfig, id: string, anthropic: boolean, discovered?: DiscoveredModels): unknown | undefined {
  const e = entries(cfg, discovered).find((x) => x.id === id);
  return e ? shape(e, anthropic) : undefined;
}

/** Anthropic's count_tokens answer: `{"input_tokens": N}` (other fields ignored). */
const CountTokensReply = v.object({ input_tokens: v.pipe(v.number(), v.integer(), v.minValue(0)) });

/** What token counting needs from the application. */
export interface CountTokensDeps {
  /** The account pool, to pick the account whose credential the forwarded call uses. */
  pool: AccountPool;
  /** The provider executors (the attempt loop's): URL, auth, forwarded headers, fresh OAuth credentials, proxy. */
  executorFor: ExecutorFor;
  clock: Clock;
}

/**
 * POST /v1/messages/count_tokens after the gateway's guard, resolve and order stages (SPEC 2.1): when
 * the first target's provider speaks Anthropic Messages and has an eligible account, the client's body
 * (model replaced by the upstream id) goes through that provider's executor to
 * `{base_url}/v1/messages/count_tokens` (UpstreamCall `endpoint: "count_tokens"`: the account's auth,
 * the allow-listed client headers, a subscription's fresh token and headers, the account's proxy),
 * within the provider's header timeout; its `{input_tokens}` is returned. Otherwise, or when that call
 * fails in any way (status, transport, timeout, a body without `input_tokens`), the count is estimated
 * locally from the parsed request (pipeline/predicates.ts {@link estimateInputTokens}); upstream error
 * bodies never reach the client. A body that is no Messages request at all is a 400. The route trace
 * records the attempt and which way the answer was made.
 */
export function countTokensUpstream(deps: CountTokensDeps) {
  return async (ctx: RequestContext, targets: Target[]): Promise<Response> => {
    const answer = (n: number) => {
      const headers = new Headers(ctx.headers);
      headers.set("content-type", "application/json");
      return new Response(JSON.stringify({ input_tokens: n }), { status: 200, headers });
    };
    const local = (reason: string) => {
      let parseError: unknown;
      const hub = tryHubOf(ctx, (e) => (parseError = e));
      if (!hub) {
        const message = parseError instanceof Error ? parseError.message : "The request body is not a Messages request.";
        return errorResponse(ctx.clientFormat, hubError("invalid_request", message), ctx.headers);
      }
      ctx.trace.decisions.push({ subject: "count_tokens", verdict: "in", reason: `estimated locally: ${reason}` });
      return answer(Math.max(1, estimateInputTokens(hub)));
    };
    const target = targets[0];
    if (!target) return local("no target");
    if (target.provider.format !== "anthropic-messages") return local(`${target.provider.id} speaks ${target.provider.format}`);
    const picked = pickAccount(deps.pool, target, new Set(), {});
    for (const v of picked.verdicts) ctx.trace.decisions.push(verdictDecision(target, v));
    const account = picked.account;
    if (!account) return local(`no eligible account of ${target.provider.id}`);

    const started = deps.clock.now();
    const attempt: AttemptTrace = { target: target.label, providerId: target.provider.id, model: target.model, accountId: account.id, startMs: started - ctx.startedAt };
    ctx.trace.attempts.push(attempt);
    let controller: AbortController | undefined;
    let idle: ReturnType<typeof setTimeout> | undefined;
    try {
      const call = {
        provider: target.provider,
        account,
        model: target.model,
        body: JSON.stringify({ ...ctx.body, model: target.model }),
        stream: false,
        upstreamFormat: "anthropic-messages" as const,
        clientFormat: ctx.clientFormat,
        clientHeaders: ctx.request.headers,
        endpoint: "count_tokens" as const,
      };
      const sent = await executeCall(deps.executorFor(target.provider), call, ctx.signal, target.provider.headerTimeoutMs);
      controller = sent.controller;
      const reply = sent.reply;
      attempt.status = reply.status;
      // The reply is a few bytes: reading it may take no longer than the provider's idle timeout.
      idle = setTimeout(() => sent.controller.abort(), target.provider.idleTimeoutMs);
      const text = await new Response(reply.body).text();
      attempt.durationMs = deps.clock.now() - started;
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
      if (!v.is(CountTokensReply, parsed)) {
        attempt.error = "reply without input_tokens";
        return local(`${target.provider.id} sent no input_tokens`);
      }
      ctx.trace.decisions.push({ subject: "count_tokens", verdict: "in", reason: `counted by ${target.label}` });
      return answer(parsed.input_tokens);
    } catch (e) {
      attempt.durationMs = deps.clock.now() - started;
      const timedOut = (e instanceof TransportError && (e.reason === "header_timeout" || e.reason === "aborted")) || controller?.signal.aborted === true;
      attempt.error = timedOut ? "timeout or client gone" : "transport error";
      return local(`${target.provider.id} could not be reached`);
    } finally {
      clearTimeout(idle);
      controller?.abort();
    }
  };
}
