/**
 * Chat Completions SSE (provider bytes) → loose hub events (REFERENCE §2.3; normalised afterwards by
 * formats/normalize.ts, whose decoder-side contract this follows).
 *
 * Per stream it keeps: whether `message_start` went out, the open text/thinking block key, one slot per
 * upstream tool-call `index` (id, name, arguments so far, whether its block started), whether the
 * finish arrived, and a refusal latch. Blocks are keyed: text/thinking by a counter from 0, tool calls
 * -1, -2, … in order of appearance (so keys never collide). A call is found by its id when it repeats
 * one, else by its upstream `index`; a new id at an index already in use starts a new call (servers
 * that put every parallel call at index 0); a fragment with neither continues the last call.
 *
 * Quirks it survives (REFERENCE §2.3 list, `recorded/openai-chat/*` + manifest):
 * - first tool call at `index: 1`, arguments starting with `""` fragments (tool-call-index-1.sse);
 * - `id`/`type`/`name` repeated on every fragment, `"name": ""` on a continuation: the first non-empty
 *   id and name win, nothing is concatenated (tool-call-empty-name-continuation.sse);
 * - the name arriving after the id (B36): the block starts once the name is known, argument fragments
 *   that came before are held and sent as the block's first delta;
 * - whole arguments in one fragment, and whole arguments sent twice (a complete JSON object arriving
 *   when the arguments so far already are one is a repeat and is dropped);
 * - `arguments` sent as a JSON object instead of a string (serialised);
 * - missing `role`, missing `index` on a tool call, `choices: []` chunks (Azure
 *   `prompt_filter_results`, usage-only chunks), empty `id`/`model`; a reply of only such chunks is an
 *   empty one: a refusal (raw `content_filter`) when a prompt filter result says `filtered: true`, else,
 *   after `[DONE]`, {@link EMPTY_REPLY_ERROR} rather than a truncation (as response.ts reads a JSON body
 *   with `choices: []`); so is a stream of `[DONE]` alone;
 * - usage on the finish chunk, on every chunk, as `usage: null`, or in `x_groq.usage`; `total_tokens`
 *   not the sum (see {@link usageFromChat});
 * - `finish_reason: "stop"` after tool calls (the normalizer promotes it to `tool_use`);
 * - a missing `[DONE]`: a finish_reason then EOF is complete; no finish_reason then EOF is left to the
 *   normalizer, which reports a truncated stream (SPEC 6.4);
 * - `delta.reasoning_content` (DeepSeek, xAI) / `delta.reasoning` (OpenRouter, vLLM) → thinking;
 *   `delta.reasoning_details` (OpenRouter) adds signatures and encrypted reasoning, and text only when
 *   the plain field is absent (OpenRouter sends both); Mistral's array `content` with `thinking` parts;
 * - in-band `{"error":…}` / vLLM `{"object":"error",…}` frames, an `event: error` SSE event, and the
 *   failure finish reasons `error` / `insufficient_system_resource` → hub `error` (nothing after it);
 * - vLLM `stop_reason` / SGLang `matched_stop` naming the stop string → `stop_sequence`;
 * - `delta.audio` and `delta.annotations` have no hub slot: left out, named in `dropped`.
 * - `choices[].logprobs.content` (asked for with `logprobs: true`) → the `logprobs` of the chunk's text
 *   delta; `logprobs: null` (every chunk of a stream that did not ask) costs one field check.
 *
 * Hot path: one `JSON.parse` per SSE event and plain property checks, no valibot; a content-only delta
 * that repeats an earlier one's bytes around its text is read without the parse (content-template.ts).
 */
import type { DecoderOptions, StreamDecoder, TextDeltaSink } from "../codec.ts";
import type { HubError, HubEvent, StopReason, TokenLogprob } from "../hub.ts";
import { readOpenAILogprobs } from "../openai-common/logprobs.ts";
import { upstreamNestedTooDeep, valueNestsDeeperThan } from "../json-depth.ts";
import { SseReader, tryParseJson, type SseEvent, type SseQuickLook } from "../sse.ts";
import { ContentTemplate } from "./content-template.ts";
import { chatShapes, ShapeKind, type ShapeBook } from "./chunk-shapes.ts";
import { errorFromPayload } from "./errors.ts";
import { finishIsFailure, promptFiltered, shortHash, stopFromChat, usageFromChat } from "./mapping.ts";
import { isObj } from "../json.ts";
import { clientToolName } from "../tool-names.ts";

