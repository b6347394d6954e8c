/**
 * Claude Code and Codex runs for the CLI e2e tests, each in a scratch HOME with every base URL pointing
 * at switchyard (or straight at a fake upstream), no telemetry, no update checks, and the trap proxy for
 * anything else; plus a fake-upstream script for a one-tool round trip in any of the four formats.
 *
 * Environment (DEVELOPERS rules): a fresh temp HOME per run; Claude Code with ANTHROPIC_BASE_URL,
 * a placeholder ANTHROPIC_API_KEY and CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1; Codex with a scratch
 * ~/.codex/config.toml that sets `[analytics] enabled = false`, a model provider at switchyard
 * (`wire_api = "responses"`, `env_key` for a placeholder key) and `[features] plugins = false` (with
 * plugins on, Codex 0.171.0 contacts github.com, api.github.com and chatgpt.com at start to sync its
 * curated plugin catalogue, even with a custom provider).
 */
import { expect } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { FakeFormat, FakeHandler, FakeUpstream, ReceivedRequest } from "./fake-upstream.ts";
import { simpleReply } from "./fake-upstream.ts";
import { describeRun, runCli, type CliRunResult, type TrapProxy } from "./cli-run.ts";

/** The command the fake asks the CLI's shell tool to run, and the text it prints. */
export const TOOL_MARKER = "switchyard-e2e";
export const TOOL_COMMAND = `echo ${TOOL_MARKER}`;
/** The prompt that makes a CLI run {@link TOOL_COMMAND} in its shell tool. */
export const TOOL_PROMPT = `Run \`${TOOL_COMMAND}\` in the shell and tell me what it printed.`;

/** Per-run timeout; a run normally takes 1–5 s. */
export const CLI_RUN_TIMEOUT_MS = 60_000;
/** Per-test timeout for a test that runs one CLI. */
export const CLI_TEST_TIMEOUT_MS = CLI_RUN_TIMEOUT_MS + 15_000;

interface ScratchHome {
  home: string;
  /** The CLI's working directory inside HOME. */
  work: string;
  cleanup(): void;
}

function scratchHome(prefix: string): ScratchHome {
  const home = mkdtempSync(join(tmpdir(), `sy-e2e-${prefix}-`));
  const work = join(home, "work");
  mkdirSync(work);
  return { home, work, cleanup: () => rmSync(home, { recursive: true, force: true }) };
}

/** What every CLI child gets from the parent environment: nothing but PATH, locale and a shell. */
export function baseEnv(home: string, trap: TrapProxy): Record<string, string> {
  return {
    PATH: process.env.PATH ?? "/usr/local/bin:/usr/bin:/bin",
    HOME: home,
    USER: process.env.USER ?? "root",
    SHELL: "/bin/bash",
    LANG: "C.UTF-8",
    TERM: "dumb",
    NO_COLOR: "1",
    ...trap.env(),
  };
}

// ---------------------------------------------------------------------------------------------
// Claude Code
// ---------------------------------------------------------------------------------------------

export interface ClaudeRun {
  run: CliRunResult;
  /** The parsed `--output-format json` result, when stdout was JSON. */
  json: any;
  /** `json.result`, or "" */
  result: string;
  /** What the CLI tried to reach outside 127.0.0.1 during this run (trap proxy request lines). */
  outside: string[];
  describe(extra?: string): string;
}

/**
 * `claude -p PROMPT --output-format json --model MODEL` with ANTHROPIC_BASE_URL=baseUrl. Every model
 * Claude Code might pick on its own (haiku for small tasks, subagents) is set to `model` too, so no
 * request goes out under a name the gateway does not know. `allowedTools` pre-approves tools (print
 * mode has nobody to answer a permission prompt). The key is ANTHROPIC_API_KEY (sent as x-api-key),
 * or ANTHROPIC_AUTH_TOKEN (sent as Bearer) with `auth: "token"`; "placeholder" unless `key` is given.
 * CLAUDE_CODE_MAX_RETRIES is 0 unless `ownRetries` (then the CLI's default retry policy applies).
 */
