/**
 * Hub → Gemini client: the stream encoder (canonical hub events → `streamGenerateContent?alt=sse`
 * bytes) and the non-streamed `GenerateContentResponse` body (REFERENCE §4.2, §4.3, §6.4; SPEC F-5,
 * 6.4).
 *
 * Stream grammar the client gets:
 * - `data: <GenerateContentResponse>\n\n` events only: no event names, no `[DONE]`; the end is EOF.
 *   Every chunk carries `candidates: [{content: {role: "model", parts: [...]}, index: 0}]`, the model
 *   the client asked for as `modelVersion`, and one gateway-minted `responseId`.
 * - text → `{text}` parts as they arrive (a delta's token log probabilities as the chunk's candidate
 *   `logprobsResult`); thinking → `{text, thought: true}` parts; a signature (a
 *   text block's, a thinking block's, whatever family issued it) rides on the first part of its block
 *   when it is known at the start, else on an empty part of its own (`{text: "", thoughtSignature}`,
 *   as Gemini itself sends it); a signature minted by another family is tagged `sy|<family>|…`
 *   (mapping.ts) so it only ever goes back to that family (SPEC F-8). Redacted thinking has no Gemini
 *   slot and is not sent.
 * - a tool call is buffered until its block stops and sent as ONE `functionCall` part
 *   `{id, name, args}` with the parsed arguments object (Gemini has no argument deltas; `""` → `{}`;
 *   text that is not a JSON object is sent as `{arguments: "<text>"}` rather than dropped; a call whose
 *   arguments a token limit cut never gets here: the normalizer ends the reply with its error instead,
 *   formats/normalize.ts `NormalizerOptions.wholeToolCalls`). A call without a signature of its own
 *   carries the reasoning since the previous call as its `thoughtSignature` (`sy|thoughts|…`,
 *   thought-carry.ts: Gemini CLI keeps no thought part, but keeps a call's signature), unless it is
 *   longer than thought-carry.ts `MAX_CARRIED_CHARS` (then a `dropped_thinking` warning).
 * - the last chunk carries `finishReason` (mapping.ts `finishReasonToGemini`; `finishMessage` the
 *   finish's `explanation` when it has one: an Anthropic refusal's `stop_details`) and `usageMetadata`
 *   (every counter an integer; only the counts the provider reported, none when it reported no usage,
 *   mapping.ts `usageToGemini`) with `parts: []`, which Gemini CLI accepts as a valid model chunk. It is
 *   written at the end of the event stream, so usage that arrives after the finish is in it.
 * - failure before the finish (an `error` event, or the end without a finish) → one
 *   `data: {"error": {code, message, status}}` chunk (the SDKs raise on it) and nothing else; never an
 *   invented finish. An error after the finish closes the stream normally (SPEC 6.4 exception).
 */
import type { EncoderOptions, StreamEncoder } from "../codec.ts";
import type { HubError, HubEvent, HubResponse, Opaque, ThinkingPart, TokenLogprob, Usage } from "../hub.ts";
import { mergeUsage, type StopReason } from "../hub.ts";
import { checkArgumentsDepth } from "../json-depth.ts";
import { flat, isPlainJsonText } from "../json-text.ts";
import { TRUNCATED_ERROR } from "../normalize.ts";
import { errorBody } from "./errors.ts";
import { finishReasonToGemini, usageToGemini, writeGeminiLogprobs, writeGeminiSignature } from "./mapping.ts";
import { RandomText } from "../random-text.ts";
import { carryThoughts, isCarried, MAX_CARRIED_CHARS, tooLongMessage, type CarriedPart } from "./thought-carry.ts";

/** 18 random bytes (24 base64url chars) per response id, drawn for many ids at once (formats/random-text.ts). */
const RESPONSE_ID_RANDOM = new RandomText(18, 24, "base64url");

/** A fresh response id: 22 random base64url characters (132 bits), the length Google's look like. */
export function defaultResponseId(): string {
  return RESPONSE_ID_RANDOM.next().slice(0, 22);
}

