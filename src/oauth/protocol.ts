/**
 * The OAuth 2.0 protocol of the two subscription kinds (SPEC P-7, P-9): the authorisation URL, the
 * authorisation-code exchange and the refresh-token grant, each as the vendor's own CLI performs it.
 *
 * Sources (observed client behaviour; neither vendor documents these endpoints publicly):
 * - Claude Code: authorisation on `claude.ai/oauth/authorize` with `code=true` (Anthropic's hosted
 *   page shows the code for the user to paste, as `CODE#STATE`), JSON bodies to
 *   `console.anthropic.com/v1/oauth/token` for both grants (`{grant_type, code, state, client_id,
 *   redirect_uri, code_verifier}` and `{grant_type: "refresh_token", refresh_token, client_id}`),
 *   answered `{access_token, refresh_token, expires_in, account: {email_address}, …}`. As reproduced
 *   by the OpenCode Anthropic auth plugin (sst/opencode-anthropic-auth, index.mjs).
 * - Codex: openai/codex `codex-rs/login/src/server.rs` — authorise with `response_type=code`,
 *   `id_token_add_organizations=true`, `codex_cli_simplified_flow=true`, `originator`; the code
 *   exchange is form-encoded (`grant_type=authorization_code&code&redirect_uri&client_id&
 *   code_verifier`), answered `{id_token, access_token, refresh_token}`; the refresh grant is JSON
 *   `{client_id, grant_type: "refresh_token", refresh_token, scope: "openid profile email"}`. The
 *   ChatGPT account id is the `chatgpt_account_id` of the id token's `https://api.openai.com/auth`
 *   claim; the access token is a JWT whose `exp` is its expiry.
 *
 * Nothing here logs, and no error message carries a token.
 */
import * as v from "valibot";
import { loadEffect } from "../memory/lazy-effect.ts";
import { KIND_TRAITS } from "../../formats/codec.ts";
import type { Credential } from "../../pipeline/ports.ts";
import { scrubText } from "../../pipeline/index.ts";
import type { OAuthSettings } from "../config/types.ts";

/** The provider kinds that log in with OAuth (SPEC P-1). */
export type SubscriptionKind = "claude-code" | "codex";

/** Whether a provider kind is a subscription (OAuth) kind. */
export function isSubscription(kind: string): kind is SubscriptionKind {
  return (KIND_TRAITS as Record<string, { subscription: boolean } | undefined>)[kind]?.subscription === true;
}

/** The `originator` Codex sends with its authorisation request and its API calls (codex-rs default_client.rs). */
export const CODEX_ORIGINATOR = "codex_cli_rs";

/** Scope the Codex CLI asks for on refresh (codex-rs login manager). */
export const CODEX_REFRESH_SCOPE = "openid profile email";

/** Tokens from a token endpoint, normalised. Times are ms since the epoch. */
export interface TokenSet {
  accessToken: string;
  /** Absent when the provider did not rotate it (keep the old one). */
  refreshToken?: string;
  /** ms since the epoch; from `expires_in`, else the access token's JWT `exp`. */
  expiresAt?: number;
  /** Codex `chatgpt-account-id`. */
  accountId?: string;
  /** The login's e-mail address when the provider says (for a default account name). */
  email?: string;
}

/**
 * A token-endpoint failure. `permanent` is true when the provider rejected the grant itself
 * (`invalid_grant`, a reused/expired/invalidated refresh token, an unknown client): retrying cannot
 * help and the credential must be replaced by a new login. Everything else (5xx, 429, transport,
 * timeout, an unreadable answer) is temporary. The message never contains a token.
 */
export class OAuthError extends Error {
  override readonly name = "OAuthError";
  constructor(
    message: string,
    readonly permanent: boolean,
    readonly status?: number,
    readonly code?: string,
  ) {
    super(message);
  }
}

