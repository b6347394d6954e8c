/**
 * `POST /admin/api/accounts/{id}/test` (SPEC 9.3): one minimal upstream call with an account's
 * credential — a one-word prompt asking for the fewest output tokens the format allows, not streamed
 * (Codex's executor streams anyway) — through the provider's own executor (URL, auth, provider fixes,
 * proxy, a fresh OAuth token). The answer is `{ok, status, latency_ms, model, error?}`.
 *
 * Without a model in the request, {@link chooseTestModel} picks one (the provider's configured models,
 * the account's discovered ones, the provider's discovered ones, then a combo target or alias that
 * routes to the provider), else {@link lastServedModel} the model the account last served (the usage
 * store knows it), and the answer names where it came from (`model_from`).
 *
 * The test never changes routing state: no cooldown, lock, quota window, circuit count or health
 * statistic is written, whatever the upstream answers (the registry is not told about the call).
 */
import { codecFor } from "../../formats/index.ts";
import type { WireFormat } from "../../formats/hub.ts";
import { executeCall, readBounded, scrubText, TransportError, type ExecutorFor } from "../../pipeline/index.ts";
import type { Account, Clock, ProviderInfo } from "../../pipeline/ports.ts";
import type { UsageStore } from "../store/usage.ts";

/** The answer of an account test. `status` is 0 when no HTTP status came back. */
export interface AccountTestResult {
  ok: boolean;
  status: number;
  /** ms from sending to the reply's headers (to the failure when none came). */
  latency_ms: number;
  /** The upstream model the call asked for. */
  model: string;
  /**
   * Where `model` came from: "the request", "the provider's models", "the account's discovered
   * models", "the provider's discovered models", "combo NAME", "alias NAME" or "its last served
   * request".
   */
  model_from: string;
  /** Why it failed, without secrets; absent when ok. */
  error?: string;
}

/** The smallest request body of each upstream format that asks a model for (almost) nothing. */
export function minimalBody(format: WireFormat, provider: ProviderInfo, model: string): Record<string, unknown> {
  switch (format) {
    case "anthropic-messages":
      return { model, max_tokens: 1, messages: [{ role: "user", content: "ping" }] };
    case "openai-responses":
      // 16 is the smallest max_output_tokens the Responses API accepts.
      return { model, input: "ping", max_output_tokens: 16, store: false };
    case "gemini":
      return { contents: [{ role: "user", parts: [{ text: "ping" }] }], generationConfig: { maxOutputTokens: 1 } };
    case "openai-chat":
      // OpenAI's own API wants max_completion_tokens (reasoning models reject max_tokens); compatible
      // servers (Ollama, LM Studio, OpenRouter, …) know max_tokens.
      return provider.kind === "openai"
        ? { model, messages: [{ role: "user", content: "ping" }], max_completion_tokens: 16 }
        : { model, messages: [{ role: "user", content: "ping" }], max_tokens: 1 };
  }
}

/** A model to test an account with, and where it came from (AccountTestResult.model_from). */
export interface TestModelChoice {
  model: string;
  from: string;
}

/** What {@link chooseTestModel} reads besides the provider and account: the routing in force. */
export interface TestModelSources {
  /** Models discovered for the provider (SPEC P-6). */
  discovered: readonly string[];
  /** Combos in force, in order; a target's `ref` is what its `model` names. */
  combos: Iterable<{ name: string; targets: ReadonlyArray<{ ref: { type: string; providerId?: string; model?: string }; account?: string }> }>;
  /** Alias name → `provider/model`, combo or alias name, as written. */
  aliases: ReadonlyMap<string, string>;
}

/**
 * The model an account test asks for when the request names none: the provider's first configured
 * model, else the account's first discovered one, else the provider's, else the first combo target
 * that routes to this provider (not pinned to another account), else the first alias that names a
 * `provider/model` of it. A provider configured without models (a `*-compatible` one, served through its
 * implicit keyless account) is usually reached through a combo or alias, so that model is one its
 * upstream knows. Undefined when none of them names a model.
 */
