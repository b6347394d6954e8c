/**
 * A fake subscription vendor on 127.0.0.1 (port 0) for the subscription tests: an OAuth 2.0
 * authorisation server (authorize page, token endpoint with PKCE S256 checks and rotating refresh
 * tokens) and the two subscription APIs in front of the shared scriptable fake upstream:
 *
 * - `{url}/cc/…` is a `claude-code` base URL: `/cc/v1/models` lists the token's models, every other
 *   request is forwarded to the fake upstream with `/cc` stripped (`/v1/messages?beta=true`).
 * - `{url}/cx/…` is a `codex` base URL: `/cx/models?client_version=…` answers the Codex catalogue,
 *   `/cx/responses` is forwarded as `/responses`.
 *
 * Access tokens are checked on every API call: unknown or revoked ones get a 401 in the vendor's
 * shape, so refresh paths run for real. Test tooling only; it shares no code with what it tests.
 */
import { createHash } from "node:crypto";
import type { FakeUpstream } from "../support/fake-upstream.ts";
import { startGateway, type TestGateway } from "../support/gateway.ts";

/** One login the fake knows: its tokens and what its models endpoint lists. */
export interface FakeLogin {
  name: string;
  models: string[];
  /** Reasoning efforts per model, for the Codex catalogue. */
  efforts?: Record<string, string[]>;
  email?: string;
  chatgptAccountId?: string;
}

/** A scripted token-endpoint answer. */
export interface TokenScript {
  status: number;
  body: unknown;
}

/** An API call that reached the fake (before forwarding). */
export interface ApiCall {
  method: string;
  path: string;
  login?: string;
  token: string;
  headers: Record<string, string>;
}

export interface FakeVendor {
  url: string;
  /** Issues a fresh access/refresh token pair for a login (as if the user had logged in elsewhere). */
  seed(login: FakeLogin): { accessToken: string; refreshToken: string };
  /** Marks an access token as no longer accepted (the next API call with it gets a 401). */
  revokeAccess(token: string): void;
  /** Marks a refresh token as rejected (invalid_grant). */
  revokeRefresh(token: string): void;
  /** Token-endpoint requests with grant_type=refresh_token, in order (the refresh token each presented). */
  refreshCalls: string[];
  /** Authorization-code exchanges that passed the PKCE check. */
  exchanges: Array<{ code: string; verifier: string; redirectUri: string; encoding: "json" | "form"; state?: string }>;
  /** Authorize requests received (query parameters). */
  authorizeRequests: Array<Record<string, string>>;
  /** API calls received (models and forwarded calls). */
  calls: ApiCall[];
  /** Queued token-endpoint answers for refresh requests (used before the normal logic). */
  scriptRefresh(...answers: TokenScript[]): void;
  /** Delay before answering a refresh, ms. */
  refreshDelayMs: number;
  /** expires_in of issued access tokens, seconds. */
  expiresIn: number;
  /** Called for every API call before it is answered; may return a Response to answer instead, or headers to add. */
  onCall?: (call: ApiCall) => Response | { headers?: Record<string, string> } | undefined | Promise<Response | { headers?: Record<string, string> } | undefined>;
  /** Valid access token → login name. */
  loginOf(accessToken: string): string | undefined;
  stop(): Promise<void>;
}

/** A JWT-shaped token (unsigned) with the given claims, like the Codex id and access tokens. */
export function fakeJwt(claims: Record<string, unknown>): string {
  const b = (o: unknown) => Buffer.from(JSON.stringify(o)).toString("base64url");
  return `${b({ alg: "none", typ: "JWT" })}.${b(claims)}.sig`;
}

