/**
 * OpenAI Responses SSE (provider side) → loose hub events (REFERENCE §3.3; the canonical order is
 * restored by formats/normalize.ts).
 *
 * Robustness rules, each from a recorded stream (fixtures/recorded/openai-responses, manifest):
 * - items are keyed by `output_index`, never by id: GitHub Copilot rotates every id on every event
 *   (`rotating-item-ids.sse`); `item_id` is only read from `output_item.added`/`.done`;
 * - `response.created` may be missing (`incomplete-max-output-tokens.sse`): `message_start` is emitted
 *   from whatever lifecycle/terminal event comes first;
 * - `encrypted_content` is taken from `output_item.done`, not `.added`, where it differs
 *   (`reasoning-multi-summary-encrypted.sse`; REFERENCE §3.1);
 * - reasoning arrives as summary parts (`reasoning_summary_*`, one `thinking_part` delta per part) or as
 *   raw `reasoning_text` (`reasoning-text-function-call-cached.sse`, LM Studio); the thinking block
 *   is opened at its first content, with `raw` set accordingly;
 * - function calls whose arguments only come in `.done` (`function-call-no-argument-deltas.sse`), and
 *   text that only comes in `output_text.done` / `output_item.done` / the terminal `output`: every
 *   `.done` is reconciled with what was streamed, and the missing suffix is emitted (never twice:
 *   B09 streams deltas and repeats the text in `response.completed`);
 * - `error` then `response.failed` (`error-event.sse`), `response.failed` alone (`failed-only.sse`):
 *   one hub `error`, mapped from `error.code` (rate_limit_exceeded → rate_limit, insufficient_quota →
 *   quota_exhausted, context_length_exceeded, server_error → api_error; REFERENCE §5.2);
 * - usage only from the terminal response (a `response.failed` one's too, emitted before its error:
 *   the provider bills it): `inputTokens = input_tokens − cached_tokens`, `cacheReadTokens =
 *   cached_tokens`, reasoning tokens kept (§5.10);
 * - `response.incomplete` `max_output_tokens` → finish `max_tokens`, `content_filter` → `refusal`.
 * - a `refusal` content part is a text block marked `refusal`; a `completed` reply that carried one
 *   (and no tool call) finishes as `refusal`.
 * - `custom_tool_call` items (freeform tools) become tool calls with arguments `{"input":"…"}`,
 *   streamed by JSON-escaping each input fragment.
 * - `logprobs` of `output_text.delta` events (asked for with `include: ["message.output_text.logprobs"]`)
 *   → the text delta's `logprobs`; text that only comes in a final form takes that form's `logprobs`.
 * - hosted tools' items (`web_search_call`, `image_generation_call`, …) have no hub slot: left out and
 *   named in `dropped` (StreamDecoder), for the reply's warning; their items and progress events are
 *   counted in `progress`, and the items started and not done in `serverTools` (StreamDecoder), for
 *   the keep-alive bound.
 * EOF without a terminal event emits nothing here: the normalizer's `end()` reports the truncation.
 */
import { hubError, type BlockStart, type HubEvent, type ProviderFamily, type TokenLogprob } from "../hub.ts";
import { readOpenAILogprobs } from "../openai-common/logprobs.ts";
import type { DecoderOptions, StreamDecoder } from "../codec.ts";
import { SseReader, type SseEvent } from "../sse.ts";
import { fromResponsesUsage, HUB_ITEMS, stopForTerminal } from "./common.ts";
import { hubErrorFromOpenAi } from "./errors.ts";
import { clientToolName } from "../tool-names.ts";

type Json = Record<string, any>;


interface PartState {
  key: number;
  started: boolean;
  /** Text streamed so far (for reconciling `.done`). */
  text: string;
  /** A `refusal` content part (its block is a text block marked `refusal`). */
  refusal?: boolean;
}

