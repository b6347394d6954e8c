/**
 * The Messages request envelope checked by hand (formats/anthropic-messages/request-shape.ts,
 * docs/performance.md item 142) against valibot's schema: wherever the hand check takes a body, the
 * hub request and the upstream bodies built from it are the same, key order included, as from the
 * schema's output; every body the schema refuses is left to the schema (so its 400 names the same path).
 */
import { describe, expect, test } from "bun:test";
import { anthropicMessages } from "../../../formats/anthropic-messages/index.ts";
import { checkedEnvelope, parseEnvelope } from "../../../formats/anthropic-messages/parse.ts";
import { acceptedEnvelope } from "../../../formats/anthropic-messages/request-shape.ts";
import type { BuildTarget } from "../../../formats/codec.ts";
import type { HubRequest } from "../../../formats/hub.ts";
import { openaiChat } from "../../../formats/openai-chat/index.ts";
import { clientRequest } from "../../support/fixtures.ts";

const ANTHROPIC: BuildTarget = { model: "claude-x", kind: "anthropic", family: "anthropic", stream: false };
const CHAT: BuildTarget = { model: "gpt-x", kind: "openai", family: "openai", stream: false };

/** What a client sees of a hub request: the hub as JSON text and the bodies built for two targets. */
function seen(hub: HubRequest): string[] {
  return [JSON.stringify(hub), JSON.stringify(anthropicMessages.buildRequest(hub, ANTHROPIC)), JSON.stringify(openaiChat.buildRequest(hub, CHAT))];
}

/** The schema's answer for a body (from its own parsed copy): the hub's texts, or the error message. */
function viaSchema(text: string): string[] | string {
  try {
    return seen(parseEnvelope(checkedEnvelope(JSON.parse(text))));
  } catch (e) {
    return (e as Error).message;
  }
}

const base = { model: "m", max_tokens: 64, messages: [{ role: "user", content: "hi" }] };
const variant = (o: Record<string, unknown>) => JSON.stringify({ ...base, ...o });

/** Bodies the schema takes whose copies differ from the body in key order or shape, and bodies it refuses. */
const CRAFTED: Record<string, string> = {
  "bench body": JSON.stringify({ model: "gpt-bench", stream: false, max_tokens: 256, system: "You are careful. ".repeat(20), messages: [{ role: "user", content: "Summarise." }] }),
  "server tool, keys out of the schema's order": variant({ tools: [{ max_uses: 5, input_schema: { b: 1, a: 2 }, type: "web_search_20250305", x: null, name: "web_search" }, { input_schema: { type: "object" }, name: "f", z: 1 }] }),
  "function tool with unknown fields first": variant({ tools: [{ cache_control: { type: "ephemeral" }, eager: true, description: "d", name: "f", input_schema: { properties: {}, type: "object" } }] }),
  "thinking of an unknown type, keys out of order": variant({ thinking: { display: "omitted", extra: 1, type: "newer", budget_tokens: 5 } }),
  "thinking enabled with extra members": variant({ thinking: { extra: { a: 1 }, budget_tokens: 2048, type: "enabled" } }),
  "tool_choice of an unknown type": variant({ tool_choice: { name: "f", extra: 1, type: "newer", disable_parallel_tool_use: true } }),
  "output_config: an unknown effort after other members": variant({ output_config: { format: { type: "json_schema", schema: { type: "object" } }, other: 1, effort: "huge" } }),
  "metadata with members before user_id": variant({ metadata: { a: [1], user_id: "u" } }),
  "unknown top-level fields around known ones": JSON.stringify({ zeta: 1, model: "m", context_management: { edits: [] }, messages: [{ role: "user", content: "x" }], alpha: null }),
  "message with unknown members, system turn, blocks of every kind": variant({
    system: [{ type: "text", text: "s", cache_control: { type: "ephemeral" } }, { type: "other" }],
    messages: [
      { extra: 1, content: [{ type: "text", text: "a" }, { type: "image", source: { type: "url", url: "http://x/i.png" } }], role: "user" },
      { role: "assistant", content: [{ type: "thinking", thinking: "t", signature: "sig" }, { type: "tool_use", id: "toolu_1", name: "f", input: { q: 1 } }] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content: [{ type: "text", text: "r" }], is_error: false }, { type: "server_tool_use" }] },
      { role: "system", content: "later", output_config: { effort: "low" } },
    ],
  }),
  "nulls where the schema allows them": variant({ system: null, tools: null, tool_choice: null, temperature: null, top_p: null, top_k: null, stop_sequences: null, thinking: null, output_config: null, metadata: null, stream: null }),
  "stop sequences and sampling": variant({ stop_sequences: ["a", "b"], temperature: 0.5, top_p: 0.9, top_k: 40, stream: true }),
  // valibot's looseObject takes an array and copies it into an object: left to the schema.
  "output_config an array": variant({ output_config: ["x"] }),
  "metadata an array": variant({ metadata: [] }),
  "a tool an array": variant({ tools: [["f"]] }),
  "input_schema an array": variant({ tools: [{ name: "f", input_schema: [1] }] }),
  // Members valibot's copies leave out (JSON.parse makes them own members).
  "__proto__ in a message": '{"model":"m","messages":[{"role":"user","content":"hi","__proto__":{"x":1}}]}',
  "__proto__ at the top level": '{"model":"m","messages":[{"role":"user","content":"hi"}],"__proto__":{"y":2},"constructor":1}',
  "constructor in a tool": '{"model":"m","messages":[{"role":"user","content":"hi"}],"tools":[{"name":"f","constructor":{"a":1}}]}',
  "__proto__ in an input_schema": '{"model":"m","messages":[{"role":"user","content":"hi"}],"tools":[{"name":"f","input_schema":{"type":"object","__proto__":{"a":1}}}]}',
  "prototype in thinking": '{"model":"m","messages":[{"role":"user","content":"hi"}],"thinking":{"type":"newer","prototype":1,"a":2}}',
  // Refused by the schema.
  "no model": JSON.stringify({ messages: [] }),
  "messages not an array": variant({ messages: {} }),
  "a message without content": variant({ messages: [{ role: "user" }] }),
  "a block without a type": variant({ messages: [{ role: "user", content: [{ text: "x" }] }] }),
  "a role that is a number": variant({ messages: [{ role: 1, content: "x" }] }),
  "max_tokens a string": variant({ max_tokens: "5" }),
  "a tool name that is a number": variant({ tools: [{ name: 5 }] }),
  "input_schema a string": variant({ tools: [{ name: "f", input_schema: "s" }] }),
  "a stop sequence that is a number": variant({ stop_sequences: [1] }),
  "thinking without a type": variant({ thinking: { budget_tokens: 5 } }),
  "stream a string": variant({ stream: "yes" }),
  "user_id a number": variant({ metadata: { user_id: 5 } }),
  "tool_choice without a type": variant({ tool_choice: { name: "f" } }),
  "system a number": variant({ system: 5 }),
  "not an object": "[1]",
};