interface Slot {
  /** Block key: -1, -2, … in order of appearance. */
  key: number;
  id: string;
  name: string;
  started: boolean;
  /** All argument text received so far (for the repeat check). */
  args: string;
  /** Argument text received before the block could start (name unknown yet). */
  pending: string;
  /** A call of a `custom` tool: its raw input goes out as the hub's `{"input": "…"}` (custom-calls.ts), closed at the finish. */
  custom?: boolean;
}

const KIND_NONE = 0;
const KIND_TEXT = 1;
const KIND_THINKING = 2;
/** A refusal (`delta.refusal`): a text block marked as the model's refusal. */
const KIND_REFUSAL = 3;
/** How many times a stream learns a {@link ContentTemplate} (again when the last one stopped matching). */
const TEMPLATE_LEARNS = 2;

/**
 * The error of a stream that the provider ended (`[DONE]`) after only `choices: []` chunks and no prompt
 * filter result saying why: an empty reply, not a cut-off one (502, `upstream_empty_reply`).
 */
export const EMPTY_REPLY_ERROR: HubError = {
  kind: "api_error",
  status: 502,
  message: "The upstream ended its reply without any choice: no content and no finish reason.",
  code: "upstream_empty_reply",
};

/** Whether `text` is one complete JSON value (used only on the rare repeated-arguments path). */
function isCompleteJson(text: string): boolean {
  return tryParseJson(text) !== undefined;
}

/** {@link ShapeBook.match}'s kinds for each state of the decoder (see {@link ChatDecoder.shaped}). */
const ROLE_ONLY = 1 << ShapeKind.Role;
const USAGE_ONLY = 1 << ShapeKind.Usage;
const ANY_KIND = ROLE_ONLY | USAGE_ONLY | (1 << ShapeKind.Content) | (1 << ShapeKind.Finish);

/** Whether a delta adds nothing to the reply: only a `role`, an empty or null `content`, a null `refusal`. */
function inertDelta(d: Record<string, any>): boolean {
  for (const k in d) {
    const v = d[k];
    if (k === "role" ? typeof v !== "string" : k === "content" ? v !== "" && v !== null : k !== "refusal" || v !== null) return false;
  }
  return true;
}

/** Whether a delta's only field the decoder reads is its `content` (what {@link ChatDecoder} learns a template from). */
function contentOnly(d: Record<string, any>): boolean {
  return d.reasoning_content == null && d.reasoning == null && d.reasoning_details == null && d.refusal == null && d.tool_calls == null && d.function_call == null && d.audio == null && d.annotations == null;
}

/** The incremental Chat decoder; see the module comment. */
export class ChatDecoder implements StreamDecoder {
  private readonly reader: SseReader;
  private started = false;
  private finished = false;
  private failed = false;
  private sawDone = false;
  /** {@link StreamDecoder.sawEndMarker}: the stream's `data: [DONE]` was read. */
  get sawEndMarker(): boolean {
    return this.sawDone;
  }
  private kind = KIND_NONE;
  private key = -1;
  private nextKey = 0;
  /** Tool-call slots in the order they appeared. */
  private readonly slots: Slot[] = [];
  /** Upstream `index` → the slot it currently addresses (made at the first tool call: most streams have none). */
  private byIndex: Map<number, Slot> | undefined;
  /** Call id → its slot (made with {@link byIndex}). */
  private byId: Map<string, Slot> | undefined;
  private lastSlot: Slot | undefined;
  private sawRefusal = false;
  /** Per-stream salt of synthesized call ids, drawn when the first one is needed (most streams never do). */
  private nonce: string | undefined;
  private synthesized = 0;
  /** The learned content-only delta event (see content-template.ts), and how often one was learned. */
  private template: ContentTemplate | undefined;
  private learns = 0;
  /** The {@link ShapeKind}s this stream offered to the shape book (bit per kind: each at most once per stream). */
  private shapesOffered = 0;
  /** The log probabilities of the chunk being decoded, for its content delta (set only around `onDelta`). */
  private logprobs: TokenLogprob[] | undefined;
  /** StreamDecoder.dropped: what the deltas carried that the hub has no slot for (`audio`, `annotations`). */
  dropped: string[] | undefined;
  /** StreamDecoder.progress: deltas of what the hub leaves out (audio, annotations) read, for the keep-alive bound. */
  progress = 0;
  /** A chunk (a JSON object) was read, and one of them had a choice: a reply of only `choices: []` chunks is an empty one ({@link end}). */
  private sawChunk = false;
  private sawChoice = false;
  /** A `choices: []` chunk's `prompt_filter_results` said a prompt was filtered (Azure's content filter). */
  private promptFiltered = false;

