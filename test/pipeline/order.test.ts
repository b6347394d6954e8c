/**
 * order (SPEC R-3, 5.1): combo strategies (fallback, round-robin rotation, weighted proportions with a
 * seeded RNG, least-used counts), predicate filtering, the attachment split with capacity adapters,
 * the per-group quota sort, and the decisions each step records.
 */
import { describe, expect, test } from "bun:test";
import type { HubRequest } from "../../formats/hub.ts";
import { affinityHints } from "../../pipeline/affinity.ts";
import type { RequestContext } from "../../pipeline/context.ts";
import { currentTurnAttachments, seededRng, TargetOrder, type CapacityAdapter, type OrderRequest } from "../../pipeline/order.ts";
import { resolveModel, type ComboSpec, type Resolution, type RoutingTable, type Target } from "../../pipeline/resolve.ts";
import { guardedContext } from "../support/context.ts";
import { combo, hub, provider, table } from "./routing-helpers.ts";

const p = provider("p", "openai-compatible", {
  vision: { images: true, pdf: true },
  blind: { images: false },
  big: { contextWindow: 1_000_000 },
});
const q = provider("q", "anthropic-compatible", { reader: { images: true }, plain: {} });
const NO_ADAPTER: CapacityAdapter = { images: [], pdf: [], audio: [], video: [] };

function setup(combos: ComboSpec[], opts: { quota?: Record<string, number>; adapter?: Partial<CapacityAdapter>; seed?: number; loadSeed?: () => Promise<void> | void } = {}) {
  const t: RoutingTable = table([p, q], { alias1: "c" }, combos);
  const order = new TargetOrder({
    routing: () => t,
    capacityAdapter: () => ({ ...NO_ADAPTER, ...opts.adapter }),
    quota: opts.quota ? (x) => opts.quota![x.label] : undefined,
    rng: seededRng(opts.seed ?? 42),
    loadSeed: opts.loadSeed,
  });
  const run = (name: string, req: Partial<OrderRequest> = {}, dryRun = false) => {
    const r = resolveModel(name, t);
    if ("kind" in r) throw new Error(r.message);
    return order.plan({ clientFormat: "openai-chat", requestedModel: name, hub: hub(), ...req }, r, { dryRun });
  };
  const labels = (name: string, req: Partial<OrderRequest> = {}, dryRun = false) => run(name, req, dryRun).targets.map((x) => x.label);
  return { order, run, labels, table: t };
}

const image: HubRequest = hub({ messages: [{ role: "user", content: [{ type: "text", text: "what is this?" }, { type: "image", source: { kind: "url", url: "https://example.invalid/x.png" } }] }] });

