/**
 * Provider executors (SPEC R-7, P-1…P-4): one per provider kind. An executor turns an
 * {@link UpstreamCall} into an HTTP request — URL per the vendor SDK's base-URL convention (SPEC 2.3),
 * auth, the allow-listed client headers (P-3), the provider's fixes (P-2) — and sends it through the
 * account's proxy or the environment's HTTPS_PROXY/NO_PROXY (P-4, honoured by Bun's fetch).
 */
import { geminiPath } from "../../formats/gemini/index.ts";
import { codexHeaders } from "./codex.ts";
import { claudeCodeHeaders, claudeCodeUrl } from "./claude-code.ts";
import type { WireFormat } from "../../formats/hub.ts";
import { headersWithPrefix, parseTraceparent, type Executor, type ExecutorFor, type UpstreamCall, type UpstreamReply } from "../../pipeline/index.ts";
import type { Account, Credential, ProviderInfo } from "../../pipeline/ports.ts";

/**
 * Resolves the credential a call sends: an OAuth access token close to expiry is refreshed first
 * (SPEC A-5; src/accounts/credentials.ts). Without one, the account's stored credential is sent.
 */
export interface CredentialSource {
  ensureFresh(account: Account, signal?: AbortSignal): Promise<Credential>;
  /**
   * Whether `credential` (as {@link ensureFresh} gave it) is an OAuth access token past its expiry by
   * the source's clock: its refresh failed, so sending it could only earn a 401 and would hand the
   * provider a dead (perhaps quarantined) token. Absent: every credential is sent.
   */
  expired?(credential: Credential): boolean;
}

/**
 * The 401 an executor answers itself, without a call upstream, for an access token that expired and
 * could not be refreshed ({@link CredentialSource.expired}): in the upstream format's error shape, so
 * the attempt loop handles it as the provider's own 401 would be (the refresh's outcome decides: a
 * 503 with Retry-After while the token endpoint fails, the credential quarantined when it rejected the
 * refresh token). Never a token in it.
 */
function expiredTokenReply(call: UpstreamCall, credential: Extract<Credential, { type: "oauth" }>): UpstreamReply {
  const message = `switchyard did not send this request to ${call.provider.id}: the access token of account ${call.account.id} expired at ${new Date(credential.expiresAt ?? 0).toISOString()} and could not be refreshed`;
  const body =
    call.upstreamFormat === "anthropic-messages"
      ? { type: "error", error: { type: "authentication_error", message } }
      : call.upstreamFormat === "gemini"
        ? { error: { code: 401, message, status: "UNAUTHENTICATED" } }
        : { error: { message, type: "invalid_request_error", code: "token_expired" } };
  const bytes = new TextEncoder().encode(JSON.stringify(body));
  return {
    status: 401,
    headers: new Headers({ "content-type": "application/json" }),
    body: new ReadableStream({
      start(c) {
        c.enqueue(bytes);
        c.close();
      },
    }),
    credential,
  };
}

/**
 * Client headers that may reach a provider (SPEC P-3). Client keys, cookies, proxy and hop-by-hop
 * headers are never forwarded. Format-specific headers only go to a provider of the client's format.
 * W3C Trace Context's `traceparent` and `tracestate` go to every provider (the provider's spans join
 * the caller's trace); while spans are exported the attempt's own `traceparent` replaces the client's
 * (UpstreamCall.traceparent; `tracestate` passes unchanged, Trace Context section 3.3).
 */
const FORWARD_ALWAYS = ["user-agent", "traceparent", "tracestate"];
const FORWARD_BY_FORMAT: Partial<Record<WireFormat, string[]>> = {
  "anthropic-messages": ["anthropic-beta", "anthropic-version", "x-claude-code-session-id", "x-app"],
  "openai-responses": ["session-id", "session_id", "thread-id", "conversation_id", "originator", "x-client-request-id", "x-codex-beta-features", "x-codex-turn-metadata", "openai-beta"],
  "openai-chat": [],
  gemini: [],
};

/** The anthropic-version sent when the client sent none (Anthropic API docs). */
export const ANTHROPIC_VERSION = "2023-06-01";

/** A base URL's trailing slashes (one RegExp for the process: a literal in the function is a new object per call). */
const TRAILING_SLASHES = /\/+$/;

/** Joins a base URL and a path without doubling or dropping slashes. */
export function joinUrl(base: string, path: string): string {
  return base.replace(TRAILING_SLASHES, "") + (path.startsWith("/") ? path : "/" + path);
}

