/**
 * translate (SPEC R-5, F-3, F-8): the client's body → the body for one target.
 *
 * - Native pairs pass the client's bytes through: Anthropic Messages → `anthropic` / `claude-code`;
 *   Responses → `openai-responses` / `openai` (whose API also speaks Responses); Chat → `openai`;
 *   Gemini → `gemini` (the model and stream mode are in the URL, so the body never changes for them). The
 *   body is re-serialised only when it must change: another model id, a streaming Chat request that
 *   needs `stream_options.include_usage` (F-3), or combo target params.
 * - Native Responses → `codex`: the client's body with only the Codex backend's fixes applied (the
 *   Responses codec's tidy pass for kind `codex`, SPEC P-2, F-9); the reply still passes through.
 * - Native Anthropic → `claude-code` whose system prompt lacks Claude Code's identity line (a look at
 *   its first blocks): the Anthropic codec's tidy pass for kind `claude-code`, which puts the line
 *   first (SPEC P-2); the reply still passes through. Claude Code's own requests carry the line and
 *   keep their bytes.
 * - Same format, third-party server (`openai-compatible`, `anthropic-compatible`): tidied only.
 * - Otherwise through the hub, after the portability policy (F-8) strips or rejects opaque reasoning
 *   state that the target's family did not issue.
 * - Several choices (Chat `n`, Gemini `candidateCount` > 1) only on a native pair: every other reply is
 *   decoded into the hub's one choice, so such a target answers 400 naming the field (the combo may
 *   still reach a native target) instead of returning one choice silently.
 */
import { KIND_TRAITS } from "../formats/codec.ts";
import type { BuildTarget, BuiltRequest, ProviderKind } from "../formats/codec.ts";
import { hubError, type HubError, type HubMessage, type HubPart, type HubRequest, type Warning, type WireFormat } from "../formats/hub.ts";
import { codecFor } from "../formats/index.ts";
// The tools of a built body written once across requests (the same memo as the Responses echo's).
import { bodyJson } from "../formats/write-body-json.ts";
import { hasClaudeCodeIdentity } from "../formats/anthropic-messages/index.ts";
import { bodyBytes, hubOf, requestTextOf, type RequestContext } from "./context.ts";
import { indexOfBytes } from "../formats/index-of-bytes.ts";
import { conversationLeft, emptyConversationError } from "./empty-conversation.ts";
import type { ProviderInfo } from "./ports.ts";
import type { Target } from "./resolve.ts";

/** How the body was produced. */
export type TranslateMode = "native" | "tidy" | "hub";

/** The body for one attempt. */
export interface Translated {
  mode: TranslateMode;
  /** The wire format the upstream call speaks. */
  upstreamFormat: WireFormat;
  body: string | Uint8Array;
  /** Whether the upstream call streams (may differ from the client: F-9). */
  upstreamStream: boolean;
  /** The translation's notes for the client (X-Switchyard-Warning, the trace). Read-only: a native body's list is one shared frozen list (NO_WARNINGS); add by giving a new list. */
  warnings: readonly Warning[];
  /** What the provider format's decoder needs to read the reply (from the builder). */
  decoderHints?: BuiltRequest["decoderHints"];
  /** Kind `codex`: the prompt-cache key the body carries ({@link codexCacheKey}); the executor's `session_id`. */
  promptCacheKey?: string;
  /** `anthropic-beta` values (prefixes) not forwarded with this body (BuiltRequest.droppedBetas: the tidy took away what they enable). */
  droppedBetas?: readonly string[];
  /** The body has none of the request's stop sequences, which the model refuses: the reply is cut at them (BuiltRequest.stopsEmulated). */
  stopsEmulated?: boolean;
}

/** Portability policy of the combo (SPEC F-8). */
export type Portability = "strip_with_warning" | "reject";

/** The wire format a provider is spoken to in, for a given client format. */
export function upstreamFormatFor(provider: ProviderInfo, clientFormat: WireFormat): WireFormat {
  if (provider.kind === "openai" && clientFormat === "openai-responses") return "openai-responses";
  return provider.format;
}