describe("strategies (SPEC 5.1)", () => {
  test("fallback keeps the written order and never changes the configured combo", () => {
    const c = combo("c", ["p/a", "p/b", "q/c"]);
    const { labels } = setup([c]);
    expect(labels("c")).toEqual(["p/a", "p/b", "q/c"]);
    expect(labels("c")).toEqual(["p/a", "p/b", "q/c"]);
    expect(c.targets.map((t) => t.model)).toEqual(["p/a", "p/b", "q/c"]);
  });

  test("round-robin rotates the starting target by one per request, over N requests", () => {
    const { labels } = setup([combo("c", ["p/a", "p/b", "q/c"], { strategy: "round-robin" })]);
    const heads = Array.from({ length: 7 }, () => labels("c"));
    expect(heads.map((h) => h[0])).toEqual(["p/a", "p/b", "q/c", "p/a", "p/b", "q/c", "p/a"]);
    expect(heads[1]).toEqual(["p/b", "q/c", "p/a"]); // a rotation, not a shuffle: the rest follow in order
  });

  test("round-robin: a dry run shows the next rotation without consuming it; an alias shares the combo's counter", () => {
    const { labels } = setup([combo("c", ["p/a", "p/b"], { strategy: "round-robin" })]);
    expect(labels("c")[0]).toBe("p/a");
    expect(labels("c", {}, true)[0]).toBe("p/b");
    expect(labels("c", {}, true)[0]).toBe("p/b");
    expect(labels("alias1")[0]).toBe("p/b");
    expect(labels("c")[0]).toBe("p/a");
  });

  test("weighted: the first target is drawn proportionally to weight (seeded RNG, 20 000 draws, ±1.5 %)", () => {
    const { labels } = setup([combo("c", [{ model: "p/a", weight: 1 }, { model: "p/b", weight: 2 }, { model: "q/c", weight: 7 }, { model: "q/zero", weight: 0 }], { strategy: "weighted" })]);
    const n = 20_000;
    const first = new Map<string, number>();
    for (let i = 0; i < n; i++) {
      const l = labels("c");
      first.set(l[0], (first.get(l[0]) ?? 0) + 1);
      expect(l).toHaveLength(4); // a draw reorders, it never drops a target
    }
    expect(first.get("p/a")! / n).toBeCloseTo(0.1, 1);
    expect(Math.abs(first.get("p/a")! / n - 0.1)).toBeLessThan(0.015);
    expect(Math.abs(first.get("p/b")! / n - 0.2)).toBeLessThan(0.015);
    expect(Math.abs(first.get("q/c")! / n - 0.7)).toBeLessThan(0.015);
    expect(first.get("q/zero") ?? 0).toBe(0);
  });

  test("weighted: a dry run names the draw on every target, the order kept or not, with each target's chance to go first (newuser13 J6)", () => {
    const { run } = setup([combo("c", [{ model: "p/a", weight: 3 }, { model: "q/c", weight: 1 }], { strategy: "weighted" })]);
    const seen = new Set<string>();
    for (let i = 0; i < 40; i++) {
      const r = run("c", {}, true);
      const order = r.targets.map((t) => t.label).join(",");
      seen.add(order);
      const line = (label: string) => r.decisions.find((d) => d.subject === label)!;
      const kept = order === "p/a,q/c";
      expect(line("p/a")).toEqual({
        subject: "p/a",
        verdict: kept ? "in" : "moved",
        reason: `weighted draw: weight 3 of 4 (75 % of requests try it first); a dry run shows one draw, real requests draw again; position ${kept ? "1, as written" : "1 → 2"}`,
      });
      expect(line("q/c").reason).toStartWith("weighted draw: weight 1 of 4 (25 % of requests try it first); a dry run shows one draw, real requests draw again; position ");
    }
    expect(seen).toEqual(new Set(["p/a,q/c", "q/c,p/a"]));
    // a real request's trace keeps only the moves
    const real = run("c");
    expect(real.decisions.every((d) => d.verdict === "moved")).toBe(true);
  });

  test("weighted: the same seed gives the same sequence of orders", () => {
    const c = [combo("c", [{ model: "p/a", weight: 1 }, { model: "p/b", weight: 1 }, { model: "q/c", weight: 1 }], { strategy: "weighted" })];
    const a = setup(c, { seed: 7 });
    const b = setup(c, { seed: 7 });
    const seqA = Array.from({ length: 20 }, () => a.labels("c").join(","));
    const seqB = Array.from({ length: 20 }, () => b.labels("c").join(","));
    expect(seqA).toEqual(seqB);
    expect(new Set(seqA).size).toBeGreaterThan(1);
  });

  test("least-used: fewest lifetime requests first; each request counts for the target it tries first", () => {
    const { labels, order, run } = setup([combo("c", ["p/a", "p/b", "q/c"], { strategy: "least-used" })]);
    order.seedUsage(new Map([["p/a", 2], ["q/c", 1]])); // lifetime requests per provider/model from the store
    const heads = Array.from({ length: 6 }, () => labels("c")[0]);
    // counts start at a=2, b=0, c=1 → b (b=1), b (tie with c, written order; b=2), c (c=2), then all
    // tied at 2 → written order: a, b, c
    expect(heads).toEqual(["p/b", "p/b", "q/c", "p/a", "p/b", "q/c"]);
    expect([order.usedCount(run("c", {}, true).targets[0]), run("c", {}, true).targets.length]).toEqual([3, 3]);
    const fresh = setup([combo("c", ["p/a", "p/b"], { strategy: "least-used" })]);
    fresh.order.seedUsage(new Map([["p/a", 50]]));
    expect(fresh.run("c", {}, true).decisions).toContainEqual({ subject: "p/a", verdict: "moved", reason: "least-used: 50 lifetime requests; position 1 → 2" });
    // one model id on two providers: each starts from its own provider's count, not their sum
    const twin = setup([combo("c", ["p/a", "q/a"], { strategy: "least-used" })]);
    twin.order.seedUsage(new Map([["p/a", 7], ["q/a", 3]]));
    expect(twin.labels("c", {}, true)).toEqual(["q/a", "p/a"]);
    // a seed read after the first requests (the gateway reads it once it listens, newuser15 N9) adds to
    // what they counted: a=2 counted here + 1 seeded = 3 against b=1 counted + 5 seeded = 6
    const late = setup([combo("c", ["p/a", "p/b"], { strategy: "least-used" })]);
    expect([late.labels("c")[0], late.labels("c")[0], late.labels("c")[0]]).toEqual(["p/a", "p/b", "p/a"]);
    late.order.seedUsage(new Map([["p/a", 1], ["p/b", 5]]));
    expect(late.run("c", {}, true).targets.map((t) => late.order.usedCount(t))).toEqual([3, 6]);
    expect(late.labels("c", {}, true)[0]).toBe("p/a");
  });

  test("least-used: the lifetime counts are asked for once, at the first least-used request, never without one (review15 R13)", () => {
    let asked = 0;
    const { labels } = setup([combo("rr", ["p/a", "p/b"], { strategy: "round-robin" }), combo("lu", ["p/a", "p/b"], { strategy: "least-used" })], { loadSeed: () => void asked++ });
    labels("rr");
    labels("p/a");
    expect(asked).toBe(0);
    labels("lu", {}, true);
    labels("lu");
    labels("lu");
    expect(asked).toBe(1);
  });

  test("least-used: a request waits for the lifetime counts' read while it is under way, others never do", async () => {
    let arrive!: () => void;
    const { order, labels, table: t } = setup([combo("rr", ["p/a", "p/b"], { strategy: "round-robin" }), combo("lu", ["p/a", "p/b"], { strategy: "least-used" })], {
      loadSeed: () => new Promise<void>((done) => (arrive = () => (order.seedUsage(new Map([["p/a", 4]])), done()))),
    });
    const resolved = (name: string) => resolveModel(name, t) as Resolution;
    expect(order.seedWait(resolved("rr"))).toBeUndefined(); // not least-used: no wait, nothing asked
    expect(order.seedWait(resolved("p/a"))).toBeUndefined();
    const wait = order.seedWait(resolved("lu")); // asks for the counts
    expect(wait).toBeInstanceOf(Promise);
    let waited = false;
    void wait!.then(() => (waited = true));
    await Promise.resolve();
    expect(waited).toBe(false);
    arrive();
    await wait;
    expect(labels("lu")[0]).toBe("p/b"); // ordered by the counts read: a 4, b 0
    expect(order.seedWait(resolved("lu"))).toBeUndefined(); // read settled: no wait any more
  });

  test("least-used: the counts are asked for the least-used targets' provider/model pairs only, each once; a combo a reload makes least-used asks for its new pairs and waits for them", async () => {
    // Fixed 2026-12-07: one read at start held every provider/model pair ever served (client-chosen
    // names included) for the process's life; now only the least-used targets' pairs are read and kept.
    const asked: string[][] = [];
    let arrive: (() => void) | undefined;
    let t: RoutingTable = table([p, q], {}, [combo("lu", ["p/a", "q/c"], { strategy: "least-used" }), combo("rr", ["p/b", "p/a"], { strategy: "round-robin" })]);
    const order: TargetOrder = new TargetOrder({
      routing: () => t,
      capacityAdapter: () => NO_ADAPTER,
      loadSeed: (pairs) => {
        asked.push([...pairs].sort());
        if (!pairs.has("p/b")) return void order.seedUsage(new Map([["p/a", 3]]));
        return new Promise<void>((done) => (arrive = () => (order.seedUsage(new Map([["p/b", 9]])), done())));
      },
    });
    const resolved = (name: string) => resolveModel(name, t) as Resolution;
    const first = (name: string) => order.plan({ clientFormat: "openai-chat", requestedModel: name, hub: hub() }, resolved(name)).targets[0].label;
    order.askSeed(); // at start: the configured least-used combos' targets
    order.askSeed();
    expect(asked).toEqual([["p/a", "q/c"]]);
    expect(first("lu")).toBe("q/c"); // p/a 3, q/c 0
    expect(first("rr")).toBe("p/b");
    expect(first("p/client-name")).toBe("p/client-name");
    expect(asked).toEqual([["p/a", "q/c"]]); // no other pair asked for
    // a reload makes `rr` least-used: its new pair is asked for at its first request, which waits for it
    t = table([p, q], {}, [combo("lu", ["p/a", "q/c"], { strategy: "least-used" }), combo("rr", ["p/b", "p/a"], { strategy: "least-used" })]);
    const wait = order.seedWait(resolved("rr"));
    expect(asked).toEqual([["p/a", "q/c"], ["p/b"]]);
    expect(wait).toBeInstanceOf(Promise);
    arrive!();
    await wait;
    expect(order.seedWait(resolved("rr"))).toBeUndefined();
    expect(order.usedCount(resolved("rr").targets[0])).toBe(9);
    expect(first("rr")).toBe("p/a"); // p/b 9, p/a 3 (p/b's pair unread would count 0 and go first, as written)
    expect(asked.length).toBe(2);
  });

  test("least-used: a dry run counts nothing", () => {
    const { labels } = setup([combo("c", ["p/a", "p/b"], { strategy: "least-used" })]);
    for (let i = 0; i < 5; i++) expect(labels("c", {}, true)[0]).toBe("p/a");
    expect(labels("c")[0]).toBe("p/a");
    expect(labels("c")[0]).toBe("p/b");
  });

  test("a reorder is recorded as `moved` decisions with the old and new positions", () => {
    const { run } = setup([combo("c", ["p/a", "p/b", "q/c"], { strategy: "round-robin" })]);
    run("c");
    const d = run("c").decisions;
    expect(d).toContainEqual({ subject: "p/b", verdict: "moved", reason: "round-robin: request 2 starts at target 2 of 3; position 2 → 1" });
    expect(d).toContainEqual({ subject: "p/a", verdict: "moved", reason: "round-robin: request 2 starts at target 2 of 3; position 1 → 3" });
  });
});

