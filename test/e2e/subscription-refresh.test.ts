/**
 * OAuth credential recovery of subscription accounts (SPEC A-5, 6.2, 6.3, P-7) through the real
 * gateway, a fake OAuth server and a fake subscription API: proactive refresh before expiry, one
 * coalesced refresh however many requests saw the 401, rotated refresh tokens persisted before use
 * (across a SIGKILL), rejected refresh tokens quarantined across restarts until a new import, and
 * temporary refresh failures backing off while another account serves.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startInstance, stopInstance, type Instance } from "../support/instance.ts";
import { importCommand } from "../../src/cli/import.ts";
import { startFakeUpstream } from "../support/fake-upstream.ts";
import { claudeCodePools, startFakeVendor, vendorProviders } from "../oauth/fake-oauth.ts";
import { adminCall, startWorld, until, type SubscriptionWorld } from "../oauth/helpers.ts";
import { traceLines } from "../../src/cli/calls.ts";
import type { RouteTrace } from "../../pipeline/ports.ts";

const messages = (model: string) => ({ model, max_tokens: 30, messages: [{ role: "user", content: "hi" }] });
async function post(url: string, body: unknown): Promise<Response> {
  return fetch(`${url}/v1/messages`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
}

/** A second claude-code pool on the same fake vendor, so scenarios do not share accounts. */
const POOLS = (vendorUrl: string) => claudeCodePools(vendorUrl, "ccq", "cct", "ccr", "cce", "cch");

let w: SubscriptionWorld;
beforeAll(async () => {
  w = await startWorld(POOLS);
});
afterAll(async () => {
  await w?.stop();
});

async function addAccount(world: SubscriptionWorld, body: Record<string, unknown>) {
  return world.call("POST", "/accounts", body) as Promise<{ id: string; unquarantined: boolean }>;
}

