/**
 * Anthropic Messages client body → the same format for a provider, without a hub round trip
 * (SPEC F-3): {@link tidyRequest}.
 */
import type { BuildTarget, BuiltRequest } from "../codec.ts";
import { invalidRequest, type ProviderFamily, Warnings } from "../hub.ts";
import { isObj, leftover, type JsonObject as Json } from "../json.ts";
import { mergeTurns, type OutMessage } from "./build.ts";
import { withClaudeCodeIdentity } from "./claude-code.ts";
import { DEFAULT_MAX_TOKENS, readOpaque, sanitizeToolId } from "./mapping.ts";
import { checkedEnvelope } from "./parse.ts";
import { envelopeAccepted } from "./request-shape.ts";
import { ADVANCED_TOOL_USE_BETA, usesAdvancedToolUse, withoutDeferredLoading, withoutUndeclaredReferences } from "./deferred-tools.ts";

/** {@link tidyRequest}'s `droppedBetas` for an `anthropic-compatible` body that uses nothing of the advanced tool use beta. */
const DROPPED_BETAS: readonly string[] = Object.freeze([ADVANCED_TOOL_USE_BETA]);

/**
 * Blocks of one turn (or of `system`) as sent: empty text removed, thinking kept only when signed by
 * `family`, tool ids sanitised. `strict` is called before anything is left out for its type (content
 * that is neither a string nor an array, a block that is not an object): it throws the schema's 400 for
 * a malformed body. A text block whose `text` is not a string is refused naming `path.N.text`, as parse.ts
 * refuses it. `path`: where `content` is in the body (`messages.3.content`, `system`).
 * @throws FormatError (400 `invalid_request`) for such content.
 */

function tidyBlocks(content: unknown, path: string, role: string, family: ProviderFamily, w: Warnings, state: { dropped: boolean }, strict: () => void): Json[] {
  if (typeof content === "string") return content.length > 0 ? [{ type: "text", text: content }] : [];
  if (!Array.isArray(content)) {
    strict();
    return [];
  }
  const out: Json[] = [];
  for (let j = 0; j < content.length; j++) {
    const raw = content[j];
    if (!isObj(raw)) {
      strict();
      continue;
    }
    const b = raw;
    switch (b.type) {
      case "text":
        if (typeof b.text !== "string") throw invalidRequest(`${path}.${j}.text: expected a string`, `${path}.${j}.text`);
        if (b.text.length === 0) {
          w.add("dropped_empty_text", "Empty text blocks were removed");
          continue;
        }
        out.push(b);
        continue;
      case "thinking":
      case "redacted_thinking": {
        if (role !== "assistant") continue;
        const value = b.type === "thinking" ? b.signature : b.data;
        const o = typeof value === "string" && value.length > 0 ? readOpaque(value) : undefined;
        if (!o || o.family !== family) {
          state.dropped = true;
          w.add("dropped_thinking", "Thinking not signed by this provider cannot be replayed to it and was dropped");
          continue;
        }
        out.push(b.type === "thinking" ? { ...b, signature: o.value } : { ...b, data: o.value });
        continue;
      }
      case "tool_use":
        out.push(typeof b.id === "string" ? { ...b, id: sanitizeToolId(b.id) } : b);
        continue;
      case "tool_result": {
        const t: Json = typeof b.tool_use_id === "string" ? { ...b, tool_use_id: sanitizeToolId(b.tool_use_id) } : { ...b };
        if (t.content === "" || (Array.isArray(t.content) && t.content.length === 0)) delete t.content;
        else if (Array.isArray(t.content)) t.content = t.content.filter((c) => !(isObj(c) && c.type === "text" && c.text === ""));
        out.push(t);
        continue;
      }
      default:
        out.push(b);
    }
  }
  return out;
}

