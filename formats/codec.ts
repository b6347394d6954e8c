/**
 * The contract every wire-format folder implements (SPEC F-1). A format folder exports one
 * {@link FormatCodec}; `formats/index.ts` maps {@link WireFormat} to it.
 *
 * Streaming pieces are synchronous, incremental objects that push into a sink callback, so the
 * pipeline composes decoder → normalizer → encoder (or a passthrough tap) inside the one pull-based
 * `ReadableStream` it builds per reply (pipeline/re-translate.ts `replyStream`), with no per-stage
 * promise hop. Nothing here does I/O.
 */
import type {
  HubError,
  HubEvent,
  HubRequest,
  HubResponse,
  ProviderFamily,
  Usage,
  Warning,
  WireFormat,
} from "./hub.ts";
import type { RequestText } from "./write-body-json.ts";

/**
 * Provider kinds (SPEC P-1). The kind decides the wire format, auth and executor fixes; formats use it
 * only for per-kind request details (token-limit field name, cache markers, Codex's `store:false`).
 */
export type ProviderKind =
  | "anthropic"
  | "claude-code"
  | "anthropic-compatible"
  | "openai"
  | "openai-responses"
  | "codex"
  | "openai-compatible"
  | "gemini";

/** What a provider kind implies, in one table (SPEC P-1, P-2, S-2, F-9). */
export interface KindTraits {
  /** Logs in with OAuth (subscription accounts: `switchyard login`/`import`, refresh, discovery). */
  subscription: boolean;
  /** Only answers with a stream (SPEC F-9: Codex); non-streaming clients are served by accumulating. */
  forcesStream: boolean;
  /** The provider's prompt cache needs byte-identical history: token savers stay off (SPEC S-2). */
  promptCacheSensitive: boolean;
  /** A third-party server of a known format (`*-compatible`): tidied requests, normalised replies (F-3), may run without a key. */
  thirdParty: boolean;
}

/** The traits of every provider kind. */
export const KIND_TRAITS: Readonly<Record<ProviderKind, KindTraits>> = {
  anthropic: { subscription: false, forcesStream: false, promptCacheSensitive: true, thirdParty: false },
  "claude-code": { subscription: true, forcesStream: false, promptCacheSensitive: true, thirdParty: false },
  "anthropic-compatible": { subscription: false, forcesStream: false, promptCacheSensitive: false, thirdParty: true },
  openai: { subscription: false, forcesStream: false, promptCacheSensitive: false, thirdParty: false },
  "openai-responses": { subscription: false, forcesStream: false, promptCacheSensitive: false, thirdParty: false },
  codex: { subscription: true, forcesStream: true, promptCacheSensitive: false, thirdParty: false },
  "openai-compatible": { subscription: false, forcesStream: false, promptCacheSensitive: false, thirdParty: true },
  gemini: { subscription: false, forcesStream: false, promptCacheSensitive: false, thirdParty: false },
};

/** What a provider builder needs to know about the target. */
export interface BuildTarget {
  /** The upstream model id to put in the body (or URL, for Gemini). */
  model: string;
  kind: ProviderKind;
  /** The family whose opaque state this provider accepts (portability is applied before building). */
  family: ProviderFamily;
  /** Whether the upstream call will stream (a provider may force streaming, SPEC F-9). */
  stream: boolean;
  /** Default output-token limit for formats that require one (Anthropic), in tokens. */
  defaultMaxOutputTokens?: number;
  /**
   * Kind `codex`: the `prompt_cache_key` to send when the body carries none. The pipeline derives it
   * from the client's session (pipeline/translate.ts `codexCacheKey`); the executor names the
   * session with the same value in the `session_id` header.
   */
  promptCacheKey?: string;
}

