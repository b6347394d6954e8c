/**
 * Chat client body → the body for an `openai-compatible` provider without a hub round trip (SPEC
 * F-3): cache markers, empty messages, tool-result order, null optional fields: {@link tidyRequest}.
 */
import type { BuildTarget, BuiltRequest } from "../codec.ts";
import { sendableStops, Warnings } from "../hub.ts";
import { isObj, type JsonObject as Json } from "../json.ts";
import { checkedRequest } from "./parse.ts";
import { chatBodyAccepted } from "./request-shape.ts";
import { untaggedDetails } from "./reasoning-details.ts";

/** Whether a message's content carries anything (a non-empty string, or a non-empty-text / non-text part). */
function hasContent(content: unknown): boolean {
  if (typeof content === "string") return content.length > 0;
  if (!Array.isArray(content)) return false;
  return content.some((p) => isObj(p) && (p.type !== "text" || (typeof p.text === "string" && p.text.length > 0)));
}

/**
 * Chat client body → body for a same-format third-party provider (SPEC F-3; REFERENCE §5.12, §5.7),
 * without a hub round trip. The input is not modified.
 *
 * - `model` → `target.model`.
 * - `cache_control` removed everywhere (top level, messages, content parts, tools, `tools[].function`):
 *   strict OpenAI-compatible servers 400 on it (B33, new-api#5982).
 * - null-valued optional fields omitted (top level, messages, tool definitions: a null `description`
 *   is removed, B35); an assistant `content: null` next to `tool_calls` is omitted; `tool_calls: []`
 *   is omitted; `reasoning_details` entries whose signature or data this gateway tagged
 *   (`sy|<family>|…`, reasoning-details.ts: another provider's state) are left out.
 * - an assistant message with only a `refusal` gets it as its content; empty messages dropped
 *   (system/developer/user/assistant with no content and no tool calls); tool
 *   messages are kept (they pair with a call) with `content: ""` when they had none.
 * - tool messages are moved directly after the assistant message that made the call, in call order
 *   (REFERENCE §5.7); orphans stay where they are.
 * - `developer` → `system` for `openai-compatible` (judgement: many servers' chat templates know only
 *   `system`).
 * - an empty `stop` string (alone or in the list) is not sent (hub.ts `sendableStops`).
 * - token limit under the kind's field (`openai`: `max_completion_tokens`; others: `max_tokens`).
 * - streaming: `stream_options.include_usage: true` forced (usage is read from the stream; the encoder
 *   withholds it from a client that did not ask).
 *
 * Warnings: `dropped_empty_message`, `reordered_tool_results`, `dropped_cache_control` (a non-null
 * `cache_control` was removed anywhere, as the translated Chat and Responses lanes name it; found by the
 * loops that remove it, so a body without markers costs one boolean).
 *
 * The body is first checked against the request schema (request-shape.ts {@link chatBodyAccepted} by
 * hand, else parse.ts {@link checkedRequest}): a wrong-typed field (`content: {…}`, `content: [1]`,
 * `text: 5`, `role: 5`, `temperature: "hot"`, a number in `stop`) is the 400 naming the field that a
 * translated target gives, never a message silently left out nor a field passed on to the provider.
 * Unknown fields and content part types are passed on (a third-party server may know them).
 * @throws FormatError (400 `invalid_request`) for such a body.
 */
