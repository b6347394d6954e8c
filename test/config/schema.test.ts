/**
 * The shape of the configuration file (SPEC 2.3): defaults, strict keys with paths, value checks,
 * and routing predicates (SPEC 5.2).
 */
import { describe, expect, test } from "bun:test";
import { issueAt, issues, ok, yaml } from "./helpers.ts";

describe("defaults", () => {
  test("an empty file is the built-ins with every default", () => {
    const cfg = ok("");
    expect(cfg.server).toEqual({
      host: "127.0.0.1",
      port: 20128,
      requireApiKey: false,
      maxBodyBytes: 32 * 1024 * 1024,
      bodyTimeoutMs: 120_000,
      keepAliveTimeoutMs: 120_000,
      websocketIdleTimeoutMs: 600_000,
      shutdownGraceMs: 30_000,
      allowedHosts: [],
      corsOrigins: [],
    });
    expect(cfg.settings).toEqual({
      accountStrategy: "scored",
      tokenSavers: { compressToolResults: true },
      redaction: { enabled: false },
      capacityAdapter: { images: [], pdf: [], audio: [], video: [] },
      maxAttempts: 8,
      precommitDeadlineMs: 60_000,
      traceRingSize: 10_000,
      alerts: { quotaThresholds: [0.8, 0.95] },
      pricing: new Map(),
      flightRecorder: { enabled: false, maxRequests: 200, maxBodyBytes: 1048576 },
    });
    expect([...cfg.providers.keys()].sort()).toEqual(["anthropic", "cc", "cx", "gemini", "openai"]);
    expect(cfg.accounts).toEqual([]);
    expect(cfg.combos.size).toBe(0);
    expect(cfg.aliases.size).toBe(0);
    expect(cfg.keys).toEqual([]);
    expect(cfg.warnings).toEqual([]);
  });

  test("sections written empty (`server:` with nothing) take their defaults", () => {
    const cfg = ok("server:\nsettings:\nproviders:\naliases:\n");
    expect(cfg.server.port).toBe(20128);
    expect(cfg.settings.maxAttempts).toBe(8);
  });

  test("REQUIRE_API_KEY=true in the environment turns require_api_key on", () => {
    expect(ok("", { env: { REQUIRE_API_KEY: "true" } }).server.requireApiKey).toBe(true);
    expect(ok("", { env: { REQUIRE_API_KEY: "1" } }).server.requireApiKey).toBe(true);
    expect(ok("", { env: { REQUIRE_API_KEY: "false" } }).server.requireApiKey).toBe(false);
    expect(ok("server: { require_api_key: true }").server.requireApiKey).toBe(true);
  });

  test("explicit values are kept; settings are camelCased", () => {
    const cfg = ok(yaml`
      server: { host: 0.0.0.0, port: 8080, max_body_bytes: 1024, body_timeout_ms: 2500, shutdown_grace_ms: 5 }
      settings:
        account_strategy: p2c
        token_savers: { compress_tool_results: false }
        redaction: { enabled: true }
        capacity_adapter: { images: [openai/gpt-5-mini] }
        max_attempts: 20
        precommit_deadline_ms: 1000
        trace_ring_size: 50
        usage_retention_days: 400
        flight_recorder: { enabled: true, max_requests: 5 }
    `);
    expect(cfg.server).toMatchObject({ host: "0.0.0.0", port: 8080, maxBodyBytes: 1024, bodyTimeoutMs: 2500, shutdownGraceMs: 5 });
    expect(cfg.settings).toEqual({
      accountStrategy: "p2c",
      tokenSavers: { compressToolResults: false },
      redaction: { enabled: true },
      capacityAdapter: { images: ["openai/gpt-5-mini"], pdf: [], audio: [], video: [] },
      maxAttempts: 20,
      precommitDeadlineMs: 1000,
      traceRingSize: 50,
      usageRetentionDays: 400,
      alerts: { quotaThresholds: [0.8, 0.95] },
      pricing: new Map(),
      flightRecorder: { enabled: true, maxRequests: 5, maxBodyBytes: 1048576 },
    });
  });

  test("usage_retention_days is a whole number of days, 1 to 36,500", () => {
    expect(issueAt(issues("settings: { usage_retention_days: 0 }"), "settings.usage_retention_days").message).toContain("usage_retention_days must be at least 1; got 0");
    expect(issueAt(issues("settings: { usage_retention_days: 1.5 }"), "settings.usage_retention_days").message).toContain("must be a whole number");
    expect(ok("settings: { usage_retention_days: 36500 }").settings.usageRetentionDays).toBe(36_500);
  });

  test("combo and target defaults; priority is a synonym of fallback", () => {
    const cfg = ok(yaml`
      combos:
        - name: c
          strategy: priority
          targets: [{ model: openai/gpt-5 }]
    `);
    expect(cfg.combos.get("c")).toEqual({
      name: "c",
      strategy: "fallback",
      portability: "strip_with_warning",
      cacheAffinity: true,
      targets: [{ model: "openai/gpt-5", ref: { type: "model", providerId: "openai", model: "gpt-5" }, weight: 1 }],
      source: "config",
    });
  });
});

