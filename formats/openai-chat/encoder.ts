/**
 * Canonical hub events → Chat Completions SSE for a Chat client (REFERENCE §2.3, §6.2, §7 item 2;
 * SPEC F-5, 6.4).
 *
 * What the client gets:
 * - every chunk carries the same `chatcmpl-…` id, `created` (seconds) and the model the client asked
 *   for; `data:` lines only;
 * - `delta: {"role":"assistant","content":""}` once, before the first content (lazily: an error before
 *   any content is just the error frame);
 * - text → `delta.content` (with the choice's `logprobs: {content, refusal: null}` when the delta carries
 *   token log probabilities; no `logprobs` member otherwise), a refusal block's text → `delta.refusal` (the finish is then `stop`, as
 *   OpenAI ends a refusal, not `content_filter`); thinking → `delta.reasoning_content` (the DeepSeek/LiteLLM vendor field;
 *   judgement, REFERENCE §6.2 step 2: never merged into `content`); a new reasoning summary part is
 *   separated from the previous one by a blank line; each signed thinking block also goes out whole
 *   as a `reasoning_details` entry with its signature tagged, and redacted thinking as a
 *   `reasoning.encrypted` entry, and a tool call's signature (Gemini's on a functionCall part) as a
 *   `reasoning.encrypted` entry with the call's `id` (reasoning-details.ts: Chat has no slot of its
 *   own, and the client sends them back), all entries in stream order in ONE `delta.reasoning_details` just before the
 *   finish chunk: the openai SDK's stream helper assigns a delta's fields onto the message (a later
 *   `reasoning_details` delta would replace the array), and a client that concatenates deltas must not
 *   get an entry twice;
 * - each tool call's `id`, `type` and `function.name` once, in its first fragment with
 *   `arguments: ""`, later fragments only `index` + `function.arguments`; `index` is the tool slot
 *   (0, 1, 2… in output order, whatever the upstream used); a call that got no argument text gets one
 *   `arguments: "{}"` fragment when its block stops (REFERENCE §6.2 step 3); a call of the client's own
 *   `custom` tool (`opts.customTools`) goes out whole in one fragment at its stop,
 *   `{index, id, type:"custom", custom:{name, input}}` with the raw input;
 * - for a request that declared its functions with the legacy `functions` (`opts.legacyFunctions`), the
 *   first call goes out as the Chat API writes it for such a request: `delta.function_call` with
 *   `name` and `arguments: ""` first, then `{arguments}` fragments (`"{}"` when none came), and the
 *   finish `function_call` for `tool_calls`; the legacy form holds one call, so later calls are left
 *   out, said at the finish by `opts.warn` (`dropped_tool_call`);
 * - the finish chunk `delta: {}` + `finish_reason` ({@link stopToChat}), after a `delta.refusal` with a
 *   refusal finish's `explanation` when no refusal text came (finish `content_filter`);
 * - at the end of the event stream: the usage chunk (`choices: []`, all counters integers) ONLY when
 *   `opts.includeUsage`, then `data: [DONE]` once;
 * - after an `error` event, or at the end without a finish: `data: {"error":{…}}` then `[DONE]`, no
 *   finish chunk (SPEC 6.4; the OpenAI SDK raises `APIError` on the frame). An error after the finish
 *   only closes the stream normally (the provider had already said how it ended; SPEC 6.4 exception).
 *
 * Chunks are built by string concatenation around a precomputed prefix/suffix (no per-chunk object
 * serialisation beyond the delta's own strings).
 */
import type { EncoderOptions, StreamEncoder } from "../codec.ts";
import type { HubError, HubEvent, Opaque, RedactedThinkingPart, ThinkingPart, ToolCallPart, Usage } from "../hub.ts";
import { reasoningDetail } from "./reasoning-details.ts";
import { mergeUsage } from "../hub.ts";
import { TRUNCATED_ERROR } from "../normalize.ts";
import { SSE_DONE } from "../sse.ts";
import { chatLogprobsJson } from "../openai-common/logprobs.ts";
import { errorBody } from "./errors.ts";
import { stopToChat, usageToChat } from "./mapping.ts";
import { customCallJson } from "./custom-calls.ts";
import { RandomText } from "../random-text.ts";

