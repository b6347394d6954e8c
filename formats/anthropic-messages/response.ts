/**
 * Non-streamed Anthropic Messages replies ↔ hub (REFERENCE §1.2).
 */
import { clientToolName } from "../tool-names.ts";
import { countsTokens, type DecoderOptions, type EncoderOptions, type PlainReplyFacts } from "../codec.ts";
import { FormatError, hubError, noteDropped, type HubPart, type HubResponse, type Warning } from "../hub.ts";
import { promoteStopReason } from "../normalize.ts";
import { defaultNewId } from "./encoder.ts";
import { errorFromObject } from "./errors.ts";
import { argumentsText, checkArgumentsDepth } from "../json-depth.ts";
import { jsonLength, isObj } from "../json.ts";
import { tryParseJson } from "../sse.ts";
import { cacheCreationOf, stopDetailsFor, stopExplanationOf, stopFromAnthropic, stopToAnthropic, usageFromAnthropic, writeOpaque } from "./mapping.ts";
import { check, ResponseSchema } from "./schema.ts";
import { callSignaturesAsThinking } from "../call-signatures.ts";

/**
 * Provider reply body (`{"type":"message", content, stop_reason, usage, …}`) → {@link HubResponse}.
 * Blocks: text, thinking (signature stamped `opts.family`), redacted_thinking, tool_use (`input` →
 * JSON arguments text; a name the builder changed → the client's, `opts.toolNames`); server-tool blocks (and any other) are left out, named in `dropped`. `stop_reason` mapped by mapping.ts (raw kept;
 * a refusal's `stop_details.explanation` → `stopExplanation`); usage per REFERENCE §5.10.
 *
 * @throws FormatError when the body is an Anthropic error body (the error it carries, status from its
 *   type) or is not a Messages reply at all (`api_error`, 502).
 */
export function decodeResponse(body: unknown, opts: DecoderOptions): HubResponse {
  if (body && typeof body === "object" && (body as any).type === "error") {
    throw new FormatError(errorFromObject((body as any).error, 0));
  }
  const r = check(ResponseSchema, body);
  if (!r.ok) {
    throw new FormatError({ ...hubError("api_error", `The upstream reply is not an Anthropic message: ${r.message}`), status: 502, code: "upstream_malformed" });
  }
  const b = r.value;
  const content: HubPart[] = [];
  /** Block types left out (server-tool blocks and any other the hub has no slot for). */
  let dropped: string[] | undefined;
  for (const blk of b.content as Record<string, any>[]) {
    switch (blk.type) {
      case "text":
        if (typeof blk.text === "string") content.push({ type: "text", text: blk.text });
        break;
      case "thinking": {
        const text = typeof blk.thinking === "string" ? blk.thinking : "";
        if (typeof blk.signature === "string" && blk.signature.length > 0) {
          content.push({ type: "thinking", text, signature: { family: opts.family, value: blk.signature } });
        } else {
          content.push({ type: "thinking", text });
        }
        break;
      }
      case "redacted_thinking":
        if (typeof blk.data === "string") content.push({ type: "redacted_thinking", data: { family: opts.family, value: blk.data } });
        break;
      case "tool_use":
        content.push({
          type: "tool_call",
          id: typeof blk.id === "string" ? blk.id : "",
          name: typeof blk.name === "string" ? clientToolName(opts.toolNames, blk.name) : "", // a name the builder changed: the client's
          arguments: argumentsText(blk.input ?? {}),
        });
        break;
      default:
        if (typeof blk.type === "string" && !(dropped ??= []).includes(blk.type)) dropped.push(blk.type);
        break;
    }
  }
  const resp: HubResponse = {
    content,
    stopReason: typeof b.stop_reason === "string" ? stopFromAnthropic(b.stop_reason) : null,
    usage: usageFromAnthropic(b.usage) ?? {},
  };
  if (typeof b.id === "string") resp.id = b.id;
  if (typeof b.model === "string") resp.model = b.model;
  if (typeof b.stop_reason === "string") resp.rawStopReason = b.stop_reason;
  const explanation = stopExplanationOf(b.stop_details);
  if (explanation !== undefined) resp.stopExplanation = explanation;
  if (b.stop_sequence !== undefined) resp.stopSequence = b.stop_sequence ?? null;
  if (dropped) for (const t of dropped) noteDropped(resp, `${t} block`);
  if (resp.stopReason !== null && resp.stopReason !== "tool_use" && content.some((p) => p.type === "tool_call")) {
    if (resp.stopReason === "end_turn" || resp.stopReason === "other" || resp.stopReason === "stop_sequence") resp.stopReason = "tool_use";
  }
  return resp;
}