interface ItemState {
  type: string;
  index: number;
  id?: string;
  done: boolean;
  // message
  phase?: string;
  parts?: Map<number, PartState>;
  // reasoning / tool call: one block
  key: number;
  started: boolean;
  raw?: boolean;
  /** Reasoning summary text streamed per summary index (undefined = part never opened). */
  summaries?: string[];
  /** Raw reasoning text streamed per content index. */
  rawTexts?: string[];
  encrypted?: string;
  // function / custom tool call
  callId?: string;
  name?: string;
  namespace?: string;
  /** Arguments (function) or raw input (custom) streamed so far. */
  args: string;
  /** Argument fragments that arrived before the call could be started (no `.added`). */
  pending: string;
}


const MALFORMED = () =>
  hubError("api_error", "The upstream sent a malformed stream event.", { status: 502, code: "upstream_malformed" });

/** JSON-escapes a string fragment without the surrounding quotes (fragments concatenate correctly). */
function escapeFragment(s: string): string {
  return JSON.stringify(s).slice(1, -1);
}

class ResponsesDecoder implements StreamDecoder {
  private readonly reader: SseReader;
  private readonly items = new Map<number, ItemState>();
  private nextKey = 0;
  private started = false;
  private ended = false;
  private sawTool = false;
  /** A refusal part was emitted: a `completed` reply without tool calls then ends as `refusal`. */
  private sawRefusal = false;
  /** end() is flushing: an unparsable last event is a truncation, not a malformed stream. */
  private atEof = false;
  /** A reasoning item was added (StreamDecoder.begun): its block opens only with its content. */
  begun = false;
  /** StreamDecoder.dropped: the kinds of item left out (hosted tools' items: `web_search_call item`, …). */
  dropped: string[] | undefined;
  /** StreamDecoder.progress: hosted tools' items added and done, and the events of an output item it does not read (a web search's progress, annotations). */
  progress = 0;
  /** StreamDecoder.serverTools: hosted tools' items (the types the hub has no slot for) started and not yet done. */
  serverTools = 0;
  private readonly family: ProviderFamily;
  /** Provider tool name → the client's (DecoderOptions.toolNames: names the builder had to change). */
  private readonly toolNames: Record<string, string> | undefined;

  constructor(
    opts: DecoderOptions,
    private readonly emit: (ev: HubEvent) => void,
  ) {
    this.family = opts.family;
    this.toolNames = opts.toolNames;
    this.reader = new SseReader((e) => this.onSse(e));
  }

  push(chunk: Uint8Array): void {
    if (!this.ended) this.reader.push(chunk);
  }

  end(): void {
    if (this.ended) return;
    // A final event without its blank line is still an event (some servers close right after the
    // last `data:` line): SseReader.end() dispatches it. A cut-off event then fails to parse and is
    // ignored: the normalizer reports the truncation.
    this.atEof = true;
    this.reader.end();
  }

  // ---------------------------------------------------------------------------------------------

