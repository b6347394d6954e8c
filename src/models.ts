/**
 * GET /v1/models (SPEC 2.1): provider models, combos and aliases the caller may use, in OpenAI's list
 * shape, or Anthropic's when the client sent `anthropic-version`; and POST /v1/messages/count_tokens
 * (which runs through the gateway's guard, resolve and order stages first; see {@link countTokensUpstream}).
 */
import * as v from "valibot";
import type { RequestContext } from "../pipeline/context.ts";
import type { UpstreamCall } from "../pipeline/execute.ts";
import { pickAccount, verdictDecision, type AccountPool } from "../pipeline/pick.ts";
import type { AttemptTrace, Clock } from "../pipeline/ports.ts";
import type { Target } from "../pipeline/resolve.ts";
import type { RuntimeConfig } from "./config/types.ts";
import { headersFor, joinUrl, type CredentialSource } from "./providers/index.ts";
import { claudeCodeHeaders, claudeCodeUrl } from "./providers/claude-code.ts";

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
  /** fetch used for the upstream call (tests). */
  fetchImpl?: typeof fetch;
  clock: Clock;
  /** Fresh OAuth credentials for subscription accounts (SPEC A-5); the stored credential when absent. */
  credentials?: CredentialSource;
}

/**
 * A rough local estimate of the prompt's input tokens: about 4 characters of the JSON of system,
 * messages and tools per token, at least 1.
 */
export function estimateInputTokens(body: Record<string, unknown>): number {
  const text = JSON.stringify([body.system ?? "", body.messages ?? [], body.tools ?? []]);
  return Math.max(1, Math.ceil(text.length / 4));
}

/**
 * POST /v1/messages/count_tokens after the gateway's guard, resolve and order stages (SPEC 2.1): when
 * the first target's provider speaks Anthropic Messages and has an eligible account, the client's body
 * (model replaced by the upstream id) goes to `{base_url}/v1/messages/count_tokens` with that
 * account's auth and the allow-listed client headers; its `{input_tokens}` is returned. Otherwise, or
 * when that call fails in any way (status, transport, timeout, a body without `input_tokens`), the
 * count is estimated locally ({@link estimateInputTokens}); upstream error bodies never reach the
 * client. The route trace records the attempt and which way the answer was made.
 */
export function countTokensUpstream(deps: CountTokensDeps) {
  const fetchImpl = deps.fetchImpl ?? fetch;
  return async (ctx: RequestContext, targets: Target[]): Promise<Response> => {
    const answer = (n: number) => {
      const headers = new Headers(ctx.headers);
      headers.set("content-type", "application/json");
      return new Response(JSON.stringify({ input_tokens: n }), { status: 200, headers });
    };
    const local = (reason: string) => {
      ctx.trace.decisions.push({ subject: "count_tokens", verdict: "in", reason: `estimated locally: ${reason}` });
      return answer(estimateInputTokens(ctx.body));
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
    const controller = new AbortController();
    const onAbort = () => controller.abort();
    ctx.signal.addEventListener("abort", onAbort, { once: true });
    const timer = setTimeout(() => controller.abort(), target.provider.headerTimeoutMs);
    try {
      // A subscription account's token is refreshed first when close to expiry (SPEC A-5).
      const credential = account.credential.type === "oauth" && deps.credentials ? await deps.credentials.ensureFresh(account, controller.signal) : account.credential;
      const call: UpstreamCall = {
        provider: target.provider,
        account: credential === account.credential ? account : { ...account, credential },
        model: target.model,
        body: JSON.stringify({ ...ctx.body, model: target.model }),
        stream: false,
        upstreamFormat: "anthropic-messages",
        clientFormat: ctx.clientFormat,
        clientHeaders: ctx.request.headers,
        signal: controller.signal,
      };
      const headers = headersFor(call, ctx.clientFormat);
      let url = joinUrl(target.provider.baseUrl, "/v1/messages/count_tokens");
      if (target.provider.kind === "claude-code") {
        // What a subscription call needs (src/providers/claude-code.ts).
        claudeCodeHeaders(headers);
        url = claudeCodeUrl(url);
      }
      const init: RequestInit & { proxy?: string } = { method: "POST", headers, body: call.body, signal: controller.signal, redirect: "manual" };
      if (account.proxy) init.proxy = account.proxy;
      const res = await fetchImpl(url, init);
      attempt.status = res.status;
      const text = await res.text();
      attempt.durationMs = deps.clock.now() - started;
      if (!res.ok) {
        attempt.error = `upstream answered ${res.status}`;
        return local(`${target.provider.id} answered ${res.status}`);
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
      attempt.error = controller.signal.aborted ? "timeout or client gone" : "transport error";
      return local(`${target.provider.id} could not be reached`);
    } finally {
      clearTimeout(timer);
      ctx.signal.removeEventListener("abort", onAbort);
    }
  };
}
