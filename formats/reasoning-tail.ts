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
 *   with a `dropped_thinking` warning; the model answers the user turn before it afresh.
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
  const list = out ?? messages;
  const last = list[list.length - 1];
  if (last?.role !== "assistant" || last.content.length === 0 || !last.content.every(isReasoning)) return list;
  w.add(
    "dropped_thinking",
    `The conversation ended in an assistant turn holding only reasoning (a client re-sending the reasoning of a reply that broke off); it was not sent, ${WHY[target]}; the request ends at the turn before it.`,
  );
  return list.slice(0, -1);
}