describe("refresh", () => {
  test("A-5: a token expiring within 5 minutes is refreshed before the call; the call uses the new token", async () => {
    const t = w.vendor.seed({ name: "pro", models: ["claude-x"] });
    // (The discovery a new account starts may be the one that refreshes first: either way, one refresh.)
    const calls0 = w.vendor.refreshCalls.length;
    await addAccount(w, { provider: "cc", id: "cc-pro", credential: { type: "oauth", access_token: t.accessToken, refresh_token: t.refreshToken, expires_at: Date.now() + 120_000 } });
    const res = await post(w.gw.url, messages("cc/claude-x"));
    expect(res.status).toBe(200);
    expect(w.vendor.refreshCalls.slice(calls0)).toEqual([t.refreshToken]);
    const sent = w.vendor.calls.filter((c) => c.path.startsWith("/v1/messages")).at(-1)!;
    expect(sent.login).toBe("pro");
    expect(sent.token).not.toBe(t.accessToken);
    const stored = (await w.gw.app.store.getAccount("cc-pro"))!.credential as { accessToken: string; refreshToken: string; expiresAt: number };
    expect(stored.accessToken).toBe(sent.token);
    expect(stored.refreshToken).not.toBe(t.refreshToken);
    expect(stored.expiresAt - Date.now()).toBeGreaterThan(3000_000);
    // A token far from expiry is not refreshed.
    expect((await post(w.gw.url, messages("cc/claude-x"))).status).toBe(200);
    expect(w.vendor.refreshCalls.length).toBe(calls0 + 1);
  });

  test("P-7: 50 concurrent requests that all see a 401 cause exactly one refresh call, then all succeed", async () => {
    const t = w.vendor.seed({ name: "many", models: ["claude-y"] });
    await addAccount(w, { provider: "cct", id: "cct-many", max_concurrency: 64, credential: { type: "oauth", access_token: t.accessToken, refresh_token: t.refreshToken, expires_at: Date.now() + 3600_000 } });
    w.vendor.revokeAccess(t.accessToken);
    w.vendor.refreshDelayMs = 150;
    const calls0 = w.vendor.refreshCalls.length;
    const first401 = w.vendor.calls.length;
    // Every 401 is held until all 50 requests have arrived with the revoked token, so all 50 really
    // see it however slowly the machine dispatches them (else the first refresh may start before the
    // last requests are sent, and they would simply join it).
    let arrived = 0;
    const allArrived = Promise.withResolvers<void>();
    w.vendor.onCall = async (call) => {
      if (!call.path.startsWith("/v1/messages") || call.token !== t.accessToken) return undefined;
      if (++arrived === 50) allArrived.resolve();
      await Promise.race([allArrived.promise, Bun.sleep(10_000)]);
      return undefined;
    };
    try {
      const results = await Promise.all(Array.from({ length: 50 }, () => post(w.gw.url, messages("cct/claude-y"))));
      expect(results.map((r) => r.status)).toEqual(Array(50).fill(200));
    } finally {
      w.vendor.refreshDelayMs = 0;
      w.vendor.onCall = undefined;
    }
    expect(w.vendor.refreshCalls.length - calls0).toBe(1);
    const seen = w.vendor.calls.slice(first401).filter((c) => c.path.startsWith("/v1/messages"));
    expect(seen.filter((c) => c.token === t.accessToken).length).toBe(50); // all 50 really saw the 401
    expect(seen.filter((c) => c.login === "many").length).toBe(50);
  });

  test("P-7: a token revoked right after a proactive refresh: 20 parallel requests cause exactly one more refresh and all 20 are answered", async () => {
    const t = w.vendor.seed({ name: "rotated", models: ["claude-r"] });
    const calls0 = w.vendor.refreshCalls.length;
    await addAccount(w, { provider: "ccr", id: "ccr-1", max_concurrency: 32, credential: { type: "oauth", access_token: t.accessToken, refresh_token: t.refreshToken, expires_at: Date.now() + 120_000 } });
    // the first request refreshes before the call (the token expires within 5 minutes).
    expect((await post(w.gw.url, messages("ccr/claude-r"))).status).toBe(200);
    expect(w.vendor.refreshCalls.length - calls0).toBe(1);
    const proactive = w.vendor.calls.filter((c) => c.path.startsWith("/v1/messages")).at(-1)!.token;
    expect(proactive).not.toBe(t.accessToken);
    // The fresh token is revoked upstream (a login elsewhere) well inside the 30 s after its refresh.
    w.vendor.revokeAccess(proactive!);
    w.vendor.refreshDelayMs = 100;
    const before = w.vendor.calls.length;
    try {
      const results = await Promise.all(Array.from({ length: 20 }, () => post(w.gw.url, messages("ccr/claude-r"))));
      expect(results.map((r) => r.status)).toEqual(Array(20).fill(200));
      const bodies = (await Promise.all(results.map((r) => r.json()))) as Array<{ content: Array<{ type: string }> }>;
      expect(bodies.every((b) => b.content[0]?.type === "text")).toBe(true);
    } finally {
      w.vendor.refreshDelayMs = 0;
    }
    expect(w.vendor.refreshCalls.length - calls0).toBe(2);
    const seen = w.vendor.calls.slice(before).filter((c) => c.path.startsWith("/v1/messages"));
    expect(seen.filter((c) => c.token === proactive).length).toBeGreaterThanOrEqual(1); // the 401s really happened
    expect(seen.filter((c) => c.token !== proactive && c.login === "rotated").length).toBe(20);
    // Not quarantined: the account keeps serving.
    const st = (await w.call("GET", "/accounts")) as { accounts: Array<{ id: string; reasons: string[] }> };
    expect(st.accounts.find((a) => a.id === "ccr-1")!.reasons.some((r) => r.includes("quarantined"))).toBe(false);
  });

  test("6.3/P-7: a refresh token the provider rejects quarantines the credential; it survives a restart; a new import lifts it", async () => {
    const dead = w.vendor.seed({ name: "gone", models: ["claude-z"] });
    w.vendor.revokeAccess(dead.accessToken);
    w.vendor.revokeRefresh(dead.refreshToken);
    await addAccount(w, { provider: "ccq", id: "ccq-1", credential: { type: "oauth", access_token: dead.accessToken, refresh_token: dead.refreshToken, expires_at: Date.now() + 3600_000 } });
    const calls0 = w.vendor.refreshCalls.length;
    const res = await post(w.gw.url, messages("ccq/claude-z"));
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(w.vendor.refreshCalls.slice(calls0)).toEqual([dead.refreshToken]);
    const quarantined = async (world: SubscriptionWorld) => {
      const st = (await world.call("GET", "/accounts")) as { accounts: Array<{ id: string; reasons: string[] }> };
      return st.accounts.find((a) => a.id === "ccq-1")!.reasons.some((r) => r.includes("quarantined"));
    };
    await until(() => quarantined(w));
    // Quarantined: the next request does not touch the account (no call, no refresh).
    const apiCalls = w.vendor.calls.length;
    expect((await post(w.gw.url, messages("ccq/claude-z"))).status).toBe(503);
    expect(w.vendor.calls.length).toBe(apiCalls);
    expect(w.vendor.refreshCalls.length).toBe(calls0 + 1);

    // Restart on the same data directory: still quarantined.
    const dataDir = w.gw.dataDir;
    await w.gw.stopGatewayOnly();
    const w2 = await startWorld(POOLS(w.vendor.url), { dataDir, upstream: w.upstream, vendor: w.vendor });
    const old = w;
    w = w2;
    void old;
    expect(await quarantined(w)).toBe(true);
    expect((await post(w.gw.url, messages("ccq/claude-z"))).status).toBe(503);
    expect(w.vendor.refreshCalls.length).toBe(calls0 + 1);

    // Re-adding the very same credential lifts its quarantine (the user says it is good again) …
    expect((await addAccount(w, { provider: "ccq", id: "ccq-1", credential: { type: "oauth", access_token: dead.accessToken, refresh_token: dead.refreshToken } })).unquarantined).toBe(true);
    // … and a new import with a fresh login serves at once.
    const fresh = w.vendor.seed({ name: "gone", models: ["claude-z"] });
    await addAccount(w, { provider: "ccq", id: "ccq-1", origin: "import", credential: { type: "oauth", access_token: fresh.accessToken, refresh_token: fresh.refreshToken, expires_at: Date.now() + 3600_000 } });
    expect(await quarantined(w)).toBe(false);
    expect((await post(w.gw.url, messages("ccq/claude-z"))).status).toBe(200);
  });

  test("P-7: a temporary refresh failure backs off (no quarantine) while another account of the pool serves", async () => {
    const a = w.vendor.seed({ name: "flaky", models: ["claude-w"] });
    const b = w.vendor.seed({ name: "steady", models: ["claude-w"] });
    await addAccount(w, { provider: "cc", id: "cc-flaky", priority: -10, credential: { type: "oauth", access_token: a.accessToken, refresh_token: a.refreshToken, expires_at: Date.now() + 3600_000 } });
    await addAccount(w, { provider: "cc", id: "cc-steady", priority: 10, credential: { type: "oauth", access_token: b.accessToken, refresh_token: b.refreshToken, expires_at: Date.now() + 3600_000 } });
    w.vendor.revokeAccess(a.accessToken);
    w.vendor.scriptRefresh({ status: 503, body: { error: "temporarily_unavailable" } }, { status: 503, body: { error: "temporarily_unavailable" } }, { status: 503, body: { error: "temporarily_unavailable" } });
    const calls0 = w.vendor.refreshCalls.length;
    const res = await post(w.gw.url, messages("cc/claude-w"));
    expect(res.status).toBe(200);
    expect(w.vendor.refreshCalls.length - calls0).toBe(3); // one round: the call and two scheduled retries
    const served = w.vendor.calls.filter((c) => c.path.startsWith("/v1/messages")).at(-1)!;
    expect(served.login).toBe("steady");
    const st = (await w.call("GET", "/accounts")) as { accounts: Array<{ id: string; reasons: string[]; cooldowns: Array<{ reason: string }> }> };
    const flaky = st.accounts.find((x) => x.id === "cc-flaky")!;
    expect(flaky.reasons.some((r) => r.includes("quarantined"))).toBe(false);
    expect(flaky.reasons.join(" ")).toContain("credential refresh failed temporarily");
    // Backing off: the next request neither refreshes nor tries the flaky account.
    expect((await post(w.gw.url, messages("cc/claude-w"))).status).toBe(200);
    expect(w.vendor.refreshCalls.length - calls0).toBe(3);
  });
});