describe("unknown keys are errors naming their path", () => {
  test("inside a combo target, with a suggestion", () => {
    const list = issues(yaml`
      combos:
        - name: c
          targets:
            - model: openai/gpt-5
              modle: x
    `);
    const i = issueAt(list, "combos[0].targets[0].modle");
    expect(i.message).toContain('unknown key "modle"');
    expect(i.message).toContain('did you mean "model"');
  });

  test("the message is the admin API's worded for a file: the key quoted as JSON and cut at 40 characters, the allowed keys listed", () => {
    const long = `x"${"y".repeat(60)}`;
    const list = issues(`server: { ${JSON.stringify(long)}: 1 }\n`);
    const i = issueAt(list, `server[${JSON.stringify(long)}]`);
    expect(i.message).toStartWith(`unknown key ${JSON.stringify(`${long.slice(0, 40)}…`)} in the server section; allowed: host, port,`);
  });

  test("at the top level, in server, settings and nested settings", () => {
    const list = issues(yaml`
      servr: {}
      server: { prot: 1 }
      settings: { redaction: { enable: true } }
    `);
    expect(issueAt(list, "servr").message).toContain('did you mean "server"');
    expect(issueAt(list, "server.prot").message).toContain('did you mean "port"');
    expect(issueAt(list, "settings.redaction.enable").message).toContain('did you mean "enabled"');
  });

  test("in a provider's model entry (keys that are not identifiers are quoted in the path)", () => {
    const list = issues(yaml`
      providers:
        - id: glm
          kind: anthropic-compatible
          base_url: https://example.com/anthropic
          models:
            glm-5.3: { context_windw: 1 }
    `);
    expect(issueAt(list, 'providers[0].models["glm-5.3"].context_windw').message).toContain("context_window");
  });

  test("every problem is reported, not just the first", () => {
    const list = issues(yaml`
      server: { port: 70000 }
      accounts:
        - { id: a, provider: openai, api_key: x, priorty: 1 }
      combos:
        - { name: c, strategy: fastest, targets: [] }
    `);
    expect(list.map((i) => i.path).sort()).toEqual([
      "accounts[0].priorty",
      "combos[0].strategy",
      "combos[0].targets",
      "server.port",
    ]);
  });
});