  private onSse(e: SseEvent): void {
    if (this.ended) return;
    const data = e.data;
    if (data.length === 0 || data === "[DONE]") return;
    let ev: Json;
    try {
      ev = JSON.parse(data) as Json;
    } catch {
      if (!this.atEof) this.fail(MALFORMED());
      return;
    }
    if (!ev || typeof ev !== "object") {
      this.fail(MALFORMED());
      return;
    }
    const type: string = typeof ev.type === "string" ? ev.type : (e.event ?? "");
    switch (type) {
      case "response.created":
      case "response.in_progress":
      case "response.queued":
        this.start(ev.response);
        return;
      case "response.output_item.added":
        this.onItemAdded(ev);
        return;
      case "response.output_item.done":
        this.onItemDone(ev);
        return;
      case "response.content_part.added":
        this.onPartAdded(ev);
        return;
      case "response.output_text.delta":
      case "response.refusal.delta":
        this.onTextDelta(ev);
        return;
      case "response.output_text.done":
        this.onTextDone(ev, ev.text);
        return;
      case "response.refusal.done":
        this.onTextDone(ev, ev.refusal);
        return;
      case "response.content_part.done":
        this.onPartDone(ev);
        return;
      case "response.reasoning_summary_part.added":
        this.onSummaryPart(ev);
        return;
      case "response.reasoning_summary_text.delta":
        this.onSummaryDelta(ev, typeof ev.delta === "string" ? ev.delta : "", false);
        return;
      case "response.reasoning_summary_text.done":
        this.onSummaryDelta(ev, typeof ev.text === "string" ? ev.text : "", true);
        return;
      case "response.reasoning_summary_part.done":
        this.onSummaryDelta(ev, typeof ev.part?.text === "string" ? ev.part.text : "", true);
        return;
      case "response.reasoning_text.delta":
        this.onRawReasoning(ev, typeof ev.delta === "string" ? ev.delta : "", false);
        return;
      case "response.reasoning_text.done":
        this.onRawReasoning(ev, typeof ev.text === "string" ? ev.text : "", true);
        return;
      case "response.function_call_arguments.delta":
      case "response.custom_tool_call_input.delta":
        this.onArgs(ev, typeof ev.delta === "string" ? ev.delta : "", false);
        return;
      case "response.function_call_arguments.done":
        this.onArgs(ev, typeof ev.arguments === "string" ? ev.arguments : undefined, true);
        return;
      case "response.custom_tool_call_input.done":
        this.onArgs(ev, typeof ev.input === "string" ? ev.input : undefined, true);
        return;
      case "response.completed":
      case "response.incomplete":
        this.onTerminal(ev.response, type === "response.incomplete" ? "incomplete" : "completed");
        return;
      case "response.failed": {
        const r = ev.response as Json | undefined;
        this.start(r);
        // The failed response's usage is what the provider bills for the attempt: passed on before
        // the error, so the tap and accounting record it (as a native Responses client's tap does).
        const usage = fromResponsesUsage(r?.usage, r?.output);
        if (usage) this.emit({ type: "usage", usage });
        this.fail(hubErrorFromOpenAi(r?.error ?? { code: "server_error", message: "The upstream response failed." }, 0));
        return;
      }
      case "error": {
        const inner = ev.error && typeof ev.error === "object" ? (ev.error as Json) : ev;
        this.start(undefined);
        this.fail(hubErrorFromOpenAi(inner, 0));
        return;
      }
      default:
        // Annotations, a hosted tool's progress (web_search_call.searching, …): upstream work on an
        // output item, counted (progress); keep-alives and other new event types: ignored.
        if (typeof ev.output_index === "number") this.progress++;
        return;
    }
  }

  private start(response: Json | undefined): void {
    if (this.started) return;
    this.started = true;
    const ev: HubEvent & { type: "message_start" } = { type: "message_start" };
    if (response && typeof response.id === "string") ev.id = response.id;
    if (response && typeof response.model === "string") ev.model = response.model;
    this.emit(ev);
  }

  private fail(err: ReturnType<typeof hubError>): void {
    this.ended = true;
    this.emit({ type: "error", error: err });
  }

  private item(index: unknown, type?: string): ItemState | undefined {
    if (typeof index !== "number") return undefined;
    let it = this.items.get(index);
    if (!it && type) {
      it = { type, index, done: false, key: -1, started: false, args: "", pending: "" };
      this.items.set(index, it);
      if (!HUB_ITEMS.has(type)) {
        this.progress++;
        this.serverTools++; // until its item is done (finishItem)
        // A hosted tool's item (web_search_call, image_generation_call, …): named as decodeResponse names it.
        const kind = `${type} item`;
        if (!(this.dropped ??= []).includes(kind)) this.dropped.push(kind);
      }
    }
    return it;
  }

  // ---- items -----------------------------------------------------------------------------------

