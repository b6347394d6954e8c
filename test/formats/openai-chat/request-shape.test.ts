/**
 * The Chat request body checked by hand (formats/openai-chat/request-shape.ts) for the tidy lane,
 * against valibot's schema (schema.ts ChatRequestSchema): every body the hand check takes, the schema
 * takes (so no wrong-typed field slips past the tidy lane), and the usual client bodies are taken by it
 * (so they pay no schema copy); a body it is not sure of is left to the schema, whose 400 names the path.
 */
import { describe, expect, test } from "bun:test";
import * as v from "valibot";
import { chatBodyAccepted } from "../../../formats/openai-chat/request-shape.ts";
import { ChatRequestSchema } from "../../../formats/openai-chat/schema.ts";

const history = [
  { role: "system", content: "You are careful." },
  { role: "user", content: [{ type: "text", text: "What is in this image?", cache_control: { type: "ephemeral" } }, { type: "image_url", image_url: { url: "data:image/png;base64,AAAA", detail: "low" } }] },
  { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function", function: { name: "read", arguments: '{"path":"a"}' } }], reasoning_content: "Let me read it." },
  { role: "tool", tool_call_id: "call_1", content: "file text" },
  { role: "assistant", content: "Done.", refusal: null, name: null },
];
const valid = {
  model: "glm/glm-5.3",
  messages: history,
  tools: [{ type: "function", function: { name: "read", description: "Reads a file", parameters: { type: "object", properties: {} }, strict: true } }],
  tool_choice: "auto",
  parallel_tool_calls: true,
  max_tokens: 1000,
  temperature: 0.2,
  top_p: null,
  stop: ["END"],
  stream: true,
  stream_options: { include_usage: true },
  reasoning_effort: "low",
  response_format: { type: "text" },
  user: "u",
  vendor_field: { anything: [1, 2] },
};

/** Bodies with one field of a wrong type (or a shape the hand check leaves to the schema). */
const variants: Record<string, unknown> = {
  "role 5": { ...valid, messages: [...history, { role: 5, content: "q" }] },
  "unknown role": { ...valid, messages: [{ role: "wizard", content: "q" }] },
  "content an object": { ...valid, messages: [{ role: "user", content: { text: "q" } }] },
  "a part without type": { ...valid, messages: [{ role: "user", content: [{ text: "q" }] }] },
  "text null in a part": { ...valid, messages: [{ role: "user", content: [{ type: "text", text: null }] }] },
  "image_url a number": { ...valid, messages: [{ role: "user", content: [{ type: "image_url", image_url: 5 }] }] },
  "input_audio without format": { ...valid, messages: [{ role: "user", content: [{ type: "input_audio", input_audio: { data: "AAAA" } }] }] },
  "file_id a number": { ...valid, messages: [{ role: "user", content: [{ type: "file", file: { file_id: 5 } }] }] },
  "tool call without function": { ...valid, messages: [{ role: "assistant", tool_calls: [{ id: "c" }] }] },
  "tool call arguments a number": { ...valid, messages: [{ role: "assistant", tool_calls: [{ id: "c", function: { name: "f", arguments: 5 } }] }] },
  "tool call arguments an object": { ...valid, messages: [{ role: "assistant", tool_calls: [{ id: "c", function: { name: "f", arguments: { a: 1 } } }] }] },
  "function_call without name": { ...valid, messages: [{ role: "assistant", function_call: { arguments: "{}" } }] },
  "tool type 5": { ...valid, tools: [{ type: 5 }] },
  "tool parameters an array": { ...valid, tools: [{ type: "function", function: { name: "f", parameters: [] } }] },
  "tool strict a string": { ...valid, tools: [{ type: "function", function: { name: "f", strict: "yes" } }] },
  "tool_choice a number": { ...valid, tool_choice: 1 },
  "temperature a string": { ...valid, temperature: "hot" },
  "max_tokens a string": { ...valid, max_tokens: "10" },
  "stream a string": { ...valid, stream: "yes" },
  "stop with a number": { ...valid, stop: ["a", 5] },
  "stream_options include_usage a string": { ...valid, stream_options: { include_usage: "yes" } },
  "response_format a string": { ...valid, response_format: "json" },
  "user a number": { ...valid, user: 5 },
  "messages an object": { ...valid, messages: {} },
  "a message that is an array": { ...valid, messages: [["user", "q"]] },
  "cache_control a string": { ...valid, messages: [{ role: "user", content: "q", cache_control: "ephemeral" }] },
};

describe("chatBodyAccepted: what it takes, the schema takes", () => {
  test("the usual client bodies are taken (no schema copy on the tidy lane), and the schema takes them too", () => {
    for (const body of [valid, { model: "m", messages: [{ role: "user", content: "hi" }] }, { model: "m", messages: [] }]) {
      expect(chatBodyAccepted(body)).toBe(true);
      expect(v.safeParse(ChatRequestSchema, body).success).toBe(true);
    }
  });

  for (const [name, body] of Object.entries(variants)) {
    test(`${name}: taken only where the schema takes it`, () => {
      if (chatBodyAccepted(body)) expect(v.safeParse(ChatRequestSchema, body).success).toBe(true);
    });
  }
});
