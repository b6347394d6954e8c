/**
 * The way back from a lock "until changed" (SPEC 6.3; newuser11 F2): one upstream 401 locked every
 * account of the provider (the attempt loop tries each in turn: SPEC 6.3 as written), and nothing cleared
 * it for an API-key account of the config file — not a new key and a reload, not a restart, not Enable,
 * not a passing Test. Now: a lock ends when the account's key changes (a reload or a restart with
 * another key: the lock keeps the key's fingerprint, never the key), `switchyard accounts unlock ID`
 * (`POST /admin/api/accounts/{id}/unlock`) clears it, a passing Test says the lock stays and how to lift
 * it, and the lock's messages (accounts status, the client's 503, the account_locked alert) say what to do.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { simpleReply } from "../support/fake-upstream.ts";
import { SOURCE_CLI } from "../support/instance.ts";
import type { AlertEvent, GatewayEvent } from "../../src/events/bus.ts";
import { providersAtFake } from "../support/configs.ts";

const KEY1 = "sk-test-unlock-one-aaaaaaaa";
const KEY2 = "sk-test-unlock-two-bbbbbbbb";
const YAML = (k1: string, k2: string) => `
${providersAtFake(["p", "anthropic"])}
    models: { claude-x: {}, claude-y: {} }
accounts:
  - { id: pa1, provider: p, api_key: "${k1}" }
  - { id: pa2, provider: p, api_key: "${k2}" }
`;

let gw: TestGateway;
/** Keys the fake refuses with a 401 (any model), and the model it refuses for every key. */
const refused = new Set<string>();
let refusedModel: string | undefined;
const events: GatewayEvent[] = [];

function fakeHandler(g: TestGateway) {
  g.fake.handle((r) => {
    const key = r.headers["x-api-key"] ?? "";
    if (refused.has(key) || r.model === refusedModel) return { status: 401, json: { type: "error", error: { type: "authentication_error", message: "invalid x-api-key" } } };
    return simpleReply(r.format!, { text: `served by ${key === KEY1 ? "pa1" : key === KEY2 ? "pa2" : "?"}`, model: r.model }, r.stream);
  });
}

beforeAll(async () => {
  gw = await startGateway(YAML(KEY1, KEY2));
  fakeHandler(gw);
  gw.app.bus.subscribe((e) => void events.push(e), ["account_state", "alert"]);
});
afterAll(async () => {
  await gw?.stop();
});

const ask = (model: string) =>
  fetch(`${gw.url}/v1/messages`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: `p/${model}`, max_tokens: 20, messages: [{ role: "user", content: "hi" }] }) });