describe("predicates in the order stage", () => {
  const cs = [
    combo("c", [
      { model: "p/big", when: { expr: { fact: "input_tokens", op: "gt", value: 100_000 }, whenUnknown: "skip" } },
      { model: "p/a", when: { expr: { fact: "target_context_window", op: "gte", value: 100_000 }, whenUnknown: "allow" } },
      { model: "q/plain", when: { expr: { fact: "has_tools", op: "eq", value: false }, whenUnknown: "skip" } },
      "q/reader",
    ]),
  ];

  test("false drops, true keeps, unknown follows when_unknown; each verdict explained", () => {
    const { run } = setup(cs);
    const r = run("c");
    expect(r.targets.map((t) => t.label)).toEqual(["p/a", "q/plain", "q/reader"]);
    expect(r.decisions).toEqual([
      { subject: "p/big", verdict: "out", reason: expect.stringMatching(/^predicate: input_tokens \(\d+, estimated\) gt 100000 → false$/) },
      { subject: "p/a", verdict: "in", reason: "predicate: target_context_window (unknown: no models entry for p/a) gte 100000 → unknown; when_unknown: allow → allowed" },
      { subject: "q/plain", verdict: "in", reason: "predicate: has_tools (false) eq false → true" },
    ]);
  });

  test("an unparsable body makes body predicates unknown (skip by default)", () => {
    const { labels } = setup(cs);
    expect(labels("c", { hub: undefined, hubError: "bad body" })).toEqual(["p/a", "q/reader"]);
  });

  test("requested_alias/requested_combo/key_tag come from the resolution and the key", () => {
    const { labels } = setup([
      combo("c", [
        { model: "p/a", when: { expr: { fact: "requested_alias", op: "eq", value: "alias1" }, whenUnknown: "skip" } },
        { model: "p/b", when: { expr: { all: [{ fact: "requested_combo", op: "eq", value: "c" }, { fact: "key_tag", op: "eq", value: "ops" }] }, whenUnknown: "skip" } },
      ]),
    ]);
    expect(labels("c")).toEqual([]);
    expect(labels("alias1")).toEqual(["p/a"]);
    expect(labels("c", { keyTag: "ops" })).toEqual(["p/b"]);
  });
});