/** A provider request body plus what was dropped or changed to build it. */
export interface BuiltRequest {
  body: Record<string, unknown>;
  warnings: Warning[];
  /** Hints the same format's decoder needs to read the reply to this request (e.g. renamed tools). */
  decoderHints?: Partial<DecoderOptions>;
  /**
   * `anthropic-beta` values (each a prefix, e.g. `advanced-tool-use-`, matching any dated version) the
   * client's header may carry that are not forwarded with this body: it uses nothing they enable, what it
   * used having been tidied away (formats/anthropic-messages/deferred-tools.ts, kind
   * `anthropic-compatible`). Absent: the client's betas go as sent.
   */
  droppedBetas?: readonly string[];
  /**
   * The request's stop sequences are not in the body because the model refuses them (an OpenAI reasoning
   * model's Chat `stop`, openai-common/models.ts `dropRefusedFields`): the gateway cuts the reply at them
   * (pipeline/cut-at-stop-sequence.ts), as for a Responses upstream. Absent: the body carries them, or
   * the target's format has no stop field (the pipeline knows those by format).
   */
  stopsEmulated?: boolean;
}

/** Options for a provider-side decoder. */
export interface DecoderOptions {
  /** Family stamped on every opaque value this decoder sees. */
  family: ProviderFamily;
  /**
   * Tool names the builder had to change for the provider (provider name → client name), mapped back
   * on tool calls in the reply (Gemini's, Anthropic's and OpenAI's name rules, formats/tool-names.ts).
   */
  toolNames?: Record<string, string>;
  /**
   * Draws the per-reply part of the call ids a decoder mints for calls that came without one (Gemini's
   * `call_<responseId>_<part>_<n>`, gemini/decoder.ts), once per reply: a server that reuses its
   * responseId then still gives each reply's calls ids of their own. The gateway passes a random one
   * (formats/random-text.ts `randomIdPart`, pipeline/commit.ts); absent, minted ids depend on the reply's bytes alone
   * (tests that compare two decodes of the same bytes).
   */
  callIdPart?: () => string;
}

/**
 * Incremental provider-bytes → hub-events decoder. Never throws on malformed input: emits `error`. The
 * one exception: `push` throws the FormatError of `eventTooLarge` (sse.ts) when one event grows past
 * `MAX_SSE_EVENT_BYTES` without ending; nothing more is decoded after it.
 */
/**
 * A text delta without its event objects (docs/performance.md item 133): `(index, text, plain)` is
 * `emit({ type: "block_delta", index, delta: { type: "text", text } })`, no log probabilities; `plain`
 * as for {@link StreamEncoder.text}.
 */
export type TextDeltaSink = (index: number, text: string, plain: boolean) => void;

export interface StreamDecoder {
  /** Feeds one read of upstream bytes; emits zero or more events into the sink synchronously. */
  push(chunk: Uint8Array): void;
  /** Upstream ended (EOF). Emits whatever the end implies (e.g. Gemini's finish is only known here). */
  end(): void;
  /**
   * Optional: the upstream began a part of the reply that the decoder opens as a block only with its
   * content (a Responses reasoning item's start, before any summary, text or encrypted content): the
   * reply is under way, as after a `block_start`, for the commit point's first-content bound
   * (pipeline/commit.ts, re-translate.ts DecodingDriver.begun).
   */
  readonly begun?: boolean;
  /**
   * Optional: the upstream's stream said it ended (Chat's `data: [DONE]`, REFERENCE's end marker): the
   * decoder decodes nothing after it, so the readers read no more for the client (pipeline/re-translate.ts
   * DecodingDriver.cut). Undefined for a format without such a marker.
   */
  readonly sawEndMarker?: boolean;
  /**
   * Optional: what the upstream's stream held so far that the hub has no slot for and the decoder left
   * out, one name per kind, named as a whole reply's {@link HubResponse.dropped} names them (`server_tool_use
   * block`, `web_search_call item`, `inlineData part`, `audio`); undefined while nothing was. The reply
   * says so in a warning (SPEC F-2: dropped explicitly, never silently; pipeline/commit.ts).
   */
  readonly dropped?: readonly string[];
  /**
   * Optional: how many events of what the decoder leaves out it read that show the upstream at work —
   * a server tool's block (Anthropic's `server_tool_use`, `web_search_tool_result`: start, deltas,
   * stop), a citation, a hosted tool's item and its progress (Responses' `web_search_call` added,
   * `…searching`, done; an annotation), Gemini's code execution parts, Chat's audio. The keep-alive
   * bound counts them as content, as a passthrough counts those events (pipeline/keep-alive-bound.ts):
   * a server tool that works longer than the idle timeout is not cut while it reports.
   */
  readonly progress?: number;
  /**
   * Optional: server tools in flight upstream, as a tap counts them (TapState.serverTools): Anthropic's
   * `server_tool_use` / `mcp_tool_use` blocks started and not yet answered by a `*_tool_result` block,
   * a Responses hosted tool's items added and not done. The keep-alive bound lets keep-alives keep the
   * stream alive longer while it is above 0 (a web search sends only pings until its result).
   */
  readonly serverTools?: number;
}

