/**
 * Claude Code's deferred tool loading on an `anthropic-compatible` provider (tidy.ts): {@link withoutDeferredLoading};
 * on Anthropic's own API, only a `tool_reference` to a tool the request does not declare is changed
 * ({@link withoutUndeclaredReferences}). Pure.
 *
 * With an MCP server configured, Claude Code declares its MCP tools with `defer_loading: true`, adds a
 * `DeferredToolPlaceholder` tool (`defer_loading: true`, a description saying never to call it) and
 * loads a tool through its `ToolSearch` tool, whose result is a `tool_result` holding
 * `{type: "tool_reference", tool_name}` blocks that Anthropic's API expands into the named tool's
 * definition (Anthropic tool search docs; fixtures/clients README). That is Anthropic's own feature, and
 * third-party Messages servers do not all take it: LM Studio's Anthropic endpoint answers 400
 * `…content.0.type: Invalid literal value, expected "text"` to the `tool_reference` block, so every
 * later turn of the session fails the same way (NanmiCoder/cc-haha#1229), vLLM's Anthropic endpoint
 * learnt the block in 2026 (vllm-project/vllm#40190), and GLM-5.1 behind Z.ai's Anthropic endpoint takes
 * the request but reads the block as "no tool found" and stops (zai-org/GLM-5#76). Claude Code itself
 * keeps tool search off for a host other than Anthropic's unless `ENABLE_TOOL_SEARCH` says the proxy
 * forwards `tool_reference` blocks (its messages, quoted in cc-haha#1229).
 * So for those servers the deferred tools are declared as any other, as the Chat, Gemini and Responses
 * builds declare them: `defer_loading` is not sent, the placeholder is not sent, and each
 * `tool_reference` in a tool result is the text the other builds send (formats/tool-references.ts {@link toolReferenceText}).
 * Claude Code's `advanced-tool-use-2025-11-20` beta, which enables deferred loading on Anthropic's API,
 * then goes out of the `anthropic-beta` header those servers get unless the body still uses something
 * else of it ({@link usesAdvancedToolUse}; tidy.ts `droppedBetas`): Z.ai is reported to defer tools under
 * it even without `defer_loading` (zai-org/feedback#172, not tried here).
 */
import type { Warnings } from "../hub.ts";
import { isObj, type JsonObject as Json } from "../json.ts";
import { toolReferenceText, undeclaredToolReferenceText } from "../tool-references.ts";
import { DEFER_PLACEHOLDER as PLACEHOLDER } from "../tool-kinds.ts";

/**
 * The `anthropic-beta` value (a prefix: its versions are dated, Claude Code sends
 * `advanced-tool-use-2025-11-20`) under which Anthropic's API takes deferred loading, the tool search
 * tool, tool use examples and programmatic tool calling (Anthropic's advanced tool use announcement).
 */
export const ADVANCED_TOOL_USE_BETA = "advanced-tool-use-";

/**
 * Whether `tools` (a tidied body's, after {@link withoutDeferredLoading}) still use something of
 * {@link ADVANCED_TOOL_USE_BETA}: a tool search tool (`tool_search_tool_…`), a tool's `input_examples`
 * or `allowed_callers`. Deferred loading itself never is left by then.
 */
export function usesAdvancedToolUse(tools: unknown): boolean {
  if (!Array.isArray(tools)) return false;
  return tools.some((t) => isObj(t) && ((typeof t.type === "string" && t.type.startsWith("tool_search_tool")) || t.input_examples !== undefined || t.allowed_callers !== undefined));
}

/** `tools` without `defer_loading` and without Claude Code's placeholder; the same array when it has neither. */
function plainTools(tools: unknown[]): unknown[] {
  if (!tools.some((t) => isObj(t) && "defer_loading" in t)) return tools;
  const out: unknown[] = [];
  for (const t of tools) {
    if (!isObj(t) || !("defer_loading" in t)) {
      out.push(t);
      continue;
    }
    if (t.name === PLACEHOLDER && t.defer_loading === true) continue;
    const { defer_loading: _, ...rest } = t;
    out.push(rest);
  }
  return out;
}

/**
 * A tool result's content with each `tool_reference` block as a text block (`all`), or only each one
 * naming a tool `declared` denies (not `all`); the same array when none is. A block naming such a tool
 * says the tool is not available, with a warning (as formats/tool-references.ts says it on the other lanes).
 */