/** SPEC F-3's exact list of native pairs. */
export function isNativePair(clientFormat: WireFormat, kind: ProviderKind): boolean {
  switch (clientFormat) {
    case "anthropic-messages":
      return kind === "anthropic" || kind === "claude-code";
    case "openai-responses":
      return kind === "openai-responses" || kind === "codex" || kind === "openai";
    case "openai-chat":
      return kind === "openai";
    case "gemini":
      return kind === "gemini";
    default:
      return false;
  }
}

/**
 * Whether an Anthropic, Gemini or Responses client's body carries reasoning state the gateway tagged
 * for it (signatures of another provider family travel to those clients as `sy|<family>|<value>`):
 * such a body must not reach the provider byte for byte; the tidy pass (Anthropic, Responses) or the
 * hub (Gemini) untags it and strips what the target did not issue (SPEC F-8).
 */
function carriesTaggedState(ctx: RequestContext): boolean {
  if (ctx.clientFormat !== "anthropic-messages" && ctx.clientFormat !== "gemini" && ctx.clientFormat !== "openai-responses") return false;
  return hasTaggedValue(bodyBytes(ctx));
}

const SIGNATURE_KEY = new TextEncoder().encode('"signature"');
const THOUGHT_SIGNATURE_KEY = new TextEncoder().encode('"thoughtSignature"');
const DATA_KEY = new TextEncoder().encode('"data"');
const ENCRYPTED_CONTENT_KEY = new TextEncoder().encode('"encrypted_content"');

/** `"sy|`: the opening quote of a string value that starts with the gateway's tag. */
const TAG_OPENING = Buffer.from('"sy|');

/**
 * Whether a JSON body has a `"signature"`, `"thoughtSignature"`, `"data"` or `"encrypted_content"` value that starts with the
 * gateway's tag `sy|` (`"signature": "sy|gemini|…"`). Text that merely contains `"sy|` (escaped inside a string) does not
 * count. A byte scan: no decoding or parsing of the body; the tag's occurrences are found with the
 * native `Buffer.indexOf` (a 90 KB Claude Code body in ~1 µs instead of ~60 µs for a JS byte loop),
 * and only they are looked at.
 */
export function hasTaggedValue(raw: Uint8Array): boolean {
  for (let i = indexOfBytes(raw, TAG_OPENING, 1); i > 0; i = indexOfBytes(raw, TAG_OPENING, i + 1)) {
    if (raw[i - 1] === 0x5c) continue; // \"sy| inside a string
    let j = i - 1;
    while (j >= 0 && (raw[j] === 0x20 || raw[j] === 0x0a || raw[j] === 0x0d || raw[j] === 0x09)) j--;
    if (raw[j] !== 0x3a) continue; // not a value after a colon
    j--;
    while (j >= 0 && (raw[j] === 0x20 || raw[j] === 0x0a || raw[j] === 0x0d || raw[j] === 0x09)) j--;
    if (endsWith(raw, j, SIGNATURE_KEY) || endsWith(raw, j, THOUGHT_SIGNATURE_KEY) || endsWith(raw, j, DATA_KEY) || endsWith(raw, j, ENCRYPTED_CONTENT_KEY)) return true;
  }
  return false;
}

function endsWith(raw: Uint8Array, end: number, key: Uint8Array): boolean {
  const start = end - key.length + 1;
  if (start < 0) return false;
  for (let k = 0; k < key.length; k++) if (raw[start + k] !== key[k]) return false;
  return true;
}

/** Leading items of a conversation that enter {@link codexCacheKey}'s hash. */
const OPENING_ITEMS = 8;

/**
 * The prompt-cache key of a Codex call (SPEC P-2): the client's own `prompt_cache_key`, else its
 * session header (`session-id`, `session_id`, `x-switchyard-session`), else `sy-` + 32 hex chars of a
 * SHA-256 over the conversation's opening: the system prompt / instructions and the messages or input
 * items up to and including the first user message (at most {@link OPENING_ITEMS}), which later turns
 * do not change, so every turn of one conversation names the same key. The Codex backend routes a
 * conversation to a warm cache by it, and the Codex CLI sends the same value as `session_id`
 * (observed client behaviour). It is derived here because this is where both the client's headers and
 * its body are at hand: the Responses builder writes it into the body (`BuildTarget.promptCacheKey`),
 * the executor into the `session_id` header (src/providers/codex.ts).
 */
