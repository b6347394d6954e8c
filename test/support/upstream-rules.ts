/**
 * Request rules the providers document in prose rather than in their schemas (cross-field and
 * conversation-order rules), checked on a translated body by the upstream conformance test beside the
 * JSON Schema. Each rule names its source. Model-specific sampling and reasoning rules for OpenAI models
 * are left out here on purpose (tracked separately). A violation is one line: `rule <name>: <where>`.
 *
 * Sources:
 * - Anthropic "Extended thinking" (docs.anthropic.com/en/docs/build-with-claude/extended-thinking):
 *   `budget_tokens` ≥ 1024 and < `max_tokens`; thinking is not compatible with `temperature` or `top_k`
 *   changes, `top_p` only 0.95–1; with thinking, `tool_choice` only `auto` or `none`.
 * - Anthropic "Implement tool use": a `tool_use` block is answered by a `tool_result` in the next user
 *   message, and in that message the `tool_result` blocks come first, before any other content.
 * - OpenAI Chat Completions: an assistant message with `tool_calls` must be followed by tool messages
 *   responding to each `tool_call_id`; `tool_choice` and `parallel_tool_calls` are only allowed when
 *   `tools` are specified (the API's 400s say so). A function's `description` is at most 1024
 *   characters: the API's 400 `string_above_max_length` ("Invalid 'tools[1].function.description':
 *   string too long. Expected a string with maximum length 1024, …", reported against api.openai.com
 *   and Azure OpenAI, e.g. github.com/getsentry/sentry-mcp/issues/106 with gpt-4o,
 *   github.com/dnakov/anon-kode/issues/45 with o1). Not a Responses rule: Codex 0.171.0's own Responses
 *   requests declare descriptions of 5989 and 1541 characters (spawn_agent, update_goal).
 * - Anthropic: `tool_choice` may only be specified while providing tools (its 400).
 * - OpenAI Responses: a `function_call_output` needs its `function_call` (same `call_id`) in the input.
 * - Gemini "Function calling": a `functionResponse` turn answers the `functionCall` parts of the model
 *   turn before it, one response per call; roles are `user` and `model` only. GenerationConfig reference:
 *   `stopSequences` up to 5. "Thinking": Gemini 2.5 Pro cannot turn thinking off (`thinkingBudget` 0 is
 *   refused; range 128–32768, or -1 for dynamic).
 * - Function / tool names: OpenAI `^[a-zA-Z0-9_-]{1,64}$` (function.name reference); Gemini: starts
 *   with a letter or underscore, then letters, digits, `_ . : -`, at most 128 (js-genai FunctionDeclaration.name);
 *   Anthropic `^[a-zA-Z0-9_-]{1,128}$` (tool name).
 */

type Body = Record<string, any>;

const NAME_RULES: Record<string, RegExp> = {
  "openai-chat-completions": /^[a-zA-Z0-9_-]{1,64}$/,
  "openai-responses": /^[a-zA-Z0-9_-]{1,64}$/,
  "anthropic-messages": /^[a-zA-Z0-9_-]{1,128}$/,
  "gemini-generate-content": /^[a-zA-Z_][a-zA-Z0-9_.:-]{0,127}$/,
};