function referencesAsText(content: unknown[], declared: (name: string) => boolean, w: Warnings, all: boolean): unknown[] {
  let out: unknown[] | undefined;
  content.forEach((c, j) => {
    let next = c;
    if (isObj(c) && c.type === "tool_reference" && typeof c.tool_name === "string") {
      const known = declared(c.tool_name);
      if (!known || all) {
        if (!known) w.add("changed_field", `A tool_reference names the tool ${JSON.stringify(c.tool_name)}, which this request does not declare; sent as text saying it is not available.`);
        const text: Json = { type: "text", text: known ? toolReferenceText(c.tool_name) : undeclaredToolReferenceText(c.tool_name) };
        if (c.cache_control !== undefined) text.cache_control = c.cache_control;
        next = text;
      }
    }
    if (next !== c) out ??= content.slice(0, j);
    out?.push(next);
  });
  return out ?? content;
}

/**
 * `out.messages` (as tidy.ts leaves them: role and content arrays) with the `tool_reference` blocks of
 * their tool results rendered by {@link referencesAsText}; `out.messages` unchanged (the same array)
 * when none is. Returns whether any was. The objects in it are not changed.
 */
function toolResultReferences(out: Json, declared: (name: string) => boolean, w: Warnings, all: boolean): boolean {
  if (!Array.isArray(out.messages)) return false;
  let changed = false;
  const messages = out.messages.map((m) => {
    if (!isObj(m) || m.role !== "user" || !Array.isArray(m.content)) return m;
    let content: unknown[] | undefined;
    m.content.forEach((b, j) => {
      const refs = isObj(b) && b.type === "tool_result" && Array.isArray(b.content) ? referencesAsText(b.content, declared, w, all) : undefined;
      const next = refs && refs !== (b as Json).content ? { ...(b as Json), content: refs } : b;
      if (next !== b) content ??= (m.content as unknown[]).slice(0, j);
      content?.push(next);
    });
    if (!content) return m;
    changed = true;
    return { ...m, content };
  });
  if (changed) out.messages = messages;
  return changed;
}

/** Whether `name` is a tool `out.tools` declares (any tool with that `name`), the names read once on the first call. */
function declaredIn(out: Json): (name: string) => boolean {
  let names: Set<unknown> | undefined;
  return (name) => (names ??= new Set(Array.isArray(out.tools) ? out.tools.map((t) => (isObj(t) ? t.name : undefined)) : [])).has(name);
}

/**
 * A tidied Messages body for Anthropic's own API (kinds `anthropic`, `claude-code`: `out`, owned by the
 * caller, whose `messages` array may be replaced) with each `tool_reference` block naming a tool the
 * request does not declare sent as text saying the tool is not available in this request, with a
 * `changed_field` warning: Anthropic answers 400 to a reference to a tool it was not given (its tool
 * search docs), as the translated lanes say it (formats/tool-references.ts). A reference to a declared
 * tool stays a block. With an `mcp_toolset` declared (Anthropic's MCP connector, whose tools the body
 * does not name), every reference stays.
 */
export function withoutUndeclaredReferences(out: Json, w: Warnings): void {
  if (Array.isArray(out.tools) && out.tools.some((t) => isObj(t) && t.type === "mcp_toolset")) return;
  toolResultReferences(out, declaredIn(out), w, false);
}

/**
 * A tidied Messages body (`out`, owned by the caller: its `tools` and `messages` arrays may be
 * replaced, the objects in them are not changed) with deferred loading undone as the module doc says,
 * and one `changed_field` warning when anything was. `messages` is read as tidy.ts leaves it (role and
 * content arrays).
 */
export function withoutDeferredLoading(out: Json, w: Warnings): void {
  let changed = false;
  // The declared tool names, read when a tool_reference is met (after the placeholder is left out).
  const declared = declaredIn(out);
  if (Array.isArray(out.tools)) {
    const tools = plainTools(out.tools);
    if (tools !== out.tools) {
      out.tools = tools;
      changed = true;
    }
  }
  if (toolResultReferences(out, declared, w, true)) changed = true;
  if (changed) {
    w.add(
      "changed_field",
      "Deferred tool loading (defer_loading, tool_reference) is Anthropic's own: defer_loading was not sent (the deferred tools declared as any other, Claude Code's DeferredToolPlaceholder left out) and any tool_reference block was sent as text naming the tool.",
    );
  }
}
