/**
 * Affinity keys (SPEC A-2, 2.4): the conversation fingerprint and the explicit session headers.
 */
import { describe, expect, test } from "bun:test";
import { affinityKey, conversationFingerprint, sessionHeader, SESSION_HEADERS } from "../../pipeline/affinity.ts";
import { codecFor } from "../../formats/index.ts";
import { clientRequest } from "../support/fixtures.ts";
import { hub } from "./routing-helpers.ts";

const base = hub({
  system: [{ type: "text", text: "You are a coding agent." }],
  tools: [
    { kind: "function", name: "read_file", parameters: {} },
    { kind: "function", name: "bash", parameters: {} },
  ],
  messages: [{ role: "user", content: [{ type: "text", text: "Fix the failing test in src/x.ts" }] }],
});

describe("conversation fingerprint", () => {
  test("later turns of the same conversation keep the key", () => {
    const later = {
      ...base,
      messages: [
        ...base.messages,
        { role: "assistant" as const, content: [{ type: "text" as const, text: "Looking." }] },
        { role: "user" as const, content: [{ type: "text" as const, text: "go on" }] },
      ],
    };
    expect(conversationFingerprint(later, "coding")).toBe(conversationFingerprint(base, "coding"));
  });

  test("model, system prompt start, tool names and the first user message each change it", () => {
    const k = conversationFingerprint(base, "coding");
    expect(conversationFingerprint(base, "other")).not.toBe(k);
    expect(conversationFingerprint({ ...base, system: [{ type: "text", text: "You are a reviewer." }] }, "coding")).not.toBe(k);
    expect(conversationFingerprint({ ...base, tools: base.tools.slice(0, 1) }, "coding")).not.toBe(k);
    expect(conversationFingerprint({ ...base, messages: [{ role: "user", content: [{ type: "text", text: "another task" }] }] }, "coding")).not.toBe(k);
  });

  test("only the start of the system prompt counts (a changing tail keeps the key)", () => {
    const long = "s".repeat(5000);
    const a = conversationFingerprint({ ...base, system: [{ type: "text", text: long + " date: Monday" }] }, "m");
    const b = conversationFingerprint({ ...base, system: [{ type: "text", text: long + " date: Tuesday" }] }, "m");
    expect(a).toBe(b);
  });

  test("leading system turns count when there is no top-level system prompt (Chat clients)", () => {
    const chat = (sys: string) => hub({ messages: [{ role: "system", content: [{ type: "text", text: sys }] }, { role: "user", content: [{ type: "text", text: "hi" }] }] });
    expect(conversationFingerprint(chat("A"), "m")).not.toBe(conversationFingerprint(chat("B"), "m"));
  });

  test("the key is a hash: no prompt text, fixed shape", () => {
    const k = conversationFingerprint(base, "coding");
    expect(k).toMatch(/^f:[0-9a-f]{32}$/);
    expect(k).not.toContain("Fix");
  });
});

describe("session headers (SPEC 2.4)", () => {
  test("first present wins, in the documented order", () => {
    const all = new Headers(SESSION_HEADERS.map((h, i) => [h, `v${i}`]));
    expect(sessionHeader(all)).toEqual({ name: "x-switchyard-session", value: "v0" });
    for (let i = 0; i < SESSION_HEADERS.length; i++) {
      const h = new Headers(SESSION_HEADERS.slice(i).map((n, j) => [n, `v${i + j}`]));
      expect(sessionHeader(h)?.name).toBe(SESSION_HEADERS[i]);
    }
    expect(SESSION_HEADERS).toEqual(["x-switchyard-session", "x-session-id", "x-conversation-id", "x-session-affinity", "session-id", "x-claude-code-session-id"]);
  });

  test("an empty header is not present", () => {
    expect(sessionHeader(new Headers({ "x-switchyard-session": " ", "x-session-id": "abc" }))?.value).toBe("abc");
  });

  test("a session header beats the fingerprint; the same session maps to the same key whatever the body", () => {
    const h = new Headers({ "X-Claude-Code-Session-Id": "3f1c-session" });
    const k1 = affinityKey(h, base, "coding");
    const k2 = affinityKey(h, hub(), "other-model");
    expect(k1).toBe(k2);
    expect(k1).toMatch(/^s:[0-9a-f]{32}$/);
    expect(k1).not.toContain("3f1c");
    expect(affinityKey(new Headers(), base, "coding")).toBe(conversationFingerprint(base, "coding"));
    expect(affinityKey(new Headers(), undefined, "coding")).toBeUndefined();
  });
});

describe("real clients: both turns of a recorded conversation map to one key", () => {
  const cases = [
    ["Claude Code", "anthropic-messages", "claude-code-tool-use-1.json", "claude-code-tool-use-2.json"],
    ["Codex", "openai-responses", "codex-tool-use-1.json", "codex-tool-use-2.json"],
  ] as const;
  for (const [name, format, t1, t2] of cases) {
    test(`${name}: turn 1 and turn 2 (after a tool call) share the fingerprint`, async () => {
      const parse = async (f: string) => codecFor(format).parseRequest!(await clientRequest(f));
      const [h1, h2] = await Promise.all([parse(t1), parse(t2)]);
      expect(h2.messages.length).toBeGreaterThan(h1.messages.length);
      expect(conversationFingerprint(h2, "m")).toBe(conversationFingerprint(h1, "m"));
    });
  }
});
