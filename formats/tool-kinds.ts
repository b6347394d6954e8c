/**
 * Tool kinds only the Responses API has, as the closest faithful equivalent for formats without them
 * (Chat Completions, Anthropic Messages, Gemini). Pure.
 *
 * - A `custom` (freeform) tool — Codex's `apply_patch`, declared with a Lark grammar and called with
 *   raw text, not JSON — becomes a function tool of the same name with ONE required string argument,
 *   `input`, that carries the raw text. Its description keeps the client's and adds how to pass the
 *   input and, when the tool has one, the grammar it must follow (the model cannot be constrained by
 *   it there, so it is told). The call comes back as arguments `{"input": "<raw text>"}`, which is
 *   also how the hub already holds a `custom_tool_call` from history (formats/openai-responses/parse.ts),
 *   so history and replies use one shape; the Responses encoder turns a call of a `custom` tool back
 *   into a `custom_tool_call` with the raw `input`.
 * - A `local_shell` tool (Codex's shell for models trained on it: the model names a command as an argv
 *   array and Codex runs it) becomes a function tool `local_shell` with `command` (string array),
 *   `workdir` and `timeout_ms`; a call of it comes back to the client as a `local_shell_call` item with
 *   an `exec` action, and a `local_shell_call` in history is held in the hub as that function call.
 * - Hosted tools (`web_search`, `file_search`, `code_interpreter`, `image_generation`, …) run on
 *   OpenAI's servers: no other provider can run them, so they stay provider tools and the builders
 *   drop them with a warning (never pretend a search happened).
 *
 * - A function declared in a Codex `namespace` tool (`{type:"namespace", name:"mcp__docs__", tools:[…]}`:
 *   the hub holds each member as a function with its `namespace`) becomes a function of one flat name
 *   that keeps the namespace ({@link namespacedToolName}: `mcp__docs__search`), so two namespaces'
 *   `search` stay two tools; calls of it in history carry the same name ({@link flatNamespaces}), and
 *   a reply's call of it goes back to Codex as `namespace` + `name`
 *   (formats/openai-responses/response.ts `clientTools().resolve` reads the flat form).
 *
 * Used by the builders of the formats other than Responses before they write their tool lists.
 */
import { invalidRequest, Warnings, type FunctionTool, type HubMessage, type HubRequest, type HubTool, type ToolChoice } from "./hub.ts";
import { checkArgumentsDepth } from "./json-depth.ts";

/** The argument that carries a freeform tool's raw input (also the hub shape of `custom_tool_call`). */
export const FREEFORM_INPUT_ARG = "input";

/**
 * `tools` with every Responses `custom` tool replaced by its function-tool equivalent (module doc);
 * other tools are returned as they are. The array is returned unchanged when there is nothing to
 * replace (the common case).
 */
export function portableTools(tools: HubTool[]): HubTool[] {
  let out: HubTool[] | undefined;
  for (let i = 0; i < tools.length; i++) {
    const t = tools[i]!;
    const responses = t.kind === "provider" && t.format === "openai-responses";
    const fn = responses && t.raw.type === "custom" ? freeformAsFunction(t.raw) : responses && t.raw.type === "local_shell" ? LOCAL_SHELL_FUNCTION : undefined;
    if (fn) {
      out ??= tools.slice(0, i);
      out.push(fn);
    } else out?.push(t);
  }
  return out ?? tools;
}

/** The name of Claude Code's deferred-loading placeholder tool (observed in its requests; {@link withoutDeferPlaceholder}). */
export const DEFER_PLACEHOLDER = "DeferredToolPlaceholder";

/**
 * `tools` without Claude Code's `DeferredToolPlaceholder` (a function tool with `defer_loading: true`
 * whose description says never to call it: it only keeps Anthropic's deferred tool loading on; seen in
 * every Claude Code request, /work/shared/fixtures/clients README), for the builders of formats with no
 * deferred loading (Chat, Gemini, Responses without a `tool_search` tool), where it would be one more
 * tool the model could call. Claude Code's deferred tools themselves are declared there as any other,
 * so a ToolSearch result (a `tool_reference`, sent as text) names a tool the model already has. The
 * array is returned unchanged when it has no such tool.
 */
export function withoutDeferPlaceholder(tools: HubTool[]): HubTool[] {
  const i = tools.findIndex((t) => t.kind === "function" && t.deferLoading === true && t.name === DEFER_PLACEHOLDER);
  return i < 0 ? tools : tools.filter((_, j) => j !== i);
}

