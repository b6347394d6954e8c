/**
 * Canonical hub events → Anthropic Messages SSE for a client (REFERENCE §1.3, §6.1, §7 checklist 1).
 *
 * Input is the canonical sequence of formats/normalize.ts (one `message_start` first, contiguous
 * non-interleaved blocks, `finish` before `usage*`, `error` terminal), so this encoder only frames:
 * - every event has an `event:` line equal to its `type` (the SDKs dispatch on the event name);
 * - `message_start.message` has `content: []`, `stop_reason: null` and a usage whose input count is the
 *   known one or 0 (a Chat upstream only says it at the end), with the provider's `cache_creation`
 *   breakdown when it said one (Anthropic sends it there, not in `message_delta`);
 * - `content_block_start` carries the empty shell (`tool_use` with `input: {}`), every argument fragment
 *   is an `input_json_delta`, signatures are `signature_delta`s;
 * - `message_delta` (stop reason + the final usage, input and cache counts included: the TS SDK
 *   overwrites them when present) is held back until the event stream ends, so usage that arrives after
 *   the finish (Chat's usage chunk) is in it; then `message_stop`; a refusal finish's `explanation`
 *   (Gemini's block reason, mapping.ts `stopDetailsFor`) is its `delta.stop_details`, as Anthropic sends one;
 * - a failure (an `error` event, or the end without a `finish`) is one `event: error` and nothing else:
 *   no finish is ever invented (SPEC 6.4). An `error` after a `finish` (the reply was complete) closes
 *   the message normally (SPEC 6.4 exception, case B12).
 *
 * Opaque values from a family other than `anthropic` are tagged (mapping.ts `writeOpaque`) so they come
 * back recognisable. Signatures on text blocks (Gemini) have no Anthropic slot and are not sent; a
 * tool call's Gemini signature goes out as a signature-only thinking block just before its `tool_use`
 * (formats/call-signatures.ts), every later block's index one higher, so the client sends it back and
 * Gemini gets it on that functionCall part. A signature that comes only after the call started (a
 * `signature` delta on the tool block: Vertex streamed arguments, `streamFunctionCallArguments`, may
 * sign a later piece of the call) goes out the same way just after the `tool_use` block's stop, since
 * that block was already sent; the block names the call's id, so it goes back on that call wherever it
 * stands in the message (formats/call-signatures.ts `signaturesOntoCalls`).
 */
import type { EncoderOptions, StreamEncoder } from "../codec.ts";
import { mergeUsage, type HubError, type HubEvent, type Opaque, type StopReason, type Usage } from "../hub.ts";
import { flat, isPlainJsonText } from "../json-text.ts";
import { RandomText } from "../random-text.ts";
import { TRUNCATED_ERROR } from "../normalize.ts";
import { errorFrame } from "./errors.ts";
import { stopDetailsFor, stopToAnthropic, usageJson, writeOpaque } from "./mapping.ts";
import { callSignatureOpaque, isCallSignatureShown } from "../call-signatures.ts";

/** The random part of a Messages id: 24 hex characters (12 random bytes), drawn for many ids at once. */
const MESSAGE_ID_RANDOM = new RandomText(12, 24, "hex");

/**
 * Default id generator: `prefix` + 24 random hex characters, the next piece of a pool drawn for many
 * ids at once (formats/random-text.ts, as the other encoders' ids since item 144): one flat substring
 * instead of 24 `Math.random` draws appended one by one (a rope of 25 pieces that the frame's
 * JSON check then flattens; docs/performance.md item 180). The characters stay within the base-36
 * alphabet these ids always had (now 0–9 and a–f), and unguessable (`crypto.getRandomValues`).
 */
export function defaultNewId(prefix: string): string {
  return prefix + MESSAGE_ID_RANDOM.next();
}

/** The keep-alive event Anthropic itself sends (REFERENCE §0); the server may write it while idle. */
export const PING_FRAME = 'event: ping\ndata: {"type":"ping"}\n\n';

const MESSAGE_STOP_FRAME = 'event: message_stop\ndata: {"type":"message_stop"}\n\n';

type OpenKind = "text" | "thinking" | "redacted" | "tool" | null;

