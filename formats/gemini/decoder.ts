/**
 * Gemini `streamGenerateContent?alt=sse` → loose hub events (REFERENCE §4.3, §6; SPEC F-4).
 *
 * Wire facts this relies on (REFERENCE §4.3, recorded/gemini/*):
 * - `data:` lines only, CRLF framing, no event names, no terminator: EOF ends the stream. A stream that
 *   carried a `finishReason` (or a prompt-level `blockReason`) is complete; one without is truncated,
 *   which this decoder expresses by emitting no `finish` (the normalizer then ends it with an error).
 * - Each chunk holds NEW parts only. Only candidate 0 is decoded (the hub has one choice).
 * - `functionCall` arrives whole (`name` + `args`): emitted as tool_call start, ONE `tool_args` delta
 *   with `JSON.stringify(args)`, stop. Vertex streamed arguments (`partialArgs` + `willContinue`) are
 *   reassembled by JSON path and emitted as one `tool_args` delta when the call closes: on a part
 *   without `willContinue` (an empty `functionCall: {}` or the last piece), when the next call starts,
 *   or at `finishReason`.
 * - Call ids: the `functionCall.id` when present, else minted `call_<responseId>_<part>_<n>`
 *   (`^[a-zA-Z0-9_-]+$`; the responseId's other characters left out, at most 40 kept; `<part>` drawn
 *   once per reply from `opts.callIdPart`, which the gateway sets to 8 random hex characters: a server
 *   that reuses its responseId, as Gemini-compatible fakes and proxies do, still gives each reply's
 *   calls ids of their own (until 2026-12-07 two turns' calls were both `call_resp_g1_0` and Claude
 *   Code, pairing results by id, looped); without `callIdPart`, `call_<responseId>_<n>`, the same for
 *   the same bytes). Without a responseId: `call_<16 random hex>_<n>`.
 * - `thoughtSignature` (or snake_case `thought_signature`): on a functionCall part → the tool_call
 *   block's signature (on a continuation piece of a streamed call, whose block started already: a
 *   `signature` delta on that block, which every client encoder keeps: formats/call-signatures.ts); on a non-empty text part → that text block's signature (the block then
 *   closes, so the signature stays on the text it came with); on an empty text part → a thinking block
 *   carrying only a signature delta. `thought: true` parts → thinking. Every Opaque is stamped with
 *   `opts.family`.
 * - A candidate's `logprobsResult` (asked for with `generationConfig.responseLogprobs`) covers that
 *   chunk's tokens: it goes on the chunk's first text delta (mapping.ts `readGeminiLogprobs`).
 * - `usageMetadata` is cumulative, last wins (mapped by mapping.ts `mapUsage`); it is emitted only when
 *   it changed, before the chunk's finish.
 * - A prompt blocked before any candidate (`promptFeedback.blockReason`) → finish `refusal` whose
 *   `explanation` names the reason ({@link blockExplanation}); so does a reply blocked on the way
 *   (a `finishReason` of the safety family: SAFETY, PROHIBITED_CONTENT, RECITATION, …, with the
 *   candidate's `finishMessage` when it has one: {@link replyBlockExplanation}).
 * - An in-band `{"error": {…}}` chunk → hub `error` (errors.ts); a chunk that is not JSON → `error`
 *   (`upstream_malformed`). Nothing is decoded after an error.
 *
 * No valibot on this path: cheap manual shape checks only.
 */
import { clientToolName } from "../tool-names.ts";
import type { DecoderOptions, StreamDecoder } from "../codec.ts";
import type { HubError, HubEvent, Opaque, TokenLogprob, Usage } from "../hub.ts";
import { upstreamNestedTooDeep, valueNestsDeeperThan } from "../json-depth.ts";
import { SseReader } from "../sse.ts";
import { errorFromStatus } from "./errors.ts";
import { mapFinishReason, mapUsage, readGeminiLogprobs, sameUsage } from "./mapping.ts";
import { PartialArgsAccumulator } from "./partial-args.ts";
import type { GeminiPartialArg } from "./schema.ts";
import { isObj, type JsonObject as Obj } from "../json.ts";

/** Decoder options for Gemini: the common ones plus the reverse tool-name map. */
export interface GeminiDecoderOptions extends DecoderOptions {
  /**
   * Gemini function name → the name the client declared, for names `buildRequest` had to change
   * (`geminiToolNames(req)` in build.ts). Names not listed pass unchanged.
   */
  toolNames?: Record<string, string>;
}

/** Error for a `data:` payload that is not JSON. */
export const MALFORMED_CHUNK_ERROR: HubError = {
  kind: "api_error",
  status: 502,
  message: "Gemini sent a stream chunk that is not valid JSON.",
  code: "upstream_malformed",
};