export function tidyRequest(body: Record<string, unknown>, target: BuildTarget): BuiltRequest {
  // A wrong-typed field is the 400 a translated target gives (the schema names it); checked by hand
  // first (request-shape.ts: no copy of the body), the schema only when that is not sure.
  if (!chatBodyAccepted(body)) checkedRequest(body);
  const w = new Warnings();
  const out: Json = {};
  let cached = false; // a non-null cache_control was removed
  for (const [k, val] of Object.entries(body)) {
    if (val === null || val === undefined) continue;
    if (k === "cache_control") {
      cached = true;
      continue;
    }
    out[k] = val;
  }
  out.model = target.model;
  const compat = target.kind !== "openai";

  if (Array.isArray(body.messages)) {
    let dropped = 0;
    const msgs: Json[] = [];
    for (const m of body.messages) {
      if (!isObj(m)) continue; // not after the check above (the schema takes only objects with a role)
      const msg: Json = {};
      for (const [k, val] of Object.entries(m)) {
        if (val === null || val === undefined) continue;
        if (k === "cache_control") {
          cached = true;
          continue;
        }
        msg[k] = val;
      }
      if (Array.isArray(msg.content)) {
        const kept: unknown[] = [];
        for (const p of msg.content) {
          if (!isObj(p) || !("cache_control" in p)) {
            kept.push(p);
            continue;
          }
          const { cache_control: cc, ...rest } = p;
          if (cc !== null && cc !== undefined) cached = true;
          kept.push(rest);
        }
        msg.content = kept;
      }
      if (Array.isArray(msg.tool_calls) && msg.tool_calls.length === 0) delete msg.tool_calls;
      if (Array.isArray(msg.reasoning_details)) {
        // Another provider's signed reasoning this gateway handed out (reasoning-details.ts) stays here.
        const kept = untaggedDetails(msg.reasoning_details);
        if (kept) msg.reasoning_details = kept;
        else delete msg.reasoning_details;
      }
      if (msg.role === "assistant" && typeof msg.refusal === "string" && msg.refusal.length > 0 && !hasContent(msg.content)) {
        // A refused reply appended back as the SDK returned it (`content: null, refusal: "…"`): its text
        // is the turn, sent as content (third-party servers may not read `refusal`), never dropped as empty.
        msg.content = msg.refusal;
        delete msg.refusal;
      }
      if (msg.role === "tool") {
        if (msg.content === undefined) msg.content = "";
      } else if (!hasContent(msg.content) && !Array.isArray(msg.tool_calls) && !isObj(msg.function_call)) {
        // really empty: content of a type the schema refuses was the client's 400 above
        dropped++;
        continue;
      } else if (msg.role === "assistant" && !hasContent(msg.content) && msg.content !== undefined) {
        delete msg.content; // "" next to tool calls
      }
      if (compat && msg.role === "developer") msg.role = "system";
      msgs.push(msg);
    }
    if (dropped > 0) w.add("dropped_empty_message", `${dropped} empty message(s) were not sent.`);

    // Tool results directly after their call, in call order.
    const callIds = new Set<string>();
    for (const m of msgs) {
      if (m.role === "assistant" && Array.isArray(m.tool_calls)) {
        for (const c of m.tool_calls) if (isObj(c) && typeof c.id === "string") callIds.add(c.id);
      }
    }
    const results = new Map<string, Json[]>();
    for (const m of msgs) {
      if (m.role === "tool" && typeof m.tool_call_id === "string" && callIds.has(m.tool_call_id)) {
        const list = results.get(m.tool_call_id);
        if (list) list.push(m);
        else results.set(m.tool_call_id, [m]);
      }
    }
    const ordered: Json[] = [];
    for (const m of msgs) {
      if (m.role === "tool" && typeof m.tool_call_id === "string" && callIds.has(m.tool_call_id)) continue;
      ordered.push(m);
      if (m.role === "assistant" && Array.isArray(m.tool_calls)) {
        for (const c of m.tool_calls) {
          if (!isObj(c) || typeof c.id !== "string") continue;
          const list = results.get(c.id);
          if (list) {
            ordered.push(...list);
            results.delete(c.id);
          }
        }
      }
    }
    if (ordered.some((m, i) => m !== msgs[i])) {
      w.add("reordered_tool_results", "Tool results were moved directly after the calls they answer.");
    }
    out.messages = ordered;
  }

  if (Array.isArray(body.tools)) {
    out.tools = body.tools.map((t) => {
      if (!isObj(t)) return t;
      const tool: Json = {};
      for (const [k, val] of Object.entries(t)) {
        if (val === null || val === undefined) continue;
        if (k === "cache_control") {
          cached = true;
          continue;
        }
        tool[k] = val;
      }
      if (isObj(tool.function)) {
        const fn: Json = {};
        for (const [k, val] of Object.entries(tool.function)) {
          if (val === null || val === undefined) continue;
          if (k === "cache_control") {
            cached = true;
            continue;
          }
          fn[k] = val;
        }
        tool.function = fn;
      }
      return tool;
    });
  }

  if (cached) w.add("dropped_cache_control", "Chat Completions has no per-block prompt-cache markers (OpenAI-compatible servers may refuse them); cache_control was not sent.");

  if (out.stop === "" || Array.isArray(out.stop)) {
    const stops = sendableStops(typeof out.stop === "string" ? [out.stop] : out.stop.filter((x): x is string => typeof x === "string"), w);
    if (!stops) delete out.stop;
    else if (Array.isArray(out.stop) && stops.length !== out.stop.length) out.stop = stops;
  }

  const limit = out.max_completion_tokens ?? out.max_tokens;
  delete out.max_completion_tokens;
  delete out.max_tokens;
  if (limit !== undefined) out[compat ? "max_tokens" : "max_completion_tokens"] = limit;

  if (out.stream === true) {
    const so = isObj(out.stream_options) ? out.stream_options : {};
    const opts: Json = {};
    for (const [k, val] of Object.entries(so)) if (val !== null && val !== undefined) opts[k] = val;
    opts.include_usage = true;
    out.stream_options = opts;
  } else {
    delete out.stream_options;
  }
  return { body: out, warnings: w.list };
}
