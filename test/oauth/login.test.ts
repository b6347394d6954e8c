/**
 * `switchyard login claude-code|codex` (SPEC P-9) against a fake OAuth server: the PKCE verifier the
 * CLI sends matches the challenge it opened the browser with, the tokens reach the running instance
 * through POST /admin/api/accounts and are stored (DB mode 0600), and the new account serves.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { loginCommand } from "../../src/cli/login.ts";
import { challengeOf, createPkce } from "../../src/oauth/pkce.ts";
import { authorizeUrl, parsePastedCode } from "../../src/oauth/protocol.ts";
import { dbMode, startWorld, type SubscriptionWorld } from "./helpers.ts";

let w: SubscriptionWorld;
beforeAll(async () => {
  w = await startWorld();
});
afterAll(async () => {
  await w?.stop();
});

const progress: string[] = [];
const ioWith = (open: (url: string) => Promise<void>, ask: () => Promise<string> = async () => "") => ({
  ...w.io,
  err: (l: string) => void progress.push(l),
  ask,
  open,
});

describe("PKCE", () => {
  test("S256 challenge is BASE64URL(SHA-256(verifier)) of a 43-character verifier (RFC 7636 appendix B)", () => {
    expect(challengeOf("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk")).toBe("E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM");
    const p = createPkce();
    expect(p.verifier).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(p.challenge).toBe(createHash("sha256").update(p.verifier).digest("base64url"));
    expect(createPkce().verifier).not.toBe(p.verifier);
  });

  test("a pasted Anthropic code splits into code and state; a pasted callback URL works too", () => {
    expect(parsePastedCode("  abc#xyz \n")).toEqual({ code: "abc", state: "xyz" });
    expect(parsePastedCode("abc")).toEqual({ code: "abc" });
    expect(parsePastedCode("http://localhost:1455/auth/callback?code=c1&state=s1")).toEqual({ code: "c1", state: "s1" });
  });

  test("authorize URLs carry what each vendor's CLI sends", () => {
    const s = { authorizeUrl: "https://auth.example/oauth/authorize", tokenUrl: "x", clientId: "cid", scopes: ["a", "b"], redirectUri: "r" };
    const cc = new URL(authorizeUrl("claude-code", s, { challenge: "ch", state: "st", redirectUri: "https://cb" }));
    expect(Object.fromEntries(cc.searchParams)).toEqual({
      code: "true", response_type: "code", client_id: "cid", redirect_uri: "https://cb", scope: "a b", code_challenge: "ch", code_challenge_method: "S256", state: "st",
    });
    const cx = new URL(authorizeUrl("codex", s, { challenge: "ch", state: "st", redirectUri: "http://localhost:1455/auth/callback" }));
    expect(cx.searchParams.get("id_token_add_organizations")).toBe("true");
    expect(cx.searchParams.get("codex_cli_simplified_flow")).toBe("true");
    expect(cx.searchParams.get("originator")).toBe("codex_cli_rs");
    expect(cx.searchParams.get("code")).toBeNull();
  });
});

describe("switchyard login", () => {
  test("codex: local callback listener, form-encoded exchange with a matching verifier, account stored and serving", async () => {
    w.vendor.seed({ name: "alice", email: "alice@example.com", chatgptAccountId: "acct-alice", models: ["gpt-5-codex"] });
    const before = w.vendor.exchanges.length;
    // The "browser": follows the authorize URL, whose redirect lands on the CLI's callback listener.
    let page = "";
    await loginCommand("codex", {}, w.call, ioWith(async (url) => void (page = await (await fetch(url)).text())));
    expect(w.out.at(-1)).toContain("account cx-alice (provider cx) added");
    expect(page).toContain("<h1>Logged in</h1>");

    const auth = w.vendor.authorizeRequests.at(-1)!;
    const ex = w.vendor.exchanges[before];
    expect(ex.encoding).toBe("form");
    expect(auth.code_challenge_method).toBe("S256");
    expect(createHash("sha256").update(ex.verifier).digest("base64url")).toBe(auth.code_challenge);
    expect(auth.redirect_uri).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/auth\/callback$/);
    expect(auth.redirect_uri).not.toContain(":0/");
    expect(ex.redirectUri).toBe(auth.redirect_uri);
    expect(auth.client_id).toBe("test-codex-client");

    const stored = await w.gw.app.store.getAccount("cx-alice");
    expect(stored?.providerId).toBe("cx");
    expect(stored?.credential.type).toBe("oauth");
    const cred = stored!.credential as { type: "oauth"; accessToken: string; refreshToken?: string; accountId?: string; expiresAt?: number };
    expect(w.vendor.loginOf(cred.accessToken)).toBe("alice");
    expect(cred.refreshToken).toMatch(/^rt-alice-/);
    expect(cred.accountId).toBe("acct-alice");
    expect(cred.expiresAt! - Date.now()).toBeGreaterThan(3500_000);
    expect(dbMode(w.gw.dataDir)).toBe(0o600);
    // No token in what the CLI printed.
    for (const line of [...w.out, ...progress]) {
      expect(line).not.toContain(cred.accessToken);
      expect(line).not.toContain(cred.refreshToken!);
    }

    const res = await fetch(`${w.gw.url}/v1/responses`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "cx/gpt-5-codex", input: "hi", stream: false }),
    });
    expect(res.status).toBe(200);
    const sent = w.upstream.requests.at(-1)!;
    expect(sent.path).toBe("/responses");
    expect(sent.headers["chatgpt-account-id"]).toBe("acct-alice");
    expect(sent.headers.authorization).toBe(`Bearer ${cred.accessToken}`);
  });

  test("codex: the browser's page waits for the code exchange and says when it failed (it said 'Logged in' first)", async () => {
    w.vendor.seed({ name: "dave", models: ["gpt-5-codex"] });
    let shown: { status: number; text: string } | undefined;
    // the "browser" follows the authorize URL by hand and brings back a code the vendor never issued
    const browser = async (url: string) => {
      const redirect = (await fetch(url, { redirect: "manual" })).headers.get("location")!;
      const back = new URL(redirect);
      back.searchParams.set("code", "code-never-issued");
      const page = await fetch(back);
      shown = { status: page.status, text: await page.text() };
    };
    await expect(loginCommand("codex", { account: "cx-dave" }, w.call, ioWith(browser))).rejects.toThrow(/unknown code/);
    expect(shown!.status).toBe(502);
    expect(shown!.text).toContain("<h1>Login failed</h1>");
    expect(shown!.text).toContain("could not exchange the login's code for tokens (");
    expect(shown!.text).toContain("unknown code");
    expect(shown!.text).not.toContain("Logged in");
  });

  test("claude-code: the code is pasted (CODE#STATE), JSON exchange with state and verifier, account named after the e-mail", async () => {
    w.vendor.seed({ name: "bob", email: "Bob.Smith@example.com", models: ["claude-sonnet-4-5-20250929"] });
    let shown = "";
    await loginCommand(
      "claude-code",
      {},
      w.call,
      ioWith(async (url) => void (shown = await (await fetch(url)).text()), async () => shown),
    );
    expect(w.out.at(-1)).toContain("account cc-bob.smith (provider cc) added");
    const auth = w.vendor.authorizeRequests.at(-1)!;
    expect(auth.code).toBe("true");
    const ex = w.vendor.exchanges.at(-1)!;
    expect(ex.encoding).toBe("json");
    expect(ex.state).toBe(auth.state);
    expect(createHash("sha256").update(ex.verifier).digest("base64url")).toBe(auth.code_challenge);
    const stored = await w.gw.app.store.getAccount("cc-bob.smith");
    expect(stored?.providerId).toBe("cc");

    const res = await fetch(`${w.gw.url}/v1/messages`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "cc/claude-sonnet-4-5", max_tokens: 50, messages: [{ role: "user", content: "hi" }] }),
    });
    expect(res.status).toBe(200);
  });

  test("--account names the account; a code pasted from another login is refused", async () => {
    w.vendor.seed({ name: "carol", models: ["m"] });
    await expect(
      loginCommand("claude-code", { account: "cc-team" }, w.call, ioWith(async (url) => void (await fetch(url)).text(), async () => "code-x#someone-elses-state")),
    ).rejects.toThrow(/state mismatch/);
    let shown = "";
    await loginCommand("claude-code", { account: "cc-team" }, w.call, ioWith(async (url) => void (shown = await (await fetch(url)).text()), async () => shown));
    expect(w.out.at(-1)).toContain("account cc-team (provider cc) added");
  });

  test("the admin endpoint validates its body and refuses non-subscription providers", async () => {
    await expect(w.call("POST", "/accounts", { provider: "cx", credential: { type: "oauth" } })).rejects.toThrow(/400.*access_token/);
    await expect(w.call("POST", "/accounts", { provider: "cx", id: "bad id!", credential: { type: "oauth", access_token: "x" } })).rejects.toThrow(/400/);
    await expect(w.call("POST", "/accounts", { provider: "openai", credential: { type: "oauth", access_token: "x" } })).rejects.toThrow(/404/);
    await expect(loginCommand("gemini", {}, w.call, ioWith(async () => {}))).rejects.toThrow(/usage/);
  });
});
