/**
 * The Responses request checked by hand (formats/openai-responses/request-shape.ts, docs/performance.md
 * item 143) against valibot's schemas: for every body, `parseRequest` (hand checks first) and
 * `parseRequestBySchema` (schemas only) give the same hub request, request echo and upstream bodies, as
 * JSON text (key order included), or the same 400; Codex's recorded turns take the hand path.
 */
import { describe, expect, test } from "bun:test";
import type { BuildTarget } from "../../../formats/codec.ts";
import type { HubRequest } from "../../../formats/hub.ts";
import { anthropicMessages } from "../../../formats/anthropic-messages/index.ts";
import { openaiChat } from "../../../formats/openai-chat/index.ts";
import { openaiResponses } from "../../../formats/openai-responses/index.ts";
import { parseRequest, parseRequestBySchema } from "../../../formats/openai-responses/parse.ts";
import {
  acceptedRequest,
  plainFunctionCall,
  plainFunctionCallOutput,
  plainFunctionTool,
  plainMessageItem,
} from "../../../formats/openai-responses/request-shape.ts";
import { responseEcho } from "../../../formats/openai-responses/response.ts";
import { clientRequest } from "../../support/fixtures.ts";

const RESPONSES: BuildTarget = { model: "gpt-x", kind: "openai-responses", family: "openai", stream: false };
const CODEX: BuildTarget = { model: "gpt-5-codex", kind: "codex", family: "openai", stream: true };
const CHAT: BuildTarget = { model: "gpt-x", kind: "openai-compatible", family: "openai", stream: false };
const ANTHROPIC: BuildTarget = { model: "claude-x", kind: "anthropic", family: "anthropic", stream: false };

/** What a client sees of a hub request: the hub, the request echo and the bodies built for four targets, as JSON text. */
function seen(hub: HubRequest): string[] {
  const built = [RESPONSES, CODEX, CHAT, ANTHROPIC].map((t) => {
    try {
      return JSON.stringify(t.kind === "anthropic" ? anthropicMessages.buildRequest(hub, t) : t.kind === "openai-compatible" ? openaiChat.buildRequest(hub, t) : openaiResponses.buildRequest(hub, t));
    } catch (e) {
      return `throws ${(e as Error).message}`;
    }
  });
  return [JSON.stringify(hub), JSON.stringify(responseEcho(hub)), ...built];
}

function answer(parse: (b: unknown) => HubRequest, text: string): string[] | string {
  try {
    return seen(parse(JSON.parse(text)));
  } catch (e) {
    return `throws ${(e as Error).message}`;
  }
}

const base = { model: "m", input: "hi" };
const variant = (o: Record<string, unknown>) => JSON.stringify({ ...base, ...o });
const fn = (name: string, extra: Record<string, unknown> = {}) => ({ type: "function", name, parameters: { type: "object", properties: {} }, ...extra });

