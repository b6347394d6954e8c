/**
 * SPEC G-5: Claude Code housekeeping probes answered locally, without an upstream call.
 *
 * Only exact, recognisable shapes sent by Claude Code itself (user agent `claude-cli/…` or the header
 * `x-app: cli`) on the Anthropic Messages endpoint are answered; anything else, however similar, goes
 * upstream. The shapes (from published captures of Claude Code 1.x/2.x traffic):
 *
 * - `quota`: the start-up quota check: `max_tokens: 1`, exactly one user message whose text is
 *   exactly `quota`, no tools. Answered with a one-token reply that stops at `max_tokens`.
 * - `warmup`: the sub-agent prompt-cache warm-up: exactly one user message whose whole content is the
 *   text `Warmup` (a string or one text block; tools and a system prompt may be present). Claude Code
 *   discards the reply.
 * - `topic`: the 2.0-era conversation-title check: a system prompt containing "Analyze if this
 *   message indicates a new conversation topic" and `isNewTopic`, no tools. Answered with
 *   `{"isNewTopic": false, "title": null}` (the title stays as it is).
 * - `title`: the 2.1-era session title: a system prompt starting "Generate a concise, sentence-case
 *   title", no tools. Answered with `{"title": "…"}` made from the first words of the user's text.
 *
 * Not answered locally (left to upstream on purpose): prompt suggestions (`[SUGGESTION MODE:`),
 * conversation summaries/compaction, and any `max_tokens: 1` request with another text.
 */
import * as v from "valibot";
import { responseToEvents } from "../formats/accumulate.ts";
import { anthropicMessages } from "../formats/anthropic-messages/index.ts";
import type { EncoderOptions } from "../formats/codec.ts";
import type { HubResponse } from "../formats/hub.ts";
import { SSE_HEADERS } from "../formats/sse.ts";
import { responseHeaders, type ProbeKind, type RequestContext } from "./context.ts";
import type { HeaderReader } from "./client-headers.ts";
import { isObj, type JsonObject as Json } from "../formats/json.ts";

const TOPIC_MARKER = "Analyze if this message indicates a new conversation topic";
const TITLE_MARKER = "Generate a concise, sentence-case title";

/** Whether the request comes from Claude Code itself (user agent `claude-cli/…` or `x-app: cli`). */
export function isClaudeCodeClient(headers: HeaderReader): boolean {
  const ua = headers.get("user-agent") ?? "";
  return ua.startsWith("claude-cli/") || (headers.get("x-app") ?? "").trim().toLowerCase() === "cli";
}

/** The whole text of a message content (string or text blocks); undefined when any block is not text. */
function contentText(content: unknown): string | undefined {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return undefined;
  let out = "";
  for (const b of content) {
    if (!isObj(b) || b.type !== "text" || typeof b.text !== "string") return undefined;
    out += b.text;
  }
  return out;
}

/** The system prompt as one text (string, or text blocks joined by newlines). */
function systemText(system: unknown): string {
  if (typeof system === "string") return system;
  if (!Array.isArray(system)) return "";
  return system.map((b) => (isObj(b) && typeof b.text === "string" ? b.text : "")).join("\n");
}

/** A user message whose whole content is exactly `text`: the string itself or one text block. */
const onlyUserText = (text: string) =>
  v.object({
    role: v.literal("user"),
    content: v.union([v.literal(text), v.strictTuple([v.object({ type: v.literal("text"), text: v.literal(text) })])]),
  });

/** No tools: the field is absent or an empty list. */
const NoTools = v.optional(v.pipe(v.array(v.unknown()), v.length(0)));

/** The start-up quota check: `max_tokens: 1`, one user message `quota`, no tools, no system prompt. */
const QuotaProbe = v.object({
  max_tokens: v.literal(1),
  messages: v.strictTuple([onlyUserText("quota")]),
  tools: NoTools,
  system: v.optional(v.custom<unknown>((x) => systemText(x) === "")),
});

/** The sub-agent warm-up: one user message `Warmup` (tools and system prompt may be present). */
const WarmupProbe = v.object({ messages: v.strictTuple([onlyUserText("Warmup")]) });

/** A request without tools whose system prompt satisfies `test`. */
const systemProbe = (test: (system: string) => boolean) =>
  v.object({ tools: NoTools, system: v.custom<unknown>((x) => test(systemText(x))) });