  private onItemAdded(ev: Json): void {
    const raw = ev.item as Json | undefined;
    if (!raw || typeof raw.type !== "string") return;
    this.start(undefined);
    const it = this.item(ev.output_index, raw.type);
    if (!it || it.done) return;
    if (typeof raw.id === "string" && it.id === undefined) it.id = raw.id;
    switch (raw.type) {
      case "message":
        if (typeof raw.phase === "string") it.phase = raw.phase;
        return;
      case "reasoning":
        this.begun = true;
        if (typeof raw.encrypted_content === "string") it.encrypted = raw.encrypted_content;
        return;
      case "function_call":
      case "custom_tool_call":
        this.startCall(it, raw);
        if (raw.type === "function_call" && typeof raw.arguments === "string" && raw.arguments.length > 0) {
          this.pushArgs(it, raw.arguments);
        } else if (raw.type === "custom_tool_call" && typeof raw.input === "string" && raw.input.length > 0) {
          this.pushArgs(it, raw.input);
        }
        return;
    }
  }

  private onItemDone(ev: Json): void {
    const raw = ev.item as Json | undefined;
    if (!raw || typeof raw.type !== "string") return;
    this.start(undefined);
    const it = this.item(ev.output_index, raw.type);
    if (!it || it.done) return;
    this.finishItem(it, raw);
  }

  /** Completes an item from its final form (`output_item.done`, or the terminal `output[i]`). */
  private finishItem(it: ItemState, raw: Json | undefined): void {
    if (it.done) return;
    it.done = true;
    if (raw && typeof raw.id === "string" && it.id === undefined) it.id = raw.id;
    switch (it.type) {
      case "message": {
        if (raw && typeof raw.phase === "string" && it.phase === undefined) it.phase = raw.phase;
        const content = Array.isArray(raw?.content) ? (raw!.content as Json[]) : [];
        for (let ci = 0; ci < content.length; ci++) {
          const c = content[ci]!;
          const text = typeof c.text === "string" ? c.text : typeof c.refusal === "string" ? c.refusal : undefined;
          if (c.type === "refusal") this.markRefusal(it, ci);
          if (text !== undefined) this.reconcileText(it, ci, text, c.logprobs);
        }
        if (it.parts) for (const p of it.parts.values()) if (p.started) this.emit({ type: "block_stop", index: p.key });
        return;
      }
      case "reasoning": {
        if (raw && typeof raw.encrypted_content === "string" && raw.encrypted_content.length > 0) it.encrypted = raw.encrypted_content;
        const summary = Array.isArray(raw?.summary) ? (raw!.summary as Json[]) : [];
        for (let s = 0; s < summary.length; s++) {
          const text = summary[s]?.text;
          if (typeof text === "string") this.reconcileSummary(it, s, text);
        }
        const content = Array.isArray(raw?.content) ? (raw!.content as Json[]) : [];
        for (let ci = 0; ci < content.length; ci++) {
          const text = content[ci]?.text;
          if (typeof text === "string") this.reconcileRaw(it, ci, text);
        }
        if (it.encrypted) {
          this.ensureThinking(it, false);
          this.emit({ type: "block_delta", index: it.key, delta: { type: "signature", signature: { family: this.family, value: it.encrypted } } });
        }
        if (it.started) this.emit({ type: "block_stop", index: it.key });
        return;
      }
      case "function_call":
      case "custom_tool_call": {
        const custom = it.type === "custom_tool_call";
        if (!it.started && raw) this.startCall(it, raw);
        if (!it.started) return;
        const final = custom ? raw?.input : raw?.arguments;
        if (typeof final === "string") this.reconcileArgs(it, final);
        if (custom) this.emit({ type: "block_delta", index: it.key, delta: { type: "tool_args", json: '"}' } });
        this.emit({ type: "block_stop", index: it.key });
        return;
      }
      default:
        this.progress++;
        if (this.serverTools > 0) this.serverTools--;
        return; // web_search_call, image_generation_call, …: no hub representation
    }
  }

  // ---- message text ------------------------------------------------------------------------------

  private part(it: ItemState, ci: number): PartState {
    it.parts ??= new Map();
    let p = it.parts.get(ci);
    if (!p) {
      p = { key: this.nextKey++, started: false, text: "" };
      it.parts.set(ci, p);
    }
    return p;
  }

