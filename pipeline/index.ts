/**
 * The public surface of pipeline/, with ports.ts: src/ imports the pipeline from these two files only
 * (ports.ts for the types src implements — clock, providers, accounts, keys, usage and trace sinks —
 * and this file for everything else; scripts/check-structure.ts holds src/ to at most three pipeline
 * modules). Modules inside pipeline/ import each other directly, never this file.
 *
 * - the gateway (SPEC 3) and the ports of its stages: the attempt loop's account health, the pick
 *   stage's account pool, the execute stage's executors;
 * - routing vocabulary (targets, routing table, predicates) for the config loader and the admin API;
 * - the helpers the HTTP and admin layers share with the pipeline (guard decisions, error answers,
 *   secret scrubbing, the dry run).
 */
// The gateway and the request context
export { createGateway, type Gateway, type GatewayDeps } from "./gateway.ts";
export {
  bodyBytes,
  ENDPOINT_FORMAT,
  isCountTokens,
  errorResponse,
  WWW_AUTHENTICATE,
  isLoopback,
  isRemote,
  noteLateError,
  vouchForOrigin,
  type BilledAttempt,
  type Endpoint,
  type Finished,
  type IncomingRequest,
  type ReceivedBody,
  type RequestContext,
  type RequestHead,
} from "./context.ts";
export { bodyLeftUnread, closeIfBodyUnread, drainDeadlineMs, drainUnreadBody, DRAIN_MAX_BYTES, DRAIN_MAX_MS, type DrainableRequest } from "./unread-body.ts";
export { authenticate, checkRequestBody, DEFAULT_BODY_TIMEOUT_MS, keyDisabledMessage, presentedKey, readBody as readRequestBody, stripClientModelSuffix, type GuardSettings } from "./guard.ts";
export { MAX_JSON_DEPTH, nestsDeeperThan } from "../formats/json-depth.ts";
export { BUDGET_WINDOW_MS, estimateInputOfRequest, estimateTokensOfBody, hasCountedLimits, modelAllowed, modelNotAllowedMessage, refusalError } from "./key-limits.ts";
export { configKeyIdFor, FIRST_STORED_GENERATION, keyId, keyIdFor, keyNameOfId } from "./key-id.ts";
export { estimateOutputTokens } from "./output-estimate.ts";
export { CLIENT_KEY_PLACEHOLDERS, cutScrubbed, presentedSecrets, scrubAndCut, scrubbedHead, scrubText, scrubValue, traceNeedsScrub } from "./scrub.ts";

// Ports of the stages
export type { AccountHealth, AttemptSettings, RefreshReport } from "./attempt-loop.ts";
export { readBounded } from "./attempt-loop.ts";
export { describeExclusion, type AccountCandidate, type AccountPool, type CacheState, type Exclusion, type PickHints } from "./pick.ts";
export { ClientHeaders, headersWithPrefix, type HeaderReader } from "./client-headers.ts";
export { executeCall, TransportError, type Executor, type ExecutorFor, type UpstreamCall, type UpstreamReply } from "./execute.ts";
export { GraceEnd } from "./grace-end.ts";
export { QUOTA_LOCK_REASON, RATE_LIMIT_REASONS, type Classification } from "./classify.ts";
export type { Translated } from "./translate.ts";

// Routing: resolve, order, predicates, the dry run
export type { ComboSpec, ComboStrategy, Resolution, RoutingTable, Target, TargetSpec } from "./resolve.ts";
export { comboRepeats, noAccountMessage, resolveModel } from "./resolve.ts";
export { planRoute, planRouteSeeded, TargetOrder, type RoutePlan } from "./order.ts";
export {
  CAPABILITIES,
  FACT_TYPES,
  PREDICATE_OPS,
  type FactType,
  type PredicateComparison,
  type PredicateExpr,
  type PredicateFact,
  type PredicateOp,
  type TargetPredicate,
  type WhenUnknown,
} from "./predicates.ts";
export { parseTraceparent, randomHexId, upstreamTraceparent, type TraceParent } from "./trace-context.ts";