describe("a temporary refresh failure with no other account", () => {
  test("P-7: the client hears that the refresh failed for a while and when it is tried again (503 with Retry-After), not that the keys need attention", async () => {
    const a = w.vendor.seed({ name: "alone", models: ["claude-e"] });
    await addAccount(w, { provider: "cce", id: "cce-1", credential: { type: "oauth", access_token: a.accessToken, refresh_token: a.refreshToken, expires_at: Date.now() + 3600_000 } });
    w.vendor.revokeAccess(a.accessToken);
    w.vendor.scriptRefresh({ status: 503, body: { error: "temporarily_unavailable" } }, { status: 503, body: { error: "temporarily_unavailable" } }, { status: 503, body: { error: "temporarily_unavailable" } });
    const res = await post(w.gw.url, messages("cce/claude-e"));
    const body = (await res.json()) as { error: { type: string; message: string } };
    const retryAfter = Number(res.headers.get("retry-after"));
    expect({ status: res.status, type: body.error.type, hasRetryAfter: retryAfter >= 1 }).toEqual({ status: 503, type: "api_error", hasRetryAfter: true });
    expect(body.error.message).toMatch(/^No account of cce could refresh its subscription credential: the token refresh failed temporarily \(.+\), which usually passes; switchyard tries again after \d{4}-\d\d-\d\dT.+Z\. This is not about the key you sent to switchyard\.$/);
    expect(body.error.message).not.toContain("need attention");
    // The trace shows the refresh's three token calls (its 1.5 s were unexplained there) and that the
    // account was given up on.
    const trace = (await w.call("GET", `/route-traces/${res.headers.get("x-switchyard-route-id")}`)) as RouteTrace;
    const refresh = trace.attempts[0]!.refresh!;
    expect({ ok: refresh.ok, statuses: refresh.calls.map((c) => c.status) }).toEqual({ ok: false, statuses: [503, 503, 503] });
    expect(refresh.note).toMatch(/^refresh failed temporarily \(.+; 3 token calls\); no token call until \d{4}-/);
    expect(trace.attempts[0]!.effect).toBe(`credential rejected; ${refresh.note}; next_account`);
    expect(refresh.waitedMs).toBeGreaterThanOrEqual(refresh.calls.reduce((n, c) => n + c.durationMs, 0) - 5);
    expect(refresh.calls.every((c, i) => c.startMs >= 0 && (i === 0 || c.startMs >= refresh.calls[i - 1]!.startMs + refresh.calls[i - 1]!.durationMs - 1))).toBe(true);
  });
});

