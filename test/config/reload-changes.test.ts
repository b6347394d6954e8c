/**
 * What a reload says changed in the accounts section (src/config/diff.ts; `switchyard reload` and
 * `POST /admin/api/config/reload` print it with src/config/describe-changes.ts): an account the edit
 * did not touch is not "changed" because its position-derived priority moved (newuser13's tryout, J11).
 */
import { describe, expect, test } from "bun:test";
import { parseConfig } from "../../src/config/index.ts";
import { configChanges } from "../../src/config/diff.ts";
import { describeChanges } from "../../src/config/describe-changes.ts";

const ENV = { K: "sk-reload-changes-test" };
const config = (accounts: string[]) =>
  parseConfig(
    `
providers:
  - { id: chat, kind: openai-compatible, base_url: "http://127.0.0.1:9/v1" }
  - { id: anthc, kind: anthropic, base_url: "http://127.0.0.1:9" }
  - { id: gem, kind: gemini, base_url: "http://127.0.0.1:9" }
accounts:
${accounts.map((a) => `  - ${a}`).join("\n")}
`,
    { env: ENV },
  );
const MAIN = "{ id: chat-main, provider: chat, api_key: env:K }";
const BACKUP = "{ id: chat-backup, provider: chat, api_key: env:K }";
const ANTH = "{ id: anthc-1, provider: anthc, api_key: env:K }";
const GEM = "{ id: gem-1, provider: gem, api_key: env:K }";
const said = (before: string[], after: string[]) => describeChanges(configChanges(config(before), config(after)));

describe("a reload's account changes", () => {
  test("removing the first account says only that: the accounts below it moved up a number, not in their provider's order", () => {
    expect(said([MAIN, ANTH, GEM], [ANTH, GEM])).toBe("account chat-main removed");
    expect(configChanges(config([MAIN, ANTH, GEM]), config([ANTH, GEM])).accounts).toEqual({ added: [], removed: ["chat-main"], changed: [] });
    expect(said([MAIN, BACKUP, ANTH], [BACKUP, ANTH])).toBe("account chat-main removed");
    expect(said([ANTH, GEM], [MAIN, ANTH, GEM])).toBe("account chat-main added");
  });

  test("an account that moves among its provider's accounts, or whose written priority or key changes, is still changed", () => {
    expect(said([MAIN, BACKUP, ANTH], [BACKUP, MAIN, ANTH])).toBe("accounts chat-backup, chat-main changed");
    expect(said([MAIN, ANTH], [MAIN, "{ id: anthc-1, provider: anthc, api_key: env:K, priority: 7 }"])).toBe("account anthc-1 changed");
    expect(said([MAIN, ANTH], [MAIN, "{ id: anthc-1, provider: anthc, api_key: env:K, max_concurrency: 2 }"])).toBe("account anthc-1 changed");
  });
});
