/**
 * Two facts of a hub request that builders of several formats read to say what they leave out (SPEC
 * F-2: dropped explicitly, never silently): whether the tool choice forces a call, and whether the
 * request carries prompt-cache markers. Pure.
 */
import type { HubPart, HubRequest, ToolChoice } from "./hub.ts";

/**
 * Whether `tc` makes the model call a tool: `required`, a named `tool`, or an `allowed` list of mode
 * `required`. Such a choice sent without tools is an upstream 400 (OpenAI: tool_choice needs tools;
 * Anthropic: "tool_choice may only be specified while providing tools"), so builders drop it with a
 * `dropped_field` warning; `auto` and `none` change nothing without tools.
 */
export function forcesTool(tc: ToolChoice | undefined): boolean {
  return tc !== undefined && (tc.type === "required" || tc.type === "tool" || (tc.type === "allowed" && tc.mode === "required"));
}

function marked(p: HubPart): boolean {
  if ("cacheControl" in p && p.cacheControl) return true;
  return p.type === "tool_result" && p.content.some((c) => "cacheControl" in c && c.cacheControl !== undefined);
}

/**
 * Whether `req` holds an Anthropic-style `cache_control` marker: on a system block, a message part, a
 * part of a tool result, or a tool. Builders of formats without per-block markers (Chat Completions,
 * Responses, Gemini) leave them out with a `dropped_cache_control` warning.
 */
export function holdsCacheMarkers(req: HubRequest): boolean {
  if (req.system.some(marked)) return true;
  if (req.messages.some((m) => m.content.some(marked))) return true;
  return req.tools.some((t) => "cacheControl" in t && t.cacheControl !== undefined);
}