type Obj = Record<string, unknown>;

/** A member valibot's `nullish(string())` takes: absent, null or a string. */
function nullishString(x: unknown): boolean {
  return x === undefined || x === null || typeof x === "string";
}

/**
 * {@link FormatCodec.plainReplyFacts} for Anthropic Messages: a `{"type":"message"}` body (not an
 * array) that {@link decodeResponse}'s schema takes (`id`, `model`, `stop_sequence` absent, null or a
 * string; `usage` absent, null or an object), whose `content` is an array of only `text` blocks with a
 * string `text`, `thinking` blocks with a string `thinking` (signed or not; a signature of any other
 * type than a string is not plain), `redacted_thinking` blocks with a string `data` and `tool_use`
 * blocks (whatever their `input`), and with a non-empty string `stop_reason`. For it decodeResponse
 * makes one text, thinking, redacted or tool-call part per block (a call's arguments are its `input`
 * serialised, `{}` when absent), `stopFromAnthropic(stop_reason)` promoted to `tool_use` when there is
 * a call ({@link promoteStopReason}) and `usageFromAnthropic(usage)`, and the output characters are the
 * texts', thoughts', redacted data's and arguments' lengths: the same facts are read here without
 * valibot's check and the hub reply (issue 17, docs/performance.md items 95 and 101). A call's input
 * is serialised for its length only when the usage has no token counts
 * ({@link PlainReplyFacts.outputChars}). Undefined for every other shape (a server-tool block, an
 * unknown block, an error body, …), which the caller decodes.
 */
export function plainReplyFacts(body: unknown): PlainReplyFacts | undefined {
  if (!isObj(body) || body.type !== "message") return undefined;
  const stop = body.stop_reason;
  if (typeof stop !== "string" || stop.length === 0) return undefined;
  if (!nullishString(body.id) || !nullishString(body.model) || !nullishString(body.stop_sequence)) return undefined;
  const usage = body.usage;
  if (usage !== undefined && usage !== null && !isObj(usage)) return undefined;
  const content = body.content;
  if (!Array.isArray(content)) return undefined;
  const u = usageFromAnthropic(usage);
  const measure = !countsTokens(u);
  let chars = 0;
  let sawTool = false;
  for (const blk of content) {
    if (!isObj(blk)) return undefined;
    switch (blk.type) {
      case "text":
        if (typeof blk.text !== "string") return undefined;
        chars += blk.text.length;
        break;
      case "thinking":
        // The signature adds no characters; decodeResponse only stamps it on the part.
        if (typeof blk.thinking !== "string" || (blk.signature !== undefined && typeof blk.signature !== "string")) return undefined;
        chars += blk.thinking.length;
        break;
      case "redacted_thinking":
        if (typeof blk.data !== "string") return undefined;
        chars += blk.data.length;
        break;
      case "tool_use":
        // The id and name ride in the bytes only (decodeResponse takes any value, "" when not a string).
        sawTool = true;
        if (measure) {
          // Too deep to serialise: decodeResponse throws on it (a 502), so leave it to the decode.
          const n = jsonLength(blk.input ?? {});
          if (n < 0) return undefined;
          chars += n;
        }
        break;
      default:
        return undefined;
    }
  }
  return { usage: u, stopReason: promoteStopReason(stopFromAnthropic(stop), sawTool), outputChars: chars };
}

/**
 * {@link HubResponse} → non-streamed Anthropic reply for a client (REFERENCE §1.2): `id` (the reply's
 * when it is a `msg_` id, else minted), `model` = `opts.model`, content blocks (empty text skipped;
 * thinking signatures and redacted data tagged when foreign, mapping.ts; tool-call arguments parsed,
 * "" → `{}`, arguments that are not JSON → `{}`, said by {@link responseWarnings}), `stop_reason`
 * (mapped; null only for a reply that never said why it stopped, which the pipeline should answer as
 * an error instead), `stop_details` for a refusal with an explanation (Gemini's block reason: mapping.ts
 * `stopDetailsFor`), `stop_sequence`, usage with input, both cache counts
 * and output always present (0 when unknown, as Anthropic sends them).
 */