describe("attachment split (SPEC R-3)", () => {
  test("an image in the current user turn puts capable targets first, even when the others report more quota", () => {
    const { run } = setup([combo("c", ["p/blind", "q/plain", "p/vision", "q/reader"])], {
      quota: { "p/blind": 0.99, "q/plain": 0.9, "p/vision": 0.1, "q/reader": 0.5 },
    });
    const r = run("c", { hub: image });
    // capable group [vision, reader] sorted by quota; the rest [blind, plain] sorted by quota; never across
    expect(r.targets.map((t) => t.label)).toEqual(["q/reader", "p/vision", "p/blind", "q/plain"]);
    expect(r.decisions.find((d) => d.subject === "p/vision")?.reason).toContain("can read the images in the current user turn");
    expect(r.decisions.find((d) => d.subject === "p/blind")?.reason).toContain("not known to read the images");
  });

  test("only the current user turn counts: an image earlier in the conversation does not split", () => {
    const h = hub({
      messages: [
        image.messages[0],
        { role: "assistant", content: [{ type: "text", text: "a cat" }] },
        { role: "user", content: [{ type: "text", text: "thanks" }] },
      ],
    });
    expect(currentTurnAttachments(h)).toEqual([]);
    expect(currentTurnAttachments(image)).toEqual(["images"]);
    const { labels } = setup([combo("c", ["p/blind", "p/vision"])]);
    expect(labels("c", { hub: h })).toEqual(["p/blind", "p/vision"]);
  });

  test("images inside a tool result and PDFs count; a target must read every kind present", () => {
    const h = hub({
      messages: [
        {
          role: "user",
          content: [
            { type: "tool_result", callId: "c1", content: [{ type: "image", source: { kind: "base64", mediaType: "image/png", data: "AA==" } }] },
            { type: "document", source: { kind: "base64", mediaType: "application/pdf", data: "AA==" } },
          ],
        },
      ],
    });
    expect(currentTurnAttachments(h)).toEqual(["images", "pdf"]);
    const { labels } = setup([combo("c", ["q/reader", "p/vision"])]);
    expect(labels("c", { hub: h })).toEqual(["p/vision", "q/reader"]); // reader reads images but not PDFs
  });

  test("when no target can read it, the capacity adapter goes first (resolved from settings.capacity_adapter)", () => {
    const { run } = setup([combo("c", ["p/blind", "q/plain"])], { adapter: { images: ["q/reader"] } });
    const r = run("c", { hub: image });
    expect(r.targets.map((t) => t.label)).toEqual(["q/reader", "p/blind", "q/plain"]);
    expect(r.decisions).toContainEqual({ subject: "q/reader", verdict: "in", reason: "capacity adapter for images: no candidate can read the current user turn" });
  });

  test("an adapter already in the list without a capability entry is moved, not duplicated", () => {
    const { run } = setup([combo("c", ["p/blind", "q/plain"])], { adapter: { images: ["q/plain"] } });
    const r = run("c", { hub: image });
    expect(r.targets.map((t) => t.label)).toEqual(["q/plain", "p/blind"]);
    expect(r.decisions).toContainEqual({ subject: "q/plain", verdict: "moved", reason: "capacity adapter for images: no candidate can read the current user turn" });
  });

  test("a key's models allow-list filters the adapters (SPEC 9.6): by provider/model or provider/*; none allowed keeps the order with a warning", () => {
    const { run } = setup([combo("c", ["p/blind", "q/plain"])], { adapter: { images: ["q/reader", "p/vision"] } });
    const only = (keyModels: string[]) => run("c", { hub: image, keyName: "dev", keyModels });
    const barred = only(["c"]);
    expect(barred.targets.map((t) => t.label)).toEqual(["p/blind", "q/plain"]);
    expect(barred.decisions).toContainEqual({ subject: "q/reader", verdict: "out", reason: 'capacity adapter for images: not in the models allow-list of client key "dev"' });
    expect(barred.warning?.code).toBe("capacity_adapter_not_allowed");
    expect(only(["c", "q/reader"]).targets.map((t) => t.label)).toEqual(["q/reader", "p/blind", "q/plain"]);
    expect(only(["c", "p/*"]).targets.map((t) => t.label)).toEqual(["p/vision", "p/blind", "q/plain"]);
    expect(only(["c", "p/*"]).warning).toBeUndefined();
    expect(run("c", { hub: image }).targets.map((t) => t.label)).toEqual(["q/reader", "p/vision", "p/blind", "q/plain"]);
  });

  test("no capable target and no adapter: order kept, and the trace says why", () => {
    const { run } = setup([combo("c", ["p/blind", "q/plain"])]);
    const r = run("c", { hub: image });
    expect(r.targets.map((t) => t.label)).toEqual(["p/blind", "q/plain"]);
    expect(r.decisions[0].reason).toContain("no capacity adapter is configured");
  });
});

