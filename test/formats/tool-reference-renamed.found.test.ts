/**
 * Found (review of session 43): a Claude Code ToolSearch result (`tool_reference`) reaches a Chat or
 * Responses provider as text naming the tool by the client's name (formats/anthropic-messages/parse.ts
 * `toolReferencePart`), while a name OpenAI's rule refuses (here: longer than 64 characters, an MCP
 * tool name Anthropic takes up to 128) is declared to that provider under its mapped name
 * (formats/tool-names.ts). The text then names a tool the model does not have.
 */
import { expect, test } from "bun:test";
import { parseRequest } from "../../formats/anthropic-messages/parse.ts";
import { buildRequest as buildChat } from "../../formats/openai-chat/build.ts";
import { buildRequest as buildResponses } from "../../formats/openai-responses/build.ts";

const LONG = "mcp__" + "facts".repeat(8) + "__lookup_fact_with_a_long_name"; // 75 characters

function hub() {
  return parseRequest({
    model: "m",
    max_tokens: 100,
    tools: [
      { name: "ToolSearch", input_schema: { type: "object" } },
      { name: LONG, input_schema: { type: "object" }, defer_loading: true },
    ],
    messages: [
      { role: "user", content: "look it up" },
      { role: "assistant", content: [{ type: "tool_use", id: "toolu_1", name: "ToolSearch", input: { query: "facts" } }] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content: [{ type: "tool_reference", tool_name: LONG }] }] },
    ],
  });
}

test("Chat: the tool_reference text names the tool as the provider has it", () => {
  const body = buildChat(hub(), { model: "gpt-x", kind: "openai", family: "openai", stream: false } as never).body as any;
  const declared = body.tools.map((t: any) => t.function.name).find((n: string) => n.startsWith("mcp__"));
  expect(declared).not.toBe(LONG); // renamed (passes)
  expect(body.messages.at(-1).content).toContain(declared); // fails: the text names LONG
});

test("Responses: the tool_reference text names the tool as the provider has it", () => {
  const body = buildResponses(hub(), { model: "gpt-x", kind: "openai-responses", family: "openai", stream: false } as never).body as any;
  const declared = body.tools.map((t: any) => t.name).find((n: string) => n.startsWith("mcp__"));
  expect(declared).not.toBe(LONG);
  expect(body.input.at(-1).output).toContain(declared); // fails: the text names LONG
});