export function codexCacheKey(headers: Headers | undefined, body: Record<string, unknown>): string {
  if (typeof body.prompt_cache_key === "string" && body.prompt_cache_key) return body.prompt_cache_key;
  const session = headers?.get("session-id") ?? headers?.get("session_id") ?? headers?.get("x-switchyard-session");
  if (session) return session;
  const turns = body.input ?? body.messages;
  let lead: unknown = turns ?? null;
  if (Array.isArray(turns)) {
    const firstUser = turns.findIndex((t) => (t as { role?: unknown } | null)?.role === "user");
    lead = turns.slice(0, Math.min(firstUser < 0 ? turns.length : firstUser + 1, OPENING_ITEMS));
  }
  const opening = JSON.stringify([body.instructions ?? body.system ?? null, lead]);
  return "sy-" + new Bun.CryptoHasher("sha256").update(opening).digest("hex").slice(0, 32);
}


/** `"stream_options":{"include_usage":true},` as UTF-8: SPEC F-3 for a Chat client that did not ask. */
const INCLUDE_USAGE_MEMBER = new TextEncoder().encode('"stream_options":{"include_usage":true},');

/**
 * A JSON object's bytes with `member` (`"key":value,`, UTF-8) inserted right after its opening brace,
 * or undefined when `raw` does not start (after whitespace or a UTF-8 BOM) with `{` followed by a
 * member (`{}` and anything else fall back to re-serialising). The caller makes sure the key is not
 * already there. Saves a `JSON.stringify` of the whole body (the conversation) per request.
 */
function withLeadingMember(raw: Uint8Array, member: Uint8Array): Uint8Array | undefined {
  let i = 0;
  if (raw[0] === 0xef && raw[1] === 0xbb && raw[2] === 0xbf) i = 3;
  while (i < raw.length && (raw[i] === 0x20 || raw[i] === 0x09 || raw[i] === 0x0a || raw[i] === 0x0d)) i++;
  if (raw[i] !== 0x7b) return undefined;
  let j = i + 1;
  while (j < raw.length && (raw[j] === 0x20 || raw[j] === 0x09 || raw[j] === 0x0a || raw[j] === 0x0d)) j++;
  if (raw[j] !== 0x22) return undefined; // `{}` or not an object
  const out = new Uint8Array(raw.length - i + member.length);
  if (i <= member.length) {
    // The whole body placed so that its member after the brace lands after `member`; what comes before
    // (the brace, a BOM, whitespace) is then overwritten by the brace and `member`: no view of the body.
    out.set(raw, member.length - i);
  } else out.set(raw.subarray(i + 1), 1 + member.length);
  out[0] = 0x7b;
  out.set(member, 1);
  return out;
}

/**
 * Builds the upstream body for `target`. Returns a {@link HubError} (400 in the client's format) when
 * the request cannot be expressed for it (reject portability, invalid body for the hub, a body nested
 * too deeply to re-encode: JSON.parse accepts depths JSON.stringify runs out of stack on).
 * Throws nothing.
 */
export function translate(ctx: RequestContext, target: Target, portability: Portability): Translated | HubError {
  try {
    return translateBody(ctx, target, portability);
  } catch (e) {
    if (isStackOverflow(e)) return hubError("invalid_request", TOO_DEEP);
    throw e;
  }
}

/**
 * What a codec's builder or tidier is told of `target` (formats/codec.ts BuildTarget): made only on the
 * paths that build or tidy a body, not for a native request whose bytes go as they are (one object per
 * request fewer on the native lanes, docs/performance.md item 253).
 */
function buildTargetOf(target: Target, stream: boolean, promptCacheKey: string | undefined): BuildTarget {
  const provider = target.provider;
  return {
    model: target.model,
    kind: provider.kind,
    family: provider.family,
    stream,
    defaultMaxOutputTokens: provider.models[target.model]?.maxOutputTokens,
    promptCacheKey,
  };
}

const TOO_DEEP = "The request body is nested too deeply to be forwarded (JSON nesting beyond what the gateway re-encodes).";
const isStackOverflow = (e: unknown) => e instanceof RangeError && /call stack/i.test(e.message);

