/**
 * The conversation fingerprint read straight from the client's JSON body (Chat, Messages, Responses and
 * Gemini, native lanes): the same key as the fingerprint of the parsed hub request, without parsing it.
 */
import { describe, expect, test } from "bun:test";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { affinityHints, conversationFingerprint, requestFingerprint } from "../../pipeline/affinity.ts";
import { hubOf, type Endpoint } from "../../pipeline/context.ts";
import { codecFor } from "../../formats/index.ts";
import type { HubMessage, HubRequest, WireFormat } from "../../formats/hub.ts";
import { guardedContext } from "../support/context.ts";
import { FIXTURES, clientRequest } from "../support/fixtures.ts";

const ENDPOINT: Record<string, Endpoint> = { "openai-chat": "chat", "anthropic-messages": "messages", "openai-responses": "responses", gemini: "gemini" };

/**
 * The fingerprint's parts as SPEC A-2's first implementation read them (the whole system prompt joined,
 * then sliced), hashed as `<length>:<text>` fields: the key must keep meaning the same parts.
 */
function referenceFingerprint(hub: HubRequest, model: string): string {
  const text = (m: HubMessage | undefined): string => {
    if (!m) return "";
    let s = "";
    for (const p of m.content) {
      if (p.type === "text") s += p.text;
      else if (p.type === "tool_result") {
        for (const c of p.content) if (c.type === "text") s += c.text;
      } else s += `[${p.type}]`;
      if (s.length >= 2000) break;
    }
    return s.slice(0, 2000);
  };
  let system = hub.system.map((s) => s.text).join("\n");
  if (!system) {
    for (const m of hub.messages) {
      if (m.role !== "system" && m.role !== "developer") break;
      system += text(m) + "\n";
    }
  }
  const tools = hub.tools.map((t) => (t.kind === "function" ? t.name : (t.name ?? String(t.raw.type ?? "provider-tool"))));
  const firstUser = text(hub.messages.find((m) => m.role === "user"));
  const field = (s: string) => `${s.length}:${s}`;
  const bytes = field(model) + field(system.slice(0, 2000)) + `${tools.length}:` + tools.map(field).join("") + field(firstUser);
  return "f:" + new Bun.CryptoHasher("sha256").update(bytes).digest("hex").slice(0, 32);
}

/** The key from the body (the context's hub left unparsed) and the key of the hub parsed from the same body. */
function both(format: WireFormat, body: Record<string, unknown>) {
  const ctx = guardedContext(ENDPOINT[format]!, body);
  const fromBody = requestFingerprint(ctx);
  const readBodyOnly = ctx.hub === undefined;
  const hub = codecFor(format).parseRequest!(structuredClone(body));
  const fromHub = conversationFingerprint(hub, String(body.model));
  // The same parts as the first implementation read.
  expect(fromHub).toBe(referenceFingerprint(hub, String(body.model)));
  return { fromBody, fromHub, readBodyOnly };
}

const SYS = "You are a careful coding assistant. ".repeat(80); // > 2,000 characters
const chatBodies: Array<[string, Record<string, unknown>]> = [
  ["system string, one user turn", { model: "m", messages: [{ role: "system", content: "Be brief." }, { role: "user", content: "hi" }] }],
  ["system and developer turns, text parts, an empty part, refusal", {
    model: "m",
    messages: [
      { role: "system", content: [{ type: "text", text: SYS }, { type: "text", text: "" }] },
      { role: "developer", content: "dev rules" },
      { role: "user", content: [{ type: "text", text: "first " }, { type: "input_text", text: "question" }] },
      { role: "assistant", content: "answer" },
      { role: "user", content: "later" },
    ],
  }],
  ["no system, empty system message, null content", { model: "m", messages: [{ role: "system", content: "" }, { role: "system", content: null }, { role: "user", content: "x".repeat(2500) }] }],
  ["first user cut across parts at 2,000 characters", { model: "m", messages: [{ role: "user", content: [{ type: "text", text: "a".repeat(1999) }, { type: "text", text: "bcd" }, { type: "text", text: "ef" }] }] }],
  ["function and custom tools", {
    model: "m",
    messages: [{ role: "user", content: "hi" }],
    tools: [
      { type: "function", function: { name: "read_file", parameters: {} } },
      { type: "custom", custom: { name: "apply_patch" } },
      { type: "web_search" },
    ],
  }],
  ["assistant before the first user message", { model: "m", messages: [{ role: "system", content: "s" }, { role: "assistant", content: "hello" }, { role: "user", content: "u" }] }],
];