describe("the hand check of a Messages request envelope", () => {
  for (const [name, text] of Object.entries(CRAFTED)) {
    test(name, () => {
      const expected = viaSchema(text);
      const env = acceptedEnvelope(JSON.parse(text));
      if (typeof expected === "string") {
        // The schema refuses it: the hand check must leave it to the schema (same 400).
        expect(env).toBeUndefined();
        expect(() => anthropicMessages.parseRequest!(JSON.parse(text))).toThrow(expected);
        return;
      }
      if (env) expect(seen(parseEnvelope(env))).toEqual(expected);
      // parseRequest, whichever way it reads the body, gives what the schema's output gives.
      expect(seen(anthropicMessages.parseRequest!(JSON.parse(text)))).toEqual(expected);
    });
  }

  test("the usual bodies are read without the schema: Claude Code's turns, the bench's request, server tools, unknown members", async () => {
    const usual = ["bench body", "server tool, keys out of the schema's order", "thinking of an unknown type, keys out of order", "tool_choice of an unknown type", "output_config: an unknown effort after other members", "message with unknown members, system turn, blocks of every kind", "nulls where the schema allows them"];
    for (const name of usual) expect(acceptedEnvelope(JSON.parse(CRAFTED[name]!))).toBeDefined();
    for (const file of ["claude-code-default.json", "claude-code-prefix.json", "claude-code-tool-use-1.json", "claude-code-tool-use-2.json"]) {
      const text = JSON.stringify(await clientRequest(file));
      const env = acceptedEnvelope(JSON.parse(text));
      expect(env).toBeDefined();
      expect(seen(parseEnvelope(env!))).toEqual(viaSchema(text) as string[]);
    }
  });

  test("a server tool keeps the schema's key order upstream (name, type, description, input_schema, then the rest)", () => {
    const env = acceptedEnvelope(JSON.parse(CRAFTED["server tool, keys out of the schema's order"]!))!;
    const built = anthropicMessages.buildRequest(parseEnvelope(env), ANTHROPIC).body as { tools: Record<string, unknown>[] };
    expect(Object.keys(built.tools[0]!)).toEqual(["name", "type", "input_schema", "max_uses", "x"]);
  });
});