/** Options for a client-side encoder. */
export interface EncoderOptions {
  /** The model name to show the client (what it asked for, not the upstream id). */
  model: string;
  /** Chat: whether the client asked for `stream_options.include_usage`. */
  includeUsage?: boolean;
  /** The parsed client request, for formats that echo request fields (Responses). */
  request?: HubRequest;
  /**
   * The client request's body as it arrived beside its parsed object (formats/write-body-json.ts
   * `RequestText`), when the gateway has both: a Responses echo finds the request's own tools in the
   * tools memo by their bytes (docs/performance.md item 164). Optional: without it the memo compares.
   */
  requestText?: RequestText;
  /**
   * Chat: the client declared its functions with the legacy `functions` parameter, not `tools`
   * (formats/openai-chat/parse.ts `usesLegacyFunctions`): a call in the reply goes out as the legacy
   * `function_call`, as the Chat API answers such a request, not as `tool_calls`.
   */
  legacyFunctions?: boolean;
  /**
   * Chat: the names of the client's own `custom` tools (formats/openai-chat/custom-calls.ts): a call of
   * one goes out as `{type:"custom", custom:{name, input}}` with the raw input, not as a function call.
   */
  customTools?: ReadonlySet<string>;
  /**
   * Where an encoder says what it changed or left out of the reply for the client's format (SPEC F-2),
   * e.g. the calls after the first for a legacy `functions` request; the pipeline adds it to the
   * request's warnings (the `X-Switchyard-Warning` header while the reply has not started, the call's
   * trace always). Absent: not said.
   */
  warn?(code: string, message: string): void;
  /** Wall clock in ms since the epoch, injected for tests. */
  now?: () => number;
  /** Id generator for ids the gateway mints (`msg_…`, `resp_…`, `chatcmpl-…`), injected for tests. */
  newId?: (prefix: string) => string;
}

/**
 * Incremental hub-events → client-bytes encoder. Input is the CANONICAL event sequence described on
 * {@link HubEvent} (run `normalizeEvents` first). Writes SSE text into the sink.
 */
export interface StreamEncoder {
  event(ev: HubEvent): void;
  /**
   * Optional: `event({ type: "block_delta", index, delta: { type: "text", text } })` (no log
   * probabilities) without its two objects (docs/performance.md item 133). `plain`: the caller knows
   * that `JSON.stringify(text)` is `text` between two quotes (formats/json-text.ts isPlainJsonText);
   * false when it does not know.
   */
  text?(index: number, text: string, plain: boolean): void;
  /**
   * The event stream ended. With a `finish` seen: write the closing frames (B12). Without: write the
   * format's in-band error (SPEC 6.4), never an invented finish. After an `error` event: nothing.
   */
  end(): void;
}

/**
 * Observes a native passthrough stream (SPEC F-3): forwards the provider's bytes unchanged (Chat's
 * usage-only chunk excepted when the client did not ask for it) while reading usage, the stop reason,
 * whether the terminal event arrived, and an in-band error. `Out` is what it forwards: bytes, or (an
 * event tap, {@link FormatCodec.createEventTap}) the same stream's events as {@link StreamEvent}s.
 */