/** Every function / tool name a body declares or calls, with its JSON pointer. */
function toolNames(schema: string, b: Body): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  const add = (where: string, name: unknown) => typeof name === "string" && out.push([where, name]);
  const tools: Body[] = Array.isArray(b.tools) ? b.tools : [];
  if (schema === "openai-chat-completions") {
    tools.forEach((t, i) => add(`/tools/${i}/function/name`, t.function?.name));
    (b.messages ?? []).forEach((m: Body, i: number) => (m.tool_calls ?? []).forEach((c: Body, j: number) => add(`/messages/${i}/tool_calls/${j}/function/name`, c.function?.name)));
  } else if (schema === "openai-responses") {
    tools.forEach((t, i) => t.type === "function" && add(`/tools/${i}/name`, t.name));
    if (Array.isArray(b.input)) b.input.forEach((x: Body, i: number) => x.type === "function_call" && add(`/input/${i}/name`, x.name));
  } else if (schema === "anthropic-messages") {
    tools.forEach((t, i) => (t.type === undefined || t.type === "custom") && add(`/tools/${i}/name`, t.name));
    (b.messages ?? []).forEach((m: Body, i: number) => Array.isArray(m.content) && m.content.forEach((x: Body, j: number) => x.type === "tool_use" && add(`/messages/${i}/content/${j}/name`, x.name)));
  } else {
    tools.forEach((t, i) => (t.functionDeclarations ?? []).forEach((f: Body, j: number) => add(`/tools/${i}/functionDeclarations/${j}/name`, f.name)));
    (b.contents ?? []).forEach((c: Body, i: number) => (c.parts ?? []).forEach((p: Body, j: number) => {
      if (p.functionCall) add(`/contents/${i}/parts/${j}/functionCall/name`, p.functionCall.name);
      if (p.functionResponse) add(`/contents/${i}/parts/${j}/functionResponse/name`, p.functionResponse.name);
    }));
  }
  return out;
}

function anthropicRules(b: Body): string[] {
  const out: string[] = [];
  if ((!Array.isArray(b.tools) || b.tools.length === 0) && b.tool_choice !== undefined) out.push(`rule tool-choice-needs-tools: /tool_choice ${JSON.stringify(b.tool_choice)} without tools`);
  const t = b.thinking;
  if (t?.type === "enabled") {
    if (!(t.budget_tokens >= 1024)) out.push(`rule thinking-budget-min: /thinking/budget_tokens ${t.budget_tokens} < 1024`);
    if (!(t.budget_tokens < b.max_tokens)) out.push(`rule thinking-budget-below-max-tokens: budget_tokens ${t.budget_tokens} ≥ max_tokens ${b.max_tokens}`);
  }
  if (t?.type === "enabled" || t?.type === "adaptive") {
    if (b.temperature !== undefined && b.temperature !== 1) out.push(`rule thinking-temperature: /temperature ${b.temperature} with thinking`);
    if (b.top_k !== undefined) out.push(`rule thinking-top-k: /top_k with thinking`);
    if (b.top_p !== undefined && !(b.top_p >= 0.95 && b.top_p <= 1)) out.push(`rule thinking-top-p: /top_p ${b.top_p} with thinking`);
    const tc = b.tool_choice?.type;
    if (tc !== undefined && tc !== "auto" && tc !== "none") out.push(`rule thinking-tool-choice: /tool_choice/type ${tc} with thinking`);
  }
  const msgs: Body[] = Array.isArray(b.messages) ? b.messages : [];
  msgs.forEach((m, i) => {
    const blocks: Body[] = Array.isArray(m.content) ? m.content : [];
    if (m.role === "user") {
      const firstOther = blocks.findIndex((x) => x.type !== "tool_result");
      const lastResult = blocks.map((x) => x.type).lastIndexOf("tool_result");
      if (firstOther >= 0 && lastResult > firstOther) out.push(`rule tool-result-first: /messages/${i} has ${blocks[firstOther].type} before a tool_result`);
    }
    if (m.role === "assistant") {
      const ids = blocks.filter((x) => x.type === "tool_use").map((x) => x.id);
      if (!ids.length) return;
      const next = msgs[i + 1];
      const answered = new Set((Array.isArray(next?.content) ? next.content : []).filter((x: Body) => x.type === "tool_result").map((x: Body) => x.tool_use_id));
      for (const id of ids) if (!answered.has(id)) out.push(`rule tool-use-answered: /messages/${i} tool_use ${id} has no tool_result in the next message`);
    }
  });
  return out;
}

