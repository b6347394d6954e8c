/**
 * Tool calls and results that lost their other half (REFERENCE §5.7 "Orphans"): apps trim old turns to
 * fit the context (the first kept message can be a result whose call was cut) and a user may abandon a
 * call (the next user turn has no result for it). OpenAI Chat takes both; Anthropic answers 400 to
 * either ("unexpected tool_use_id found in tool_result blocks", "tool_use ids were found without
 * tool_result blocks immediately after"), Responses too ("No tool call found for function call output",
 * "No tool output found for function call"), and Gemini wants one response per call. The builders of
 * those formats repair the history with {@link pairToolHistory} before they write it. Pure.
 */
import type { HubMessage, HubPart, ToolCallPart, ToolResultPart, Warnings } from "./hub.ts";

/** The text of the result given to a call that had none (an error result, `isError: true`). */
export const MISSING_RESULT_TEXT = "No result was provided for this tool call.";

/** What an orphan result becomes: a text part naming the call, then the result's media parts. */
function orphanParts(p: ToolResultPart): HubPart[] {
  const texts: string[] = [];
  const media: HubPart[] = [];
  for (const c of p.content) {
    if (c.type === "text") texts.push(c.text);
    else if (c.type === "document" && c.source.kind === "text") texts.push(c.source.data);
    else media.push(c);
  }
  return [{ type: "text", text: `Result of tool call ${p.callId}${p.isError ? " (error)" : ""}:\n${texts.join("\n")}` }, ...media];
}

/**
 * `messages` with every tool result paired with a call of the assistant turn just before its user
 * turn, and every call of an assistant turn followed by a user turn answered in that turn:
 * - a result that answers no call of that assistant turn (its call was trimmed away, or it answers a
 *   call already answered) becomes a text part `Result of tool call <id>:\n<text>` (` (error)` after
 *   the id for an error result), its images and documents kept after it; warning `orphan_tool_result`;
 * - a call with no result gets an error result ({@link MISSING_RESULT_TEXT}, the call's name) at the
 *   start of the next user turn; warning `missing_tool_result`. A call in the last turn (no user turn
 *   after it) is left as it is.
 * Consecutive messages of one role form one turn (the builders merge them); `system` / `developer`
 * messages and empty messages are transparent (the builders hoist or drop them). Messages that need no
 * change are returned as they are (the input is not mutated); `provider` names the target in the
 * warnings ("Anthropic", "Gemini", …).
 */
export function pairToolHistory(messages: HubMessage[], w: Warnings, provider: string): HubMessage[] {
  if (!messages.some((m) => m.content.some((p) => p.type === "tool_call" || p.type === "tool_result"))) return messages;
  const out: HubMessage[] = [];
  let role: "user" | "assistant" | undefined;
  /** The calls of the last assistant turn, and those answered in the user turn after it. */
  let calls: ToolCallPart[] = [];
  let answered = new Set<string>();
  /** Index in `out` of the first message of the user turn after the last assistant turn, if any. */
  let replyAt: number | undefined;

  const close = () => {
    if (replyAt === undefined) return;
    const missing = calls.filter((c) => !answered.has(c.id));
    if (missing.length === 0) return;
    w.add("missing_tool_result", `A tool call in history had no result; ${provider} was sent an error result for it.`);
    const results: ToolResultPart[] = missing.map((c) => ({ type: "tool_result", callId: c.id, name: c.name, content: [{ type: "text", text: MISSING_RESULT_TEXT }], isError: true }));
    const first = out[replyAt]!;
    out[replyAt] = { ...first, content: [...results, ...first.content] };
  };

  for (const m of messages) {
    if (m.role === "system" || m.role === "developer" || m.content.length === 0) {
      out.push(m);
      continue;
    }
    if (m.role === "assistant") {
      if (role !== "assistant") {
        close();
        calls = [];
        answered = new Set();
        replyAt = undefined;
      }
      role = "assistant";
      for (const p of m.content) if (p.type === "tool_call") calls.push(p);
      out.push(m);
      continue;
    }
    if (role === "assistant") replyAt = out.length;
    role = "user";
    let content: HubPart[] | undefined;
    m.content.forEach((p, i) => {
      if (p.type === "tool_result") {
        if (!answered.has(p.callId) && calls.some((c) => c.id === p.callId)) {
          answered.add(p.callId);
          content?.push(p);
          return;
        }
        w.add("orphan_tool_result", `A tool result without a matching tool call was sent to ${provider} as text.`);
        content ??= m.content.slice(0, i);
        content.push(...orphanParts(p));
        return;
      }
      content?.push(p);
    });
    out.push(content ? { ...m, content } : m);
  }
  close();
  return out;
}