/** Error codes that mean the grant is dead (RFC 6749 §5.2 plus the Codex auth server's own codes). */
const REJECTED_CODES = new Set([
  "invalid_grant",
  "invalid_client",
  "unauthorized_client",
  "refresh_token_expired",
  "refresh_token_reused",
  "refresh_token_invalidated",
  "token_expired",
]);

const TokenResponse = v.looseObject({
  access_token: v.pipe(v.string(), v.minLength(1)),
  refresh_token: v.optional(v.nullable(v.string())),
  expires_in: v.optional(v.nullable(v.union([v.number(), v.pipe(v.string(), v.regex(/^\d+(\.\d+)?$/))]))),
  id_token: v.optional(v.nullable(v.string())),
  account: v.optional(v.nullable(v.looseObject({ email_address: v.optional(v.string()) }))),
});

/** Request options shared by the token calls. */
export interface TokenCallOptions {
  fetchImpl?: typeof fetch;
  signal?: AbortSignal;
  /** ms since the epoch, for `expiresAt`. */
  now?: number;
}

/**
 * The URL the user opens to log in. `redirectUri` is the one the token exchange will repeat (the
 * Codex flow binds a local port first and passes the resulting URI).
 */
export function authorizeUrl(kind: SubscriptionKind, settings: OAuthSettings, p: { challenge: string; state: string; redirectUri: string }): string {
  const url = new URL(settings.authorizeUrl);
  const q = url.searchParams;
  if (kind === "claude-code") q.set("code", "true");
  q.set("response_type", "code");
  q.set("client_id", settings.clientId);
  q.set("redirect_uri", p.redirectUri);
  q.set("scope", settings.scopes.join(" "));
  q.set("code_challenge", p.challenge);
  q.set("code_challenge_method", "S256");
  q.set("state", p.state);
  if (kind === "codex") {
    q.set("id_token_add_organizations", "true");
    q.set("codex_cli_simplified_flow", "true");
    q.set("originator", CODEX_ORIGINATOR);
  }
  return url.toString();
}

/**
 * Splits what a user pasted from Anthropic's code page: `CODE#STATE` (or a bare code, or the whole
 * callback URL with `code` and `state` query parameters).
 */
export function parsePastedCode(input: string): { code: string; state?: string } {
  const text = input.trim();
  if (/^https?:\/\//i.test(text)) {
    try {
      const u = new URL(text);
      const code = u.searchParams.get("code") ?? "";
      const state = u.searchParams.get("state") ?? (u.hash ? u.hash.slice(1) : undefined);
      return { code, state: state || undefined };
    } catch {
      // fall through: treat as a code
    }
  }
  const i = text.indexOf("#");
  return i < 0 ? { code: text } : { code: text.slice(0, i), state: text.slice(i + 1) || undefined };
}

/**
 * Exchanges an authorisation code for tokens (the PKCE verifier proves this process started the
 * login). @throws OAuthError.
 */
export async function exchangeCode(
  kind: SubscriptionKind,
  settings: OAuthSettings,
  p: { code: string; verifier: string; state?: string; redirectUri: string },
  opts: TokenCallOptions = {},
): Promise<TokenSet> {
  if (kind === "claude-code") {
    return tokenCall(settings.tokenUrl, "json", {
      grant_type: "authorization_code",
      code: p.code,
      state: p.state,
      client_id: settings.clientId,
      redirect_uri: p.redirectUri,
      code_verifier: p.verifier,
    }, kind, opts);
  }
  return tokenCall(settings.tokenUrl, "form", {
    grant_type: "authorization_code",
    code: p.code,
    redirect_uri: p.redirectUri,
    client_id: settings.clientId,
    code_verifier: p.verifier,
  }, kind, opts);
}

/**
 * The refresh-token grant. A provider that does not rotate the refresh token returns none; the caller
 * keeps the old one. @throws OAuthError (`permanent` when the refresh token was rejected).
 */
