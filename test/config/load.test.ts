/**
 * Loading (SPEC 2.3): secrets, built-in providers, cross-reference errors with their exact paths,
 * cycles, the no-file default, and no secret in any error message.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  CLAUDE_CODE_OAUTH,
  ConfigError,
  CODEX_OAUTH,
  defaultConfig,
  defaultConfigPath,
  loadConfig,
  loadConfigFile,
  parseConfig,
} from "../../src/config/index.ts";
import { issueAt, issues, ok, yaml } from "./helpers.ts";
import { PLACEHOLDER_KEY } from "../../src/cli/setup.ts";
import { CLIENT_KEY_PLACEHOLDERS } from "../../src/config/load.ts";
import { KEY_SECRET_PREFIX } from "../../src/store/secrets.ts";

const dir = mkdtempSync(join(tmpdir(), "switchyard-config-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("secrets: env: and file:", () => {
  test("env:NAME reads the environment; file:PATH reads a file relative to the config's folder, trimmed", () => {
    writeFileSync(join(dir, "glm.key"), "sk-from-file\n");
    const cfg = ok(
      yaml`
        accounts:
          - { id: a, provider: openai, api_key: env:OPENAI_KEY }
          - { id: b, provider: openai, api_key: file:glm.key }
          - { id: c, provider: cc, access_token: env:CC_TOKEN, refresh_token: env:CC_REFRESH, account_id: acct-1 }
          - { id: d, provider: openai, api_key: sk-inline }
        keys:
          - { name: laptop, key: env:SY_KEY, scopes: [admin], tag: dev }
      `,
      { baseDir: dir, env: { OPENAI_KEY: "sk-from-env", CC_TOKEN: "at", CC_REFRESH: "rt", SY_KEY: "sy-123" } },
    );
    expect(cfg.accounts.map((a) => a.credential)).toEqual([
      { type: "api_key", apiKey: "sk-from-env" },
      { type: "api_key", apiKey: "sk-from-file" },
      { type: "oauth", accessToken: "at", refreshToken: "rt", accountId: "acct-1" },
      { type: "api_key", apiKey: "sk-inline" },
    ]);
    expect(cfg.keys).toEqual([{ name: "laptop", secret: "sy-123", scopes: ["admin"], tag: "dev", source: "config" }]);
  });

  test("file: with CRLF and several trailing newlines; absolute paths", () => {
    const p = join(dir, "crlf.key");
    writeFileSync(p, "sk-crlf\r\n\r\n");
    const cfg = ok(`accounts: [{ id: a, provider: openai, api_key: "file:${p}" }]`);
    expect(cfg.accounts[0].credential).toEqual({ type: "api_key", apiKey: "sk-crlf" });
  });

  test("a missing env var or file is an error naming the path (and the variable or file)", () => {
    const list = issues(
      yaml`
        server: { database: env:DB_URL }
        accounts:
          - { id: a, provider: openai, api_key: env:NOPE_KEY }
          - { id: b, provider: openai, api_key: file:missing.key }
          - { id: c, provider: openai, api_key: env:EMPTY_KEY }
          - { id: d, provider: openai, api_key: "env:" }
        keys:
          - { name: k, key: env:KEY_NOT_SET }
      `,
      { baseDir: dir, env: { EMPTY_KEY: "" } },
    );
    expect(issueAt(list, "server.database").message).toBe("environment variable DB_URL is not set");
    expect(issueAt(list, "accounts[0].api_key").message).toBe("environment variable NOPE_KEY is not set");
    expect(issueAt(list, "accounts[1].api_key").message).toBe(`cannot read file ${join(dir, "missing.key")}: not found`);
    expect(issueAt(list, "accounts[2].api_key").message).toBe("environment variable EMPTY_KEY is empty");
    expect(issueAt(list, "accounts[3].api_key").message).toContain("env: needs a variable name");
    expect(issueAt(list, "keys[0].key").message).toBe("environment variable KEY_NOT_SET is not set");
  });

  test("with --database given, a server.database the loader cannot read is a warning, not an error (the flag wins)", () => {
    const text = yaml`
      server: { database: env:DB_URL }
      accounts: [{ id: a, provider: openai, api_key: sk-a }]
    `;
    expect(issueAt(issues(text), "server.database").message).toBe("environment variable DB_URL is not set");
    const cfg = ok(text, { databaseFlag: true });
    expect(cfg.server.database).toBeUndefined();
    expect(cfg.warnings).toEqual([{ path: "server.database", message: "environment variable DB_URL is not set; the --database given to start is used" }]);
    // one it can read is read as before (a reload compares it with the value at start)
    expect(ok(text, { databaseFlag: true, env: { DB_URL: "postgres://h/db" } })).toMatchObject({ server: { database: "postgres://h/db" }, warnings: [] });
  });

  test("proxy may come from env: and must be an http(s) URL", () => {
    const cfg = ok("accounts: [{ id: a, provider: openai, api_key: k, proxy: env:PROXY }]", {
      env: { PROXY: "http://user:pw@127.0.0.1:3128" },
    });
    expect(cfg.accounts[0].proxy).toBe("http://user:pw@127.0.0.1:3128");
    const list = issues("accounts: [{ id: a, provider: openai, api_key: k, proxy: env:PROXY }]", {
      env: { PROXY: "socks9://user:hunter2@host" },
    });
    expect(issueAt(list, "accounts[0].proxy").message).toBe("proxy (from env:PROXY) must be an http:// or https:// URL");
  });
});

describe("built-in providers (SPEC 2.3, P-1)", () => {
  test("the five built-ins with format, family, base URL, timeouts and slots", () => {
    const p = ok("").providers;
    const pick = (id: string) => {
      const x = p.get(id)!;
      return [x.kind, x.format, x.family, x.baseUrl, x.idleTimeoutMs, x.headerTimeoutMs, x.defaultMaxConcurrency, x.source];
    };
    expect(pick("anthropic")).toEqual(["anthropic", "anthropic-messages", "anthropic", "https://api.anthropic.com", 60000, 60000, undefined, "builtin"]);
    expect(pick("openai")).toEqual(["openai", "openai-chat", "openai", "https://api.openai.com/v1", 60000, 60000, undefined, "builtin"]);
    expect(pick("gemini")).toEqual(["gemini", "gemini", "gemini", "https://generativelanguage.googleapis.com", 60000, 60000, undefined, "builtin"]);
    expect(pick("cc")).toEqual(["claude-code", "anthropic-messages", "anthropic", "https://api.anthropic.com", 60000, 60000, 5, "builtin"]);
    expect(pick("cx")).toEqual(["codex", "openai-responses", "openai", "https://chatgpt.com/backend-api/codex", 180000, 60000, 3, "builtin"]);
    expect(p.get("cc")!.oauth).toEqual(CLAUDE_CODE_OAUTH);
    expect(p.get("cx")!.oauth).toEqual(CODEX_OAUTH);
    expect(p.get("openai")!.oauth).toBeUndefined();
  });

  test("an entry with a built-in id overrides only the fields it sets", () => {
    const cfg = ok(yaml`
      providers:
        - id: cx
          slow: false
          max_concurrency: 1
          oauth: { token_url: "http://127.0.0.1:9999/token" }
        - id: openai
          base_url: http://127.0.0.1:8080/v1/
          models: { gpt-5: { context_window: 400000, reasoning_efforts: [low, high] } }
    `);
    const cx = cfg.providers.get("cx")!;
    expect(cx).toMatchObject({ kind: "codex", idleTimeoutMs: 60000, defaultMaxConcurrency: 1, source: "config" });
    expect(cx.oauth).toEqual({ ...CODEX_OAUTH, tokenUrl: "http://127.0.0.1:9999/token" });
    const openai = cfg.providers.get("openai")!;
    expect(openai.baseUrl).toBe("http://127.0.0.1:8080/v1");
    expect(openai.models).toEqual({ "gpt-5": { contextWindow: 400000, reasoningEfforts: ["low", "high"] } });
    expect(openai.family).toBe("openai");
  });

  test("reasoning_efforts takes the effort levels only, in lower case: a typo or a capital is an error naming the level (it was the level requests were clamped to)", () => {
    // Accepted before: a Chat request for "high" went upstream as "medium" ([low, medium, hihg]) and as "Low" ([Low, High]).
    const found = issues(yaml`
      providers:
        - id: oc
          kind: openai-compatible
          base_url: http://127.0.0.1:9/v1
          models:
            gpt-x: { reasoning_efforts: [low, medium, hihg] }
            gpt-y: { reasoning_efforts: [Low, high] }
            gpt-z: { reasoning_efforts: [banana] }
    `);
    expect(issueAt(found, "providers[0].models.gpt-x.reasoning_efforts[2]").message).toContain('"hihg" is not a reasoning effort (did you mean "high"?)');
    expect(issueAt(found, "providers[0].models.gpt-y.reasoning_efforts[0]").message).toContain('write it in lower case: "low"');
    expect(issueAt(found, "providers[0].models.gpt-z.reasoning_efforts[0]").message).toContain("none, minimal, low, medium, high, xhigh, max, ultra");
    const cfg = ok(yaml`
      providers:
        - id: openai
          models: { gpt-5: { reasoning_efforts: [none, minimal, low, medium, high, xhigh] }, o: { reasoning_efforts: [max, ultra] }, p: { reasoning_efforts: [] } }
    `);
    expect(cfg.providers.get("openai")!.models["o"]).toEqual({ reasoningEfforts: ["max", "ultra"] });
  });

  test("the kind of a built-in cannot change", () => {
    expect(issueAt(issues("providers: [{ id: cc, kind: openai }]"), "providers[0].kind").message).toContain("cannot change kind");
    // the article fits every kind ("give a anthropic provider" before)
    expect(issueAt(issues("providers: [{ id: openai, kind: anthropic }]"), "providers[0].kind").message).toBe(
      'built-in provider "openai" is kind openai and cannot change kind; give this anthropic provider another id',
    );
  });

  test("third-party providers: family provider:<id>, kind defaults, idle/slow/header timeouts", () => {
    const cfg = ok(yaml`
      providers:
        - { id: glm, kind: anthropic-compatible, base_url: "https://open.bigmodel.cn/api/anthropic" }
        - { id: router, kind: openai-compatible, base_url: "https://openrouter.ai/api/v1", slow: true, header_timeout_ms: 90000 }
        - { id: local, kind: openai-compatible, base_url: "http://127.0.0.1:11434/v1", idle_timeout_ms: 5000, slow: true }
        - { id: cc2, kind: claude-code }
        - { id: resp, kind: openai-responses }
    `);
    const p = (id: string) => cfg.providers.get(id)!;
    expect(p("glm")).toMatchObject({ format: "anthropic-messages", family: "provider:glm", idleTimeoutMs: 60000, source: "config" });
    expect(p("router")).toMatchObject({ format: "openai-chat", family: "provider:router", idleTimeoutMs: 180000, headerTimeoutMs: 90000 });
    expect(p("local").idleTimeoutMs).toBe(5000);
    expect(p("cc2")).toMatchObject({ baseUrl: "https://api.anthropic.com", defaultMaxConcurrency: 5, family: "anthropic" });
    expect(p("cc2").oauth).toEqual(CLAUDE_CODE_OAUTH);
    expect(p("resp")).toMatchObject({ format: "openai-responses", family: "openai", baseUrl: "https://api.openai.com/v1" });
  });

  test("kind is required for a new id, base_url for *-compatible kinds; oauth only on subscription kinds", () => {
    const list = issues(yaml`
      providers:
        - { id: glm }
        - { id: ds, kind: openai-compatible }
        - { id: x, kind: openai-compatible, base_url: "http://h/v1", oauth: { client_id: c } }
    `);
    expect(issueAt(list, "providers[0].kind").message).toStartWith("required");
    expect(issueAt(list, "providers[1].base_url").message).toBe("required for kind openai-compatible");
    expect(issueAt(list, "providers[2].oauth").message).toContain("only subscription providers");
  });

  test("base_url follows the vendor SDK convention", () => {
    const list = issues(yaml`
      providers:
        - { id: a, kind: anthropic-compatible, base_url: "https://h/api/v1/messages" }
        - { id: b, kind: openai-compatible, base_url: "https://h/v1/chat/completions" }
        - { id: c, kind: gemini, base_url: "https://h/v1beta/models" }
    `);
    expect(issueAt(list, "providers[0].base_url").message).toContain("appends /v1/messages");
    expect(issueAt(list, "providers[1].base_url").message).toContain("appends /chat/completions");
    expect(issueAt(list, "providers[2].base_url").message).toContain("appends /v1beta");
    const warned = ok("providers: [{ id: a, kind: anthropic-compatible, base_url: 'https://h/v1' }]");
    expect(warned.warnings.map((w) => w.path)).toEqual(["providers[0].base_url"]);
  });
});

describe("accounts", () => {
  test("runtime shape: priority defaults to the position in the file; disabled, slots, proxy", () => {
    const cfg = ok(yaml`
      accounts:
        - { id: a, provider: openai, api_key: k1 }
        - { id: b, provider: openai, api_key: k2, priority: 0, max_concurrency: 2, disabled: true, proxy: "http://127.0.0.1:3128" }
        - { id: c, provider: cx, access_token: t, expires_at: 5 }
    `);
    expect(cfg.accounts).toEqual([
      { id: "a", providerId: "openai", priority: 1, credential: { type: "api_key", apiKey: "k1" }, disabled: false, source: "config" },
      {
        id: "b",
        providerId: "openai",
        priority: 0,
        maxConcurrency: 2,
        proxy: "http://127.0.0.1:3128",
        credential: { type: "api_key", apiKey: "k2" },
        disabled: true,
        source: "config",
      },
      { id: "c", providerId: "cx", priority: 3, credential: { type: "oauth", accessToken: "t", expiresAt: 5 }, disabled: false, source: "config" },
    ]);
  });

  test("*-compatible accounts may have no credential (a local server)", () => {
    const cfg = ok(yaml`
      providers: [{ id: ollama, kind: openai-compatible, base_url: "http://127.0.0.1:11434/v1" }]
      accounts: [{ id: local, provider: ollama }]
    `);
    expect(cfg.accounts[0].credential).toEqual({ type: "none" });
  });

  test("unknown provider names the path and suggests", () => {
    const i = issueAt(issues("accounts: [{ id: a, provider: opnai, api_key: k }]"), "accounts[0].provider");
    expect(i.message).toContain('unknown provider "opnai"');
    expect(i.message).toContain('did you mean "openai"');
  });

  test("credential fits the provider kind", () => {
    const list = issues(yaml`
      accounts:
        - { id: a, provider: openai }
        - { id: b, provider: cc, api_key: k }
        - { id: c, provider: cx }
        - { id: d, provider: anthropic, access_token: t }
        - { id: e, provider: openai, api_key: k, access_token: t }
        - { id: f, provider: openai, api_key: k, refresh_token: r, account_id: x }
    `);
    expect(issueAt(list, "accounts[0].api_key").message).toBe('required for provider "openai" (openai)');
    expect(issueAt(list, "accounts[1].api_key").message).toContain("subscription provider (claude-code): use access_token");
    expect(issueAt(list, "accounts[2].access_token").message).toContain('required for subscription provider "cx"');
    expect(issueAt(list, "accounts[3].access_token").message).toContain("takes api_key");
    expect(issueAt(list, "accounts[4].access_token").message).toBe("give either api_key or access_token, not both");
    expect(issueAt(list, "accounts[5].refresh_token").message).toBe("refresh_token only goes with access_token");
    expect(issueAt(list, "accounts[5].account_id").message).toBe("account_id only goes with access_token");
  });
});

describe("cross-references name their exact path", () => {
  const base = yaml`
    providers:
      - { id: glm, kind: anthropic-compatible, base_url: "https://open.bigmodel.cn/api/anthropic" }
    accounts:
      - { id: glm-main, provider: glm, api_key: k }
      - { id: oa, provider: openai, api_key: k }
  `;

  test("combo target model: unknown provider prefix, bare unknown name, empty model", () => {
    const list = issues(
      base +
        yaml`
          combos:
            - name: a
              targets: [{ model: openai/gpt-5 }]
            - name: b
              targets:
                - model: glm/glm-5.3
                - model: nope/x
                - model: gpt-5
                - model: "glm/"
        `,
    );
    expect(issueAt(list, "combos[1].targets[1].model").message).toContain('unknown provider "nope" in "nope/x"');
    expect(issueAt(list, "combos[1].targets[2].model").message).toContain('"gpt-5" is neither provider/model, an alias nor a combo');
    expect(issueAt(list, "combos[1].targets[3].model").message).toBe('"glm/" names no model after "glm/"');
    expect(list).toHaveLength(3);
  });

  test("targets resolve to aliases and combos; the prefix is everything before the first '/'", () => {
    const cfg = ok(
      base +
        yaml`
          combos:
            - name: inner
              targets: [{ model: glm/glm-5.3 }]
            - name: outer
              targets:
                - { model: inner }
                - { model: fast }
                - { model: glm/vendor/model-x, account: glm-main }
          aliases:
            fast: openai/gpt-5-mini
        `,
    );
    expect(cfg.combos.get("outer")!.targets.map((t) => t.ref)).toEqual([
      { type: "combo", name: "inner" },
      { type: "alias", name: "fast" },
      { type: "model", providerId: "glm", model: "vendor/model-x" },
    ]);
  });

  test("target.account must exist and belong to the target's provider", () => {
    const list = issues(
      base +
        yaml`
          combos:
            - name: c
              targets:
                - { model: glm/glm-5.3, account: glm-mian }
                - { model: glm/glm-5.3, account: oa }
                - { model: d, account: glm-main }
            - name: d
              targets: [{ model: glm/x }]
        `,
    );
    const a0 = issueAt(list, "combos[0].targets[0].account").message;
    expect(a0).toContain('unknown account "glm-mian"');
    expect(a0).toContain('did you mean "glm-main"');
    expect(issueAt(list, "combos[0].targets[1].account").message).toBe('account "oa" belongs to provider "openai", not "glm"');
    expect(issueAt(list, "combos[0].targets[2].account").message).toContain("can only pin a provider/model target");
  });

  test("alias targets must resolve; alias names may not contain '/'", () => {
    const list = issues(yaml`
      combos: [{ name: c, targets: [{ model: openai/x }] }]
      aliases:
        good: c
        bad: nowhere
        worse: acme/x
        c: openai/y
        "a/b": openai/z
    `);
    expect(issueAt(list, "aliases.bad").message).toContain('"nowhere" is neither provider/model, an alias nor a combo');
    expect(issueAt(list, "aliases.worse").message).toContain('unknown provider "acme"');
    expect(list.some((i) => i.path === "aliases.c")).toBe(false);
    expect(issueAt(list, 'aliases["a/b"]').message).toContain('"/"');
  });

  test("SPEC R-2: an alias named like a combo is accepted with a warning and shadows it", () => {
    const cfg = ok(yaml`
      combos: [{ name: coding, targets: [{ model: openai/x }] }]
      aliases:
        coding: anthropic/claude-y
    `);
    expect(cfg.warnings).toEqual([
      {
        path: "aliases.coding",
        message: 'alias "coding" shadows combo combos[0] of the same name: "coding" resolves to the alias (aliases are looked up before combos); the combo cannot be reached by that name',
      },
    ]);
    expect(cfg.aliases.get("coding")).toBe("anthropic/claude-y");
    expect(cfg.combos.has("coding")).toBe(true);
  });

  test("capacity adapter entries are provider/model with a known provider", () => {
    const list = issues("settings: { capacity_adapter: { images: [openai/gpt-5, gpt-5], pdf: [zz/top] } }");
    expect(issueAt(list, "settings.capacity_adapter.images[1]").message).toContain("must be provider/model");
    expect(issueAt(list, "settings.capacity_adapter.pdf[0]").message).toContain('unknown provider "zz"');
  });

  test("duplicate ids and names", () => {
    const list = issues(yaml`
      providers:
        - { id: glm, kind: openai-compatible, base_url: "http://h/v1" }
        - { id: glm, kind: openai-compatible, base_url: "http://h/v1" }
      accounts:
        - { id: a, provider: openai, api_key: k1 }
        - { id: a, provider: openai, api_key: k2 }
      combos:
        - { name: c, targets: [{ model: openai/x }] }
        - { name: c, targets: [{ model: openai/y }] }
      keys:
        - { name: k, key: s1 }
        - { name: k, key: s2 }
        - { name: j, key: s1 }
    `);
    expect(issueAt(list, "providers[1].id").message).toBe('duplicate provider id "glm" (first at providers[0])');
    expect(issueAt(list, "accounts[1].id").message).toBe('duplicate account id "a" (first at accounts[0])');
    expect(issueAt(list, "combos[1].name").message).toBe('duplicate combo name "c" (first at combos[0])');
    expect(issueAt(list, "keys[1].name").message).toBe('duplicate key name "k" (first at keys[0])');
    expect(issueAt(list, "keys[2].key").message).toBe("same secret as keys[0]; every key needs its own");
  });

  test("a weight on a non-weighted combo is a warning, not an error", () => {
    const cfg = ok("combos: [{ name: c, targets: [{ model: openai/x, weight: 2 }] }]");
    expect(cfg.warnings).toEqual([{ path: "combos[0].targets[0].weight", message: 'ignored: combo "c" uses strategy fallback, not weighted' }]);
    expect(ok("combos: [{ name: c, strategy: weighted, targets: [{ model: openai/x, weight: 2 }] }]").warnings).toEqual([]);
  });
});

describe("cycles", () => {
  test("a combo cycle is reported at the reference that closes it", () => {
    const list = issues(yaml`
      combos:
        - name: a
          targets: [{ model: openai/x }, { model: b }]
        - name: b
          targets: [{ model: c }]
        - name: c
          targets: [{ model: a }]
    `);
    expect(list).toEqual([{ path: "combos[2].targets[0].model", message: "reference cycle: a → b → c → a", line: 7 }]);
  });

  test("a combo that references itself", () => {
    expect(issues("combos: [{ name: a, targets: [{ model: a }] }]")).toEqual([
      { path: "combos[0].targets[0].model", message: "reference cycle: a → a", line: 1 },
    ]);
  });

  test("alias cycles, and cycles through aliases and combos", () => {
    const list = issues(yaml`
      combos:
        - name: c
          targets: [{ model: x }]
      aliases:
        x: y
        y: c
        p: q
        q: p
    `);
    expect(list).toEqual([
      { path: "aliases.y", message: "reference cycle: c → x → y → c", line: 6 },
      { path: "aliases.q", message: "reference cycle: p → q → p", line: 8 },
    ]);
  });

  test("a diamond (two paths to one combo) is not a cycle", () => {
    const cfg = ok(yaml`
      combos:
        - { name: leaf, targets: [{ model: openai/x }] }
        - { name: l, targets: [{ model: leaf }] }
        - { name: r, targets: [{ model: leaf }] }
        - { name: top, targets: [{ model: l }, { model: r }, { model: best }] }
      aliases: { best: top2, top2: leaf }
    `);
    expect(cfg.combos.size).toBe(4);
    expect(cfg.aliases.get("best")).toBe("top2");
  });
});

describe("no file: defaults with environment accounts", () => {
  test("ANTHROPIC_API_KEY, OPENAI_API_KEY, GEMINI_API_KEY become accounts", () => {
    const cfg = defaultConfig({ ANTHROPIC_API_KEY: "a-key", GEMINI_API_KEY: "g-key", OPENAI_API_KEY: "", REQUIRE_API_KEY: "true" });
    expect(cfg.accounts).toEqual([
      { id: "anthropic-env", providerId: "anthropic", priority: 1, credential: { type: "api_key", apiKey: "a-key" }, disabled: false, source: "config" },
      { id: "gemini-env", providerId: "gemini", priority: 2, credential: { type: "api_key", apiKey: "g-key" }, disabled: false, source: "config" },
    ]);
    expect(cfg.server.requireApiKey).toBe(true);
    expect(cfg.source.path).toBeUndefined();
    expect(cfg.providers.size).toBe(5);
  });

  test("a client's key for switchyard in a provider variable (README's exports in the same shell) makes no account, and says why", () => {
    const cfg = defaultConfig({ ANTHROPIC_API_KEY: "placeholder", GEMINI_API_KEY: "sy-0123456789abcdef", OPENAI_API_KEY: PLACEHOLDER_KEY });
    expect(cfg.accounts).toEqual([]);
    expect(cfg.warnings.map((w) => [w.path, w.message])).toEqual([
      ["ANTHROPIC_API_KEY", 'ANTHROPIC_API_KEY holds "placeholder", the placeholder key clients send to switchyard, not an API key of provider anthropic: no account anthropic-env was made from it (unset it in the gateway\'s environment, or give the provider\'s key)'],
      ["OPENAI_API_KEY", 'OPENAI_API_KEY holds "switchyard", the placeholder key clients send to switchyard, not an API key of provider openai: no account openai-env was made from it (unset it in the gateway\'s environment, or give the provider\'s key)'],
      ["GEMINI_API_KEY", "GEMINI_API_KEY holds a switchyard client key (sy-…), not an API key of provider gemini: no account gemini-env was made from it (unset it in the gateway's environment, or give the provider's key)"],
    ]);
    // The placeholders are README's and setup's own.
    expect(CLIENT_KEY_PLACEHOLDERS).toContain(PLACEHOLDER_KEY);
    expect(KEY_SECRET_PREFIX).toBe("sy-");
    expect(readFileSync(join(import.meta.dir, "../../README.md"), "utf8")).toContain("export ANTHROPIC_API_KEY=placeholder");
  });

  test("loadConfig: explicit path must exist; otherwise $SWITCHYARD_HOME/config.yaml, else the default", () => {
    const home = mkdtempSync(join(tmpdir(), "switchyard-home-"));
    try {
      const env = { SWITCHYARD_HOME: home, OPENAI_API_KEY: "o" };
      expect(defaultConfigPath(env)).toBe(join(home, "config.yaml"));
      expect(loadConfig({ env }).accounts.map((a) => a.id)).toEqual(["openai-env"]);
      writeFileSync(join(home, "config.yaml"), "server: { port: 1 }\n");
      const fromFile = loadConfig({ env });
      expect(fromFile.server.port).toBe(1);
      expect(fromFile.accounts).toEqual([]); // a file means no environment accounts
      expect(fromFile.source.path).toBe(join(home, "config.yaml"));
      expect(() => loadConfig({ path: join(home, "nope.yaml"), env })).toThrow(ConfigError);
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });

  test("loadConfigFile: an unreadable file is a ConfigError at (root)", () => {
    try {
      loadConfigFile(join(dir, "absent.yaml"), {});
      throw new Error("accepted");
    } catch (e) {
      expect(e).toBeInstanceOf(ConfigError);
      expect((e as ConfigError).issues).toEqual([{ path: "(root)", message: `cannot read config file ${join(dir, "absent.yaml")}: not found` }]);
    }
  });

  test("loadConfigFile resolves file: secrets next to the config file and records source", () => {
    const sub = mkdtempSync(join(tmpdir(), "switchyard-sub-"));
    try {
      writeFileSync(join(sub, "k.txt"), "sk-next-to-config\n");
      writeFileSync(join(sub, "c.yaml"), "accounts: [{ id: a, provider: openai, api_key: file:k.txt }]\n");
      const cfg = loadConfigFile(join(sub, "c.yaml"), {});
      expect(cfg.accounts[0].credential).toEqual({ type: "api_key", apiKey: "sk-next-to-config" });
      expect(cfg.source.path).toBe(join(sub, "c.yaml"));
      expect(typeof cfg.source.loadedAt).toBe("number");
    } finally {
      rmSync(sub, { recursive: true, force: true });
    }
  });
});

describe("no secret in any error message", () => {
  const SECRETS = ["sk-live-SECRET-1", "sk-live-SECRET-2", "rt-SECRET-3", "hunter2-SECRET-4", "sy-SECRET-5", "sk-live-SECRET-6"];

  test("errors around secret-bearing fields never quote the values", () => {
    writeFileSync(join(dir, "s6.key"), `${SECRETS[5]}\n`);
    const env = { K1: SECRETS[0], K2: SECRETS[1], R3: SECRETS[2], P4: `ftp://u:${SECRETS[3]}@h`, K5: SECRETS[4] };
    const text = yaml`
      accounts:
        - { id: a, provider: nope, api_key: env:K1, api_kye: ${SECRETS[0]} }
        - { id: b, provider: cc, api_key: env:K2, refresh_token: env:R3 }
        - { id: c, provider: openai, api_key: ${SECRETS[0]}, access_token: ${SECRETS[1]}, proxy: env:P4 }
        - { id: d, provider: openai, api_key: file:s6.key, proxy: "ftp://u:${SECRETS[3]}@h" }
        - { id: d, provider: openai, api_key: [${SECRETS[1]}] }
      keys:
        - { name: k1, key: env:K5 }
        - { name: k2, key: ${SECRETS[4]} }
        - { name: k3, key: { nested: ${SECRETS[2]} } }
    `;
    let err: ConfigError | undefined;
    try {
      parseConfig(text, { env, baseDir: dir });
    } catch (e) {
      err = e as ConfigError;
    }
    expect(err).toBeInstanceOf(ConfigError);
    // Shape errors come first; check them, then fix the shape and check the semantic errors.
    const shapeText = err!.message + JSON.stringify(err!.issues);
    for (const s of SECRETS) expect(shapeText).not.toContain(s);
    expect(err!.issues.length).toBeGreaterThan(1);

    const fixed = text.replace(`, api_kye: ${SECRETS[0]}`, "").replace(`[${SECRETS[1]}]`, "env:K1").replace(`{ nested: ${SECRETS[2]} }`, "env:K2");
    let err2: ConfigError | undefined;
    try {
      parseConfig(fixed, { env, baseDir: dir });
    } catch (e) {
      err2 = e as ConfigError;
    }
    expect(err2).toBeInstanceOf(ConfigError);
    const semanticText = err2!.message + JSON.stringify(err2!.issues);
    for (const s of SECRETS) expect(semanticText).not.toContain(s);
    // It did find the problems it should have.
    const paths = err2!.issues.map((i) => i.path);
    expect(paths).toContain("accounts[0].provider");
    expect(paths).toContain("accounts[1].api_key");
    expect(paths).toContain("accounts[2].access_token");
    expect(paths).toContain("accounts[2].proxy");
    expect(paths).toContain("accounts[3].proxy");
    expect(paths).toContain("accounts[4].id");
    expect(paths).toContain("keys[1].key"); // same secret as keys[0]
  });
});