export async function runClaude(
  bin: string,
  opts: {
    baseUrl: string;
    model: string;
    prompt: string;
    trap: TrapProxy;
    allowedTools?: string[];
    timeoutMs?: number;
    key?: string;
    auth?: "api-key" | "token";
    /** Leave CLAUDE_CODE_MAX_RETRIES unset: the CLI retries as it does for a user (default: 0 retries). */
    ownRetries?: boolean;
  },
): Promise<ClaudeRun> {
  const h = scratchHome("claude");
  const trapStart = opts.trap.attempts.length;
  try {
    const args = [bin, "-p", opts.prompt, "--output-format", "json", "--model", opts.model, "--no-session-persistence"];
    if (opts.allowedTools?.length) args.push("--allowedTools", ...opts.allowedTools);
    const run = await runCli(args, {
      cwd: h.work,
      timeoutMs: opts.timeoutMs ?? CLI_RUN_TIMEOUT_MS,
      env: {
        ...baseEnv(h.home, opts.trap),
        ANTHROPIC_BASE_URL: opts.baseUrl,
        ...(opts.auth === "token" ? { ANTHROPIC_AUTH_TOKEN: opts.key ?? "placeholder" } : { ANTHROPIC_API_KEY: opts.key ?? "placeholder" }),
        ANTHROPIC_MODEL: opts.model,
        ANTHROPIC_SMALL_FAST_MODEL: opts.model,
        ANTHROPIC_DEFAULT_HAIKU_MODEL: opts.model,
        ANTHROPIC_DEFAULT_SONNET_MODEL: opts.model,
        ANTHROPIC_DEFAULT_OPUS_MODEL: opts.model,
        CLAUDE_CODE_SUBAGENT_MODEL: opts.model,
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
        // No retries: the first attempt through the gateway must work (a retry would hide a broken stream).
        ...(opts.ownRetries ? {} : { CLAUDE_CODE_MAX_RETRIES: "0" }),
        DISABLE_AUTOUPDATER: "1",
        DISABLE_TELEMETRY: "1",
        DISABLE_ERROR_REPORTING: "1",
        CLAUDE_CODE_DISABLE_TERMINAL_TITLE: "1",
      },
    });
    let json: any;
    try {
      json = JSON.parse(run.stdout);
    } catch {
      json = undefined;
    }
    const result = typeof json?.result === "string" ? json.result : "";
    const outside = opts.trap.attempts.slice(trapStart);
    return { run, json, result, outside, describe: (extra = "") => describeRun(run, `--- outside hosts tried ---\n${outside.join("\n")}\n${extra}`) };
  } finally {
    h.cleanup();
  }
}

// ---------------------------------------------------------------------------------------------
// Codex
// ---------------------------------------------------------------------------------------------

export interface CodexRun {
  run: CliRunResult;
  /** The final agent message (`--output-last-message`), or "" */
  lastMessage: string;
  /** What the CLI tried to reach outside 127.0.0.1 during this run (trap proxy request lines). */
  outside: string[];
  describe(extra?: string): string;
}

/** The scratch ~/.codex/config.toml: switchyard as the model provider, analytics and plugins off. */
export function codexConfigToml(baseUrlV1: string, model: string, opts: { websockets?: boolean } = {}): string {
  return `# written by test/support/cli-agents.ts for one e2e run
model = ${JSON.stringify(model)}
model_provider = "switchyard"
check_for_update_on_startup = false

[model_providers.switchyard]
name = "switchyard"
base_url = ${JSON.stringify(baseUrlV1)}
wire_api = "responses"
env_key = "SWITCHYARD_E2E_KEY"${opts.websockets ? "\n# Codex opens /v1/responses as a WebSocket first (SPEC 2.5).\nsupports_websockets = true" : ""}
# No retries: the first attempt through the gateway must work (a retry would hide a broken stream).
request_max_retries = 0
stream_max_retries = 0

[analytics]
enabled = false

[features]
plugins = false
`;
}