describe("quota sort (SPEC R-3)", () => {
  test("targets reporting per-model quota go ahead, most first; the others keep their order behind", () => {
    const { run } = setup([combo("c", ["p/a", "p/b", "q/c", "q/d"])], { quota: { "p/b": 0.3, "q/d": 0.8 } });
    const r = run("c");
    expect(r.targets.map((t) => t.label)).toEqual(["q/d", "p/b", "p/a", "q/c"]);
    expect(r.decisions).toContainEqual({ subject: "q/d", verdict: "moved", reason: "reports 80 % quota left for d; position 4 → 1" });
  });

  test("no quota reported: order unchanged and no decisions", () => {
    const { run } = setup([combo("c", ["p/a", "p/b"])], { quota: {} });
    const r = run("c");
    expect(r.targets.map((t) => t.label)).toEqual(["p/a", "p/b"]);
    expect(r.decisions).toEqual([]);
  });
});

describe("the gateway hook", () => {
  function ctxFor(body: Record<string, unknown>, endpoint: "chat" | "count_tokens" = "chat"): RequestContext {
    return guardedContext(endpoint, body, { headers: { "x-session-id": "abc" }, path: "/v1/chat/completions" });
  }

  test("forRequest() writes decisions into the route trace; affinity hints carry the session key and the cache_affinity given", () => {
    const c = combo("c", ["p/a", "p/b"], { strategy: "round-robin", cacheAffinity: false });
    const { order, table: t } = setup([c]);
    const r = resolveModel("c", t) as Resolution;
    order.forRequest(ctxFor({ model: "c", messages: [{ role: "user", content: "hi" }] }), r);
    const ctx = ctxFor({ model: "c", messages: [{ role: "user", content: "hi" }] });
    const out = order.forRequest(ctx, r);
    expect(out.map((x) => x.label)).toEqual(["p/b", "p/a"]);
    expect(ctx.trace.decisions.map((d) => d.verdict)).toEqual(["moved", "moved"]);
    const hints = affinityHints(ctx, c.cacheAffinity);
    expect({ affinityKey: hints.affinityKey, affinity: hints.affinity }).toEqual({ affinityKey: expect.stringMatching(/^s:[0-9a-f]{32}$/), affinity: false });
    expect(affinityHints(ctx).affinity).toBe(true);
  });

  test("a count_tokens request is ordered like a request but moves no counter", () => {
    const c = combo("c", ["p/a", "p/b"], { strategy: "round-robin" });
    const { order, table: t, labels } = setup([c]);
    const r = resolveModel("c", t) as Resolution;
    order.forRequest(ctxFor({ model: "c", max_tokens: 1, messages: [{ role: "user", content: "hi" }] }, "count_tokens"), r);
    expect(labels("c")[0]).toBe("p/a");
  });
});

