/**
 * The passthrough reply driver of a native streaming pair (a `ReplyDriver` of pipeline/re-translate.ts,
 * made by its `passthroughDriver`): the format's tap forwards the provider's bytes (or an event tap's
 * events, SPEC 2.5) and observes usage, the finish and errors (SPEC F-3, O-1, 6.4). Once the tap has
 * read an in-band error, its error events (those the tap says are: PassthroughTap.isErrorEvent) are
 * scrubbed of the attempt's secrets before the client gets them (SPEC 2.4, pipeline/scrub-events.ts);
 * until then its output goes out as it is. A native Chat stream whose client asked for usage gets the
 * usage chunk its upstream did not send (pipeline/add-usage-chunk.ts), and its upstream is read no
 * more after the first `[DONE]` ({@link PassthroughDriver.cut}).
 */
import type { HubError, StopReason, Usage } from "../formats/hub.ts";
import type { PassthroughTap, TapState } from "../formats/codec.ts";
import type { OutputSample } from "./output-estimate.ts";
import type { SecretSource } from "./scrub.ts";
import { scrubErrorOutput } from "./scrub-events.ts";
import type { UsageChunkAdder } from "./add-usage-chunk.ts";

/**
 * The driver `passthroughDriver` makes (pipeline/re-translate.ts). A class, not an object literal with
 * getters and closures: its getters live on the prototype, so a reply allocates one object instead of
 * a getter pair per field, two closures and their scope (docs/performance.md item 123).
 */
export class PassthroughDriver<Out> {
  readonly buffered = false;
  readonly empty = false;
  /** The tap's error after `end`: whatever in-band error the client got. */
  private late: HubError | undefined;

  /**
   * The tap's state, for the keep-alive bound's reads (pipeline/committed-reads.ts `look`): they set its
   * `looking` and read its `contentEvents` before a read as plain fields (after it, through
   * {@link contentEvents}).
   */
  readonly tapState: TapState;

  constructor(
    private readonly tap: PassthroughTap<Out>,
    private readonly sample: OutputSample<Out> | undefined,
    /** The attempt's secrets, asked for only once the tap has read an in-band error. */
    private readonly secrets: SecretSource,
    /** A native Chat stream whose client asked for usage: adds the usage chunk the upstream did not send (add-usage-chunk.ts). */
    private readonly usageChunk?: UsageChunkAdder,
    /** A native Chat stream: the reply ends at the tap's terminal event ({@link cut}). */
    private readonly endsAtTerminal = false,
  ) {
    this.tapState = tap.state;
  }

  push(chunk: Uint8Array): Out {
    let out = this.tap.push(chunk);
    // The tap reads each event before it forwards it: an error event in `out` has set `error` by now.
    if (this.tapState.error !== undefined) out = scrubErrorOutput(out, this.secrets, this.tap);
    this.sample?.add(out);
    if (this.usageChunk !== undefined) return this.withUsage(out, false);
    return out;
  }

  /** `out` through {@link usageChunk} (a byte tap's output: the adder is given only to one). */
  private withUsage(out: Out, ended: boolean): Out {
    return this.usageChunk!.add(out as Uint8Array, this.tapState, ended, () => this.outputChars) as Out;
  }

  end(failure?: HubError): Out {
    let out = this.tap.end(failure);
    if (this.tapState.error !== undefined) out = scrubErrorOutput(out, this.secrets, this.tap);
    this.sample?.add(out);
    if (this.usageChunk !== undefined) out = this.withUsage(out, true);
    // Whatever in-band error the client got (the provider's, the failure, or the tap's truncation
    // error) makes the reply a failed one; a failure after the provider's stop reason got only the
    // missing closing frames (SPEC 6.4): the reply finished.
    this.late = this.tap.state.error;
    return out;
  }

  /**
   * {@link ReplyDriver.cut} of a native Chat stream: true once its tap read the first `data: [DONE]`
   * (TapState.terminal), after which it withholds everything (SPEC F-5, [DONE] once), so the readers
   * cancel the upstream read then instead of reading on until the upstream closes, and the connection
   * is released. Undefined for the other taps (their terminal events are not the end of what they
   * forward: a Gemini finish may come before its usage), so the readers never look at it per read. A
   * getter on the prototype: no field or closure per reply, one property read per upstream read.
   */
  get cut(): boolean | undefined {
    return this.endsAtTerminal ? this.tapState.terminal : undefined;
  }

  /** {@link ReplyDriver.cutAtEnd}: a native Chat stream is cut only at its `[DONE]`, the end of its reply. */
  get cutAtEnd(): boolean {
    return this.endsAtTerminal;
  }

  /** {@link ReplyDriver.contentEvents}: the tap's count of events with content (TapState.contentEvents), for the keep-alive bound. */
  get contentEvents(): number {
    return this.tap.state.contentEvents;
  }

  /** {@link ReplyDriver.serverToolRunning}: the tap's count of server tools in flight (TapState.serverTools), for the keep-alive bound. */
  get serverToolRunning(): boolean {
    return (this.tap.state.serverTools ?? 0) > 0;
  }

  get contentSeen(): boolean {
    return this.tap.state.sawContent;
  }

  get earlyError(): HubError | undefined {
    return this.tap.state.sawContent ? undefined : this.tap.state.error;
  }

  get usage(): Usage {
    return this.tap.state.usage;
  }

  get usageSeen(): boolean {
    const u = this.tap.state.usage;
    return u.inputTokens !== undefined || u.outputTokens !== undefined;
  }

  get outputChars(): number {
    return this.sample ? this.sample.count() : 0;
  }

  get stopReason(): StopReason | null {
    return this.tap.state.stopReason;
  }

  get lateError(): HubError | undefined {
    return this.late;
  }
}
