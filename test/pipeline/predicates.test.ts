/**
 * Predicates (SPEC 5.2): every operator, every fact, three-valued logic, when_unknown, explanations.
 */
import { describe, expect, test } from "bun:test";
import { decide, estimateInputTokens, evaluate, requestFacts, type PredicateExpr, type RequestFacts } from "../../pipeline/predicates.ts";
import { hub, provider, target } from "./routing-helpers.ts";

const glm = provider("glm", "anthropic-compatible", {
  "glm-5": { contextWindow: 200_000, maxOutputTokens: 32_000, images: true, pdf: false, reasoningEfforts: ["low", "high"] },
  "glm-mini": {},
});
const T = target(glm, "glm-5");
const BARE = target(glm, "unlisted");
const MINI = target(glm, "glm-mini");

const withTools = hub({
  tools: [{ kind: "function", name: "read_file", parameters: { type: "object" } }],
  reasoning: { effort: "high" },
  messages: [
    { role: "user", content: [{ type: "text", text: "x".repeat(4000) }] },
    { role: "assistant", content: [{ type: "text", text: "ok" }] },
    { role: "user", content: [{ type: "image", source: { kind: "url", url: "https://example.invalid/a.png" } }] },
  ],
});

const facts = (extra: Partial<Parameters<typeof requestFacts>[0]> = {}): RequestFacts =>
  requestFacts({ hub: withTools, clientFormat: "anthropic-messages", requestedModel: "coding", alias: "coding", combo: "duo", keyTag: "team-a", ...extra });

const ev = (expr: PredicateExpr, f = facts(), t = T) => evaluate(expr, f, t);
const cmp = (fact: string, op: string, value: unknown, arg?: string) => ({ fact, op, value, ...(arg ? { arg } : {}) }) as PredicateExpr;

describe("operators", () => {
  const table: Array<[string, PredicateExpr, boolean]> = [
    ["eq string", cmp("client_format", "eq", "anthropic-messages"), true],
    ["eq string false", cmp("client_format", "eq", "openai-chat"), false],
    ["ne", cmp("target_provider", "ne", "openai"), true],
    ["ne false", cmp("target_provider", "ne", "glm"), false],
    ["lt", cmp("target_context_window", "lt", 300_000), true],
    ["lt false at equality", cmp("target_context_window", "lt", 200_000), false],
    ["lte at equality", cmp("target_context_window", "lte", 200_000), true],
    ["gt", cmp("target_max_output_tokens", "gt", 16_000), true],
    ["gt false at equality", cmp("target_max_output_tokens", "gt", 32_000), false],
    ["gte at equality", cmp("target_max_output_tokens", "gte", 32_000), true],
    ["in", cmp("target_model", "in", ["glm-4", "glm-5"]), true],
    ["in false", cmp("target_model", "in", ["glm-4"]), false],
    ["not_in", cmp("key_tag", "not_in", ["team-b"]), true],
    ["not_in false", cmp("key_tag", "not_in", ["team-a", "team-b"]), false],
    ["contains", cmp("requested_model", "contains", "cod"), true],
    ["contains false", cmp("requested_model", "contains", "xyz"), false],
    ["number in", cmp("target_context_window", "in", [128_000, 200_000]), true],
  ];
  for (const [name, expr, want] of table) {
    test(name, () => expect(ev(expr).value).toBe(want));
  }
});

