/**
 * What an OpenAI model accepts, by model family, for the Chat Completions and Responses builders:
 * the effort that switches reasoning off ({@link effortForDisabledReasoning}), whether it takes
 * `verbosity` ({@link takesVerbosity}), whether it reasons ({@link reasonsByDefault}) or is one of
 * OpenAI's models that do not ({@link reasonsNever}), the effort a thinking budget stands for
 * ({@link bucketThinkingBudget}), whether it takes an effort at all ({@link takesReasoningEffort}) and
 * which top effort ({@link topEffortFor}), and what an OpenAI model refuses of a built body
 * ({@link dropRefusedFields}). Pure.
 */
import type { ProviderKind } from "../codec.ts";
import type { ReasoningEffort, Warnings } from "../hub.ts";

/** The model id without a routing prefix (`openai/gpt-5.1` → `gpt-5.1`), lower case. */
function bareModel(model: string): string {
  return model.slice(model.lastIndexOf("/") + 1).toLowerCase();
}

/**
 * Whether the model takes `verbosity` (Chat) / `text.verbosity` (Responses): OpenAI introduced it with
 * the gpt-5 family ("verbosity … currently supported values are low, medium, and high", OpenAI API
 * reference; the GPT-5 guide's "Verbosity" section), so an id of that family, also behind a
 * third-party OpenAI-compatible server (OpenRouter's `openai/gpt-5`, an Azure deployment), does; but
 * gpt-5's own chat model (`gpt-5-chat-latest`), which refuses any but `medium` (a curl to OpenAI's Chat
 * endpoint, enricoros/big-AGI#930; "OpenAI only accepts verbosity medium" for it, theopenco/llmgateway
 * #2989), as OpenAI's models before gpt-5 do ({@link openAiTakesVerbosity}); the later
 * `gpt-5.N-chat-latest` take it (the same curl).
 */
export function takesVerbosity(model: string): boolean {
  const m = bareModel(model);
  return /^gpt-5/.test(m) && !/^gpt-5-chat(?:-|$)/.test(m);
}

/**
 * Whether OpenAI's own API ({@link isOpenAiApi}) takes `verbosity` (Chat) / `text.verbosity`
 * (Responses) `value` for `model`: any value for the gpt-5 family ({@link takesVerbosity}); for OpenAI's
 * other models only `medium`, the one they have (gpt-4o answers 400 "Unsupported value: 'verbosity'
 * does not support 'low' with this model. Supported values are: 'medium'.", google-deepmind/concordia
 * #164; probing every model of OpenAI's /v1/models with low/medium/high found the full range only on
 * the gpt-5 family, enricoros/big-AGI#947). A routing prefix is ignored.
 */
export function openAiTakesVerbosity(value: string, model: string): boolean {
  return value === "medium" || takesVerbosity(model);
}

/**
 * The effort that asks an OpenAI model for the least reasoning, for a client that switched reasoning
 * off (Anthropic `thinking: {type: "disabled"}`, Gemini `thinkingBudget: 0`), by model family as
 * OpenAI's API reference for `reasoning_effort` / `reasoning.effort` describes it: "gpt-5.1 defaults
 * to none, which does not perform reasoning"; "all models before gpt-5.1 default to medium reasoning
 * effort, and do not support none" (gpt-5, -mini, -nano take `minimal`); "the gpt-5-pro model defaults
 * to (and only supports) high"; the o-series take `low` at the least, and the Codex models reason at
 * `low` at the least too, as does `codex-mini-latest` (a fine-tuned o4-mini: OpenAI's model page) (400
 * "Unsupported value: 'minimal' … Supported values are: 'none', 'low', 'medium', and 'high'" shows each
 * model refuses a value outside its list); a model that takes no effort ({@link takesReasoningEffort})
 * gets none, with a note. The later chat models
 * (`gpt-5.1-chat-latest`, `gpt-5.2-chat-latest`, … — not gpt-5's own `gpt-5-chat-latest`, which does
 * not reason) reason at medium only: OpenAI answers "Unsupported value: 'reasoning_effort' does not
 * support 'high' with this model. Supported values are: 'medium'." for gpt-5.2-chat-latest
 * (egoist/chatwise-releases#1257, 2026-02), and clients send gpt-5.1-chat-latest no effort at all
 * (chatgpt-web-dev/chatgpt-web#662), so `none` would be refused: they get no effort and the note.
 *
 * `model` is the upstream id; a routing prefix (`openai/gpt-5.1`) is ignored. Returns the effort to
 * send (undefined: send none) and, when the model cannot switch reasoning off, a note for the
 * warning. Models not named above (gpt-4o, gpt-4.1, other servers' models) get neither: they have no
 * reasoning to switch off, and OpenAI's non-reasoning models refuse the field.
 */