export interface PassthroughTap<Out = Uint8Array> extends InBandErrors {
  /**
   * Feeds one read of upstream bytes; returns what to forward to the client (possibly empty). Throws the
   * FormatError of `eventTooLarge` (sse.ts) when one event grows past `MAX_SSE_EVENT_BYTES` without
   * ending, and of `upstreamNestedTooDeep` (json-depth.ts) for an event longer than 1 MiB nesting past
   * MAX_JSON_DEPTH, read or forwarded unread; `end(failure)` then still gives the format's in-band error.
   */
  push(chunk: Uint8Array): Out;
  /**
   * Upstream ended or failed. Returns the bytes to append: the missing closing frames when the stop
   * reason arrived without them, the format's in-band error when it did not (or `failure` is given),
   * nothing when the stream was complete.
   */
  end(failure?: HubError): Out;
  readonly state: TapState;
}

/** Which events of a stream are its in-band errors: a {@link PassthroughTap}'s knowledge of its format. */
export interface InBandErrors {
  /**
   * Whether an event of this format, its `event:` name (undefined when it has none) and its data, is an
   * in-band error as the tap reads one: an event that sets `state.error` (the provider's error event,
   * its failed-response event), or the error frame `end` writes. Once `state.error` is set, only these
   * events of the tap's output are scrubbed of secrets (pipeline/scrub-events.ts, SPEC 2.4); a content
   * event saying "error" goes out as it came. Never called on an ordinary stream.
   */
  isErrorEvent(event: string | undefined, data: string): boolean;
}

/**
 * One SSE event as an event transport sends it (SPEC 2.5; pipeline/ports.ts `ReplyEvent` is this
 * shape): its `event:` name, undefined when the event had none, and its data.
 */
export interface StreamEvent {
  event: string | undefined;
  data: string;
}

/** What a {@link PassthroughTap} has observed so far. */
export interface TapState {
  usage: Usage;
  /**
   * The Chat tap: a usage object arrived (`usage: {…}`, or Groq's `x_groq.usage`), even one without
   * prompt or completion counts (only `total_tokens`), which leaves {@link usage} without them;
   * absent in the other formats' taps. pipeline/add-usage-chunk.ts adds no usage chunk then.
   */
  usageSeen?: boolean;
  /** Set once the first content-bearing event (text, reasoning, tool call, or finish) arrived. */
  sawContent: boolean;
  /**
   * Events with content read so far, counted as a hub driver counts its decoder's (re-translate.ts
   * `ReplyDriver.contentEvents`): a block's or an output item's start, a non-empty text, reasoning,
   * arguments or signature delta, a finish, and what a decoded lane counts as a server tool's progress
   * (a hosted tool's events). A tap counts one for a read that brought such an event while it was
   * {@link looking}, and stops looking after it; a ping, an SSE comment, an empty delta, a usage or
   * lifecycle event, or a Responses `keepalive` adds nothing. The keep-alive bound
   * (pipeline/keep-alive-bound.ts) counts a read as content when it made this grow.
   */
  contentEvents: number;
  /**
   * Whether the tap looks for content (for {@link contentEvents}) in what it reads next: true at the
   * start; the tap clears it once it counted an event, and the reader of the count sets it again
   * before a read when it wants to know (the keep-alive bound: only until its sweep has seen content
   * since its last pass, so a steady stream is looked at about once a second, not at every read).
   */
  looking: boolean;
  /**
   * Server tools in flight upstream, kept by the taps of formats that have them (Anthropic: a
   * `server_tool_use` or `mcp_tool_use` block started and no `*_tool_result` block since; Responses: a
   * hosted tool's output item added and not done); absent elsewhere. The keep-alive bound
   * (pipeline/keep-alive-bound.ts) lets keep-alives keep a stream alive longer while it is above 0: a
   * web search works in silence, with only pings.
   */
  serverTools?: number;
  stopReason: StopReasonSeen;
  /** The format's terminal event arrived (`message_stop`, `[DONE]`, `response.completed`, …). */
  terminal: boolean;
  /** An in-band error the provider sent. */
  error?: HubError;
}

/** The stop reason a tap saw, or null. */
export type StopReasonSeen = import("./hub.ts").StopReason | null;