/**
 * The warnings of a native body the gateway did not rebuild (none): one frozen empty list for the process,
 * not an array per request (docs/performance.md item 327). Whoever adds a warning to a {@link Translated}
 * gives it a new list (clamp-output-tokens.ts, src/providers/capabilities.ts), never pushes onto this one.
 */
const NO_WARNINGS: readonly Warning[] = Object.freeze([]);

function translateBody(ctx: RequestContext, target: Target, portability: Portability): Translated | HubError {
  const provider = target.provider;
  const upstreamFormat = upstreamFormatFor(provider, ctx.clientFormat);
  const upstreamStream = KIND_TRAITS[provider.kind].forcesStream || ctx.stream;
  const params = target.params;
  const promptCacheKey = provider.kind === "codex" ? codexCacheKey(ctx.request?.headers, ctx.body) : undefined;
  const codec = codecFor(upstreamFormat);

  if (provider.kind === "codex" && ctx.clientFormat === "openai-responses" && codec.tidyRequest) {
    const buildTarget = buildTargetOf(target, upstreamStream, promptCacheKey);
    // The client's body with only the Codex fixes (formats/openai-responses tidyRequest); combo params
    // are merged first so the fixes hold for them too. Still a native pair: the reply passes through.
    const built = codec.tidyRequest(params ? { ...ctx.body, ...params } : ctx.body, buildTarget);
    return { mode: "native", upstreamFormat, body: bodyJson(built.body, requestTextOf(ctx)), upstreamStream, warnings: built.warnings, promptCacheKey };
  }

  if (isNativePair(ctx.clientFormat, provider.kind) && !carriesTaggedState(ctx)) {
    if (provider.kind === "claude-code" && codec.tidyRequest && !hasClaudeCodeIdentity(ctx.body.system)) {
      // Subscription tokens serve only Claude Code-shaped requests (formats/anthropic-messages
      // withClaudeCodeIdentity); combo params merged first, as for Codex.
      const built = codec.tidyRequest(params ? { ...ctx.body, ...params } : ctx.body, buildTargetOf(target, upstreamStream, promptCacheKey));
      return { mode: "native", upstreamFormat, body: bodyJson(built.body, requestTextOf(ctx)), upstreamStream, warnings: built.warnings };
    }
    if (ctx.clientFormat === "gemini") {
      // Gemini names the model and the stream mode in the URL (the executor's geminiPath): the
      // client's bytes go as they are unless combo params change the body.
      if (!params) return { mode: "native", upstreamFormat, body: bodyBytes(ctx), upstreamStream, warnings: NO_WARNINGS };
      return { mode: "native", upstreamFormat, body: JSON.stringify({ ...ctx.body, ...params }), upstreamStream, warnings: NO_WARNINGS };
    }
    const needsUsage = ctx.clientFormat === "openai-chat" && upstreamStream && !ctx.includeUsage;
    const needsStream = upstreamStream !== ctx.stream;
    const sameModel = ctx.body.model === target.model;
    if (sameModel && !needsUsage && !needsStream && !params) {
      return { mode: "native", upstreamFormat, body: bodyBytes(ctx), upstreamStream, warnings: NO_WARNINGS };
    }
    if (sameModel && needsUsage && !needsStream && !params && ctx.body.stream_options === undefined) {
      // The common streaming Chat request: the client's bytes with the usage option put in front.
      const spliced = withLeadingMember(bodyBytes(ctx), INCLUDE_USAGE_MEMBER);
      if (spliced) return { mode: "native", upstreamFormat, body: spliced, upstreamStream, warnings: NO_WARNINGS };
    }
    const body: Record<string, unknown> = { ...ctx.body, model: target.model };
    if (needsStream) body.stream = upstreamStream;
    if (ctx.clientFormat === "openai-chat" && upstreamStream) {
      const so = typeof body.stream_options === "object" && body.stream_options !== null ? body.stream_options : {};
      body.stream_options = { ...(so as object), include_usage: true };
    }
    if (params) Object.assign(body, params);
    return { mode: "native", upstreamFormat, body: JSON.stringify(body), upstreamStream, warnings: NO_WARNINGS };
  }

  const buildTarget = buildTargetOf(target, upstreamStream, promptCacheKey);
  const choices = requestedChoices(ctx);
  if (choices > 1) {
    // Every reply that is not passed through is read by a decoder that keeps choice 0 (the hub carries
    // one choice): the client would pay for n answers and silently get one.
    // Named as the client wrote it: Gemini's error has no `param`, so its message is all its client reads.
    const gemini = ctx.clientFormat === "gemini";
    const field = gemini ? "generationConfig.candidateCount" : "n";
    // A third-party provider of the client's own API (openai-compatible for a Chat client) is not
    // translated but its replies are normalised through the hub: saying "translation" there misleads.
    const how = upstreamFormat === ctx.clientFormat ? "a third-party provider whose replies are normalised" : "reached through translation";
    return hubError("invalid_request", `${field}=${choices} (several ${gemini ? "candidates" : "choices"}) is only served by the ${gemini ? "Gemini API" : "OpenAI API"} itself; ${target.label} is ${how}, which returns one ${gemini ? "candidate" : "choice"}. Send ${field}=1.`, {
      param: field,
    });
  }

  try {
    if (upstreamFormat === ctx.clientFormat && codec.tidyRequest && (KIND_TRAITS[provider.kind].thirdParty || carriesTaggedState(ctx))) {
      const built = codec.tidyRequest({ ...ctx.body, model: target.model, stream: upstreamStream }, buildTarget);
      if (!conversationLeft(upstreamFormat, built.body)) return emptyConversationError(ctx.clientFormat, ctx.body, undefined, upstreamFormat, target.label, built.warnings);
      if (params) Object.assign(built.body, params);
      return { mode: "tidy", upstreamFormat, body: bodyJson(built.body, requestTextOf(ctx)), upstreamStream, warnings: built.warnings, droppedBetas: built.droppedBetas };
    }
    const hub = hubOf(ctx);
    if (hub.previousResponseId !== undefined && upstreamFormat !== "openai-responses") {
      // B41: server-side history only a Responses provider holds; another provider would answer
      // without it, silently.
      return hubError("invalid_request", `previous_response_id ${hub.previousResponseId} is unknown to ${target.label}: send the full conversation instead.`, {
        param: "previous_response_id",
        code: "previous_response_not_found",
      });
    }
    const portable = applyPortability(hub, provider.family, portability);
    if ("kind" in portable) return portable;
    const req: HubRequest = { ...portable.request, model: target.model, stream: upstreamStream };
    let built = codec.buildRequest(req, buildTarget);
    if (params) {
      Object.assign(built.body, params);
      // The Codex fixes must hold for what the params added (a `temperature` the backend refuses).
      if (provider.kind === "codex" && codec.tidyRequest) {
        const tidied = codec.tidyRequest(built.body, buildTarget);
        built = { ...built, body: tidied.body, warnings: [...built.warnings, ...tidied.warnings] };
      }
    }
    // Client items the hub could not hold (hub.ts droppedItemTypes): not sent, and said so (SPEC F-2).
    const droppedItems: Warning[] = hub.droppedItemTypes?.length
      ? [{ code: "dropped_input_item", message: `${ctx.clientFormat === "anthropic-messages" ? "Content blocks" : "Input items"} with no equivalent in the request to ${target.label} were not sent: ${hub.droppedItemTypes.join(", ")}.` }]
      : [];
    // Turns with nothing in them no target format sends (the builders leave them out): said, as on the tidy lanes.
    const empty = emptyTurns(hub.messages) - (hub.emptiedTurns ?? 0) + (hub.droppedEmptyTurns ?? 0);
    if (empty > 0) droppedItems.push({ code: "dropped_empty_message", message: `${empty} empty message(s) were not sent.` });
    // Nothing left to send (every turn empty or left out): the client's error, before any upstream call.
    if (!conversationLeft(upstreamFormat, built.body)) return emptyConversationError(ctx.clientFormat, ctx.body, hub, upstreamFormat, target.label, [...droppedItems, ...built.warnings]);
    // An effort that is no level (a typo, a capital): the request went without one, and says why (SPEC F-2).
    if (hub.droppedEffort) droppedItems.push(droppedEffortWarning(hub.droppedEffort, target.label));
    return {
      mode: "hub",
      upstreamFormat,
      body: bodyJson(built.body, requestTextOf(ctx)),
      upstreamStream,
      warnings: [...droppedItems, ...portable.warnings, ...built.warnings],
      decoderHints: built.decoderHints,
      promptCacheKey,
      ...(built.stopsEmulated ? { stopsEmulated: true } : {}),
    };
  } catch (e) {
    const err = (e as { error?: HubError }).error;
    if (err && typeof err.status === "number") return err;
    if (isStackOverflow(e)) return hubError("invalid_request", TOO_DEEP);
    return hubError("invalid_request", `The request could not be translated for ${target.label}: ${e instanceof Error ? e.message : String(e)}`);
  }
}