/** Tool-call arguments text → the `args` object Gemini clients expect. Throws a FormatError for arguments nested too deep (formats/json-depth.ts). */
export function argsObject(json: string): Record<string, unknown> {
  if (json.trim().length === 0) return {};
  checkArgumentsDepth(json);
  try {
    const v = JSON.parse(json);
    if (typeof v === "object" && v !== null && !Array.isArray(v)) return v as Record<string, unknown>;
  } catch {
    // not JSON: kept as text below
  }
  return { arguments: json };
}

const NONE = 0;
const TEXT = 1;
const THINKING = 2;
const TOOL = 3;

/** The incremental Gemini encoder; see the module comment. */
export class GeminiEncoder implements StreamEncoder {
  /** `data: {"candidates":[{"content":{"role":"model","parts":[` */
  private static readonly HEAD = `data: {"candidates":[{"content":{"role":"model","parts":[`;
  /** {@link HEAD} and a text part's start up to its opening quote. */
  private static readonly TEXT_HEAD = `data: {"candidates":[{"content":{"role":"model","parts":[{"text":"`;
  /** `]},"index":0}],"modelVersion":…,"responseId":…}\n\n` */
  private readonly tail: string;
  private readonly meta: string;
  /** The text part's closing quote and brace, then {@link tail}: a plain text chunk is HEAD, `{"text":"`, the text, this. */
  private readonly textTail: string;
  private readonly usage: Usage = {};
  private openKind = NONE;
  private openIndex = -1;
  /** A signature known at block start, put on the block's first part. */
  private pendingSig: string | undefined;
  private tool: { id: string; name: string; args: string; sig?: string } | undefined;
  private finish: StopReason | undefined;
  /** The reasoning since the last call (or the start), carried on the next call without a signature (thought-carry.ts). */
  private carry: CarriedPart[] = [];
  /** The open thinking block's part in {@link carry}. */
  private carryThinking: ThinkingPart | undefined;
  /** Characters of text and signatures in {@link carry}; past {@link MAX_CARRIED_CHARS} nothing more is kept (it cannot be carried). */
  private carryChars = 0;
  /** The finish's `explanation` (a refusal's, Anthropic `stop_details`): the last chunk's `finishMessage`. */
  private finishMessage: string | undefined;
  private closed = false;

  constructor(
    private readonly opts: EncoderOptions,
    private readonly write: (text: string) => void,
  ) {
    const id = opts.newId ? opts.newId("") : defaultResponseId();
    this.meta = `"modelVersion":${JSON.stringify(opts.model)},"responseId":${JSON.stringify(id)}}`;
    this.tail = flat(`]},"index":0}],` + this.meta + "\n\n");
    this.textTail = flat('"}' + this.tail);
  }

  private part(json: string): void {
    this.write(GeminiEncoder.HEAD + json + this.tail);
  }

  private sigMember(sig: string | undefined): string {
    return sig === undefined ? "" : `,"thoughtSignature":${JSON.stringify(sig)}`;
  }

