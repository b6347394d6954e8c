/**
 * Reasoning a client re-sent after a cut reply, for the builders of a translated request (Anthropic,
 * Gemini, Chat and Responses targets). Pure.
 *
 * Codex keeps the reasoning item of a reply that broke off before its answer and sends it again when
 * it retries, so the next request ends in that reasoning (`[user, reasoning]`), and each further cut
 * reply adds one more copy (seen with the real Codex 0.171.0 over the WebSocket: 11 identical items).
 * Built as it is, that is an assistant turn holding only reasoning at the end of the conversation:
 * Anthropic takes a last assistant turn as a prefill to continue from (Messages API, prefilling the
 * response), Gemini as a model turn to continue, OpenAI's Responses API refuses a reasoning item with
 * no item after it (a 400 saying the reasoning item "was provided without its required following item"),
 * and a Chat Completions assistant message carries reasoning (`reasoning_content`) only beside an answer
 * or a tool call (the Chat build sends no assistant message with neither: before 2026-12-07 such a turn
 * was left out there with no `dropped_thinking` warning). So:
 * - identical reasoning parts in a row in one assistant turn (same text, same signature; the Responses
 *   item id aside) are sent once;
 * - a last assistant turn that holds nothing but reasoning (thinking, redacted thinking) is not sent,
 *   with a `dropped_thinking` warning; the model answers the user turn before it afresh;
 * - for Anthropic and Responses targets, such a turn inside the conversation too (Codex's retry once
 *   the user typed again after a cut reply: `[user q1, reasoning, user q2]`): Anthropic's
 *   extended-thinking guide lets a client leave out the thinking of earlier assistant turns, but
 *   documents no assistant turn of thinking alone, and OpenAI's Responses API refuses a reasoning item
 *   whose next item is not the output it came with (the same 400 as at the end), so it is left out,
 *   with a `dropped_thinking` warning; for Anthropic the user turns around it go as one (the build
 *   merges them), for Responses they go as two user messages. The Chat and Gemini builds leave such a
 *   turn out already (no message or content is left of it).
 * Only for a request from another format than the target's: a client of the target's own format meant
 * what it sent.
 */
import type { HubMessage, HubPart, Warnings } from "./hub.ts";

/** The build a reasoning tail is left out for: names the provider and why, in the warning. */
export type TailTarget = "anthropic" | "gemini" | "openai-chat" | "openai-responses";

/** Why the tail is not sent, per target (module doc): the end of the `dropped_thinking` message. */
const WHY: Record<TailTarget, string> = {
  anthropic: "as Anthropic would take it as a prefill and continue it instead of answering",
  gemini: "as Gemini would take it as a model turn to continue instead of answering",
  "openai-chat": "as a Chat Completions assistant message carries reasoning (reasoning_content) only beside an answer or a tool call",
  "openai-responses": "as the Responses API refuses a reasoning item with no item after it",
};

function sameReasoning(a: HubPart, b: HubPart): boolean {
  if (a.type === "thinking" && b.type === "thinking") {
    return a.text === b.text && a.signature?.family === b.signature?.family && a.signature?.value === b.signature?.value;
  }
  return a.type === "redacted_thinking" && b.type === "redacted_thinking" && a.data.family === b.data.family && a.data.value === b.data.value;
}

const isReasoning = (p: HubPart) => p.type === "thinking" || p.type === "redacted_thinking";

/**
 * `messages` with repeated reasoning sent once and a reasoning-only last assistant turn left out (module
 * doc); `target` is the build, whose provider and reason the warning names. The array and its turns are not
 * changed (a new array, new turns where something was left out); returned as it is when nothing is.
 */
export function withoutReasoningTail(messages: HubMessage[], w: Warnings, target: TailTarget): HubMessage[] {
  let out: HubMessage[] | undefined;
  messages.forEach((m, i) => {
    if (m.role !== "assistant") return void out?.push(m);
    let parts: HubPart[] | undefined;
    m.content.forEach((p, j) => {
      if (j > 0 && isReasoning(p) && sameReasoning(m.content[j - 1]!, p)) parts ??= m.content.slice(0, j);
      else parts?.push(p);
    });
    if (parts && !out) out = messages.slice(0, i);
    out?.push(parts ? { ...m, content: parts } : m);
  });
  let list = out ?? messages;
  if (target === "anthropic" || target === "openai-responses") list = withoutInnerReasoningTurns(list, w, target);
  const last = list[list.length - 1];
  if (last?.role !== "assistant" || last.content.length === 0 || !last.content.every(isReasoning)) return list;
  w.add(
    "dropped_thinking",
    `The conversation ended in an assistant turn holding only reasoning (a client re-sending the reasoning of a reply that broke off); it was not sent, ${WHY[target]}; the request ends at the turn before it.`,
  );
  return list.slice(0, -1);
}

/** Why a reasoning-only turn inside the conversation is not sent, per target that leaves it out (module doc). */
const INNER_WHY: Record<"anthropic" | "openai-responses", string> = {
  anthropic: "as Anthropic documents no assistant turn of thinking alone",
  "openai-responses": "as the Responses API refuses a reasoning item not followed by its output",
};

/**
 * `list` without its assistant turns of reasoning only that have a turn after them (module doc, for
 * Anthropic and Responses targets), with one `dropped_thinking` warning naming how many and why for
 * `target`; `list` itself when there is none.
 */
function withoutInnerReasoningTurns(list: HubMessage[], w: Warnings, target: "anthropic" | "openai-responses"): HubMessage[] {
  const inner = (m: HubMessage, i: number) => i < list.length - 1 && m.role === "assistant" && m.content.length > 0 && m.content.every(isReasoning);
  const kept = list.filter((m, i) => !inner(m, i));
  if (kept.length === list.length) return list;
  const n = list.length - kept.length;
  w.add(
    "dropped_thinking",
    `${n === 1 ? "An assistant turn" : `${n} assistant turns`} inside the conversation held only reasoning (a client re-sending the reasoning of a reply that broke off); not sent, ${INNER_WHY[target]}; the turns around it are sent without it.`,
  );
  return kept;
}