export async function startFakeVendor(upstream: FakeUpstream): Promise<FakeVendor> {
  const logins = new Map<string, FakeLogin>();
  const access = new Map<string, string>(); // access token → login
  const refresh = new Map<string, string>(); // refresh token → login
  const codes = new Map<string, { challenge: string; method: string; redirectUri: string; clientId: string; login: string }>();
  const refreshScript: TokenScript[] = [];
  let n = 0;

  const issue = (login: FakeLogin) => {
    n++;
    const accessToken = login.chatgptAccountId
      ? fakeJwt({ exp: Math.floor(Date.now() / 1000) + vendor.expiresIn, n, "https://api.openai.com/auth": { chatgpt_account_id: login.chatgptAccountId } })
      : `at-${login.name}-${n}-${crypto.randomUUID().slice(0, 8)}`;
    const refreshToken = `rt-${login.name}-${n}-${crypto.randomUUID().slice(0, 8)}`;
    access.set(accessToken, login.name);
    refresh.set(refreshToken, login.name);
    return { accessToken, refreshToken };
  };

  const tokenAnswer = (login: FakeLogin, t: { accessToken: string; refreshToken: string }) => {
    const body: Record<string, unknown> = { token_type: "Bearer", access_token: t.accessToken, refresh_token: t.refreshToken, expires_in: vendor.expiresIn };
    if (login.chatgptAccountId) body.id_token = fakeJwt({ email: login.email, "https://api.openai.com/auth": { chatgpt_account_id: login.chatgptAccountId, chatgpt_plan_type: "pro" } });
    else if (login.email) body.account = { uuid: "acct-uuid", email_address: login.email };
    return Response.json(body);
  };

  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    idleTimeout: 0,
    async fetch(req) {
      const url = new URL(req.url);
      const path = url.pathname;
      if (path === "/oauth/authorize") {
        const q = Object.fromEntries(url.searchParams);
        vendor.authorizeRequests.push(q);
        const login = [...logins.values()].at(-1);
        if (!login) return new Response("no login seeded", { status: 500 });
        const code = `code-${crypto.randomUUID()}`;
        codes.set(code, { challenge: q.code_challenge, method: q.code_challenge_method, redirectUri: q.redirect_uri, clientId: q.client_id, login: login.name });
        const redirect = new URL(q.redirect_uri);
        if (redirect.hostname === "localhost" || redirect.hostname === "127.0.0.1") {
          redirect.searchParams.set("code", code);
          redirect.searchParams.set("state", q.state);
          return new Response(null, { status: 302, headers: { location: redirect.toString() } });
        }
        // Anthropic's hosted page: shows CODE#STATE for the user to paste.
        return new Response(`${code}#${q.state}`, { headers: { "content-type": "text/plain" } });
      }
      if (path === "/oauth/token" && req.method === "POST") {
        const ct = req.headers.get("content-type") ?? "";
        const text = await req.text();
        const encoding = ct.includes("json") ? "json" : "form";
        const f: Record<string, string> = encoding === "json" ? JSON.parse(text) : Object.fromEntries(new URLSearchParams(text));
        if (f.grant_type === "authorization_code") {
          const c = codes.get(f.code);
          if (!c) return Response.json({ error: "invalid_grant", error_description: "unknown code" }, { status: 400 });
          codes.delete(f.code);
          const computed = createHash("sha256").update(f.code_verifier ?? "").digest("base64url");
          if (c.method !== "S256" || computed !== c.challenge) return Response.json({ error: "invalid_grant", error_description: "PKCE verification failed" }, { status: 400 });
          if (f.redirect_uri !== c.redirectUri || f.client_id !== c.clientId) return Response.json({ error: "invalid_grant", error_description: "redirect_uri or client mismatch" }, { status: 400 });
          vendor.exchanges.push({ code: f.code, verifier: f.code_verifier, redirectUri: f.redirect_uri, encoding, state: f.state });
          const login = logins.get(c.login)!;
          return tokenAnswer(login, issue(login));
        }
        if (f.grant_type === "refresh_token") {
          vendor.refreshCalls.push(f.refresh_token);
          if (vendor.refreshDelayMs) await Bun.sleep(vendor.refreshDelayMs);
          const scripted = refreshScript.shift();
          if (scripted) return Response.json(scripted.body, { status: scripted.status });
          const name = refresh.get(f.refresh_token);
          if (!name) return Response.json({ error: "invalid_grant", error_description: "Refresh token not found or invalid" }, { status: 400 });
          refresh.delete(f.refresh_token); // rotation: a refresh token works once
          const login = logins.get(name)!;
          return tokenAnswer(login, issue(login));
        }
        return Response.json({ error: "unsupported_grant_type" }, { status: 400 });
      }
      const m = /^\/(cc|cx)(\/.*)$/.exec(path);
      if (!m) return new Response("not found", { status: 404 });
      const token = (req.headers.get("authorization") ?? "").replace(/^Bearer\s+/i, "");
      const login = access.get(token);
      const headers: Record<string, string> = {};
      req.headers.forEach((v, k) => (headers[k] = v));
      const call: ApiCall = { method: req.method, path: m[2] + url.search, login, token, headers };
      vendor.calls.push(call);
      const hook = await vendor.onCall?.(call);
      if (hook instanceof Response) return hook;
      if (!login) {
        return m[1] === "cc"
          ? Response.json({ type: "error", error: { type: "authentication_error", message: "Invalid bearer token" } }, { status: 401 })
          : Response.json({ detail: "Could not validate your token, please try signing in again." }, { status: 401 });
      }
      const info = logins.get(login)!;
      if (req.method === "GET" && m[2] === "/v1/models" && m[1] === "cc") {
        return Response.json({ data: info.models.map((id) => ({ type: "model", id, display_name: id })), has_more: false, first_id: info.models[0], last_id: info.models.at(-1) });
      }
      if (req.method === "GET" && m[2] === "/models" && m[1] === "cx") {
        return Response.json({ models: info.models.map((slug) => ({ slug, display_name: slug, supported_reasoning_levels: (info.efforts?.[slug] ?? ["low", "medium", "high"]).map((effort) => ({ effort, description: effort })) })) });
      }
      const body = req.method === "POST" ? await req.arrayBuffer() : undefined;
      const fwdHeaders = new Headers(req.headers);
      fwdHeaders.delete("host");
      fwdHeaders.delete("content-length");
      const res = await fetch(upstream.url + m[2] + url.search, { method: req.method, headers: fwdHeaders, body, signal: req.signal });
      const out = new Headers(res.headers);
      out.delete("content-length");
      out.delete("content-encoding");
      for (const [k, v] of Object.entries(hook?.headers ?? {})) out.set(k, v);
      return new Response(res.body, { status: res.status, headers: out });
    },
  });

  const vendor: FakeVendor = {
    url: `http://127.0.0.1:${server.port}`,
    seed(login) {
      logins.set(login.name, login);
      return issue(login);
    },
    revokeAccess: (t) => void access.delete(t),
    revokeRefresh: (t) => void refresh.delete(t),
    refreshCalls: [],
    exchanges: [],
    authorizeRequests: [],
    calls: [],
    scriptRefresh: (...a) => void refreshScript.push(...a),
    refreshDelayMs: 0,
    expiresIn: 3600,
    loginOf: (t) => access.get(t),
    async stop() {
      server.stop(true);
    },
  };
  return vendor;
}