export async function refreshTokens(kind: SubscriptionKind, settings: OAuthSettings, refreshToken: string, opts: TokenCallOptions = {}): Promise<TokenSet> {
  const body: Record<string, string> =
    kind === "codex"
      ? { client_id: settings.clientId, grant_type: "refresh_token", refresh_token: refreshToken, scope: CODEX_REFRESH_SCOPE }
      : { grant_type: "refresh_token", refresh_token: refreshToken, client_id: settings.clientId };
  return tokenCall(settings.tokenUrl, "json", body, kind, opts);
}

let tokenClient: Promise<typeof import("./token-client.ts")> | undefined;

/**
 * The HTTP client of token calls (@effect/platform's HttpClient modules), loaded on first use: most
 * instances never refresh a token, and these modules are ~35 MB of a fresh process's memory
 * (measured from source). Callers that time a token call await this first, so loading (a few
 * hundred ms once) does not count against the call's timeout. Memoized; never rejects unless the
 * modules are missing from the install.
 */
export function loadTokenClient(): Promise<typeof import("./token-client.ts")> {
  tokenClient ??= import("./token-client.ts");
  return tokenClient;
}

async function tokenCall(
  url: string,
  encoding: "json" | "form",
  fields: Record<string, string | undefined>,
  kind: SubscriptionKind,
  opts: TokenCallOptions,
): Promise<TokenSet> {
  const clean: Record<string, string> = {};
  for (const [k, val] of Object.entries(fields)) if (val !== undefined) clean[k] = val;
  // The token endpoint through @effect/platform's HttpClient (fetch-backed; the caller's fetch is
  // injected for tests, its signal interrupts the call).
  const [{ Effect }, { FetchHttpClient, HttpClient, HttpClientRequest }] = await Promise.all([loadEffect(), loadTokenClient()]);
  const request = HttpClientRequest.post(url).pipe(
    HttpClientRequest.setHeader("accept", "application/json"),
    encoding === "json" ? HttpClientRequest.bodyUnsafeJson(clean) : HttpClientRequest.bodyUrlParams(clean),
  );
  const call = Effect.gen(function* () {
    const client = yield* HttpClient.HttpClient;
    const response = yield* client.execute(request);
    const body = yield* response.text.pipe(Effect.orElseSucceed(() => ""));
    return { status: response.status, text: body };
  }).pipe(
    Effect.provide(FetchHttpClient.layer),
    Effect.provideService(FetchHttpClient.Fetch, opts.fetchImpl ?? fetch),
    Effect.provideService(FetchHttpClient.RequestInit, { redirect: "manual" }),
  );
  let res: { status: number; text: string };
  try {
    const outcome = await Effect.runPromise(Effect.either(call), { signal: opts.signal });
    if (outcome._tag === "Left") throw outcome.left.cause ?? outcome.left;
    res = outcome.right;
  } catch (e) {
    const host = hostOf(url);
    if (opts.signal?.aborted) {
      const timedOut = (opts.signal.reason as { name?: unknown } | undefined)?.name === "TimeoutError";
      throw new OAuthError(timedOut ? `the token endpoint (${host}) did not answer in time` : `the token request to ${host} was aborted or timed out`, false);
    }
    throw new OAuthError(`the token endpoint could not be reached (${unreachableCause(url, e)})`, false);
  }
  const text = res.text;
  if (res.status < 200 || res.status >= 300) {
    const { code, description: said } = errorOf(text);
    // A token endpoint (or a proxy before it) may quote what it was sent ("Refresh token rt_… is
    // revoked"): this message becomes the quarantine reason, the log line, the trace's token call and
    // the accounts API's refresh state, so the request's own secrets leave it here, where it is made.
    // Scrubbed whole, then cut (a token cut at the limit would no longer match), the code too.
    const secrets = secretFields(clean);
    const description = said === undefined ? undefined : scrubText(said, secrets).slice(0, 160);
    const permanent =
      (code !== undefined && REJECTED_CODES.has(code)) || (code === undefined && (res.status === 401 || res.status === 403));
    const shownCode = code === undefined ? undefined : scrubText(code, secrets).slice(0, 160);
    throw new OAuthError(
      `the token endpoint answered ${res.status}${shownCode ? ` (${shownCode}${description ? `: ${description}` : ""})` : ""}`,
      permanent && res.status < 500 && res.status !== 429,
      res.status,
      code,
    );
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new OAuthError("the token endpoint answered with something that is not JSON", false, res.status);
  }
  const parsed = v.safeParse(TokenResponse, json);
  if (!parsed.success) throw new OAuthError("the token endpoint's answer has no access_token", false, res.status);
  const t = parsed.output;
  const now = opts.now ?? Date.now();
  const out: TokenSet = { accessToken: t.access_token };
  if (t.refresh_token) out.refreshToken = t.refresh_token;
  if (t.expires_in !== undefined && t.expires_in !== null) out.expiresAt = now + Math.round(Number(t.expires_in) * 1000);
  else {
    const exp = jwtClaims(t.access_token)?.exp;
    if (typeof exp === "number") out.expiresAt = exp * 1000;
  }
  if (kind === "codex") {
    const id = codexIdentity(t.id_token ?? undefined, t.access_token);
    if (id.accountId) out.accountId = id.accountId;
    if (id.email) out.email = id.email;
  } else if (t.account?.email_address) {
    out.email = t.account.email_address;
  }
  return out;
}