  private textDelta(it: ItemState, ci: number, text: string, logprobs?: TokenLogprob[]): void {
    if (text.length === 0) return;
    const p = this.part(it, ci);
    if (!p.started) {
      p.started = true;
      const block: BlockStart = it.phase ? { type: "text", phase: it.phase } : { type: "text" };
      if (p.refusal) {
        block.refusal = true;
        this.sawRefusal = true;
      }
      this.emit({ type: "block_start", index: p.key, block });
    }
    p.text += text;
    this.emit({ type: "block_delta", index: p.key, delta: logprobs ? { type: "text", text, logprobs } : { type: "text", text } });
  }

  /** Marks content part `ci` of a message as a refusal (before its block opens). */
  private markRefusal(it: ItemState, ci: number): void {
    const p = this.part(it, ci);
    if (!p.started) p.refusal = true;
  }

  /**
   * Emits whatever of `final` was not streamed yet (nothing when the stream diverged from it), with the
   * final form's `logprobs` when none of its text was streamed (they then belong to all of it).
   */
  private reconcileText(it: ItemState, ci: number, final: string, logprobs?: unknown): void {
    const p = this.part(it, ci);
    if (final.length > p.text.length && final.startsWith(p.text)) this.textDelta(it, ci, final.slice(p.text.length), p.text.length === 0 ? readOpenAILogprobs(logprobs) : undefined);
  }

  private onPartAdded(ev: Json): void {
    const rawReasoning = ev.part?.type === "reasoning_text";
    const it = this.item(ev.output_index, rawReasoning ? "reasoning" : "message");
    if (!it || it.done) return;
    // Text and raw reasoning open at their first non-empty text; only the part slot is noted here.
    if (it.type === "message" && typeof ev.content_index === "number") {
      if (ev.part?.type === "refusal") this.markRefusal(it, ev.content_index);
      else this.part(it, ev.content_index);
    }
  }

  private onTextDelta(ev: Json): void {
    this.start(undefined);
    const it = this.item(ev.output_index, "message");
    if (!it || it.done || it.type !== "message") return;
    const ci = typeof ev.content_index === "number" ? ev.content_index : 0;
    if (ev.type === "response.refusal.delta") this.markRefusal(it, ci);
    // `logprobs` is `[]` unless the request included `message.output_text.logprobs`: one length check.
    const lp = ev.logprobs;
    if (typeof ev.delta === "string") this.textDelta(it, ci, ev.delta, Array.isArray(lp) && lp.length > 0 ? readOpenAILogprobs(lp) : undefined);
  }

  private onTextDone(ev: Json, text: unknown): void {
    const it = this.item(ev.output_index, "message");
    if (!it || it.done || it.type !== "message" || typeof text !== "string") return;
    const ci = typeof ev.content_index === "number" ? ev.content_index : 0;
    if (ev.type === "response.refusal.done") this.markRefusal(it, ci);
    this.reconcileText(it, ci, text, ev.logprobs);
  }

  private onPartDone(ev: Json): void {
    const it = this.item(ev.output_index);
    if (!it || it.done) return;
    const part = ev.part as Json | undefined;
    const ci = typeof ev.content_index === "number" ? ev.content_index : 0;
    if (it.type === "message") {
      const text = typeof part?.text === "string" ? part.text : typeof part?.refusal === "string" ? part.refusal : undefined;
      if (part?.type === "refusal") this.markRefusal(it, ci);
      if (text !== undefined) this.reconcileText(it, ci, text, part?.logprobs);
    } else if (it.type === "reasoning" && part?.type === "reasoning_text" && typeof part.text === "string") {
      this.reconcileRaw(it, ci, part.text);
    }
  }

  // ---- reasoning ---------------------------------------------------------------------------------

  private ensureThinking(it: ItemState, raw: boolean): void {
    if (it.started) return;
    it.started = true;
    it.key = this.nextKey++;
    it.raw = raw;
    const block: BlockStart = { type: "thinking" };
    if (it.id !== undefined) block.itemId = it.id;
    if (raw) block.raw = true;
    this.emit({ type: "block_start", index: it.key, block });
  }

