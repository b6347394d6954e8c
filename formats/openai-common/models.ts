/**
 * What an OpenAI model accepts, by model family, for the Chat Completions and Responses builders:
 * the effort that switches reasoning off ({@link effortForDisabledReasoning}), whether it takes
 * `verbosity` ({@link takesVerbosity}) and whether it reasons ({@link reasonsByDefault}). Pure.
 */
import type { ReasoningEffort } from "../hub.ts";

/** The model id without a routing prefix (`openai/gpt-5.1` → `gpt-5.1`), lower case. */
function bareModel(model: string): string {
  return model.slice(model.lastIndexOf("/") + 1).toLowerCase();
}

/**
 * Whether the model takes `verbosity` (Chat) / `text.verbosity` (Responses): OpenAI introduced it with
 * the gpt-5 family ("verbosity … currently supported values are low, medium, and high", OpenAI API
 * reference; the GPT-5 guide's "Verbosity" section), so an id of that family, also behind a
 * third-party OpenAI-compatible server (OpenRouter's `openai/gpt-5`, an Azure deployment), does.
 */
export function takesVerbosity(model: string): boolean {
  return /^gpt-5/.test(bareModel(model));
}

/**
 * The effort that asks an OpenAI model for the least reasoning, for a client that switched reasoning
 * off (Anthropic `thinking: {type: "disabled"}`, Gemini `thinkingBudget: 0`), by model family as
 * OpenAI's API reference for `reasoning_effort` / `reasoning.effort` describes it: "gpt-5.1 defaults
 * to none, which does not perform reasoning"; "all models before gpt-5.1 default to medium reasoning
 * effort, and do not support none" (gpt-5, -mini, -nano take `minimal`); "the gpt-5-pro model defaults
 * to (and only supports) high"; the o-series take `low` at the least, and the Codex models reason at
 * `low` at the least too (400 "Unsupported value: 'minimal' … Supported values are: 'none', 'low',
 * 'medium', and 'high'" shows each model refuses a value outside its list).
 *
 * `model` is the upstream id; a routing prefix (`openai/gpt-5.1`) is ignored. Returns the effort to
 * send (undefined: send none) and, when the model cannot switch reasoning off, a note for the
 * warning. Models not named above (gpt-4o, gpt-4.1, other servers' models) get neither: they have no
 * reasoning to switch off, and OpenAI's non-reasoning models refuse the field.
 */
export function effortForDisabledReasoning(model: string): { effort?: ReasoningEffort; note?: string } {
  const m = bareModel(model);
  if (/^gpt-5(?:\.\d+)?-pro/.test(m)) return { note: `${model} only reasons at high effort; reasoning could not be switched off` };
  if (/^gpt-5/.test(m) && m.includes("codex")) return { effort: "low", note: `${model} cannot switch reasoning off; reasoning effort low was sent` };
  if (/^gpt-5\.\d/.test(m)) return { effort: "none" };
  if (/^gpt-5(?:-|$)/.test(m)) return { effort: "minimal", note: `${model} cannot switch reasoning off (models before gpt-5.1 have no effort none); reasoning effort minimal was sent` };
  if (/^o\d/.test(m)) return { effort: "low", note: `${model} cannot switch reasoning off; reasoning effort low was sent` };
  return {};
}

/**
 * Whether the model is an OpenAI reasoning model, which returns reasoning items (and takes
 * `include: ["reasoning.encrypted_content"]`): the o-series and the gpt-5 family but its chat models
 * (`gpt-5-chat-latest`). OpenAI's other models refuse that include with 400 "Encrypted content is not
 * supported with this model." (param `include`; gpt-4o, gpt-4.1, gpt-5-chat-latest: pydantic/pydantic-ai
 * #2865, #3326). A routing prefix (`openai/gpt-5`) is ignored.
 */
export function reasonsByDefault(model: string): boolean {
  const m = bareModel(model);
  return /^o\d/.test(m) || (/^gpt-5/.test(m) && !m.includes("-chat"));
}
