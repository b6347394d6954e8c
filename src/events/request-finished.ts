/** The `request_finished` live event (SPEC 9.4) built from a finished request's usage row. */
import type { RequestContext } from "../../pipeline/index.ts";
import type { UsageRecord } from "../../pipeline/ports.ts";
import type { RequestFinishedEvent } from "./bus.ts";

/** The `request_finished` event of a finished request (SPEC 9.4): its usage row, no bodies, no secrets. */
export function requestFinishedEvent(ctx: RequestContext, rec: UsageRecord, now: number, served: string | undefined): RequestFinishedEvent {
  const e: RequestFinishedEvent = {
    type: "request_finished",
    at: now,
    routeId: ctx.routeId,
    requestId: ctx.requestId,
    model: rec.requestedModel,
    outcome: rec.outcome,
    status: rec.status,
    latencyMs: rec.totalMs,
    attempts: rec.attempts,
    fallback: rec.fallback,
  };
  if (served !== undefined) e.served = served;
  if (rec.providerId !== undefined) e.provider = rec.providerId;
  if (rec.accountId !== undefined) e.account = rec.accountId;
  if (rec.keyName !== undefined) e.key = rec.keyName;
  if (rec.ttfbMs !== undefined) e.ttfbMs = rec.ttfbMs;
  if (rec.usage.inputTokens !== undefined) e.inputTokens = rec.usage.inputTokens;
  if (rec.usage.outputTokens !== undefined) e.outputTokens = rec.usage.outputTokens;
  if (rec.costUsd !== undefined) e.costUsd = rec.costUsd;
  return e;
}
