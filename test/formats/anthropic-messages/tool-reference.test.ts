/**
 * An Anthropic `tool_reference` block in a tool result (Claude Code's ToolSearch result) through the
 * hub and back to Anthropic: the hub holds it as text naming the tool (what other formats send) and
 * the Anthropic build sends the block again, as Anthropic's API expands it into the tool's definition.
 * Reached when an Anthropic client's request is built from the hub for an Anthropic provider (a body
 * carrying another provider's tagged signatures). An Anthropic client's request tidied for an
 * `anthropic-compatible` server gets the text instead, and no deferred loading (deferred-tools.ts); one
 * tidied for Anthropic keeps the block unless it names a tool the request does not declare.
 */
import { expect, test } from "bun:test";
import { parseRequest } from "../../../formats/anthropic-messages/parse.ts";
import { buildRequest } from "../../../formats/anthropic-messages/build.ts";
import { tidyRequest } from "../../../formats/anthropic-messages/tidy.ts";

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

test("anthropic-compatible tidy: deferred tools declared as any other, tool_reference sent as text, said once; anthropic keeps them", () => {
  const lookup = { name: "mcp__facts__lookup_fact", input_schema: { type: "object" }, defer_loading: true };
  const placeholder = { name: "DeferredToolPlaceholder", input_schema: { type: "object" }, defer_loading: true };
  const search = { name: "ToolSearch", input_schema: { type: "object" } };
  const result = { type: "tool_result", tool_use_id: "toolu_1", content: [{ type: "tool_reference", tool_name: "mcp__facts__lookup_fact", cache_control: { type: "ephemeral" } }, { type: "text", text: "1 tool" }] };
  const client = {
    model: "m",
    max_tokens: 100,
    tools: [search, placeholder, lookup],
    messages: [
      { role: "user", content: "Look up a fact" },
      { role: "assistant", content: [{ type: "tool_use", id: "toolu_1", name: "ToolSearch", input: { query: "select:mcp__facts__lookup_fact" } }] },
      { role: "user", content: [result] },
    ],
  };
  const before = JSON.stringify(client);
  const compat = tidyRequest(client, { model: "glm-x", kind: "anthropic-compatible", family: "provider:glm", stream: false });
  expect((compat.body as any).tools).toEqual([search, { name: "mcp__facts__lookup_fact", input_schema: { type: "object" } }]);
  expect((compat.body as any).messages[2]).toEqual({
    role: "user",
    content: [{ type: "tool_result", tool_use_id: "toolu_1", content: [{ type: "text", text: "Tool mcp__facts__lookup_fact is now available: call it as any other tool.", cache_control: { type: "ephemeral" } }, { type: "text", text: "1 tool" }] }],
  });
  expect(compat.warnings.filter((w) => w.code === "changed_field")).toEqual([
    { code: "changed_field", message: "Deferred tool loading (defer_loading, tool_reference) is Anthropic's own: defer_loading was not sent (the deferred tools declared as any other, Claude Code's DeferredToolPlaceholder left out) and any tool_reference block was sent as text naming the tool." },
  ]);
  // Nothing of the advanced tool use beta is left: the client's anthropic-beta goes without it.
  expect(compat.droppedBetas).toEqual(["advanced-tool-use-"]);
  expect(JSON.stringify(client)).toBe(before);
  const native = tidyRequest(client, { model: "claude-x", kind: "anthropic", family: "anthropic", stream: false });
  expect((native.body as any).tools).toEqual([search, placeholder, lookup]);
  expect((native.body as any).messages[2].content).toEqual([result]);
  expect(native.warnings.map((w) => w.code)).not.toContain("changed_field");
  expect(native.droppedBetas).toBeUndefined();
});

test("anthropic and claude-code tidy: a tool_reference naming a tool the request does not declare is sent as text saying so, with a warning; a declared one stays a block", () => {
  const lookup = { name: "mcp__facts__lookup_fact", input_schema: { type: "object" }, defer_loading: true };
  const known = { type: "tool_reference", tool_name: "mcp__facts__lookup_fact" };
  const gone = { type: "tool_reference", tool_name: "mcp__gone__fetch", cache_control: { type: "ephemeral" } };
  const client = (tools: unknown[]) => ({
    model: "m",
    max_tokens: 100,
    tools,
    messages: [
      { role: "user", content: "Look up a fact" },
      { role: "assistant", content: [{ type: "tool_use", id: "toolu_1", name: "ToolSearch", input: { query: "facts" } }] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content: [known, gone] }] },
    ],
  });
  for (const kind of ["anthropic", "claude-code"] as const) {
    const body = client([{ name: "ToolSearch", input_schema: { type: "object" } }, lookup]);
    const before = JSON.stringify(body);
    const tidied = tidyRequest(body, { model: "claude-x", kind, family: "anthropic", stream: false });
    expect((tidied.body as any).messages.at(-1).content[0].content).toEqual([known, { type: "text", text: "Tool mcp__gone__fetch was found but is not available in this request: do not call it.", cache_control: { type: "ephemeral" } }]);
    expect(tidied.warnings).toContainEqual({ code: "changed_field", message: 'A tool_reference names the tool "mcp__gone__fetch", which this request does not declare; sent as text saying it is not available.' });
    expect((tidied.body as any).tools).toEqual([{ name: "ToolSearch", input_schema: { type: "object" } }, lookup]);
    expect(tidied.droppedBetas).toBeUndefined();
    expect(JSON.stringify(body)).toBe(before);
  }
  // Every reference declared: the body's messages go as they came (the same objects), no warning.
  const declared = client([lookup, { name: "mcp__gone__fetch", input_schema: { type: "object" }, defer_loading: true }]);
  const same = tidyRequest(declared, { model: "claude-x", kind: "anthropic", family: "anthropic", stream: false });
  expect((same.body as any).messages.at(-1).content[0].content).toEqual([known, gone]);
  expect(same.warnings.map((w) => w.code)).not.toContain("changed_field");
  // An MCP connector toolset names no tools: its references are left to Anthropic.
  const toolset = tidyRequest(client([lookup, { type: "mcp_toolset", mcp_server_name: "gone" }]), { model: "claude-x", kind: "anthropic", family: "anthropic", stream: false });
  expect((toolset.body as any).messages.at(-1).content[0].content).toEqual([known, gone]);
});

test("anthropic-compatible tidy: the advanced tool use beta is kept while the body still uses it (a tool search tool, input_examples, allowed_callers)", () => {
  const base = { model: "m", max_tokens: 100, messages: [{ role: "user", content: "hi" }] };
  const tidied = (tools: unknown[]) => tidyRequest({ ...base, tools }, { model: "glm-x", kind: "anthropic-compatible", family: "provider:glm", stream: false });
  const fn = { name: "f", input_schema: { type: "object" } };
  expect(tidied([fn]).droppedBetas).toEqual(["advanced-tool-use-"]);
  expect(tidyRequest(base, { model: "glm-x", kind: "anthropic-compatible", family: "provider:glm", stream: false }).droppedBetas).toEqual(["advanced-tool-use-"]);
  expect(tidied([fn, { type: "tool_search_tool_regex_20251119", name: "tool_search_tool_regex" }]).droppedBetas).toBeUndefined();
  expect(tidied([{ ...fn, input_examples: [{}] }]).droppedBetas).toBeUndefined();
  expect(tidied([{ ...fn, allowed_callers: ["code_execution_20250825"] }]).droppedBetas).toBeUndefined();
});