  /** `emitText`: where text deltas without log probabilities go instead of `emit`, when given (codec.ts {@link TextDeltaSink}). */
  constructor(
    private readonly opts: DecoderOptions,
    private readonly emit: (ev: HubEvent) => void,
    private readonly emitText?: TextDeltaSink,
  ) {
    this.reader = new SseReader(
      (ev) => this.onEvent(ev),
      undefined,
      (text, start, end) => this.quick(text, start, end),
    );
  }

  push(chunk: Uint8Array): void {
    if (this.failed) return;
    this.reader.push(chunk);
  }

  end(): void {
    this.reader.end();
    // A reply of only `choices: []` chunks (usage, Azure's prompt filter results) is an empty reply, as
    // a JSON body with `choices: []` is (response.ts noChoicesReply): a refusal when a prompt filter
    // result said so; else, once the provider ended it with `[DONE]`, an empty reply without a finish,
    // which a stream cannot carry (nothing is invented, SPEC F-6): its error says what came.
    // `[DONE]` with no chunk before it at all is the same empty reply (SPEC 6.3's last row: a 200 with
    // nothing usable, the next target, no cooldown), not a cut one: nothing was begun, so nothing was cut.
    if ((this.sawChunk || this.sawDone) && !this.sawChoice && !this.finished && !this.failed) {
      if (this.promptFiltered) {
        this.finished = true;
        this.emit({ type: "finish", reason: "refusal", raw: "content_filter" });
      } else if (this.sawDone) this.fail(EMPTY_REPLY_ERROR);
    }
    // Otherwise, without a finish (or error) the normalizer reports the truncation; nothing is invented here.
  }

  // ---------------------------------------------------------------------------------------------

  /** Names a kind of content left out ({@link dropped}), once. */
  private drop(kind: string): void {
    if (!(this.dropped ??= []).includes(kind)) this.dropped.push(kind);
  }

  private fail(error: HubError): void {
    if (this.failed) return;
    this.failed = true;
    this.emit({ type: "error", error });
  }

  /**
   * The SSE reader's quick look at an unnamed one-line event (formats/sse.ts {@link SseQuickLook}): a
   * content-only delta matching the learned template is read in place, as {@link onEvent} would read
   * it, without an event object or a data string; anything else is left to {@link onEvent}.
   */
  private quick(text: string, start: number, end: number): boolean {
    if (this.failed || this.sawDone) return false;
    const template = this.template;
    if (template !== undefined && !this.finished) {
      const content = template.matchAt(text, start, end);
      if (content !== undefined) {
        if (content.length > 0) this.text(content, template.plain);
        return true;
      }
    }
    return this.shaped(text, start, end);
  }