/**
 * The `dropped_reasoning_effort` warning of a reasoning effort that is none of the hub's levels
 * (HubRequest.droppedEffort): names the client's field and value, the levels, and that the request was
 * sent to `label` without an effort (the model's default reasoning). A typo used to read as a field
 * with "no equivalent" (Chat) or go without a word (Responses).
 */
export function droppedEffortWarning(dropped: { field: string; value: unknown }, label: string): Warning {
  return {
    code: "dropped_reasoning_effort",
    message: `${dropped.field} ${JSON.stringify(dropped.value)} is not a reasoning effort level (none, minimal, low, medium, high, xhigh, max); the request was sent to ${label} without one, so the model's default reasoning applies.`,
  };
}

/**
 * How many choices the client asked for: Chat `n`, Gemini `generationConfig.candidateCount` (1 when
 * absent or not a number; Anthropic and Responses have no such field).
 */
function requestedChoices(ctx: RequestContext): number {
  const body = ctx.body;
  let n: unknown;
  if (ctx.clientFormat === "openai-chat") n = body.n;
  else if (ctx.clientFormat === "gemini") {
    const gc = body.generationConfig;
    if (typeof gc === "object" && gc !== null) n = (gc as Record<string, unknown>).candidateCount;
  }
  return typeof n === "number" && Number.isFinite(n) ? n : 1;
}