/**
 * `codex exec --skip-git-repo-check PROMPT` against `baseUrlV1` (`http://127.0.0.1:PORT/v1`); the
 * provider's `env_key` variable holds `key` ("placeholder" unless given), which Codex sends as Bearer.
 */
export async function runCodex(
  bin: string,
  opts: {
    baseUrlV1: string;
    model: string;
    prompt: string;
    trap: TrapProxy;
    timeoutMs?: number;
    key?: string;
    /** Arguments before the prompt (e.g. a sandbox mode). */
    extraArgs?: string[];
    /** Prepares the working directory before the run (files the agent will edit). */
    setupWork?: (work: string) => void;
    /** Reads the working directory after the run, before the scratch HOME is removed. */
    inspectWork?: (work: string) => void;
    /** `supports_websockets = true` on the provider: Codex uses the Responses WebSocket (SPEC 2.5). */
    websockets?: boolean;
  },
): Promise<CodexRun> {
  const h = scratchHome("codex");
  const trapStart = opts.trap.attempts.length;
  try {
    const codexHome = join(h.home, ".codex");
    mkdirSync(codexHome);
    writeFileSync(join(codexHome, "config.toml"), codexConfigToml(opts.baseUrlV1, opts.model, { websockets: opts.websockets }));
    const lastFile = join(h.home, "last-message.txt");
    opts.setupWork?.(h.work);
    const run = await runCli(
      [bin, "exec", "--skip-git-repo-check", "--color", "never", "--output-last-message", lastFile, ...(opts.extraArgs ?? []), opts.prompt],
      {
        cwd: h.work,
        timeoutMs: opts.timeoutMs ?? CLI_RUN_TIMEOUT_MS,
        env: { ...baseEnv(h.home, opts.trap), CODEX_HOME: codexHome, SWITCHYARD_E2E_KEY: opts.key ?? "placeholder" },
      },
    );
    let lastMessage = "";
    try {
      lastMessage = await Bun.file(lastFile).text();
    } catch {
      /* not written */
    }
    const outside = opts.trap.attempts.slice(trapStart);
    opts.inspectWork?.(h.work);
    return {
      run,
      lastMessage,
      outside,
      describe: (extra = "") => describeRun(run, `--- last message ---\n${lastMessage}\n--- outside hosts tried ---\n${outside.join("\n")}\n${extra}`),
    };
  } finally {
    h.cleanup();
  }
}

// ---------------------------------------------------------------------------------------------
// Reading upstream requests in any of the four formats
// ---------------------------------------------------------------------------------------------

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) return content.map(textOf).join("\n");
  if (content && typeof content === "object") {
    const c = content as Record<string, unknown>;
    if (typeof c.text === "string") return c.text;
    if (typeof c.output === "string") return c.output;
    if ("content" in c) return textOf(c.content);
    return JSON.stringify(c);
  }
  return content === undefined || content === null ? "" : String(content);
}

export interface SeenToolResult {
  /** tool_use_id / tool_call_id / call_id / functionResponse name. */
  id: string | undefined;
  text: string;
}

/** The tool results a request carries (its conversation history), in the request's own format. */
export function toolResultsIn(req: ReceivedRequest): SeenToolResult[] {
  const b = req.body;
  const out: SeenToolResult[] = [];
  if (!b || typeof b !== "object") return out;
  switch (req.format) {
    case "anthropic-messages":
      for (const m of b.messages ?? [])
        if (Array.isArray(m.content))
          for (const blk of m.content) if (blk?.type === "tool_result") out.push({ id: blk.tool_use_id, text: textOf(blk.content) });
      break;
    case "openai-chat":
      for (const m of b.messages ?? []) if (m.role === "tool") out.push({ id: m.tool_call_id, text: textOf(m.content) });
      break;
    case "openai-responses":
      if (Array.isArray(b.input))
        for (const it of b.input)
          if (it?.type === "function_call_output" || it?.type === "custom_tool_call_output") out.push({ id: it.call_id, text: textOf(it.output) });
      break;
    case "gemini":
      for (const c of b.contents ?? [])
        for (const p of c.parts ?? [])
          if (p.functionResponse) out.push({ id: p.functionResponse.id ?? p.functionResponse.name, text: JSON.stringify(p.functionResponse.response) });
      break;
  }
  return out;
}