  /** Opens summary part `s` (a `thinking_part` delta) if it is not open yet. */
  private openSummary(it: ItemState, s: number): void {
    it.summaries ??= [];
    if (it.summaries[s] !== undefined) return;
    this.ensureThinking(it, false);
    // Parts before `s` that never opened (a provider skipping indices) are opened empty, in order.
    for (let i = 0; i <= s; i++) {
      if (it.summaries[i] === undefined) {
        it.summaries[i] = "";
        this.emit({ type: "block_delta", index: it.key, delta: { type: "thinking_part" } });
      }
    }
  }

  private onSummaryPart(ev: Json): void {
    const it = this.item(ev.output_index, "reasoning");
    if (!it || it.done || it.type !== "reasoning") return;
    this.openSummary(it, typeof ev.summary_index === "number" ? ev.summary_index : 0);
  }

  private onSummaryDelta(ev: Json, text: string, isFinal: boolean): void {
    this.start(undefined);
    const it = this.item(ev.output_index, "reasoning");
    if (!it || it.done || it.type !== "reasoning") return;
    const s = typeof ev.summary_index === "number" ? ev.summary_index : 0;
    if (isFinal) this.reconcileSummary(it, s, text);
    else this.summaryText(it, s, text);
  }

  private summaryText(it: ItemState, s: number, text: string): void {
    this.openSummary(it, s);
    if (text.length === 0) return;
    it.summaries![s] += text;
    this.emit({ type: "block_delta", index: it.key, delta: { type: "thinking", text } });
  }

  private reconcileSummary(it: ItemState, s: number, final: string): void {
    const have = it.summaries?.[s];
    if (have === undefined) {
      if (final.length > 0) this.summaryText(it, s, final);
      return;
    }
    if (final.length > have.length && final.startsWith(have)) this.summaryText(it, s, final.slice(have.length));
  }

  private onRawReasoning(ev: Json, text: string, isFinal: boolean): void {
    this.start(undefined);
    const it = this.item(ev.output_index, "reasoning");
    if (!it || it.done || it.type !== "reasoning") return;
    const ci = typeof ev.content_index === "number" ? ev.content_index : 0;
    if (isFinal) this.reconcileRaw(it, ci, text);
    else this.rawText(it, ci, text);
  }

  private rawText(it: ItemState, ci: number, text: string): void {
    if (text.length === 0) return;
    this.ensureThinking(it, true);
    it.rawTexts ??= [];
    it.rawTexts[ci] = (it.rawTexts[ci] ?? "") + text;
    this.emit({ type: "block_delta", index: it.key, delta: { type: "thinking", text } });
  }

  private reconcileRaw(it: ItemState, ci: number, final: string): void {
    const have = it.rawTexts?.[ci] ?? "";
    if (final.length > have.length && final.startsWith(have)) this.rawText(it, ci, final.slice(have.length));
  }

  // ---- tool calls --------------------------------------------------------------------------------

  private startCall(it: ItemState, raw: Json): void {
    if (it.started) return;
    const callId = typeof raw.call_id === "string" && raw.call_id ? raw.call_id : typeof raw.id === "string" ? raw.id : "";
    const name = typeof raw.name === "string" ? raw.name : "";
    if (!callId || !name) return; // cannot open a call without both; retried at `.done`
    it.started = true;
    it.key = this.nextKey++;
    it.callId = callId;
    it.name = name;
    this.sawTool = true;
    // A name the builder changed for OpenAI's rule (formats/tool-names.ts): the client's.
    const block: BlockStart = { type: "tool_call", id: callId, name: clientToolName(this.toolNames, name) };
    if (it.id !== undefined) block.itemId = it.id;
    if (typeof raw.namespace === "string" && raw.namespace) block.namespace = it.namespace = raw.namespace;
    this.emit({ type: "block_start", index: it.key, block });
    if (it.type === "custom_tool_call") this.emit({ type: "block_delta", index: it.key, delta: { type: "tool_args", json: '{"input":"' } });
    if (it.pending.length > 0) {
      const held = it.pending;
      it.pending = "";
      this.pushArgs(it, held);
    }
  }

