/**
 * A client's output-token limit above what the target's model can write (`max_output_tokens` of the
 * provider's `models:` entry, SPEC 2.3) is lowered to that model's limit before the body is sent, with
 * a `clamped_max_tokens` warning (`X-Switchyard-Warning`, the route trace's warnings). Sent as written,
 * the upstream refused it with a 400 (Anthropic: "max_tokens: 100000 > 64000, which is the maximum
 * allowed number of output tokens for …"), and a combo's next target never got the chance.
 *
 * Clamped rather than refused: the limit is the target's, not the request's (one combo may reach models
 * with different limits, and a client such as Claude Code sends one `max_tokens` for every model), and
 * a limit above the model's asks for no more than the model can give, which is what the clamp sends.
 * A model without `max_output_tokens` leaves the body alone (the gateway does not know its limit).
 *
 * The client's own field is read off its parsed body (no cost when it is within the limit or absent);
 * only a body to clamp is parsed and written again, in the upstream format: Chat `max_completion_tokens`
 * and `max_tokens`, Anthropic `max_tokens`, Responses `max_output_tokens`, Gemini
 * `generationConfig.maxOutputTokens` (or the snake_case names Gemini also takes). An Anthropic
 * `thinking.budget_tokens` at or above the lowered limit is lowered below it (Anthropic refuses a budget
 * that is not below `max_tokens`), except under interleaved thinking (the client's `anthropic-beta`
 * holds `interleaved-thinking-2025-05-14`, forwarded to an Anthropic-format upstream): there the budget
 * may exceed `max_tokens`, "as the token limit becomes your entire context window" (Anthropic,
 * docs.anthropic.com/en/docs/build-with-claude/extended-thinking, "budget_tokens must be set to a value
 * less than max_tokens. However, when using interleaved thinking with tools, you can exceed this
 * limit"), so the client's budget is kept, lowered only to the model's `context_window` when one is
 * configured and the budget is above it.
 *
 * A limit the body builder already lowered (the Anthropic builder stops a `max_tokens` it raises by the
 * thinking budget at the model's limit, formats/anthropic-messages/build.ts) gets the same warning: the
 * client asked for more than was sent either way, and it is said once.
 *
 * An Anthropic Messages client that gives no `max_tokens` (null counts as none) and whose body the
 * gateway sends with one it chose (the Anthropic body builders and the anthropic-compatible tidy lane
 * put in the model's `max_output_tokens`, else 8192: formats/anthropic-messages/mapping.ts
 * `DEFAULT_MAX_TOKENS`) gets a `defaulted_max_tokens` warning naming it: Anthropic's own API refuses such
 * a request ("max_tokens: Field required"; docs.anthropic.com/en/api/messages lists `max_tokens` as
 * required), so a client built against the gateway would break there, and a long answer ends at a limit
 * the client never chose. No warning when none was put in: the client's bytes to kind `anthropic`
 * (Anthropic answers for itself) or a translated target whose format needs none. A Chat, Responses or
 * Gemini client without a limit is normal for its format: no warning either.
 */
import type { WireFormat } from "../formats/hub.ts";
import { clientHeadersOf, isCountTokens, type RequestContext } from "./context.ts";
import type { Target } from "./resolve.ts";
import type { Translated } from "./translate.ts";

/** `Warning.code` of a lowered output-token limit. */
export const CLAMPED_MAX_TOKENS = "clamped_max_tokens";

/** `Warning.code` of an Anthropic Messages request sent with a `max_tokens` its client did not give. */
export const DEFAULTED_MAX_TOKENS = "defaulted_max_tokens";

/**
 * The output-token limit the client asked for and the field it wrote it in (Chat
 * `max_completion_tokens`, else `max_tokens`; Anthropic `max_tokens`; Responses `max_output_tokens`;
 * Gemini `generationConfig.maxOutputTokens`), or undefined when it set none (or not as a number).
 */