/** Whether a hub tool list declares a Responses `custom` (freeform) tool named `name`. */
export function isFreeformTool(tools: readonly HubTool[], name: string): boolean {
  return tools.some((t) => t.kind === "provider" && t.format === "openai-responses" && t.raw.type === "custom" && t.raw.name === name);
}

/** A Responses `custom` tool definition → the function tool of the module doc; undefined without a name. */
export function freeformAsFunction(raw: Record<string, unknown>): FunctionTool | undefined {
  if (typeof raw.name !== "string" || raw.name.length === 0) return undefined;
  const format = typeof raw.format === "object" && raw.format !== null ? (raw.format as Record<string, unknown>) : undefined;
  const lines: string[] = [];
  if (typeof raw.description === "string" && raw.description.length > 0) lines.push(raw.description);
  lines.push(`Pass the raw input text, exactly as it should be applied, as the string argument \`${FREEFORM_INPUT_ARG}\`; do not add any other argument.`);
  if (format?.type === "grammar" && typeof format.definition === "string") {
    const syntax = typeof format.syntax === "string" ? `${format.syntax} ` : "";
    lines.push(`The input must match this ${syntax}grammar:\n${format.definition}`);
  }
  return {
    kind: "function",
    name: raw.name,
    description: lines.join("\n\n"),
    parameters: {
      type: "object",
      properties: { [FREEFORM_INPUT_ARG]: { type: "string", description: "The raw input text." } },
      required: [FREEFORM_INPUT_ARG],
      additionalProperties: false,
    },
  };
}

/** The name of the function that stands in for Responses' `local_shell` tool. */
export const LOCAL_SHELL_NAME = "local_shell";

/** Responses `local_shell` → a function tool (module doc). */
export const LOCAL_SHELL_FUNCTION: FunctionTool = {
  kind: "function",
  name: LOCAL_SHELL_NAME,
  description:
    "Runs a command on the user's machine and returns its output. `command` is the program and its arguments as an array (for a shell pipeline: [\"bash\", \"-lc\", \"<script>\"]).",
  parameters: {
    type: "object",
    properties: {
      command: { type: "array", items: { type: "string" }, description: "The program and its arguments." },
      workdir: { type: "string", description: "The working directory; the session's when omitted." },
      timeout_ms: { type: "integer", description: "How long the command may run, in milliseconds." },
    },
    required: ["command"],
    additionalProperties: false,
  },
};

/** A `local_shell_call` action (Responses) → the arguments JSON of the {@link LOCAL_SHELL_FUNCTION} call. */
export function localShellArguments(action: unknown): string {
  const a = typeof action === "object" && action !== null ? (action as Record<string, unknown>) : {};
  const out: Record<string, unknown> = { command: Array.isArray(a.command) ? a.command : [] };
  if (typeof a.working_directory === "string") out.workdir = a.working_directory;
  if (typeof a.timeout_ms === "number") out.timeout_ms = a.timeout_ms;
  if (typeof a.env === "object" && a.env !== null && Object.keys(a.env).length > 0) out.env = a.env;
  if (typeof a.user === "string") out.user = a.user;
  return JSON.stringify(out);
}

/**
 * The arguments JSON of a {@link LOCAL_SHELL_FUNCTION} call → a Responses `local_shell_call` action
 * (`{type:"exec", command, timeout_ms, working_directory, env, user}`). A `command` given as one string
 * runs through `bash -lc`; unreadable arguments give an empty command (the client then reports it);
 * arguments nested too deep throw a FormatError (formats/json-depth.ts).
 */
export function localShellAction(args: string): Record<string, unknown> {
  checkArgumentsDepth(args);
  let a: Record<string, unknown> = {};
  try {
    const o = JSON.parse(args) as unknown;
    if (typeof o === "object" && o !== null && !Array.isArray(o)) a = o as Record<string, unknown>;
  } catch {
    // an empty action below
  }
  const command = Array.isArray(a.command) ? a.command.map(String) : typeof a.command === "string" ? ["bash", "-lc", a.command] : [];
  return {
    type: "exec",
    command,
    timeout_ms: typeof a.timeout_ms === "number" ? a.timeout_ms : null,
    working_directory: typeof a.workdir === "string" ? a.workdir : null,
    env: typeof a.env === "object" && a.env !== null ? a.env : {},
    user: typeof a.user === "string" ? a.user : null,
  };
}

