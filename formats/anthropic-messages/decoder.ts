/**
 * Anthropic Messages SSE (provider side) → loose hub events (REFERENCE §1.3). The output is meant for
 * `EventNormalizer` (formats/normalize.ts), which does the ordering work: this decoder maps each event
 * one to one and keeps only the state the wire forces on it.
 *
 * Robustness (recorded/anthropic-messages, REFERENCE §0 and §7.4):
 * - a duplicate `message_start` is passed on (the normalizer turns it into a usage update);
 * - `ping`, `citations_delta`, unknown event types, unknown block types (server tools) and their deltas
 *   are ignored (the kinds of block left out are named in `dropped`, for the reply's warning; the
 *   events of such blocks and citations are counted in `progress`, and server tools in flight in
 *   `serverTools`, for the keep-alive bound); `data: [DONE]` (sent by some Anthropic-compatible servers) is ignored; a text or
 *   thinking delta for a block that was never started is passed on (the normalizer opens it);
 * - the `{}` in a `tool_use` start is a placeholder, never an argument fragment; but a third-party
 *   server that puts the whole non-empty `input` in the start and sends no `input_json_delta` still gets
 *   its arguments emitted (as one fragment, at the block's stop);
 * - `message_delta.delta.stop_details.explanation` (a refusal's) is the finish's `explanation`;
 * - `message_delta.usage` may carry `input_tokens` / cache counts (cumulative: later values replace);
 * - an in-band `event: error` becomes a hub `error` (e.g. `overloaded_error` → kind overloaded, 529);
 *   a data line that is not JSON becomes an `api_error` (502); nothing is decoded after an error.
 * Every signature and redacted-thinking blob is stamped with `opts.family`. A tool name the builder
 * changed (formats/tool-names.ts) starts its block as the client's name (`opts.toolNames`).
 */
import { clientToolName } from "../tool-names.ts";
import type { DecoderOptions, StreamDecoder } from "../codec.ts";
import { hubError, type HubEvent, type ProviderFamily } from "../hub.ts";
import { upstreamNestedTooDeep, valueNestsDeeperThan } from "../json-depth.ts";
import { SseReader, type SseEvent } from "../sse.ts";
import { errorFromObject } from "./errors.ts";
import { serverToolStep, stopExplanationOf, stopFromAnthropic, usageFromAnthropic } from "./mapping.ts";

/** Per open tool_use block: whether any argument fragment arrived, and the start's `input`. */
interface ToolState {
  sawArgs: boolean;
  startInput: unknown;
}

function nonEmptyObject(v: unknown): boolean {
  if (!v || typeof v !== "object") return false;
  for (const _ in v as object) return true;
  return false;
}

/**
 * Incremental decoder. Create with {@link createDecoder}; `push` upstream bytes, `end` at EOF. Emits
 * loose hub events synchronously; never throws on malformed input.
 */
export class AnthropicDecoder implements StreamDecoder {
  private readonly reader: SseReader;
  private readonly family: ProviderFamily;
  private failed = false;
  /** Set in `end()`: a torn final event is then a truncation (the normalizer reports it), not malformed. */
  private ending = false;
  /** Block key → kind, for blocks this decoder understood (unknown server-tool blocks are absent). */
  private readonly kinds = new Map<number, "text" | "thinking" | "redacted" | "tool">();
  private readonly tools = new Map<number, ToolState>();
  /** Keys of blocks deliberately skipped (server-tool blocks); their deltas and stop are ignored too. */
  private readonly skipped = new Set<number>();
  /** StreamDecoder.dropped: the kinds of block skipped (`server_tool_use block`, …), as decodeResponse names them. */
  dropped: string[] | undefined;
  /** StreamDecoder.progress: events of skipped blocks (start, deltas, stop) and citations read. */
  progress = 0;
  /** StreamDecoder.serverTools: server tools' calls started and not yet answered by their result's block ({@link serverToolStep}). */
  serverTools = 0;

