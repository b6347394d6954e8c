/**
 * Subscription pools through the real gateway and a fake vendor (SPEC P-5, P-6, P-8, A-1, 6.3):
 * discovery per account and the union in /v1/models; a model only some accounts advertise never
 * reaches the others; quota windows read from replies (an account at 1 % left is skipped); a named
 * reset time becomes the cooldown; reasoning efforts clamped to what the model supports.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startFakeUpstream } from "../support/fake-upstream.ts";
import { startFakeVendor } from "../oauth/fake-oauth.ts";
import { startWorld, until, type SubscriptionWorld } from "../oauth/helpers.ts";

let w: SubscriptionWorld;

/** A third codex provider whose config names the efforts of gpt-5 (P-8: config wins). */
const EXTRA = (vendorUrl: string) => `  - id: cxm
    kind: codex
    base_url: "${vendorUrl}/cx"
    models:
      gpt-5: { reasoning_efforts: [medium] }
`;

beforeAll(async () => {
  const upstream = await startFakeUpstream();
  const vendor = await startFakeVendor(upstream);
  w = await startWorld(EXTRA(vendor.url), { upstream, vendor });
  const a = vendor.seed({ name: "a", chatgptAccountId: "acct-a", models: ["gpt-5", "gpt-5-codex"], efforts: { "gpt-5-codex": ["low", "medium", "high"] } });
  const b = vendor.seed({ name: "b", chatgptAccountId: "acct-b", models: ["gpt-5-codex"], efforts: { "gpt-5-codex": ["medium"] } });
  const m = vendor.seed({ name: "m", chatgptAccountId: "acct-m", models: ["gpt-5"] });
  const cred = (t: { accessToken: string; refreshToken: string }) => ({ type: "oauth", access_token: t.accessToken, refresh_token: t.refreshToken, expires_at: Date.now() + 3600_000 });
  await w.call("POST", "/accounts", { provider: "cx", id: "cx-a", priority: 1, credential: cred(a) });
  await w.call("POST", "/accounts", { provider: "cx", id: "cx-b", priority: 2, credential: cred(b) });
  await w.call("POST", "/accounts", { provider: "cxm", id: "cxm-1", credential: cred(m) });
});
afterAll(async () => {
  await w?.stop();
});

const respond = (model: string, extra: Record<string, unknown> = {}, headers: Record<string, string> = {}) =>
  fetch(`${w.gw.url}/v1/responses`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify({ model, input: "hi", stream: false, ...extra }) });
/** Forgets the quota windows the cx accounts reported (memory and store: a 0 % window replaces each). */
function clearQuota(): void {
  for (const id of ["cx-a", "cx-b"]) for (const q of w.gw.app.registry.quota.windows(id, Date.now())) w.gw.app.registry.setQuota({ ...q, usedPercent: 0, updatedAt: Date.now() });
}
const servedBy = (from: number) => w.vendor.calls.slice(from).filter((c) => c.path.startsWith("/responses")).map((c) => c.login);

describe("discovery (P-6)", () => {
  test("every healthy account lists its models; the union is published under the provider prefix", async () => {
    const r = (await w.call("POST", "/discovery", {})) as { results: Array<{ accountId: string; ok: boolean; models?: string[] }> };
    const by = Object.fromEntries(r.results.map((x) => [x.accountId, x]));
    expect(by["cx-a"]).toMatchObject({ ok: true, models: ["gpt-5", "gpt-5-codex"] });
    expect(by["cx-b"]).toMatchObject({ ok: true, models: ["gpt-5-codex"] });
    expect((await w.gw.app.store.getAccount("cx-b"))?.models).toEqual(["gpt-5-codex"]);
    const models = (await (await fetch(`${w.gw.url}/v1/models`)).json()) as { data: Array<{ id: string; owned_by: string }> };
    const ids = models.data.map((m) => m.id);
    expect(ids).toContain("cx/gpt-5");
    expect(ids).toContain("cx/gpt-5-codex");
    expect(models.data.find((m) => m.id === "cx/gpt-5")?.owned_by).toBe("cx");
    // The Codex catalogue was asked the way the Codex CLI asks.
    const ask = w.vendor.calls.find((c) => c.path.startsWith("/models?client_version="));
    expect(ask?.headers["chatgpt-account-id"]).toBeDefined();
  });

  test("a model only one account advertised never reaches the other, even when the advertiser is unavailable", async () => {
    await w.call("POST", "/discovery", { provider: "cx" });
    const from = w.vendor.calls.length;
    for (let i = 0; i < 6; i++) expect((await respond("cx/gpt-5", {}, { "x-switchyard-session": `s${i}` })).status).toBe(200);
    expect(servedBy(from)).toEqual(Array(6).fill("a"));
    // cx-a out of quota for everything: gpt-5 has no account left, and cx-b is still not asked.
    w.vendor.onCall = (c) => (c.login === "a" ? { headers: { "x-codex-primary-used-percent": "100", "x-codex-primary-reset-after-seconds": "600" } } : undefined);
    expect((await respond("cx/gpt-5")).status).toBe(200);
    w.vendor.onCall = undefined;
    const from2 = w.vendor.calls.length;
    const res = await respond("cx/gpt-5");
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(servedBy(from2)).toEqual([]);
    // gpt-5-codex, which both advertise, is served by cx-b meanwhile.
    expect((await respond("cx/gpt-5-codex")).status).toBe(200);
    expect(servedBy(from2)).toEqual(["b"]);
    clearQuota();
  });
});