/** Options for a passthrough tap. */
export interface TapOptions {
  family: ProviderFamily;
  /** Chat: the client asked for usage; when false the usage-only chunk is withheld. */
  includeUsage?: boolean;
}

/**
 * Which number values of a structured payload (a tool call's input object, a structured tool result)
 * get a {@link TextSlot} of their own ({@link TextSlot.number}): `value` the number, `member` the name of
 * the member it is the value of, or whose value the array holding it is (undefined for an array item
 * not under a member). Pure.
 */
export type NumberSlots = (value: number, member: string | undefined) => boolean;

/**
 * One string inside a request body that a pipeline stage may rewrite in place (token savers, SPEC S-1;
 * redaction, R-1). `text` is the value when the slot was read; `set` writes a new string into the same
 * position of the body object (mutating it). Slots stay valid until the body's structure changes.
 */
export interface TextSlot {
  readonly text: string;
  set(text: string): void;
  /**
   * The text is JSON as the wire carries it (Chat and Responses tool-call `arguments`, a JSON string):
   * the model reads its decoded string values, so a rewrite works on those and must leave valid JSON
   * (a newline there is the two characters `\n`). Absent for plain text.
   */
  readonly json?: true;
  /**
   * The text is the value of an object member with this name (a member of Anthropic `tool_use.input`,
   * Gemini `functionCall.args` or `functionResponse.response`): redaction reads a value under a
   * secret-named member (`password`, `api_key`) as a secret, as it does `password: …` in plain text.
   */
  readonly member?: string;
  /**
   * The text is a number value written as text (`String(n)`; formats/string-leaves.ts: a
   * {@link member}'s value or an array item), given only for the numbers {@link FormatCodec.promptText}'s
   * `numbers` takes (redaction's: any number under a secret-named member, a PIN under `password`, and a
   * card number under any name): `set` puts a string in its place.
   */
  readonly number?: true;
  /**
   * The text is an item of an array that is {@link member}'s value (or of an array inside that one:
   * `{"passwords": ["…", "…"]}`), not the member's whole value: redaction decides whether such items
   * are read as under the member (pipeline/secret-items.ts).
   */
  readonly item?: true;
  /**
   * The whole this slot's text is part of, where one value is cut into several slots
   * (formats/string-leaves.ts: one tool call's input, one structured tool result): redaction holds back
   * placeholder-shaped text written anywhere in it before numbering any of its values, as it does within
   * one text. The same object for every slot of that whole.
   */
  readonly group?: object;
  /** The text is an object member's name (formats/string-leaves.ts): `set` renames the member in place, at {@link commit}. */
  readonly objectKey?: true;
  /** For an {@link objectKey} slot: the object the member belongs to (names within one object must stay distinct). */
  readonly owner?: object;
  /**
   * Makes the sets done so far take effect, where a slot defers them (a member's rename: the object is
   * rebuilt once, in member order, however many of its members were renamed). A caller that sets slots
   * calls `commit` on every slot that has one after all its sets; calling it again does nothing.
   */
  commit?(): void;
}

/** A text slot inside a tool result (SPEC S-1). */
export interface ToolResultSlot extends TextSlot {
  /** Ordinal (from 0, in body order) of the tool result this slot belongs to; a result may hold several text parts. */
  readonly result: number;
  /**
   * Whether the format marks the result as an error: Anthropic `is_error: true`, Gemini
   * `response.error`, Chat's `Error: ` prefix (how formats/openai-chat writes an error result), a
   * Responses legacy `{success: false}` output. Formats that cannot say are false.
   */
  readonly isError: boolean;
}

/**
 * The facts of a plain whole reply ({@link FormatCodec.plainReplyFacts}): its usage as
 * `decodeResponse` maps it (undefined when the body carries none), its stop reason as the hub reply
 * would carry it (always present: a reply without one is not plain; promoted to `tool_use` when the
 * reply calls a tool, as the decoders do), and the characters of its text, reasoning and tool-call
 * arguments as the hub reply's parts would hold them (pipeline/re-translate.ts `replyChars`).
 * `outputChars` is read only for a reply whose usage has neither an input nor an output token count
 * ({@link countsTokens}; ReplyDriver.outputChars): when it has one, a codec may leave out what is costly
 * to measure (tool arguments it would have to serialise), so the count is then a lower bound.
 */
