/** Shared builders for the account tests: accounts, providers, a settable clock, a recording store. */
import type { ProviderKind } from "../../formats/codec.ts";
import type { Account, Clock, ProviderInfo } from "../../pipeline/ports.ts";
import type { Store } from "../../src/store/types.ts";

/** An API-key account. */
export function account(id: string, providerId = "p", extra: Partial<Account> = {}): Account {
  return { id, providerId, priority: 0, credential: { type: "api_key", apiKey: `sk-${id}-secret` }, disabled: false, source: "config", ...extra };
}

/** A provider with its kind's defaults (slots: claude-code 5, codex 3). */
export function providerOf(id: string, kind: ProviderKind = "anthropic", models: ProviderInfo["models"] = {}): ProviderInfo {
  const p: ProviderInfo = {
    id,
    kind,
    format: kind === "codex" || kind === "openai-responses" ? "openai-responses" : kind.startsWith("openai") ? "openai-chat" : kind === "gemini" ? "gemini" : "anthropic-messages",
    family: "anthropic",
    baseUrl: "http://127.0.0.1:9",
    models,
    idleTimeoutMs: 60_000,
    headerTimeoutMs: 60_000,
    source: "config",
  };
  if (kind === "claude-code") p.defaultMaxConcurrency = 5;
  if (kind === "codex") p.defaultMaxConcurrency = 3;
  return p;
}

/** A clock whose `now` is set by the test; `sleep` really waits (short waits in tests). */
export function settableClock(start = 1_700_000_000_000): Clock & { t: number; advance(ms: number): void } {
  const c = {
    t: start,
    now: () => c.t,
    advance(ms: number) {
      c.t += ms;
    },
    sleep: (ms: number, signal?: AbortSignal) =>
      new Promise<void>((resolve, reject) => {
        if (signal?.aborted) return reject(signal.reason);
        const timer = setTimeout(() => {
          signal?.removeEventListener("abort", onAbort);
          resolve();
        }, ms);
        const onAbort = () => {
          clearTimeout(timer);
          reject(signal!.reason);
        };
        signal?.addEventListener("abort", onAbort, { once: true });
      }),
  };
  return c;
}

/** A Store stand-in that records every call (method name and arguments) and returns undefined. */
export function recordingStore(): { store: Store; calls: Array<{ method: string; args: unknown[] }> } {
  const calls: Array<{ method: string; args: unknown[] }> = [];
  const store = new Proxy({}, { get: (_t, method) => (...args: unknown[]) => void calls.push({ method: String(method), args }) }) as Store;
  return { store, calls };
}