/**
 * The one flat name a function `name` declared in the Codex namespace `namespace` goes by on formats
 * without namespaces: the namespace without its trailing `_`s, `__`, the name without its leading
 * `_`s (`mcp__docs__` + `search` → `mcp__docs__search`; `multi_agent_v1` + `spawn_agent` →
 * `multi_agent_v1__spawn_agent`), as MCP tools are named flat. The form
 * formats/openai-responses/response.ts `clientTools().resolve` maps back to namespace + name. A
 * provider's tool-name rule applies after it (formats/tool-names.ts).
 */
export function namespacedToolName(namespace: string, name: string): string {
  return `${namespace.replace(/_+$/, "")}__${name.replace(/^_+/, "")}`;
}

/**
 * The flat name each namespaced member of `tools` is declared by on formats without namespaces, keyed
 * by {@link namespacedKey} (a function) or {@link namespacedCustomKey} (a `custom` member, held in its
 * namespace's shell tool): {@link namespacedToolName}, unless a plain function or an earlier member
 * already goes by it (a plain `ns__search` beside namespace `ns`'s `search`; namespaces `a` and `a_`
 * flatten alike), then that name with the first free numeric suffix `_2`, `_3`, … (as
 * formats/tool-names.ts resolves clashes). Functions are taken first, in declaration order, then custom
 * members in declaration order (so a custom member never moves a function's name), and the request
 * builder ({@link flatNamespaces}) and the reply (formats/openai-responses/response.ts
 * `clientTools().resolve`) agree on every name. A member declared twice keeps its first name.
 */
export function namespacedToolNames(tools: readonly HubTool[]): Map<string, string> {
  const out = new Map<string, string>();
  const taken = new Set<string>();
  for (const t of tools) if (t.kind === "function" && !t.namespace) taken.add(t.name);
  const add = (key: string, namespace: string, name: string) => {
    if (out.has(key)) return;
    const base = namespacedToolName(namespace, name);
    let flat = base;
    for (let n = 2; taken.has(flat); n++) flat = `${base}_${n}`;
    taken.add(flat);
    out.set(key, flat);
  };
  for (const t of tools) if (t.kind === "function" && t.namespace) add(namespacedKey(t.namespace, t.name), t.namespace, t.name);
  for (const t of tools) {
    const shell = namespaceShell(t);
    if (shell) for (const m of shell.customs) add(namespacedCustomKey(shell.name, m.name as string), shell.name, m.name as string);
  }
  return out;
}

/** The key of function `name` in namespace `namespace` in {@link namespacedToolNames}' map. */
export function namespacedKey(namespace: string, name: string): string {
  return `${namespace}\u0000${name}`;
}

/** The key of the `custom` member `name` of namespace `namespace` in {@link namespacedToolNames}' map. */
export function namespacedCustomKey(namespace: string, name: string): string {
  return `${namespace}\u0000${name}\u0000custom`;
}

/**
 * A Codex namespace's shell tool (formats/openai-responses/parse.ts: the provider tool holding the
 * namespace's name, description and members other than functions): its name, its description when it
 * has one (trimmed, not empty), its named `custom` members and any other members; undefined for
 * any other tool.
 */
export function namespaceShell(t: HubTool): { name: string; description?: string; customs: Array<Record<string, unknown>>; others: unknown[] } | undefined {
  if (t.kind !== "provider" || t.format !== "openai-responses" || t.raw.type !== "namespace" || typeof t.raw.name !== "string") return undefined;
  const customs: Array<Record<string, unknown>> = [];
  const others: unknown[] = [];
  for (const m of Array.isArray(t.raw.tools) ? (t.raw.tools as unknown[]) : []) {
    const r = typeof m === "object" && m !== null ? (m as Record<string, unknown>) : undefined;
    if (r?.type === "custom" && typeof r.name === "string" && r.name.length > 0) customs.push(r);
    else others.push(m);
  }
  const d = typeof t.raw.description === "string" ? t.raw.description.trim() : "";
  return d ? { name: t.raw.name, description: d, customs, others } : { name: t.raw.name, customs, others };
}

/**
 * A member's description on a format without namespaces: its namespace's description, a blank line,
 * then its own (either alone when the other is absent), so the model still reads what the namespace is
 * for (Responses shows it the namespace's description: the OpenAI API reference's "A description of
 * the namespace shown to the model"). The same text for the same request every time (prompt caches).
 */