describe("facts", () => {
  test("request facts from the hub: tools, images (in any turn), reasoning, input token estimate", () => {
    const f = facts();
    expect(f).toMatchObject({ has_tools: true, has_images: true, has_reasoning: true, frontend: "anthropic", client_format: "anthropic-messages" });
    expect(f.input_tokens).toBeGreaterThanOrEqual(1000 + 1000); // 4000 chars ≈ 1000 tokens + one image
    const plain = requestFacts({ hub: hub(), clientFormat: "openai-chat", requestedModel: "m" });
    expect(plain).toMatchObject({ has_tools: false, has_images: false, has_reasoning: false, frontend: "openai", requested_alias: null, requested_combo: null, key_tag: null });
  });

  test("has_reasoning: an explicit off, effort none, or no config is false; a budget or adaptive is true", () => {
    const r = (reasoning: object | undefined) => requestFacts({ hub: hub({ reasoning: reasoning as never }), clientFormat: "openai-chat", requestedModel: "m" }).has_reasoning;
    expect([r(undefined), r({ enabled: false, effort: "high" }), r({ effort: "none" }), r({ budgetTokens: 1024 }), r({ adaptive: true }), r({ effort: "minimal" })]).toEqual([false, false, false, true, true, true]);
  });

  test("has_images counts images inside tool results", () => {
    const h = hub({ messages: [{ role: "user", content: [{ type: "tool_result", callId: "c1", content: [{ type: "image", source: { kind: "base64", mediaType: "image/png", data: "AA==" } }] }] }] });
    expect(requestFacts({ hub: h, clientFormat: "openai-chat", requestedModel: "m" }).has_images).toBe(true);
  });

  test("every fact of SPEC 5.2 has a value for a fully described target", () => {
    const all: Array<[PredicateExpr, boolean]> = [
      [cmp("has_tools", "eq", true), true],
      [cmp("has_images", "eq", true), true],
      [cmp("has_reasoning", "eq", true), true],
      [cmp("frontend", "eq", "anthropic"), true],
      [cmp("client_format", "eq", "anthropic-messages"), true],
      [cmp("requested_model", "eq", "coding"), true],
      [cmp("requested_alias", "eq", "coding"), true],
      [cmp("requested_combo", "eq", "duo"), true],
      [cmp("key_tag", "eq", "team-a"), true],
      [cmp("input_tokens", "gt", 1000), true],
      [cmp("target_model", "eq", "glm-5"), true],
      [cmp("target_provider", "eq", "glm"), true],
      [cmp("target_capability", "eq", true, "images"), true],
      [cmp("target_capability", "eq", false, "pdf"), true],
      [cmp("target_capability", "eq", true, "reasoning"), true],
      [cmp("target_context_window", "eq", 200_000), true],
      [cmp("target_max_output_tokens", "eq", 32_000), true],
    ];
    for (const [expr, want] of all) expect([JSON.stringify(expr), ev(expr).value]).toEqual([JSON.stringify(expr), want]);
  });

  test("a Gemini client has no frontend (unknown)", () => {
    expect(ev(cmp("frontend", "eq", "openai"), facts({ clientFormat: "gemini" })).value).toBe("unknown");
  });
});