/** 12 random bytes (24 hex chars) per `chatcmpl-` id, drawn for many ids at once (formats/random-text.ts). */
const CHAT_ID_RANDOM = new RandomText(12, 24, "hex");

/** A fresh `chatcmpl-` id (24 random hex chars) when the caller injected no generator. */
export function defaultChatId(): string {
  return "chatcmpl-" + CHAT_ID_RANDOM.next();
}

/** The incremental Chat encoder; see the module comment. */
export class ChatEncoder implements StreamEncoder {
  /** `data: {"id":…,"object":"chat.completion.chunk","created":…,"model":…,"choices":[{"index":0,"delta":` */
  private readonly head: string;
  /** `data: {"id":…,…,"model":…,"choices":[],"usage":` */
  private readonly usageHead: string;
  private readonly includeUsage: boolean;
  private roleSent = false;
  private finished = false;
  private closed = false;
  private readonly usage: Usage = {};
  /** Output block index → tool slot and whether argument text was sent. */
  private toolSlot = -1;
  private toolArgsSent = false;
  private toolBlock = -1;
  /** The open tool call's id and signature (Gemini), for its `reasoning_details` entry at its stop. */
  private toolId = "";
  private toolSig: Opaque | undefined;
  /** The open call is of the client's own `custom` tool (EncoderOptions.customTools): its name, and its argument text held for its stop. */
  private customName: string | undefined;
  private customArgs = "";
  private nextSlot = 0;
  private thinkingSent = false;
  private thinkingSep = false;
  /** The open thinking block (-1: none), its whole text and its signature, for `reasoning_details`. */
  private thinkingBlock = -1;
  private thinkingText = "";
  private thinkingSig: Opaque | undefined;
  /** The `reasoning_details` entries so far (JSON text, in stream order; `index` = position), sent at the finish. */
  private readonly details: string[] = [];
  /** Output index of the open refusal block (its text goes to `delta.refusal`), and whether one was sent. */
  private refusalBlock = -1;
  private refusalSent = false;
  /** The client sent the legacy `functions` (EncoderOptions.legacyFunctions): calls as `function_call`, the first only. */
  private readonly legacy: boolean;
  /** Where the left-out calls are said (`opts.warn`, called as a method of `opts`). */
  private readonly opts: EncoderOptions;
  /** Calls after the first, left out of a legacy reply. */
  private leftOut = 0;

  constructor(
    opts: EncoderOptions,
    private readonly write: (text: string) => void,
  ) {
    const id = opts.newId ? opts.newId("chatcmpl-") : defaultChatId();
    const created = Math.floor((opts.now ? opts.now() : Date.now()) / 1000);
    const common = `data: {"id":${JSON.stringify(id)},"object":"chat.completion.chunk","created":${created},"model":${JSON.stringify(opts.model)},"choices":`;
    this.head = common + `[{"index":0,"delta":`;
    this.usageHead = common + `[],"usage":`;
    this.includeUsage = opts.includeUsage === true;
    this.legacy = opts.legacyFunctions === true;
    this.opts = opts;
  }

  /** A call's fragment: `tool_calls[{index, …}]`, or for a legacy request the `function_call` object itself. */
  private callDelta(fields: string): void {
    this.delta(this.legacy ? `{"function_call":{${fields}}}` : `{"tool_calls":[{"index":${this.toolSlot},${fields}}]}`);
  }

  /** Writes one choice chunk with the given delta JSON and a null finish_reason. */
  private delta(deltaJson: string): void {
    if (!this.roleSent) this.sendRole();
    this.write(this.head + deltaJson + `,"finish_reason":null}]}\n\n`);
  }