export function chooseTestModel(provider: ProviderInfo, account: Account, sources: TestModelSources): TestModelChoice | undefined {
  const configured = Object.keys(provider.models)[0];
  if (configured) return { model: configured, from: "the provider's models" };
  if (account.models?.[0]) return { model: account.models[0], from: "the account's discovered models" };
  if (sources.discovered[0]) return { model: sources.discovered[0], from: "the provider's discovered models" };
  for (const combo of sources.combos) {
    for (const t of combo.targets) {
      if (t.ref.type === "model" && t.ref.providerId === provider.id && t.ref.model && (t.account === undefined || t.account === account.id)) return { model: t.ref.model, from: `combo ${combo.name}` };
    }
  }
  const prefix = `${provider.id}/`;
  for (const [name, target] of sources.aliases) {
    if (target.startsWith(prefix) && target.length > prefix.length) return { model: target.slice(prefix.length), from: `alias ${name}` };
  }
  return undefined;
}

/** How far back {@link lastServedModel} looks: 30 days. */
export const LAST_SERVED_WINDOW_MS = 30 * 86_400_000;

/**
 * The model `account` last served for `provider` (a request answered ok within
 * {@link LAST_SERVED_WINDOW_MS}), from the usage store: the test's default when nothing in the
 * configuration names a model (a `*-compatible` provider that lists none, reached by `provider/model`
 * names). Undefined when it served none. One indexed query of one row.
 */
export async function lastServedModel(
  store: Pick<UsageStore, "recentCalls">,
  account: Account,
  provider: ProviderInfo,
  now: number,
): Promise<TestModelChoice | undefined> {
  const [last] = await store.recentCalls(1, { sinceMs: now - LAST_SERVED_WINDOW_MS, filter: { account: account.id, provider: provider.id, outcome: "ok" } });
  return last?.model ? { model: last.model, from: "its last served request" } : undefined;
}

/** What {@link testAccount} needs. */
export interface AccountTestDeps {
  executorFor: ExecutorFor;
  clock: Clock;
  /** Every secret the instance holds, scrubbed from the error text. */
  secrets: () => Iterable<string>;
}

/**
 * Makes the one test call for `account` on `provider` with `model`. Never throws: a transport failure
 * is `{ok: false, status: 0}`.
 */
export async function testAccount(deps: AccountTestDeps, provider: ProviderInfo, account: Account, choice: TestModelChoice): Promise<AccountTestResult> {
  const format = provider.format;
  const { model, from: model_from } = choice;
  const started = deps.clock.now();
  const parent = new AbortController();
  let controller: AbortController | undefined;
  try {
    const sent = await executeCall(
      deps.executorFor(provider),
      {
        provider,
        account,
        model,
        body: JSON.stringify(minimalBody(format, provider, model)),
        stream: false,
        upstreamFormat: format,
        clientFormat: format,
        clientHeaders: new Headers(),
      },
      parent.signal,
      provider.headerTimeoutMs,
    );
    controller = sent.controller;
    const latency = deps.clock.now() - started;
    const { status, headers } = sent.reply;
    if (status >= 200 && status < 300) return { ok: true, status, latency_ms: latency, model, model_from };
    const text = await readBounded(sent.reply.body, 16 * 1024);
    const error = codecFor(format).parseError(status, text, headers, deps.clock.now());
    return { ok: false, status, latency_ms: latency, model, model_from, error: scrubText(error.message, deps.secrets()).slice(0, 500) };
  } catch (e) {
    const reason = e instanceof TransportError ? e.reason : "other";
    const message = e instanceof Error ? e.message : String(e);
    return { ok: false, status: 0, latency_ms: deps.clock.now() - started, model, model_from, error: scrubText(`${provider.id} could not be reached (${reason}): ${message}`, deps.secrets()).slice(0, 500) };
  } finally {
    controller?.abort();
  }
}