  /**
   * An event matching a chunk shape learned from an earlier stream (chunk-shapes.ts: the role chunk,
   * a content delta, the finish, the usage chunk), decoded from its hole values as {@link onEvent}
   * would decode it in this state; false (the full path) when none matches, a hole's value is not valid
   * JSON of its kind, or this state would make the full path do more (open the message first).
   */
  private shaped(text: string, start: number, end: number): boolean {
    // Before the message opens only a role chunk can be read from its shape; after the finish only usage.
    const kinds = !this.started ? ROLE_ONLY : this.finished ? USAGE_ONLY : ANY_KIND;
    const shape = chatShapes.match(text, start, end, kinds);
    if (shape === undefined || !shape.validStrings(text)) return false;
    const kind = shape.kind;
    if (kind === ShapeKind.Usage) {
      if (!this.started) return false;
      const raw = shape.usageOf(text);
      if (raw === undefined) return false;
      this.sawChunk = true;
      const usage = usageFromChat(raw);
      if (usage) this.emit({ type: "usage", usage });
    } else if (this.finished || (kind !== ShapeKind.Role && !this.started)) {
      return false;
    } else if (kind === ShapeKind.Content) {
      const content = shape.contentOf(text);
      if (content === undefined) return false;
      this.sawChunk = this.sawChoice = true;
      const parts = shape.templateParts(text);
      if (parts !== undefined) this.template = ContentTemplate.of(parts);
      if (content.length > 0) this.text(content, shape.plain);
    } else {
      this.sawChunk = this.sawChoice = true;
      if (kind === ShapeKind.Finish) this.onFinish(shape.finish, shape.stopFields);
      else if (!this.started) {
        this.started = true;
        const start: HubEvent = { type: "message_start" };
        const id = shape.idOf(text);
        if (id) start.id = id;
        if (shape.model !== undefined) start.model = shape.model;
        this.emit(start);
      }
    }
    chatShapes.hit(kind);
    return true;
  }

  /**
   * Offers an event the full path decoded to the shape book (chunk-shapes.ts) when all it did is one
   * {@link ShapeKind}'s work: the checks here are what makes the shape's decoding exact.
   */
  private offerShape(data: string, chunk: Record<string, any>, choice: Record<string, any> | undefined, hasChoices: boolean, usageRaw: unknown, finishing: boolean): void {
    if (chunk.error != null || chunk.object === "error" || chunk.prompt_filter_results !== undefined || chunk.x_groq !== undefined) return;
    let kind: ShapeKind;
    if (hasChoices) {
      if (choice === undefined || usageRaw != null || choice.logprobs != null) return;
      const d = choice.delta;
      if (!isObj(d)) return;
      if (finishing) {
        if (!inertDelta(d)) return;
        kind = ShapeKind.Finish;
      } else if (typeof d.content === "string" && d.content.length > 0 && contentOnly(d)) kind = ShapeKind.Content;
      else if (inertDelta(d)) kind = ShapeKind.Role;
      else return;
    } else {
      if (!isObj(usageRaw) || !Array.isArray(chunk.choices)) return;
      kind = ShapeKind.Usage;
    }
    const bit = 1 << kind;
    if ((this.shapesOffered & bit) !== 0 || !chatShapes.wants(kind)) return;
    this.shapesOffered |= bit;
    chatShapes.learn(kind, data, chunk, choice);
  }

  private onEvent(ev: SseEvent): void {
    if (this.failed || this.sawDone) return;
    const data = ev.data;
    if (data === "[DONE]") {
      this.sawDone = true;
      return;
    }
    const template = this.template;
    if (template !== undefined && ev.event === undefined && !this.finished) {
      // Same bytes as a content-only delta decoded before, but for its text: the full path would only add the text.
      const text = template.match(data);
      if (text !== undefined) {
        if (text.length > 0) this.text(text, template.plain);
        return;
      }
    }
    const chunk = tryParseJson(data);
    if (!isObj(chunk)) {
      this.fail({
        kind: "api_error",
        status: 502,
        message: "The upstream sent a stream event that is not a JSON object.",
        code: "upstream_invalid_event",
      });
      return;
    }
    if (chunk.error !== undefined && chunk.error !== null) {
      this.fail(errorFromPayload(chunk) ?? { kind: "api_error", status: 500, message: "The upstream reported an error." });
      return;
    }
    if (chunk.object === "error" || ev.event === "error") {
      this.fail(errorFromPayload({ error: chunk }) ?? { kind: "api_error", status: 500, message: "The upstream reported an error." });
      return;
    }

    const choices = chunk.choices;
    const hasChoices = Array.isArray(choices) && choices.length > 0;
    this.sawChunk = true;
    if (hasChoices) this.sawChoice = true;
    else if (!this.promptFiltered && chunk.prompt_filter_results !== undefined) this.promptFiltered = promptFiltered(chunk.prompt_filter_results);
    const usageRaw = chunk.usage ?? (isObj(chunk.x_groq) ? chunk.x_groq.usage : undefined);
    if (!this.started && (hasChoices || isObj(usageRaw) || (typeof chunk.id === "string" && chunk.id.length > 0))) {
      this.started = true;
      const start: HubEvent = { type: "message_start" };
      if (typeof chunk.id === "string" && chunk.id) start.id = chunk.id;
      if (typeof chunk.model === "string" && chunk.model) start.model = chunk.model;
      this.emit(start);
    }

    let choice: Record<string, any> | undefined;
    if (hasChoices) {
      // One choice is all the hub carries (n > 1 is not translated): choice index 0.
      for (let i = 0; i < choices.length; i++) {
        const c = choices[i];
        if (isObj(c) && (c.index === 0 || c.index === undefined)) {
          choice = c;
          break;
        }
      }
    }
    if (choice && !this.finished && isObj(choice.delta)) {
      // `logprobs` (asked for with `logprobs: true`): `{content: [...]}` for this chunk's content tokens.
      const lp = choice.logprobs;
      this.logprobs = lp != null && isObj(lp) ? readOpenAILogprobs(lp.content) : undefined;
      this.onDelta(choice.delta);
      this.logprobs = undefined;
    }

    const usage = usageFromChat(usageRaw);
    if (usage) this.emit({ type: "usage", usage });

    let finishing = false;
    if (choice && !this.finished) {
      const fr = choice.finish_reason;
      finishing = typeof fr === "string" && fr.length > 0;
      if (finishing) this.onFinish(fr, choice);
    }
    if (!finishing && !usage && choice && ev.event === undefined && this.learns < TEMPLATE_LEARNS && !this.failed && !this.finished) this.learn(data, chunk, choice);
    if (ev.event === undefined && !this.failed) this.offerShape(data, chunk, choice, hasChoices, usageRaw, finishing);
  }