/** Names of the tools a request offers, in the request's own format (nested namespaces flattened). */
export function toolNamesIn(req: ReceivedRequest): string[] {
  const b = req.body;
  if (!b || typeof b !== "object" || !Array.isArray(b.tools)) return [];
  const names: string[] = [];
  const visit = (t: any) => {
    if (!t || typeof t !== "object") return;
    if (typeof t.name === "string") names.push(t.name);
    if (typeof t.function?.name === "string") names.push(t.function.name);
    for (const d of t.functionDeclarations ?? t.function_declarations ?? []) visit(d);
    for (const n of t.tools ?? []) visit(n);
  };
  for (const t of b.tools) visit(t);
  return names;
}

/** Requests the fake received in a model format (probes like HEAD / or GET /models excluded). */
export function modelRequests(fake: FakeUpstream): ReceivedRequest[] {
  return fake.requests.filter((r) => r.format !== undefined);
}

/** A short summary of what the fake received (and, strict, refused), for assertion messages. */
export function summarizeRequests(fake: FakeUpstream): string {
  const lines = fake.requests.map((r, i) => {
    const results = toolResultsIn(r).map((t) => `${t.id}:${JSON.stringify(t.text.slice(0, 160))}`);
    return `#${i} ${r.method} ${r.path} model=${r.model} stream=${r.stream} tools=${toolNamesIn(r).length} results=[${results.join(", ")}]`;
  });
  for (const v of fake.violations) lines.push(`REFUSED (strict) ${v.path} ${v.schema}: ${v.lines.join("; ")}`);
  return lines.join("\n");
}

// ---------------------------------------------------------------------------------------------
// The fake's script for a tool round trip
// ---------------------------------------------------------------------------------------------

/** The final text the fake sends once it saw a tool result containing TOOL_MARKER. */
export function finalTextFor(lane: string): string {
  return `Done (${lane}): the command printed ${TOOL_MARKER}.`;
}

function callIdFor(format: FakeFormat): string {
  return format === "anthropic-messages" ? "toolu_sy_e2e_1" : "call_sy_e2e_1";
}

/**
 * A fake-upstream handler: while a request carries no tool result and offers `toolName`, answer with a
 * call of that tool with `args`; when it carries a result that contains TOOL_MARKER, answer with
 * finalTextFor(lane); a result without the marker gets a text that says so (the test then fails on the
 * CLI's output); a request that does not offer the tool (housekeeping) gets `otherText`.
 */
export function toolRoundTrip(opts: {
  lane: string;
  toolName: string;
  args: Record<string, unknown>;
  otherText?: string;
}): FakeHandler {
  return (req) => {
    if (!req.format) return undefined;
    const results = toolResultsIn(req);
    if (results.some((r) => r.text.includes(TOOL_MARKER))) return simpleReply(req.format, { text: finalTextFor(opts.lane) }, req.stream);
    if (results.length > 0)
      return simpleReply(req.format, { text: `Tool result without the marker: ${JSON.stringify(results).slice(0, 300)}` }, req.stream);
    if (toolNamesIn(req).includes(opts.toolName))
      return simpleReply(req.format, { toolCalls: [{ id: callIdFor(req.format), name: opts.toolName, arguments: opts.args }] }, req.stream);
    return simpleReply(req.format, { text: opts.otherText ?? "ok" }, req.stream);
  };
}

/** A handler that answers every model request with `text`. */
export function plainAnswer(text: string): FakeHandler {
  return (req) => (req.format ? simpleReply(req.format, { text }, req.stream) : undefined);
}