  /** {@link StreamEncoder.text}: a text delta without its event objects (the `block_delta` case below, no log probabilities). */
  text(index: number, text: string, plain: boolean): void {
    if (this.closed || this.finish !== undefined || index !== this.openIndex || this.openKind !== TEXT) return;
    // The common chunk: a text without a character to escape, written between the quotes as it is.
    if (this.pendingSig === undefined && (plain || isPlainJsonText(text))) this.write(`${GeminiEncoder.TEXT_HEAD}${text}${this.textTail}`);
    else this.part(`{"text":${JSON.stringify(text)}${this.sigMember(this.pendingSig)}}`);
    this.pendingSig = undefined;
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
      case "block_start": {
        if (this.finish !== undefined) return;
        this.openIndex = ev.index;
        this.pendingSig = undefined;
        const b = ev.block;
        if (b.type === "text") {
          this.openKind = TEXT;
          if (b.signature) this.pendingSig = writeGeminiSignature(b.signature);
        } else if (b.type === "thinking") {
          this.openKind = THINKING;
          const t: ThinkingPart = { type: "thinking", text: "" };
          if (b.itemId) t.itemId = b.itemId;
          if (b.raw) t.raw = true;
          this.carry.push(t);
          this.carryThinking = t;
        } else if (b.type === "tool_call") {
          this.openKind = TOOL;
          this.tool = { id: b.id, name: b.name, args: "" };
          if (b.signature) this.tool.sig = writeGeminiSignature(b.signature);
        } else {
          this.openKind = NONE; // redacted thinking: no Gemini part, only carried on the next call
          this.carry.push({ type: "redacted_thinking", data: b.data });
          this.carryChars += b.data.value.length;
        }
        return;
      }
      case "block_delta": {
        if (this.finish !== undefined || ev.index !== this.openIndex) return;
        const d = ev.delta;
        switch (d.type) {
          case "text": {
            if (this.openKind !== TEXT) return;
            const logprobs = d.logprobs;
            if (logprobs === undefined) {
              // The common chunk: a text without a character to escape, written between the quotes as it is.
              if (this.pendingSig === undefined && isPlainJsonText(d.text)) this.write(GeminiEncoder.TEXT_HEAD + d.text + this.textTail);
              else this.part(`{"text":${JSON.stringify(d.text)}${this.sigMember(this.pendingSig)}}`);
            } else {
              const part = `{"text":${JSON.stringify(d.text)}${this.sigMember(this.pendingSig)}}`;
              this.write(GeminiEncoder.HEAD + part + `]},"logprobsResult":${JSON.stringify(writeGeminiLogprobs(logprobs))},"index":0}],` + this.meta + "\n\n");
            }
            this.pendingSig = undefined;
            return;
          }
          case "thinking":
            if (this.openKind !== THINKING) return;
            this.part(`{"text":${JSON.stringify(d.text)},"thought":true}`);
            this.carryText(d.text);
            return;
          case "thinking_part":
            if (this.openKind === THINKING && this.carryThinking) (this.carryThinking.summary ??= []).push("");
            return;
          case "signature":
            this.signature(d.signature);
            return;
          case "tool_args":
            if (this.openKind === TOOL && this.tool) this.tool.args += d.json;
            return;
        }
        return;
      }
      case "block_stop":
        if (this.finish !== undefined || ev.index !== this.openIndex) return;
        if (this.openKind === TOOL && this.tool) {
          const t = this.tool;
          const call = `{"id":${JSON.stringify(t.id)},"name":${JSON.stringify(t.name)},"args":${JSON.stringify(argsObject(t.args))}}`;
          this.part(`{"functionCall":${call}${this.sigMember(t.sig ?? this.carried())}}`);
          this.tool = undefined;
          this.carry = [];
          this.carryChars = 0;
        } else if (this.openKind === TEXT && this.pendingSig !== undefined) {
          this.part(`{"text":""${this.sigMember(this.pendingSig)}}`);
        }
        this.pendingSig = undefined;
        this.openKind = NONE;
        this.openIndex = -1;
        this.carryThinking = undefined;
        return;
      case "finish":
        if (this.finish === undefined) {
          this.finish = ev.reason;
          this.finishMessage = ev.explanation;
        }
        return;
      case "error":
        if (this.finish !== undefined) this.close();
        else this.fail(ev.error);
        return;
    }
  }

  /** A thinking delta's text into the open block's carried part (and its last summary part), while the bound allows. */
  private carryText(text: string): void {
    const t = this.carryThinking;
    if (!t) return;
    this.carryChars += text.length;
    if (this.carryChars > MAX_CARRIED_CHARS) return;
    t.text += text;
    if (t.summary) t.summary[t.summary.length - 1] += text;
  }

  /** The carried-thinking signature for a call without its own (thought-carry.ts), or undefined. */
  private carried(): string | undefined {
    const parts = this.carry.filter(isCarried);
    if (parts.length === 0) return undefined;
    if (this.carryChars > MAX_CARRIED_CHARS) {
      this.opts.warn?.("dropped_thinking", tooLongMessage(this.carryChars));
      return undefined;
    }
    const o = carryThoughts(parts, (n) => this.opts.warn?.("dropped_thinking", tooLongMessage(n)));
    return o ? writeGeminiSignature(o) : undefined;
  }

  private signature(sig: Opaque): void {
    const value = writeGeminiSignature(sig);
    if (this.openKind === THINKING && this.carryThinking) {
      this.carryThinking.signature = sig;
      this.carryChars += sig.value.length;
    }
    if (this.openKind === TOOL && this.tool) this.tool.sig = value;
    else if (this.openKind === THINKING) this.part(`{"text":"","thought":true${this.sigMember(value)}}`);
    else if (this.openKind === TEXT) this.part(`{"text":""${this.sigMember(value)}}`);
  }

  end(): void {
    if (this.closed) return;
    if (this.finish !== undefined) this.close();
    else this.fail(TRUNCATED_ERROR);
  }

  /** The last chunk: finishReason and usage (SPEC F-5 for Gemini clients). */
  private close(): void {
    this.closed = true;
    const reason = finishReasonToGemini(this.finish ?? "other");
    const usage = usageToGemini(this.usage);
    this.write(
      `data: {"candidates":[{"content":{"role":"model","parts":[]},"finishReason":"${reason}",` +
        (this.finishMessage !== undefined ? `"finishMessage":${JSON.stringify(this.finishMessage)},` : "") +
        `"index":0}],` +
        (usage ? `"usageMetadata":${JSON.stringify(usage)},` : "") +
        this.meta +
        "\n\n",
    );
  }

  /** The in-band error chunk; nothing follows (SPEC 6.4). */
  private fail(err: HubError): void {
    this.closed = true;
    this.write("data: " + JSON.stringify(errorBody(err)) + "\n\n");
  }
}