const messagesBodies: Array<[string, Record<string, unknown>]> = [
  ["system string", { model: "m", max_tokens: 5, system: "Be brief.", messages: [{ role: "user", content: "hi" }] }],
  ["system blocks (an empty one, a cache_control one) and a long first user message", {
    model: "m",
    max_tokens: 5,
    system: [{ type: "text", text: "A" }, { type: "text", text: "" }, { type: "text", text: SYS, cache_control: { type: "ephemeral" } }],
    messages: [{ role: "user", content: [{ type: "text", text: "y".repeat(1500) }, { type: "text", text: "z".repeat(1500) }] }, { role: "assistant", content: "ok" }],
  }],
  ["no top-level system: leading system turns (Claude Code)", { model: "m", max_tokens: 5, messages: [{ role: "system", content: [{ type: "text", text: "S1" }] }, { role: "system", content: "S2" }, { role: "user", content: "go" }] }],
  ["a tool result in the first user message, blocks with no hub slot skipped", {
    model: "m",
    max_tokens: 5,
    messages: [
      {
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: "t1", content: [{ type: "text", text: "out" }, { type: "search_result", text: "found" }] },
          { type: "tool_result", tool_use_id: "t2", content: "plain" },
          { type: "container_upload", file_id: "f" },
          { type: "text", text: "next" },
        ],
      },
    ],
  }],
  ["custom and server tools", {
    model: "m",
    max_tokens: 5,
    messages: [{ role: "user", content: "hi" }],
    tools: [{ name: "bash", input_schema: { type: "object" } }, { type: "custom", name: "edit", input_schema: {} }, { type: "web_search_20250305", name: "web_search" }, { type: "text_editor_20250124" }],
  }],
];

const GSYS = "You are Gemini CLI, an interactive agent. ".repeat(60); // > 2,000 characters
const geminiBodies: Array<[string, Record<string, unknown>]> = [
  ["systemInstruction parts (an empty one), one user turn", {
    systemInstruction: { parts: [{ text: "Be brief." }, { text: "" }, { text: GSYS }] },
    contents: [{ role: "user", parts: [{ text: "hi" }] }],
  }],
  ["systemInstruction as a string, no role on the user content", { systemInstruction: "Be brief.", contents: [{ parts: [{ text: "hi" }] }] }],
  ["no systemInstruction; consecutive user contents are one turn, an empty model content no turn", {
    contents: [
      { role: "user", parts: [{ text: "first " }, { text: "" }, { unknownPart: 1 }] },
      { role: "user", parts: [{ text: "second", thoughtSignature: "sig" }] },
      { role: "model", parts: [] },
      { role: "user", parts: [{ text: "third" }] },
      { role: "model", parts: [{ text: "answer" }] },
      { role: "user", parts: [{ text: "later" }] },
    ],
  }],
  ["a model turn before the first user turn, an empty user content before it", {
    contents: [
      { role: "user", parts: [{ text: "" }] },
      { role: "model", parts: [{ text: "hello" }] },
      { role: "user", parts: [{ text: "u" }] },
      { role: "model", parts: [{ functionCall: { name: "f", args: {} } }] },
    ],
  }],
  ["the first user turn ended by a model turn with only a call or only thought text", {
    contents: [
      { role: "user", parts: [{ text: "a" }] },
      { role: "model", parts: [{ text: "", thought: true }] },
      { role: "user", parts: [{ text: "b" }] },
    ],
  }],
  ["first user turn cut at 2,000 characters across contents", {
    contents: [{ role: "user", parts: [{ text: "a".repeat(1999) }] }, { role: "user", parts: [{ text: "bcd" }, { inlineData: { mimeType: "image/png", data: "AAAA" } }] }],
  }],
  ["function declarations and built-in tools, in order", {
    contents: [{ role: "user", parts: [{ text: "hi" }] }],
    tools: [
      { functionDeclarations: [{ name: "read_file", parameters: { type: "OBJECT" } }, { name: "run_shell_command" }] },
      { googleSearch: {} },
      { codeExecution: {}, urlContext: {} },
      "not a tool",
    ],
  }],
  ["countTokens' generateContentRequest wrapper", { generateContentRequest: { model: "models/m", systemInstruction: { parts: [{ text: "S" }] }, contents: [{ role: "user", parts: [{ text: "count me" }] }] } }],
];

