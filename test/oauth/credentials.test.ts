/**
 * The credential manager's rules (SPEC A-5, P-7) against a scripted token endpoint, with short
 * timings: coalescing, the grace window, persistence before use, quarantine on a rejected refresh
 * token, the refresh timeout and the backoff of temporary failures.
 *
 * The manager's clock (grace window, backoff, expiry) stands still unless a test moves it, and a token
 * call is cut only where a test asks for it (the hanging endpoint): on a loaded machine a 30 ms answer
 * took over 200 ms, was cut by a 200 ms timeout and retried, and the wall clock left the grace window.
 */
import { describe, expect, test } from "bun:test";
import { CredentialManager, type CredentialDeps } from "../../src/accounts/credentials.ts";
import type { Account, Credential } from "../../pipeline/ports.ts";
import type { Quarantine } from "../../src/store/types.ts";

/** The manager's clock: `now` moves only by {@link advance}. */
let now = Date.now();
const clock = { now: () => now, sleep: (ms: number) => Bun.sleep(ms) };
const advance = (ms: number) => void (now += ms);
const settings = { authorizeUrl: "http://x/a", tokenUrl: "http://oauth.test/token", clientId: "cid", scopes: ["s"], redirectUri: "http://x/cb" };

function account(over: Partial<Extract<Credential, { type: "oauth" }>> = {}, source: Account["source"] = "db"): Account {
  return { id: "acct", providerId: "cc", priority: 0, disabled: false, source, credential: { type: "oauth", accessToken: "at-0", refreshToken: "rt-0", expiresAt: now + 3600_000, ...over } };
}

/** A token endpoint answering from a script; records what happened, in order. */
function harness(answer: (n: number) => Response | Promise<Response>, timings: CredentialDeps["timings"] = {}) {
  const events: string[] = [];
  const quarantined: Quarantine[] = [];
  let n = 0;
  const fetchImpl = (async (_url: string, init: RequestInit) => {
    n++;
    const body = typeof init.body === "string" ? init.body : new TextDecoder().decode(init.body as Uint8Array);
    events.push(`token call ${JSON.parse(body).refresh_token}`);
    return answer(n);
  }) as unknown as typeof fetch;
  const m = new CredentialManager({
    store: {
      updateCredential: (id: string, c: Credential) => void events.push(`persist ${id} ${(c as { refreshToken?: string }).refreshToken}`),
      quarantine: (q: Quarantine) => void quarantined.push(q),
    },
    clock,
    oauthOf: () => ({ kind: "claude-code", settings }),
    reload: () => void events.push("reload"),
    fetchImpl,
    timings: { retryBaseMs: 5, graceMs: 1000, backoffBaseMs: 200, refreshTimeoutMs: 60_000, ...timings },
  });
  return { m, events, quarantined, calls: () => n };
}

const ok = (i: number) => Response.json({ access_token: `at-${i}`, refresh_token: `rt-${i}`, expires_in: 3600 });