export function requestedOutputTokens(format: WireFormat, body: Record<string, unknown>): { field: string; value: number } | undefined {
  let field: string;
  let value: unknown;
  switch (format) {
    case "openai-chat":
      field = body.max_completion_tokens !== undefined && body.max_completion_tokens !== null ? "max_completion_tokens" : "max_tokens";
      value = body[field];
      break;
    case "anthropic-messages":
      field = "max_tokens";
      value = body.max_tokens;
      break;
    case "openai-responses":
      field = "max_output_tokens";
      value = body.max_output_tokens;
      break;
    case "gemini": {
      const gc = geminiConfig(body);
      field = "generationConfig.maxOutputTokens";
      value = gc?.maxOutputTokens ?? gc?.max_output_tokens;
      break;
    }
    default:
      return undefined;
  }
  return typeof value === "number" ? { field, value } : undefined;
}

/**
 * Lowers the output-token limit of `translated`'s body to the model's `max_output_tokens` when the
 * client asked for more (see the module comment), pushing a {@link CLAMPED_MAX_TOKENS} warning that
 * names the client's field, what it asked and what was sent; pushes a {@link DEFAULTED_MAX_TOKENS}
 * warning for an Anthropic Messages client that gave no `max_tokens` (see the module comment). Token
 * counting (no generation) is left alone. Replaces `translated.body` when it lowers the limit; a body
 * that does not parse is left as it is (the upstream answers).
 */
export function clampOutputTokens(ctx: RequestContext, target: Target, translated: Translated): void {
  if (isCountTokens(ctx.endpoint)) return;
  if (ctx.clientFormat === "anthropic-messages" && (ctx.body.max_tokens === undefined || ctx.body.max_tokens === null)) {
    return noteDefaultedMaxTokens(translated);
  }
  const model = target.provider.models[target.model];
  const limit = model?.maxOutputTokens;
  if (limit === undefined) return;
  const asked = requestedOutputTokens(ctx.clientFormat, ctx.body);
  if (asked === undefined || !(asked.value > limit)) return;
  const body = parsedBody(translated);
  if (!body) return;
  const format = translated.upstreamFormat;
  let note = "";
  if (lowerLimit(format, body, limit)) {
    if (format === "anthropic-messages") note = fitBudget(body, limit, interleavedThinking(ctx, format), model?.contextWindow);
    translated.body = JSON.stringify(body);
  }
  // Lowered here, or nothing above the limit was in the body: the builder lowered it already (none sent: no warning).
  const sentLimit = limitOf(format, body);
  if (sentLimit === undefined || translated.warnings.some((w) => w.code === CLAMPED_MAX_TOKENS)) return;
  // A new list: a native body's is shared (translate.ts NO_WARNINGS).
  translated.warnings = [
    ...translated.warnings,
    {
      code: CLAMPED_MAX_TOKENS,
      message: `${asked.field} ${asked.value} is above the ${limit} output tokens ${target.label} can write (its max_output_tokens); ${sentLimit} was sent${note}.`,
    },
  ];
}

/**
 * Pushes the {@link DEFAULTED_MAX_TOKENS} warning for an Anthropic Messages request without
 * `max_tokens` when `translated`'s body carries a limit (the one the gateway put in), naming it. No
 * limit in the body, or a body that does not parse: no warning (the upstream answers for itself).
 */
function noteDefaultedMaxTokens(translated: Translated): void {
  const body = parsedBody(translated);
  const sent = body && limitOf(translated.upstreamFormat, body);
  if (sent === undefined) return;
  // A new list: a native body's is shared (translate.ts NO_WARNINGS).
  translated.warnings = [
    ...translated.warnings,
    {
      code: DEFAULTED_MAX_TOKENS,
      message: `max_tokens was not given; the gateway sent ${sent}. Anthropic's API requires it and refuses a request without it.`,
    },
  ];
}

