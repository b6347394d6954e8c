/**
 * A Claude Code ToolSearch result (`tool_reference`) reaches a Chat or Responses provider as text
 * naming the tool as that provider has it: a name OpenAI's rule refuses (here: longer than 64
 * characters, an MCP tool name Anthropic takes up to 128) is declared under its mapped name
 * (formats/tool-names.ts), and the text names that one (formats/tool-references.ts), not the client's.
 * A reference to a tool the request does not declare says the tool is not available, with a warning,
 * in every build and in the anthropic-compatible tidy.
 */
import { expect, test } from "bun:test";
import { parseRequest } from "../../formats/anthropic-messages/parse.ts";
import { buildRequest as buildChat } from "../../formats/openai-chat/build.ts";
import { buildRequest as buildResponses } from "../../formats/openai-responses/build.ts";
import { buildRequest as buildGemini } from "../../formats/gemini/build.ts";
import { buildRequest as buildAnthropic } from "../../formats/anthropic-messages/build.ts";
import { tidyRequest } from "../../formats/anthropic-messages/tidy.ts";

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
  expect(body.messages.at(-1).content).toContain(declared); 
});

test("Responses: the tool_reference text names the tool as the provider has it", () => {
  const body = buildResponses(hub(), { model: "gpt-x", kind: "openai-responses", family: "openai", stream: false } as never).body as any;
  const declared = body.tools.map((t: any) => t.name).find((n: string) => n.startsWith("mcp__"));
  expect(declared).not.toBe(LONG);
  expect(body.input.at(-1).output).toContain(declared); 
});

const GONE = "mcp__gone__tool";
const GONE_TEXT = `Tool ${GONE} was found but is not available in this request: do not call it.`;
const GONE_WARNING = { code: "changed_field", message: `A tool_reference names the tool "${GONE}", which this request does not declare; sent as text saying it is not available.` };

/** A Claude Code body whose ToolSearch result names a tool it does not declare (only ToolSearch is). */
function goneBody() {
  return {
    model: "m",
    max_tokens: 100,
    tools: [{ name: "ToolSearch", input_schema: { type: "object" } }],
    messages: [
      { role: "user", content: "look it up" },
      { role: "assistant", content: [{ type: "tool_use", id: "toolu_1", name: "ToolSearch", input: { query: "gone" } }] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content: [{ type: "tool_reference", tool_name: GONE }] }] },
    ],
  };
}

test("a tool_reference to an undeclared tool: every build says it is not available, with a warning", () => {
  const chat = buildChat(parseRequest(goneBody()), { model: "gpt-x", kind: "openai", family: "openai", stream: false } as never);
  expect((chat.body as any).messages.at(-1).content).toBe(GONE_TEXT);
  expect(chat.warnings).toContainEqual(GONE_WARNING);
  const responses = buildResponses(parseRequest(goneBody()), { model: "gpt-x", kind: "openai-responses", family: "openai", stream: false } as never);
  expect((responses.body as any).input.at(-1).output).toBe(GONE_TEXT);
  expect(responses.warnings).toContainEqual(GONE_WARNING);
  const gemini = buildGemini(parseRequest(goneBody()), { model: "gemini-x", kind: "gemini", family: "gemini", stream: false } as never);
  expect(JSON.stringify((gemini.body as any).contents.at(-1))).toContain(GONE_TEXT);
  expect(JSON.stringify((gemini.body as any).contents.at(-1))).not.toContain("now available");
  expect(gemini.warnings).toContainEqual(GONE_WARNING);
  // Anthropic: no tool_reference block naming a tool it was not given; the text instead.
  const anthropic = buildAnthropic(parseRequest(goneBody()), { model: "claude-x", kind: "anthropic", family: "anthropic", stream: false } as never);
  expect((anthropic.body as any).messages.at(-1).content).toEqual([{ type: "tool_result", tool_use_id: "toolu_1", content: GONE_TEXT }]);
  expect(anthropic.warnings).toContainEqual(GONE_WARNING);
});

test("a tool_reference to an undeclared tool, tidied for an anthropic-compatible server: the same text and warning", () => {
  const out = tidyRequest(goneBody(), { model: "glm-x", kind: "anthropic-compatible", family: "provider:glm", stream: false });
  expect((out.body as any).messages.at(-1).content).toEqual([{ type: "tool_result", tool_use_id: "toolu_1", content: [{ type: "text", text: GONE_TEXT }] }]);
  expect(out.warnings).toContainEqual(GONE_WARNING);
});

test("a declared tool's tool_reference keeps its block to Anthropic and says nothing more", () => {
  const built = buildAnthropic(hub(), { model: "claude-x", kind: "anthropic", family: "anthropic", stream: false } as never);
  expect((built.body as any).messages.at(-1).content[0].content).toEqual([{ type: "tool_reference", tool_name: LONG }]);
  expect(built.warnings.filter((w) => w.message.includes("tool_reference"))).toEqual([]);
});