  /**
   * Learns the event as the stream's content-delta template when all the full path did with it was
   * to add its text: a non-empty `content` and no other delta field the decoder reads (no usage, no
   * finish: checked by the caller).
   */
  private learn(data: string, chunk: Record<string, any>, choice: Record<string, any>): void {
    const d = choice.delta;
    if (!isObj(d) || typeof d.content !== "string" || d.content.length === 0 || choice.logprobs != null) return;
    if (d.reasoning_content != null || d.reasoning != null || d.reasoning_details != null || d.refusal != null || d.tool_calls != null || d.function_call != null) return;
    if (d.audio != null || d.annotations != null) return;
    this.learns++;
    this.template = ContentTemplate.learn(data, chunk);
  }

  private onDelta(delta: Record<string, any>): void {
    // Reasoning first: providers that send both in one chunk produce reasoning before the answer.
    const reasoning = typeof delta.reasoning_content === "string" ? delta.reasoning_content : typeof delta.reasoning === "string" ? delta.reasoning : undefined;
    if (reasoning) this.thinking(reasoning);
    const details = delta.reasoning_details;
    if (Array.isArray(details) && details.length > 0) this.onReasoningDetails(details, reasoning !== undefined);

    const content = delta.content;
    if (typeof content === "string") {
      if (content.length > 0) this.text(content);
    } else if (Array.isArray(content)) {
      this.onContentParts(content);
    }
    const refusal = delta.refusal;
    if (typeof refusal === "string" && refusal.length > 0) {
      this.sawRefusal = true;
      this.ensureKind(KIND_REFUSAL);
      this.emit({ type: "block_delta", index: this.key, delta: { type: "text", text: refusal } });
    }

    // Audio output and URL citations have no hub slot: named for the reply's warning (decodeResponse's names).
    if (delta.audio != null) {
      this.drop("audio");
      this.progress++;
    }
    if (delta.annotations != null && Array.isArray(delta.annotations) && delta.annotations.length > 0) {
      this.drop("annotations");
      this.progress++;
    }

    const calls = delta.tool_calls;
    if (Array.isArray(calls)) {
      for (let i = 0; i < calls.length; i++) {
        const tc = calls[i];
        if (isObj(tc)) this.onToolCall(tc);
        if (this.failed) return;
      }
    } else if (isObj(delta.function_call)) {
      // Deprecated single function call: one slot, index 0.
      this.onToolCall({ index: 0, function: delta.function_call });
    }
  }

