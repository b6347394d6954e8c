/**
 * A call's outcome on the Calls page: the list's and the call view's pill, and, for a reply cut after
 * the commit point (SPEC 6.4: outcome `upstream_error` with the 200 its client had already been sent),
 * what says it was cut. Until 2026-12-07 such a call read "upstream_error 200", the status looking like
 * a success; now the pill is followed by "200 sent, reply cut" and the call view names the error its
 * client's stream ended with (the served attempt's, as the trace keeps it since 2026-12-04).
 */
import { Pill } from "../components.tsx";
import type { RouteTrace } from "../types.ts";

/** Whether a call's outcome and status say its reply started (the status sent, 2xx) and was then cut off upstream. */
export function cutAfterCommit(outcome: string, status: number | undefined): boolean {
  return outcome === "upstream_error" && status !== undefined && status >= 200 && status < 300;
}

/** The words after a cut reply's pill, and their title. */
const cutWords = (status: number) => `${status} sent, reply cut`;
const CUT_TITLE =
  "The reply had started (its status and part of it reached the client) when the upstream failed: the client's stream ended with an error, after the commit point (no other account or target is tried then). The call's view names the error.";

/**
 * A call's outcome as a pill. Where the pill may wrap (the Calls table on a phone), `upstream_error` and
 * `client_closed` may break after their underscore: whole, the widest word of the table pushed the
 * Total column past the card's edge at 390 px, or squeezed the model names into broken parts. A reply
 * cut after the commit point has its status outside the pill, as "200 sent, reply cut".
 */
export function OutcomePill({ outcome, status }: { outcome: string; status?: number }) {
  const tone = outcome === "ok" ? "ok" : outcome === "client_closed" ? "off" : outcome === "rejected" ? "warn" : "bad";
  const words = outcome.split("_");
  const cut = cutAfterCommit(outcome, status);
  return (
    <>
      <Pill tone={tone} title={cut ? CUT_TITLE : undefined}>
        {words.map((w, i) => (i < words.length - 1 ? [`${w}_`, <wbr key={i} />] : w))}
        {status && !cut ? ` ${status}` : ""}
      </Pill>
      {cut && (
        <span class="outcome-cut" title={CUT_TITLE}>
          {" "}
          {cutWords(status!)}
        </span>
      )}
    </>
  );
}

/**
 * The call view's account of a reply cut after the commit point: the status its client got, that part
 * of the reply came first, and the error its stream ended with: the served attempt's, which is the
 * last (after the commit point no other attempt is tried, SPEC 6.4), or, when it has none recorded (a
 * trace recorded before 2026-12-04), that the trace does not name it. An earlier attempt's error (one
 * the client never saw, before a fallback) is never named here.
 */
export function CutReply({ status, trace }: { status: number; trace: RouteTrace }) {
  const n = trace.attempts.length;
  const last = n > 0 ? trace.attempts[n - 1] : undefined;
  const a = last?.error ? last : undefined;
  return (
    <div class="answered-error cut-reply" data-error-status={status}>
      <h3>The reply was cut after it started</h3>
      <p class="cut-reply-head">
        The client got status {status} and the start of the reply; then its stream ended with an error
        {a ? ` (attempt #${n}, ${a.target}):` : ", which this trace does not name."}
      </p>
      {a && <p class="answered-error-message">{a.error}</p>}
    </div>
  );
}