export function encodeResponse(resp: HubResponse, opts: EncoderOptions): Record<string, unknown> {
  const content: Record<string, unknown>[] = [];
  // A tool call's Gemini signature as a signature-only thinking block before it (formats/call-signatures.ts).
  for (const p of callSignaturesAsThinking(resp.content)) {
    switch (p.type) {
      case "text":
        if (p.text.length > 0) content.push({ type: "text", text: p.text });
        break;
      case "thinking":
        content.push({ type: "thinking", thinking: p.text, signature: p.signature ? writeOpaque(p.signature) : "" });
        break;
      case "redacted_thinking":
        content.push({ type: "redacted_thinking", data: writeOpaque(p.data) });
        break;
      case "tool_call": {
        let input: unknown = {};
        if (p.arguments.trim().length > 0) {
          checkArgumentsDepth(p.arguments);
          try {
            input = JSON.parse(p.arguments);
          } catch {
            input = {};
          }
        }
        content.push({ type: "tool_use", id: p.id, name: p.name, input });
        break;
      }
      default:
        break;
    }
  }
  const hasTool = content.some((b) => b.type === "tool_use");
  let stop = resp.stopReason;
  if (stop) stop = promoteStopReason(stop, hasTool);
  const u = resp.usage;
  // Both cache counts always, 0 when unknown, as Anthropic sends them (mapping.ts usageJson).
  const usage: Record<string, unknown> = { input_tokens: u.inputTokens ?? 0, cache_creation_input_tokens: u.cacheWriteTokens ?? 0, cache_read_input_tokens: u.cacheReadTokens ?? 0 };
  // The one-hour/five-minute breakdown when the provider said it (Anthropic's Usage.cache_creation).
  const creation = cacheCreationOf(u);
  if (creation) usage.cache_creation = creation;
  usage.output_tokens = u.outputTokens ?? 0;
  const out: Record<string, unknown> = {
    id: resp.id && resp.id.startsWith("msg_") ? resp.id : (opts.newId ?? defaultNewId)("msg_"),
    type: "message",
    role: "assistant",
    model: opts.model,
    content,
    stop_reason: stop === null ? null : stopToAnthropic(stop),
  };
  const details = stopDetailsFor(stop, resp.stopExplanation);
  if (details) out.stop_details = details;
  out.stop_sequence = typeof resp.stopSequence === "string" ? resp.stopSequence : null;
  out.usage = usage;
  return out;
}

/** `Warning.code` of a call whose arguments a token limit cut, sent with `input: {}` ({@link responseWarnings}). */
export const TOOL_ARGUMENTS_CUT = "tool_arguments_cut";

/**
 * What {@link encodeResponse} cannot carry of `resp`, as warnings (codec `responseWarnings`; SPEC F-2):
 * a tool call whose arguments are not JSON text goes out with `input: {}`, an object being all a
 * non-streamed reply's `input` can be (a streamed one sends the text as it came, `input_json_delta`).
 * The reply's last part at a token-limit finish is a call the limit cut ({@link TOOL_ARGUMENTS_CUT},
 * as Anthropic's own API, which keeps in `input` only the parameters that were complete: here none);
 * any other is `tool_arguments_invalid`. Each names the tool and how many characters (UTF-16 code
 * units) were left out, never the text. Empty arguments (`{}` in both modes) give none.
 */
export function responseWarnings(resp: HubResponse): Warning[] {
  const out: Warning[] = [];
  const limit = resp.stopReason === "max_tokens" ? "output token limit" : resp.stopReason === "context_window_exceeded" ? "context window" : undefined;
  const last = resp.content.at(-1);
  for (const p of resp.content) {
    if (p.type !== "tool_call" || p.arguments.trim().length === 0 || tryParseJson(p.arguments) !== undefined) continue;
    const name = p.name || "a tool";
    const form = "a reply that is not streamed carries a call's input only as a JSON object, so its input is {}.";
    if (limit && p === last) {
      out.push({
        code: TOOL_ARGUMENTS_CUT,
        message: `The upstream's ${limit} cut the arguments of a call to ${name} (${p.arguments.length} characters so far, not complete JSON); ${form} Allow more output tokens, or stream the request to get the arguments so far.`,
      });
    } else {
      out.push({ code: "tool_arguments_invalid", message: `The arguments of a call to ${name} from the upstream (${p.arguments.length} characters) are not valid JSON; ${form}` });
    }
  }
  return out;
}