/** Provider config pointing both subscription kinds and their OAuth clients at a fake vendor. */
export function vendorProviders(vendorUrl: string, opts: { codexRedirect?: string; claudeRedirect?: string } = {}): string {
  return `
providers:
  - id: cc
    kind: claude-code
    base_url: "${vendorUrl}/cc"
    oauth:
      authorize_url: "${vendorUrl}/oauth/authorize"
      token_url: "${vendorUrl}/oauth/token"
      client_id: test-claude-client
      redirect_uri: "${opts.claudeRedirect ?? "https://console.anthropic.test/oauth/code/callback"}"
  - id: cx
    kind: codex
    base_url: "${vendorUrl}/cx"
    oauth:
      authorize_url: "${vendorUrl}/oauth/authorize"
      token_url: "${vendorUrl}/oauth/token"
      client_id: test-codex-client
      redirect_uri: "${opts.codexRedirect ?? "http://localhost:0/auth/callback"}"
`;
}

/**
 * More `claude-code` providers for the `providers:` list {@link vendorProviders} ends with: one item per
 * id, each at the vendor's `/cc` with `cc`'s OAuth settings (the default Claude redirect URI), so a test's
 * accounts form a pool of their own, apart from another test's. Ends with a newline.
 */
export function claudeCodePools(vendorUrl: string, ...ids: string[]): string {
  return ids
    .map(
      (id) => `  - id: ${id}
    kind: claude-code
    base_url: "${vendorUrl}/cc"
    oauth:
      authorize_url: "${vendorUrl}/oauth/authorize"
      token_url: "${vendorUrl}/oauth/token"
      client_id: test-claude-client
      redirect_uri: "https://console.anthropic.test/oauth/code/callback"
`,
    )
    .join("");
}

/**
 * A gateway at `upstream` with a Claude subscription and a paid API key serving the same model:
 * {@link vendorProviders}'s `cc` (account `cc-file`, a login the vendor `vendor` issued) and an
 * `anthropic` provider `paid` at the upstream's `/paid` (account `paid-key`), both priced at $100 per
 * million tokens in and out for `claude-v`. `more` is YAML inserted before `settings:` (keys, combos).
 * The caller stops the gateway and the vendor.
 */
export async function startPaidBesideSubscription(upstream: FakeUpstream, vendor: FakeVendor, more = ""): Promise<TestGateway> {
  const t = vendor.seed({ name: "value", models: ["claude-v"] });
  const yaml = `${vendorProviders(vendor.url)}  - id: paid
    kind: anthropic
    base_url: "{{FAKE}}/paid"
accounts:
  - id: cc-file
    provider: cc
    access_token: env:CC_ACCESS
    refresh_token: env:CC_REFRESH
    expires_at: ${Date.now() + 3600_000}
  - id: paid-key
    provider: paid
    api_key: env:PAID_KEY
${more}settings:
  pricing:
    cc/claude-v: { input: 100, output: 100 }
    paid/claude-v: { input: 100, output: 100 }
`;
  return startGateway(yaml, { fake: upstream, env: { CC_ACCESS: t.accessToken, CC_REFRESH: t.refreshToken, PAID_KEY: "sk-test-paid-value" } });
}