export interface PlainReplyFacts {
  /** The reply's usage: a record made for this call, which the caller may keep (pipeline/re-translate.ts does). */
  usage: Usage | undefined;
  stopReason: import("./hub.ts").StopReason;
  outputChars: number;
}

/**
 * Whether `u` has an input or an output token count: what makes a reply's usage "reported" for the
 * pipeline (ReplyDriver.usageSeen), so that its output characters are not needed
 * ({@link PlainReplyFacts.outputChars}).
 */
export function countsTokens(u: Usage | undefined): boolean {
  return u !== undefined && (u.inputTokens !== undefined || u.outputTokens !== undefined);
}

/**
 * One wire format. Client-side members are optional for formats that are only spoken to providers
 * (Gemini, for now).
 */
export interface FormatCodec {
  readonly format: WireFormat;

  // ---- client side -------------------------------------------------------------------------
  /**
   * The format gives a client a tool call only whole: Gemini's `functionCall.args` is an object (no
   * argument deltas), and a Responses `function_call` item's `output_item.done` is what Codex runs.
   * A call whose arguments a token limit cut cannot reach such a client as the cut call that Chat
   * (`finish_reason: "length"`) and Anthropic (`stop_reason: "max_tokens"`) clients get from their own
   * providers: it ends the reply with the format's in-band error instead (normalize.ts
   * `NormalizerOptions.wholeToolCalls`, `cutToolCallOf`). Absent: false.
   */
  readonly wholeToolCalls?: boolean;
  /** Client body → hub. Throws {@link FormatError} (400 in the client's format) on invalid input. */
  parseRequest?(body: unknown): HubRequest;
  /** Hub events → client SSE text. */
  createEncoder?(opts: EncoderOptions, write: (text: string) => void): StreamEncoder;
  /**
   * Hub events → the same client events without SSE framing: `emit` is called once per event with its
   * name (the SSE `event:` line) and its data (one JSON text), in order. For a transport that frames
   * events itself (Codex's Responses WebSocket sends each as one text frame, SPEC 2.5), so nothing is
   * written as SSE only to be parsed again. Formats served over no such transport leave it out.
   */
  createEventEncoder?(opts: EncoderOptions, emit: (event: string, data: string) => void): StreamEncoder;
  /** Complete reply → non-streaming client body. */
  encodeResponse?(resp: HubResponse, opts: EncoderOptions): unknown;
  /**
   * Optional: the same body as JSON text, exactly `JSON.stringify(encodeResponse(resp, opts))`, for a
   * format that writes parts of it faster itself (Responses: the request echo's tools remembered across
   * requests). Read through {@link encodeResponseJson}.
   */
  encodeResponseText?(resp: HubResponse, opts: EncoderOptions): string;
  /**
   * Optional: what {@link encodeResponse} leaves out of or changes in `resp`, as warnings for
   * `X-Switchyard-Warning` (SPEC F-2; Anthropic: arguments that are not JSON written as `input: {}`).
   * Absent or empty: nothing.
   */
  responseWarnings?(resp: HubResponse): Warning[];
  /** Gateway or upstream error → HTTP error body in this format (status is `err.status`). */
  errorBody(err: HubError): unknown;