const CRAFTED: Record<string, string> = {
  "bench body": JSON.stringify({ model: "cchat/gpt-bench", stream: false, instructions: "You are careful. ".repeat(20), input: "Summarise.", max_output_tokens: 256 }),
  "tool_choice a function, keys out of order": variant({ tools: [fn("f")], tool_choice: { name: "f", type: "function" } }),
  "tool_choice allowed_tools, keys out of order": variant({ tools: [fn("f"), fn("g")], tool_choice: { tools: [{ name: "f", type: "function" }], mode: "auto", type: "allowed_tools" } }),
  "tool_choice a hosted tool with members before type": variant({ tool_choice: { x: 1, type: "web_search_preview" } }),
  "reasoning with members out of order": variant({ reasoning: { summary: "auto", extra: 1, effort: "high" } }),
  "reasoning with an unknown effort": variant({ reasoning: { effort: "huge" } }),
  "text with format last and verbosity": variant({ text: { verbosity: "low", other: 1, format: { strict: true, name: "n", schema: { type: "object" }, type: "json_schema" } } }),
  "text with an unknown format type, keys out of order": variant({ text: { format: { foo: 1, type: "weird" }, other: 1 } }),
  "provider tools, keys out of order": variant({
    tools: [{ extra: 1, name: "ws", type: "web_search" }, { format: { type: "grammar", syntax: "lark", definition: "x" }, description: "d", name: "apply_patch", type: "custom" }, { type: "local_shell" }],
  }),
  "function tools with unknown members first": variant({ tools: [{ output_schema: { a: 1 }, parameters: { properties: {}, type: "object" }, name: "f", type: "function", strict: true, defer_loading: true, description: "d" }, { name: "g", type: "function", parameters: null, strict: null }] }),
  "a namespace tool": variant({ tools: [{ type: "namespace", name: "ns", description: "d", tools: [fn("inner", { z: 1 }), { type: "custom", name: "c" }] }] }),
  "instructions as items": variant({ instructions: [{ role: "developer", content: "be brief" }, { type: "message", role: "system", content: [{ type: "input_text", text: "s" }] }] }),
  "every item kind": variant({
    input: [
      { role: "user", content: [{ type: "input_text", text: "a" }, { type: "input_image", image_url: "data:image/png;base64,AAAA" }, { type: "other" }] },
      { type: "reasoning", id: "rs_1", summary: [{ type: "summary_text", text: "thought" }], encrypted_content: "enc" },
      { type: "reasoning", content: [{ type: "reasoning_text", text: "raw" }, {}], summary: null },
      { type: "message", role: "assistant", phase: "commentary", id: "msg_1", content: [{ type: "output_text", text: "b" }] },
      { type: "function_call", id: "fc_1", call_id: "call_1", name: "f", arguments: "{\"q\":1}", namespace: "ns" },
      { type: "custom_tool_call", call_id: "call_2", name: "apply_patch", input: "*** Begin Patch" },
      { type: "local_shell_call", call_id: "call_3", action: { type: "exec", command: ["ls"] } },
      { type: "function_call_output", call_id: "call_1", output: "out" },
      { type: "function_call_output", call_id: "call_4", output: [{ type: "input_text", text: "t" }] },
      { type: "function_call_output", call_id: "call_5", output: { b: 1, content: 5, a: 2 } },
      { type: "function_call_output", call_id: "call_6", output: [1, 2] },
      { type: "custom_tool_call_output", call_id: "call_2", output: "done" },
      { type: "local_shell_call_output", call_id: "call_3", output: "ls out" },
      { type: "item_reference", id: "x" },
    ],
  }),
  "nulls where the schema allows them": variant({ instructions: null, tools: null, tool_choice: null, parallel_tool_calls: null, max_output_tokens: null, temperature: null, top_p: null, reasoning: null, text: null, store: null, include: null, prompt_cache_key: null, previous_response_id: null, user: null, stream: null }),
  "settings": variant({ parallel_tool_calls: false, max_output_tokens: 5, temperature: 0.2, top_p: 0.5, store: false, include: ["message.output_text.logprobs"], top_logprobs: 3, prompt_cache_key: "k", user: "u", stream: true, client_metadata: { a: 1 } }),
  // Arrays where the schema wants an object (valibot's looseObject and record take them as objects).
  "an input item that is an array": variant({ input: [["x"]] }),
  "a tool that is an array": variant({ tools: [["function"]] }),
  "parameters an array": variant({ tools: [{ type: "function", name: "f", parameters: ["a"] }] }),
  "text an array": variant({ text: [] }),
  // Members valibot's copies leave out.
  "__proto__ in a function tool": '{"model":"m","input":"hi","tools":[{"type":"function","name":"f","__proto__":{"a":1},"x":2}]}',
  "constructor in parameters": '{"model":"m","input":"hi","tools":[{"type":"function","name":"f","parameters":{"type":"object","constructor":1}}]}',
  "__proto__ in tool_choice": '{"model":"m","input":"hi","tool_choice":{"type":"web_search","__proto__":{"a":1}}}',
  "prototype in reasoning": '{"model":"m","input":"hi","reasoning":{"effort":"low","prototype":1,"b":2}}',
  "__proto__ in a message item": '{"model":"m","input":[{"role":"user","content":"x","__proto__":{"a":1}}]}',
  // Refused by the schemas.
  "no model": JSON.stringify({ input: "x" }),
  "input a number": variant({ input: 5 }),
  "an item type that is null": variant({ input: [{ type: null, role: "user", content: "x" }] }),
  "an unknown role": variant({ input: [{ role: "bot", content: "x" }] }),
  "a part text that is null": variant({ input: [{ role: "user", content: [{ type: "input_text", text: null }] }] }),
  "a function_call without call_id": variant({ input: [{ type: "function_call", name: "f", arguments: "{}" }] }),
  "a reasoning summary entry without text": variant({ input: [{ type: "reasoning", summary: [{ type: "summary_text" }] }] }),
  "a custom_tool_call_output with an object output": variant({ input: [{ type: "custom_tool_call_output", call_id: "c", output: { a: 1 } }] }),
  "a tool without a type": variant({ tools: [{ name: "f" }] }),
  "a tool name that is null": variant({ tools: [{ type: "web_search", name: null }] }),
  "a function tool without a name": variant({ tools: [{ type: "function" }] }),
  "include with a number": variant({ include: [1] }),
  "stream a string": variant({ stream: "yes" }),
  "tool_choice without a type": variant({ tool_choice: { name: "f" } }),
  "reasoning effort a number": variant({ reasoning: { effort: 1 } }),
};

describe("the hand checks of a Responses request", () => {
  for (const [name, text] of Object.entries(CRAFTED)) {
    test(name, () => {
      expect(answer(parseRequest, text)).toEqual(answer(parseRequestBySchema, text));
    });
  }

  test("Codex's recorded turns and the bench's request are read without the schemas, with the same result", async () => {
    for (const file of ["codex-default.json", "codex-tool-use-1.json", "codex-tool-use-2.json"]) {
      const body = await clientRequest(file);
      expect(acceptedRequest(body)).toBeDefined();
      for (const item of body.input) {
        const plain = item.type === "function_call" ? plainFunctionCall(item) : item.type === "function_call_output" ? plainFunctionCallOutput(item) : plainMessageItem(item);
        expect(plain).toBe(true);
      }
      for (const t of body.tools) if (t.type === "function") expect(plainFunctionTool(t)).toBe(true);
      const text = JSON.stringify(body);
      expect(answer(parseRequest, text)).toEqual(answer(parseRequestBySchema, text));
    }
    expect(acceptedRequest(JSON.parse(CRAFTED["bench body"]!))).toBeDefined();
  });

  test("a hosted tool and a hosted tool choice keep the schema's key order upstream (type, name, then the rest)", () => {
    const hub = parseRequest(JSON.parse(CRAFTED["provider tools, keys out of order"]!));
    const body = openaiResponses.buildRequest(hub, RESPONSES).body as { tools: Record<string, unknown>[] };
    expect(Object.keys(body.tools[0]!)).toEqual(["type", "name", "extra"]);
    const choice = parseRequest(JSON.parse(CRAFTED["tool_choice a hosted tool with members before type"]!)).source.extra.tool_choice as Record<string, unknown>;
    expect(Object.keys(choice)).toEqual(["type", "x"]);
  });
});
