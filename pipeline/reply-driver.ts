/**
 * The per-attempt reply driver's interface (SPEC R-9, F-3, 6.4): what the commit point, the reply
 * stream and the event pump (pipeline/commit.ts, re-translate.ts, pump-events.ts) read of a reply
 * while it is driven. The drivers themselves are in re-translate.ts and passthrough-driver.ts.
 */
import type { HubError, StopReason, Usage, Warning } from "../formats/hub.ts";

/**
 * Per-attempt reply state machine. `push` takes one read of upstream bytes and returns the client's
 * output of it now (empty when nothing is ready). `end` is called once, at upstream EOF or with the
 * failure that ended it, and returns the final output. The output is bytes (`Out` = Uint8Array) for an
 * HTTP body, or the reply's events ({@link ReplyEvent}[]) for an event transport (SPEC 2.5).
 */
export interface ReplyDriver<Out = Uint8Array> {
  push(chunk: Uint8Array): Out;
  end(failure?: HubError): Out;
  /** Content (text, reasoning, tool call, or a finish) has been seen: the attempt may commit. */
  readonly contentSeen: boolean;
  /**
   * Optional: the upstream's reply has begun a block, content or not yet (a thinking block's start with
   * no thinking so far, which the hub drivers commit only with its first text): the reply is under way,
   * so the commit point's first-content bound counts again from that start (pipeline/commit.ts).
   */
  readonly begun?: boolean;
  /** An error the provider reported before any content: the attempt failed before the commit point. */
  readonly earlyError: HubError | undefined;
  /** Usage observed so far (tokens). */
  readonly usage: Usage;
  /** Whether the provider reported usage at all. */
  readonly usageSeen: boolean;
  /**
   * Optional, for the keep-alive bound (pipeline/keep-alive-bound.ts: a read that made it grow is content;
   * without it, a read's bytes): the events with content (a block's start, a non-empty text, reasoning,
   * arguments or signature delta) a decoder produced, counted before anything holds them (the normalizer,
   * a client encoder writing a call whole), and its events of what the hub leaves out that show the
   * upstream at work (StreamDecoder.progress); for a passthrough, its tap's (TapState.contentEvents).
   */
  readonly contentEvents?: number;
  /**
   * Optional, for the keep-alive bound (pipeline/keep-alive-bound.ts, asked only when a stream is due):
   * a server tool is in flight upstream (started and its result not yet arrived: Anthropic's
   * `server_tool_use`, a Responses hosted tool's item), so keep-alives are the upstream at work for
   * longer (SERVER_TOOL_IDLE_FACTOR). A decoder's {@link StreamDecoder.serverTools}; a passthrough's tap's
   * (TapState.serverTools).
   */
  readonly serverToolRunning?: boolean;
  /**
   * Characters of text, reasoning and tool-call arguments that reached the client
   * (pipeline/output-estimate.ts): what the output of a reply without usage is estimated from. Read it
   * only then: a passthrough counts them when read.
   */
  readonly outputChars: number;
  readonly stopReason: StopReason | null;
  /** An error that ended the reply after content (the client got an in-band error). */
  readonly lateError: HubError | undefined;
  /** true for drivers that only produce output at `end` (non-streaming clients). */
  readonly buffered: boolean;
  /**
   * Optional: what the upstream's reply held that the client's reply, from the hub, leaves out, one
   * name per kind: a whole reply's ({@link HubResponse.dropped}), or a decoded stream's so far
   * ({@link StreamDecoder.dropped}); the commit point warns of it (SPEC F-2).
   */
  readonly dropped?: readonly string[];
  /**
   * Optional, for a reply sent whole (set by `end`): what the client's JSON body, written from the hub,
   * changed of the upstream's reply, as the client format says it (codec `responseWarnings`: an
   * Anthropic call's cut arguments written as `input: {}`); the commit point adds them to the request's
   * warnings (SPEC F-2).
   */
  readonly replyWarnings?: readonly Warning[];
  /** For whole replies: the reply had nothing usable (no text, tool call, reasoning or finish). */
  readonly empty: boolean;
  /**
   * Optional; true for a driver that gathers a streamed reply for a non-streaming client
   * ({@link AccumulatedDriver}, SPEC F-9). Until such a reply holds content ({@link contentSeen}), the
   * commit point does not count events that add nothing to it (keep-alive pings) as the upstream
   * speaking: the provider's idle timeout runs on as if it were silent (pipeline/commit.ts).
   */
  readonly gathers?: boolean;
  /**
   * Optional: takes one read like `push` but keeps its output, which then comes with the next `push`
   * or `end` (observations are updated at once). The commit point holds the reads it peeks, so a reply
   * that ends during the peek is encoded once, as one part, instead of once per read and then joined.
   */
  hold?(chunk: Uint8Array): void;
  /**
   * Optional: the reply ended at a stop sequence the gateway emulates (pipeline/cut-at-stop-sequence.ts),
   * or a native Chat stream at its first `[DONE]` (passthrough-driver.ts): its finish was handed on, so
   * the upstream is read no more (its reader cancelled) and the driver ended.
   * Undefined (from the start) for a driver that emulates none: the readers then never look at it per read.
   */
  readonly cut?: boolean;
  /**
   * Optional: when {@link cut}, whether the upstream's reply ended there (a Chat stream's `[DONE]`), not
   * cut short at a stop sequence: its reader is then cancelled a little later, so the body can end and
   * its connection be reused (pipeline/release-after-done.ts).
   */
  readonly cutAtEnd?: boolean;
  /**
   * Optional: {@link end}, whose output may be the text whose UTF-8 bytes `end` would return (a driver
   * that writes text returns it unencoded). Called instead of `end` only for a reply the commit point
   * sends whole as an HTTP body: Bun writes a Response made from a string without the JS byte array
   * `end` makes (docs/performance.md item 186).
   */
  endWhole?(failure?: HubError): Out | string;
}