/** Incremental Anthropic SSE encoder; see the module doc. */
export class AnthropicEncoder implements StreamEncoder {
  private started = false;
  private done = false;
  private stop: StopReason | null = null;
  private stopSequence: string | null = null;
  /** The finish's `explanation` (a refusal's: written as `stop_details`). */
  private explanation: string | undefined;
  private readonly usage: Usage = {};
  /** Kind of the open block and whether it already has thinking text (for summary-part separators). */
  private open: OpenKind = null;
  private thinkingHasText = false;
  /**
   * The text-delta frame up to the text, for the block index it was made for; `textHeadQ` the same with
   * the text's opening quote, for a text JSON leaves as it is (flat strings: they go into every delta).
   */
  private textHead = "";
  private textHeadQ = "";
  private textHeadIndex = -1;
  /** Blocks added before the hub's (a tool call's signature as thinking): added to every hub block index. */
  private shift = 0;
  /** The open tool block's call id, and whether a signature of its call was sent (before it, or pending in {@link lateSignature}). */
  private toolId = "";
  private toolSigned = false;
  /** A Gemini signature that came on the open tool block after its start: sent as a thinking block after its stop. */
  private lateSignature: Opaque | undefined;

  constructor(
    private readonly opts: EncoderOptions,
    private readonly write: (text: string) => void,
  ) {}

  event(ev: HubEvent): void {
    if (this.done) return;
    switch (ev.type) {
      case "message_start":
        mergeUsage(this.usage, ev.usage);
        this.start(ev.id);
        return;
      case "usage":
        mergeUsage(this.usage, ev.usage);
        return;
      case "finish":
        this.stop = ev.reason;
        this.stopSequence = typeof ev.stopSequence === "string" ? ev.stopSequence : null;
        this.explanation = ev.explanation;
        return;
      case "error":
        if (this.stop !== null) {
          this.close();
        } else {
          this.fail(ev.error);
        }
        return;
      case "block_start":
        this.start(undefined);
        this.blockStart(ev);
        return;
      case "block_delta":
        this.blockDelta(ev);
        return;
      case "block_stop": {
        this.open = null;
        this.write(`event: content_block_stop\ndata: {"type":"content_block_stop","index":${ev.index + this.shift}}\n\n`);
        const late = this.lateSignature;
        if (late !== undefined) {
          this.lateSignature = undefined;
          this.shift++;
          this.signatureBlock(ev.index + this.shift, callSignatureOpaque(this.toolId, late));
        }
        return;
      }
    }
  }

  end(): void {
    if (this.done) return;
    if (this.stop !== null) this.close();
    else this.fail(TRUNCATED_ERROR);
  }

  // ---------------------------------------------------------------------------------------------

  private start(upstreamId: string | undefined): void {
    if (this.started) return;
    this.started = true;
    const id = upstreamId && upstreamId.startsWith("msg_") ? upstreamId : (this.opts.newId ?? defaultNewId)("msg_");
    const model = this.opts.model;
    // JSON.stringify's output, written between quotes when nothing in the value needs escaping (json-text.ts).
    this.write(
      'event: message_start\ndata: {"type":"message_start","message":{"id":' +
        (isPlainJsonText(id) ? '"' + id + '"' : JSON.stringify(id)) +
        ',"type":"message","role":"assistant","model":' +
        (isPlainJsonText(model) ? '"' + model + '"' : JSON.stringify(model)) +
        ',"content":[],"stop_reason":null,"stop_sequence":null,"usage":' +
        usageJson(this.usage, true) +
        "}}\n\n",
    );
  }

  private blockStart(ev: Extract<HubEvent, { type: "block_start" }>): void {
    const b = ev.block;
    let shell: string;
    switch (b.type) {
      case "text":
        this.open = "text";
        shell = '{"type":"text","text":""}';
        break;
      case "thinking":
        this.open = "thinking";
        this.thinkingHasText = false;
        shell = '{"type":"thinking","thinking":"","signature":""}';
        break;
      case "redacted_thinking":
        this.open = "redacted";
        shell = '{"type":"redacted_thinking","data":' + JSON.stringify(writeOpaque(b.data)) + "}";
        break;
      case "tool_call":
        this.toolId = b.id;
        this.toolSigned = isCallSignatureShown(b.signature);
        this.lateSignature = undefined;
        if (this.toolSigned) this.signatureBlock(ev.index + this.shift++, callSignatureOpaque(b.id, b.signature!));
        this.open = "tool";
        shell = '{"type":"tool_use","id":' + JSON.stringify(b.id) + ',"name":' + JSON.stringify(b.name) + ',"input":{}}';
        break;
    }
    this.write(
      'event: content_block_start\ndata: {"type":"content_block_start","index":' + (ev.index + this.shift) + ',"content_block":' + shell + "}\n\n",
    );
  }