/** Creates a Gemini stream encoder writing SSE text into `write` (codec contract). */
export function createEncoder(opts: EncoderOptions, write: (text: string) => void): StreamEncoder {
  return new GeminiEncoder(opts, write);
}

/**
 * Complete hub reply → the `GenerateContentResponse` a non-streaming Gemini client gets (REFERENCE
 * §4.2): one candidate whose parts are, in output order, text (`thoughtSignature` on the part it came
 * with), thinking (`thought: true`), and `functionCall` parts with parsed `args`; the text's token log
 * probabilities as `logprobsResult`; `finishReason`
 * (absent only for a reply that never said why it stopped) and `finishMessage` (a refusal's
 * explanation, Anthropic `stop_details`, when known), `usageMetadata` (absent when the provider
 * reported no usage), `modelVersion` (the model
 * the client asked for) and a gateway-minted `responseId`.
 */
export function encodeResponse(resp: HubResponse, opts: EncoderOptions): Record<string, unknown> {
  const parts: Record<string, unknown>[] = [];
  let logprobs: TokenLogprob[] | undefined;
  /** Reasoning since the last call, carried on the next call without a signature (thought-carry.ts). */
  let carry: CarriedPart[] = [];
  for (const p of resp.content) {
    if (isCarried(p)) carry.push(p);
    if (p.type === "text") {
      if (p.logprobs) logprobs = logprobs ? logprobs.concat(p.logprobs) : p.logprobs;
      const part: Record<string, unknown> = { text: p.text };
      if (p.signature) part.thoughtSignature = writeGeminiSignature(p.signature);
      parts.push(part);
    } else if (p.type === "thinking") {
      const part: Record<string, unknown> = { text: p.text, thought: true };
      if (p.signature) part.thoughtSignature = writeGeminiSignature(p.signature);
      if (p.text.length > 0 || p.signature) parts.push(part);
    } else if (p.type === "tool_call") {
      const part: Record<string, unknown> = { functionCall: { id: p.id, name: p.name, args: argsObject(p.arguments) } };
      const carried = p.signature ? undefined : carryThoughts(carry, (n) => opts.warn?.("dropped_thinking", tooLongMessage(n)));
      if (p.signature ?? carried) part.thoughtSignature = writeGeminiSignature((p.signature ?? carried)!);
      parts.push(part);
      carry = [];
    }
  }
  const candidate: Record<string, unknown> = { content: { role: "model", parts } };
  if (logprobs) candidate.logprobsResult = writeGeminiLogprobs(logprobs);
  if (resp.stopReason) candidate.finishReason = finishReasonToGemini(resp.stopReason);
  if (resp.stopReason && resp.stopExplanation !== undefined) candidate.finishMessage = resp.stopExplanation;
  candidate.index = 0;
  const out: Record<string, unknown> = { candidates: [candidate] };
  const usage = usageToGemini(resp.usage);
  if (usage) out.usageMetadata = usage;
  out.modelVersion = opts.model;
  out.responseId = opts.newId ? opts.newId("") : defaultResponseId();
  return out;
}
