/**
 * An Anthropic `tool_reference` block in a tool result (Claude Code's ToolSearch result) through the
 * hub and back to Anthropic: the hub holds it as text naming the tool (what other formats send) and
 * the Anthropic build sends the block again, as Anthropic's API expands it into the tool's definition.
 * Reached when an Anthropic client's request is built from the hub for an Anthropic provider (a body
 * carrying another provider's tagged signatures).
 */
import { expect, test } from "bun:test";
import { parseRequest } from "../../../formats/anthropic-messages/parse.ts";
import { buildRequest } from "../../../formats/anthropic-messages/build.ts";

test("tool_reference: hub text naming the tool, the same block again in the Anthropic build", () => {
  const hub = parseRequest({
    model: "m",
    max_tokens: 100,
    tools: [{ name: "mcp__facts__lookup_fact", input_schema: { type: "object" }, defer_loading: true }],
    messages: [
      { role: "assistant", content: [{ type: "tool_use", id: "toolu_1", name: "ToolSearch", input: { query: "select:mcp__facts__lookup_fact" } }] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content: [{ type: "tool_reference", tool_name: "mcp__facts__lookup_fact" }, { type: "text", text: "1 tool" }] }] },
    ],
  });
  const result = hub.messages[1]!.content[0] as any;
  expect(result.content).toEqual([
    { type: "text", text: "Tool mcp__facts__lookup_fact is now available: call it as any other tool.", toolReference: "mcp__facts__lookup_fact" },
    { type: "text", text: "1 tool" },
  ]);
  expect(hub.droppedItemTypes).toBeUndefined();
  const body = buildRequest(hub, { model: "claude-x", kind: "anthropic", family: "anthropic", stream: false }).body as any;
  expect(body.messages[1].content).toEqual([
    { type: "tool_result", tool_use_id: "toolu_1", content: [{ type: "tool_reference", tool_name: "mcp__facts__lookup_fact" }, { type: "text", text: "1 tool" }] },
  ]);
  expect(body.tools[0].defer_loading).toBe(true);
});