export function effortForDisabledReasoning(model: string): { effort?: ReasoningEffort; note?: string } {
  const m = bareModel(model);
  if (reasonsByDefault(model) && !takesReasoningEffort(model)) return { note: `${model} takes no reasoning effort; reasoning could not be switched off` };
  if (/^codex-mini/.test(m)) return { effort: "low", note: `${model} cannot switch reasoning off; reasoning effort low was sent` };
  if (/^gpt-5(?:\.\d+)?-pro/.test(m)) return { note: `${model} only reasons at high effort; reasoning could not be switched off` };
  if (/^gpt-5-chat(?:-|$)/.test(m)) return {}; // does not reason (reasonsNever): nothing to switch off
  if (/^gpt-5\.\d+-chat(?:-|$)/.test(m)) return { note: `${model} only reasons at medium effort; reasoning could not be switched off` };
  if (/^gpt-5/.test(m) && m.includes("codex")) return { effort: "low", note: `${model} cannot switch reasoning off; reasoning effort low was sent` };
  if (/^gpt-5\.\d/.test(m)) return { effort: "none" };
  if (/^gpt-5(?:-|$)/.test(m)) return { effort: "minimal", note: `${model} cannot switch reasoning off (models before gpt-5.1 have no effort none); reasoning effort minimal was sent` };
  if (/^o\d/.test(m)) return { effort: "low", note: `${model} cannot switch reasoning off; reasoning effort low was sent` };
  return {};
}

/**
 * Whether the model is an OpenAI reasoning model, which returns reasoning items (and takes
 * `include: ["reasoning.encrypted_content"]`): the o-series, `codex-mini-latest` (OpenAI's model page: "a
 * fine-tuned version of o4-mini", Responses only) and the gpt-5 family but its chat models
 * (`gpt-5-chat-latest`). OpenAI's other models refuse that include with 400 "Encrypted content is not
 * supported with this model." (param `include`; gpt-4o, gpt-4.1, gpt-5-chat-latest: pydantic/pydantic-ai
 * #2865, #3326). A routing prefix (`openai/gpt-5`) is ignored.
 */
export function reasonsByDefault(model: string): boolean {
  const m = bareModel(model);
  if (/^codex-mini(?:-|$)/.test(m)) return true; // a fine-tuned o4-mini (OpenAI's model page: "Reasoning token support")
  return /^o\d/.test(m) || (/^gpt-5/.test(m) && !m.includes("-chat"));
}

/**
 * Whether the model is one of OpenAI's models that do not reason: gpt-3.5, the gpt-4 family (gpt-4,
 * gpt-4-turbo, gpt-4o, gpt-4.1, gpt-4.5 and their -mini/-nano/dated ids), chatgpt-4o, and gpt-5's chat
 * model (`gpt-5-chat-latest`; not the later `gpt-5.N-chat-latest`, which OpenAI serves as reasoning
 * models: those, like any id not named here, are neither this nor {@link reasonsByDefault}). The
 * `-chat-latest` suffix alone does not make a model one that does not reason: OpenAI refuses
 * gpt-5.2-chat-latest any reasoning effort but `medium` (400 "Supported values are: 'medium'",
 * egoist/chatwise-releases#1257), so it reasons; the model pages stored for the search (OpenAI's own
 * pages for gpt-5.1/5.2-chat-latest were not among them; aimlapi's gpt-5.2-chat-latest page lists no
 * temperature or top_p, its gpt-5.2 page does) say nothing against that. An unknown family (`gpt-6…`)
 * is left unclassified too. OpenAI
 * refuses reasoning fields to them: 400 "Unsupported parameter: 'reasoning.effort' is not supported with
 * this model." and "Encrypted content is not supported with this model." A routing prefix is ignored.
 */
export function reasonsNever(model: string): boolean {
  const m = bareModel(model);
  return /^gpt-(?:3\.5|4)(?:[.\-o]|$)/.test(m) || /^chatgpt-4o/.test(m) || /^gpt-5-chat(?:-|$)/.test(m);
}

/**
 * Whether the provider kind is OpenAI's own API (`openai`, `openai-responses`, `codex`), where the
 * model rules of this file ({@link dropRefusedFields}) hold; an `openai-compatible` server's model may
 * take what OpenAI's refuses, so its request keeps what the client asked.
 */