export function withNamespaceDescription(namespace: string | undefined, own: string | undefined): string | undefined {
  if (!namespace) return own;
  return own ? `${namespace}\n\n${own}` : namespace;
}

/**
 * Characters of a namespace's description repeated on every member ({@link flatNamespaces}); a longer
 * one is given in full on the namespace's first member only, and each other member gets
 * {@link namespacePointer} instead: a 2,100-character description on 40 members was 87 KB of tools JSON.
 */
export const NAMESPACE_DESCRIPTION_REPEAT_MAX = 200;

/** What a member other than the first reads of a long namespace description: the namespace and the member (flat name) that has it. */
export function namespacePointer(namespace: string, first: string): string {
  return `(Part of namespace ${namespace}: see ${first} for its description.)`;
}

/** The `dropped_tool` warning for a member a namespace declares more than once (here and for Responses targets, formats/openai-responses/common.ts namespacesOnce). */
export function namespaceMemberTwice(namespace: string, name: string): string {
  return `The namespace ${JSON.stringify(namespace)} declares the tool ${JSON.stringify(name)} more than once; it was declared once, as first declared.`;
}

/**
 * `req` for a builder of a format without namespaces (Chat, Anthropic, Gemini): every function declared
 * in a Codex namespace under its flat name ({@link namespacedToolNames}, `namespace` cleared) with its
 * namespace's description before its own ({@link withNamespaceDescription}; a description longer than
 * {@link NAMESPACE_DESCRIPTION_REPEAT_MAX} on the first member only, the others pointing to it); every `custom` member of a
 * namespace as the function a top-level `custom` tool becomes ({@link freeformAsFunction}) under its
 * flat name, likewise described; every history call with a `namespace` under its flat name, read by
 * its item type (a `custom_tool_call`'s, `custom` on the hub part, is the custom member's, a
 * `function_call`'s the function's, where the namespace has both of that name; else the one it has); and a namespace's shell tool left out unless it
 * holds members of other kinds (then kept with only those, which the builder reports dropped), so no
 * `dropped_tool` warning names a namespace whose members were sent.
 *
 * A `tool_choice` naming a member by its bare name (Responses' `{type:"function"|"custom", name}` has no
 * namespace) names its flat name when no top-level tool has that name and only one namespace declares
 * it; a top-level tool of that name is the one named (left as it came). When two or more namespaces
 * declare it (and no top-level tool), no flat name is the one the client meant: throws a
 * {@link FormatError} (400 `invalid_request`, param `tool_choice`) naming the namespaces, rather than
 * guess (Codex itself refuses a flat tool name two declarations share; a Responses provider gets the
 * namespaces and the choice as they came). Returns `req` itself when nothing is namespaced (the common
 * case); never changes `req`.
 *
 * A member declared twice under one flat name (a namespace `ns` declared twice, each holding `patch`)
 * is declared once, as first declared, with a `dropped_tool` warning added to `w`: Anthropic refuses
 * two tools of one name, and Chat and Gemini would get the same function twice.
 */