  /** Provider tool name → the client's (DecoderOptions.toolNames: names the builder had to change). */
  private readonly toolNames: Record<string, string> | undefined;

  constructor(
    opts: DecoderOptions,
    private readonly emit: (ev: HubEvent) => void,
  ) {
    this.family = opts.family;
    this.toolNames = opts.toolNames;
    this.reader = new SseReader((ev) => this.onEvent(ev));
  }

  push(chunk: Uint8Array): void {
    if (!this.failed) this.reader.push(chunk);
  }

  end(): void {
    if (this.failed) return;
    // A last event that lacks its blank line (some servers close right after the final data line)
    // still counts: `SseReader.end()` dispatches it, with `ending` set.
    this.ending = true;
    this.reader.end();
  }

  private fail(message: string): void {
    this.failed = true;
    this.emit({ type: "error", error: { ...hubError("api_error", message), status: 502, code: "upstream_malformed" } });
  }

  private onEvent(sse: SseEvent): void {
    if (this.failed) return;
    const name = sse.event;
    if (name === "ping") return;
    const data = sse.data;
    if (data.length === 0 || data === "[DONE]") return;
    let msg: any;
    try {
      msg = JSON.parse(data);
    } catch {
      if (!this.ending) this.fail("The upstream sent an event that is not JSON.");
      return;
    }
    if (!msg || typeof msg !== "object") return;
    // Dispatch on the payload `type` (equal to the event name on a well-formed stream); fall back to the
    // event name for payloads that lack it.
    const type: unknown = typeof msg.type === "string" ? msg.type : name;
    switch (type) {
      case "message_start": {
        const m = msg.message ?? {};
        this.emit({
          type: "message_start",
          id: typeof m.id === "string" ? m.id : undefined,
          model: typeof m.model === "string" ? m.model : undefined,
          usage: usageFromAnthropic(m.usage),
        });
        return;
      }
      case "content_block_start":
        this.onBlockStart(msg);
        return;
      case "content_block_delta":
        this.onBlockDelta(msg);
        return;
      case "content_block_stop": {
        const index = msg.index;
        if (typeof index !== "number") return;
        const kind = this.kinds.get(index);
        if (kind === undefined) {
          if (this.skipped.delete(index)) {
            this.progress++;
            return;
          }
          this.emit({ type: "block_stop", index }); // a block opened implicitly by its deltas
          return;
        }
        if (kind === "tool") {
          const t = this.tools.get(index);
          if (t && !t.sawArgs && nonEmptyObject(t.startInput)) {
            this.emit({ type: "block_delta", index, delta: { type: "tool_args", json: JSON.stringify(t.startInput) } });
          }
          this.tools.delete(index);
        }
        this.kinds.delete(index);
        this.emit({ type: "block_stop", index });
        return;
      }
      case "message_delta": {
        const usage = usageFromAnthropic(msg.usage);
        const d = msg.delta;
        const raw = d && typeof d.stop_reason === "string" ? (d.stop_reason as string) : undefined;
        if (raw !== undefined) {
          const stopSequence = typeof d.stop_sequence === "string" ? d.stop_sequence : null;
          const explanation = stopExplanationOf(d.stop_details);
          this.emit(explanation === undefined ? { type: "finish", reason: stopFromAnthropic(raw), stopSequence, raw } : { type: "finish", reason: stopFromAnthropic(raw), stopSequence, raw, explanation });
        }
        if (usage) this.emit({ type: "usage", usage });
        return;
      }
      case "error":
        this.failed = true;
        this.emit({ type: "error", error: errorFromObject(msg.error, 0) });
        return;
      default:
        return; // message_stop, ping with a data type, unknown events
    }
  }