/**
 * The words a client gets for a prompt Gemini blocked (`promptFeedback.blockReason`, e.g. SAFETY,
 * PROHIBITED_CONTENT, BLOCKLIST; Vertex adds `blockReasonMessage`): the finish's `explanation`.
 */
export function blockExplanation(reason: string, message: unknown): string {
  const why = typeof message === "string" && message.trim().length > 0 ? `: ${message.trim()}` : ".";
  return `Gemini blocked the prompt (${reason})${why}`;
}

/**
 * The words a client gets for a reply Gemini stopped for its content (a `finishReason` that maps to
 * `refusal`: SAFETY, PROHIBITED_CONTENT, RECITATION, BLOCKLIST, SPII, …; the candidate's `finishMessage`
 * when it says more): the finish's `explanation`, as {@link blockExplanation} for a blocked prompt.
 */
export function replyBlockExplanation(reason: string, message: unknown): string {
  const why = typeof message === "string" && message.trim().length > 0 ? `: ${message.trim()}` : ".";
  return `Gemini blocked the reply (${reason})${why}`;
}

const NONE = 0;
const TEXT = 1;
const THINKING = 2;

/**
 * Decodes parsed `GenerateContentResponse` objects (one per SSE event, or one whole non-streamed body)
 * into loose hub events. Shared by the stream decoder and `decodeResponse`.
 */
export class GeminiChunkDecoder {
  private started = false;
  private finishedFlag = false;
  private failedFlag = false;
  private nextKey = 0;
  private openKind = NONE;
  private openKey = -1;
  private streamed: { key: number; acc: PartialArgsAccumulator } | undefined;
  private lastUsage: Usage | undefined;
  /** The log probabilities of the chunk being decoded, until its first text takes them. */
  private logprobs: TokenLogprob[] | undefined;
  private idBase: string | undefined;
  /** `_<part>` of minted call ids (`opts.callIdPart`, drawn at the first), "" without. */
  private idPart: string | undefined;
  private minted = 0;
  /**
   * Kinds of part left out for want of a hub slot (`inlineData part`, `executableCode part`, …), for a
   * whole reply's `dropped` and the stream decoder's (StreamDecoder.dropped).
   */
  dropped: string[] | undefined;
  /** StreamDecoder.progress: parts left out (code execution, inline data) and a streamed call's argument pieces read (no event until the call ends), for the keep-alive bound. */
  progress = 0;

  constructor(
    private readonly opts: GeminiDecoderOptions,
    private readonly emit: (ev: HubEvent) => void,
  ) {}

  /** Whether a finishReason or blockReason was seen. */
  get finished(): boolean {
    return this.finishedFlag;
  }

  /** Whether an error was emitted (nothing more is decoded). */
  get failed(): boolean {
    return this.failedFlag;
  }

  /** Emits an error and stops decoding. */
  fail(error: HubError): void {
    if (this.failedFlag) return;
    this.failedFlag = true;
    this.emit({ type: "error", error });
  }

  /** One parsed payload. */
  chunk(obj: unknown): void {
    if (this.failedFlag || !isObj(obj)) return;
    const err = obj.error;
    if (isObj(err)) {
      this.fail(errorFromStatus(err, 0));
      return;
    }
    const usage = mapUsage(obj.usageMetadata);
    if (!this.started) {
      this.started = true;
      const start: HubEvent & { type: "message_start" } = { type: "message_start" };
      if (typeof obj.responseId === "string") start.id = obj.responseId;
      if (typeof obj.modelVersion === "string") start.model = obj.modelVersion;
      if (usage) {
        start.usage = usage;
        this.lastUsage = usage;
      }
      this.emit(start);
    }
    if (this.idBase === undefined && typeof obj.responseId === "string") {
      const base = obj.responseId.replace(/[^a-zA-Z0-9_-]/g, "").slice(0, 40);
      if (base.length > 0) this.idBase = base;
    }

    let finishReason: string | undefined;
    let finishMessage: unknown;
    const cands = obj.candidates;
    if (Array.isArray(cands)) {
      for (let i = 0; i < cands.length; i++) {
        const c = cands[i];
        if (!isObj(c)) continue;
        const index = typeof c.index === "number" ? c.index : 0;
        if (index !== 0) continue;
        if (!this.finishedFlag) {
          const content = c.content;
          const parts = isObj(content) ? content.parts : undefined;
          // `logprobsResult` (asked for with `responseLogprobs`): this chunk's tokens, put on its first text.
          const lr = c.logprobsResult;
          if (lr !== undefined) this.logprobs = readGeminiLogprobs(lr);
          if (Array.isArray(parts)) for (let j = 0; j < parts.length; j++) this.part(parts[j]);
          this.logprobs = undefined;
        }
        if (typeof c.finishReason === "string" && c.finishReason.length > 0) {
          finishReason = c.finishReason;
          finishMessage = c.finishMessage;
        }
        break;
      }
    }
    if (finishReason === undefined && (!Array.isArray(cands) || cands.length === 0)) {
      const fb = obj.promptFeedback;
      if (isObj(fb) && typeof fb.blockReason === "string" && fb.blockReason.length > 0) {
        // The prompt itself was blocked: no candidates at all (REFERENCE §4.3). The reason is the
        // finish's explanation, which a Chat client reads as `refusal`, a Responses client as a refusal part.
        this.usage(usage);
        this.finish("refusal", fb.blockReason, blockExplanation(fb.blockReason, fb.blockReasonMessage));
        return;
      }
    }
    this.usage(usage);
    if (finishReason === undefined) return;
    const reason = mapFinishReason(finishReason);
    this.finish(reason, finishReason, reason === "refusal" ? replyBlockExplanation(finishReason, finishMessage) : undefined);
  }