/** The URL of one call (SPEC 2.3 base-URL conventions); `count_tokens` is the format's token count (Anthropic, Gemini). */
export function urlFor(provider: ProviderInfo, format: WireFormat, model: string, stream: boolean, endpoint?: UpstreamCall["endpoint"]): string {
  switch (format) {
    case "anthropic-messages":
      return joinUrl(provider.baseUrl, endpoint === "count_tokens" ? "/v1/messages/count_tokens" : "/v1/messages");
    case "openai-chat":
      return joinUrl(provider.baseUrl, "/chat/completions");
    case "openai-responses":
      return joinUrl(provider.baseUrl, "/responses");
    case "gemini":
      return joinUrl(provider.baseUrl, endpoint === "count_tokens" ? geminiPath(model, false).replace(/:generateContent$/, ":countTokens") : geminiPath(model, stream));
  }
}

/**
 * `Authorization: Bearer …` values by credential, each with the secret it was made of: a credential's
 * calls send one string instead of a new one per call (docs/performance.md item 291). A credential
 * whose secret changed (the same object given another token) gets a new value.
 */
const BEARERS = new WeakMap<Credential, { secret: string; value: string }>();

/** The `Authorization` value `Bearer <secret>` of `cred`'s secret `secret`. */
function bearer(cred: Credential, secret: string): string {
  const known = BEARERS.get(cred);
  if (known !== undefined && known.secret === secret) return known.value;
  const value = `Bearer ${secret}`;
  BEARERS.set(cred, { secret, value });
  return value;
}

/**
 * `headers` without the `anthropic-beta` values that start with one of `prefixes` (the others kept, in
 * order, joined by ","); without the header when none is left. Claude Code's
 * `advanced-tool-use-2025-11-20` on a body tidied of deferred loading for an `anthropic-compatible`
 * server (UpstreamCall.droppedBetas): Z.ai is reported to defer tools under it even without
 * `defer_loading` (zai-org/feedback#172).
 */
function withoutBetas(headers: Headers, prefixes: readonly string[]): void {
  const sent = headers.get("anthropic-beta");
  if (sent === null) return;
  const values = sent.split(",").map((s) => s.trim()).filter(Boolean);
  const kept = values.filter((v) => !prefixes.some((p) => v.startsWith(p)));
  if (kept.length === values.length) return;
  if (kept.length === 0) headers.delete("anthropic-beta");
  else headers.set("anthropic-beta", kept.join(","));
}

/** Builds the outgoing headers: forwarded allow-list, then auth and format headers. */
export function headersFor(call: UpstreamCall, clientFormat: WireFormat | undefined): Headers {
  const out = new Headers();
  const src = call.clientHeaders;
  for (const name of FORWARD_ALWAYS) {
    const v = src.get(name);
    if (v) out.set(name, v);
  }
  if (clientFormat === call.upstreamFormat) {
    for (const name of FORWARD_BY_FORMAT[call.upstreamFormat] ?? []) {
      const v = src.get(name);
      if (v) out.set(name, v);
    }
    headersWithPrefix(src, "x-opencode-", out);
  }
  if (call.traceparent) {
    out.set("traceparent", call.traceparent);
    // A tracestate belongs to the traceparent it came with (Trace Context section 3.3): it goes on only
    // when the attempt's traceparent continues the caller's trace, not on a trace the gateway began.
    if (parseTraceparent(src.get("traceparent"))?.traceId !== call.traceparent.slice(3, 35)) out.delete("tracestate");
  }
  out.set("content-type", "application/json");
  out.set("accept", call.stream ? "text/event-stream" : "application/json");
  const cred = call.account.credential;
  const kind = call.provider.kind;
  switch (call.upstreamFormat) {
    case "anthropic-messages":
      if (!out.has("anthropic-version")) out.set("anthropic-version", ANTHROPIC_VERSION);
      if (call.droppedBetas !== undefined) withoutBetas(out, call.droppedBetas);
      if (cred.type === "api_key") out.set("x-api-key", cred.apiKey);
      else if (cred.type === "oauth") out.set("authorization", bearer(cred, cred.accessToken));
      if (kind === "claude-code") {
        // Subscription calls need the OAuth beta (observed from Claude Code's own requests).
        const betas = new Set((out.get("anthropic-beta") ?? "").split(",").map((s) => s.trim()).filter(Boolean));
        betas.add("oauth-2025-04-20");
        out.set("anthropic-beta", [...betas].join(","));
      }
      break;
    case "gemini":
      if (cred.type === "api_key") out.set("x-goog-api-key", cred.apiKey);
      else if (cred.type === "oauth") out.set("authorization", bearer(cred, cred.accessToken));
      break;
    default:
      if (cred.type === "api_key") out.set("authorization", bearer(cred, cred.apiKey));
      else if (cred.type === "oauth") {
        out.set("authorization", bearer(cred, cred.accessToken));
        if (kind === "codex" && cred.accountId) out.set("chatgpt-account-id", cred.accountId);
      }
  }
  return out;
}