export function flatNamespaces(req: HubRequest, w: Warnings = new Warnings()): HubRequest {
  const spaced = req.tools.some((t) => (t.kind === "function" ? t.namespace : t.format === "openai-responses" && t.raw.type === "namespace"));
  const names = spaced ? namespacedToolNames(req.tools) : new Map<string, string>();
  /** A member's flat name; a custom call's (`custom`) is the `custom` member's when the namespace has one of that name, else the function's. */
  const flatName = (namespace: string, name: string, custom?: boolean) => {
    const fn = names.get(namespacedKey(namespace, name));
    const cu = names.get(namespacedCustomKey(namespace, name));
    return (custom ? (cu ?? fn) : (fn ?? cu)) ?? namespacedToolName(namespace, name);
  };
  let messages: HubMessage[] | undefined;
  for (let i = 0; i < req.messages.length; i++) {
    const m = req.messages[i]!;
    if (!m.content.some((p) => p.type === "tool_call" && p.namespace)) continue;
    messages ??= req.messages.slice();
    messages[i] = {
      ...m,
      content: m.content.map((p) => {
        if (p.type !== "tool_call" || !p.namespace) return p;
        const { namespace, ...call } = p;
        return { ...call, name: flatName(namespace, p.name, p.custom) };
      }),
    };
  }
  if (!spaced && !messages) return req;
  const descriptions = new Map<string, string>();
  for (const t of req.tools) {
    const shell = namespaceShell(t);
    if (shell?.description && !descriptions.has(shell.name)) descriptions.set(shell.name, shell.description);
  }
  const tools: HubTool[] = [];
  /** Bare member name → the namespaces declaring it, with the flat name each declared it by. */
  const bare = new Map<string, Map<string, string>>();
  const note = (name: string, namespace: string, flat: string) => {
    let m = bare.get(name);
    if (!m) bare.set(name, (m = new Map()));
    if (!m.has(namespace)) m.set(namespace, flat);
  };
  /** Namespace → the flat name of its first member, which has its description in full. */
  const firsts = new Map<string, string>();
  const describe = (namespace: string, flat: string, own: string | undefined) => {
    const d = descriptions.get(namespace);
    const first = firsts.get(namespace);
    if (first === undefined) firsts.set(namespace, flat);
    if (first === undefined || d === undefined || d.length <= NAMESPACE_DESCRIPTION_REPEAT_MAX) return withNamespaceDescription(d, own);
    return withNamespaceDescription(namespacePointer(namespace, first), own);
  };
  /** Names of top-level tools (functions, `custom`, `local_shell`): a bare name in tool_choice is theirs. */
  const top = new Set<string>();
  /** Flat names already declared for members; true when `flat` is one (then warned, not declared again). */
  const sent = new Set<string>();
  const again = (flat: string, namespace: string, name: string): boolean => {
    if (!sent.has(flat)) {
      sent.add(flat);
      return false;
    }
    w.add("dropped_tool", namespaceMemberTwice(namespace, name));
    return true;
  };
  for (const t of req.tools) {
    if (t.kind === "function" && t.namespace) {
      const { namespace, ...f } = t;
      const flat = flatName(namespace, t.name);
      if (again(flat, namespace, t.name)) continue;
      note(t.name, namespace, flat);
      const description = describe(namespace, flat, t.description);
      tools.push(description === undefined ? { ...f, name: flat } : { ...f, name: flat, description });
      continue;
    }
    const shell = namespaceShell(t);
    if (!shell) {
      if (t.kind === "function") top.add(t.name);
      else if (t.format === "openai-responses" && (t.raw.type === "custom" || t.raw.type === "local_shell")) top.add(typeof t.raw.name === "string" ? t.raw.name : LOCAL_SHELL_NAME);
      tools.push(t);
      continue;
    }
    for (const m of shell.customs) {
      const fn = freeformAsFunction(m)!;
      const flat = names.get(namespacedCustomKey(shell.name, fn.name))!;
      if (again(flat, shell.name, fn.name)) continue;
      note(fn.name, shell.name, flat);
      tools.push({ ...fn, name: flat, description: describe(shell.name, flat, fn.description) });
    }
    if (shell.others.length > 0 && t.kind === "provider") tools.push({ ...t, raw: { ...t.raw, tools: shell.others } });
  }
  const out: HubRequest = { ...req, tools, messages: messages ?? req.messages };
  const choice = flatChoice(req.toolChoice, bare, top);
  if (choice) out.toolChoice = choice;
  return out;
}

/**
 * A tool choice with each bare member name of {@link flatNamespaces} as its flat name; undefined when
 * none changes. Throws a FormatError (400) for a bare name several namespaces declare (module doc).
 */
function flatChoice(tc: ToolChoice | undefined, bare: Map<string, Map<string, string>>, top: Set<string>): ToolChoice | undefined {
  const flat = (name: string): string => {
    const spaces = top.has(name) ? undefined : bare.get(name);
    if (!spaces) return name;
    if (spaces.size === 1) return spaces.values().next().value!;
    const list = [...spaces.keys()].map((n) => JSON.stringify(n));
    throw invalidRequest(
      `tool_choice names the tool "${name}", which the namespaces ${list.slice(0, -1).join(", ")} and ${list.at(-1)} each declare; a tool_choice cannot name a namespace, and this provider has no namespaces to tell them apart. Choose "required" (or "auto") instead, or give the tools distinct names.`,
      "tool_choice",
    );
  };
  if (tc?.type === "tool" && flat(tc.name) !== tc.name) return { type: "tool", name: flat(tc.name) };
  if (tc?.type === "allowed") {
    const names = tc.names.map(flat);
    if (names.some((n, i) => n !== tc.names[i])) return { ...tc, names };
  }
  return undefined;
}