  private usage(u: Usage | undefined): void {
    if (!u || sameUsage(this.lastUsage, u)) return;
    this.lastUsage = u;
    this.emit({ type: "usage", usage: u });
  }

  private finish(reason: ReturnType<typeof mapFinishReason>, raw: string, explanation?: string): void {
    if (this.finishedFlag) return;
    this.closeStreamed();
    this.closeOpen();
    this.finishedFlag = true;
    this.emit(explanation === undefined ? { type: "finish", reason, raw } : { type: "finish", reason, raw, explanation });
  }

  private opaque(value: string): Opaque {
    return { family: this.opts.family, value };
  }

  private part(p: unknown): void {
    if (!isObj(p)) return;
    let sig: string | undefined;
    if (typeof p.thoughtSignature === "string" && p.thoughtSignature.length > 0) sig = p.thoughtSignature;
    else if (typeof p.thought_signature === "string" && p.thought_signature.length > 0) sig = p.thought_signature;

    const fc = p.functionCall;
    if (isObj(fc)) {
      this.functionCall(fc, sig);
      return;
    }
    const text = p.text;
    if (typeof text !== "string") {
      // inlineData, executableCode, codeExecutionResult, …: no hub output block
      this.progress++;
      for (const k of Object.keys(p)) {
        if (k === "thoughtSignature" || k === "thought_signature" || k === "thought" || k === "text") continue;
        const kind = `${k} part`;
        if (!(this.dropped ??= []).includes(kind)) this.dropped.push(kind);
        break;
      }
      return;
    }
    if (p.thought === true) this.thinking(text, sig);
    else if (text.length > 0) this.text(text, sig);
    else if (sig) this.signatureOnly(sig);
  }

  private closeOpen(): void {
    if (this.openKind === NONE) return;
    this.emit({ type: "block_stop", index: this.openKey });
    this.openKind = NONE;
  }

  /** A text delta, with the chunk's log probabilities when it has some left. */
  private textDelta(text: string): HubEvent {
    const logprobs = this.logprobs;
    if (logprobs === undefined) return { type: "block_delta", index: this.openKey, delta: { type: "text", text } };
    this.logprobs = undefined;
    return { type: "block_delta", index: this.openKey, delta: { type: "text", text, logprobs } };
  }

  private text(text: string, sig: string | undefined): void {
    if (this.openKind !== TEXT) {
      this.closeOpen();
      this.openKind = TEXT;
      this.openKey = this.nextKey++;
      if (sig) {
        this.emit({ type: "block_start", index: this.openKey, block: { type: "text", signature: this.opaque(sig) } });
        this.emit(this.textDelta(text));
        this.closeOpen();
        return;
      }
      this.emit({ type: "block_start", index: this.openKey, block: { type: "text" } });
    }
    this.emit(this.textDelta(text));
    if (sig) {
      this.emit({ type: "block_delta", index: this.openKey, delta: { type: "signature", signature: this.opaque(sig) } });
      this.closeOpen();
    }
  }

  private thinking(text: string, sig: string | undefined): void {
    if (this.openKind !== THINKING) {
      this.closeOpen();
      this.openKind = THINKING;
      this.openKey = this.nextKey++;
      this.emit({ type: "block_start", index: this.openKey, block: { type: "thinking" } });
    }
    if (text.length > 0) this.emit({ type: "block_delta", index: this.openKey, delta: { type: "thinking", text } });
    if (sig) {
      this.emit({ type: "block_delta", index: this.openKey, delta: { type: "signature", signature: this.opaque(sig) } });
      this.closeOpen();
    }
  }

  private signatureOnly(sig: string): void {
    this.closeOpen();
    const key = this.nextKey++;
    this.emit({ type: "block_start", index: key, block: { type: "thinking" } });
    this.emit({ type: "block_delta", index: key, delta: { type: "signature", signature: this.opaque(sig) } });
    this.emit({ type: "block_stop", index: key });
  }

