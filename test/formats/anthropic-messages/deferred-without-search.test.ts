/**
 * A Responses client's deferred function tools (`defer_loading: true`, loaded by its `tool_search`
 * tool) on an Anthropic provider: `tool_search` is OpenAI's and is dropped there, so the tools are
 * declared plainly (no `defer_loading`: deferred tools with no search tool to load them), with a
 * `dropped_field` warning. Until 2026-12-07 they went with `defer_loading: true` and no search tool.
 * An Anthropic client's own deferred tools still go as sent (tool-reference.test.ts).
 */
import { expect, test } from "bun:test";
import { parseRequest } from "../../../formats/openai-responses/parse.ts";
import { buildRequest } from "../../../formats/anthropic-messages/build.ts";

test("Responses defer_loading + tool_search → Anthropic: the function declared plainly, said in a warning", () => {
  const hub = parseRequest({
    model: "m",
    input: "hi",
    tools: [{ type: "function", name: "f", parameters: { type: "object" }, defer_loading: true }, { type: "tool_search" }],
  });
  const built = buildRequest(hub, { model: "claude-x", kind: "anthropic", family: "anthropic", stream: false });
  expect((built.body as any).tools).toEqual([{ name: "f", input_schema: { type: "object" } }]);
  expect(built.warnings).toContainEqual({
    code: "dropped_field",
    message: "defer_loading was not sent: no tool search tool goes to Anthropic to load deferred tools, so they were declared as any other",
  });
  expect(built.warnings.map((w) => w.code)).toContain("dropped_tool"); // tool_search itself
});

test("Responses function tools without defer_loading → Anthropic: no defer_loading warning", () => {
  const hub = parseRequest({ model: "m", input: "hi", tools: [{ type: "function", name: "f", parameters: { type: "object" } }] });
  const built = buildRequest(hub, { model: "claude-x", kind: "anthropic", family: "anthropic", stream: false });
  expect(built.warnings.filter((w) => w.message.includes("defer_loading"))).toEqual([]);
});
