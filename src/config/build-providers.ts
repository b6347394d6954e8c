/**
 * The `providers` section of a configuration file (SPEC 2.3, 7): the built-in providers, each entry
 * merged over its built-in (whose `kind` cannot change) or made from its `kind`, its `base_url` checked
 * against the vendor SDK's convention (an Anthropic-format URL must not end in `/v1/messages`, an
 * OpenAI-format one not in `/chat/completions` or `/responses`, a Gemini one must not contain `/v1beta`;
 * a warning only for an Anthropic-format URL ending in `/v1`), its models, timeouts, concurrency and
 * OAuth endpoints. Split from load.ts (2026-12-05).
 */
import {
  BUILTIN_KINDS,
  DEFAULT_IDLE_TIMEOUT_MS,
  KIND_DEFAULTS,
  providerFromKind,
  SLOW_IDLE_TIMEOUT_MS,
  builtinProviders,
} from "./builtins.ts";
import type { PathSegment } from "./errors.ts";
import type { ConfigFile, ModelEntry } from "./schema.ts";
import type { ConfiguredProvider } from "./types.ts";
import type { ModelInfo } from "../../pipeline/ports.ts";

/**
 * The providers by id: the built-ins with `entries` (the file's `providers`, valibot output) applied.
 * Problems go to `add` (errors) and `warn` (warnings) at their path (`providers[1].base_url`); an entry
 * with an error is left out (the built-in stays as it was).
 */
export function buildProviders(
  entries: ConfigFile["providers"],
  add: (at: PathSegment[], message: string) => void,
  warn: (at: PathSegment[], message: string) => void,
): Map<string, ConfiguredProvider> {
  const providers = builtinProviders();
  const providerAt = new Map<string, number>();
  entries.forEach((p, i) => {
    const at: PathSegment[] = ["providers", i];
    const prev = providerAt.get(p.id);
    if (prev !== undefined) return add([...at, "id"], `duplicate provider id "${p.id}" (first at providers[${prev}])`);
    providerAt.set(p.id, i);
    const builtinKind = Object.hasOwn(BUILTIN_KINDS, p.id) ? BUILTIN_KINDS[p.id] : undefined;
    let prov: ConfiguredProvider;
    if (builtinKind) {
      if (p.kind && p.kind !== builtinKind) {
        return add(
          [...at, "kind"],
          `built-in provider "${p.id}" is kind ${builtinKind} and cannot change kind; give this ${p.kind} provider another id`,
        );
      }
      prov = providers.get(p.id)!;
      prov.source = "config";
    } else {
      if (!p.kind) {
        return add([...at, "kind"], `required: "${p.id}" is not a built-in provider (built-ins: ${Object.keys(BUILTIN_KINDS).join(", ")})`);
      }
      if (!p.base_url && !KIND_DEFAULTS[p.kind].baseUrl) return add([...at, "base_url"], `required for kind ${p.kind}`);
      prov = providerFromKind(p.id, p.kind, "config");
    }
    if (p.base_url) {
      const bad = baseUrlProblem(prov.format, p.base_url);
      if (bad?.error) add([...at, "base_url"], bad.error);
      else if (bad?.warning) warn([...at, "base_url"], bad.warning);
      prov.baseUrl = p.base_url;
    }
    for (const [name, m] of Object.entries(p.models ?? {})) prov.models[name] = modelInfo(m);
    const slow = p.slow ?? KIND_DEFAULTS[prov.kind].slow;
    if (p.idle_timeout_ms !== undefined) prov.idleTimeoutMs = p.idle_timeout_ms;
    else if (p.slow !== undefined) prov.idleTimeoutMs = slow ? SLOW_IDLE_TIMEOUT_MS : DEFAULT_IDLE_TIMEOUT_MS;
    if (p.header_timeout_ms !== undefined) prov.headerTimeoutMs = p.header_timeout_ms;
    if (p.first_content_timeout_ms !== undefined) prov.firstContentTimeoutMs = p.first_content_timeout_ms;
    if (p.reply_timeout_ms !== undefined) prov.wholeReplyTimeoutMs = p.reply_timeout_ms;
    if (p.max_concurrency !== undefined) prov.defaultMaxConcurrency = p.max_concurrency;
    if (p.oauth) {
      if (!prov.oauth) {
        add([...at, "oauth"], `only subscription providers (kind claude-code or codex) take oauth; "${p.id}" is ${prov.kind}`);
      } else {
        const o = p.oauth;
        prov.oauth = {
          authorizeUrl: o.authorize_url ?? prov.oauth.authorizeUrl,
          tokenUrl: o.token_url ?? prov.oauth.tokenUrl,
          clientId: o.client_id ?? prov.oauth.clientId,
          scopes: o.scopes ?? prov.oauth.scopes,
          redirectUri: o.redirect_uri ?? prov.oauth.redirectUri,
        };
      }
    }
    providers.set(p.id, prov);
  });
  return providers;
}

function modelInfo(m: ModelEntry): ModelInfo {
  const out: ModelInfo = {};
  if (m.context_window !== undefined) out.contextWindow = m.context_window;
  if (m.max_output_tokens !== undefined) out.maxOutputTokens = m.max_output_tokens;
  if (m.images !== undefined) out.images = m.images;
  if (m.pdf !== undefined) out.pdf = m.pdf;
  if (m.audio !== undefined) out.audio = m.audio;
  if (m.video !== undefined) out.video = m.video;
  if (m.reasoning_efforts !== undefined) out.reasoningEfforts = m.reasoning_efforts;
  if (m.siblings !== undefined) out.siblings = m.siblings;
  return out;
}

/** Checks a base URL against its format's vendor-SDK convention (SPEC 2.3). */
function baseUrlProblem(format: ConfiguredProvider["format"], url: string): { error?: string; warning?: string } | undefined {
  const path = new URL(url).pathname.replace(/\/+$/, "");
  if (format === "anthropic-messages") {
    if (/\/v1\/messages$/.test(path)) return { error: "base_url is the host root: the gateway appends /v1/messages" };
    if (/\/v1$/.test(path)) return { warning: "an Anthropic-format base_url is usually the host root: the gateway appends /v1/messages, so this calls …/v1/v1/messages" };
  } else if (format === "openai-chat" || format === "openai-responses") {
    if (/\/(chat\/completions|responses)$/.test(path)) {
      return { error: "base_url ends before the endpoint (usually in /v1): the gateway appends /chat/completions or /responses" };
    }
  } else if (format === "gemini") {
    if (/\/v1beta(\/|$)/.test(path)) return { error: "base_url is the host root: the gateway appends /v1beta/models/{model}:generateContent" };
  }
  return undefined;
}
