/**
 * resolve (SPEC R-2): table-driven resolution order — provider prefix before the FIRST slash (no combo
 * lookup), alias, combo, guess — nested combos, and the 404 for an unknown prefix.
 */
import { describe, expect, test } from "bun:test";
import { addAccountHint, guessProvider, resolveModel } from "../../pipeline/resolve.ts";
import { combo, provider, table } from "./routing-helpers.ts";

const anthropic = provider("anthropic", "anthropic");
const openai = provider("openai", "openai");
const gemini = provider("gemini", "gemini");
const glm = provider("glm", "anthropic-compatible");
const fast = provider("fast", "openai-compatible");

const T = table(
  [anthropic, openai, gemini, glm, fast],
  { quick: "openai/gpt-5-mini", coding: "duo", twice: "quick", glm: "anthropic/claude-aliased", "fast/x": "anthropic/never" },
  [
    combo("duo", [{ model: "glm/glm-5", account: "glm-main", weight: 3, params: { temperature: 0.2 } }, "anthropic/claude-sonnet"]),
    combo("outer", ["openai/gpt-5", "duo", { model: "quick", account: "oai-2", weight: 5 }]),
    combo("quick", ["gemini/never-used"]), // shadowed by the alias of the same name
    combo("fast", ["openai/combo-not-prefix"]),
  ],
);

const labels = (name: string) => {
  const r = resolveModel(name, T);
  if ("kind" in r) throw new Error(`${name}: ${r.message}`);
  return r.targets.map((t) => t.label + (t.accountId ? ` @ ${t.accountId}` : ""));
};

describe("resolution order (SPEC R-2)", () => {
  const cases: Array<[string, string[], string]> = [
    ["anthropic/claude-x", ["anthropic/claude-x"], "provider-prefix"],
    ["glm/glm-5", ["glm/glm-5"], "provider-prefix"],
    // prefix before the FIRST slash; the rest is the upstream id, slashes included
    ["fast/meta-llama/llama-4", ["fast/meta-llama/llama-4"], "provider-prefix"],
    // a name with a slash never looks up an alias or combo, even when one has that exact name
    ["fast/x", ["fast/x"], "provider-prefix"],
    ["quick", ["openai/gpt-5-mini"], "alias"],
    ["twice", ["openai/gpt-5-mini"], "alias"],
    ["coding", ["glm/glm-5 @ glm-main", "anthropic/claude-sonnet"], "alias"],
    ["duo", ["glm/glm-5 @ glm-main", "anthropic/claude-sonnet"], "combo"],
    // an alias wins over a provider id and a combo of the same name
    ["glm", ["anthropic/claude-aliased"], "alias"],
    ["claude-opus-9", ["anthropic/claude-opus-9"], "guess"],
    ["gemini-3-pro", ["gemini/gemini-3-pro"], "guess"],
    ["gpt-6", ["openai/gpt-6"], "guess"],
    ["o3-mini", ["openai/o3-mini"], "guess"],
    ["mystery-model", ["openai/mystery-model"], "guess"],
  ];
  for (const [name, want, via] of cases) {
    test(`${name} → ${want.join(", ")} (${via})`, () => {
      expect(labels(name)).toEqual(want);
      const r = resolveModel(name, T);
      expect<string>("kind" in r ? r.kind : r.via).toBe(via);
    });
  }

  test("guessProvider follows the prefixes of SPEC R-2", () => {
    expect(["claude-3", "gemini-x", "gpt-4o", "o1", "o4-mini", "llama"].map((m) => guessProvider(m))).toEqual(["anthropic", "gemini", "openai", "openai", "openai", "openai"]);
  });

  describe("the guess with account facts (SPEC R-2)", () => {
    const cc = { ...provider("cc", "claude-code"), source: "builtin" as const };
    const cx = { ...provider("cx", "codex"), source: "builtin" as const };
    const cc2 = provider("cc-team", "claude-code");
    const glmModels = provider("glm", "anthropic-compatible", { "glm-5.3": {} });
    /** `withAccounts`: provider ids that have accounts; `advertised`: provider id → models its accounts advertise. */
    const facts = (withAccounts: string[], advertised: Record<string, string[]> = {}, providers = [anthropic, openai, gemini, cc, cx, cc2, glmModels]) => ({
      ...table(providers),
      accounts: {
        hasAccounts: (id: string) => withAccounts.includes(id),
        advertising: (m: string) =>
          providers.filter((p) => withAccounts.includes(p.id) && (m in p.models || (advertised[p.id] ?? []).includes(m))).map((p) => p.id),
      },
    });
    const guess = (name: string, t: ReturnType<typeof facts>) => {
      const r = resolveModel(name, t);
      if ("kind" in r) throw new Error(r.message);
      expect(r.via).toBe("guess");
      return r.targets.map((x) => x.label);
    };
    const cases: Array<[string, string, ReturnType<typeof facts>, string]> = [
      ["only a Claude Code login: a bare claude- name goes to cc", "claude-sonnet-4-5", facts(["cc"]), "cc/claude-sonnet-4-5"],
      ["an anthropic account wins over cc", "claude-sonnet-4-5", facts(["anthropic", "cc"]), "anthropic/claude-sonnet-4-5"],
      ["no account anywhere: the name's provider (the gateway says no account)", "claude-sonnet-4-5", facts([]), "anthropic/claude-sonnet-4-5"],
      ["only a Codex login: gpt- goes to cx", "gpt-5.1-codex", facts(["cx"]), "cx/gpt-5.1-codex"],
      ["only a Codex login: codex- goes to cx", "codex-mini-latest", facts(["cx"]), "cx/codex-mini-latest"],
      ["only a Codex login: an unknown name goes to cx", "mystery", facts(["cx"]), "cx/mystery"],
      ["openai account wins over cx", "gpt-5", facts(["openai", "cx"]), "openai/gpt-5"],
      ["gemini- stays gemini", "gemini-2.5-pro", facts(["cx", "cc"]), "gemini/gemini-2.5-pro"],
      ["the built-in cc wins over another claude-code provider", "claude-opus-4-1", facts(["cc", "cc-team"]), "cc/claude-opus-4-1"],
      ["a configured claude-code provider when it is the only one with accounts", "claude-opus-4-1", facts(["cc-team"]), "cc-team/claude-opus-4-1"],
      ["exactly one provider advertises the model: it", "claude-opus-4-1", facts(["anthropic", "cc-team"], { "cc-team": ["claude-opus-4-1"] }), "cc-team/claude-opus-4-1"],
      ["configured models count as advertised", "glm-5.3", facts(["openai", "glm"]), "glm/glm-5.3"],
      ["two providers advertise it: the name decides", "claude-opus-4-1", facts(["anthropic", "cc"], { anthropic: ["claude-opus-4-1"], cc: ["claude-opus-4-1"] }), "anthropic/claude-opus-4-1"],
      ["a provider without accounts does not advertise", "glm-5.3", facts(["openai"]), "openai/glm-5.3"],
    ];
    for (const [what, name, t, want] of cases) test(what, () => expect(guess(name, t)).toEqual([want]));
  });

  test("an alias to a combo reports both the alias and the combo", () => {
    const r = resolveModel("coding", T);
    if ("kind" in r) throw new Error(r.message);
    expect(r.alias).toBe("coding");
    expect(r.combo?.name).toBe("duo");
  });
});