/** The upstream body of `translated` parsed, or undefined when it is not a JSON object. */
function parsedBody(translated: Translated): Record<string, unknown> | undefined {
  try {
    const body: unknown = JSON.parse(typeof translated.body === "string" ? translated.body : new TextDecoder().decode(translated.body));
    return typeof body === "object" && body !== null && !Array.isArray(body) ? (body as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** The `anthropic-beta` flag under which a thinking budget may exceed `max_tokens` (Anthropic's docs). */
export const INTERLEAVED_THINKING_BETA = "interleaved-thinking-2025-05-14";

/**
 * Whether the upstream call runs with interleaved thinking: the client's `anthropic-beta` header (one
 * or more comma-separated flags) names {@link INTERLEAVED_THINKING_BETA} and reaches the upstream, which
 * it does only from an Anthropic client to an Anthropic-format provider (src/providers/index.ts).
 */
function interleavedThinking(ctx: RequestContext, upstream: WireFormat): boolean {
  if (ctx.clientFormat !== "anthropic-messages" || upstream !== "anthropic-messages") return false;
  const betas = clientHeadersOf(ctx).get("anthropic-beta");
  return betas !== null && betas.split(",").some((b) => b.trim() === INTERLEAVED_THINKING_BETA);
}

/**
 * Fits an Anthropic body's `thinking.budget_tokens` to its lowered `max_tokens` (`limit`): below it
 * (not under Anthropic's minimum of 1,024), or under interleaved thinking within `contextWindow` only.
 * Returns the clause the warning adds ("" when the budget is left as sent).
 */
function fitBudget(body: Record<string, unknown>, limit: number, interleaved: boolean, contextWindow: number | undefined): string {
  const thinking = body.thinking;
  if (typeof thinking !== "object" || thinking === null) return "";
  const t = thinking as Record<string, unknown>;
  const budget = t.budget_tokens;
  if (typeof budget !== "number") return "";
  if (interleaved) {
    if (contextWindow === undefined || budget <= contextWindow) return "";
    t.budget_tokens = contextWindow;
    return `; thinking.budget_tokens ${budget} lowered to ${contextWindow} (its context_window; with interleaved thinking the budget may exceed max_tokens)`;
  }
  if (budget < limit) return "";
  t.budget_tokens = Math.max(1024, limit - 1);
  return `; thinking.budget_tokens ${budget} lowered to ${t.budget_tokens} (Anthropic takes a budget below max_tokens)`;
}

/** The output-token limit an upstream body carries (the first of its format's fields that is a number). */
function limitOf(format: WireFormat, body: Record<string, unknown>): number | undefined {
  const { holder, keys } = limitFields(format, body);
  for (const k of keys) {
    const v = holder?.[k];
    if (typeof v === "number") return v;
  }
  return undefined;
}

/** Sets every output-token limit of an upstream body above `limit` to `limit`; whether one was. */
function lowerLimit(format: WireFormat, body: Record<string, unknown>, limit: number): boolean {
  const { holder, keys } = limitFields(format, body);
  let lowered = false;
  for (const k of keys) {
    const v = holder?.[k];
    if (holder && typeof v === "number" && v > limit) {
      holder[k] = limit;
      lowered = true;
    }
  }
  return lowered;
}

/** Where a body of `format` holds its output-token limit: the object and the field names, in order. */
function limitFields(format: WireFormat, body: Record<string, unknown>): { holder: Record<string, unknown> | undefined; keys: readonly string[] } {
  switch (format) {
    case "openai-chat":
      return { holder: body, keys: ["max_completion_tokens", "max_tokens"] };
    case "anthropic-messages":
      return { holder: body, keys: ["max_tokens"] };
    case "openai-responses":
      return { holder: body, keys: ["max_output_tokens"] };
    case "gemini":
      return { holder: geminiConfig(body), keys: ["maxOutputTokens", "max_output_tokens"] };
    default:
      return { holder: undefined, keys: [] };
  }
}

/** A Gemini body's `generationConfig` (or `generation_config`), when it is an object. */
function geminiConfig(body: Record<string, unknown>): Record<string, unknown> | undefined {
  const gc = body.generationConfig ?? body.generation_config;
  return typeof gc === "object" && gc !== null && !Array.isArray(gc) ? (gc as Record<string, unknown>) : undefined;
}