  /** Keeps the `reasoning_details` entry of a signed thinking block, redacted thinking or a signed tool call (reasoning-details.ts) for the finish. */
  private addDetail(part: ThinkingPart | RedactedThinkingPart | Pick<ToolCallPart, "type" | "id" | "signature">): void {
    const detail = reasoningDetail(part, this.details.length);
    if (detail) this.details.push(JSON.stringify(detail));
  }

  private sendRole(): void {
    this.roleSent = true;
    this.write(this.head + `{"role":"assistant","content":""},"finish_reason":null}]}\n\n`);
  }

  event(ev: HubEvent): void {
    if (this.closed) return;
    switch (ev.type) {
      case "message_start":
        mergeUsage(this.usage, ev.usage);
        return;
      case "usage":
        mergeUsage(this.usage, ev.usage);
        return;
      case "block_start":
        if (this.finished) return;
        if (ev.block.type === "tool_call") {
          const b = ev.block;
          if (this.legacy && this.nextSlot > 0) {
            this.leftOut++; // `function_call` holds one call: its fragments (other block index) are not sent
            return;
          }
          this.toolBlock = ev.index;
          this.toolSlot = this.nextSlot++;
          this.toolArgsSent = false;
          this.toolId = b.id;
          this.toolSig = b.signature;
          this.customName = !this.legacy && this.opts.customTools?.has(b.name) ? b.name : undefined;
          this.customArgs = "";
          if (this.customName !== undefined) {
            // Sent whole at its stop: the raw input is known once the `{"input": …}` arguments are complete.
          } else if (this.legacy) this.delta(`{"function_call":{"name":${JSON.stringify(b.name)},"arguments":""}}`);
          else this.delta(`{"tool_calls":[{"index":${this.toolSlot},"id":${JSON.stringify(b.id)},"type":"function","function":{"name":${JSON.stringify(b.name)},"arguments":""}}]}`);
        } else if (ev.block.type === "text") {
          if (ev.block.refusal === true) this.refusalBlock = ev.index;
        } else if (ev.block.type === "thinking") {
          // A second reasoning block reads as a new paragraph of the same reasoning_content.
          this.thinkingSep = this.thinkingSent;
          this.thinkingBlock = ev.index;
          this.thinkingText = "";
          this.thinkingSig = undefined;
        } else if (ev.block.type === "redacted_thinking") {
          this.addDetail({ type: "redacted_thinking", data: ev.block.data });
        }
        return;
      case "block_delta": {
        if (this.finished) return;
        const d = ev.delta;
        switch (d.type) {
          case "text":
            if (ev.index === this.refusalBlock) {
              this.refusalSent = true;
              this.delta(`{"refusal":${JSON.stringify(d.text)}}`);
            } else if (d.logprobs === undefined) this.delta(`{"content":${JSON.stringify(d.text)}}`);
            else {
              if (!this.roleSent) this.sendRole();
              this.write(this.head + `{"content":${JSON.stringify(d.text)}},"logprobs":{"content":${chatLogprobsJson(d.logprobs)},"refusal":null},"finish_reason":null}]}\n\n`);
            }
            return;
          case "thinking": {
            const text = this.thinkingSep ? "\n\n" + d.text : d.text;
            this.thinkingSep = false;
            this.thinkingSent = true;
            // The block's own text: a separator before its first text belongs to the previous block.
            if (ev.index === this.thinkingBlock) this.thinkingText += this.thinkingText.length > 0 ? text : d.text;
            this.delta(`{"reasoning_content":${JSON.stringify(text)}}`);
            return;
          }
          case "thinking_part":
            if (this.thinkingSent) this.thinkingSep = true;
            return;
          case "tool_args":
            if (ev.index !== this.toolBlock) return;
            if (this.customName !== undefined) {
              this.customArgs += d.json;
              return;
            }
            this.toolArgsSent = true;
            this.callDelta(this.legacy ? `"arguments":${JSON.stringify(d.json)}` : `"function":{"arguments":${JSON.stringify(d.json)}}`);
            return;
          case "signature":
            // No Chat slot for opaque reasoning state: a thinking block's or a tool call's goes in
            // `reasoning_details` (sent at the finish).
            if (ev.index === this.thinkingBlock) this.thinkingSig = d.signature;
            else if (ev.index === this.toolBlock) this.toolSig = d.signature;
            return;
        }
        return;
      }
      case "block_stop":
        if (this.finished) return;
        if (ev.index === this.thinkingBlock) {
          this.thinkingBlock = -1;
          if (this.thinkingSig) this.addDetail({ type: "thinking", text: this.thinkingText, signature: this.thinkingSig });
          this.thinkingText = "";
        }
        if (ev.index === this.toolBlock) {
          if (this.customName !== undefined) this.delta(`{"tool_calls":[${JSON.stringify({ index: this.toolSlot, ...customCallJson(this.toolId, this.customName, this.customArgs) })}]}`);
          else if (!this.toolArgsSent) this.callDelta(this.legacy ? `"arguments":"{}"` : `"function":{"arguments":"{}"}`);
          if (this.toolSig) this.addDetail({ type: "tool_call", id: this.toolId, signature: this.toolSig });
          this.toolBlock = -1;
          this.toolSig = undefined;
        }
        return;
      case "finish":
        if (this.finished) return;
        if (!this.roleSent) this.sendRole();
        // All entries in one delta, once: the SDK's stream helper would keep only the last delta's array.
        if (this.details.length > 0) this.delta(`{"reasoning_details":[${this.details.join(",")}]}`);
        // A provider's refusal explained but not worded as refusal text (Anthropic `stop_details`): the
        // explanation as `delta.refusal`; the finish stays `content_filter` (not `refusalSent`).
        if (ev.reason === "refusal" && ev.explanation !== undefined && !this.refusalSent) this.delta(`{"refusal":${JSON.stringify(ev.explanation)}}`);
        this.finished = true;
        let finish: string = stopToChat(ev.reason, this.refusalSent);
        if (this.legacy && finish === "tool_calls" && this.nextSlot > 0) finish = "function_call";
        if (this.leftOut > 0) this.opts.warn?.("dropped_tool_call", legacyLeftOut(this.leftOut + 1));
        this.write(this.head + `{},"finish_reason":"${finish}"}]}\n\n`);
        return;
      case "error":
        if (this.finished) {
          this.close();
        } else {
          this.fail(ev.error);
        }
        return;
    }
  }