  private pushArgs(it: ItemState, fragment: string): void {
    if (fragment.length === 0) return;
    if (!it.started) {
      it.pending += fragment;
      return;
    }
    it.args += fragment;
    const json = it.type === "custom_tool_call" ? escapeFragment(fragment) : fragment;
    this.emit({ type: "block_delta", index: it.key, delta: { type: "tool_args", json } });
  }

  private reconcileArgs(it: ItemState, final: string): void {
    if (!it.started) {
      if (final.length > it.pending.length && final.startsWith(it.pending)) it.pending = final;
      return;
    }
    if (final.length > it.args.length && final.startsWith(it.args)) this.pushArgs(it, final.slice(it.args.length));
  }

  private onArgs(ev: Json, text: string | undefined, isFinal: boolean): void {
    this.start(undefined);
    const isCustom = typeof ev.type === "string" && ev.type.startsWith("response.custom_tool_call");
    const it = this.item(ev.output_index, isCustom ? "custom_tool_call" : "function_call");
    if (!it || it.done || (it.type !== "function_call" && it.type !== "custom_tool_call") || text === undefined) return;
    if (isFinal) {
      if (!it.started && typeof ev.name === "string" && ev.name && !it.name) it.name = ev.name;
      this.reconcileArgs(it, text);
    } else {
      this.pushArgs(it, text);
    }
  }

  // ---- terminal ----------------------------------------------------------------------------------

  private onTerminal(response: Json | undefined, fallbackStatus: "completed" | "incomplete"): void {
    this.start(response);
    const output = Array.isArray(response?.output) ? (response!.output as Json[]) : [];
    for (let i = 0; i < output.length; i++) {
      const raw = output[i];
      if (!raw || typeof raw.type !== "string") continue;
      const it = this.item(i, raw.type)!;
      if (it.type !== raw.type) continue; // index clash with a different item: trust what streamed
      if (!it.done) this.finishItem(it, raw);
    }
    // Items still open (no `.done` and no final form): close what was started.
    for (const it of this.items.values()) {
      if (it.done) continue;
      it.done = true;
      if (it.type === "message") {
        if (it.parts) for (const p of it.parts.values()) if (p.started) this.emit({ type: "block_stop", index: p.key });
      } else if (it.started) {
        if (it.type === "custom_tool_call") this.emit({ type: "block_delta", index: it.key, delta: { type: "tool_args", json: '"}' } });
        this.emit({ type: "block_stop", index: it.key });
      }
    }
    const status = typeof response?.status === "string" ? response.status : fallbackStatus;
    const reason = typeof response?.incomplete_details?.reason === "string" ? (response.incomplete_details.reason as string) : undefined;
    this.ended = true;
    const stop = stopForTerminal(status, reason, this.sawTool);
    this.emit({
      type: "finish",
      // OpenAI ends a refusal `completed`; by meaning it is one (as the Chat decoder reads `refusal` + `stop`).
      reason: stop === "end_turn" && this.sawRefusal ? "refusal" : stop,
      raw: reason ? `${status}:${reason}` : status,
    });
    const usage = fromResponsesUsage(response?.usage, response?.output);
    if (usage) this.emit({ type: "usage", usage });
  }
}

/**
 * Creates the provider-side decoder: feed upstream bytes with `push`, call `end` at EOF. Emits loose
 * hub events (see the module doc); never throws — a malformed event becomes an `error` event
 * (`api_error`, code `upstream_malformed`). Opaque reasoning state is stamped with `opts.family`.
 */
export function createDecoder(opts: DecoderOptions, emit: (ev: HubEvent) => void): StreamDecoder {
  return new ResponsesDecoder(opts, emit);
}