describe("CredentialManager", () => {
  test("concurrent refreshes of one account share one token call; later ones within the grace window reuse it", async () => {
    const h = harness(async (i) => (await Bun.sleep(30), ok(i)));
    const a = account();
    const results = await Promise.all(Array.from({ length: 20 }, () => h.m.refresh(a)));
    expect(results.every(Boolean)).toBe(true);
    expect(await h.m.refresh(a)).toBe(true);
    expect(h.calls()).toBe(1);
    expect(h.m.current(a)).toEqual({ type: "oauth", accessToken: "at-1", refreshToken: "rt-1", expiresAt: expect.any(Number) });
    // Once the grace window (1 s) has passed, a refresh calls the token endpoint again.
    advance(999);
    expect(await h.m.refresh(a)).toBe(true);
    expect(h.calls()).toBe(1);
    advance(1);
    expect(await h.m.refresh(a)).toBe(true);
    expect(h.calls()).toBe(2);
  });

  test("a 401 on the token a refresh replaced reuses it; a 401 on the current token refreshes again at once (P-7)", async () => {
    const h = harness(ok);
    const a = account({ expiresAt: now + 60_000 }); // within 5 minutes: proactive refresh
    const old = a.credential;
    const fresh = await h.m.ensureFresh(a);
    expect((fresh as { accessToken: string }).accessToken).toBe("at-1");
    expect(h.calls()).toBe(1);
    // A request that left with at-0 before the refresh: retried with at-1, no token call.
    expect(await h.m.refresh(a, old)).toBe(true);
    expect(h.calls()).toBe(1);
    // at-1 itself is rejected (revoked right after it was issued): a new refresh, well inside the grace window.
    expect(await h.m.refresh(a, fresh)).toBe(true);
    expect(h.calls()).toBe(2);
    expect((h.m.current(a) as { accessToken: string }).accessToken).toBe("at-2");
  });

  test("the rotated refresh token is persisted before the new access token becomes current", async () => {
    const h = harness(ok);
    const a = account({ expiresAt: now + 60_000 }); // within 5 minutes: proactive
    const c = await h.m.ensureFresh(a);
    expect((c as { accessToken: string }).accessToken).toBe("at-1");
    expect(h.events).toEqual(["token call rt-0", "persist acct rt-1", "reload"]);
  });

  test("a config-file account is refreshed in memory only (the store cannot hold it)", async () => {
    const h = harness(ok);
    const a = account({ expiresAt: now - 1000 }, "config");
    expect(((await h.m.ensureFresh(a)) as { accessToken: string }).accessToken).toBe("at-1");
    expect(h.events).toEqual(["token call rt-0"]);
    // A new object for the same config credential (periodic re-read) still gets the refreshed one.
    expect((h.m.current({ ...a }) as { accessToken: string }).accessToken).toBe("at-1");
  });

  test("version changes when a refreshed credential is adopted or forgotten (the app's secret list is rebuilt then)", async () => {
    const h = harness(ok);
    const a = account({ expiresAt: now - 1000 }, "config");
    const v0 = h.m.version;
    await h.m.ensureFresh(a);
    const v1 = h.m.version;
    expect(v1).not.toBe(v0);
    expect(h.m.version).toBe(v1); // reading does not change it
    h.m.forget(a.id);
    expect(h.m.version).not.toBe(v1);
  });

  test("invalid_grant quarantines the credential's fingerprint and is not retried", async () => {
    const h = harness(() => Response.json({ error: "invalid_grant", error_description: "Refresh token not found or invalid" }, { status: 400 }));
    const a = account();
    expect(await h.m.refresh(a)).toBe(false);
    expect(h.calls()).toBe(1);
    expect(h.quarantined).toEqual([expect.objectContaining({ accountId: "acct", reason: expect.stringContaining("invalid_grant") })]);
    expect(h.quarantined[0].fingerprint).toMatch(/^[0-9a-f]{64}$/);
    expect(await h.m.refresh(a)).toBe(false);
    expect(h.calls()).toBe(1);
    expect(h.m.lastOutcome("acct")?.kind).toBe("rejected");
  });

  test("a hanging token endpoint times out; temporary failures are retried within the round, then back off", async () => {
    const h = harness(() => new Promise<Response>(() => {}), { refreshTimeoutMs: 50, retries: 1 });
    const a = account();
    expect(await h.m.refresh(a)).toBe(false);
    expect(h.calls()).toBe(2);
    const o = h.m.lastOutcome("acct");
    expect(o).toMatchObject({ kind: "temporary", reason: "the token endpoint did not answer in time" });
    expect(o?.kind === "temporary" && o.retryAt - now).toBe(200); // the first backoff: backoffBaseMs
    // Backing off: no call until retryAt; at retryAt a new round (two calls again).
    advance(199);
    expect(await h.m.refresh(a)).toBe(false);
    expect(h.calls()).toBe(2);
    advance(1);
    expect(await h.m.refresh(a)).toBe(false);
    expect(h.calls()).toBe(4);
    expect(h.quarantined).toEqual([]);
  });

  test("5xx is temporary, 401 without a code is a rejection; no refresh token means nothing to try", async () => {
    const t = harness(() => new Response("oops", { status: 502 }), { retries: 0 });
    expect(await t.m.refresh(account())).toBe(false);
    expect(t.m.lastOutcome("acct")?.kind).toBe("temporary");
    const r = harness(() => new Response("no", { status: 401 }));
    expect(await r.m.refresh(account())).toBe(false);
    expect(r.m.lastOutcome("acct")?.kind).toBe("rejected");
    const none = harness(ok);
    expect(await none.m.refresh(account({ refreshToken: undefined }))).toBe(false);
    expect(none.calls()).toBe(0);
    expect(none.m.lastOutcome("acct")?.kind).toBe("no_refresh_token");
  });

  test("errors never carry a token", async () => {
    const h = harness(() => Response.json({ error: "invalid_grant", error_description: "bad" }, { status: 400 }));
    await h.m.refresh(account({ refreshToken: "rt-super-secret" }));
    expect(JSON.stringify(h.quarantined)).not.toContain("rt-super-secret");
  });

  test("a token endpoint that quotes the refresh token in its error text: the token leaves the reason everywhere it goes (newuser15 N1)", async () => {
    const secret = "rt_FULLREFRESHSECRET_0123456789abcdef";
    // invalid_grant: the quarantine reason (log line, store, accounts API, alerts) and the trace's token call
    const rejecting = harness(() => Response.json({ error: "invalid_grant", error_description: `Refresh token ${secret} is revoked` }, { status: 400 }));
    const outcome = await rejecting.m.refreshReport(account({ refreshToken: secret }));
    expect(rejecting.quarantined).toEqual([expect.objectContaining({ reason: "refresh token rejected by the provider: the token endpoint answered 400 (invalid_grant: Refresh token [redacted] is revoked)" })]);
    expect(JSON.stringify(rejecting.m.lastOutcome("acct"))).not.toContain(secret);
    expect(JSON.stringify(outcome)).not.toContain(secret);
    expect(JSON.stringify(outcome)).toContain("Refresh token [redacted] is revoked");
    // a temporary failure: the refresh state the accounts API shows
    const failing = harness(() => Response.json({ error: { code: "server_error", message: `could not rotate ${secret}` } }, { status: 503 }), { retries: 0 });
    await failing.m.refresh(account({ refreshToken: secret }));
    const last = failing.m.lastOutcome("acct");
    expect(last).toEqual(expect.objectContaining({ kind: "temporary", reason: "the token endpoint answered 503 (server_error: could not rotate [redacted])" }));
    // a token the 160-character cut would split, and one in the error code (review15 R5)
    const long = harness(() => Response.json({ error: `bad_${secret}`, error_description: `${"x".repeat(140)} ${secret}` }, { status: 400 }));
    await long.m.refresh(account({ refreshToken: secret }));
    const said = JSON.stringify(long.m.lastOutcome("acct"));
    expect(said).not.toContain(secret.slice(0, 12));
    expect(said).toContain("bad_[redacted]");
  });
});