describe("unknown", () => {
  test("a target without a models entry: capabilities and limits are unknown, with the reason", () => {
    const e = ev(cmp("target_context_window", "gte", 100_000), facts(), BARE);
    expect(e.value).toBe("unknown");
    expect(e.explanation).toContain("no models entry for glm/unlisted");
    expect(ev(cmp("target_capability", "eq", true, "images"), facts(), MINI).value).toBe("unknown");
    expect(ev(cmp("target_capability", "eq", true, "reasoning"), facts(), MINI).value).toBe("unknown");
    expect(ev(cmp("target_max_output_tokens", "gt", 1), facts(), MINI).explanation).toContain("max_output_tokens not set for glm/glm-mini");
  });

  test("an unparsable body makes body facts unknown, not false", () => {
    const f = facts({ hub: undefined, hubError: "the body is not valid JSON" });
    for (const fact of ["has_tools", "has_images", "has_reasoning"]) expect(ev(cmp(fact, "eq", false), f).value).toBe("unknown");
    const e = ev(cmp("input_tokens", "lt", 10), f);
    expect(e.value).toBe("unknown");
    expect(e.explanation).toContain("the body is not valid JSON");
  });

  test("a fact known to be absent (no alias, no key tag) is not unknown", () => {
    const f = facts({ alias: undefined, keyTag: undefined, combo: undefined });
    expect(ev(cmp("requested_alias", "eq", "coding"), f).value).toBe(false);
    expect(ev(cmp("key_tag", "ne", "team-a"), f).value).toBe(true);
    expect(ev(cmp("key_tag", "in", ["team-a"]), f).value).toBe(false);
    expect(ev(cmp("key_tag", "not_in", ["team-a"]), f).value).toBe(true);
    expect(ev(cmp("requested_combo", "contains", "d"), f).value).toBe(false);
    expect(ev(cmp("key_tag", "eq", "x"), f).explanation).toContain("key_tag (none)");
  });

  const U = cmp("target_context_window", "gt", 1); // unknown on BARE
  const Tr = cmp("target_provider", "eq", "glm");
  const F = cmp("target_provider", "eq", "openai");
  const kleene: Array<[string, PredicateExpr, true | false | "unknown"]> = [
    ["all(true, unknown) = unknown", { all: [Tr, U] }, "unknown"],
    ["all(false, unknown) = false", { all: [F, U] }, false],
    ["all(true, true) = true", { all: [Tr, Tr] }, true],
    ["any(true, unknown) = true", { any: [U, Tr] }, true],
    ["any(false, unknown) = unknown", { any: [F, U] }, "unknown"],
    ["any(false, false) = false", { any: [F, F] }, false],
    ["not(unknown) = unknown", { not: U }, "unknown"],
    ["not(true) = false", { not: Tr }, false],
    ["not(not(false)) = false", { not: { not: F } }, false],
  ];
  for (const [name, expr, want] of kleene) test(`Kleene: ${name}`, () => expect(evaluate(expr, facts(), BARE).value).toBe(want));

  test("when_unknown: skip (default) drops the target, allow keeps it; true/false decide alone", () => {
    expect(decide({ expr: U, whenUnknown: "skip" }, facts(), BARE)).toMatchObject({ value: "unknown", admit: false });
    expect(decide({ expr: U, whenUnknown: "allow" }, facts(), BARE)).toMatchObject({ value: "unknown", admit: true });
    expect(decide({ expr: F, whenUnknown: "allow" }, facts(), BARE)).toMatchObject({ value: false, admit: false });
    expect(decide({ expr: Tr, whenUnknown: "skip" }, facts(), BARE)).toMatchObject({ value: true, admit: true });
    expect(decide({ expr: U, whenUnknown: "skip" }, facts(), BARE).explanation).toEndWith("when_unknown: skip → skipped");
  });
});

describe("explanations", () => {
  test("a leaf names the fact, its value and the comparison", () => {
    expect(ev(cmp("target_context_window", "lt", 100_000)).explanation).toBe("target_context_window (200000) lt 100000 → false");
    expect(ev(cmp("client_format", "in", ["openai-chat", "anthropic-messages"])).explanation).toBe('client_format ("anthropic-messages") in ["openai-chat", "anthropic-messages"] → true');
    expect(ev(cmp("input_tokens", "lt", 5)).explanation).toMatch(/^input_tokens \(\d+, estimated\) lt 5 → false$/);
    expect(ev(cmp("target_capability", "eq", true, "images")).explanation).toBe("target_capability(images) (true) eq true → true");
  });

  test("compound nodes show every child and the combined value", () => {
    const e = ev({ all: [cmp("has_tools", "eq", true), { not: cmp("key_tag", "eq", "team-a") }] });
    expect(e.explanation).toBe('all(has_tools (true) eq true → true; not(key_tag ("team-a") eq "team-a" → true) → false) → false');
  });
});

describe("input token estimate", () => {
  test("about 4 characters per token plus a fixed amount per image/document", () => {
    const h = hub({ system: [{ type: "text", text: "s".repeat(400) }], messages: [{ role: "user", content: [{ type: "text", text: "u".repeat(400) }, { type: "document", source: { kind: "base64", mediaType: "application/pdf", data: "AAAA" } }] }] });
    expect(estimateInputTokens(h)).toBe(200 + 1000);
  });
});