function chatRules(b: Body): string[] {
  const out: string[] = [];
  const noTools = !Array.isArray(b.tools) || b.tools.length === 0;
  if (noTools && b.tool_choice !== undefined) out.push(`rule tool-choice-needs-tools: /tool_choice ${JSON.stringify(b.tool_choice)} without tools`);
  if (noTools && b.parallel_tool_calls !== undefined) out.push(`rule parallel-tool-calls-needs-tools: /parallel_tool_calls without tools`);
  (Array.isArray(b.tools) ? b.tools : []).forEach((t: Body, i: number) => {
    const d = t.function?.description;
    if (typeof d === "string" && [...d].length > 1024) out.push(`rule tool-description-max-1024: /tools/${i}/function/description has ${[...d].length} characters`);
  });
  const msgs: Body[] = Array.isArray(b.messages) ? b.messages : [];
  msgs.forEach((m, i) => {
    if (m.role !== "assistant" || !Array.isArray(m.tool_calls)) return;
    const answered = new Set<string>();
    for (let j = i + 1; j < msgs.length && msgs[j].role === "tool"; j++) answered.add(msgs[j].tool_call_id);
    for (const c of m.tool_calls) if (!answered.has(c.id)) out.push(`rule tool-calls-answered: /messages/${i} tool_call ${c.id} not followed by its tool message`);
  });
  return out;
}

function responsesRules(b: Body): string[] {
  const out: string[] = [];
  if (!Array.isArray(b.input)) return out;
  const calls = new Set(b.input.filter((x: Body) => x.type === "function_call" || x.type === "custom_tool_call").map((x: Body) => x.call_id));
  b.input.forEach((x: Body, i: number) => {
    if ((x.type === "function_call_output" || x.type === "custom_tool_call_output") && !calls.has(x.call_id)) out.push(`rule output-has-call: /input/${i} ${x.type} ${x.call_id} has no call`);
  });
  return out;
}

function geminiRules(b: Body, model: string): string[] {
  const out: string[] = [];
  const gc = b.generationConfig ?? {};
  if (Array.isArray(gc.stopSequences) && gc.stopSequences.length > 5) out.push(`rule stop-sequences-max-5: /generationConfig/stopSequences has ${gc.stopSequences.length}`);
  const budget = gc.thinkingConfig?.thinkingBudget;
  if (model.startsWith("gemini-2.5-pro") && budget !== undefined && budget !== -1 && !(budget >= 128 && budget <= 32768)) out.push(`rule thinking-budget-2.5-pro: /generationConfig/thinkingConfig/thinkingBudget ${budget} (128–32768 or -1)`);
  const contents: Body[] = Array.isArray(b.contents) ? b.contents : [];
  contents.forEach((c, i) => {
    if (c.role !== undefined && c.role !== "user" && c.role !== "model") out.push(`rule role: /contents/${i}/role ${c.role}`);
    const parts: Body[] = Array.isArray(c.parts) ? c.parts : [];
    const calls = parts.filter((p) => p.functionCall).length;
    if (!calls) return;
    const next: Body[] = Array.isArray(contents[i + 1]?.parts) ? contents[i + 1].parts : [];
    const responses = next.filter((p) => p.functionResponse).length;
    if (responses !== calls) out.push(`rule function-responses: /contents/${i} has ${calls} functionCall part(s), the next turn ${responses} functionResponse part(s)`);
  });
  return out;
}

/** The documented rules a body for `schema` (a test/fixtures/schemas name) and `model` breaks, one line each. */
export function ruleViolations(schema: string, body: unknown, model: string): string[] {
  const b = body as Body;
  const names = toolNames(schema, b)
    .filter(([, n]) => !NAME_RULES[schema]!.test(n))
    .map(([w, n]) => `rule tool-name: ${w} ${JSON.stringify(n)} does not match ${NAME_RULES[schema]!.source}`);
  switch (schema) {
    case "anthropic-messages":
      return [...names, ...anthropicRules(b)];
    case "openai-chat-completions":
      return [...names, ...chatRules(b)];
    case "openai-responses":
      return [...names, ...responsesRules(b)];
    case "gemini-generate-content":
      return [...names, ...geminiRules(b, model)];
    default:
      return names;
  }
}
