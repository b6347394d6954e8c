/**
 * What a whole hub reply (formats/hub.ts HubResponse content) holds, as the reply drivers of
 * pipeline/re-translate.ts observe it: its characters of content, which of its parts open a block when
 * it is replayed as events, and whether it has anything usable (SPEC 6.3's empty-reply row).
 */
import type { HubError, HubPart, StopReason } from "../formats/hub.ts";
import { isNoFinishWord, unfinishedReplyError, unusableFinishError } from "../formats/normalize.ts";

/** pipeline/whole-reply-bound.ts `gatheredChars` of a whole reply's content (text, reasoning, tool arguments, redacted reasoning). */
export function replyChars(content: HubPart[]): number {
  let n = 0;
  for (const p of content) {
    if (p.type === "text" || p.type === "thinking") n += p.text.length;
    else if (p.type === "tool_call") n += p.arguments.length;
    else if (p.type === "redacted_thinking") n += p.data.value.length;
  }
  return n;
}

/** Whether `responseToEvents` (formats/accumulate.ts) opens a block for this part of a reply (an empty unsigned text does not; inputs never appear). */
export function opensBlock(part: HubPart): boolean {
  switch (part.type) {
    case "text":
      return part.text.length > 0 || !!part.signature;
    case "thinking":
    case "redacted_thinking":
    case "tool_call":
      return true;
    default:
      return false;
  }
}

/**
 * Whether a reply ends with nothing in it (no text, reasoning or tool call) for a reason that is no
 * finish (hub `other`, e.g. Gemini's MALFORMED_FUNCTION_CALL): REFERENCE §5.1's judgement row, an
 * upstream failure before the commit point (formats/normalize.ts unusableFinishError).
 */
export function endsUnfinished(content: HubPart[], stop: StopReason | null): boolean {
  return stop === "other" && !hasUsableContent(content, null);
}

/**
 * The failure of a whole reply read to its end before the commit point that did not finish (REFERENCE
 * §5.1's judgement row, "pre-commit treat as upstream failure"), or undefined: nothing in it and hub
 * reason `other` ({@link endsUnfinished}: unusableFinishError), or content ending in one of Gemini's
 * "no finish" words (`raw`: MALFORMED_FUNCTION_CALL, … formats/normalize.ts isNoFinishWord,
 * unfinishedReplyError) whatever hub reason it became (`tool_use` after an earlier call).
 */
export function wholeReplyUnfinished(content: HubPart[], stop: StopReason | null, raw: string | undefined): HubError | undefined {
  if (endsUnfinished(content, stop)) return unusableFinishError(raw);
  if (stop !== null && isNoFinishWord(raw)) return unfinishedReplyError(raw!);
  return undefined;
}

/** Whether a reply has something usable: a stop reason, non-empty text or reasoning, or a tool call (else SPEC 6.3's empty reply). */
export function hasUsableContent(content: HubPart[], stop: StopReason | null): boolean {
  if (stop) return true;
  return content.some((p) => (p.type === "text" && p.text.length > 0) || p.type === "tool_call" || (p.type === "thinking" && p.text.length > 0));
}