  /** Mistral-style array content: `[{type:"text",text}]`, `[{type:"thinking",thinking:[{type:"text",text}]}]`. */
  private onContentParts(parts: unknown[]): void {
    for (const p of parts) {
      if (!isObj(p)) continue;
      if (p.type === "text" && typeof p.text === "string" && p.text.length > 0) this.text(p.text);
      else if (p.type === "thinking") {
        const t = p.thinking;
        if (typeof t === "string") {
          if (t.length > 0) this.thinking(t);
        } else if (Array.isArray(t)) {
          for (const q of t) if (isObj(q) && typeof q.text === "string" && q.text.length > 0) this.thinking(q.text);
        }
      }
    }
  }

  /**
   * OpenRouter `reasoning_details`: `reasoning.text` (text + optional signature), `reasoning.summary`,
   * `reasoning.encrypted` (opaque `data` → redacted thinking). Text is taken only when the plain
   * `reasoning` field did not already carry it.
   */
  private onReasoningDetails(details: unknown[], hadPlain: boolean): void {
    for (const d of details) {
      if (!isObj(d)) continue;
      if (d.type === "reasoning.text") {
        if (!hadPlain && typeof d.text === "string" && d.text.length > 0) this.thinking(d.text);
        if (typeof d.signature === "string" && d.signature.length > 0) {
          this.ensureKind(KIND_THINKING);
          this.emit({ type: "block_delta", index: this.key, delta: { type: "signature", signature: { family: this.opts.family, value: d.signature } } });
        }
      } else if (d.type === "reasoning.summary") {
        if (!hadPlain && typeof d.summary === "string" && d.summary.length > 0) this.thinking(d.summary);
      } else if (d.type === "reasoning.encrypted" && typeof d.data === "string" && d.data.length > 0) {
        this.closeKind();
        const key = this.nextKey++;
        this.emit({ type: "block_start", index: key, block: { type: "redacted_thinking", data: { family: this.opts.family, value: d.data } } });
        this.emit({ type: "block_stop", index: key });
      }
    }
  }

  private closeKind(): void {
    if (this.kind !== KIND_NONE) {
      this.emit({ type: "block_stop", index: this.key });
      this.kind = KIND_NONE;
    }
  }

  private ensureKind(kind: number): void {
    if (this.kind === kind) return;
    this.closeKind();
    this.kind = kind;
    this.key = this.nextKey++;
    this.emit({ type: "block_start", index: this.key, block: kind === KIND_TEXT ? { type: "text" } : kind === KIND_REFUSAL ? { type: "text", refusal: true } : { type: "thinking" } });
  }

  /** A text delta; `plain` as for {@link TextDeltaSink} (true only when known). */
  private text(text: string, plain = false): void {
    this.ensureKind(KIND_TEXT);
    const logprobs = this.logprobs;
    if (logprobs === undefined) {
      if (this.emitText !== undefined) this.emitText(this.key, text, plain);
      else this.emit({ type: "block_delta", index: this.key, delta: { type: "text", text } });
    } else {
      this.logprobs = undefined; // a chunk's tokens go with its first text
      this.emit({ type: "block_delta", index: this.key, delta: { type: "text", text, logprobs } });
    }
  }

  private thinking(text: string): void {
    this.ensureKind(KIND_THINKING);
    this.emit({ type: "block_delta", index: this.key, delta: { type: "thinking", text } });
  }