const responsesBodies: Array<[string, Record<string, unknown>]> = [
  ["instructions and input as a string", { model: "m", instructions: "Be brief.", input: "hi" }],
  ["long instructions, input items with text parts, an empty part, later turns", {
    model: "m",
    instructions: SYS,
    input: [
      { role: "developer", content: "dev rules" },
      { type: "message", role: "user", content: [{ type: "input_text", text: "first " }, { type: "input_text", text: "" }, { type: "text", text: "question" }] },
      { type: "message", role: "assistant", content: [{ type: "output_text", text: "answer" }] },
      { role: "user", content: "later" },
    ],
  }],
  ["no instructions: the leading system and developer items, one empty", {
    model: "m",
    input: [
      { role: "system", content: "" },
      { role: "developer", content: [{ type: "input_text", text: "dev " }, { type: "input_text", text: "rules" }] },
      { role: "user", content: "x".repeat(2500) },
    ],
  }],
  ["empty instructions, leading system items past 2,000 characters", { model: "m", instructions: "", input: [{ role: "system", content: SYS }, { role: "system", content: "more" }, { role: "user", content: "u" }] }],
  ["first user cut across parts at 2,000 characters", { model: "m", input: [{ role: "user", content: [{ type: "input_text", text: "a".repeat(1999) }, { type: "input_text", text: "bcd" }, { type: "input_text", text: "ef" }] }] }],
  ["no user item, no input", { model: "m", instructions: "S", input: [{ role: "developer", content: "d" }] }],
  ["no input at all, input null", { model: "m", instructions: "S", input: null }],
  ["function, custom and hosted tools, in order", {
    model: "m",
    input: "hi",
    tools: [
      { type: "function", name: "read_file", parameters: { type: "object", properties: {} } },
      { type: "custom", name: "apply_patch", description: "patch" },
      { type: "web_search" },
      { type: "local_shell" },
      { type: "namespace", name: "agents", description: "d", tools: [{ type: "function", name: "spawn", parameters: {} }, { type: "web_search" }, { type: "function", name: "wait" }] },
    ],
  }],
];

