/**
 * A token endpoint that cannot be reached (SPEC P-7, P-9): the error names the host and the cause (a
 * DNS failure, a refused connection, a timeout), so that `switchyard login` with no network says more
 * than "the token endpoint could not be reached" (team-operator tryout, session 37). No secret of the
 * request (code, verifier, refresh token) and no path or query of the URL is in it.
 */
import { afterAll, describe, expect, test } from "bun:test";
import type { Socket } from "bun";
import { exchangeCode, OAuthError, refreshTokens } from "../../src/oauth/protocol.ts";
import { runLogin } from "../../src/oauth/login.ts";

const settings = (tokenUrl: string) => ({ authorizeUrl: "https://auth.example/oauth/authorize", tokenUrl, clientId: "cid", scopes: ["openid"], redirectUri: "https://cb.example/callback" });
const secrets = { code: "code-SECRET-1", verifier: "verifier-SECRET-2", redirectUri: "https://cb.example/callback" };

/** A fetch that fails as Bun's does on a machine with no network or name server (getaddrinfo EAI_AGAIN). */
const noNetwork = (async (input: Request | string | URL) => {
  const host = new URL(input instanceof Request ? input.url : String(input)).hostname;
  throw Object.assign(new TypeError(`getaddrinfo EAI_AGAIN ${host}`), { code: "EAI_AGAIN", errno: -3001 });
}) as unknown as typeof fetch;

async function failure(p: Promise<unknown>): Promise<OAuthError> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(OAuthError);
    return e as OAuthError;
  }
  throw new Error("the token call succeeded");
}

// a TCP listener that accepts and never answers (a token endpoint that hangs)
const held: Socket[] = [];
const silent = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { open: (s) => void held.push(s), data() {} } });
afterAll(() => {
  for (const s of held) s.end();
  silent.stop(true);
});

describe("a token endpoint that cannot be reached", () => {
  test("no network: the login's exchange names the host and says the DNS lookup failed", async () => {
    const e = await failure(exchangeCode("codex", settings("https://auth.openai.com/oauth/token?x=query-SECRET-3"), secrets, { fetchImpl: noNetwork }));
    expect(e.message).toBe("the token endpoint could not be reached (auth.openai.com: DNS lookup failed (EAI_AGAIN: no network or no DNS server))");
    expect(e.permanent).toBe(false);
  });

  test("a refused connection names host and port; a refresh says the same", async () => {
    const closed = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("") });
    const port = closed.port;
    await closed.stop(true);
    const url = `http://127.0.0.1:${port}/v1/oauth/token`;
    const e = await failure(exchangeCode("claude-code", settings(url), secrets));
    expect(e.message).toBe(`the token endpoint could not be reached (127.0.0.1:${port}: connection refused (ECONNREFUSED))`);
    const r = await failure(refreshTokens("codex", settings(url), "rt-SECRET-4"));
    expect(r.message).toBe(e.message);
    for (const m of [e.message, r.message]) expect(m).not.toMatch(/SECRET|\/v1\/oauth/);
  });

  test("an endpoint that never answers: the call's timeout says so, with the host", async () => {
    const url = `http://127.0.0.1:${silent.port}/oauth/token`;
    const e = await failure(exchangeCode("codex", settings(url), secrets, { signal: AbortSignal.timeout(300) }));
    expect(e.message).toBe(`the token endpoint (127.0.0.1:${silent.port}) did not answer in time`);
  });

  test("switchyard login with no network: the pasted code's exchange fails naming the host and the cause", async () => {
    const said: string[] = [];
    const login = runLogin({
      kind: "claude-code",
      settings: settings("https://console.anthropic.com/v1/oauth/token"),
      io: { say: (l) => void said.push(l), ask: async () => "code-SECRET-5" },
      fetchImpl: noNetwork,
    });
    const e = await failure(login);
    expect(e.message).toBe("the token endpoint could not be reached (console.anthropic.com: DNS lookup failed (EAI_AGAIN: no network or no DNS server))");
    expect(said.join("\n")).not.toContain("SECRET");
  });
});