export function isOpenAiApi(kind: ProviderKind): boolean {
  return kind === "openai" || kind === "openai-responses" || kind === "codex";
}

/**
 * A thinking budget in tokens (Anthropic `thinking.budget_tokens`, Gemini `thinkingBudget`) → the OpenAI
 * reasoning effort it stands for, the one table of the Chat and Responses builders. REFERENCE §5.9 gives
 * the rows (low 1024–2048, medium 4096–8192, high 16384+) and says to bucket by thresholds; the two
 * thresholds are the top of the low row and the foot of the high row: ≤ 2048 `low` (also below 1024:
 * `minimal` is not taken from gpt-5.1 on), 2049–16383 `medium` (so a budget between the low and medium
 * rows, 2049–4095, and one between the medium and high rows, 8193–16383, are both `medium`), ≥ 16384
 * `high`. The efforts the other builders turn into budgets (Anthropic 2048/8192/16384, Gemini
 * 1024/8192/24576) come back as the same effort.
 */
export function bucketThinkingBudget(budget: number): ReasoningEffort {
  if (budget <= 2048) return "low";
  if (budget < 16384) return "medium";
  return "high";
}

/**
 * Whether an OpenAI reasoning model takes a reasoning effort (`reasoning_effort` / `reasoning.effort`) at
 * all: not o1-mini and o1-preview (the effort came with o1 and o3-mini; o1-mini answers 400
 * "Unsupported parameter: 'reasoning_effort' is not supported with this model."), nor
 * `gpt-5-search-api` (400 "Unrecognized request argument supplied: reasoning_effort"; OpenAI community
 * forum, "Setting reasoning_effort with the new gpt-5-search-api ChatCompletions model"). Every other id
 * does as far as this file knows. A routing prefix is ignored.
 */
export function takesReasoningEffort(model: string): boolean {
  const m = bareModel(model);
  return !/^o1-(?:mini|preview)(?:-|$)/.test(m) && !/^gpt-5-search-api(?:-|$)/.test(m);
}

/**
 * Whether the model is one of OpenAI's later chat models (`gpt-5.1-chat-latest`, `gpt-5.2-chat-latest`,
 * …; not gpt-5's own `gpt-5-chat-latest`, which does not reason), which take reasoning effort `medium`
 * only: OpenAI answers any other "Unsupported value: 'high' is not supported with the
 * 'gpt-5.1-chat-latest' model. Supported values are: 'medium'." (Laisky/one-api#266; for
 * gpt-5.2-chat-latest egoist/chatwise-releases#1257, Laisky/one-api#285). A routing prefix is ignored.
 */
export function reasonsAtMediumOnly(model: string): boolean {
  return /^gpt-5\.\d+-chat(?:-|$)/.test(bareModel(model));
}

/**
 * Whether the model is gpt-5-pro (also dated, `gpt-5-pro-2025-10-06`), which reasons at effort `high`
 * only: OpenAI's API reference for `reasoning_effort` / `reasoning.effort`: "The gpt-5-pro model
 * defaults to (and only supports) high reasoning effort." The later pro models (`gpt-5.2-pro`, …) are
 * not named there and are listed with the whole range (`none` … `xhigh`: the openai-tools crate's
 * `ReasoningEffort` table, docs.rs), so they keep what the client asked. A routing prefix is ignored.
 */
export function reasonsAtHighOnly(model: string): boolean {
  return /^gpt-5-pro(?:-|$)/.test(bareModel(model));
}

/**
 * Whether an OpenAI reasoning model refuses effort `xhigh`: OpenAI's API reference for
 * `reasoning_effort` / `reasoning.effort`: "xhigh is supported for all models after
 * gpt-5.1-codex-max", so the o-series, `codex-mini-latest`, gpt-5 (-mini, -nano, -codex, -pro) and gpt-5.1
 * (-codex, -codex-mini) refuse it (400 "Unsupported value: 'xhigh' …"); gpt-5.1-codex-max and gpt-5.2
 * on take it. Only reasoning models that take an effort ({@link reasonsByDefault},
 * {@link takesReasoningEffort}) are named: the others lose the effort whole ({@link dropRefusedFields}).
 */
function refusesXhigh(model: string): boolean {
  if (!reasonsByDefault(model) || !takesReasoningEffort(model)) return false;
  const m = bareModel(model);
  if (/^gpt-5\.1-codex-max/.test(m)) return false;
  return /^o\d/.test(m) || /^codex-mini/.test(m) || /^gpt-5(?:\.1)?(?:-|$)/.test(m);
}