describe("combos", () => {
  test("nested combos expand depth-first in written order; aliases inside combos are followed", () => {
    expect(labels("outer")).toEqual(["openai/gpt-5", "glm/glm-5 @ glm-main", "anthropic/claude-sonnet", "openai/gpt-5-mini @ oai-2"]);
  });

  test("target fields (account, weight, params) survive expansion and name the innermost combo", () => {
    const r = resolveModel("outer", T);
    if ("kind" in r) throw new Error(r.message);
    expect(r.combo?.name).toBe("outer");
    const glmT = r.targets[1];
    expect(glmT).toMatchObject({ model: "glm-5", accountId: "glm-main", weight: 3, params: { temperature: 0.2 }, combo: "duo" });
    expect(r.targets[3]).toMatchObject({ model: "gpt-5-mini", accountId: "oai-2", weight: 5, combo: "outer" });
  });

  test("a cycle (normally rejected when the config loads) is an error, not a hang", () => {
    const cyc = table([openai], {}, [combo("a", ["b"]), combo("b", ["a"])]);
    const r = resolveModel("a", cyc);
    expect("kind" in r).toBe(true);
  });

  test("a combo may name the same combo twice (a diamond is not a cycle)", () => {
    const d = table([openai], {}, [combo("leaf", ["openai/x"]), combo("top", ["leaf", "leaf"])]);
    const r = resolveModel("top", d);
    if ("kind" in r) throw new Error(r.message);
    expect(r.targets.map((t) => t.label)).toEqual(["openai/x", "openai/x"]);
  });
});

describe("errors", () => {
  test("an unknown provider prefix is a 404 model_not_found naming the prefix", () => {
    const r = resolveModel("nope/some-model", T);
    expect("kind" in r && r).toMatchObject({ kind: "model_not_found", status: 404, code: "model_not_found" });
    expect("kind" in r ? r.message : "").toContain("nope");
  });

  test("a combo target with an unknown provider is a 404 too", () => {
    const bad = table([openai], {}, [combo("c", ["ghost/m"])]);
    const r = resolveModel("c", bad);
    expect("kind" in r && r.status).toBe(404);
  });

  test("a guess whose built-in provider is not configured is a 404", () => {
    const r = resolveModel("claude-x", table([openai]));
    expect("kind" in r && r.status).toBe(404);
  });
});

describe("addAccountHint: how a provider without accounts gets one", () => {
  test("subscription kinds: login or import, naming --provider for a provider other than the built-in one", () => {
    expect(addAccountHint({ id: "cx", kind: "codex", source: "builtin" })).toBe("log in with `switchyard login codex` (or adopt the CLI's own login with `switchyard import codex`)");
    expect(addAccountHint({ id: "cc-team", kind: "claude-code", source: "config" })).toBe(
      "log in with `switchyard login claude-code --provider cc-team` (or adopt the CLI's own login with `switchyard import claude-code --provider cc-team`)",
    );
  });
  test("API-key kinds: an accounts: entry; the built-in ones also the default config's variable", () => {
    expect(addAccountHint({ id: "glm", kind: "anthropic-compatible", source: "config" })).toBe("add an account under `accounts:` in the config file (`provider: glm` with its `api_key`)");
    expect(addAccountHint({ id: "anthropic", kind: "anthropic", source: "builtin" })).toBe(
      "add an account under `accounts:` in the config file (`provider: anthropic` with its `api_key`), or set ANTHROPIC_API_KEY before starting switchyard without a config file",
    );
  });
});