/** The host (and port when not the scheme's) of a URL, for a message; the URL's path and query are left out. */
function hostOf(url: string): string {
  try {
    return new URL(url).host || "the configured token_url";
  } catch {
    return "the configured token_url";
  }
}

/**
 * Why a request to `url` reached no server, as an operator reads it: the host and the cause, from the
 * fetch failure's code (the OS's errno and getaddrinfo names, as Bun's fetch reports them):
 * `auth.openai.com: DNS lookup failed (EAI_AGAIN: no network or no DNS server)`, `127.0.0.1:9:
 * connection refused (ECONNREFUSED)`, `…: connection timed out (ETIMEDOUT)`, `…: network unreachable
 * (ENETUNREACH)`, a TLS failure with its code. Only the host and the code: no path, query or body
 * (a URL's query or a request's body could hold a secret).
 */
export function unreachableCause(url: string, e: unknown): string {
  const host = hostOf(url);
  let hostname = host;
  try {
    hostname = new URL(url).hostname || host;
  } catch {
    // host says it
  }
  const raw = (e as { code?: unknown } | null)?.code;
  const code = typeof raw === "string" && /^[A-Za-z0-9_]{1,40}$/.test(raw) ? raw : "";
  const name = e instanceof Error && /^[A-Za-z]{1,40}$/.test(e.name) ? e.name : "";
  if (code === "EAI_AGAIN") return `${hostname}: DNS lookup failed (EAI_AGAIN: no network or no DNS server)`;
  if (/^(ENOTFOUND|EAI_NONAME|EAI_NODATA|EAI_FAIL|DNSException)$/.test(code)) return `${hostname}: DNS lookup failed (${code}: no such host)`;
  if (code === "ECONNREFUSED" || code === "ConnectionRefused") return `${host}: connection refused (${code})`;
  if (code === "ETIMEDOUT" || code === "Timeout" || name === "TimeoutError") return `${host}: connection timed out${code ? ` (${code})` : ""}`;
  if (code === "ENETUNREACH" || code === "EHOSTUNREACH") return `${host}: ${code === "ENETUNREACH" ? "network" : "host"} unreachable (${code})`;
  if (code === "ECONNRESET" || code === "ConnectionClosed") return `${host}: connection reset (${code})`;
  if (/CERT|TLS|SSL/i.test(code)) return `${host}: TLS failed (${code})`;
  return `${host}: ${code || name || "no connection"}`;
}

/** The fields of a token request that hold a secret (RFC 6749 §4.1.3, §6; RFC 7636 §4.5), to scrub from its error text. */
const SECRET_FIELDS = ["refresh_token", "code", "code_verifier", "client_secret"] as const;

function secretFields(fields: Record<string, string>): string[] {
  const out: string[] = [];
  for (const name of SECRET_FIELDS) if (fields[name] !== undefined) out.push(fields[name]);
  return out;
}