/**
 * The effort to send for a client's effort `max` (Anthropic `output_config.effort`, which OpenAI has
 * not) or `xhigh`: for OpenAI's own API ({@link isOpenAiApi}) and a model that refuses `xhigh`
 * ({@link refusesXhigh}) `high`, the most it takes, with a note for a `changed_field` warning; else `max`
 * becomes `xhigh` (a third-party server's model, an OpenAI model that takes it, an id this file does not
 * know). Any other effort comes back as it is, but to OpenAI's later chat models
 * ({@link reasonsAtMediumOnly}), which take `medium` only: any other effort goes as `medium`, with a note;
 * and to gpt-5-pro ({@link reasonsAtHighOnly}), which takes `high` only: a lower one goes as `high`, with
 * a note (`max` / `xhigh` go as `high` by the rule above).
 */
export function topEffortFor(effort: ReasoningEffort, kind: ProviderKind, model: string): { effort: ReasoningEffort; note?: string } {
  if (effort !== "high" && effort !== "max" && effort !== "xhigh" && isOpenAiApi(kind) && reasonsAtHighOnly(model)) {
    return { effort: "high", note: `${model} reasons at high effort only; effort ${effort} was sent as high.` };
  }
  if (effort !== "medium" && isOpenAiApi(kind) && reasonsAtMediumOnly(model)) {
    return { effort: "medium", note: `${model} reasons at medium effort only; effort ${effort} was sent as medium.` };
  }
  if (effort !== "max" && effort !== "xhigh") return { effort };
  if (isOpenAiApi(kind) && refusesXhigh(model)) {
    return { effort: "high", note: `${model} takes reasoning effort up to high (xhigh only from gpt-5.1-codex-max on); effort ${effort} was sent as high.` };
  }
  return { effort: "xhigh" };
}

/**
 * An Anthropic client's `service_tier` → OpenAI's (Chat and Responses `service_tier`): "auto" (Anthropic:
 * priority capacity when the account has some, else standard) → "auto" (OpenAI: the project's tier),
 * "standard_only" → "default" (the standard rate). No other value maps.
 */
export const ANTHROPIC_SERVICE_TIER: Readonly<Record<string, string>> = { auto: "auto", standard_only: "default" };

/** Sampling fields OpenAI's reasoning models take only at reasoning effort `none`, from gpt-5.1 on. */
const NONE_ONLY = ["temperature", "top_p", "logprobs", "top_logprobs"] as const;
/** Fields OpenAI's reasoning models never take (the reasoning guide's limitations; Chat only). */
const NEVER = ["presence_penalty", "frequency_penalty", "logit_bias"] as const;
/**
 * The values a reasoning model takes for fields it otherwise refuses: their defaults (OpenAI's
 * reasoning guide: "temperature and top_p are fixed at 1, while presence_penalty and frequency_penalty
 * are fixed at 0"; any other value is answered 400 "Unsupported value: 'temperature' does not support
 * 0.7 with this model. Only the default (1) value is supported.").
 */
const DEFAULTS: Readonly<Record<string, number>> = { temperature: 1, top_p: 1, presence_penalty: 0, frequency_penalty: 0 };
/** The `include` entry asking for output-token log probabilities (Responses). */
const LOGPROBS_INCLUDE = "message.output_text.logprobs";
/** The `include` entry asking for a reasoning item's encrypted state (Responses). */
const ENCRYPTED_INCLUDE = "reasoning.encrypted_content";

/** How a value is named in a warning: a string quoted, a list or object as JSON, short. */
function shown(v: unknown): string {
  const s = JSON.stringify(v);
  return s.length > 40 ? s.slice(0, 37) + "..." : s;
}

