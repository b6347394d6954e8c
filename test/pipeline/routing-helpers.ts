/** Shared builders for the routing tests (resolve, order, predicates, dry run). */
import type { HubRequest } from "../../formats/hub.ts";
import type { ModelInfo, ProviderInfo } from "../../pipeline/ports.ts";
import type { ComboSpec, RoutingTable, Target, TargetSpec } from "../../pipeline/resolve.ts";
import type { ProviderKind } from "../../formats/codec.ts";

/** A provider of `kind` with the given models. */
export function provider(id: string, kind: ProviderKind = "openai-compatible", models: Record<string, ModelInfo> = {}): ProviderInfo {
  const format = kind.startsWith("anthropic") || kind === "claude-code" ? "anthropic-messages" : kind === "gemini" ? "gemini" : kind === "openai-responses" || kind === "codex" ? "openai-responses" : "openai-chat";
  return {
    id,
    kind,
    format,
    family: `provider:${id}`,
    baseUrl: "http://127.0.0.1:9",
    models,
    idleTimeoutMs: 60_000,
    headerTimeoutMs: 60_000,
    source: "config",
  };
}

/** A combo with defaults. */
export function combo(name: string, targets: (string | TargetSpec)[], extra: Partial<ComboSpec> = {}): ComboSpec {
  return {
    name,
    strategy: "fallback",
    portability: "strip_with_warning",
    cacheAffinity: true,
    targets: targets.map((t) => (typeof t === "string" ? { model: t } : t)),
    ...extra,
  };
}

/** A routing table from providers, aliases and combos. */
export function table(providers: ProviderInfo[], aliases: Record<string, string> = {}, combos: ComboSpec[] = []): RoutingTable {
  return {
    providers: new Map(providers.map((p) => [p.id, p])),
    aliases: new Map(Object.entries(aliases)),
    combos: new Map(combos.map((c) => [c.name, c])),
  };
}

/** A bare target of provider p. */
export function target(p: ProviderInfo, model: string, extra: Partial<Target> = {}): Target {
  return { provider: p, model, label: `${p.id}/${model}`, ...extra };
}

/** A hub request with defaults. */
export function hub(extra: Partial<HubRequest> = {}): HubRequest {
  return {
    model: "m",
    system: [],
    messages: [{ role: "user", content: [{ type: "text", text: "hello" }] }],
    tools: [],
    stream: false,
    source: { format: "openai-chat", extra: {} },
    ...extra,
  };
}
