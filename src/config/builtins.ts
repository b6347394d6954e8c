/**
 * Built-in providers and per-kind defaults (SPEC 2.3, P-1, A-4, 6.4, P-9).
 *
 * Five providers exist without any config entry: `anthropic`, `openai`, `gemini`, `cc` (claude-code)
 * and `cx` (codex). A `providers:` entry with one of these ids overrides the fields it sets.
 *
 * With no config file at all, the configuration is the built-ins plus one account per API key found
 * in the environment: ANTHROPIC_API_KEY → account `anthropic-env` (provider anthropic),
 * OPENAI_API_KEY → `openai-env` (openai), GEMINI_API_KEY → `gemini-env` (gemini).
 */
import { KIND_TRAITS } from "../../formats/codec.ts";
import type { ProviderKind } from "../../formats/codec.ts";
import type { ProviderFamily, WireFormat } from "../../formats/hub.ts";
import type { ConfiguredProvider, OAuthSettings } from "./types.ts";

/** Stream idle timeout (SPEC 6.4), ms. */
export const DEFAULT_IDLE_TIMEOUT_MS = 60_000;
/** Stream idle timeout for Codex and providers marked `slow` (SPEC 6.4), ms. */
export const SLOW_IDLE_TIMEOUT_MS = 180_000;
/** Time to wait for response headers (SPEC 6.3), ms. */
export const DEFAULT_HEADER_TIMEOUT_MS = 60_000;

/**
 * Claude Code's OAuth client (SPEC P-9), as the Claude Code CLI uses it: public client id
 * `9d1c250a-…`, authorisation on claude.ai, token exchange and refresh on console.anthropic.com,
 * Anthropic's hosted copy-the-code callback. Source: the Claude Code CLI's bundled OAuth constants
 * (as reproduced by many open-source clients).
 */
export const CLAUDE_CODE_OAUTH: OAuthSettings = {
  authorizeUrl: "https://claude.ai/oauth/authorize",
  tokenUrl: "https://console.anthropic.com/v1/oauth/token",
  clientId: "9d1c250a-e61b-44d9-88ed-5944d1962f5e",
  scopes: ["org:create_api_key", "user:profile", "user:inference"],
  redirectUri: "https://console.anthropic.com/oauth/code/callback",
};

/**
 * Codex CLI's OAuth client (SPEC P-9): public client id `app_EMoamEEZ73f0CkXaXp7hrann` on
 * auth.openai.com, redirect to the CLI's local callback server on port 1455. Source: the openai/codex
 * CLI's login code (codex-rs/login).
 */
export const CODEX_OAUTH: OAuthSettings = {
  authorizeUrl: "https://auth.openai.com/oauth/authorize",
  tokenUrl: "https://auth.openai.com/oauth/token",
  clientId: "app_EMoamEEZ73f0CkXaXp7hrann",
  scopes: ["openid", "profile", "email", "offline_access"],
  redirectUri: "http://localhost:1455/auth/callback",
};

/** What a provider kind implies unless the config says otherwise. */
export interface KindDefaults {
  /** Wire format the kind speaks (SPEC 4). */
  format: WireFormat;
  /** Family for opaque reasoning state (SPEC F-8); `*-compatible` kinds get `provider:<id>`. */
  family: (id: string) => ProviderFamily;
  /** Vendor base URL; absent for `*-compatible` kinds, which must set `base_url`. */
  baseUrl?: string;
  /** Default concurrency slots per account (SPEC A-4); undefined = unlimited. */
  maxConcurrency?: number;
  /** Slow provider: idle timeout 180 s (SPEC 6.4). */
  slow: boolean;
  /** OAuth endpoints for subscription kinds (SPEC P-9). */
  oauth?: OAuthSettings;
}

/** Per-kind defaults (SPEC P-1, A-4, 6.4). */
export const KIND_DEFAULTS: Record<ProviderKind, KindDefaults> = {
  anthropic: { format: "anthropic-messages", family: () => "anthropic", baseUrl: "https://api.anthropic.com", slow: false },
  "claude-code": {
    format: "anthropic-messages",
    family: () => "anthropic",
    baseUrl: "https://api.anthropic.com",
    maxConcurrency: 5,
    slow: false,
    oauth: CLAUDE_CODE_OAUTH,
  },
  "anthropic-compatible": { format: "anthropic-messages", family: (id) => `provider:${id}`, slow: false },
  openai: { format: "openai-chat", family: () => "openai", baseUrl: "https://api.openai.com/v1", slow: false },
  "openai-responses": {
    format: "openai-responses",
    family: () => "openai",
    baseUrl: "https://api.openai.com/v1",
    slow: false,
  },
  codex: {
    format: "openai-responses",
    family: () => "openai",
    baseUrl: "https://chatgpt.com/backend-api/codex",
    maxConcurrency: 3,
    slow: true,
    oauth: CODEX_OAUTH,
  },
  "openai-compatible": { format: "openai-chat", family: (id) => `provider:${id}`, slow: false },
  gemini: { format: "gemini", family: () => "gemini", baseUrl: "https://generativelanguage.googleapis.com", slow: false },
};

/** Whether a kind is a subscription (OAuth) kind. */
export function isSubscriptionKind(kind: ProviderKind): boolean {
  return KIND_TRAITS[kind].subscription;
}

/** The built-in provider ids and their kinds (SPEC 2.3). */
export const BUILTIN_KINDS: Readonly<Record<string, ProviderKind>> = {
  anthropic: "anthropic",
  openai: "openai",
  gemini: "gemini",
  cc: "claude-code",
  cx: "codex",
};

/**
 * A provider of `kind` with every field at its kind default. `baseUrl` must be given for
 * `*-compatible` kinds.
 */
export function providerFromKind(
  id: string,
  kind: ProviderKind,
  source: ConfiguredProvider["source"],
  baseUrl?: string,
): ConfiguredProvider {
  const d = KIND_DEFAULTS[kind];
  const p: ConfiguredProvider = {
    id,
    kind,
    format: d.format,
    family: d.family(id),
    baseUrl: baseUrl ?? d.baseUrl ?? "",
    models: {},
    idleTimeoutMs: d.slow ? SLOW_IDLE_TIMEOUT_MS : DEFAULT_IDLE_TIMEOUT_MS,
    headerTimeoutMs: DEFAULT_HEADER_TIMEOUT_MS,
    source,
  };
  if (d.maxConcurrency !== undefined) p.defaultMaxConcurrency = d.maxConcurrency;
  if (d.oauth) p.oauth = { ...d.oauth, scopes: [...d.oauth.scopes] };
  return p;
}

/** Fresh copies of the five built-in providers, keyed by id (`source: "builtin"`). */
export function builtinProviders(): Map<string, ConfiguredProvider> {
  const m = new Map<string, ConfiguredProvider>();
  for (const [id, kind] of Object.entries(BUILTIN_KINDS)) m.set(id, providerFromKind(id, kind, "builtin"));
  return m;
}

/** Environment variables that create an account when there is no config file. */
export const ENV_ACCOUNTS: readonly { env: string; id: string; provider: string }[] = [
  { env: "ANTHROPIC_API_KEY", id: "anthropic-env", provider: "anthropic" },
  { env: "OPENAI_API_KEY", id: "openai-env", provider: "openai" },
  { env: "GEMINI_API_KEY", id: "gemini-env", provider: "gemini" },
];