  private onToolCall(tc: Record<string, any>): void {
    const byIndex = (this.byIndex ??= new Map());
    const byId = (this.byId ??= new Map());
    const id = typeof tc.id === "string" ? tc.id : "";
    const index = typeof tc.index === "number" && Number.isInteger(tc.index) && tc.index >= 0 ? tc.index : undefined;
    let slot = id ? byId.get(id) : undefined;
    if (!slot) {
      if (index !== undefined) {
        const cur = byIndex.get(index);
        // Same index but a different id: a new call (servers that put every call at index 0).
        if (cur && !(id && cur.id && cur.id !== id)) slot = cur;
      } else if (this.lastSlot && !(id && this.lastSlot.id)) {
        // No index: a fragment without a (new) id continues the last call.
        slot = this.lastSlot;
      }
      if (!slot) {
        slot = { key: -1 - this.slots.length, id: "", name: "", started: false, args: "", pending: "" };
        this.slots.push(slot);
      }
      if (index !== undefined) byIndex.set(index, slot);
    }
    this.lastSlot = slot;
    if (!slot.id && id) {
      slot.id = id;
      byId.set(id, slot);
    }
    const fn = tc.function;
    let args = "";
    if (isObj(tc.custom) && !isObj(fn)) {
      // A custom tool's call (`custom: {name, input}`): its raw input pieces as pieces of one JSON string.
      const c = tc.custom;
      if (!slot.name && typeof c.name === "string" && c.name.length > 0) slot.name = c.name;
      const first = !slot.custom;
      slot.custom = true;
      const input = typeof c.input === "string" ? JSON.stringify(c.input).slice(1, -1) : "";
      args = first ? '{"input":"' + input : input;
    } else if (isObj(fn)) {
      if (!slot.name && typeof fn.name === "string" && fn.name.length > 0) slot.name = fn.name;
      const a = fn.arguments;
      if (typeof a === "string") args = a;
      else if (isObj(a) || Array.isArray(a)) {
        // Arguments sent as an object (not Chat's string) are serialised: nested past MAX_JSON_DEPTH, the stream fails instead (formats/json-depth.ts).
        if (valueNestsDeeperThan(a)) return this.fail(upstreamNestedTooDeep("tool-call arguments"));
        args = JSON.stringify(a);
      }
    }
    if (!slot.started && slot.name) this.startSlot(slot);
    if (args.length === 0) return;
    // Whole arguments sent again after they were complete (delta + final, possibly re-formatted):
    // a second complete JSON object after a complete one can only be a repeat.
    if (!slot.custom && slot.args.length > 0 && args.charCodeAt(0) === 123 /* { */ && isCompleteJson(slot.args) && isCompleteJson(args)) return;
    slot.args += args;
    if (slot.started) {
      this.emit({ type: "block_delta", index: slot.key, delta: { type: "tool_args", json: args } });
    } else {
      slot.pending += args;
    }
  }

  private startSlot(slot: Slot): void {
    this.closeKind();
    slot.started = true;
    if (!slot.id) {
      const nonce = (this.nonce ??= Math.random().toString(36).slice(2, 10));
      slot.id = `call_${nonce}${shortHash(`${nonce}:${this.synthesized++}`).slice(0, 8)}`;
    }
    // A name the builder changed for OpenAI's rule (formats/tool-names.ts): the client's.
    this.emit({ type: "block_start", index: slot.key, block: { type: "tool_call", id: slot.id, name: clientToolName(this.opts.toolNames, slot.name) } });
    if (slot.pending.length > 0) {
      this.emit({ type: "block_delta", index: slot.key, delta: { type: "tool_args", json: slot.pending } });
      slot.pending = "";
    }
  }

  private onFinish(raw: string, choice: Record<string, any>): void {
    if (finishIsFailure(raw)) {
      this.fail({
        kind: raw === "insufficient_system_resource" ? "overloaded" : "api_error",
        status: raw === "insufficient_system_resource" ? 503 : 502,
        message: `The upstream ended the reply with finish_reason "${raw}".`,
        code: raw,
      });
      return;
    }
    this.finished = true;
    this.closeKind();
    // Chat has no per-call stop: every tool block closes at the finish, in order of appearance.
    for (const s of this.slots) {
      if (!s.started) this.startSlot(s); // a call whose name never came: kept, not dropped
      if (s.custom) this.emit({ type: "block_delta", index: s.key, delta: { type: "tool_args", json: '"}' } });
      this.emit({ type: "block_stop", index: s.key });
    }
    let reason = stopFromChat(raw) as StopReason;
    const ev: HubEvent = { type: "finish", reason, raw };
    if (raw === "stop") {
      const matched = typeof choice.stop_reason === "string" ? choice.stop_reason : typeof choice.matched_stop === "string" ? choice.matched_stop : undefined;
      if (matched !== undefined) {
        reason = "stop_sequence";
        ev.stopSequence = matched;
      } else if (this.sawRefusal) {
        reason = "refusal";
      }
      ev.reason = reason;
    }
    this.emit(ev);
  }
}

/** Creates a Chat stream decoder (codec contract: never throws on malformed input, emits `error`). */
export function createDecoder(opts: DecoderOptions, emit: (ev: HubEvent) => void, emitText?: TextDeltaSink): StreamDecoder {
  return new ChatDecoder(opts, emit, emitText);
}