describe("the route trace of a refresh", () => {
  test("6.2/P-7: a 401, a token refresh and a retry on the same account read so in the trace (the token call, how long it took) and are no fallback, each time", async () => {
    const t = w.vendor.seed({ name: "traced", models: ["claude-h"] });
    await addAccount(w, { provider: "cch", id: "cch-1", credential: { type: "oauth", access_token: t.accessToken, refresh_token: t.refreshToken, expires_at: Date.now() + 3600_000 } });
    // Twice: the token in use is revoked upstream (a login elsewhere) before each request.
    let token = t.accessToken;
    const routeIds: string[] = [];
    w.vendor.refreshDelayMs = 40;
    try {
      for (let i = 0; i < 2; i++) {
        w.vendor.revokeAccess(token);
        const calls0 = w.vendor.refreshCalls.length;
        const res = await post(w.gw.url, messages("cch/claude-h"));
        expect(res.status).toBe(200);
        expect(res.headers.get("x-switchyard-fallback")).toBeNull();
        expect(w.vendor.refreshCalls.length - calls0).toBe(1);
        token = w.vendor.calls.filter((c) => c.path.startsWith("/v1/messages")).at(-1)!.token;
        routeIds.push(res.headers.get("x-switchyard-route-id")!);
        const trace = (await w.call("GET", `/route-traces/${routeIds.at(-1)}`)) as RouteTrace;
        expect(trace.attempts.map((a) => [a.accountId, a.status])).toEqual([["cch-1", 401], ["cch-1", 200]]);
        const first = trace.attempts[0]!;
        expect(first.effect).toBe("credential rejected; token refreshed (1 token call); retrying the same account");
        expect({ ok: first.refresh!.ok, calls: first.refresh!.calls.length, error: first.refresh!.calls[0]!.error }).toEqual({ ok: true, calls: 1, error: undefined });
        expect(first.refresh!.calls[0]!.durationMs).toBeGreaterThanOrEqual(35);
        expect(first.refresh!.waitedMs).toBeGreaterThanOrEqual(first.refresh!.calls[0]!.durationMs);
        // The second attempt starts after the refresh: the trace accounts for the time between them.
        expect(trace.attempts[1]!.startMs).toBeGreaterThanOrEqual(first.startMs + first.durationMs! + first.refresh!.waitedMs - 1);
        const lines = traceLines(trace).join("\n");
        expect(lines).toContain("401, started +");
        expect(lines).toMatch(/refresh: token refreshed \(1 token call\); waited \d+ ms; the same account is tried again\n\s+token call at \+\d+ ms: ok in \d+ ms/);
        expect(JSON.stringify(trace)).not.toContain(token);
      }
    } finally {
      w.vendor.refreshDelayMs = 0;
    }
    // Counted as no fallback anywhere: the calls list, usage and /metrics.
    const listed = async () => ((await w.call("GET", "/calls?account=cch-1")) as { calls: Array<{ routeId?: string; fallback?: boolean }> }).calls;
    await until(async () => (await listed()).length >= 2);
    expect((await listed()).map((c) => c.fallback ?? false)).toEqual([false, false]);
    const usage = (await w.call("GET", "/usage?by=account&account=cch-1")) as { rows: Array<{ requests: number; fallbacks: number }> };
    expect(usage.rows.map((r) => [r.requests, r.fallbacks])).toEqual([[2, 0]]);
    const metrics = await (await fetch(`${w.gw.url}/metrics`)).text();
    expect(metrics.split("\n").filter((l) => l.startsWith("switchyard_fallbacks_total") && l.includes('provider="cch"') && !l.endsWith(" 0"))).toEqual([]);
  });
});