/**
 * Tidies an Anthropic Messages client body for an `anthropic-compatible` third-party server without a
 * hub round trip (SPEC F-3). Also safe for `anthropic` / `claude-code` targets (a native pair whose body
 * carries tagged foreign signatures, `"sy|` in the raw text, must not be sent as is): there the
 * in-messages `role: "system"` turns stay in place. The input is not mutated. Changes, each reported
 * as a {@link Warning} (one per distinct message):
 * - null-valued top-level fields and null tool fields removed (REFERENCE §5.6, §7.5);
 * - for `anthropic-compatible`, `role: "system"` turns hoisted into the top-level `system`, in order
 *   (judgement: third-party servers implement the documented user/assistant roles only; §5.4);
 * - empty text blocks, empty turns and an empty `system` removed (REFERENCE §1.1, case B34);
 * - thinking / redacted thinking kept only when signed by this provider (`target.family`, a tagged
 *   `sy|provider:<id>|…` value is untagged); budgeted thinking is removed when the last tool turn lost
 *   its thinking that way;
 * - consecutive same-role turns merged, tool results first in a user turn (REFERENCE §5.7); tool ids
 *   sanitised;
 * - `max_tokens` added when missing (`target.defaultMaxOutputTokens`, else {@link DEFAULT_MAX_TOKENS});
 *   `model` = target model; `stream` = `target.stream`;
 * - kind `claude-code`: Claude Code's identity block first in `system` when missing
 *   ({@link withClaudeCodeIdentity});
 * - for `anthropic-compatible`, Claude Code's deferred tools declared as any other: no `defer_loading`,
 *   no `DeferredToolPlaceholder`, a `tool_reference` in a tool result sent as text (deferred-tools.ts);
 *   and, when the body then uses nothing else of the advanced tool use beta ({@link usesAdvancedToolUse}),
 *   `droppedBetas` names it: the client's `anthropic-beta` goes without it (src/providers/index.ts);
 * - for `anthropic` and `claude-code`, a `tool_reference` naming a tool the request does not declare sent
 *   as text saying the tool is not available (deferred-tools.ts {@link withoutUndeclaredReferences}).
 * `cache_control` markers are kept: Anthropic-compatible servers accept or ignore them.
 *
 * The body is first checked against the request schema (request-shape.ts {@link envelopeAccepted} by
 * hand, else parse.ts {@link checkedEnvelope}): a message that is not an object, content of the wrong
 * type, a block that is not an object, a `system`, `max_tokens`, `temperature`, `stop_sequences`,
 * `tool_choice`, `thinking` or tool of the wrong type is the same 400 naming the field that a translated
 * target gives, never left out nor passed on (a non-string `text` and a message with another role, as
 * parse.ts refuses them, are refused naming them).
 * @throws FormatError (400 `invalid_request`) for such a body.
 */