  private mintId(): string {
    if (this.idBase === undefined) {
      // No responseId (never seen from Google itself): a per-stream random base keeps ids unique
      // across turns of a conversation.
      const b = crypto.getRandomValues(new Uint8Array(8));
      this.idBase = Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
      this.idPart = "";
    }
    this.idPart ??= this.opts.callIdPart ? "_" + this.opts.callIdPart() : "";
    return `call_${this.idBase}${this.idPart}_${this.minted++}`;
  }

  private functionCall(fc: Obj, sig: string | undefined): void {
    const name = typeof fc.name === "string" && fc.name.length > 0 ? fc.name : undefined;
    const partial = Array.isArray(fc.partialArgs) ? (fc.partialArgs as GeminiPartialArg[]) : undefined;
    const willContinue = fc.willContinue === true;
    if (name !== undefined) {
      // Whole arguments are serialised below: nested past MAX_JSON_DEPTH, the reply fails instead
      // (formats/json-depth.ts; decodeResponse throws it).
      if (isObj(fc.args) && valueNestsDeeperThan(fc.args)) return this.fail(upstreamNestedTooDeep("tool-call arguments"));
      this.closeStreamed();
      this.closeOpen();
      const key = this.nextKey++;
      const id = typeof fc.id === "string" && fc.id.length > 0 ? fc.id : this.mintId();
      const clientName = clientToolName(this.opts.toolNames, name);
      const block: { type: "tool_call"; id: string; name: string; signature?: Opaque } = { type: "tool_call", id, name: clientName };
      if (sig) block.signature = this.opaque(sig);
      this.emit({ type: "block_start", index: key, block });
      const args = isObj(fc.args) ? fc.args : undefined;
      if (willContinue || partial) {
        const acc = new PartialArgsAccumulator(args);
        if (partial) acc.apply(partial);
        this.streamed = { key, acc };
        if (!willContinue) this.closeStreamed();
      } else {
        this.emit({ type: "block_delta", index: key, delta: { type: "tool_args", json: JSON.stringify(args ?? {}) } });
        this.emit({ type: "block_stop", index: key });
      }
      return;
    }
    const s = this.streamed;
    if (!s) return; // a stray continuation or an empty `functionCall: {}` with no call open
    if (sig) this.emit({ type: "block_delta", index: s.key, delta: { type: "signature", signature: this.opaque(sig) } });
    if (partial) {
      s.acc.apply(partial);
      // no event until the call ends: the read still brought its arguments, so the keep-alive bound
      // (pipeline/keep-alive-bound.ts) must not take a long call's stream for a silent one
      if (partial.length > 0) this.progress++;
    }
    if (!willContinue) this.closeStreamed();
  }

  private closeStreamed(): void {
    const s = this.streamed;
    if (!s) return;
    this.streamed = undefined;
    this.emit({ type: "block_delta", index: s.key, delta: { type: "tool_args", json: s.acc.json() } });
    this.emit({ type: "block_stop", index: s.key });
  }
}

/**
 * Incremental SSE decoder (FormatCodec.createDecoder). `push` feeds one read of upstream bytes (any
 * split: inside `\r\n`, inside a UTF-8 character, inside a JSON line); `end` is EOF. Never throws on malformed input (see
 * StreamDecoder for the one exception: an event past MAX_SSE_EVENT_BYTES).
 */
export function createDecoder(opts: GeminiDecoderOptions, emit: (ev: HubEvent) => void): StreamDecoder {
  const core = new GeminiChunkDecoder(opts, emit);
  let ended = false;
  const reader = new SseReader((ev) => {
    if (core.failed) return;
    const data = ev.data;
    if (data.length === 0 || data === "[DONE]") return;
    let obj: unknown;
    try {
      obj = JSON.parse(data);
    } catch {
      // At EOF an unterminated last event that is not JSON is a cut-off line: the stream is
      // truncated (no finish is emitted, the normalizer reports it), not malformed.
      if (!ended) core.fail(MALFORMED_CHUNK_ERROR);
      return;
    }
    // Several chunks in one payload (the array form of a Gemini stream, as a whole reply may be): in order.
    if (Array.isArray(obj)) for (let i = 0; i < obj.length; i++) core.chunk(obj[i]);
    else core.chunk(obj);
  });
  return {
    push(chunk: Uint8Array): void {
      if (ended || core.failed) return;
      reader.push(chunk);
    },
    end(): void {
      if (ended) return;
      ended = true;
      if (core.failed) return;
      // A last event without its blank line still counts when it is complete JSON (some servers close
      // right after the last `data:` line): SseReader.end() dispatches it.
      reader.end();
    },
    get dropped() {
      return core.dropped;
    },
    get progress() {
      return core.progress;
    },
  };
}
