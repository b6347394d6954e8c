/**
 * Text slots of an Anthropic Messages request body (REFERENCE §1), for the pipeline stages that rewrite
 * text in place: the token savers (SPEC S-1) read and shorten tool results, redaction replaces
 * PII in every text the model reads. Pure and lenient: anything not shaped as expected is skipped.
 *
 * Where the text lives:
 * - `system`: a string, or an array of `{type:"text", text}` blocks;
 * - `messages[].content`: a string, or blocks: `text.text`; `tool_use.input` (string leaves and member names);
 *   `tool_result.content` (a string, or `text` blocks inside it), `is_error` marks an error result;
 *   `document` with a text source (`source.data`). Thinking and redacted thinking are signed and never
 *   yielded; nor are ids, names, images, cache markers.
 */
import type { NumberSlots, TextSlot, ToolResultSlot } from "../codec.ts";
import { isObj, type JsonObject as Obj } from "../json.ts";
import { stringLeafSlots } from "../string-leaves.ts";

/** A slot over `parent[key]` (an object property or an array index) holding a string. */
function slot(parent: Obj | unknown[], key: string | number): TextSlot {
  const text = (parent as Record<string | number, unknown>)[key] as string;
  return {
    text,
    set(t: string) {
      (parent as Record<string | number, unknown>)[key] = t;
    },
  };
}

function messagesOf(body: Obj): Obj[] {
  return Array.isArray(body.messages) ? (body.messages.filter(isObj) as Obj[]) : [];
}

/**
 * The text slots of every `tool_result` block in `body.messages`, in body order (SPEC S-1). A string
 * content is one slot; block content yields one slot per `text` block (images and documents are not
 * text slots). `isError` is the block's `is_error === true`.
 */
export function toolResults(body: Obj): ToolResultSlot[] {
  const out: ToolResultSlot[] = [];
  let result = 0;
  for (const m of messagesOf(body)) {
    if (!Array.isArray(m.content)) continue;
    for (const b of m.content) {
      if (!isObj(b) || b.type !== "tool_result") continue;
      const isError = b.is_error === true;
      const n = result++;
      if (typeof b.content === "string") out.push({ ...slot(b, "content"), result: n, isError });
      else if (Array.isArray(b.content)) {
        for (const c of b.content) if (isObj(c) && c.type === "text" && typeof c.text === "string") out.push({ ...slot(c, "text"), result: n, isError });
      }
    }
  }
  return out;
}

function blockText(b: Obj, out: TextSlot[], numbers: NumberSlots | undefined): void {
  switch (b.type) {
    case "text":
      if (typeof b.text === "string") out.push(slot(b, "text"));
      break;
    case "tool_use":
    case "server_tool_use":
      stringLeafSlots(b.input, out, numbers);
      break;
    case "tool_result":
      if (typeof b.content === "string") out.push(slot(b, "content"));
      else if (Array.isArray(b.content)) for (const c of b.content) if (isObj(c)) blockText(c, out, numbers);
      break;
    case "document":
      if (isObj(b.source) && b.source.type === "text" && typeof b.source.data === "string") out.push(slot(b.source, "data"));
      break;
  }
}

/**
 * Every text slot the model reads (SPEC R-1), in body order: `system`, then each message's text,
 * tool-call inputs and tool results. Not thinking (signed), ids, names, tool schemas, media.
 * `numbers`: see `FormatCodec.promptText`.
 */
export function promptText(body: Obj, numbers?: NumberSlots): TextSlot[] {
  const out: TextSlot[] = [];
  if (typeof body.system === "string") out.push(slot(body, "system"));
  else if (Array.isArray(body.system)) for (const b of body.system) if (isObj(b) && b.type === "text" && typeof b.text === "string") out.push(slot(b, "text"));
  for (const m of messagesOf(body)) {
    if (typeof m.content === "string") out.push(slot(m, "content"));
    else if (Array.isArray(m.content)) for (const b of m.content) if (isObj(b)) blockText(b, out, numbers);
  }
  return out;
}