  // ---- provider side -----------------------------------------------------------------------
  /** Hub → provider body. Drops what the format cannot say, with a warning. */
  buildRequest(req: HubRequest, target: BuildTarget): BuiltRequest;
  /**
   * Same-format third-party provider (`*-compatible`): tidy the client's body without a hub round trip
   * (cache markers, empty messages, tool-result order, null optional fields; SPEC F-3). Optional: when
   * absent the body goes through the hub.
   */
  tidyRequest?(body: Record<string, unknown>, target: BuildTarget): BuiltRequest;
  /**
   * Provider SSE bytes → hub events. `emitText`, when given, may take a text delta instead of `emit`
   * ({@link TextDeltaSink}; the Chat decoder uses it for its content deltas, the others ignore it).
   */
  createDecoder(opts: DecoderOptions, emit: (ev: HubEvent) => void, emitText?: TextDeltaSink): StreamDecoder;
  /** Non-streamed provider body → hub. Throws {@link FormatError} when the body is not this format. */
  decodeResponse(body: unknown, opts: DecoderOptions): HubResponse;
  /**
   * What a native whole reply is observed for, read straight from the parsed provider body when it has
   * a plain shape (one choice or candidate of text, reasoning and tool calls with its stop reason;
   * nothing the codec is not sure how the decoder reads): exactly what {@link decodeResponse} makes of
   * it, without building the hub reply (issue 17, docs/performance.md items 92, 95, 101, 102). Undefined
   * for every other shape, which the caller then decodes. Optional; never throws.
   */
  plainReplyFacts?(body: unknown): PlainReplyFacts | undefined;
  /**
   * A whole reply of this format (the parsed body, already read by {@link decodeResponse}) as this
   * format's own stream, every field kept: what a native streaming client gets when the upstream
   * answered its stream request with JSON (SPEC F-9's one-shot stream), instead of a replay through the
   * hub, which drops what it has no slot for. Optional: formats whose stream is a plain wrapping of
   * the reply (Chat: one chunk; Gemini: the reply is a chunk); the others replay through the hub and
   * warn of what it dropped.
   */
  replayAsStream?(body: unknown, opts: EncoderOptions): string;
  /**
   * Provider HTTP error (status, body text, response headers) → hub error; never throws. `now` (ms
   * since the epoch) measures an HTTP-date `Retry-After` (formats/retry-after.ts); without it such a
   * header is not read (formats keep no clock: the pipeline passes its clock's time).
   */
  parseError(status: number, body: string, headers: Headers, now?: number): HubError;
  /** Native passthrough observer (SPEC F-3). */
  createTap(opts: TapOptions): PassthroughTap;
  /**
   * The same observer for a client on an event transport (SPEC 2.5: Codex's Responses WebSocket): it
   * forwards the provider's events as it read them, not bytes an event transport would read as SSE
   * again. Only a client format with an event transport has one.
   */
  createEventTap?(opts: TapOptions): PassthroughTap<StreamEvent[]>;

  // ---- body text accessors (optional, pure, no I/O; `formats/<fmt>/tool-results.ts`) ------------
  /**
   * The tool-result text slots of a request body in this format, in body order (SPEC S-1: the token
   * savers rewrite them on the body about to be sent). Never throws: a malformed body yields what it can.
   */
  toolResults?(body: Record<string, unknown>): ToolResultSlot[];
  /**
   * Every text slot the model reads in a client body of this format (SPEC R-1, redaction): system
   * prompt / instructions, message text, tool-call arguments, tool results. Not tool schemas, ids,
   * names, the model, media, or signed reasoning (thinking blocks, encrypted reasoning). Never throws.
   * `numbers`: which number values of structured payloads get a slot too ({@link TextSlot.number}: a
   * PIN under `password`, a card number); none without it. The same body and `numbers` give the same slots.
   */
  promptText?(body: Record<string, unknown>, numbers?: NumberSlots): TextSlot[];
}

/**
 * A complete reply as the non-streaming client body's JSON text in `codec`'s format: its
 * `encodeResponseText` when it has one, else `JSON.stringify` of its `encodeResponse` (the same text).
 *
 * @throws Error when the format has no `encodeResponse` (a provider-only format).
 */
export function encodeResponseJson(codec: FormatCodec, resp: HubResponse, opts: EncoderOptions): string {
  if (codec.encodeResponseText) return codec.encodeResponseText(resp, opts);
  if (!codec.encodeResponse) throw new Error(`${codec.format} cannot encode a reply`);
  return JSON.stringify(codec.encodeResponse(resp, opts));
}
