/**
 * Account routing through the real pipeline (createGateway → order → attempt loop → pick) with a
 * scripted executor: conversations return to their account, failures bind nothing, bindings expire,
 * round-robin ignores them, and a full account is passed over (at once, or after the slot wait).
 */
import { describe, expect, test } from "bun:test";
import type { Executor, UpstreamCall } from "../../pipeline/execute.ts";
import type { ComboSpec } from "../../pipeline/resolve.ts";
import type { RegistryOptions } from "../../src/accounts/registry.ts";
import { pipelineGateway } from "../support/pipeline-gateway.ts";
import { account, providerOf } from "./helpers.ts";

/** SPEC A-2: a binding lasts 15 minutes (a literal from the SPEC, not the code's constant). */
const BINDING_TTL_MS = 15 * 60_000;

/** A scripted reply; `silent` answers 200 with SSE headers and then never sends a byte. */
type Reply = { status: number; json: unknown; silent?: boolean };
const OK = (text = "ok"): Reply => ({ status: 200, json: { id: "msg_1", type: "message", role: "assistant", model: "m", content: [{ type: "text", text }], stop_reason: "end_turn", usage: { input_tokens: 3, output_tokens: 1 } } });
const RATE = (): Reply => ({ status: 429, json: { type: "error", error: { type: "rate_limit_error", message: "Rate limited" } } });

function rig(opts: RegistryOptions & { accounts?: ReturnType<typeof account>[]; combos?: ComboSpec[]; idleTimeoutMs?: number } = {}) {
  const { accounts: given, combos, idleTimeoutMs, ...registry } = opts;
  const p = providerOf("p", "anthropic");
  if (idleTimeoutMs) p.idleTimeoutMs = idleTimeoutMs;
  const q = providerOf("q", "anthropic-compatible");
  const accounts = given ?? [account("a1"), account("a2"), account("a3")];
  const scripts = new Map<string, Reply[]>();
  const served: string[] = [];
  let gate: Promise<void> | undefined;
  const executor: Executor = {
    async send(call: UpstreamCall) {
      served.push(call.account.id);
      if (gate) await gate;
      const r = scripts.get(call.account.id)?.shift() ?? OK(`served by ${call.account.id}`);
      if (r.silent) return { status: 200, headers: new Headers({ "content-type": "text/event-stream" }), body: new ReadableStream<Uint8Array>({ pull: () => new Promise<void>(() => {}) }) };
      return { status: r.status, headers: new Headers({ "content-type": "application/json" }), body: new Response(JSON.stringify(r.json)).body };
    },
  };
  const { gateway, clock, registry: reg, storeCalls: calls, finished, traces } = pipelineGateway({ providers: [p, q], accounts, executor, combos, registry });
  const send = async (model: string, first = "Fix the bug", headers: Record<string, string> = {}) => {
    const res = await gateway.handle({
      request: new Request("http://127.0.0.1/v1/messages", { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify({ model, max_tokens: 10, messages: [{ role: "user", content: first }] }) }),
      endpoint: "messages",
      peer: "127.0.0.1",
    });
    await res.text();
    return { status: res.status, account: finished.at(-1)?.account?.id, trace: traces.at(-1)!, fallback: res.headers.get("x-switchyard-fallback") };
  };
  return {
    clock,
    registry: reg,
    calls,
    served,
    send,
    script: (id: string, ...r: Reply[]) => scripts.set(id, r),
    hold: (p: Promise<void> | undefined) => (gate = p),
    acc: (id: string) => accounts.find((a) => a.id === id)!,
  };
}