const admin = async (method: string, path: string, body?: unknown) => {
  const res = await fetch(`${gw.url}/admin/api${path}`, { method, headers: { "content-type": "application/json" }, body: body === undefined ? undefined : JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as any };
};
const status = async (id: string) => ((await admin("GET", "/accounts")).body.accounts as any[]).find((a) => a.id === id);
/** The CLI from source against this process's gateway (spawned, not spawnSync: the gateway answers from this event loop). */
const cli = async (...args: string[]) => {
  const p = Bun.spawn([...SOURCE_CLI, ...args, "--url", gw.url], { env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: gw.dataDir }, stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  return { code, stdout: stdout.trim(), stderr: stderr.trim() };
};
/** One 401 for claude-y locks both accounts (the loop tries each). */
async function lockBoth() {
  refusedModel = "claude-y";
  expect((await ask("claude-y")).status).toBe(503);
  refusedModel = undefined;
  expect((await status("pa1")).lock?.reason).toBe("401 unauthorized");
  expect((await status("pa2")).lock?.reason).toBe("401 unauthorized");
}

describe("a lock until changed has a way back", () => {
  test("the lock says what to do: accounts status, the client's 503, the account_locked alert", async () => {
    events.length = 0;
    await lockBoth();
    const a1 = await status("pa1");
    expect(a1.lock.until).toBeNull();
    expect(a1.lock.advice).toBe("replace the account's key (in the config file, then switchyard reload) or run switchyard accounts unlock pa1 once the key works again");
    expect(a1.reasons).toContain(`locked: 401 unauthorized until changed: ${a1.lock.advice}`);
    const printed = await cli("accounts", "status");
    expect(printed.stdout).toContain("- locked: 401 unauthorized until changed: replace the account's key (in the config file, then switchyard reload) or run switchyard accounts unlock pa1 once the key works again");
    // Every model of the provider is out now; the client hears how an operator ends it, without an account's name.
    const res = await ask("claude-x");
    expect(res.status).toBe(503);
    const msg = ((await res.json()) as any).error.message as string;
    expect(msg).toContain("locked: 401 unauthorized (an operator brings a locked account back by replacing its key and reloading, or with switchyard accounts unlock)");
    expect(msg).not.toContain("pa1");
    const alerts = events.filter((e): e is AlertEvent => e.type === "alert" && e.event === "account_locked");
    expect(alerts.map((a) => [a.subject, a.detail.reason, a.detail.advice])).toEqual([
      ["account:pa1", "401 unauthorized", "replace the account's key (in the config file, then switchyard reload) or run switchyard accounts unlock pa1 once the key works again"],
      ["account:pa2", "401 unauthorized", "replace the account's key (in the config file, then switchyard reload) or run switchyard accounts unlock pa2 once the key works again"],
    ]);
  }, 20_000);

  test("a passing Test leaves the lock and says so, offering Unlock; Enable does not unlock", async () => {
    const t = await admin("POST", "/accounts/pa1/test", { model: "claude-x" });
    expect(t.body.ok).toBe(true);
    expect(t.body.lock).toEqual({
      reason: "401 unauthorized",
      until: null,
      note: "The test passed, but the account stays locked (401 unauthorized): requests do not use it until it is unlocked: switchyard accounts unlock pa1 (the Unlock button).",
    });
    expect((await admin("POST", "/accounts/pa1/enable")).status).toBe(200);
    expect((await status("pa1")).lock?.reason).toBe("401 unauthorized");
    expect((await admin("POST", "/accounts/nope/unlock")).status).toBe(404);
  });

  test("switchyard accounts unlock ID clears the lock (store and memory): the next request is served by that account", async () => {
    events.length = 0;
    const r = await cli("accounts", "unlock", "pa1");
    expect([r.code, r.stdout, r.stderr]).toEqual([0, "unlocked account pa1 (it was locked: 401 unauthorized): requests use it again from the next one on", ""]);
    expect((await status("pa1")).lock).toBeUndefined();
    expect((await gw.app.store.loadAccountState()).locks.map((l) => l.accountId)).toEqual(["pa2"]);
    expect(events.filter((e) => e.type === "account_state").map((e: any) => [e.account, e.change, e.reason])).toEqual([["pa1", "unlock", "lock (401 unauthorized) cleared by hand"]]);
    const res = await ask("claude-x");
    expect(res.status).toBe(200);
    expect(((await res.json()) as any).content[0].text).toBe("served by pa1");
    // Again: nothing to unlock. Unknown: exit 1 in one line.
    expect((await cli("accounts", "unlock", "pa1")).stdout).toBe("account pa1 was not locked; nothing to unlock");
    const unknown = await cli("accounts", "unlock", "nope");
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toBe("error 404: No account nope.");
    // The admin API's answer.
    expect((await admin("POST", "/accounts/pa2/unlock")).body).toEqual({ id: "pa2", unlocked: { reason: "401 unauthorized", until: null } });
    expect((await admin("POST", "/accounts/pa2/unlock")).body).toEqual({ id: "pa2", unlocked: null });
  }, 30_000);

  test("a new key in the config file and a reload clears that account's lock, not the other's", async () => {
    await lockBoth();
    events.length = 0;
    writeFileSync(gw.configPath, readFileSync(gw.configPath, "utf8").replace(KEY1, `${KEY1}-new`));
    const reload = await admin("POST", "/config/reload");
    expect(reload.status).toBe(200);
    expect((await status("pa1")).lock).toBeUndefined();
    expect((await status("pa2")).lock?.reason).toBe("401 unauthorized");
    expect((await gw.app.store.loadAccountState()).locks.map((l) => l.accountId)).toEqual(["pa2"]);
    expect(events.filter((e) => e.type === "account_state").map((e: any) => [e.account, e.change, e.reason])).toEqual([["pa1", "unlock", "lock (401 unauthorized) cleared: the account's key changed"]]);
    // The stored lock keeps a fingerprint of the key, never the key.
    const stored = readFileSync(`${gw.dataDir}/switchyard.db`);
    expect(stored.includes(Buffer.from(KEY2))).toBe(false);
  });

  test("a restart with another key clears the lock; a restart with the same key keeps it", async () => {
    await gw.stopGatewayOnly();
    writeFileSync(gw.configPath, YAML(`${KEY1}-new`, KEY2).replaceAll("{{FAKE}}", gw.fake.url));
    gw = await startGateway(YAML(`${KEY1}-new`, KEY2), { dataDir: gw.dataDir, fake: gw.fake });
    fakeHandler(gw);
    expect((await status("pa2")).lock?.reason).toBe("401 unauthorized");
    await gw.stopGatewayOnly();
    gw = await startGateway(YAML(`${KEY1}-new`, `${KEY2}-new`), { dataDir: gw.dataDir, fake: gw.fake });
    fakeHandler(gw);
    expect((await status("pa2")).lock).toBeUndefined();
    expect((await gw.app.store.loadAccountState()).locks).toEqual([]);
  });
});