describe("quota windows (P-5, A-1)", () => {
  test("an account reporting 1 % left is skipped until its window resets; the window shows in the admin API and `usage`", async () => {
    clearQuota();
    // Whichever account the strategy picks first reports 99 % used; every later request goes to the other.
    let first: string | undefined;
    w.vendor.onCall = (c) => {
      if (!c.path.startsWith("/responses")) return undefined;
      first ??= c.login;
      return c.login === first ? { headers: { "x-codex-primary-used-percent": "99", "x-codex-primary-window-minutes": "300", "x-codex-primary-reset-after-seconds": "3600" } } : undefined;
    };
    try {
      const from = w.vendor.calls.length;
      for (let i = 0; i < 4; i++) expect((await respond("cx/gpt-5-codex", {}, { "x-switchyard-session": "q1" })).status).toBe(200);
      const other = first === "a" ? "b" : "a";
      expect(servedBy(from)).toEqual([first, other, other, other]);
    } finally {
      w.vendor.onCall = undefined;
    }
    const id = `cx-${first}`;
    const q = (await w.call("GET", "/quota")) as { accounts: Array<{ id: string; windows: Array<{ window: string; model: string; usedPercent: number; remainingPercent: number; resetAt: number }> }> };
    const wa = q.accounts.find((x) => x.id === id)!.windows;
    expect(wa).toEqual([expect.objectContaining({ window: "primary", model: "*", usedPercent: 99, remainingPercent: 1 })]);
    expect(Math.abs(wa[0].resetAt - (Date.now() + 3600_000))).toBeLessThan(10_000);
    const st = (await w.call("GET", "/accounts")) as { accounts: Array<{ id: string; models: Array<{ model: string; eligible: boolean; reason?: string }> }> };
    const m = st.accounts.find((x) => x.id === id)!.models.find((x) => x.model === "gpt-5-codex")!;
    expect(m.eligible).toBe(false);
    expect(m.reason).toContain("1 % left in window primary");
    // `switchyard usage` shows the windows next to the token usage.
    const cli = Bun.spawn([process.execPath, "src/main.ts", "usage", "--url", w.gw.url, "--key", w.gw.app.adminToken], { cwd: `${import.meta.dir}/../..`, stdout: "pipe", stderr: "pipe" });
    const text = await new Response(cli.stdout).text();
    await cli.exited;
    expect(text).toMatch(/account\s+quota window\s+models\s+left\s+resets/);
    expect(text).toMatch(new RegExp(`${id}\\s+primary\\s+all\\s+1 %`));
    clearQuota();
  }, 20_000); // includes a CLI process

  test("6.3: a 429 naming its reset (Claude unified headers) sets the cooldown to that time; Retry-After says so", async () => {
    const t = w.vendor.seed({ name: "limited", models: ["claude-x"] });
    await w.call("POST", "/accounts", { provider: "cc", id: "cc-limited", credential: { type: "oauth", access_token: t.accessToken, refresh_token: t.refreshToken, expires_at: Date.now() + 3600_000 } });
    const reset = Math.floor(Date.now() / 1000) + 2 * 3600;
    w.vendor.onCall = (c) =>
      c.login === "limited" && c.path.startsWith("/v1/messages")
        ? Response.json(
            { type: "error", error: { type: "rate_limit_error", message: "This request would exceed your account's rate limit. Please try again later." } },
            {
              status: 429,
              headers: {
                "anthropic-ratelimit-unified-status": "rejected",
                "anthropic-ratelimit-unified-reset": String(reset),
                "anthropic-ratelimit-unified-representative-claim": "five_hour",
                "anthropic-ratelimit-unified-5h-status": "rejected",
                "anthropic-ratelimit-unified-5h-utilization": "1.0",
                "anthropic-ratelimit-unified-5h-reset": String(reset),
                "anthropic-ratelimit-unified-7d-status": "allowed",
                "anthropic-ratelimit-unified-7d-utilization": "0.4",
                "anthropic-ratelimit-unified-7d-reset": String(reset + 5 * 86400),
              },
            },
          )
        : undefined;
    try {
      const res = await fetch(`${w.gw.url}/v1/messages`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model: "cc/claude-x", max_tokens: 10, messages: [{ role: "user", content: "hi" }] }),
      });
      expect(res.status).toBe(429);
      expect(Math.abs(Number(res.headers.get("retry-after")) - 7200)).toBeLessThan(10);
    } finally {
      w.vendor.onCall = undefined;
    }
    const st = (await w.call("GET", "/accounts")) as { accounts: Array<{ id: string; cooldowns: Array<{ model: string; until: number }>; quota: Array<{ window: string; usedPercent: number }> }> };
    const acct = st.accounts.find((x) => x.id === "cc-limited")!;
    expect(acct.cooldowns).toEqual([expect.objectContaining({ model: "claude-x", until: reset * 1000 })]);
    expect(acct.quota.find((q) => q.window === "5h")?.usedPercent).toBe(100);
    expect(acct.quota.find((q) => q.window === "7d")?.usedPercent).toBe(40);
  });
});