describe("repeats (nested combos that reach one model twice)", () => {
  const local = { model: "p/local", account: "local-1" };
  const subjects = (plan: { targets: Target[] }) => plan.targets.map((x) => (x.accountId ? `${x.label} @ ${x.accountId}` : x.label));

  test("the same model on the same account is planned once, at its first position, with a decision for each one left out", () => {
    const { run } = setup([combo("tools-only", ["q/plain", local]), combo("main", [local, "q/reader"]), combo("chain", ["tools-only", "main", local, "p/local"])]);
    const plan = run("chain");
    // an unpinned p/local after it may still go to the provider's other accounts: kept
    expect(subjects(plan)).toEqual(["q/plain", "p/local @ local-1", "q/reader", "p/local"]);
    expect(plan.decisions).toEqual([
      { subject: "p/local @ local-1", verdict: "out", reason: "repeats p/local @ local-1 ahead of it: the same model on the same account is tried once, at its first position" },
      { subject: "p/local @ local-1", verdict: "out", reason: "repeats p/local @ local-1 ahead of it: the same model on the same account is tried once, at its first position" },
    ]);
  });

  test("an unpinned target ahead covers a pinned one of its model (its attempts go through every account); other params are another body: kept", () => {
    const { labels, run } = setup([combo("u", ["p/local", local, { model: "p/local", params: { temperature: 0 } }])]);
    expect(subjects(run("u"))).toEqual(["p/local", "p/local"]);
    expect(run("u").targets[1]!.params).toEqual({ temperature: 0 });
    expect(labels("u").length).toBe(2);
  });
});
