/**
 * Text slots of a Chat Completions request body (REFERENCE §2), for the pipeline stages that rewrite
 * text in place: the token savers (SPEC S-1) read and shorten tool results, redaction replaces
 * PII in every text the model reads. Pure and lenient: anything not shaped as expected is skipped.
 *
 * Where the text lives: `messages[].content` (a string, or parts whose `type:"text"` parts carry
 * `text`); an assistant's `tool_calls[].function.arguments` (a JSON string: a `json` slot, whose string values are the text), a
 * `custom` tool call's raw `tool_calls[].custom.input` (plain text) and the legacy `function_call.arguments`; tool results are `role:"tool"` (legacy `"function"`) messages.
 * Chat has no error flag on a tool message: formats/openai-chat writes an error result as
 * `Error: <text>`, so a tool message starting with `Error:` counts as an error (and is left alone).
 */
import type { TextSlot, ToolResultSlot } from "../codec.ts";
import { isObj, type JsonObject as Obj } from "../json.ts";

function slot(parent: Obj, key: string): TextSlot {
  const text = parent[key] as string;
  return {
    text,
    set(t: string) {
      parent[key] = t;
    },
  };
}

/** A slot over JSON text (tool-call `arguments`): {@link TextSlot.json}. */
function jsonSlot(parent: Obj, key: string): TextSlot {
  return { ...slot(parent, key), json: true };
}

function messagesOf(body: Obj): Obj[] {
  return Array.isArray(body.messages) ? (body.messages.filter(isObj) as Obj[]) : [];
}

function contentSlots(m: Obj, out: TextSlot[]): void {
  if (typeof m.content === "string") out.push(slot(m, "content"));
  else if (Array.isArray(m.content)) for (const p of m.content) if (isObj(p) && p.type === "text" && typeof p.text === "string") out.push(slot(p, "text"));
}

/**
 * The text slots of every tool message (`role` `tool` or `function`), in body order (SPEC S-1). One
 * slot for a string content, one per text part otherwise. `isError` when the (first) text starts with
 * `Error:`.
 */
export function toolResults(body: Obj): ToolResultSlot[] {
  const out: ToolResultSlot[] = [];
  let result = 0;
  for (const m of messagesOf(body)) {
    if (m.role !== "tool" && m.role !== "function") continue;
    const slots: TextSlot[] = [];
    contentSlots(m, slots);
    const n = result++;
    const isError = slots.length > 0 && slots[0].text.startsWith("Error:");
    for (const s of slots) out.push({ ...s, result: n, isError });
  }
  return out;
}

/**
 * Every text slot the model reads (SPEC R-1), in body order: message contents (system, developer,
 * user, assistant, tool) and assistant tool-call arguments and custom-call inputs. Not names, ids, tools, media.
 */
export function promptText(body: Obj): TextSlot[] {
  const out: TextSlot[] = [];
  for (const m of messagesOf(body)) {
    contentSlots(m, out);
    if (Array.isArray(m.tool_calls)) {
      for (const tc of m.tool_calls) {
        if (isObj(tc) && isObj(tc.function) && typeof tc.function.arguments === "string") out.push(jsonSlot(tc.function, "arguments"));
        else if (isObj(tc) && isObj(tc.custom) && typeof tc.custom.input === "string") out.push(slot(tc.custom, "input")); // a custom tool's raw input
      }
    }
    if (isObj(m.function_call) && typeof m.function_call.arguments === "string") out.push(jsonSlot(m.function_call, "arguments"));
  }
  return out;
}