/**
 * SPEC F-8: opaque reasoning state (thinking signatures, redacted thinking, encrypted reasoning, Gemini
 * thought signatures) goes back only to the family that issued it. `strip_with_warning` removes foreign
 * state and reports it; `reject` answers 400 instead. Returns a new request; the input is not mutated.
 */
export function applyPortability(
  req: HubRequest,
  family: string,
  policy: Portability,
): { request: HubRequest; warnings: Warning[] } | HubError {
  const foreign = new Set<string>();
  let changed = false;
  const messages = req.messages.map((m) => {
    if (m.role !== "assistant") return m;
    const content: HubPart[] = [];
    let touched = false;
    for (const p of m.content) {
      if (p.type === "redacted_thinking" && p.data.family !== family) {
        foreign.add(p.data.family);
        touched = true;
        continue;
      }
      if ((p.type === "thinking" || p.type === "tool_call" || p.type === "text") && p.signature && p.signature.family !== family) {
        foreign.add(p.signature.family);
        touched = true;
        const { signature: _dropped, ...rest } = p;
        content.push(rest as HubPart);
        continue;
      }
      content.push(p);
    }
    if (!touched) return m;
    changed = true;
    return { ...m, content };
  });
  if (!changed) return { request: req, warnings: [] };
  const from = [...foreign].sort().join(", ");
  if (policy === "reject") {
    return hubError(
      "invalid_request",
      `The conversation carries reasoning state issued by ${from}, which this target cannot accept (portability: reject).`,
      { code: "non_portable_reasoning_state" },
    );
  }
  return {
    request: { ...req, messages },
    warnings: [{ code: "stripped_reasoning_state", message: `Removed reasoning state issued by ${from}: the target (${family}) cannot accept it.` }],
  };
}

/**
 * How many turns of a conversation hold nothing: no part, or only empty texts without a signature
 * (a Messages `content: ""`, a Chat assistant `content: ""`). No builder sends them (SPEC F-2: the
 * `dropped_empty_message` warning says so, as formats' tidy steps do on the same-format lanes).
 */
export function emptyTurns(messages: readonly HubMessage[]): number {
  let n = 0;
  for (const m of messages) if (m.content.every((p) => p.type === "text" && p.text.length === 0 && !p.signature)) n++;
  return n;
}