  /** A whole signature-only thinking block at client index `index` (a tool call's Gemini signature with the call's id, formats/call-signatures.ts). */
  private signatureBlock(index: number, signature: Opaque): void {
    const head = 'data: {"type":"content_block_';
    this.write(
      `event: content_block_start\n${head}start","index":${index},"content_block":{"type":"thinking","thinking":"","signature":""}}\n\n` +
        `event: content_block_delta\n${head}delta","index":${index},"delta":{"type":"signature_delta","signature":${JSON.stringify(writeOpaque(signature))}}}\n\n` +
        `event: content_block_stop\n${head}stop","index":${index}}\n\n`,
    );
  }

  private blockDelta(ev: Extract<HubEvent, { type: "block_delta" }>): void {
    const d = ev.delta;
    let delta: string;
    switch (d.type) {
      case "text":
        this.textDelta(ev.index + this.shift, d.text, false);
        return;
      case "thinking":
        if (this.open !== "thinking" || d.text.length === 0) return;
        this.thinkingHasText = true;
        delta = '{"type":"thinking_delta","thinking":' + JSON.stringify(d.text) + "}";
        break;
      case "thinking_part":
        // A new reasoning summary part (Responses): keep the parts apart with a blank line.
        if (this.open !== "thinking" || !this.thinkingHasText) return;
        delta = '{"type":"thinking_delta","thinking":"\\n\\n"}';
        break;
      case "signature":
        if (this.open === "tool" && !this.toolSigned && isCallSignatureShown(d.signature)) {
          // the call's first signature, come late: a thinking block after the tool_use (module doc)
          this.toolSigned = true;
          this.lateSignature = d.signature;
        }
        if (this.open !== "thinking") return; // no slot on text / tool_use blocks
        delta = '{"type":"signature_delta","signature":' + JSON.stringify(writeOpaque(d.signature)) + "}";
        break;
      case "tool_args":
        if (this.open !== "tool" || d.json.length === 0) return;
        delta = '{"type":"input_json_delta","partial_json":' + JSON.stringify(d.json) + "}";
        break;
    }
    this.write('event: content_block_delta\ndata: {"type":"content_block_delta","index":' + (ev.index + this.shift) + ',"delta":' + delta + "}\n\n");
  }

  /** {@link StreamEncoder.text}: a text delta without its event objects. */
  text(index: number, text: string, plain: boolean): void {
    if (!this.done) this.textDelta(index + this.shift, text, plain);
  }

  private textDelta(index: number, text: string, plain: boolean): void {
    if (this.open !== "text" || text.length === 0) return;
    // The common event: its frame up to the text made once per block (fewer concatenations per event).
    if (this.textHeadIndex !== index) {
      this.textHeadIndex = index;
      this.textHead = flat('event: content_block_delta\ndata: {"type":"content_block_delta","index":' + index + ',"delta":{"type":"text_delta","text":');
      this.textHeadQ = flat(this.textHead + '"');
    }
    // A text without a character to escape is written between the quotes as it is (JSON.stringify's output).
    // Template literals: one string of three pieces, where `a + b + c` makes two (docs/performance.md item 107).
    if (plain || isPlainJsonText(text)) this.write(`${this.textHeadQ}${text}"}}\n\n`);
    else this.write(`${this.textHead}${JSON.stringify(text)}}}\n\n`);
  }

  /** Writes the held-back `message_delta` and `message_stop`. */
  private close(): void {
    this.done = true;
    this.start(undefined);
    this.open = null;
    const stop = stopToAnthropic(this.stop ?? "end_turn");
    const details = stopDetailsFor(this.stop, this.explanation);
    this.write(
      'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"' +
        stop +
        '","stop_sequence":' +
        (this.stopSequence === null ? "null" : JSON.stringify(this.stopSequence)) +
        (details === undefined ? "" : ',"stop_details":' + JSON.stringify(details)) +
        '},"usage":' +
        usageJson(this.usage) +
        "}\n\n" +
        MESSAGE_STOP_FRAME,
    );
  }

  private fail(err: HubError): void {
    this.done = true;
    this.write(errorFrame(err));
  }
}

/** {@link FormatCodec.createEncoder} for Anthropic Messages. */
export function createEncoder(opts: EncoderOptions, write: (text: string) => void): StreamEncoder {
  return new AnthropicEncoder(opts, write);
}