/**
 * Takes out of a built Chat or Responses body (`effort` where it is: `reasoning_effort` or
 * `reasoning.effort`) what OpenAI's own API refuses for `target.model`, in place, with one
 * `dropped_field` warning per rule; nothing for another kind ({@link isOpenAiApi}) or a model id this
 * file does not recognise as OpenAI's.
 * - a reasoning model ({@link reasonsByDefault}): `temperature`, `top_p`, `logprobs`, `top_logprobs`
 *   (and Responses' `message.output_text.logprobs` include) unless the effort sent is `none` on a model
 *   that takes it (gpt-5.1 on; OpenAI's latest-model guide: "The following parameters are only supported
 *   when using GPT-5.x with reasoning effort set to none: temperature, top_p, logprobs. Requests … with
 *   any other reasoning effort setting, or to older GPT-5 models (e.g., gpt-5, gpt-5-mini, gpt-5-nano)
 *   that include these fields will raise an error"); `presence_penalty`, `frequency_penalty`,
 *   `logit_bias` (the reasoning guide's limitations: "not supported") always; but a field at its default
 *   ({@link DEFAULTS}: temperature 1, top_p 1, penalties 0), which the models take ("Only the default (1)
 *   value is supported"), stays and is not named;
 *   `stop` always but without a warning (400 "Unsupported parameter: 'stop' is not supported with this
 *   model." from o3, o4-mini, gpt-5, gpt-5-mini, gpt-5.2): the caller has the gateway cut the reply at
 *   the stop sequences instead (codec.ts `BuiltRequest.stopsEmulated`); the reasoning effort
 *   (`reasoning_effort`, or Responses' `reasoning`) for a model that takes none
 *   ({@link takesReasoningEffort}: o1-mini, gpt-5-search-api), in a warning of its own;
 * - a model that does not reason ({@link reasonsNever}): `reasoning_effort` / `reasoning` and the
 *   `reasoning.encrypted_content` include.
 * Returns the names of the fields taken out.
 */
export function dropRefusedFields(body: Record<string, unknown>, kind: ProviderKind, model: string, w: Warnings): string[] {
  if (!isOpenAiApi(kind)) return [];
  const out: string[] = [];
  if (reasonsByDefault(model)) {
    const reasoning = body.reasoning as { effort?: unknown } | undefined;
    const effort = body.reasoning_effort ?? reasoning?.effort;
    const noneTakes = effort === "none" && effortForDisabledReasoning(model).effort === "none";
    const sent: string[] = [];
    for (const f of noneTakes ? NEVER : [...NONE_ONLY, ...NEVER]) {
      if (body[f] === undefined || body[f] === DEFAULTS[f]) continue;
      sent.push(`${f} ${shown(body[f])}`);
      out.push(f);
      delete body[f];
    }
    if (body.stop !== undefined) {
      // not warned: the gateway cuts the reply at the request's stop sequences instead (BuiltRequest.stopsEmulated)
      delete body.stop;
      out.push("stop");
    }
    if (!noneTakes && Array.isArray(body.include) && body.include.includes(LOGPROBS_INCLUDE)) {
      body.include = body.include.filter((x) => x !== LOGPROBS_INCLUDE);
      if ((body.include as unknown[]).length === 0) delete body.include;
      sent.push(`include ${LOGPROBS_INCLUDE}`);
      out.push("include");
    }
    if (sent.length > 0) {
      const why =
        effortForDisabledReasoning(model).effort === "none"
          ? "temperature, top_p and logprobs only at reasoning effort none (else temperature and top_p at 1 only), penalties at 0 only, and no logit_bias"
          : "temperature and top_p at 1 only, penalties at 0 only, and no logprobs or logit_bias";
      w.add("dropped_field", `${model} is an OpenAI reasoning model, which takes ${why}: ${sent.join(", ")} not sent.`);
    }
    if (effort !== undefined && !takesReasoningEffort(model)) {
      delete body.reasoning_effort;
      delete body.reasoning;
      out.push("reasoning");
      w.add("dropped_field", `${model} takes no reasoning effort: reasoning effort ${shown(effort)} not sent.`);
    }
  } else if (reasonsNever(model)) {
    const reasoning = body.reasoning as { effort?: unknown } | undefined;
    const effort = body.reasoning_effort ?? reasoning?.effort;
    const sent: string[] = [];
    if (body.reasoning_effort !== undefined || body.reasoning !== undefined) {
      sent.push(effort !== undefined ? `reasoning effort ${shown(effort)}` : "reasoning");
      delete body.reasoning_effort;
      delete body.reasoning;
      out.push("reasoning");
    }
    if (Array.isArray(body.include) && body.include.includes(ENCRYPTED_INCLUDE)) {
      body.include = body.include.filter((x) => x !== ENCRYPTED_INCLUDE);
      if ((body.include as unknown[]).length === 0) delete body.include;
      sent.push(`include ${ENCRYPTED_INCLUDE}`);
      out.push("include");
    }
    if (sent.length > 0) w.add("dropped_field", `${model} does not reason (OpenAI refuses reasoning fields to it): ${sent.join(", ")} not sent.`);
  }
  return out;
}