export function tidyRequest(body: Record<string, unknown>, target: BuildTarget): BuiltRequest {
  const w = new Warnings();
  const out: Json = {};
  for (const k in body) {
    if (body[k] === null || body[k] === undefined) {
      w.add("dropped_null_field", "Null-valued optional fields were removed");
      continue;
    }
    out[k] = body[k];
  }
  out.model = target.model;
  out.stream = target.stream;
  // A wrong-typed field is the 400 a translated target gives (the schema names it); checked by hand
  // first (request-shape.ts: no copy of the body), the schema only when that is not sure.
  if (!envelopeAccepted(body)) checkedEnvelope(body);
  const strict = () => void checkedEnvelope(body);
  if (out.max_tokens !== undefined && typeof out.max_tokens !== "number") strict();
  if (typeof out.max_tokens !== "number") out.max_tokens = target.defaultMaxOutputTokens ?? DEFAULT_MAX_TOKENS;

  let system: Json[] = [];
  if (typeof out.system === "string") {
    if (out.system.length > 0) system.push({ type: "text", text: out.system });
  } else if (Array.isArray(out.system)) {
    system = tidyBlocks(out.system, "system", "system", target.family, w, { dropped: false }, strict);
  } else if (out.system !== undefined) strict();
  if (target.kind === "claude-code") withClaudeCodeIdentity(system);
  const hadStringSystem = typeof out.system === "string" && out.system.length > 0;

  const turns: OutMessage[] = [];
  if (!Array.isArray(out.messages)) strict();
  const list = Array.isArray(out.messages) ? out.messages : [];
  for (let i = 0; i < list.length; i++) {
    const raw = list[i];
    if (!isObj(raw)) {
      strict();
      continue;
    }
    const role = raw.role;
    const state = { dropped: false };
    if (role === "system" || role === "developer") {
      const blocks = tidyBlocks(raw.content, `messages.${i}.content`, "system", target.family, w, state, strict).filter((b) => b.type === "text");
      if (role === "system" && target.kind !== "anthropic-compatible") {
        // Anthropic's own API accepts Claude Code's in-messages system turn: keep it in place.
        if (blocks.length > 0) turns.push({ role: "system", content: blocks, fields: leftover(raw, new Set(["role", "content"])) });
        continue;
      }
      if (blocks.length > 0) {
        system.push(...blocks);
        w.add("hoisted_system_message", "A system message inside messages was moved into the top-level system prompt");
      }
      continue;
    }
    if (role !== "user" && role !== "assistant") {
      // as parse.ts refuses it for a translated target (the Messages API knows no other role)
      strict();
      throw invalidRequest(`messages.${i}.role: unknown role ${JSON.stringify(role)}`, `messages.${i}.role`);
    }
    const fields = leftover(raw, new Set(["role", "content"]));
    const content = tidyBlocks(raw.content, `messages.${i}.content`, role, target.family, w, state, strict);
    if (content.length === 0) w.add("dropped_empty_message", "Messages with no content were removed");
    turns.push({ role, content, fields, droppedThinking: state.dropped });
  }
  const merged = mergeTurns(turns);
  out.messages = merged.map((m) => {
    const o: Json = { role: m.role, content: m.content };
    if (m.fields) for (const k in m.fields) if (!(k in o)) o[k] = m.fields[k];
    return o;
  });
  if (system.length === 0) delete out.system;
  else if (hadStringSystem && system.length === 1 && !system[0].cache_control) out.system = system[0].text;
  else out.system = system;

  if (Array.isArray(out.tools)) {
    out.tools = out.tools.map((t) => {
      if (!isObj(t)) return t;
      let copy: Json | undefined;
      for (const k in t) {
        if (t[k] === null) {
          copy ??= { ...t };
          delete copy[k];
        }
      }
      if (copy) w.add("dropped_null_field", "Null-valued optional fields were removed");
      return copy ?? t;
    });
  }

  // Third-party servers do not all take Anthropic's deferred tool loading (deferred-tools.ts), nor then
  // need the beta that enables it, when the body uses nothing else of it.
  let droppedBetas: readonly string[] | undefined;
  if (target.kind === "anthropic-compatible") {
    withoutDeferredLoading(out, w);
    if (!usesAdvancedToolUse(out.tools)) droppedBetas = DROPPED_BETAS;
  } else {
    // Anthropic's API refuses a tool_reference to a tool the request does not declare.
    withoutUndeclaredReferences(out, w);
  }

  const th = out.thinking;
  if (isObj(th) && th.type === "enabled") {
    // Only thinking dropped here makes the turn unfit: the history is the client's own otherwise.
    let fit = true;
    for (let i = merged.length - 1; i >= 0; i--) {
      const m = merged[i];
      if (m.role !== "assistant" || !m.content.some((b) => b.type === "tool_use")) continue;
      const first = m.content[0]?.type;
      fit = first === "thinking" || first === "redacted_thinking" || !m.droppedThinking;
      break;
    }
    if (!fit) {
      delete out.thinking;
      w.add("dropped_thinking_config", "The last tool-use turn has no thinking signed by this provider; thinking was disabled");
    }
  }
  return droppedBetas ? { body: out, warnings: w.list, droppedBetas } : { body: out, warnings: w.list };
}