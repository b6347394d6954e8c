/**
 * The config sections of issue 15 (SPEC 2.3): `keys[].limits` (9.6), `settings.pricing` (9.5) and
 * `settings.alerts` (9.7): what is kept, and the errors that name their path.
 */
import { describe, expect, test } from "bun:test";
import { issueAt, issues, ok, yaml } from "./helpers.ts";

describe("keys[].limits", () => {
  test("every limit is kept as written", () => {
    const cfg = ok(yaml`
      keys:
        - name: ci
          key: env:K
          limits:
            rpm: 60
            tpm: 400000
            concurrency: 4
            budgets:
              - { window: 5h, tokens: 3000000 }
              - { window: 1d, usd: 25 }
            models: [coding, "openai/*"]
    `, { env: { K: "sy-secret-ci" } });
    expect(cfg.keys[0].limits).toEqual({
      rpm: 60,
      tpm: 400000,
      concurrency: 4,
      budgets: [
        { window: "5h", tokens: 3000000 },
        { window: "1d", usd: 25 },
      ],
      models: ["coding", "openai/*"],
    });
  });

  test("a key without limits has none", () => {
    const cfg = ok("keys: [{ name: a, key: sy-a }]");
    expect(cfg.keys[0].limits).toBeUndefined();
  });

  test("bad limits name their path", () => {
    const list = issues(yaml`
      keys:
        - name: a
          key: sy-a
          limits:
            rpm: 0
            concurrency: 1.5
            budgets:
              - { window: 2h, tokens: 5 }
              - { window: 1d, tokens: 5, usd: 1 }
            models: ["glm/gl*"]
            tpn: 5
    `);
    expect(issueAt(list, "keys[0].limits.rpm").message).toContain("at least 1");
    expect(issueAt(list, "keys[0].limits.concurrency").message).toContain("whole number");
    expect(issueAt(list, "keys[0].limits.budgets[0].window").message).toContain("5h, 1d, 7d, 30d");
    expect(issueAt(list, "keys[0].limits.budgets[1]").message).toBe("a budget takes exactly one of tokens or usd");
    expect(issueAt(list, "keys[0].limits.models[0]").message).toContain("the only pattern is provider/*");
    expect(list.some((i) => i.path.startsWith("keys[0].limits") && i.message.includes("tpn"))).toBe(true);
  });
});

describe("settings.pricing", () => {
  test("prices are kept per model, cache prices optional", () => {
    const cfg = ok(yaml`
      settings:
        pricing:
          glm/glm-5.3: { input: 0.6, output: 2.2, cache_read: 0.11 }
          my-model: { input: 1, output: 2, cache_read: 0.1, cache_write: 1.25 }
    `);
    expect([...cfg.settings.pricing]).toEqual([
      ["glm/glm-5.3", { input: 0.6, output: 2.2, cacheRead: 0.11 }],
      ["my-model", { input: 1, output: 2, cacheRead: 0.1, cacheWrite: 1.25 }],
    ]);
  });

  test("provider/* of a provider of the gateway is the one pattern; any other '*' is an error at its path (it priced nothing)", () => {
    const cfg = ok(yaml`
      settings:
        pricing:
          openai/*: { input: 1, output: 2 }
    `);
    expect([...cfg.settings.pricing.keys()]).toEqual(["openai/*"]);
    const list = issues(yaml`
      settings:
        pricing:
          opnai/*: { input: 1, output: 2 }
          openai/gpt-*: { input: 1, output: 2 }
          "*": { input: 1, output: 2 }
    `);
    expect(issueAt(list, 'settings.pricing["opnai/*"]').message).toStartWith('unknown provider "opnai" in "opnai/*" (did you mean "openai"?): the pattern would price no model; known providers: ');
    expect(issueAt(list, 'settings.pricing["openai/gpt-*"]').message).toBe('"openai/gpt-*" is no model name: a pricing key is provider/model, a bare model id, or provider/* for every model of a provider (the only pattern)');
    expect(issueAt(list, 'settings.pricing["*"]').message).toStartWith('"*" is no model name');
  });

  test("a negative or missing price is an error at its path", () => {
    const list = issues(yaml`
      settings:
        pricing:
          a/b: { input: -1, output: 2 }
          c/d: { input: 1 }
    `);
    expect(issueAt(list, 'settings.pricing["a/b"].input').message).toBe("input must be at least 0; got -1");
    expect(issueAt(list, 'settings.pricing["c/d"].output').message).toBe("required");
  });
});

describe("settings.alerts", () => {
  test("defaults: no webhook, thresholds 0.8 and 0.95", () => {
    expect(ok("").settings.alerts).toEqual({ quotaThresholds: [0.8, 0.95] });
  });

  test("the webhook is read from the environment; thresholds are sorted", () => {
    const cfg = ok(yaml`
      settings:
        alerts: { webhook: env:HOOK, quota_thresholds: [0.9, 0.5] }
    `, { env: { HOOK: "http://127.0.0.1:9/hook" } });
    expect(cfg.settings.alerts).toEqual({ webhook: "http://127.0.0.1:9/hook", quotaThresholds: [0.5, 0.9] });
  });

  test("a threshold outside (0, 1] and a webhook that is no URL are errors; the URL is not quoted", () => {
    const list = issues(yaml`
      settings:
        alerts: { quota_thresholds: [0, 1.5] }
    `);
    expect(issueAt(list, "settings.alerts.quota_thresholds[0]").message).toContain("(0, 1]");
    expect(issueAt(list, "settings.alerts.quota_thresholds[1]").message).toContain("(0, 1]");
    const hook = issueAt(issues('settings: { alerts: { webhook: "not a url secret-ish" } }'), "settings.alerts.webhook").message;
    expect(hook).toContain("http");
    expect(hook).not.toContain("secret-ish");
  });
});
