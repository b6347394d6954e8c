/**
 * Anthropic `tool_reference` blocks (Claude Code's ToolSearch result: `{type: "tool_reference",
 * tool_name}` in a `tool_result`, which Anthropic's API expands into the named deferred tool's
 * definition, Anthropic tool search docs) named as the provider has the tool. Pure.
 *
 * The parser (formats/anthropic-messages/parse.ts) holds one as a text part with `toolReference` set
 * to the client's tool name. Each builder, once it has mapped the request's tool names
 * (formats/tool-names.ts: OpenAI takes at most 64 characters, an MCP tool name may have 128), renders
 * the part with {@link namedToolReferences}, so the text names the tool the model was given
 * (`Tool mcp__…_a8e8aeda is now available…`, not the client's 75-character name) and an Anthropic
 * build's block names it as declared. A reference to a tool the request does not declare says so
 * instead of claiming it is available, with a `changed_field` warning.
 */
import { portableTools } from "./tool-kinds.ts";
import type { HubMessage, HubRequest, TextPart, Warnings } from "./hub.ts";

/** The text a `tool_reference` naming `toolName` (the provider's name for it) becomes where it cannot go as a block. */
export function toolReferenceText(toolName: string): string {
  return `Tool ${toolName} is now available: call it as any other tool.`;
}

/** The text of a `tool_reference` naming a tool the request does not declare (the client's name). */
export function undeclaredToolReferenceText(toolName: string): string {
  return `Tool ${toolName} was found but is not available in this request: do not call it.`;
}

/**
 * `req` with each `tool_reference` text part of its tool results rendered for the provider: a declared
 * function tool's part gets `toolReference` and text naming `providerName(name)` (the builder's name
 * map, called for declared names only); a part naming a tool `req.tools` does not declare becomes plain
 * text ({@link undeclaredToolReferenceText}, no `toolReference`, so an Anthropic build sends text too)
 * and adds one `changed_field` warning per name to `w`. Returns `req` itself when it holds no
 * `tool_reference` (the common case); never changes the objects it is given.
 */
export function namedToolReferences(req: HubRequest, providerName: (name: string) => string, w: Warnings): HubRequest {
  let declared: Set<string> | undefined;
  let messages: HubMessage[] | undefined;
  for (let i = 0; i < req.messages.length; i++) {
    const m = req.messages[i]!;
    let content: HubMessage["content"] | undefined;
    for (let j = 0; j < m.content.length; j++) {
      const p = m.content[j]!;
      let next = p;
      if (p.type === "tool_result" && p.content.some((c) => c.type === "text" && c.toolReference !== undefined)) {
        declared ??= new Set(portableTools(req.tools).flatMap((t) => (t.kind === "function" ? [t.name] : [])));
        const known = declared;
        next = { ...p, content: p.content.map((c) => (c.type === "text" && c.toolReference !== undefined ? rendered(c, c.toolReference, known, providerName, w) : c)) };
      }
      if (next !== p) content ??= m.content.slice(0, j);
      content?.push(next);
    }
    if (content) messages ??= req.messages.slice(0, i);
    messages?.push(content ? { ...m, content } : m);
  }
  return messages ? { ...req, messages } : req;
}

function rendered(c: TextPart, name: string, declared: Set<string>, providerName: (name: string) => string, w: Warnings): TextPart {
  if (declared.has(name)) {
    const given = providerName(name);
    return { ...c, text: toolReferenceText(given), toolReference: given };
  }
  w.add("changed_field", `A tool_reference names the tool ${JSON.stringify(name)}, which this request does not declare; sent as text saying it is not available.`);
  const { toolReference: _, ...rest } = c;
  return { ...rest, text: undeclaredToolReferenceText(name) };
}
