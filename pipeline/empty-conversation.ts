/**
 * A translated request with no conversation left for its target (found by a new user's tryout,
 * 2026-12-04): a client's Chat request of only a system message, a Messages request whose only block
 * has no equivalent, a Chat image by remote URL for Gemini, a Responses request with no `input`. Built
 * for Anthropic (`messages: []`) or Gemini (`contents: []`) such a body is refused by the provider with
 * a 400 about a field the client did not write that way, and each target of a combo spends an attempt
 * on it (SPEC 6.3: "any other 4xx … the combo still advances"). The translate stage asks
 * {@link conversationLeft} of every built body (one array length: cheap) and, when nothing is left,
 * answers with {@link emptyConversationError}: a 400 in the client's format naming the client's own
 * field and why nothing is left, before any upstream call. It is a translation failure of that target,
 * so the attempt loop moves on to the next target (one of another format may take the request: an
 * OpenAI target takes a Chat conversation of only a system message) without spending an attempt.
 *
 * Only the formats that refuse an empty conversation are checked: Anthropic Messages ("messages: at
 * least one message is required"), Gemini (`contents` is required, and a content needs parts), Chat
 * Completions (`messages` must not be empty; a system message alone is valid), Responses (`input` is
 * optional in OpenAI's API reference only because the conversation may come from elsewhere: the items
 * of `previous_response_id`, a stored `conversation`, a `prompt` template; without any of them an
 * empty `input` leaves the model nothing to answer — OpenAI's "Missing required parameter: 'input'."
 * as proxies in front of the Codex backend report it; not tried against OpenAI here). So a Responses
 * body counts as empty when its `input` is missing or `[]` and it names none of the three; a system or
 * developer item alone is an item (as a Chat system message alone is a conversation), and
 * `instructions` alone are not. The native lanes are not checked: the client's own bytes go, so the
 * provider's 400 names the client's own fields (the guard already refuses an empty Chat/Messages
 * `messages` and Gemini `contents`, pipeline/guard.ts).
 */
import { hubError, type HubError, type HubRequest, type Warning, type WireFormat } from "../formats/hub.ts";

/** The client's conversation field in each format (the error's `param`). */
const FIELD: Record<WireFormat, string> = {
  "openai-chat": "messages",
  "anthropic-messages": "messages",
  "openai-responses": "input",
  gemini: "contents",
};

/** What each target format needs, said at the end of the error. */
const NEEDS: Record<WireFormat, string> = {
  "anthropic-messages": "An Anthropic Messages request needs at least one user or assistant message with content",
  gemini: "A Gemini request needs at least one user or model turn with content",
  "openai-chat": "A Chat Completions request needs at least one message",
  "openai-responses": "A Responses request needs at least one input item (or a previous_response_id, conversation or prompt that holds the conversation)",
};

/** The name of a target format in "has no … equivalent". */
const NAME: Record<WireFormat, string> = {
  "anthropic-messages": "Anthropic",
  gemini: "Gemini",
  "openai-chat": "Chat Completions",
  "openai-responses": "Responses",
};

/** What a dropped item of each client format is called. */
const ITEM: Record<WireFormat, string> = {
  "anthropic-messages": "content block",
  "openai-responses": "input item",
  "openai-chat": "content part",
  gemini: "part",
};

/** Warnings of the build that say a piece of the conversation was not sent. */
const CONTENT_DROPS = new Set(["dropped_media", "dropped_content", "dropped_empty_message"]);

/**
 * Whether a body built for `format` still has a conversation: false only for an Anthropic or Chat
 * body whose `messages`, or a Gemini body whose `contents`, is an empty array, and for a Responses
 * body whose `input` is missing or an empty array while it names no `previous_response_id`,
 * `conversation` or `prompt` (module comment).
 */
export function conversationLeft(format: WireFormat, body: Record<string, unknown>): boolean {
  if (format === "openai-responses") {
    const input = body.input;
    if (input !== undefined && input !== null && !(Array.isArray(input) && input.length === 0)) return true;
    return Boolean(body.previous_response_id || body.conversation || body.prompt);
  }
  const turns = format === "gemini" ? body.contents : body.messages;
  return !(Array.isArray(turns) && turns.length === 0);
}

/**
 * The 400 (`invalid_request`, `param` = the client's conversation field: `messages`, `input`,
 * `contents`) for a request with nothing left to send to `label`, a target of `upstreamFormat`. Says
 * what the client sent (an empty or missing conversation, only system instructions) or why each piece
 * was left out (`hub.droppedItemTypes`, empty turns, the build's media/content warnings), then what
 * the target format needs. `hub` is absent on the same-format tidy lanes (the tidy warnings say why).
 */
export function emptyConversationError(
  clientFormat: WireFormat,
  body: Record<string, unknown>,
  hub: HubRequest | undefined,
  upstreamFormat: WireFormat,
  label: string,
  warnings: readonly Warning[],
): HubError {
  const field = FIELD[clientFormat];
  const needs = `${NEEDS[upstreamFormat]}; the request was not sent to ${label}.`;
  const reasons: string[] = [];
  const types = hub?.droppedItemTypes ?? [];
  if (types.length > 0) {
    const item = ITEM[clientFormat];
    // A Gemini client's are named by member (`toolCall part`): a kind of part, not a type.
    const of = clientFormat === "gemini" ? "kind" : "type";
    const list = types.map((t) => JSON.stringify(clientFormat === "gemini" ? t.replace(/ part$/, "") : t)).join(", ");
    reasons.push(`${types.length === 1 ? `the ${item} of ${of} ${list} has` : `the ${item}s of ${of}s ${list} have`} no ${NAME[upstreamFormat]} equivalent`);
  }
  for (const w of warnings) {
    if (!CONTENT_DROPS.has(w.code)) continue;
    const empty = w.code === "dropped_empty_message" ? /^(\d+)/.exec(w.message) : null;
    if (empty) {
      reasons.push(empty[1] === "1" ? "1 message has no content" : `${empty[1]} messages have no content`);
      continue;
    }
    const m = w.message.replace(/\.$/, "");
    reasons.push(m.charAt(0).toLowerCase() + m.slice(1));
  }
  if (reasons.length > 0) {
    return hubError("invalid_request", `Nothing in \`${field}\` can be sent to ${label}: ${reasons.join("; ")}. ${needs}`, { param: field });
  }
  const given = body[field];
  const system = (hub?.system.length ?? 0) > 0 || (hub?.messages.some((m) => m.role === "system" || m.role === "developer") ?? false);
  let what: string;
  if (given === undefined || given === null) what = `The request has no \`${field}\`${system ? ", only instructions" : ""}`;
  else if (Array.isArray(given) && given.length === 0) what = `\`${field}\` is empty${system ? " (the request has only instructions)" : ""}`;
  else if (system) what = `\`${field}\` has only system ${clientFormat === "anthropic-messages" ? "messages" : "or developer messages"}`;
  else what = `\`${field}\` has nothing to send`;
  return hubError("invalid_request", `${what}. ${needs}`, { param: field });
}