/** The credential a request to the fake carried, read the way its format sends it. */
export function credentialOf(req: ReceivedRequest): string | undefined {
  const h = req.headers;
  const bearer = h["authorization"]?.replace(/^Bearer\s+/i, "");
  switch (req.format) {
    case "anthropic-messages":
      return h["x-api-key"] ?? bearer;
    case "gemini":
      return h["x-goog-api-key"] ?? new URL(req.path, "http://x").searchParams.get("key") ?? undefined;
    default:
      return bearer;
  }
}

/** The gateway's per-request log entries (`msg: "request"`) among log lines. */
export function gatewayRequestLogs(lines: string[]): Array<Record<string, any>> {
  const out: Array<Record<string, any>> = [];
  for (const l of lines) {
    try {
      const j = JSON.parse(l);
      if (j && j.msg === "request") out.push(j);
    } catch {
      /* not JSON */
    }
  }
  return out;
}

/** Polls `cond` every 20 ms until it holds or `ms` pass (log lines are written when a stream ends). */
export async function waitFor(cond: () => boolean, ms = 2000): Promise<void> {
  const until = Date.now() + ms;
  while (!cond() && Date.now() < until) await Bun.sleep(20);
}

// ---------------------------------------------------------------------------------------------
// Lanes: one provider behind the gateway, as a CLI test drives it
// ---------------------------------------------------------------------------------------------

/** One lane of a CLI test: the model the CLI asks for and what the fake upstream must see. */
export interface CliLane {
  name: string;
  /** What the CLI asks for (Claude Code `--model`, Codex config.toml `model`). */
  model: string;
  /** The model name the fake must see. */
  upstreamModel: string;
  format: FakeFormat;
  /** Path prefix of every model request the fake must see. */
  path: string;
}

/** The translated lane the CLI tests share: an Anthropic-format (`anthropic-compatible`) provider `anthc`. */
export const ANTHROPIC_COMPATIBLE_LANE: CliLane = { name: "anthropic-compatible", model: "anthc/glm-e2e", upstreamModel: "glm-e2e", format: "anthropic-messages", path: "/v1/messages" };

/**
 * Asserts a CLI run was served on `lane`: every model request the fake received (since its reset) went
 * in the lane's format, to its path, for its upstream model, with the account's key from the config
 * (never the CLI's placeholder), and none was a body the provider's API would refuse (a strict fake's
 * `violations`); and the gateway logged every one of them, from `logStart` on, as a 200 on the lane's
 * model (none went to another provider or failed).
 */
export async function expectLane(gw: { fake: FakeUpstream; logs: string[] }, lane: CliLane, r: { describe(extra?: string): string }, logStart: number): Promise<void> {
  const reqs = modelRequests(gw.fake);
  const story = r.describe(`--- upstream requests ---\n${summarizeRequests(gw.fake)}`);
  expect(reqs.length, story).toBeGreaterThanOrEqual(1);
  expect(gw.fake.violations, story).toEqual([]);
  for (const q of reqs) {
    expect(q.format, story).toBe(lane.format);
    expect(q.path.startsWith(lane.path), story).toBe(true);
    expect(q.model, story).toBe(lane.upstreamModel);
    expect(credentialOf(q), story).toBe("sk-fake-upstream-secret");
  }
  await waitFor(() => gatewayRequestLogs(gw.logs.slice(logStart)).length >= reqs.length);
  const logged = gatewayRequestLogs(gw.logs.slice(logStart));
  const logStory = `${story}\n--- gateway log ---\n${gw.logs.slice(logStart).join("\n")}`;
  expect(logged.length, logStory).toBe(reqs.length);
  for (const l of logged) {
    expect(l.model, logStory).toBe(lane.model);
    expect(l.status, logStory).toBe(200);
  }
}

// ---------------------------------------------------------------------------------------------
// Gemini CLI
// ---------------------------------------------------------------------------------------------