describe("value checks", () => {
  test("types, ranges and enums name the path", () => {
    const list = issues(yaml`
      server: { port: "80", require_api_key: yes, max_body_bytes: 0 }
      providers:
        - { id: x, kind: antropic, base_url: "ftp://x" }
      settings: { account_strategy: fastest, max_attempts: 21 }
    `);
    expect(issueAt(list, "server.port").message).toBe('port must be a number; got "80"');
    expect(issueAt(list, "server.require_api_key").message).toContain("true or false");
    expect(issueAt(list, "server.max_body_bytes").message).toContain("at least 1");
    expect(issueAt(list, "providers[0].kind").message).toContain('got "antropic"');
    expect(issueAt(list, "providers[0].base_url").message).toContain("http:// or https://");
    expect(issueAt(list, "settings.account_strategy").message).toContain("scored, p2c, random, round-robin");
    expect(issueAt(list, "settings.max_attempts").message).toBe("max_attempts must be at most 20; got 21");
  });

  test("required keys are reported as required", () => {
    const list = issues(yaml`
      accounts: [{ id: a }]
      combos: [{ targets: [{ account: a }] }]
      keys: [{ name: k }]
    `);
    expect(issueAt(list, "accounts[0].provider").message).toBe("required");
    expect(issueAt(list, "combos[0].name").message).toBe("required");
    expect(issueAt(list, "combos[0].targets[0].model").message).toBe("required");
    expect(issueAt(list, "keys[0].key").message).toBe("required");
  });

  test("names: ids may not contain '/', combo names may not contain spaces or '/'", () => {
    const list = issues(yaml`
      providers: [{ id: "a/b", kind: openai }]
      combos: [{ name: "my combo", targets: [{ model: openai/x }] }]
    `);
    expect(issueAt(list, "providers[0].id").message).toContain('no "/"');
    expect(issueAt(list, "combos[0].name").message).toContain("spaces");
  });

  test("targets: weight > 0, params a mapping, at least one target", () => {
    const list = issues(yaml`
      combos:
        - name: a
          targets:
            - { model: openai/x, weight: 0 }
            - { model: openai/x, params: [1, 2] }
        - { name: b, targets: [] }
    `);
    expect(issueAt(list, "combos[0].targets[0].weight").message).toContain("greater than 0");
    expect(issueAt(list, "combos[0].targets[1].params").message).toContain("mapping");
    expect(issueAt(list, "combos[1].targets").message).toBe("a combo needs at least one target");
  });

  test("params nesting more than 1,000 levels (a request body's limit) are refused naming the target's params; 1,000 levels are taken; deeper than the YAML parser can read is said so, not called a syntax error", () => {
    /** Params `{x: {a: … 1}}` nesting `depth` mappings (the params themselves the first). */
    const deepParams = (depth: number) => {
      let value = "1";
      for (let i = 1; i < depth; i++) value = `{a: ${value}}`;
      return `combos:\n  - name: c\n    targets:\n      - model: openai/x\n      - model: openai/y\n        params: {x: ${value}}\n`;
    };
    expect(ok(deepParams(1000)).combos.get("c")!.targets[1]!.params).toBeDefined();
    const over = issueAt(issues(deepParams(1001)), "combos[0].targets[1].params");
    expect(over.message).toContain("more than 1,000 levels deep");
    const unreadable = issueAt(issues(deepParams(6000)), "(root)");
    expect(unreadable.message).toContain("nests mappings and lists too deeply to be read");
    expect(unreadable.message).not.toContain("syntax error");
  });

  test("YAML syntax errors are reported at (root) with a line", () => {
    const list = issues("server:\n  port: 1\ncombos: [\n  - name: x\n");
    expect(list).toHaveLength(1);
    expect(list[0].path).toBe("(root)");
    expect(list[0].message).toStartWith("YAML syntax error");
  });

  test("a document that is not a mapping is an error at (root)", () => {
    const list = issues("- a\n- b\n");
    expect(list).toEqual([{ path: "(root)", message: "expected the configuration file (a mapping), got a list" }]);
  });

  test("expires_at takes ms since the epoch or an ISO-8601 timestamp", () => {
    const base = "accounts:\n  - { id: c, provider: cc, access_token: t, expires_at: ";
    const a = ok(`${base}1767225600000 }`).accounts[0].credential;
    const b = ok(`${base}"2026-01-01T00:00:00Z" }`).accounts[0].credential;
    expect(a).toEqual({ type: "oauth", accessToken: "t", expiresAt: 1767225600000 });
    expect(b).toEqual({ type: "oauth", accessToken: "t", expiresAt: 1767225600000 });
    expect(issueAt(issues(`${base}"next tuesday" }`), "accounts[0].expires_at").message).toContain("ISO-8601");
  });
});