describe("reasoning efforts (P-8)", () => {
  test("discovered efforts of the first account in configured order: an unsupported effort is clamped, with a warning", async () => {
    await w.call("POST", "/discovery", { provider: "cx" });
    const res = await respond("cx/gpt-5-codex", { reasoning: { effort: "xhigh" } });
    expect(res.status).toBe(200);
    const warning = JSON.parse(res.headers.get("x-switchyard-warning") ?? "[]") as Array<{ code: string; message: string }>;
    expect(warning.map((x) => x.code)).toContain("reasoning_effort_clamped");
    const sent = w.upstream.requests.filter((r) => r.method === "POST").at(-1)!;
    expect(sent.body.reasoning.effort).toBe("high"); // cx-a (first) reported low/medium/high; cx-b's [medium] is not used
    const ok = await respond("cx/gpt-5-codex", { reasoning: { effort: "low" } });
    expect(ok.headers.get("x-switchyard-warning")).toBeNull();
    expect(w.upstream.requests.filter((r) => r.method === "POST").at(-1)!.body.reasoning.effort).toBe("low");
  });

  test("explicit config wins over discovery", async () => {
    await w.call("POST", "/discovery", { provider: "cxm" });
    const res = await respond("cxm/gpt-5", { reasoning: { effort: "minimal" } });
    expect(res.status).toBe(200);
    expect(w.upstream.requests.filter((r) => r.method === "POST").at(-1)!.body.reasoning.effort).toBe("medium");
    expect(res.headers.get("x-switchyard-warning")).toContain("reasoning_effort_clamped");
  });

  test("after a restart the stored lists serve at once, and a failing discovery keeps them", async () => {
    await until(async () => ((await w.gw.app.store.getAccount("cx-a"))?.models ?? []).length > 0);
    const dataDir = w.gw.dataDir;
    await w.gw.stopGatewayOnly();
    w.vendor.onCall = (c) => (c.path.startsWith("/models") ? new Response("down", { status: 503 }) : undefined);
    try {
      w = await startWorld(EXTRA(w.vendor.url), { dataDir, upstream: w.upstream, vendor: w.vendor });
      const ids = ((await (await fetch(`${w.gw.url}/v1/models`)).json()) as { data: Array<{ id: string }> }).data.map((m) => m.id);
      expect(ids).toContain("cx/gpt-5");
      expect(ids).toContain("cxm/gpt-5");
      const r = (await w.call("POST", "/discovery", { provider: "cx" })) as { results: Array<{ accountId: string; ok: boolean; error?: string }> };
      expect(r.results.every((x) => !x.ok && x.error === "the models endpoint answered 503")).toBe(true);
      expect((await w.gw.app.store.getAccount("cx-b"))?.models).toEqual(["gpt-5-codex"]);
      const from = w.vendor.calls.length;
      expect((await respond("cx/gpt-5")).status).toBe(200);
      expect(servedBy(from)).toEqual(["a"]);
    } finally {
      w.vendor.onCall = undefined;
    }
  });
});
