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

/** What a model name offers, as far as the config and discovery say (SPEC P-8, 2.2). */
export interface ModelMetadata {
  /** The name as listed (`provider/model`, a combo or an alias). */
  id: string;
  /** Context window in tokens, when known. */
  contextWindow?: number;
  /** Output-token limit in tokens, when known. */
  maxOutputTokens?: number;
  /** Reasoning effort levels, when known (empty: no reasoning). */
  reasoningEfforts?: string[];
  /** Whether it reads images, when known. */
  images?: boolean;
}

/**
 * The metadata of a listed model name: `provider/model` from that provider's configured models;
 * an alias through what it points at; a combo from its first target (what serves it when nothing
 * fails), following nested combos and aliases (at most 8 hops). Undefined when the name is not listed.
 */
export function modelMetadata(cfg: RuntimeConfig, id: string, discovered?: DiscoveredModels): ModelMetadata | undefined {
  if (!entries(cfg, discovered).some((e) => e.id === id)) return undefined;
  const out: ModelMetadata = { id };
  let name = id;
  for (let hop = 0; hop < 8; hop++) {
    const alias = cfg.aliases.get(name);
    if (alias !== undefined) {
      name = alias;
      continue;
    }
    const combo = cfg.combos.get(name);
    if (combo) {
      const first = combo.targets[0];
      if (!first) return out;
      name = first.model;
      continue;
    }
    const slash = name.indexOf("/");
    if (slash <= 0) return out;
    const info = cfg.providers.get(name.slice(0, slash))?.models[name.slice(slash + 1)];
    if (info) {
      if (info.contextWindow !== undefined) out.contextWindow = info.contextWindow;
      if (info.maxOutputTokens !== undefined) out.maxOutputTokens = info.maxOutputTokens;
      if (info.reasoningEfforts !== undefined) out.reasoningEfforts = info.reasoningEfforts;
      if (info.images !== undefined) out.images = info.images;
    }
    return out;
  }
  return out;
}

/**
 * One model in the Gemini API's `Model` shape (`GET /v1beta/models[/{model}]`, SPEC 2.1): `name`
 * `models/<id>`, limits from {@link modelMetadata} (absent when unknown), the methods this gateway
 * serves, and `thinking: true` when the model has reasoning levels.
 */
function geminiShape(cfg: RuntimeConfig, e: Entry, discovered?: DiscoveredModels): Record<string, unknown> {
  const meta = modelMetadata(cfg, e.id, discovered);
  const out: Record<string, unknown> = {
    name: `models/${e.id}`,
    version: "switchyard",
    displayName: e.id,
    description: e.owner === "switchyard-combo" ? "switchyard combo" : e.owner === "switchyard-alias" ? "switchyard alias" : `${e.owner} model via switchyard`,
  };
  if (meta?.contextWindow !== undefined) out.inputTokenLimit = meta.contextWindow;
  if (meta?.maxOutputTokens !== undefined) out.outputTokenLimit = meta.maxOutputTokens;
  out.supportedGenerationMethods = ["generateContent", "streamGenerateContent", "countTokens"];
  if (meta?.reasoningEfforts && meta.reasoningEfforts.length > 0) out.thinking = true;
  return out;
}

/** `GET /v1beta/models`: every listed model in the Gemini API's list shape `{models: [...]}`. */
export function geminiModelList(cfg: RuntimeConfig, discovered?: DiscoveredModels): { models: Record<string, unknown>[] } {
  return { models: entries(cfg, discovered).map((e) => geminiShape(cfg, e, discovered)) };
}

/** `GET /v1beta/models/{model}` (a leading `models/` accepted); undefined when not listed. */
export function geminiModelEntry(cfg: RuntimeConfig, id: string, discovered?: DiscoveredModels): Record<string, unknown> | undefined {
  const name = id.startsWith("models/") ? id.slice(7) : id;
  const e = entries(cfg, discovered).find((x) => x.id === name);
  return e ? geminiShape(cfg, e, discovered) : undefined;
}

/** Anthropic's count_tokens answer: `{"input_tokens": N}` (other fields ignored). */
const CountTokensReply = v.object({ input_tokens: v.pipe(v.number(), v.integer(), v.minValue(0)) });
/** Gemini's countTokens answer: `{"totalTokens": N}` (other fields ignored). */
const GeminiCountTokensReply = v.object({ totalTokens: v.pipe(v.number(), v.integer(), v.minValue(0)) });

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

/** What token counting needs from the application. */
export interface CountTokensDeps {
  /** The account pool, to pick the account whose credential the forwarded call uses. */
  pool: AccountPool;
  /** The provider executors (the attempt loop's): URL, auth, forwarded headers, fresh OAuth credentials, proxy. */
  executorFor: ExecutorFor;
  clock: Clock;
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
 * locally from the parsed request (pipeline/predicates.ts {@link estimateInputTokens}); upstream error
 * bodies never reach the client. A body that is no Messages request at all is a 400. The route trace
 * records the attempt and which way the answer was made.
 */
export function countTokensUpstream(deps: CountTokensDeps) {
  return async (ctx: RequestContext, targets: Target[]): Promise<Response> => {
    const gemini = ctx.clientFormat === "gemini";
    const answer = (n: number) => {
      const headers = new Headers(ctx.headers);
      headers.set("content-type", "application/json");
      return new Response(JSON.stringify(gemini ? { totalTokens: n } : { input_tokens: n }), { status: 200, headers });
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
    if (target.provider.format !== ctx.clientFormat) return local(`${target.provider.id} speaks ${target.provider.format}`);
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
        body: countTokensBody(ctx, target.model),
        stream: false,
        upstreamFormat: ctx.clientFormat,
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
      const count = gemini ? (v.is(GeminiCountTokensReply, parsed) ? parsed.totalTokens : undefined) : v.is(CountTokensReply, parsed) ? parsed.input_tokens : undefined;
      if (count === undefined) {
        attempt.error = gemini ? "reply without totalTokens" : "reply without input_tokens";
        return local(`${target.provider.id} sent no token count`);
      }
      ctx.trace.decisions.push({ subject: "count_tokens", verdict: "in", reason: `counted by ${target.label}` });
      return answer(count);
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