describe("fingerprint from the body = fingerprint of the parsed hub", () => {
  for (const [name, body] of responsesBodies) {
    test(`Responses: ${name}`, () => {
      const r = both("openai-responses", body);
      expect(r.fromBody).toMatch(/^f:[0-9a-f]{32}$/);
      expect(r.fromBody).toBe(r.fromHub);
      expect(r.readBodyOnly).toBe(true);
    });
  }

  for (const [name, body] of geminiBodies) {
    test(`Gemini: ${name}`, () => {
      const r = both("gemini", body);
      expect(r.fromBody).toMatch(/^f:[0-9a-f]{32}$/);
      expect(r.fromBody).toBe(r.fromHub);
      expect(r.readBodyOnly).toBe(true);
    });
  }

  for (const [name, body] of chatBodies) {
    test(`Chat: ${name}`, () => {
      const r = both("openai-chat", body);
      expect(r.fromBody).toMatch(/^f:[0-9a-f]{32}$/);
      expect(r.fromBody).toBe(r.fromHub);
      expect(r.readBodyOnly).toBe(true);
    });
  }
  for (const [name, body] of messagesBodies) {
    test(`Messages: ${name}`, () => {
      const r = both("anthropic-messages", body);
      expect(r.fromBody).toMatch(/^f:[0-9a-f]{32}$/);
      expect(r.fromBody).toBe(r.fromHub);
      expect(r.readBodyOnly).toBe(true);
    });
  }

  test("real Claude Code and Codex requests (shared fixtures): same key, read from the body", async () => {
    const files = readdirSync(join(FIXTURES, "clients")).filter((f) => f.endsWith(".json") && !f.endsWith(".headers.json"));
    expect(files.length).toBeGreaterThan(4);
    for (const f of files) {
      const format: WireFormat = f.startsWith("claude-code") ? "anthropic-messages" : "openai-responses";
      const r = both(format, await clientRequest(f));
      expect(r.fromBody, f).toBe(r.fromHub);
      expect(r.readBodyOnly, f).toBe(true);
    }
  });

  test("every Chat, Messages and Responses regression case's request (shared fixtures): same key", async () => {
    const dir = join(FIXTURES, "cases");
    let n = 0;
    for (const f of readdirSync(dir).filter((x) => x.endsWith(".json"))) {
      const c = await Bun.file(join(dir, f)).json();
      if (c.client_format !== "openai-chat" && c.client_format !== "anthropic-messages" && c.client_format !== "openai-responses") continue;
      const r = both(c.client_format, c.request);
      expect(r.fromBody, f).toBe(r.fromHub);
      n++;
    }
    expect(n).toBeGreaterThan(5);
  });
});

