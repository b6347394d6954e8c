/**
 * OpenAI Responses client body → the same format for a provider, without a hub round trip (SPEC F-3,
 * P-2): {@link tidyRequest}.
 */
import { Warnings } from "../hub.ts";
import type { BuildTarget, BuiltRequest } from "../codec.ts";
import { applyCodexFixes } from "./codex.ts";
import { ENCRYPTED_CONTENT_TAG, isOpenAiItemId, namespacesOnce, readEncryptedContent, sanitizeCallId } from "./common.ts";
import { issuerOf } from "../call-signatures.ts";

/**
 * Tidies a Responses body for a Responses provider WITHOUT a hub round trip (codec `tidyRequest`;
 * used for same-format third parties and for a native Responses → `codex` call, SPEC F-3, P-2, B40):
 * - `model` = `target.model`, `stream` = `target.stream`;
 * - kind `codex`: {@link applyCodexFixes} (which also forces `store: false`);
 * - with `store: false` (sent or forced): reasoning items without `encrypted_content` are dropped (an
 *   id-only item is a 404 "Items are not persisted when store is set to false", REFERENCE §3.1), and
 *   `reasoning.encrypted_content` is requested;
 * - item `id`s without one of the prefixes in `OPENAI_ITEM_ID_PREFIXES` (common.ts) are removed from
 *   their items (OpenAI validates the prefix: "Expected an ID that begins with 'msg'"); the ids the
 *   Codex CLI sends (`msg_`, `fc_`, and `fco_` for outputs) are kept;
 * - `call_id`s over 64 characters are mapped deterministically (call and output alike, §5.3);
 * - a reasoning item whose `encrypted_content` is tagged `sy|<family>|…` (common.ts: state another
 *   provider issued, handed to the client by switchyard) is untagged when `target.family` issued it
 *   and dropped otherwise (SPEC F-8: the upstream could not decrypt it and would refuse the request).
 * - a Codex namespace declared twice is declared once, each member once ({@link namespacesOnce}, a
 *   `dropped_tool` warning per member left out), as Chat, Anthropic and Gemini get it;
 * Everything else is passed through as the client sent it. The input object is not mutated.
 */
export function tidyRequest(body: Record<string, unknown>, target: BuildTarget): BuiltRequest {
  const w = new Warnings();
  const out: Record<string, unknown> = { ...body, model: target.model, stream: target.stream };
  if (target.kind === "codex") applyCodexFixes(out, target, w);
  // a namespace declared twice: each member once, as Chat, Anthropic and Gemini get them
  const tools = Array.isArray(out.tools) ? namespacesOnce(out.tools as unknown[], (m) => w.add("dropped_tool", m)) : undefined;
  if (tools) out.tools = tools;
  const storeFalse = out.store === false;
  if (storeFalse) {
    const include = Array.isArray(out.include) ? (out.include as unknown[]) : [];
    if (!include.includes("reasoning.encrypted_content")) out.include = [...include, "reasoning.encrypted_content"];
  }
  if (Array.isArray(out.input)) {
    const items: unknown[] = [];
    for (const raw of out.input as unknown[]) {
      if (!raw || typeof raw !== "object") {
        items.push(raw);
        continue;
      }
      const item = raw as Record<string, unknown>;
      if (item.type === "reasoning" && storeFalse && !(typeof item.encrypted_content === "string" && item.encrypted_content)) {
        w.add("dropped_reasoning", "Reasoning items without encrypted_content cannot be replayed with store:false; they were dropped.");
        continue;
      }
      let next = item;
      if (item.type === "reasoning" && typeof item.encrypted_content === "string" && item.encrypted_content.startsWith(ENCRYPTED_CONTENT_TAG)) {
        const state = readEncryptedContent(item.encrypted_content);
        if (state.family !== target.family) {
          w.add("stripped_signature", `Reasoning state issued by '${issuerOf(state)}' cannot be sent to a '${target.family}' upstream; it was dropped.`);
          continue;
        }
        next = { ...item, encrypted_content: state.value };
      }
      if (typeof next.id === "string" && !isOpenAiItemId(next.id)) {
        const { id: _id, ...rest } = next;
        next = rest;
      }
      if (typeof next.call_id === "string" && next.call_id.length > 64) next = { ...next, call_id: sanitizeCallId(next.call_id) };
      items.push(next);
    }
    out.input = items;
  }
  return { body: out, warnings: w.list };
}
