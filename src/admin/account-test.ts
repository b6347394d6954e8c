/**
 * `POST /admin/api/accounts/{id}/test` (SPEC 9.3): one minimal upstream call with an account's
 * credential — a one-word prompt asking for the fewest output tokens the format allows, not streamed
 * (Codex's executor streams anyway) — through the provider's own executor (URL, auth, provider fixes,
 * proxy, a fresh OAuth token). The answer is `{ok, status, latency_ms, model, error?}`.
 *
 * The test never changes routing state: no cooldown, lock, quota window, circuit count or health
 * statistic is written, whatever the upstream answers (the registry is not told about the call).
 */
import { codecFor } from "../../formats/index.ts";
import type { WireFormat } from "../../formats/hub.ts";
import { executeCall, readBounded, scrubText, TransportError, type ExecutorFor } from "../../pipeline/index.ts";
import type { Account, Clock, ProviderInfo } from "../../pipeline/ports.ts";

/** The answer of an account test. `status` is 0 when no HTTP status came back. */
export interface AccountTestResult {
  ok: boolean;
  status: number;
  /** ms from sending to the reply's headers (to the failure when none came). */
  latency_ms: number;
  /** The upstream model the call asked for. */
  model: string;
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
export async function testAccount(deps: AccountTestDeps, provider: ProviderInfo, account: Account, model: string): Promise<AccountTestResult> {
  const format = provider.format;
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
    if (status >= 200 && status < 300) return { ok: true, status, latency_ms: latency, model };
    const text = await readBounded(sent.reply.body, 16 * 1024);
    const error = codecFor(format).parseError(status, text, headers, deps.clock.now());
    return { ok: false, status, latency_ms: latency, model, error: scrubText(error.message, deps.secrets()).slice(0, 500) };
  } catch (e) {
    const reason = e instanceof TransportError ? e.reason : "other";
    const message = e instanceof Error ? e.message : String(e);
    return { ok: false, status: 0, latency_ms: deps.clock.now() - started, model, error: scrubText(`${provider.id} could not be reached (${reason}): ${message}`, deps.secrets()).slice(0, 500) };
  } finally {
    controller?.abort();
  }
}