describe("rotated refresh token across a SIGKILL", () => {
  let inst: Instance | undefined;
  afterAll(async () => {
    await stopInstance(inst, 1000);
  });

  test("the rotated refresh token is in the database before the new access token is used; after a kill the restarted instance uses it without refreshing", async () => {
    const upstream = await startFakeUpstream();
    const vendor = await startFakeVendor(upstream);
    try {
      const yaml = vendorProviders(vendor.url);
      inst = await startInstance({ yaml });
      const dataDir = inst.dataDir;
      const t = vendor.seed({ name: "kill", models: ["claude-k"] });
      // `switchyard import`'s command against the running instance, in this process: a CLI process
      // would be a third cold start of the source (test/e2e/cli-commands runs the CLI as a process
      // against an instance found through --data-dir).
      const file = join(mkdtempSync(join(tmpdir(), "sy-cred-")), ".credentials.json");
      writeFileSync(file, JSON.stringify({ claudeAiOauth: { accessToken: t.accessToken, refreshToken: t.refreshToken, expiresAt: Date.now() + 60_000, scopes: ["user:inference"], subscriptionType: "pro" } }));
      const printed: string[] = [];
      const io = { out: (l: string) => void printed.push(l), fail: (l: string | readonly string[]): never => { throw new Error(typeof l === "string" ? l : l.join("\n")); } };
      await importCommand("claude-code", { from: file, account: "cc-kill" }, adminCall(inst.url, inst.instance().adminToken), io);
      expect(printed.join("\n")).toContain("as account cc-kill (provider cc) added");

      let persistedAtUse: string | undefined;
      let killedAt = -1;
      vendor.onCall = (call) => {
        if (!call.path.startsWith("/v1/messages") || call.login !== "kill" || call.token === t.accessToken || killedAt >= 0) return undefined;
        // The first use of the new access token: read the database from outside, then kill the gateway.
        const db = new Database(join(dataDir, "switchyard.db"));
        const row = db.query("SELECT credential FROM accounts WHERE id = ?").get("cc-kill") as { credential: string };
        db.close();
        const cred = JSON.parse(row.credential) as { accessToken: string; refreshToken: string };
        persistedAtUse = cred.accessToken === call.token ? cred.refreshToken : "stale access token in the database";
        killedAt = vendor.refreshCalls.length;
        inst!.kill("SIGKILL");
        return new Response("gone", { status: 500 });
      };
      const killed = await fetch(`${inst.url}/v1/messages`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(messages("cc/claude-k")) }).catch(() => undefined);
      expect(killed === undefined || killed.status >= 500).toBe(true);
      await inst.exited;
      expect(vendor.refreshCalls).toEqual([t.refreshToken]);
      expect(persistedAtUse).toMatch(/^rt-kill-/);
      expect(persistedAtUse).not.toBe(t.refreshToken);

      // Restart on the same data directory: the persisted token serves, no second refresh (the old
      // refresh token is spent: using it would fail).
      vendor.onCall = undefined;
      inst = await startInstance({ yaml, dataDir });
      const res = await fetch(`${inst.url}/v1/messages`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(messages("cc/claude-k")) });
      expect(res.status).toBe(200);
      expect(vendor.refreshCalls.length).toBe(killedAt);
      const used = vendor.calls.filter((c) => c.path.startsWith("/v1/messages")).at(-1)!;
      expect(used.login).toBe("kill");
      // No token in anything the instance printed.
      for (const line of [...inst.stdout, ...inst.stderr]) expect(line).not.toContain(used.token);
    } finally {
      vendor.onCall = undefined;
      await stopInstance(inst, 1000);
      inst = undefined;
      await vendor.stop();
      await upstream.stop();
    }
  }, 60_000); // two cold starts of an instance from source and the first request of each: 14–21 s at load 18–25
});