describe("shapes the body reader leaves to the hub parser: same key, through the hub", () => {
  test("an image in the first user message (Chat and Messages)", () => {
    const chat = both("openai-chat", { model: "m", messages: [{ role: "user", content: [{ type: "text", text: "see" }, { type: "image_url", image_url: { url: "https://x/y.png" } }] }] });
    expect(chat.fromBody).toBe(chat.fromHub);
    expect(chat.readBodyOnly).toBe(false);
    const msg = both("anthropic-messages", { model: "m", max_tokens: 5, messages: [{ role: "user", content: [{ type: "image", source: { type: "url", url: "https://x/y.png" } }] }] });
    expect(msg.fromBody).toBe(msg.fromHub);
    expect(msg.readBodyOnly).toBe(false);
  });

  test("Gemini: thought text, a function response, media or code in the first user turn", () => {
    const turns: unknown[][] = [
      [{ text: "think", thought: true }, { text: "x" }],
      [{ functionResponse: { name: "f", response: { ok: true } } }],
      [{ text: "see" }, { inlineData: { mimeType: "image/png", data: "AAAA" } }],
      [{ fileData: { mimeType: "application/pdf", fileUri: "gs://b/f.pdf" } }],
      [{ executableCode: { language: "PYTHON", code: "1+1" } }],
    ];
    for (const parts of turns) {
      const r = both("gemini", { contents: [{ role: "user", parts }, { role: "model", parts: [{ text: "ok" }] }] });
      expect(r.fromBody).toBe(r.fromHub);
      expect(r.readBodyOnly).toBe(false);
    }
    // A function content (tool results) is a user turn too.
    const fn = both("gemini", { contents: [{ role: "model", parts: [{ functionCall: { name: "f", args: {} } }] }, { role: "function", parts: [{ functionResponse: { name: "f", response: {} } }] }] });
    expect(fn.fromBody).toBe(fn.fromHub);
    expect(fn.readBodyOnly).toBe(false);
    // A model content inside the first user turn whose parts the reader cannot tell apart.
    const media = both("gemini", { contents: [{ role: "user", parts: [{ text: "a" }] }, { role: "model", parts: [{ inlineData: { mimeType: "image/png", data: "AAAA" } }] }, { role: "user", parts: [{ text: "b" }] }] });
    expect(media.fromBody).toBe(media.fromHub);
    expect(media.readBodyOnly).toBe(false);
  });

  test("Gemini: a body the hub parser rejects has no key (bypass)", () => {
    for (const body of [{ contents: [] }, { contents: [{ role: "user", parts: [{ text: "x" }] }], systemInstruction: [1] }, { contents: [{ role: "tool", parts: [] }] }]) {
      const ctx = guardedContext("gemini", body);
      expect(requestFingerprint(ctx)).toBeUndefined();
    }
  });

  test("Responses: an image, a refusal, an assistant turn, a call or its output before or in the first user item; instructions as items", () => {
    const bodies: Record<string, unknown>[] = [
      { model: "m", input: [{ role: "user", content: [{ type: "input_text", text: "see" }, { type: "input_image", image_url: "https://x/y.png" }] }] },
      { model: "m", input: [{ role: "assistant", content: [{ type: "refusal", refusal: "no" }] }, { role: "user", content: "u" }] },
      { model: "m", input: [{ role: "assistant", content: "primed" }, { role: "user", content: "u" }] },
      { model: "m", input: [{ type: "function_call", call_id: "c1", name: "f", arguments: "{}" }, { type: "function_call_output", call_id: "c1", output: "result" }, { role: "user", content: "u" }] },
      { model: "m", instructions: [{ role: "developer", content: "d" }], input: "u" },
    ];
    for (const body of bodies) {
      const r = both("openai-responses", body);
      expect(r.fromBody).toBe(r.fromHub);
      expect(r.readBodyOnly).toBe(false);
    }
  });

  test("Responses: a body the hub parser rejects, with a shape the reader does not read, has no key (bypass)", () => {
    for (const body of [{ model: "m", input: [{ type: "function_call" }] }, { model: "m", input: [{ role: "moderator", content: "x" }] }, { model: "m", instructions: 7, input: "x" }]) {
      expect(requestFingerprint(guardedContext("responses", body))).toBeUndefined();
    }
  });

  test("Chat: tool messages before any user message form the first user turn", () => {
    const r = both("openai-chat", { model: "m", messages: [{ role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "f", arguments: "{}" } }] }, { role: "tool", tool_call_id: "c1", content: "result" }] });
    expect(r.fromBody).toBe(r.fromHub);
    expect(r.readBodyOnly).toBe(false);
  });

  test("a body the hub parser rejects, with a shape the reader does not read, has no key (bypass)", () => {
    const ctx = guardedContext("chat", { model: "m", messages: "not a list" });
    expect(requestFingerprint(ctx)).toBeUndefined();
  });
});

describe("the pick hints", () => {
  test("a session header wins over the body; without one the key is the body's fingerprint and the hub is not parsed", () => {
    const body = { model: "m", messages: [{ role: "user", content: "hi" }] };
    const withSession = guardedContext("chat", body, { headers: { "x-session-id": "abc" } });
    expect(affinityHints(withSession).affinityKey).toMatch(/^s:[0-9a-f]{32}$/);
    const plain = guardedContext("chat", body);
    expect(affinityHints(plain).affinityKey).toBe(conversationFingerprint(hubOf(guardedContext("chat", body)), "m"));
    expect(plain.hub).toBeUndefined();
  });

  test("the binding key kept for the request is each provider's own, also when a fallback goes to another and back (item 292)", () => {
    const hints = affinityHints(guardedContext("chat", { model: "m", messages: [{ role: "user", content: "hi" }] }, { headers: { "x-session-id": "abc" } }));
    const key = hints.affinityKey!;
    const made: string[] = [];
    const make = (p: string, k: string) => (made.push(p), `${p}|${k}`);
    expect([hints.keyAt!("a", make), hints.keyAt!("a", make), hints.keyAt!("b", make), hints.keyAt!("a", make)]).toEqual([`a|${key}`, `a|${key}`, `b|${key}`, `a|${key}`]);
    expect(made).toEqual(["a", "b", "a"]);
    // No affinity key (a body without a conversation to fingerprint): no binding key.
    expect(affinityHints(guardedContext("chat", { model: "m", messages: "not a list" })).keyAt!("a", make)).toBeUndefined();
  });
});

