/**
 * The gateway's request hooks (pipeline GatewayDeps `started` and `finish`): a request is in flight from
 * `started` (earlier requests' reports settled first, the idle trim told, the flight recorder started when
 * on) to `finish` (its connection idle-timed again, src/http/keep-alive.ts), and what it leaves (usage
 * row, cost and key-limit use, trace, report) is made after its reply has been handed over
 * (src/after-reply.ts). Both run on every request: no object or closure is made per request here.
 */
import { noteLateError, presentedSecrets, type Finished, type RequestContext } from "../pipeline/index.ts";
import type { Clock } from "../pipeline/ports.ts";
import type { FlightRecorder } from "./admin/flight-recorder.ts";
import type { AfterReply } from "./after-reply.ts";
import type { RuntimeConfig } from "./config/types.ts";
import { idleAgain, type IdleTimerServer } from "./http/keep-alive.ts";
import type { RequestAccounting } from "./limits/accounting.ts";
import type { IdleTrim } from "./memory/idle-trim.ts";
import type { requestReporter } from "./request-report.ts";
import { usageRecordOf, type ServedBy } from "./usage-record.ts";

/** What the request hooks need of the running instance (src/app.ts). */
export interface RequestTracking {
  /** The ids of the requests in flight (streams included): added by `started`, deleted by `finish`. */
  inflight: Set<string>;
  /** Bun's server once it listens (the idle timer of a finished request's connection). */
  server: () => IdleTimerServer | undefined;
  /** The running configuration, read per request. */
  config: () => RuntimeConfig;
  clock: Clock;
  /** Runs what finished requests still have queued to report. */
  settle: () => void;
  afterReply: AfterReply;
  accounting: RequestAccounting;
  /** Every secret the instance holds (src/list-secrets.ts). */
  secrets: () => string[];
  /** The usage row, metrics, trace, span, live event and log line of a finished request (src/request-report.ts). */
  report: ReturnType<typeof requestReporter>;
  /** The instance that serves, for the usage row and trace (src/usage-record.ts). */
  servedBy: () => ServedBy;
  /** Memory given back once traffic stops (src/memory/idle-trim.ts); undefined when turned off. */
  idleTrim: IdleTrim | undefined;
  recorder: FlightRecorder;
}

/** The gateway's `started` and `finish` hooks (see the module comment). */
export function trackRequests(d: RequestTracking): { started: (ctx: RequestContext) => void; finish: (ctx: RequestContext, f: Finished) => void } {
  const { inflight, server, config, clock, settle, afterReply, accounting, secrets, report, servedBy, idleTrim, recorder } = d;
  const started = (ctx: RequestContext) => {
    settle(); // what earlier requests report is in before this one reads or changes anything
    inflight.add(ctx.requestId);
    idleTrim?.activity();
    if (config().settings.flightRecorder.enabled) ctx.recording = recorder.start(ctx);
  };
  const finish = (ctx: RequestContext, f: Finished) => {
    if (!inflight.delete(ctx.requestId)) return;
    // Its reply is ending: the connection is idle-timed again (src/http/keep-alive.ts).
    idleAgain(server(), ctx.request, config().server.keepAliveTimeoutMs);
    const now = clock.now();
    // The rest (usage row, cost and key-limit use, report) runs after the reply has been handed over
    // (src/after-reply.ts, docs/performance.md item 145); whoever reads it settles the queue first.
    afterReply.add(finishLater, ctx, f, now);
  };
  /** `finish`'s work after the reply: one function for every request, given the request's values (no closure per request). */
  const finishLater = (ctx: RequestContext, f: Finished, now: number) => {
    const rec = usageRecordOf(ctx, f, now, servedBy());
    accounting.finish(ctx, rec, ctx.probe ? undefined : f.target, now, f.reply);
    ctx.trace.outcome = f.outcome;
    if (f.outcome === "upstream_error") noteLateError(ctx.trace, f.reply?.lateError, [...secrets(), ...presentedSecrets(ctx.request.headers, ctx.request.url)]);
    ctx.trace.status = f.status;
    ctx.trace.totalMs = rec.totalMs;
    ctx.trace.warnings = ctx.warnings;
    report(ctx, f, rec, now);
  };
  return { started, finish };
}