describe("conversation affinity through the pipeline (SPEC A-2)", () => {
  test("a conversation returns to the account that answered it; another conversation does not", async () => {
    const r = rig({ accounts: [account("a1", "p", { maxConcurrency: 1 }), account("a2"), account("a3")] });
    const hold = await r.registry.acquire(r.acc("a1"), new AbortController().signal); // a1 busy: the first request lands on a2
    expect((await r.send("p/m", "conversation one")).account).toBe("a2");
    hold!();
    const again = await r.send("p/m", "conversation one");
    expect(again.account).toBe("a2");
    expect(again.fallback).toBeNull(); // the bound account is the first choice, not a fallback
    expect(again.trace.decisions.find((d) => d.verdict === "in")?.reason).toContain("conversation affinity");
    expect((await r.send("p/m", "conversation two")).account).toBe("a1");
  });

  test("an explicit session header wins over the body: a new first message still goes to the bound account", async () => {
    const r = rig({ accounts: [account("a1", "p", { maxConcurrency: 1 }), account("a2")] });
    const hold = await r.registry.acquire(r.acc("a1"), new AbortController().signal);
    await r.send("p/m", "one", { "x-session-id": "sess-1" });
    hold!();
    expect((await r.send("p/m", "entirely different", { "x-session-id": "sess-1" })).account).toBe("a2");
  });

  test("a failed request writes no binding", async () => {
    const r = rig();
    r.script("a1", RATE());
    r.script("a2", RATE());
    r.script("a3", RATE());
    expect((await r.send("p/m", "doomed")).status).toBe(429);
    expect(r.calls.filter((c) => c.method === "bind")).toEqual([]);
    expect(r.registry.bindings.countByAccount(r.clock.now()).size).toBe(0);
  });

  test("a success after failures binds the account that answered, once, persisted with a 15-min expiry", async () => {
    const r = rig();
    r.script("a1", RATE());
    expect((await r.send("p/m", "x")).account).toBe("a2");
    const binds = r.calls.filter((c) => c.method === "bind").map((c) => c.args[0] as { key: string; accountId: string; expiresAt: number });
    expect(binds).toEqual([{ key: expect.stringMatching(/^p\|f:[0-9a-f]{32}$/), accountId: "a2", expiresAt: r.clock.now() + BINDING_TTL_MS }]);
  });

  test("the binding expires after 15 min (injected clock): the strategy decides again", async () => {
    const r = rig({ accounts: [account("a1", "p", { maxConcurrency: 1 }), account("a2")] });
    const hold = await r.registry.acquire(r.acc("a1"), new AbortController().signal);
    await r.send("p/m", "conv");
    hold!();
    r.clock.advance(BINDING_TTL_MS - 1000);
    expect((await r.send("p/m", "conv")).account).toBe("a2"); // renewed by this success
    r.clock.advance(BINDING_TTL_MS + 1);
    expect((await r.send("p/m", "conv")).account).toBe("a1");
  });

  test("the round-robin account strategy ignores bindings: one conversation rotates over the accounts", async () => {
    const r = rig({ strategy: () => "round-robin" });
    const got = [];
    for (let i = 0; i < 4; i++) got.push((await r.send("p/m", "same conversation")).account);
    expect(got).toEqual(["a1", "a2", "a3", "a1"]);
    expect(r.calls.filter((c) => c.method === "bind")).toEqual([]);
  });

  test("a combo with cache_affinity: false does not bind", async () => {
    const r = rig({ combos: [{ name: "c", strategy: "fallback", portability: "strip_with_warning", cacheAffinity: false, targets: [{ model: "p/m" }] }] });
    await r.send("c", "x");
    expect(r.calls.filter((c) => c.method === "bind")).toEqual([]);
  });
});

describe("concurrency slots through the pipeline (SPEC A-4)", () => {
  test("with max_concurrency reached, the next request goes to another account without waiting", async () => {
    const r = rig({ slotWaitMs: 10_000, accounts: [account("a1", "p", { maxConcurrency: 1 }), account("a2", "p", { maxConcurrency: 1 })] });
    let open!: () => void;
    r.hold(new Promise<void>((res) => (open = res)));
    const first = r.send("p/m", "long one");
    await Bun.sleep(5);
    r.hold(undefined);
    const t0 = performance.now();
    const second = await r.send("p/m", "short one");
    expect(second.account).toBe("a2");
    expect(performance.now() - t0).toBeLessThan(1000);
    // a1 is still eligible, only offered last while its one slot is taken
    const cands = r.registry.candidates("p", "m", {});
    expect(cands.map((c) => [c.account.id, c.eligible])).toEqual([["a2", true], ["a1", true]]);
    expect(cands[1].note).toContain("all 1 slots in use");
    open();
    expect((await first).account).toBe("a1");
  });

  test("a target pinned to a full account waits the (short, injected) slot time, then the combo moves on", async () => {
    const r = rig({
      slotWaitMs: 30,
      accounts: [account("a1", "p", { maxConcurrency: 1 }), account("b1", "q")],
      combos: [{ name: "c", strategy: "fallback", portability: "strip_with_warning", cacheAffinity: true, targets: [{ model: "p/m", account: "a1" }, { model: "q/m" }] }],
    });
    const hold = await r.registry.acquire(r.acc("a1"), new AbortController().signal);
    const t0 = performance.now();
    const res = await r.send("c", "x");
    expect(performance.now() - t0).toBeGreaterThanOrEqual(25);
    expect(res.account).toBe("b1");
    expect(res.trace.decisions).toContainEqual({ subject: "p/m @ a1", verdict: "out", reason: "no free concurrency slot in time" });
    expect(r.registry.slots.inUse("a1")).toBe(1);
    hold!();
    expect(r.registry.slots.inUse("a1")).toBe(0);
    expect(r.registry.slots.inUse("b1")).toBe(0); // released after the reply
  });
});