/** The 2.0-era title check ("Analyze if this message indicates a new conversation topic … isNewTopic"). */
const TopicProbe = systemProbe((sys) => sys.includes(TOPIC_MARKER) && sys.includes("isNewTopic"));

/** The 2.1-era session title: a system block starting "Generate a concise, sentence-case title". */
const TitleProbe = systemProbe((sys) => sys.trimStart().startsWith(TITLE_MARKER) || sys.includes(`\n${TITLE_MARKER}`));

const PROBES: Array<[ProbeKind, v.GenericSchema]> = [
  ["quota", QuotaProbe],
  ["warmup", WarmupProbe],
  ["topic", TopicProbe],
  ["title", TitleProbe],
];

/**
 * Recognises a Claude Code housekeeping probe (SPEC G-5). `body` is the parsed Anthropic Messages
 * request; `headers` the client's request headers. Returns undefined for every other request.
 */
export function recogniseProbe(body: Json, headers: HeaderReader): ProbeKind | undefined {
  if (!isClaudeCodeClient(headers)) return undefined;
  for (const [kind, schema] of PROBES) if (v.is(schema, body)) return kind;
  return undefined;
}

/** A short session title from the user's text: tags dropped, first 6 words, at most 60 characters. */
export function localTitle(body: Json): string {
  const messages = Array.isArray(body.messages) ? body.messages : [];
  const firstUser = messages.find((m) => isObj(m) && m.role === "user");
  const raw = isObj(firstUser) ? (contentText(firstUser.content) ?? "") : "";
  const words = raw
    .replace(/<([a-z][\w-]*)[^>]*>[\s\S]*?<\/\1>/gi, " ")
    .replace(/<[^>]+>/g, " ")
    .split(/\s+/)
    .filter(Boolean)
    .slice(0, 6);
  let title = words.join(" ").slice(0, 60).trim();
  if (!title) return "New session";
  title = title.charAt(0).toUpperCase() + title.slice(1);
  return title;
}

/** The text and stop reason of the local answer to each probe. */
export function probeReplyText(kind: ProbeKind, body: Json): { text: string; stopReason: "end_turn" | "max_tokens"; outputTokens: number } {
  switch (kind) {
    case "quota":
      return { text: "#", stopReason: "max_tokens", outputTokens: 1 };
    case "warmup":
      return { text: "Ready.", stopReason: "end_turn", outputTokens: 2 };
    case "topic":
      return { text: '{"isNewTopic": false, "title": null}', stopReason: "end_turn", outputTokens: 12 };
    case "title":
      return { text: JSON.stringify({ title: localTitle(body) }), stopReason: "end_turn", outputTokens: 8 };
  }
}

/**
 * The local answer to a probe as an Anthropic Messages reply, made by the Anthropic codec from a
 * {@link HubResponse} (one text part, the probe's stop reason, zero input and cache tokens and the
 * nominal output count): its `encodeResponse` for a `message` object, or, when the request asked for
 * a stream, the reply replayed as hub events (`responseToEvents`) through its stream encoder — the
 * complete sequence message_start … message_stop. The id is `msg_sy…` (made here, not upstream); the
 * model shown is the one the client asked for; headers include `responseHeaders` (X-Request-Id, …).
 */
export function probeResponse(ctx: RequestContext, kind: ProbeKind): Response {
  const { text, stopReason, outputTokens } = probeReplyText(kind, ctx.body);
  const reply: HubResponse = {
    id: "msg_sy" + crypto.randomUUID().replaceAll("-", "").slice(0, 22),
    content: [{ type: "text", text }],
    stopReason,
    usage: { inputTokens: 0, outputTokens, cacheWriteTokens: 0, cacheReadTokens: 0 },
  };
  const opts: EncoderOptions = { model: ctx.requestedModel };
  const headers = responseHeaders(ctx);
  if (!ctx.stream) {
    headers.set("content-type", "application/json");
    return new Response(JSON.stringify(anthropicMessages.encodeResponse!(reply, opts)), { status: 200, headers });
  }
  for (const [k, val] of Object.entries(SSE_HEADERS)) headers.set(k, val);
  let sse = "";
  const encoder = anthropicMessages.createEncoder!(opts, (t) => (sse += t));
  for (const ev of responseToEvents(reply)) encoder.event(ev);
  encoder.end();
  return new Response(sse, { status: 200, headers });
}