describe("predicates (SPEC 5.2)", () => {
  const combo = (when: string) => yaml`
    combos:
      - name: c
        targets:
          - model: openai/gpt-5
            when: ${when}
  `;

  test("a valid tree is kept as written; when_unknown defaults to skip", () => {
    const cfg = ok(
      combo(
        "{ expr: { all: [ { fact: has_tools, op: eq, value: true }, { any: [ { fact: input_tokens, op: gte, value: 1000 }, { not: { fact: key_tag, op: in, value: [ci, bot] } } ] }, { fact: target_capability, arg: pdf, op: ne, value: false }, { fact: requested_model, op: contains, value: sonnet }, { fact: frontend, op: eq, value: anthropic } ] } }",
      ),
    );
    const when = cfg.combos.get("c")!.targets[0].when!;
    expect(when.whenUnknown).toBe("skip");
    expect(when.expr).toEqual({
      all: [
        { fact: "has_tools", op: "eq", value: true },
        { any: [{ fact: "input_tokens", op: "gte", value: 1000 }, { not: { fact: "key_tag", op: "in", value: ["ci", "bot"] } }] },
        { fact: "target_capability", arg: "pdf", op: "ne", value: false },
        { fact: "requested_model", op: "contains", value: "sonnet" },
        { fact: "frontend", op: "eq", value: "anthropic" },
      ],
    });
    const allow = ok(combo("{ expr: { fact: has_images, op: eq, value: false }, when_unknown: allow }"));
    expect(allow.combos.get("c")!.targets[0].when!.whenUnknown).toBe("allow");
  });

  test("an unknown fact names its path and suggests the right one", () => {
    const list = issues(combo("{ expr: { all: [ { fact: has_tool, op: eq, value: true } ] } }"));
    const i = issueAt(list, "combos[0].targets[0].when.expr.all[0].fact");
    expect(i.message).toContain('unknown fact "has_tool"');
    expect(i.message).toContain('did you mean "has_tools"');
  });

  test("an unknown op names its path", () => {
    const list = issues(combo("{ expr: { not: { fact: input_tokens, op: less, value: 3 } } }"));
    expect(issueAt(list, "combos[0].targets[0].when.expr.not.op").message).toContain('unknown op "less"');
  });

  test("an op that does not fit the fact's type is an error", () => {
    const list = issues(combo("{ expr: { any: [ { fact: has_tools, op: gt, value: true }, { fact: requested_model, op: lt, value: a } ] } }"));
    expect(issueAt(list, "combos[0].targets[0].when.expr.any[0].op").message).toContain("does not apply to fact has_tools");
    expect(issueAt(list, "combos[0].targets[0].when.expr.any[1].op").message).toContain("eq, ne, contains, in, not_in");
  });

  test("value types per fact: in/not_in need a non-empty list, numbers need numbers, enums their values", () => {
    const list = issues(
      combo(
        "{ expr: { all: [ { fact: key_tag, op: in, value: ci }, { fact: key_tag, op: not_in, value: [] }, { fact: input_tokens, op: lt, value: many }, { fact: client_format, op: eq, value: chat }, { fact: has_tools, op: eq, value: yes } ] } }",
      ),
    );
    const at = (n: number) => `combos[0].targets[0].when.expr.all[${n}].value`;
    expect(issueAt(list, at(0)).message).toBe("op in needs a list of values");
    expect(issueAt(list, at(1)).message).toBe("op not_in needs a non-empty list of values");
    expect(issueAt(list, at(2)).message).toBe("fact input_tokens compares with a number");
    expect(issueAt(list, at(3)).message).toContain("openai-chat, openai-responses, anthropic-messages, gemini");
    expect(issueAt(list, at(4)).message).toBe("fact has_tools compares with true or false");
  });

  test("target_capability needs arg; the call spelling gets a hint; arg only on target_capability", () => {
    const list = issues(
      combo(
        "{ expr: { all: [ { fact: target_capability, op: eq, value: true }, { fact: target_capability(images), op: eq, value: true }, { fact: target_capability, arg: smell, op: eq, value: true }, { fact: has_tools, arg: x, op: eq, value: true } ] } }",
      ),
    );
    const at = (n: number, k: string) => `combos[0].targets[0].when.expr.all[${n}].${k}`;
    expect(issueAt(list, at(0, "arg")).message).toContain("needs arg");
    expect(issueAt(list, at(1, "fact")).message).toBe("write target_capability(images) as {fact: target_capability, arg: images}");
    expect(issueAt(list, at(2, "arg")).message).toContain('unknown capability "smell"');
    expect(issueAt(list, at(3, "arg")).message).toBe("arg is only used with fact target_capability");
  });

  test("malformed nodes: unknown keys, empty lists, not a mapping", () => {
    const list = issues(
      combo("{ expr: { any: [ { fact: has_tools, op: eq, value: true, extra: 1 }, { all: [] }, 3, { nope: 1 } ] }, when_unknown: maybe }"),
    );
    const at = (s: string) => `combos[0].targets[0].when.${s}`;
    expect(issueAt(list, at("expr.any[0].extra")).message).toContain('unknown key "extra"');
    expect(issueAt(list, at("expr.any[1].all")).message).toBe("all needs at least one expression");
    expect(issueAt(list, at("expr.any[2]")).message).toContain("expected a predicate");
    expect(issueAt(list, at("expr.any[3]")).message).toContain("found keys nope");
    expect(issueAt(list, at("when_unknown")).message).toContain("skip or allow");
  });

  test("when needs expr", () => {
    expect(issueAt(issues(combo("{ when_unknown: skip }")), "combos[0].targets[0].when.expr").message).toBe("required");
  });
});