describe("recently fingerprinted conversations (the memo of hashParts)", () => {
  test("a conversation seen again, one evicted from the memo, and texts differing in one character each get their own text's key", () => {
    // 150 conversations (more than the memo keeps), fingerprinted in three passes: each pass meets some
    // texts still remembered and some already dropped; every key must be the reference digest of its parts.
    const bodies = Array.from({ length: 150 }, (_, i) => ({ model: "m", messages: [{ role: "system", content: SYS }, { role: "user", content: `question ${i}` }] }));
    const first = bodies.map((b) => both("openai-chat", b).fromBody);
    expect(new Set(first).size).toBe(150);
    for (let pass = 0; pass < 2; pass++) {
      for (let i = pass === 0 ? 0 : 149; pass === 0 ? i < 150 : i >= 0; i += pass === 0 ? 1 : -1) {
        const r = both("openai-chat", bodies[i]!);
        expect(r.fromBody).toBe(r.fromHub);
        expect(r.fromBody).toBe(first[i]!);
      }
    }
    // One character apart at the end of the first user message, and in the model name: different keys.
    const a = both("openai-chat", { model: "m", messages: [{ role: "user", content: "same text." }] });
    const b = both("openai-chat", { model: "m", messages: [{ role: "user", content: "same text!" }] });
    const c = both("openai-chat", { model: "n", messages: [{ role: "user", content: "same text." }] });
    expect(new Set([a.fromBody, b.fromBody, c.fromBody]).size).toBe(3);
    expect(both("openai-chat", { model: "m", messages: [{ role: "user", content: "same text." }] }).fromBody).toBe(a.fromBody);
  });

  test("conversations the memo's index cannot tell apart each get their own text's key", () => {
    // The index is a CRC of the model, system prompt and first user message with the tool count mixed in:
    // tool names of the same count, two first messages of one CRC-32 (found by a search; equal-length
    // texts whose CRCs agree agree after any prefix), a lone surrogate against U+FFFD (one CRC after
    // UTF-8 conversion) and the same text split into other pieces share an index. Alternated, each must
    // keep its own key.
    expect(Bun.hash.crc32("wxsfxqurodfg")).toBe(Bun.hash.crc32("aaxienlqaqcp"));
    const chat = (system: string[], user: string, tools: string[] = []) => ({
      model: "m",
      messages: [...system.map((content) => ({ role: "system", content })), { role: "user", content: user }],
      ...(tools.length > 0 ? { tools: tools.map((name) => ({ type: "function", function: { name, parameters: { type: "object" } } })) } : {}),
    });
    const cases = [
      chat([SYS], "q", ["read", "write"]),
      chat([SYS], "q", ["read", "grep"]),
      chat([SYS], "q", ["grep", "read"]),
      chat([SYS], "wxsfxqurodfg"),
      chat([SYS], "aaxienlqaqcp"),
      chat(["A"], "x\ud800y"),
      chat(["A"], "x\ufffdy"),
      chat(["AB"], "q"),
      chat(["A", "B"], "q"),
    ];
    const first = cases.map((b) => both("openai-chat", b).fromBody);
    // SHA-256 hashes the text as UTF-8, where a lone surrogate is U+FFFD: those two share their key.
    expect(first[5]).toBe(first[6]!);
    expect(new Set(first).size).toBe(cases.length - 1);
    for (let pass = 0; pass < 3; pass++) {
      for (const [i, b] of cases.entries()) {
        const r = both("openai-chat", b);
        expect(r.fromBody).toBe(r.fromHub);
        expect(r.fromBody).toBe(first[i]!);
      }
    }
    // One text in other pieces: the Messages system blocks "A", "B" and the Chat system turns "A\n", …
    // are other texts; the same joined text read from a string or from text blocks is one key.
    const asString = both("anthropic-messages", { model: "m", max_tokens: 1, system: "A\nB", messages: [{ role: "user", content: "q" }] });
    const asBlocks = both("anthropic-messages", { model: "m", max_tokens: 1, system: [{ type: "text", text: "A" }, { type: "text", text: "B" }], messages: [{ role: "user", content: "q" }] });
    const asParts = both("anthropic-messages", { model: "m", max_tokens: 1, system: "A\nB", messages: [{ role: "user", content: [{ type: "text", text: "q" }] }] });
    expect(asBlocks.fromBody).toBe(asString.fromBody);
    expect(asParts.fromBody).toBe(asString.fromBody);
  });

  test("a request right after a conversation that differs from it anywhere gets its own text's key", () => {
    // hashParts checks the conversation found or remembered last before the memo's index: every request
    // below comes right after the base conversation (each also read from the parsed hub, so twice in a row).
    const fn = (name: string) => ({ type: "function", function: { name, parameters: { type: "object" } } });
    const mid = SYS.length >> 1;
    const chat = (model: string, system: string, user: string, tools: string[]) => ({ model, messages: [{ role: "system", content: system }, { role: "user", content: user }], tools: tools.map(fn) });
    const base = chat("m", SYS, "question one", ["read", "write"]);
    const baseKey = both("openai-chat", base).fromBody;
    const variants = [
      chat("n", SYS, "question one", ["read", "write"]),
      chat("m", SYS.slice(0, mid) + "X" + SYS.slice(mid + 1), "question one", ["read", "write"]),
      chat("m", SYS, "question onE", ["read", "write"]),
      chat("m", SYS, "question one", ["read", "wrote"]),
      chat("m", SYS, "question one", ["write", "read"]),
      chat("m", SYS, "question one", ["read"]),
    ];
    const keys = variants.map((v) => {
      expect(both("openai-chat", base).fromBody).toBe(baseKey);
      const r = both("openai-chat", v);
      expect(r.fromBody).toBe(r.fromHub);
      return r.fromBody;
    });
    expect(new Set([baseKey, ...keys]).size).toBe(variants.length + 1);
    // Past the 2,000 characters that count, the system prompt may change: the same key.
    expect(both("openai-chat", base).fromBody).toBe(baseKey);
    expect(both("openai-chat", chat("m", SYS + "a changed tail", "question one", ["read", "write"])).fromBody).toBe(baseKey);
  });

  test("only the first 2,000 characters of a system prompt in several pieces count, remembered or not", () => {
    const head = "x".repeat(1990);
    const key = (tail: string) => both("anthropic-messages", { model: "m", max_tokens: 1, system: [{ type: "text", text: head }, { type: "text", text: tail }], messages: [{ role: "user", content: "q" }] }).fromBody;
    // The second block crosses the cap: the newline and its first 9 characters count, the rest does not.
    const a = key("abcdefghi-one");
    expect(key("abcdefghi-two")).toBe(a);
    expect(key("abcdefghi-one")).toBe(a);
    expect(key("abcdefghX-one")).not.toBe(a);
    expect(key("abcdefghi")).toBe(a);
    expect(key("abcdefgh")).not.toBe(a);
  });

  test("a text longer than the memo keeps (a long tool list) gets the same key every time", () => {
    const tools = Array.from({ length: 600 }, (_, i) => ({ type: "function", function: { name: `mcp__server__a_rather_long_tool_name_${i}`, parameters: { type: "object" } } }));
    const body = { model: "m", messages: [{ role: "system", content: SYS }, { role: "user", content: "hi" }], tools };
    const r1 = both("openai-chat", body);
    const r2 = both("openai-chat", body);
    expect(r1.fromBody).toBe(r1.fromHub);
    expect(r2.fromBody).toBe(r1.fromBody);
  });
});