describe("pick decisions and the no-account error (SPEC 6.3, 2.4)", () => {
  test("each account's decision is in the trace once, however many picks the request made", async () => {
    const r = rig({ accounts: [account("a1"), account("a2"), account("a3"), account("a4", "p", { disabled: true })] });
    r.script("a1", RATE());
    r.script("a2", RATE());
    const res = await r.send("p/m", "x");
    expect(res.account).toBe("a3");
    const subjects = res.trace.decisions.map((d) => `${d.subject} ${d.verdict}`);
    expect(subjects).toEqual(["p/m @ a1 in", "p/m @ a4 out", "p/m @ a2 in", "p/m @ a3 in"]);
    expect(res.trace.decisions.some((d) => d.reason.includes("already tried"))).toBe(false);
  });

  test("accounts rate limited (429 cooldown) make a 429; accounts down for a 5xx make a 503", async () => {
    const r = rig({ accounts: [account("a1"), account("a2")] });
    r.registry.failure(r.acc("a1"), providerOf("p"), "m", { row: "rate_limit_backoff", account: { type: "backoff", reason: "429" }, loop: "next_account" });
    r.registry.failure(r.acc("a2"), providerOf("p"), "m", { row: "server_error", account: { type: "cooldown_for", scope: "model", ms: 30_000, reason: "upstream 500" }, loop: "next_account" });
    expect(r.registry.candidates("p", "m", {}).map((c) => c.cause)).toEqual(["rate_limit", "cooldown"]);
    const limited = await r.send("p/m", "x");
    expect(limited.status).toBe(429);
    expect(limited.trace.decisions.map((d) => d.reason)).toEqual([
      expect.stringMatching(/^cooling down \(429\) until \d{4}-/),
      expect.stringMatching(/^cooling down \(upstream 500\) until \d{4}-/),
    ]);

    const s = rig({ accounts: [account("a1")] });
    s.registry.failure(s.acc("a1"), providerOf("p"), "m", { row: "server_error", account: { type: "cooldown_for", scope: "model", ms: 30_000, reason: "upstream 500" }, loop: "next_account" });
    expect((await s.send("p/m", "x")).status).toBe(503);
  });

  test("a lock for exhausted quota is a quota exclusion; any other lock is a lock", () => {
    const r = rig({ accounts: [account("a1"), account("a2")] });
    r.registry.failure(r.acc("a1"), providerOf("p"), "m", { row: "quota_exhausted", account: { type: "lock", reason: "quota exhausted or account blocked" }, loop: "next_account" });
    r.registry.failure(r.acc("a2"), providerOf("p"), "m", { row: "payment_required", account: { type: "lock", reason: "402 payment required" }, loop: "next_account" });
    expect(r.registry.candidates("p", "m", {}).map((c) => [c.cause, c.reason])).toEqual([
      ["quota", "locked: quota exhausted or account blocked"],
      ["lock", "locked: 402 payment required"],
    ]);
  });
});

describe("the commit point (SPEC R-8, 6.4)", () => {
  test("an upstream silent after its headers is given up after the idle timeout and retried; the slot is freed", async () => {
    const r = rig({ idleTimeoutMs: 50, accounts: [account("a1", "p", { maxConcurrency: 1 })] });
    r.script("a1", { status: 200, json: null, silent: true });
    const t0 = performance.now();
    const res = await r.send("p/m", "x");
    expect(performance.now() - t0).toBeGreaterThanOrEqual(45);
    expect(res.status).toBe(200);
    expect(r.served).toEqual(["a1", "a1"]);
    expect(res.trace.attempts.map((a) => [a.status, a.classification])).toEqual([[504, "server_error"], [200, undefined]]);
    expect(r.registry.slots.inUse("a1")).toBe(0);
  });
});