  private onBlockStart(msg: any): void {
    const index = msg.index;
    const b = msg.content_block;
    if (typeof index !== "number" || !b || typeof b !== "object") return;
    switch (b.type) {
      case "text":
        this.kinds.set(index, "text");
        this.emit({ type: "block_start", index, block: { type: "text" } });
        if (typeof b.text === "string" && b.text.length > 0) {
          this.emit({ type: "block_delta", index, delta: { type: "text", text: b.text } });
        }
        return;
      case "thinking":
        this.kinds.set(index, "thinking");
        this.emit({ type: "block_start", index, block: { type: "thinking" } });
        if (typeof b.thinking === "string" && b.thinking.length > 0) {
          this.emit({ type: "block_delta", index, delta: { type: "thinking", text: b.thinking } });
        }
        if (typeof b.signature === "string" && b.signature.length > 0) {
          this.emit({ type: "block_delta", index, delta: { type: "signature", signature: { family: this.family, value: b.signature } } });
        }
        return;
      case "redacted_thinking":
        this.kinds.set(index, "redacted");
        this.emit({
          type: "block_start",
          index,
          block: { type: "redacted_thinking", data: { family: this.family, value: typeof b.data === "string" ? b.data : "" } },
        });
        return;
      case "tool_use":
        // An input sent whole in the start is serialised at the block's stop: one nested past
        // MAX_JSON_DEPTH fails the stream instead (formats/json-depth.ts).
        if (nonEmptyObject(b.input) && valueNestsDeeperThan(b.input)) {
          this.failed = true;
          this.emit({ type: "error", error: upstreamNestedTooDeep("tool-call arguments") });
          return;
        }
        this.kinds.set(index, "tool");
        this.tools.set(index, { sawArgs: false, startInput: b.input });
        this.emit({
          type: "block_start",
          index,
          block: { type: "tool_call", id: typeof b.id === "string" ? b.id : "", name: typeof b.name === "string" ? clientToolName(this.toolNames, b.name) : "" },
        });
        return;
      default: {
        this.skipped.add(index); // server_tool_use, web_search_tool_result, …: no hub slot
        this.progress++;
        if (typeof b.type === "string") this.serverTools = Math.max(0, this.serverTools + serverToolStep(b.type));
        const kind = typeof b.type === "string" ? `${b.type} block` : undefined;
        if (kind !== undefined && !(this.dropped ??= []).includes(kind)) this.dropped.push(kind);
        return;
      }
    }
  }

  private onBlockDelta(msg: any): void {
    const index = msg.index;
    const d = msg.delta;
    if (typeof index !== "number" || !d || typeof d !== "object") return;
    const kind = this.kinds.get(index);
    if (kind === undefined && this.skipped.has(index)) {
      this.progress++;
      return;
    }
    // A delta for a block that was never started (some third-party servers skip the start) passes on:
    // the normalizer opens a text or thinking block for it; stray argument fragments are dropped there.
    switch (d.type) {
      case "text_delta":
        if (typeof d.text === "string") this.emit({ type: "block_delta", index, delta: { type: "text", text: d.text } });
        return;
      case "thinking_delta":
        if (typeof d.thinking === "string") this.emit({ type: "block_delta", index, delta: { type: "thinking", text: d.thinking } });
        return;
      case "signature_delta":
        if (typeof d.signature === "string") {
          this.emit({ type: "block_delta", index, delta: { type: "signature", signature: { family: this.family, value: d.signature } } });
        }
        return;
      case "input_json_delta":
        if (typeof d.partial_json === "string" && kind === "tool") {
          if (d.partial_json.length > 0) {
            const t = this.tools.get(index);
            if (t) t.sawArgs = true;
          }
          this.emit({ type: "block_delta", index, delta: { type: "tool_args", json: d.partial_json } });
        }
        return;
      default:
        this.progress++;
        return; // citations_delta and newer delta types
    }
  }
}

/** {@link FormatCodec.createDecoder} for Anthropic Messages. */
export function createDecoder(opts: DecoderOptions, emit: (ev: HubEvent) => void): StreamDecoder {
  return new AnthropicDecoder(opts, emit);
}