/** The `error` code and description of a token-endpoint error body (RFC 6749 §5.2, or `{error: {code}}`), not yet scrubbed. */
function errorOf(text: string): { code?: string; description?: string } {
  try {
    const j = JSON.parse(text) as Record<string, unknown>;
    const e = j.error;
    if (typeof e === "string") return { code: e, description: member(j.error_description) };
    if (e && typeof e === "object") {
      const o = e as Record<string, unknown>;
      const code = typeof o.code === "string" ? o.code : typeof o.type === "string" ? o.type : undefined;
      return { code, description: member(o.message) };
    }
  } catch {
    // not JSON
  }
  return {};
}

/** A string member of the error body, up to 8 KiB (cut to 160 characters once scrubbed). */
const member = (x: unknown) => (typeof x === "string" ? x.slice(0, 8192) : undefined);

/** The claims of a JWT (unverified: only used to read our own token's expiry and ids), or undefined. */
export function jwtClaims(token: string | undefined): Record<string, unknown> | undefined {
  if (!token) return undefined;
  const parts = token.split(".");
  if (parts.length !== 3) return undefined;
  try {
    const json = JSON.parse(Buffer.from(parts[1], "base64url").toString("utf8"));
    return json && typeof json === "object" ? (json as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The ChatGPT account id and e-mail of a Codex login: the id token's (else the access token's)
 * `https://api.openai.com/auth.chatgpt_account_id` and `email` claims (codex-rs token_data.rs).
 */
export function codexIdentity(idToken: string | undefined, accessToken?: string): { accountId?: string; email?: string } {
  const out: { accountId?: string; email?: string } = {};
  for (const tok of [idToken, accessToken]) {
    const c = jwtClaims(tok);
    if (!c) continue;
    const auth = c["https://api.openai.com/auth"] as Record<string, unknown> | undefined;
    if (!out.accountId && auth && typeof auth.chatgpt_account_id === "string") out.accountId = auth.chatgpt_account_id;
    const profile = c["https://api.openai.com/profile"] as Record<string, unknown> | undefined;
    if (!out.email && typeof c.email === "string") out.email = c.email;
    if (!out.email && profile && typeof profile.email === "string") out.email = profile.email;
  }
  return out;
}

/**
 * The vendor an access token was evidently issued by, from its shape alone (unverified): a JWT with
 * the `https://api.openai.com/auth` claim is a ChatGPT/Codex login's (codex-rs token_data.rs); an
 * `sk-ant-` token is Anthropic's (Claude Code's OAuth tokens are `sk-ant-oat01-…`). Undefined when
 * the shape says neither (opaque tokens, test doubles): the caller then relies on the kind it was told.
 */
export function tokenVendor(accessToken: string): SubscriptionKind | undefined {
  if (accessToken.startsWith("sk-ant-")) return "claude-code";
  const c = jwtClaims(accessToken);
  if (c && (c["https://api.openai.com/auth"] !== undefined || (typeof c.iss === "string" && c.iss.includes("openai.com")))) return "codex";
  return undefined;
}

/** A token set as the pipeline's OAuth credential, keeping `previous`'s refresh token and account id when not rotated. */
export function toCredential(t: TokenSet, previous?: Credential): Extract<Credential, { type: "oauth" }> {
  const prev = previous?.type === "oauth" ? previous : undefined;
  const c: Extract<Credential, { type: "oauth" }> = { type: "oauth", accessToken: t.accessToken };
  const rt = t.refreshToken ?? prev?.refreshToken;
  if (rt) c.refreshToken = rt;
  if (t.expiresAt !== undefined) c.expiresAt = t.expiresAt;
  const acct = t.accountId ?? prev?.accountId;
  if (acct) c.accountId = acct;
  // The login's e-mail and plan stay what the login or import said (a refresh does not repeat them).
  if (prev?.email) c.email = prev.email;
  if (prev?.plan) c.plan = prev.plan;
  return c;
}