/** The generic HTTP executor all kinds share; kind-specific fixes live in {@link headersFor} and translate. */
export class HttpExecutor implements Executor {
  constructor(
    private readonly fetchImpl: typeof fetch = fetch,
    private readonly credentials?: CredentialSource,
  ) {}

  /**
   * Sends the call. A reply to a call without an OAuth token is fetch's own `Response` (its status,
   * headers, body and URL are an {@link UpstreamReply}'s): no async layer of its own and no record per
   * call (docs/performance.md item 264). An OAuth account's call waits for a fresh token first. Not
   * async: it may throw synchronously as well as reject (callers call it inside their `try`, Executor).
   */
  send(call: UpstreamCall): Promise<UpstreamReply> {
    if (call.account.credential.type === "oauth") return this.sendOAuth(call);
    return this.fetchImpl(callUrl(call), callInit(call));
  }

  /** An OAuth account's call: its token refreshed when close to expiry, the credential sent on the reply (P-7). */
  private async sendOAuth(call: UpstreamCall): Promise<UpstreamReply> {
    if (this.credentials) {
      const credential = await this.credentials.ensureFresh(call.account, call.signal);
      // An expired token whose refresh failed (a request that joined an import's first refresh) is not sent.
      if (credential.type === "oauth" && this.credentials.expired?.(credential)) return expiredTokenReply(call, credential);
      if (credential !== call.account.credential) call = { ...call, account: { ...call.account, credential } };
    }
    const url = callUrl(call);
    const res = await this.fetchImpl(url, callInit(call));
    const reply: UpstreamReply = { status: res.status, headers: res.headers, body: res.body, url };
    if (call.account.credential.type === "oauth") reply.credential = call.account.credential;
    return reply;
  }
}

/**
 * The URL a provider's last call went to, with what it was made of: the next call with the same
 * base URL, kind, format, model, stream mode and endpoint (the usual run of one model's requests)
 * reuses the string instead of joining one per call (docs/performance.md item 291). One record per
 * provider, overwritten when a call differs.
 */
interface LastUrl {
  baseUrl: string;
  kind: ProviderInfo["kind"];
  format: WireFormat;
  model: string;
  stream: boolean;
  endpoint: UpstreamCall["endpoint"];
  url: string;
}
const LAST_URL = new WeakMap<ProviderInfo, LastUrl>();

/** The URL of one call: {@link urlFor}'s, a Claude Code subscription's own (SPEC P-2, src/providers/claude-code.ts). */
function callUrl(call: UpstreamCall): string {
  const provider = call.provider;
  const last = LAST_URL.get(provider);
  if (
    last !== undefined &&
    last.model === call.model &&
    last.format === call.upstreamFormat &&
    last.stream === call.stream &&
    last.endpoint === call.endpoint &&
    last.baseUrl === provider.baseUrl &&
    last.kind === provider.kind
  ) {
    return last.url;
  }
  const joined = urlFor(provider, call.upstreamFormat, call.model, call.stream, call.endpoint);
  const url = provider.kind === "claude-code" && call.upstreamFormat === "anthropic-messages" ? claudeCodeUrl(joined) : joined;
  if (last === undefined) LAST_URL.set(provider, { baseUrl: provider.baseUrl, kind: provider.kind, format: call.upstreamFormat, model: call.model, stream: call.stream, endpoint: call.endpoint, url });
  else {
    last.baseUrl = provider.baseUrl;
    last.kind = provider.kind;
    last.format = call.upstreamFormat;
    last.model = call.model;
    last.stream = call.stream;
    last.endpoint = call.endpoint;
    last.url = url;
  }
  return url;
}

/** The fetch options of one call: its headers ({@link headersFor} and the provider's fixes, SPEC P-2), body, signal and proxy (P-4). */
function callInit(call: UpstreamCall): RequestInit & { proxy?: string; decompress?: boolean } {
  const headers = headersFor(call, call.clientFormat);
  if (call.provider.kind === "codex") {
    // SPEC P-2: the Codex CLI's headers (src/providers/codex.ts); the body already carries the
    // backend's fixes (formats/openai-responses, kind codex).
    codexHeaders(headers, call.promptCacheKey);
  } else if (call.provider.kind === "claude-code" && call.upstreamFormat === "anthropic-messages") {
    claudeCodeHeaders(headers);
  }
  const init: RequestInit & { proxy?: string; decompress?: boolean } = {
    method: "POST",
    headers,
    body: call.body,
    signal: call.signal,
    redirect: "manual",
  };
  if (call.account.proxy) init.proxy = call.account.proxy;
  return init;
}

/** One shared executor instance per process (fetch keeps its own connection pool). */
export function createExecutors(fetchImpl?: typeof fetch, credentials?: CredentialSource): ExecutorFor {
  const shared = new HttpExecutor(fetchImpl, credentials);
  return () => shared;
}