describe("server.allowed_hosts and server.cors_origins (SPEC 2.6)", () => {
  test("host names are lower-cased; origins are normalised to scheme://host[:port]", () => {
    const cfg = ok(yaml`
      server:
        allowed_hosts: [Gateway.LAN, box]
        cors_origins: ["http://LOCALHOST:5173/", "https://app.example.com:443", "http://localhost:5173"]
    `);
    expect(cfg.server.allowedHosts).toEqual(["gateway.lan", "box"]);
    expect(cfg.server.corsOrigins).toEqual(["http://localhost:5173", "https://app.example.com"]);
  });

  test("a host with a scheme, port or path is an error naming its path", () => {
    const list = issues("server: { allowed_hosts: [ok.lan, 'http://gateway.lan', 'gateway.lan:8080', 'a/b'] }");
    expect(issueAt(list, "server.allowed_hosts[1]").message).toContain("not a host name");
    expect(issueAt(list, "server.allowed_hosts[2]").message).toContain("without scheme, port or path");
    issueAt(list, "server.allowed_hosts[3]");
    expect(list.some((i) => i.path === "server.allowed_hosts[0]")).toBe(false);
  });

  test("'*', a path, a non-web scheme or a non-list is refused with its path", () => {
    expect(issueAt(issues("server: { cors_origins: ['*'] }"), "server.cors_origins[0]").message).toContain('may not be "*"');
    expect(issueAt(issues("server: { cors_origins: ['http://a.example/app'] }"), "server.cors_origins[0]").message).toContain("not a web origin");
    issueAt(issues("server: { cors_origins: ['ftp://a.example'] }"), "server.cors_origins[0]");
    issueAt(issues("server: { cors_origins: ['localhost:5173'] }"), "server.cors_origins[0]");
    expect(issueAt(issues("server: { cors_origins: http://a.example }"), "server.cors_origins").message).toContain("must be a list");
    expect(issueAt(issues("server: { allowed_hosts: 42 }"), "server.allowed_hosts").message).toContain("must be a list");
  });

  test("apps' own origins (Electron, Tauri, browser extensions) are accepted, lower-cased, without a trailing slash", () => {
    const cfg = ok(yaml`
      server:
        cors_origins: ["app://obsidian.md", "TAURI://localhost/", "chrome-extension://abcdefghijklmnopabcdefghijklmnop", "moz-extension://0d3c-11aa:8080"]
    `);
    expect(cfg.server.corsOrigins).toEqual(["app://obsidian.md", "tauri://localhost", "chrome-extension://abcdefghijklmnopabcdefghijklmnop", "moz-extension://0d3c-11aa:8080"]);
  });

  test("null is refused saying why; an app origin with a path, a file: URL or a scheme without host is refused", () => {
    for (const entry of ["null", "NULL"]) {
      const message = issueAt(issues(`server: { cors_origins: ['${entry}'] }`), "server.cors_origins[0]").message;
      expect(message).toContain('may not be "null"');
      expect(message).toContain("sandboxed iframes");
      expect(message).toContain("every web page");
    }
    for (const entry of ["app://obsidian.md/x", "file:///home/me/index.html", "app:obsidian.md", "ws://localhost:8080", "app://user@obsidian.md"]) {
      expect(issueAt(issues(`server: { cors_origins: ['${entry}'] }`), "server.cors_origins[0]").message).toContain("not a web origin or an app's origin");
    }
  });
});

test("a key's scope other than admin is refused with its path (a misspelt admin would silently make a key without it)", () => {
  const list = issues(yaml`
    keys:
      - { name: laptop, key: sy-1, scopes: [admin] }
      - { name: ci, key: sy-2, scopes: [admn] }
  `);
  expect(issueAt(list, "keys[1].scopes[0]").message).toBe('unknown scope "admn": the only scope is admin');
  expect(list).toHaveLength(1);
});