export interface GeminiRun {
  run: CliRunResult;
  /** The parsed `--output-format json` result, when stdout was JSON. */
  json: any;
  /** `json.response`, or "" */
  response: string;
  /** What the CLI tried to reach outside 127.0.0.1 during this run (trap proxy request lines). */
  outside: string[];
  describe(extra?: string): string;
}

/**
 * The scratch `~/.gemini/settings.json`: API-key auth (without it Gemini CLI refuses to run
 * non-interactively), telemetry and usage statistics off, no update checks, no IDE integration.
 */
export function geminiSettings(): Record<string, unknown> {
  return {
    security: { auth: { selectedType: "gemini-api-key" } },
    telemetry: { enabled: false },
    privacy: { usageStatisticsEnabled: false },
    general: { disableAutoUpdate: true, disableUpdateNag: true },
    ide: { enabled: false },
  };
}

/**
 * `gemini -p PROMPT -m MODEL --output-format json --yolo` with GOOGLE_GEMINI_BASE_URL = `baseUrl`
 * (the host root: the CLI appends `/v1beta/models/…`) and GEMINI_API_KEY = `key` ("placeholder"
 * unless given), in a scratch HOME holding {@link geminiSettings}. `--yolo` approves tool calls (print
 * mode has nobody to answer a prompt). `settings`: members added to (or replacing) those settings'
 * top-level ones (e.g. `modelConfigs` with a thinking budget).
 */
export async function runGemini(bin: string, opts: { baseUrl: string; model: string; prompt: string; trap: TrapProxy; timeoutMs?: number; key?: string; settings?: Record<string, unknown> }): Promise<GeminiRun> {
  const h = scratchHome("gemini");
  const trapStart = opts.trap.attempts.length;
  try {
    mkdirSync(join(h.home, ".gemini"));
    writeFileSync(join(h.home, ".gemini", "settings.json"), JSON.stringify({ ...geminiSettings(), ...opts.settings }, null, 2));
    const run = await runCli([bin, "-p", opts.prompt, "-m", opts.model, "--output-format", "json", "--yolo"], {
      cwd: h.work,
      timeoutMs: opts.timeoutMs ?? CLI_RUN_TIMEOUT_MS,
      env: {
        ...baseEnv(h.home, opts.trap),
        GOOGLE_GEMINI_BASE_URL: opts.baseUrl,
        GEMINI_API_KEY: opts.key ?? "placeholder",
        GEMINI_CLI_NO_RELAUNCH: "true",
        // The scratch working directory is trusted (headless runs refuse untrusted folders).
        GEMINI_CLI_TRUST_WORKSPACE: "true",
      },
    });
    let json: any;
    try {
      json = JSON.parse(run.stdout);
    } catch {
      json = undefined;
    }
    const response = typeof json?.response === "string" ? json.response : "";
    const outside = opts.trap.attempts.slice(trapStart);
    return { run, json, response, outside, describe: (extra = "") => describeRun(run, `--- outside hosts tried ---\n${outside.join("\n")}\n${extra}`) };
  } finally {
    h.cleanup();
  }
}

/**
 * A fake-upstream handler for the "error after commit" scenario: every model request gets an
 * Anthropic Messages stream that starts a text block with `text` and then ends without
 * `message_stop` (the connection closes mid-reply). The gateway has committed by then, so the CLI must
 * get the format's in-band error (SPEC 6.4) and must not present `text` as a finished answer.
 */
export function cutOffAnthropicReply(text: string): FakeHandler {
  return (req) => {
    if (req.format !== "anthropic-messages") return undefined;
    const ev = (name: string, data: unknown) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;
    const sse =
      ev("message_start", { type: "message_start", message: { id: "msg_cut", type: "message", role: "assistant", model: req.model ?? "m", content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 11, output_tokens: 1 } } }) +
      ev("content_block_start", { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }) +
      ev("content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "text_delta", text } });
    return req.stream ? { sse } : { status: 500, json: { type: "error", error: { type: "api_error", message: "no stream" } } };
  };
}