  end(): void {
    if (this.closed) return;
    if (this.finished) this.close();
    else this.fail(TRUNCATED_ERROR);
  }

  /** The usage chunk (when asked for) and `[DONE]`. */
  private close(): void {
    this.closed = true;
    if (this.includeUsage) this.write(this.usageHead + JSON.stringify(usageToChat(this.usage)) + "}\n\n");
    this.write(SSE_DONE);
  }

  /** The in-band error frame and `[DONE]`; no finish chunk (SPEC 6.4). */
  private fail(err: HubError): void {
    this.closed = true;
    this.write("data: " + JSON.stringify(errorBody(err)) + "\n\n" + SSE_DONE);
  }
}

/**
 * The warning of a legacy `functions` request's reply that held `calls` calls: only the first reached
 * the client as `function_call` (the stream encoder's and {@link encodeResponse}'s).
 */
export function legacyLeftOut(calls: number): string {
  const rest = calls - 1;
  return `The reply held ${calls} function calls; a request with the legacy functions parameter gets one, as function_call: the first was sent, ${rest} ${rest === 1 ? "was" : "were"} left out. Declare the functions as tools to get every call.`;
}

/** Creates a Chat stream encoder writing SSE text into `write` (codec contract). */
export function createEncoder(opts: EncoderOptions, write: (text: string) => void): StreamEncoder {
  return new ChatEncoder(opts, write);
}
