/**
 * `switchyard check-config FILE` (SPEC 2.2) and the shipped example (examples/config.yaml).
 */
import { afterAll, describe, expect, test } from "bun:test";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { checkConfig, loadConfigFile } from "../../src/config/index.ts";
import { COMBO_STRATEGIES } from "../../src/config/schema.ts";

const dir = mkdtempSync(join(tmpdir(), "switchyard-check-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const EXAMPLE = join(import.meta.dir, "..", "..", "examples", "config.yaml");

/** The variables and files the example refers to. */
const exampleEnv = {
  GLM_API_KEY: "sk-glm-example",
  OPENROUTER_API_KEY: "sk-or-example",
  CODEX_TOKEN: "codex-token-example",
  SWITCHYARD_KEY_LAPTOP: "sy-laptop-example-0123456789",
};
function exampleCopy(): string {
  const d = mkdtempSync(join(dir, "example-"));
  cpSync(EXAMPLE, join(d, "config.yaml"));
  mkdirSync(join(d, "secrets"));
  writeFileSync(join(d, "secrets", "openai.key"), "sk-openai-example\n");
  writeFileSync(join(d, "secrets", "ci.key"), "sy-ci-example-0123456789\n");
  return join(d, "config.yaml");
}

describe("checkConfig", () => {
  test("a valid file: one ok line with counts in words (one account, not 1 accounts; providers say how many are built in)", () => {
    const p = join(dir, "ok.yaml");
    writeFileSync(
      p,
      [
        "providers: [{ id: glm, kind: anthropic-compatible, base_url: 'https://h/api/anthropic' }]",
        "accounts: [{ id: a, provider: glm, api_key: k }]",
        "combos: [{ name: c, targets: [{ model: glm/x }] }]",
        "aliases: { fast: c }",
        "keys: [{ name: k, key: sy-a-long-enough-config-key }]",
      ].join("\n"),
    );
    expect(checkConfig(p, {})).toEqual({ ok: true, lines: ["ok: 6 providers (5 built in), 1 account, 1 combo, 1 alias, 1 key"] });
  });

  test("an invalid file: one `path (line N): message` line per issue, the line of the key or of the item around it, no secrets", () => {
    const p = join(dir, "bad.yaml");
    writeFileSync(
      p,
      [
        "accounts: [{ id: a, provider: openai, api_key: env:OPENAI_KEY }]",
        "combos:",
        "  - name: c",
        "    targets:",
        "      - { model: openai/x }",
        "      - { model: nope/y, account: a }",
      ].join("\n"),
    );
    const r = checkConfig(p, {});
    expect(r.ok).toBe(false);
    expect(r.lines).toEqual([
      "accounts[0].api_key (line 1): environment variable OPENAI_KEY is not set",
      'combos[0].targets[1].model (line 6): unknown provider "nope" in "nope/y"; known providers: "anthropic", "openai", "gemini", "cc", "cx"',
    ]);
  });

  test("providers[].first_content_timeout_ms: a whole number of ms, at least 1; a good one reaches the provider", () => {
    const p = join(dir, "first-content.yaml");
    writeFileSync(p, "providers:\n  - { id: glm, kind: anthropic-compatible, base_url: \"https://open.bigmodel.cn/api/anthropic\", first_content_timeout_ms: 0 }\n");
    const r = checkConfig(p, {});
    expect(r.ok).toBe(false);
    expect(r.lines).toHaveLength(1);
    expect(r.lines[0]).toStartWith("providers[0].first_content_timeout_ms (line 2): ");
    expect(r.lines[0]).toContain("at least 1");
    writeFileSync(p, "providers:\n  - { id: glm, kind: anthropic-compatible, base_url: \"https://open.bigmodel.cn/api/anthropic\", first_content_timeout_ms: 30000 }\n");
    expect(checkConfig(p, {}).ok).toBe(true);
    const cfg = loadConfigFile(p, {});
    expect(cfg.providers.get("glm")!.firstContentTimeoutMs).toBe(30_000);
    // Unset: the commit point's default (the larger of 240 s and the idle timeout).
    expect(cfg.providers.get("anthropic")!.firstContentTimeoutMs).toBeUndefined();
  });

  test("server.websocket_idle_timeout_ms: whole ms from 1000 up to the longest timer (2^31-1); a good one is loaded, the default is 10 min", () => {
    const p = join(dir, "ws-idle.yaml");
    for (const [value, says] of [["0", "at least 1000"], ["500", "at least 1000"], ["2147483648", "at most 2147483647"], ["'10m'", "must be a number"], ["1.5e3", ""]] as const) {
      writeFileSync(p, `server:\n  websocket_idle_timeout_ms: ${value}\n`);
      const r = checkConfig(p, {});
      if (says === "") {
        expect(r.ok).toBe(true);
        continue;
      }
      expect(r.ok).toBe(false);
      expect(r.lines).toHaveLength(1);
      expect(r.lines[0]).toStartWith("server.websocket_idle_timeout_ms (line 2): ");
      expect(r.lines[0]).toContain(says);
    }
    writeFileSync(p, "server:\n  websocket_idle_timeout_ms: 90000\n");
    expect(checkConfig(p, {}).ok).toBe(true);
    expect(loadConfigFile(p, {}).server.websocketIdleTimeoutMs).toBe(90_000);
    writeFileSync(p, "server: {}\n");
    expect(loadConfigFile(p, {}).server.websocketIdleTimeoutMs).toBe(600_000);
  });

  test("a key's limits.models pattern provider/* naming no provider is an error naming the known providers, as keys create refuses it", () => {
    const p = join(dir, "key-models.yaml");
    writeFileSync(
      p,
      [
        "providers: [{ id: glmx, kind: anthropic-compatible, base_url: 'https://h/api/anthropic' }]",
        "keys:",
        "  - { name: ok, key: s1, limits: { models: ['openai/*', 'glmx/*'] } }",
        "  - { name: typo, key: s2, limits: { models: ['openai/*', 'glm/*'] } }",
      ].join("\n"),
    );
    expect(checkConfig(p, {})).toEqual({
      ok: false,
      lines: [
        'keys[1].limits.models[1] (line 4): unknown provider "glm" in "glm/*" (did you mean "glmx"?): the pattern would allow no model; known providers: "anthropic", "openai", "gemini", "cc", "cx", "glmx"',
      ],
    });
  });

  test("unknown keys are reported with their path", () => {
    const p = join(dir, "typo.yaml");
    writeFileSync(p, "combos:\n  - name: c\n    targets:\n      - model: openai/x\n        modle: y\n");
    const r = checkConfig(p, {});
    expect(r.ok).toBe(false);
    expect(r.lines).toHaveLength(1);
    expect(r.lines[0]).toStartWith('combos[0].targets[0].modle (line 5): unknown key "modle" in a combo target (did you mean "model"?)');
  });

  test("a section written as a switch (redaction: true, token_savers: false) says it is a mapping and shows its key", () => {
    // Found by a new operator: "expected redaction, got a boolean" did not say what to write instead.
    const p = join(dir, "switch.yaml");
    writeFileSync(p, "settings:\n  redaction: true\n  token_savers: false\nproviders:\n  - glm\n");
    expect(checkConfig(p, {}).lines.sort()).toEqual([
      "providers[0] (line 5): expected a provider (a mapping, e.g. { id: … }), got a string",
      "settings.redaction (line 2): expected redaction (a mapping, e.g. { enabled: … }), got a boolean",
      "settings.token_savers (line 3): expected token_savers (a mapping, e.g. { compress_tool_results: … }), got a boolean",
    ]);
  });

  test("a problem of the whole file (missing, not YAML, not a mapping) is led by the file's name, not (root)", () => {
    const r = checkConfig(join(dir, "nope.yaml"), {});
    expect(r).toEqual({ ok: false, lines: [`${join(dir, "nope.yaml")}: cannot read config file ${join(dir, "nope.yaml")}: not found`] });
    const p = join(dir, "broken.yaml");
    writeFileSync(p, "providers: [\n");
    expect(checkConfig(p, {})).toEqual({ ok: false, lines: [`${p}: YAML syntax error near line 1: Unexpected token`] });
    writeFileSync(p, "- a\n- b\n");
    expect(checkConfig(p, {})).toEqual({ ok: false, lines: [`${p}: expected the configuration file (a mapping), got a list`] });
  });

  test("warnings are printed before the ok line", () => {
    const p = join(dir, "warn.yaml");
    writeFileSync(p, "combos: [{ name: c, targets: [{ model: openai/x, weight: 3 }] }]\n");
    expect(checkConfig(p, {})).toEqual({
      ok: true,
      lines: [
        'warning: combos[0].targets[0].weight: ignored: combo "c" uses strategy fallback, not weighted',
        "ok: 5 providers (5 built in), 0 accounts, 1 combo, 0 aliases, 0 keys",
      ],
    });
  });
});

describe("a short config-file key (bearer keys are never throttled)", () => {
  test("check-config warns, naming the key, its scope and its length, never the secret; 20 characters and more pass", () => {
    const p = join(dir, "short-keys.yaml");
    writeFileSync(p, 'keys:\n  - { name: boss, key: "admin", scopes: [admin] }\n  - { name: dev, key: env:DEV_KEY }\n  - { name: ok, key: "sy-exactly-twenty-ch" }\n');
    const r = checkConfig(p, { DEV_KEY: "sy-short-dev-key" });
    expect(r.ok).toBe(true);
    expect(r.lines).toEqual([
      'warning: keys[0].key: key "boss" (admin scope) is 5 characters long, under 20: wrong keys are never throttled, so from the network a short key can be guessed; give it at least 20 random characters (switchyard keys create makes 46-character keys: sy- and 43 random characters)',
      'warning: keys[1].key: key "dev" is 16 characters long, under 20: wrong keys are never throttled, so from the network a short key can be guessed; give it at least 20 random characters (switchyard keys create makes 46-character keys: sy- and 43 random characters)',
      "ok: 5 providers (5 built in), 0 accounts, 0 combos, 0 aliases, 3 keys",
    ]);
    expect(r.lines.join("\n")).not.toContain("sy-short-dev-key");
  });
});

describe("a model its provider does not list (newuser13 J5)", () => {
  test("a combo target or alias naming a model missing from its provider's models: is a warning with the closest name; a listed one is not", () => {
    const p = join(dir, "typo.yaml");
    writeFileSync(
      p,
      'providers: [{ id: chat, kind: openai-compatible, base_url: "http://127.0.0.1:9/v1", models: { qwen-fake: { context_window: 32000 }, qwen-big: {} } }]\n' +
        "combos: [{ name: coding, targets: [{ model: chat/qwen-fak }, { model: chat/qwen-big }] }]\naliases: { fast: chat/qwen-fake, other: openai/anything }\n",
    );
    expect(checkConfig(p, {})).toEqual({
      ok: true,
      lines: [
        'warning: combos[0].targets[0].model: provider "chat" lists its models ("qwen-fake", "qwen-big") and "qwen-fak" is not one of them (did you mean "qwen-fake"?): it is sent to the upstream as written; add it under providers[].models if it is right',
        "ok: 6 providers (5 built in), 0 accounts, 1 combo, 2 aliases, 0 keys",
      ],
    });
  });
});

describe("a combo that reaches one target twice", () => {
  test("check-config warns at the written target that repeats it (a request tries it once); not an error", () => {
    const p = join(dir, "repeats.yaml");
    writeFileSync(
      p,
      [
        "providers: [{ id: local, kind: openai-compatible, base_url: 'http://127.0.0.1:9/v1' }]",
        "accounts: [{ id: local-1, provider: local, api_key: k }]",
        "combos:",
        "  - { name: tools-only, targets: [{ model: openai/gpt-x }, { model: local/qwen3-coder, account: local-1 }] }",
        "  - { name: main, targets: [{ model: local/qwen3-coder, account: local-1 }] }",
        "  - { name: chain, targets: [{ model: tools-only }, { model: main }, { model: local/qwen3-coder }] }",
        "",
      ].join("\n"),
    );
    expect(checkConfig(p, {})).toEqual({
      ok: true,
      lines: [
        'warning: combos[2].targets[1]: combo "chain" reaches local/qwen3-coder @ local-1 again (first through targets[0]): a request tries it once, at its first position',
        "ok: 6 providers (5 built in), 1 account, 3 combos, 0 aliases, 0 keys",
      ],
    });
  });
});

describe("an alias that shadows a combo (SPEC R-2)", () => {
  test("check-config accepts it and warns", () => {
    const p = join(dir, "shadow.yaml");
    writeFileSync(p, "combos: [{ name: coding, targets: [{ model: openai/x }] }]\naliases: { coding: openai/y }\n");
    expect(checkConfig(p, {})).toEqual({
      ok: true,
      lines: [
        'warning: aliases.coding: alias "coding" shadows combo combos[0] of the same name: "coding" resolves to the alias (aliases are looked up before combos); the combo cannot be reached by that name',
        "ok: 5 providers (5 built in), 0 accounts, 1 combo, 1 alias, 0 keys",
      ],
    });
  });
});

describe("examples/config.yaml", () => {
  test("its budgets comment says what the counters do: windows open at a key's first request on both stores (it said PostgreSQL aligns them to the epoch, which schema 22 ended)", () => {
    const line = readFileSync(EXAMPLE, "utf8").split("\n").find((l) => l.trimStart().startsWith("budgets:"))!;
    expect(line).not.toContain("epoch");
    expect(line).toContain("opened by the key's first request after the last one ended, on both stores");
  });
  test("is accepted by the loader and says what it means", () => {
    const cfg = loadConfigFile(exampleCopy(), exampleEnv);
    expect(cfg.warnings).toEqual([]);
    expect([...cfg.providers.keys()].sort()).toEqual(["anthropic", "cc", "cx", "gemini", "glm", "ollama", "openai", "openrouter"]);
    expect(cfg.accounts.map((a) => [a.id, a.providerId, a.credential.type])).toEqual([
      ["glm-main", "glm", "api_key"],
      ["openai-work", "openai", "api_key"],
      ["openrouter-main", "openrouter", "api_key"],
      ["ollama-local", "ollama", "none"],
      ["cx-team", "cx", "oauth"],
    ]);
    expect(cfg.accounts[1].credential).toEqual({ type: "api_key", apiKey: "sk-openai-example" });
    expect([...cfg.combos.keys()]).toEqual(["always-on", "spread", "coding-chain"]);
    expect(cfg.combos.get("spread")!.strategy).toBe("weighted");
    expect(cfg.combos.get("coding-chain")!.targets.map((t) => t.ref.type)).toEqual(["combo", "combo", "model"]);
    expect(Object.fromEntries(cfg.aliases)).toEqual({ fast: "openai/gpt-5-mini", coding: "always-on", default: "coding" });
    expect(cfg.keys.map((k) => [k.name, k.scopes, k.tag])).toEqual([
      ["laptop", ["admin"], undefined],
      ["ci", [], "ci"],
    ]);
    expect(cfg.providers.get("openrouter")!.idleTimeoutMs).toBe(180_000);
    expect(cfg.providers.get("openai")!.source).toBe("config");
    expect(cfg.providers.get("openai")!.models["gpt-5-mini"]).toMatchObject({ contextWindow: 400000, images: true });
  });

  test("as shipped, without its variables and secret files, check-config names exactly what its header comment says is missing", () => {
    const d = mkdtempSync(join(dir, "example-bare-"));
    cpSync(EXAMPLE, join(d, "config.yaml"));
    const r = checkConfig(join(d, "config.yaml"), {});
    expect(r.ok).toBe(false);
    const named = r.lines.map((l) => l.match(/environment variable (\w+) is not set|cannot read file .*\/(secrets\/[\w.]+): not found/)?.slice(1).find(Boolean));
    expect(named).toEqual(["GLM_API_KEY", "secrets/openai.key", "OPENROUTER_API_KEY", "CODEX_TOKEN", "SWITCHYARD_KEY_LAPTOP", "secrets/ci.key"]);
    const header = readFileSync(EXAMPLE, "utf8").split("\n").filter((l) => l.startsWith("#")).join(" ");
    for (const n of named) expect(header).toContain(n!);
  });

  test("check-config on the example prints the ok line", () => {
    expect(checkConfig(exampleCopy(), exampleEnv)).toEqual({
      ok: true,
      lines: ["ok: 8 providers (5 built in, 1 of them set in the file), 5 accounts, 3 combos, 3 aliases, 2 keys"],
    });
  });

  test("key limits, prices, alerts and the flight recorder are shown with the schema's defaults", () => {
    const cfg = loadConfigFile(exampleCopy(), exampleEnv);
    expect(cfg.keys[1].limits).toMatchObject({ rpm: 60, tpm: 400000, concurrency: 4, models: ["coding", "glm/*"] });
    expect(cfg.settings.flightRecorder).toEqual({ enabled: false, maxRequests: 200, maxBodyBytes: 1048576 });
    expect(cfg.settings.alerts.quotaThresholds).toEqual([0.8, 0.95]);
    // The values shown are the defaults: a file without them means the same.
    writeFileSync(join(dir, "empty.yaml"), "");
    const defaults = loadConfigFile(join(dir, "empty.yaml"), {}).settings;
    expect(cfg.settings.flightRecorder).toEqual(defaults.flightRecorder);
    expect(cfg.settings.alerts.quotaThresholds).toEqual(defaults.alerts.quotaThresholds);
  });

  test("every place that lists the combo strategies names each one the schema accepts", () => {
    const root = join(import.meta.dir, "..", "..");
    const comments = [
      ...readFileSync(EXAMPLE, "utf8").split("\n").filter((l) => /^\s+strategy: \S+\s+#/.test(l)),
      ...readFileSync(join(root, "README.md"), "utf8").split("\n").filter((l) => /^\s+strategy: \S+\s+#/.test(l)),
      readFileSync(join(root, "src/dashboard/client/pages/routing.tsx"), "utf8").match(/A combo is an ordered list of targets with a strategy \([^)]*\)[^)]*\)/)?.[0] ?? "",
    ];
    expect(comments.length).toBe(3);
    for (const c of comments) for (const s of COMBO_STRATEGIES) expect(c).toContain(s);
  });

  test("writes no secret inline: every credential field is env: or file:", () => {
    const text = readFileSync(EXAMPLE, "utf8");
    const uncommented = text.split("\n").filter((l) => !l.trimStart().startsWith("#"));
    for (const line of uncommented) {
      const m = /\b(api_key|access_token|refresh_token|key):\s*(\S+)/.exec(line.replace(/#.*$/, ""));
      if (m) expect(m[2]).toMatch(/^(env|file):/);
    }
  });

  test("without its environment, check-config names each missing variable", () => {
    const r = checkConfig(exampleCopy(), {});
    expect(r.ok).toBe(false);
    // each names the line the variable is read on
    const line = (v: string) => readFileSync(EXAMPLE, "utf8").split("\n").findIndex((l) => !l.trimStart().startsWith("#") && l.includes(`env:${v}`)) + 1;
    expect(r.lines).toEqual([
      `accounts[0].api_key (line ${line("GLM_API_KEY")}): environment variable GLM_API_KEY is not set`,
      `accounts[2].api_key (line ${line("OPENROUTER_API_KEY")}): environment variable OPENROUTER_API_KEY is not set`,
      `accounts[4].access_token (line ${line("CODEX_TOKEN")}): environment variable CODEX_TOKEN is not set`,
      `keys[0].key (line ${line("SWITCHYARD_KEY_LAPTOP")}): environment variable SWITCHYARD_KEY_LAPTOP is not set`,
    ]);
  });
});
